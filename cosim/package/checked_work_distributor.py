"""The work distributor with the package assertion monitor beside it: the
distributor's own ports plus one failure output per assertion, for testing the
distributor with its targets modelled outside (the test bench's
cosim.package.package_bench.run_distributor and the formal target
work_distributor).  A verification harness, not part of the package: the
package itself (hdl.package.accelerator_package) wires the same two blocks.

In this harness the service rates are an input (the estimator is outside), so
the monitor takes a rate as measured when it is non-zero, and a_work_conserved
is not checked (it needs the estimator's counters; the full package,
accelerator_package, checks it).

Ports: every port of work_distributor (same converted names and meaning), grouped in the
package's buses (hdl/package/package_buses.py) where the names share a prefix: s_axis_job
(AxiStream without tlast: tdata, tid, tvalid, tready), retry, m_job (JobDispatch with its
valid and retry strobes), s_cmpl (Completion), retire (Retirement with work), chk
(JobCheck), job (JobTable); plus
    fail                PackageFailures: one bit per assertion (work_conserved always 0)
    imbalance_armed     out: see package_assertion_monitor

Parameters: POLICY (work_distributor); IMBALANCE_BUDGET, DEGRADE_SHIFT
(package_assertion_monitor).
"""
from myhdl import Signal, always_comb, block, intbv

from hdl.common.interface import AxiStream
from hdl.common.wiring import ports_of
from hdl.package.package_assertion_monitor import package_assertion_monitor
from hdl.package.package_buses import Completion, JobCheck, JobDispatch, JobTable, PackageFailures, Retirement, \
    RetryRequest
from hdl.package.work_distributor import POLICY_SERVICE_RATE, work_distributor


@block
def checked_work_distributor(clk, rst, s_axis_job: AxiStream, retry: RetryRequest, m_job: JobDispatch, tgt_ready,
                             s_cmpl: Completion, route_epoch, tgt_enable, svc_rate,
                             dispatch_fire, retry_fire, retire: Retirement, outstanding, outstanding_work,
                             chk: JobCheck, job: JobTable, fail: PackageFailures, imbalance_armed,
                             POLICY=POLICY_SERVICE_RATE, IMBALANCE_BUDGET=16, DEGRADE_SHIFT=2):
    n_tgt = len(tgt_enable)
    rate_w = len(svc_rate) // n_tgt
    rate_valid = Signal(intbv(0)[n_tgt:])
    no_counts = Signal(intbv(0)[len(outstanding_work):])   # CHECK_WORK=False: never read

    # the distributor's flat ports are the fields of the buses here, by their converted names
    dist = work_distributor(**ports_of(work_distributor, locals()), POLICY=POLICY)
    mon = package_assertion_monitor(
        clk, rst, dispatch_fire, retry_fire, m_job.slot, m_job.target, tgt_enable, retire.fire, s_cmpl.slot,
        s_cmpl.gen, job.live, job.gen, job.epoch, outstanding_work, svc_rate, rate_valid, no_counts, no_counts,
        *fail.bits(), imbalance_armed,
        IMBALANCE_BUDGET=IMBALANCE_BUDGET, DEGRADE_SHIFT=DEGRADE_SHIFT, CHECK_WORK=False)

    @always_comb
    def measured():
        # rst is read so this is evaluated again at reset release (the rates may be constant).
        tmp = intbv(0)[len(svc_rate):]
        bits = intbv(0)[n_tgt:]
        bits[:] = 0
        for t in range(n_tgt):
            tmp[:] = svc_rate >> (rate_w * t)
            if tmp[rate_w:] != 0 and not rst:
                bits[t] = 1
        rate_valid.next = bits

    return dist, mon, measured
