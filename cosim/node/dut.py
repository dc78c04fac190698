"""Any Verilog as the node under test: the ports `prism export node` writes, checked, and the
node's build parameters found.

`prism regress --dut FILE.v [--dut FILE.v ...] [--top NAME]` runs the hostile regression, its
coverage and its scoreboard on a user's own RTL (or on an exported, hand-edited or mutated
copy of the kit's node) on batched Icarus or Verilator.  What the kit needs of the design:

- the node's ports (docs/protocol.md, "Ports"), with these names, directions and widths
  (`clk`, `rst`, `s_axis_{0,1}_{tdata,tvalid,tready,tlast}`, `m_axis_{0,1}_...`,
  `counter_select`, `counter_value`, `busy`); other ports are an error, since the test bench
  could not drive them;
- its build parameters: KULISCH_W (320 or 280) and CAPACITY (default 4,096).  A module that
  declares them as Verilog parameters is built per seed with the width the seed draws (both
  widths in one regression, as for the kit's node).  A module without them (what `prism export`
  writes: the values are fixed at conversion) has one width: `--width` states it, or the kit
  reads it from the design itself, from the KULISCH_W field of the RESULT header of a one-range
  probe operation (docs/protocol.md: every RESULT header carries it; cosim/node/dut_probe.py).
"""
import os
from dataclasses import dataclass
from typing import Optional, Tuple

from myhdl import ResetSignal, Signal, intbv

from spec import frames as C
from spec.formats import KULISCH_WIDTHS

from cosim.sim.verilog_interface import VerilogInterfaceError, check_ports, evaluate, find_top, read_module

DEFAULT_CAPACITY = C.MAX_CAPACITY


class DutError(ValueError):
    """A design that cannot serve as the node; one line for the user."""


@dataclass(frozen=True)
class NodeDut:
    """A Verilog design that implements the node's ports."""
    sources: Tuple[str, ...]        # absolute paths
    top: str
    width: Optional[int]            # KULISCH_W it is built with; None: a parameter, set per seed
    capacity: int
    parameters: Tuple[str, ...]     # which of KULISCH_W, CAPACITY the module declares as parameters
    plusargs: Tuple[str, ...] = ()  # run-time arguments for every run (a mutant's select)

    @property
    def label(self):
        return f"{self.top} ({', '.join(os.path.basename(s) for s in self.sources)})"

    def instance_parameters(self, width):
        out = {}
        if "KULISCH_W" in self.parameters:
            out["KULISCH_W"] = width
        if "CAPACITY" in self.parameters:
            out["CAPACITY"] = self.capacity
        return out

    def with_plusargs(self, *plusargs):
        return NodeDut(self.sources, self.top, self.width, self.capacity, self.parameters, tuple(plusargs))


def node_signals(width=512):
    """The node's top-level signals, by port name (the kit's node is built and driven with these)."""
    b = lambda: Signal(bool(0))
    sig = {"clk": b(), "rst": ResetSignal(1, active=1, isasync=False)}
    for d in ("s", "m"):
        for p in (0, 1):
            sig[f"{d}_axis_{p}_tdata"] = Signal(intbv(0)[width:])
            for n in ("tvalid", "tready", "tlast"):
                sig[f"{d}_axis_{p}_{n}"] = b()
    sig["counter_select"] = Signal(intbv(0)[6:])
    sig["counter_value"] = Signal(intbv(0)[32:])
    sig["busy"] = b()
    return sig


def node_ports():
    """{name: (direction, width)} of the node's ports, from the kit's own signal set."""
    outputs = {"s_axis_0_tready", "s_axis_1_tready", "m_axis_0_tdata", "m_axis_0_tvalid", "m_axis_0_tlast",
               "m_axis_1_tdata", "m_axis_1_tvalid", "m_axis_1_tlast", "counter_value", "busy"}
    return {name: ("output" if name in outputs else "input", len(sig)) for name, sig in node_signals().items()}


def load_dut(paths, top=None, width=None, capacity=None):
    """The NodeDut of these Verilog files; DutError says what does not fit.  `width` (None:
    the module's parameter, else found by a probe run later) and `capacity` (default 4,096,
    or the module's parameter default) as the user stated them."""
    paths = tuple(os.path.abspath(p) for p in paths)
    try:
        path, top = find_top(paths, top)
        with open(path, errors="replace") as fh:
            iface = read_module(fh.read(), top, path=path)
    except (VerilogInterfaceError, OSError) as e:
        raise DutError(str(e)) from e
    expected = node_ports()
    problems = check_ports(iface, expected)
    extra = sorted(set(iface.ports) - set(expected))
    if extra:
        problems.append(f"port(s) the node does not have: {', '.join(extra)}")
    if problems:
        raise DutError(f"{os.path.basename(path)}: module {top} does not have the node's ports "
                       f"(docs/protocol.md): {'; '.join(problems)}")
    params = tuple(n for n in ("KULISCH_W", "CAPACITY") if n in iface.parameters)
    if width is not None and width not in KULISCH_WIDTHS:
        raise DutError(f"--width {width}: KULISCH_W is 320 or 280")
    if capacity is None:
        capacity = evaluate(iface.parameters["CAPACITY"], {}) if "CAPACITY" in params else None
        capacity = capacity or DEFAULT_CAPACITY
    if not (1 <= capacity <= DEFAULT_CAPACITY):
        raise DutError(f"--capacity {capacity}: 1 .. {DEFAULT_CAPACITY}")
    return NodeDut(paths, top, width, capacity, params)
