"""A multi-die package under one work distributor: distributor + service-rate
estimator + N compute-die models + a round-robin completion arbiter, as one
design so the whole degraded-die scenario runs cycle by cycle in either back end.

    s_axis_job --> work_distributor --dispatch bus--> compute_die_model x N_TGT
                      ^   |  ^                              |
        svc_rate -----+   |  +---- completion arbiter <-----+
                          v
              service_rate_estimator (dispatch + retire events, outstanding)

The estimator's published rates feed the distributor's policy: the feedback
loop the service-rate-aware policy depends on.  Every event the package
assertions need (dispatch, completion, retirement, job-table debug read) is a
top-level port, so monitors see the same thing in both back ends.

Ports (widths from the signals; N_TGT = len(tgt_enable)):
    clk, rst              clock; synchronous active-high reset (ResetSignal)
    s_axis_job_tdata      work units of the offered job (WORK_W bits, > 0)
    s_axis_job_tid        semantic job id (JOB_W bits)
    s_axis_job_tvalid     a job is offered
    s_axis_job_tready     out: the job is dispatched this cycle
    route_epoch           current route epoch (EPOCH_W bits)
    tgt_enable            scheduler's per-die enable mask (N_TGT bits)
    die_rate              per-die service rate, packed N_TGT x DRATE_W, in
                          2**-RATE_FRAC work units per cycle (0: hung die)
    dispatch_fire         out: a job is accepted
    m_job_target, m_job_slot, m_job_gen, m_job_tid, m_job_work, m_job_epoch
                          out: the dispatch bus (fields of the offered job)
    cmpl_valid, cmpl_slot, cmpl_gen
                          out: the arbitrated completion presented to the distributor
    retire_fire, retire_target, retire_tid
                          out: a completion retired that job
    outstanding           out: jobs outstanding per die, packed N_TGT x CNT_W
    outstanding_work      out: work outstanding per die, packed N_TGT x OWORK_W
    svc_rate              out: estimator's published rate per die, packed N_TGT x RATE_W
    accepted_work, completed_work, active_cyc, stall_cyc
                          out: estimator's saturating counters, packed N_TGT x STAT_W
    die_busy              out: per-die "holds a job" bit (N_TGT bits)
    chk_slot              debug read address into the job table
    chk_live, chk_gen, chk_epoch   out: that entry's live bit, generation, epoch

Parameters:
    POLICY, FAULT   passed to work_distributor (see there)
    WINDOW          estimator window in active cycles (>= 2)
    QUEUE_DEPTH     jobs each die holds (power of two >= 2)
    RATE_FRAC       fraction bits of die_rate (>= 0)
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, intbv

from hdl.compute_die_model import compute_die_model
from hdl.service_rate_estimator import service_rate_estimator
from hdl.work_distributor import FAULT_NONE, POLICY_SERVICE_RATE, work_distributor


@block
def degraded_die_package(clk, rst, s_axis_job_tdata, s_axis_job_tid, s_axis_job_tvalid, s_axis_job_tready,
                         route_epoch, tgt_enable, die_rate,
                         dispatch_fire, m_job_target, m_job_slot, m_job_gen, m_job_tid, m_job_work, m_job_epoch,
                         cmpl_valid, cmpl_slot, cmpl_gen, retire_fire, retire_target, retire_tid,
                         outstanding, outstanding_work, svc_rate,
                         accepted_work, completed_work, active_cyc, stall_cyc, die_busy,
                         chk_slot, chk_live, chk_gen, chk_epoch,
                         POLICY=POLICY_SERVICE_RATE, FAULT=FAULT_NONE, WINDOW=64, QUEUE_DEPTH=8, RATE_FRAC=4):
    name = "degraded_die_package"
    n_tgt = len(tgt_enable)
    if len(die_rate) % n_tgt:
        raise ValueError(f"{name}: die_rate is {len(die_rate)} bits, not a whole multiple of N_TGT={n_tgt}")
    if len(die_busy) != n_tgt:
        raise ValueError(f"{name}: die_busy is {len(die_busy)} bits; it must be N_TGT={n_tgt}")
    drate_w = len(die_rate) // n_tgt
    slot_w, gen_w = len(m_job_slot), len(m_job_gen)
    tgt_w = len(m_job_target)
    work_w = len(s_axis_job_tdata)

    # Distributor-side wires that are not top-level ports.
    zero = Signal(bool(0))
    retry_slot = Signal(intbv(0)[slot_w:])
    retry_ready = Signal(bool(0))
    retry_fire = Signal(bool(0))
    m_job_valid = Signal(bool(0))
    m_job_retry = Signal(bool(0))
    retire_work = Signal(intbv(0)[work_w:])
    tgt_active = Signal(intbv(0)[n_tgt:])

    die_ready = [Signal(bool(0)) for _ in range(n_tgt)]
    die_cvalid = [Signal(bool(0)) for _ in range(n_tgt)]
    die_cslot = [Signal(intbv(0)[slot_w:]) for _ in range(n_tgt)]
    die_cgen = [Signal(intbv(0)[gen_w:]) for _ in range(n_tgt)]
    die_busy_bits = [Signal(bool(0)) for _ in range(n_tgt)]
    tgt_ready = ConcatSignal(*reversed(die_ready))
    cvalid_vec = ConcatSignal(*reversed(die_cvalid))
    cslot_vec = ConcatSignal(*reversed(die_cslot))
    cgen_vec = ConcatSignal(*reversed(die_cgen))
    busy_vec = ConcatSignal(*reversed(die_busy_bits))
    grant = Signal(intbv(0)[n_tgt:])
    grant_bits = [grant(t) for t in range(n_tgt)]
    rate_of = [die_rate((t + 1) * drate_w, t * drate_w) for t in range(n_tgt)]
    arb_ptr = Signal(intbv(0)[tgt_w:])

    dist = work_distributor(
        clk, rst, s_axis_job_tdata, s_axis_job_tid, s_axis_job_tvalid, s_axis_job_tready,
        zero, retry_slot, retry_ready,
        m_job_valid, m_job_target, m_job_slot, m_job_gen, m_job_tid, m_job_work, m_job_epoch, m_job_retry,
        tgt_ready, cmpl_valid, cmpl_slot, cmpl_gen, route_epoch, tgt_enable, svc_rate,
        dispatch_fire, retry_fire, retire_fire, retire_target, retire_work, retire_tid,
        outstanding, outstanding_work, chk_slot, chk_live, chk_gen, chk_epoch,
        POLICY=POLICY, FAULT=FAULT)
    est = service_rate_estimator(
        clk, rst, dispatch_fire, m_job_target, m_job_work, retire_fire, retire_target, retire_work,
        outstanding, tgt_active, svc_rate, accepted_work, completed_work, active_cyc, stall_cyc,
        WINDOW=WINDOW)
    dies = [compute_die_model(clk, rst, m_job_valid, m_job_target, m_job_slot, m_job_gen, m_job_work, m_job_retry,
                              die_ready[t], die_cvalid[t], grant_bits[t], die_cslot[t], die_cgen[t],
                              rate_of[t], die_busy_bits[t],
                              TARGET_ID=t, QUEUE_DEPTH=QUEUE_DEPTH, RATE_FRAC=RATE_FRAC)
            for t in range(n_tgt)]

    @always_comb
    def arbitrate():
        # Round-robin over the dies' completions, starting at arb_ptr: one per cycle.
        cand = intbv(0)[tgt_w + 1:]
        win = intbv(0)[tgt_w:]
        g = intbv(0)[n_tgt:]
        sl = intbv(0)[len(cslot_vec):]
        gn = intbv(0)[len(cgen_vec):]
        found = False
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
        if found:
            g[win] = 1
        sl[:] = cslot_vec >> (slot_w * win)
        gn[:] = cgen_vec >> (gen_w * win)
        grant.next = g
        cmpl_valid.next = found
        cmpl_slot.next = sl[slot_w:]
        cmpl_gen.next = gn[gen_w:]

    @always_seq(clk.posedge, reset=rst)
    def rotate():
        nxt = intbv(0)[tgt_w + 1:]
        if cmpl_valid:
            nxt[:] = 0
            for t in range(n_tgt):
                if grant[t]:
                    nxt[:] = t + 1
            if nxt >= n_tgt:
                nxt[:] = 0
            arb_ptr.next = nxt[tgt_w:]

    @always_comb
    def busy_out():
        die_busy.next = busy_vec

    return dist, est, dies, arbitrate, rotate, busy_out
