"""Every accelerator-package block converts to Verilog that Icarus compiles as
Verilog-2005 and as SystemVerilog-2012 and that Verilator accepts (lint, errors
fatal).  Behaviour across those tools is compared cycle for cycle in
test_degraded_die.py (MyHDL, per-cycle Icarus, batched Icarus in both modes,
Verilator)."""
import pytest

from cosim.reports import size_report

BLOCKS = ["work_distributor (service-rate, 4 targets, 16 jobs)", "work_distributor (round-robin, 4 targets, 16 jobs)",
          "service_rate_estimator (4 targets, WINDOW 64)", "compute_die_model (QUEUE_DEPTH 8)",
          "shared_resource_arbiter (4 dies)", "package_assertion_monitor (4 targets, 16 jobs)",
          "accelerator_package (4 dies, service-rate)"]


def _extra_blocks():
    from myhdl import ResetSignal, Signal, intbv

    from cosim.package.package_bench import Geometry, checked_distributor_signals
    from cosim.package.checked_work_distributor import checked_work_distributor
    from hdl.package.phase_barrier import phase_barrier
    u = lambda w: Signal(intbv(0)[w:])  # noqa: E731
    b = lambda: Signal(bool(0))  # noqa: E731
    barrier = (phase_barrier, (b(), ResetSignal(1, active=1, isasync=False), u(16), u(16), b(), b(), b(), b(), b(),
                               b(), u(8), u(20), u(20)), {})
    return {"phase_barrier": barrier,
            "checked_work_distributor": (checked_work_distributor, (), checked_distributor_signals(Geometry()))}


@pytest.mark.parametrize("name", BLOCKS + ["phase_barrier", "checked_work_distributor"])
def test_converts_and_compiles_everywhere(name, compiles_everywhere):
    func, args, kwargs = size_report.REPORT_BLOCKS[name]() if name in BLOCKS else _extra_blocks()[name]
    compiles_everywhere(func, *args, **kwargs)
