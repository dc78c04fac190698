"""package_assertion_monitor: the accelerator package's assertions as hardware,
checked at every clock edge from state the design already keeps (the job
table, the outstanding-work counters, the estimator's counters and rates).
There is no shadow job table and nothing from the test bench: every input is a
design signal.

Each assertion is one 1-bit output, 1 in the cycle after an edge at which it
failed (the checks use the values sampled at that edge, as a concurrent
assertion does; `$past` terms are the previous edge's values).  Reset disables
every check and clears the history (`disable iff (rst)`).  A formal tool can
assert each output low.

fail_retire_once            a_retire_once: an accepted job is retired at most
    once, and only by a completion of its own use of the slot:
      retire_fire |-> job_live[cmpl_slot] && job_gen[cmpl_slot] == cmpl_gen
      $past(retire_fire) |-> !job_live[$past(cmpl_slot)]
    (the notes' property checks only the live bit, which a stale completion of
    a recycled slot satisfies; the generation term is what catches it)
fail_retry_creates_no_job   a_retry_creates_no_job: a transport retry never
    creates a second semantic job:
      retry_fire |-> !dispatch_fire
      dispatch_fire |-> !job_live[m_job_slot]      (no allocation over a live job)
fail_route_epoch_stable     a_route_epoch_stable: a live job's route epoch
    never changes underneath it, for every slot j:
      job_live[j] && $past(job_live[j]) |-> job_epoch[j] == $past(job_epoch[j])
    (the notes check one index chk_idx; here every index at once, which is the
    notes' property for all values of chk_idx.  A formal proof may bind it to
    one symbolic slot, as the notes advise.)
fail_no_dispatch_to_disabled  a_no_dispatch_to_disabled: work is never
    dispatched to a target that is not enabled:
      dispatch_fire |-> m_job_target < N_TGT && tgt_enable[m_job_target]
fail_bounded_imbalance      a_bounded_imbalance: while no target is degraded,
    max - min of the per-target outstanding work stays within IMBALANCE_BUDGET.
    Disabled while any target is degraded (imbalance is then correct), where
    degraded is design state: the target is disabled, or its rate has been
    measured (rate_valid) and lies more than 1/2**DEGRADE_SHIFT below the
    fastest measured rate.  A target not yet measured is not degraded: with no
    measurement the distributor must still spread work evenly.
fail_work_conserved         a_work_conserved (not in the notes; their §15-16
    rule "a retried transport attempt is not work and must never appear in
    completed work" made checkable): for every target t,
      accepted_work[t] - completed_work[t] == outstanding_work[t]
    while neither counter has saturated (CHECK_WORK=True only).
imbalance_armed             out: a_bounded_imbalance was armed at the last edge
                            (coverage: how long the property was checked)

Ports (widths from the signals; N_TGT = len(tgt_enable), N_JOB = len(job_live)):
    clk, rst                       clock; synchronous active-high reset
    dispatch_fire, retry_fire      a new job accepted / a transport retry re-sent
    m_job_slot, m_job_target       slot and target of the dispatch bus
    tgt_enable                     per-target enable (N_TGT bits)
    retire_fire                    a completion retired a job
    cmpl_slot, cmpl_gen            slot and generation named by that completion
    job_live                       the table's live bits (N_JOB)
    job_gen, job_epoch             the table's generations / route epochs, packed
    outstanding_work               per-target outstanding work, packed N_TGT x OWORK_W
    svc_rate, rate_valid           estimator's published rates (packed) and valid bits
    accepted_work, completed_work  estimator's counters, packed N_TGT x STAT_W
                                   (ignored when CHECK_WORK is False)
    fail_*                         out: one bit per assertion (above)
    imbalance_armed                out

Parameters:
    IMBALANCE_BUDGET  work units (>= 0)
    DEGRADE_SHIFT     degraded = measured rate below max - max / 2**DEGRADE_SHIFT (1..8)
    CHECK_WORK        check a_work_conserved (needs the estimator's counters)
"""
from myhdl import Signal, always_seq, block, intbv

ASSERTIONS = ("a_retire_once", "a_retry_creates_no_job", "a_route_epoch_stable", "a_no_dispatch_to_disabled",
              "a_bounded_imbalance", "a_work_conserved")


@block
def package_assertion_monitor(clk, rst, dispatch_fire, retry_fire, m_job_slot, m_job_target, tgt_enable,
                              retire_fire, cmpl_slot, cmpl_gen, job_live, job_gen, job_epoch,
                              outstanding_work, svc_rate, rate_valid, accepted_work, completed_work,
                              fail_retire_once, fail_retry_creates_no_job, fail_route_epoch_stable,
                              fail_no_dispatch_to_disabled, fail_bounded_imbalance, fail_work_conserved,
                              imbalance_armed, IMBALANCE_BUDGET=16, DEGRADE_SHIFT=2, CHECK_WORK=True):
    name = "package_assertion_monitor"
    n_tgt = len(tgt_enable)
    n_job = len(job_live)
    slot_w = len(m_job_slot)
    gen_w = len(cmpl_gen)
    if n_job != 1 << slot_w or len(cmpl_slot) != slot_w:
        raise ValueError(f"{name}: job_live must have 2**len(m_job_slot) = {1 << slot_w} bits and cmpl_slot "
                         f"{slot_w}; got {n_job} and {len(cmpl_slot)}")
    if len(job_gen) != n_job * gen_w or len(job_epoch) % n_job:
        raise ValueError(f"{name}: job_gen must be N_JOB x {gen_w} bits and job_epoch a multiple of N_JOB={n_job}")
    epoch_w = len(job_epoch) // n_job
    if n_tgt > 1 << len(m_job_target):
        raise ValueError(f"{name}: m_job_target ({len(m_job_target)} bits) cannot address N_TGT={n_tgt}")
    for sig, label in ((outstanding_work, "outstanding_work"), (svc_rate, "svc_rate"),
                       (accepted_work, "accepted_work"), (completed_work, "completed_work")):
        if len(sig) % n_tgt:
            raise ValueError(f"{name}: {label} ({len(sig)} bits) is not a whole multiple of N_TGT={n_tgt}")
    if len(rate_valid) != n_tgt:
        raise ValueError(f"{name}: rate_valid must be N_TGT={n_tgt} bits")
    if len(accepted_work) != len(completed_work):
        raise ValueError(f"{name}: accepted_work and completed_work must have the same width")
    if not isinstance(IMBALANCE_BUDGET, int) or IMBALANCE_BUDGET < 0:
        raise ValueError(f"{name}: IMBALANCE_BUDGET={IMBALANCE_BUDGET!r}; it must be an integer >= 0")
    if not isinstance(DEGRADE_SHIFT, int) or not 1 <= DEGRADE_SHIFT <= 8:
        raise ValueError(f"{name}: DEGRADE_SHIFT={DEGRADE_SHIFT!r}; it must be an integer in 1..8")
    owork_w = len(outstanding_work) // n_tgt
    rate_w = len(svc_rate) // n_tgt
    stat_w = len(accepted_work) // n_tgt
    if CHECK_WORK and stat_w < owork_w:
        raise ValueError(f"{name}: the estimator's counters ({stat_w} bits) must be at least as wide as "
                         f"outstanding_work ({owork_w} bits)")
    STAT_MAX = (1 << stat_w) - 1
    BUDGET = IMBALANCE_BUDGET
    W_OW, W_RT, W_ST = len(outstanding_work), len(svc_rate), len(accepted_work)
    W_GEN, W_EP = len(job_gen), len(job_epoch)

    prev_valid = Signal(bool(0))         # the previous edge was out of reset
    prev_retire = Signal(bool(0))
    prev_slot = Signal(intbv(0)[slot_w:])
    prev_live = Signal(intbv(0)[n_job:])
    prev_epoch = Signal(intbv(0)[W_EP:])

    @always_seq(clk.posedge, reset=rst)
    def check():
        gt = intbv(0)[W_GEN:]
        ep = intbv(0)[W_EP:]
        pe = intbv(0)[W_EP:]
        ow = intbv(0)[W_OW:]
        rt = intbv(0)[W_RT:]
        st = intbv(0)[W_ST:]
        g = intbv(0)[gen_w:]
        e_now = intbv(0)[epoch_w:]
        e_old = intbv(0)[epoch_w:]
        w = intbv(0)[owork_w:]
        wmax = intbv(0)[owork_w:]
        wmin = intbv(0)[owork_w:]
        r = intbv(0)[rate_w:]
        rmax = intbv(0)[rate_w:]
        lim = intbv(0)[rate_w + 1:]
        acc = intbv(0)[stat_w:]
        cmp = intbv(0)[stat_w:]
        diff = intbv(0)[stat_w + 1:]
        f_retire = False
        f_retry = False
        f_epoch = False
        f_disabled = False
        f_imb = False
        f_work = False
        armed = True

        # a_retire_once
        gt[:] = job_gen >> (gen_w * cmpl_slot)
        g[:] = gt[gen_w:]
        if retire_fire and not (job_live[cmpl_slot] and g == cmpl_gen):
            f_retire = True
        if prev_valid and prev_retire and job_live[prev_slot]:
            f_retire = True

        # a_retry_creates_no_job
        if retry_fire and dispatch_fire:
            f_retry = True
        if dispatch_fire and job_live[m_job_slot]:
            f_retry = True

        # a_route_epoch_stable, every slot
        for j in range(n_job):
            ep[:] = job_epoch >> (epoch_w * j)
            pe[:] = prev_epoch >> (epoch_w * j)
            e_now[:] = ep[epoch_w:]
            e_old[:] = pe[epoch_w:]
            if prev_valid and job_live[j] and prev_live[j] and e_now != e_old:
                f_epoch = True

        # a_no_dispatch_to_disabled
        if dispatch_fire:
            if m_job_target >= n_tgt:
                f_disabled = True
            elif not tgt_enable[m_job_target]:
                f_disabled = True

        # a_bounded_imbalance, armed by design state only
        rmax[:] = 0
        for t in range(n_tgt):
            rt[:] = svc_rate >> (rate_w * t)
            r[:] = rt[rate_w:]
            if rate_valid[t] and r > rmax:
                rmax[:] = r
        lim[:] = rmax - (rmax >> DEGRADE_SHIFT)
        for t in range(n_tgt):
            rt[:] = svc_rate >> (rate_w * t)
            r[:] = rt[rate_w:]
            if not tgt_enable[t]:
                armed = False
            elif rate_valid[t] and r < lim:
                armed = False
        wmax[:] = 0
        wmin[:] = outstanding_work[owork_w:0]
        for t in range(n_tgt):
            ow[:] = outstanding_work >> (owork_w * t)
            w[:] = ow[owork_w:]
            if w > wmax:
                wmax[:] = w
            if w < wmin:
                wmin[:] = w
        if armed and wmax - wmin > BUDGET:
            f_imb = True

        # a_work_conserved
        if CHECK_WORK:
            for t in range(n_tgt):
                st[:] = accepted_work >> (stat_w * t)
                acc[:] = st[stat_w:]
                st[:] = completed_work >> (stat_w * t)
                cmp[:] = st[stat_w:]
                ow[:] = outstanding_work >> (owork_w * t)
                w[:] = ow[owork_w:]
                if acc != STAT_MAX and cmp != STAT_MAX:
                    if acc < cmp:
                        f_work = True
                    else:
                        diff[:] = acc - cmp
                        if diff != w:
                            f_work = True

        fail_retire_once.next = f_retire
        fail_retry_creates_no_job.next = f_retry
        fail_route_epoch_stable.next = f_epoch
        fail_no_dispatch_to_disabled.next = f_disabled
        fail_bounded_imbalance.next = f_imb
        fail_work_conserved.next = f_work
        imbalance_armed.next = armed
        prev_valid.next = 1
        prev_retire.next = retire_fire
        prev_slot.next = cmpl_slot
        prev_live.next = job_live
        prev_epoch.next = job_epoch

    return check
