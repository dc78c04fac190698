"""A multi-die accelerator package under one work distributor, with its shared
resources and phase barrier in hardware, so a whole phase runs cycle by cycle
in either back end:

    s_axis_job --> phase_barrier gate --> work_distributor --dispatch bus--> compute_die_model x N_TGT
                                           ^   |     ^                         |  want ^ grant
                             svc_rate -----+   |     +-- completion arbiter <--+       |
                                               v           (+ late completions)        v
                              service_rate_estimator <--- die stall      shared_resource_arbiter
                                               |                          (HBM, D2D, per-die links)
                                               v
                                  package_assertion_monitor (beside the distributor)

* The estimator's published rates feed the distributor's policy (the feedback
  loop service-rate-aware dispatch depends on); the dies' stall reports feed
  its stall counters.
* The dies ask the arbiter for service each cycle; HBM and the package D2D
  bandwidth are shared, each die's own D2D link caps it alone.
* The barrier closes acceptance after `phase_jobs` jobs, waits for the last to
  retire, runs `barrier_cycles`, and measures stream and phase cycles.
* The assertion monitor reads the distributor's job table and counters and
  the estimator's counters and rates; its six outputs are the package
  assertions (package_assertion_monitor).

Ports (widths from the signals; N_TGT = len(tgt_enable); rates in 2**-RATE_FRAC
work units per cycle, DRATE_W = len(hbm.rate)); a bus's converted ports are
`<bus>_<field>` (s_axis_job_tdata, m_job_slot, fail_retire_once, ...), its
fields documented in its class (hdl/package/package_buses.py):
    clk, rst              clock; synchronous active-high reset (ResetSignal)
    s_axis_job            AxiStream without tlast: the offered job (tdata: work units, WORK_W bits, > 0;
                          tid: semantic job id, JOB_W bits); tready out: dispatched this cycle
    retry                 RetryRequest: transport retry of a job-table slot (ready out: consumed,
                          re-sent or dropped: slot not live)
    s_late_cmpl           Completion arriving late from the transport (a duplicate after a
                          retry, say); always accepted, ahead of the dies' completions
    route_epoch           current route epoch (EPOCH_W bits)
    tgt_enable            scheduler's per-die enable mask (N_TGT bits)
    die                   DieStatus: per-die compute rate in (0: hung die); busy, stall out
    link_rate             per-die D2D link rate in crossing units, packed N_TGT x DRATE_W
    hbm, d2d              SharedResource: package HBM service in work units, D2D service in
                          crossing units, per cycle (rate in, DRATE_W bits); sat_cyc out:
                          cycles in which it ran out (arbiter)
    phase_jobs            jobs per phase
    barrier_cycles        barrier length in cycles
    dispatch_fire, retry_fire       out: a job accepted / a retry re-sent
    m_job                 out: JobDispatch without strobes, the dispatch bus (target, slot, gen,
                          tid, work, epoch)
    cmpl                  out: Completion, the completion presented to the distributor
    retire                out: Retirement (fire, target, tid): a completion retired that job
    outstanding, outstanding_work   out: per die, packed (distributor)
    svc_rate, rate_valid, accepted_work, completed_work, active_cyc, stall_cyc
                          out: estimator's rates and counters, packed
    accept_open, barrier_active, phase_done, phases_done, phase_cycles, stream_cycles
                          out: the phase barrier (see phase_barrier)
    fail                  out: PackageFailures, one bit per package assertion
                          (package_assertion_monitor documents each)
    imbalance_armed       out: a_bounded_imbalance was armed at the last edge (no die degraded)

Parameters:
    POLICY            passed to work_distributor
    WINDOW            estimator window in active cycles (>= 2)
    QUEUE_DEPTH       jobs each die holds (power of two >= 2)
    RATE_FRAC         fraction bits of the rates (>= 0)
    CROSS_SHIFT       a fraction 2**-CROSS_SHIFT of the work crosses a die boundary
    IMBALANCE_BUDGET, DEGRADE_SHIFT   passed to package_assertion_monitor
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, intbv

from hdl.common.interface import AxiStream
from hdl.common.wiring import ports_of
from hdl.package.compute_die_model import compute_die_model
from hdl.package.package_assertion_monitor import package_assertion_monitor
from hdl.package.package_buses import Completion, DieStatus, JobDispatch, PackageFailures, Retirement, RetryRequest, \
    SharedResource
from hdl.package.phase_barrier import phase_barrier
from hdl.package.service_rate_estimator import service_rate_estimator
from hdl.package.shared_resource_arbiter import shared_resource_arbiter
from hdl.package.work_distributor import POLICY_SERVICE_RATE, work_distributor


@block
def accelerator_package(clk, rst, s_axis_job: AxiStream, retry: RetryRequest, s_late_cmpl: Completion,
                        route_epoch, tgt_enable, die: DieStatus, link_rate, hbm: SharedResource,
                        d2d: SharedResource, phase_jobs, barrier_cycles,
                        dispatch_fire, retry_fire, m_job: JobDispatch, cmpl: Completion, retire: Retirement,
                        outstanding, outstanding_work, svc_rate, rate_valid,
                        accepted_work, completed_work, active_cyc, stall_cyc,
                        accept_open, barrier_active, phase_done, phases_done, phase_cycles, stream_cycles,
                        fail: PackageFailures, imbalance_armed,
                        POLICY=POLICY_SERVICE_RATE, WINDOW=64, QUEUE_DEPTH=8, RATE_FRAC=4,
                        CROSS_SHIFT=1, IMBALANCE_BUDGET=24, DEGRADE_SHIFT=2):
    name = "accelerator_package"
    n_tgt = len(tgt_enable)
    drate_w = len(hbm.rate)
    for sig, label in ((die.rate, "die_rate"), (link_rate, "link_rate")):
        if len(sig) != n_tgt * drate_w:
            raise ValueError(f"{name}: {label} is {len(sig)} bits; it must be N_TGT x len(hbm_rate) = "
                             f"{n_tgt * drate_w}")
    for sig, label in ((die.busy, "die_busy"), (die.stall, "die_stall"), (rate_valid, "rate_valid")):
        if len(sig) != n_tgt:
            raise ValueError(f"{name}: {label} is {len(sig)} bits; it must be N_TGT={n_tgt}")
    if len(s_late_cmpl.slot) != len(m_job.slot) or len(s_late_cmpl.gen) != len(m_job.gen):
        raise ValueError(f"{name}: s_late_cmpl_slot/gen must match m_job_slot/gen widths")
    slot_w, gen_w = len(m_job.slot), len(m_job.gen)
    n_job = 1 << slot_w
    tgt_w = len(m_job.target)
    work_w = len(s_axis_job.tdata)
    epoch_w = len(route_epoch)

    # Distributor-side wires that are not top-level ports.
    dist_tvalid = Signal(bool(0))
    m_job_valid = Signal(bool(0))
    m_job_retry = Signal(bool(0))
    retire_work = Signal(intbv(0)[work_w:])
    tgt_active = Signal(intbv(0)[n_tgt:])
    chk_slot = Signal(intbv(0)[slot_w:])
    chk_live = Signal(bool(0))
    chk_gen = Signal(intbv(0)[gen_w:])
    chk_epoch = Signal(intbv(0)[epoch_w:])
    job_live = Signal(intbv(0)[n_job:])
    job_gen = Signal(intbv(0)[n_job * gen_w:])
    job_epoch = Signal(intbv(0)[n_job * epoch_w:])
    hbm_sat = Signal(bool(0))
    d2d_sat = Signal(bool(0))

    die_ready = [Signal(bool(0)) for _ in range(n_tgt)]
    die_cvalid = [Signal(bool(0)) for _ in range(n_tgt)]
    die_cslot = [Signal(intbv(0)[slot_w:]) for _ in range(n_tgt)]
    die_cgen = [Signal(intbv(0)[gen_w:]) for _ in range(n_tgt)]
    die_busy_bits = [Signal(bool(0)) for _ in range(n_tgt)]
    die_stall_bits = [Signal(bool(0)) for _ in range(n_tgt)]
    die_want = [Signal(intbv(0)[drate_w:]) for _ in range(n_tgt)]
    tgt_ready = ConcatSignal(*reversed(die_ready))
    cvalid_vec = ConcatSignal(*reversed(die_cvalid))
    cslot_vec = ConcatSignal(*reversed(die_cslot))
    cgen_vec = ConcatSignal(*reversed(die_cgen))
    busy_vec = ConcatSignal(*reversed(die_busy_bits))
    stall_vec = ConcatSignal(*reversed(die_stall_bits))
    want_vec = ConcatSignal(*reversed(die_want))
    grant = Signal(intbv(0)[n_tgt * drate_w:])
    grant_of = [grant((t + 1) * drate_w, t * drate_w) for t in range(n_tgt)]
    cgrant = Signal(intbv(0)[n_tgt:])
    cgrant_bits = [cgrant(t) for t in range(n_tgt)]
    # sliced under its port name: MyHDL names a top-level bus field only after it has named the
    # slices taken of it, and a slice of a field would come out nameless
    die_rate = die.rate
    rate_of = [die_rate((t + 1) * drate_w, t * drate_w) for t in range(n_tgt)]
    arb_ptr = Signal(intbv(0)[tgt_w:])

    gate = phase_barrier(clk, rst, phase_jobs, barrier_cycles, s_axis_job.tvalid, dispatch_fire, retire.fire,
                         accept_open, barrier_active, phase_done, phases_done, phase_cycles, stream_cycles)
    # the distributor's flat ports are found by their converted names among the buses here
    dist = work_distributor(**ports_of(work_distributor, locals(), s_axis_job_tvalid=dist_tvalid,
                                       s_cmpl_valid=cmpl.valid, s_cmpl_slot=cmpl.slot, s_cmpl_gen=cmpl.gen),
                            POLICY=POLICY)
    # The estimator counts retired work only: a transport retry re-sends a job, it completes none (§16).
    est = service_rate_estimator(
        clk, rst, dispatch_fire, m_job.target, m_job.work, retire.fire, retire.target, retire_work,
        outstanding, stall_vec, tgt_active, svc_rate, rate_valid, accepted_work, completed_work, active_cyc,
        stall_cyc, WINDOW=WINDOW)
    dies = [compute_die_model(clk, rst, m_job_valid, m_job.target, m_job.slot, m_job.gen, m_job.work, m_job_retry,
                              die_ready[t], die_cvalid[t], cgrant_bits[t], die_cslot[t], die_cgen[t],
                              rate_of[t], die_want[t], grant_of[t], die_stall_bits[t], die_busy_bits[t],
                              TARGET_ID=t, QUEUE_DEPTH=QUEUE_DEPTH, RATE_FRAC=RATE_FRAC)
            for t in range(n_tgt)]
    arb = shared_resource_arbiter(clk, rst, want_vec, link_rate, hbm.rate, d2d.rate, grant, hbm_sat, d2d_sat,
                                  hbm.sat_cyc, d2d.sat_cyc, CROSS_SHIFT=CROSS_SHIFT)
    mon = package_assertion_monitor(
        clk, rst, dispatch_fire, retry_fire, m_job.slot, m_job.target, tgt_enable, retire.fire, cmpl.slot,
        cmpl.gen, job_live, job_gen, job_epoch, outstanding_work, svc_rate, rate_valid, accepted_work,
        completed_work, *fail.bits(), imbalance_armed,
        IMBALANCE_BUDGET=IMBALANCE_BUDGET, DEGRADE_SHIFT=DEGRADE_SHIFT, CHECK_WORK=True)

    @always_comb
    def gate_jobs():
        dist_tvalid.next = s_axis_job.tvalid and accept_open

    @always_comb
    def arbitrate():
        # A late completion from the transport goes first; otherwise round-robin over the
        # dies' completions starting at arb_ptr, one per cycle.
        cand = intbv(0)[tgt_w + 1:]
        win = intbv(0)[tgt_w:]
        g = intbv(0)[n_tgt:]
        sl = intbv(0)[len(cslot_vec):]
        gn = intbv(0)[len(cgen_vec):]
        found = False
        win[:] = 0
        g[:] = 0
        for k in range(n_tgt):
            cand[:] = arb_ptr + k
            if cand >= n_tgt:
                cand[:] = cand - n_tgt
            if not found and cvalid_vec[cand]:
                win[:] = cand
                found = True
        sl[:] = cslot_vec >> (slot_w * win)
        gn[:] = cgen_vec >> (gen_w * win)
        if s_late_cmpl.valid:
            cmpl.valid.next = True
            cmpl.slot.next = s_late_cmpl.slot
            cmpl.gen.next = s_late_cmpl.gen
        else:
            if found:
                g[win] = 1
            cmpl.valid.next = found
            cmpl.slot.next = sl[slot_w:]
            cmpl.gen.next = gn[gen_w:]
        cgrant.next = g

    @always_seq(clk.posedge, reset=rst)
    def rotate():
        nxt = intbv(0)[tgt_w + 1:]
        if cgrant != 0:
            nxt[:] = 0
            for t in range(n_tgt):
                if cgrant[t]:
                    nxt[:] = t + 1
            if nxt >= n_tgt:
                nxt[:] = 0
            arb_ptr.next = nxt[tgt_w:]

    @always_comb
    def die_status():
        die.busy.next = busy_vec
        die.stall.next = stall_vec

    return gate, dist, est, dies, arb, mon, gate_jobs, arbitrate, rotate, die_status
