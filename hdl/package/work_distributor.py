"""Accelerator work distributor: job table, per-target outstanding counts and a
selectable dispatch policy (round-robin or service-rate-aware).

The point of the structure is the separation of *semantic* job identity from
*placement*: a job's id and generation are owned here for its whole life, while
its target and route epoch are facts recorded once, at acceptance, and never
re-derived from a transport event (a retry re-sends a live entry; it never
allocates one).

Dispatch policies (parameter POLICY):
    POLICY_ROUND_ROBIN   the next target in turn, whatever its load, rate or
                         enable bit.  Kept as the reference *wrong* design: an
                         even split of units is an even split of time only when
                         every target serves at the same rate, and a disabled
                         target stays in the rotation.
    POLICY_SERVICE_RATE  the enabled target with the smallest expected drain
                         time outstanding_work / svc_rate.  Compared by
                         cross-multiplication (a.work * b.rate < b.work * a.rate),
                         so there is no divider.  svc_rate == 0 means "not yet
                         measured" and ranks as maximally loaded (never as
                         infinitely fast).  Ties break round-robin, starting after
                         the last target dispatched to.

Ports (widths come from the signals passed in; N_TGT = len(tgt_enable),
N_JOB = 2**len(m_job_slot)):
    clk, rst            clock; synchronous active-high reset (ResetSignal)
    s_axis_job_tdata    work units of the offered job (WORK_W bits, > 0)
    s_axis_job_tid      semantic job id (JOB_W bits), carried unchanged
    s_axis_job_tvalid   a job is offered
    s_axis_job_tready   out: the offered job is dispatched this cycle
    retry_valid         transport retry request: re-send the live job in retry_slot
    retry_slot          job-table slot to re-send (width of m_job_slot)
    retry_ready         out: the retry request is consumed this cycle (re-sent, or
                        dropped because the slot is no longer live)
    m_job_valid         out: a job (new or retried) is offered to m_job_target
    m_job_target        out: destination target (TGT_W bits, N_TGT <= 2**TGT_W)
    m_job_slot          out: job-table slot of the job (SLOT_W bits)
    m_job_gen           out: generation of that slot's current use (GEN_W bits)
    m_job_tid           out: semantic job id (width of s_axis_job_tid)
    m_job_work          out: work units (width of s_axis_job_tdata)
    m_job_epoch         out: route epoch the job was dispatched under
    m_job_retry         out: this offer is a transport retry of a live job
    tgt_ready           per-target ready (N_TGT bits): the offer is taken when
                        m_job_valid and tgt_ready[m_job_target].  The offer is
                        re-evaluated every cycle, so m_job_target may change
                        while an offer waits (this is a dispatch port, not an
                        AXI-Stream channel).
    s_cmpl_valid        a completion arrives (always accepted)
    s_cmpl_slot         slot named by the completion
    s_cmpl_gen          generation named by the completion
    route_epoch         current route epoch (EPOCH_W bits); recorded per job
    tgt_enable          per-target enable (N_TGT bits); a disabled target is
                        never selected by POLICY_SERVICE_RATE
    svc_rate            per-target measured service rate, packed N_TGT x RATE_W
                        (target t in bits [(t+1)*RATE_W-1 : t*RATE_W]); 0 = unknown
    dispatch_fire       out: a new job is accepted (allocated) this cycle
    retry_fire          out: a transport retry is re-sent this cycle
    retire_fire         out: a completion retires a live job this cycle
    retire_target       out: target of the job named by s_cmpl_slot
    retire_work         out: work units of the job named by s_cmpl_slot
    retire_tid          out: semantic id of the job named by s_cmpl_slot
    outstanding         out: jobs outstanding per target, packed N_TGT x CNT_W
    outstanding_work    out: work units outstanding per target, packed N_TGT x OWORK_W
    chk_slot            debug read address into the job table
    chk_live, chk_gen, chk_epoch   out: that entry's live bit, generation, route epoch
    job_live            out: every entry's live bit (N_JOB bits, slot j in bit j)
    job_gen             out: every entry's generation, packed N_JOB x GEN_W
    job_epoch           out: every entry's route epoch, packed N_JOB x EPOCH_W
                        (the table state the package assertion monitor reads:
                        assertions over the design's own state, no shadow copy)

Parameters:
    POLICY   POLICY_ROUND_ROBIN or POLICY_SERVICE_RATE.

Guarantees: a job is allocated only on acceptance (offer and target ready);
retirement needs a live entry whose generation matches the completion; every
target's outstanding count and work are updated by one net expression
(+dispatch -retire), so a dispatch and a retirement in the same cycle both count.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv, modbv

POLICY_ROUND_ROBIN = 0
POLICY_SERVICE_RATE = 1
POLICIES = {"round_robin": POLICY_ROUND_ROBIN, "service_rate": POLICY_SERVICE_RATE}


@block
def work_distributor(clk, rst,
                     s_axis_job_tdata, s_axis_job_tid, s_axis_job_tvalid, s_axis_job_tready,
                     retry_valid, retry_slot, retry_ready,
                     m_job_valid, m_job_target, m_job_slot, m_job_gen, m_job_tid, m_job_work,
                     m_job_epoch, m_job_retry, tgt_ready,
                     s_cmpl_valid, s_cmpl_slot, s_cmpl_gen,
                     route_epoch, tgt_enable, svc_rate,
                     dispatch_fire, retry_fire, retire_fire, retire_target, retire_work, retire_tid,
                     outstanding, outstanding_work,
                     chk_slot, chk_live, chk_gen, chk_epoch,
                     job_live, job_gen, job_epoch,
                     POLICY=POLICY_SERVICE_RATE):
    name = "work_distributor"
    if POLICY not in POLICIES.values():
        raise ValueError(f"{name}: POLICY={POLICY!r}; use POLICY_ROUND_ROBIN ({POLICY_ROUND_ROBIN}) "
                         f"or POLICY_SERVICE_RATE ({POLICY_SERVICE_RATE})")
    n_tgt = len(tgt_enable)
    tgt_w = len(m_job_target)
    slot_w = len(m_job_slot)
    n_job = 1 << slot_w
    gen_w = len(m_job_gen)
    work_w = len(s_axis_job_tdata)
    job_w = len(s_axis_job_tid)
    epoch_w = len(route_epoch)
    if n_tgt < 2:
        raise ValueError(f"{name}: tgt_enable is {n_tgt} bit(s); a distributor needs N_TGT >= 2 targets")
    if n_tgt > (1 << tgt_w):
        raise ValueError(f"{name}: m_job_target is {tgt_w} bits, too narrow for N_TGT={n_tgt} targets")
    for sig, label in ((tgt_ready, "tgt_ready"),):
        if len(sig) != n_tgt:
            raise ValueError(f"{name}: {label} is {len(sig)} bits; it must be N_TGT={n_tgt} (len(tgt_enable))")
    for sig, label, want in ((retire_target, "retire_target", tgt_w), (retry_slot, "retry_slot", slot_w),
                             (s_cmpl_slot, "s_cmpl_slot", slot_w), (chk_slot, "chk_slot", slot_w),
                             (s_cmpl_gen, "s_cmpl_gen", gen_w), (chk_gen, "chk_gen", gen_w),
                             (m_job_tid, "m_job_tid", job_w), (retire_tid, "retire_tid", job_w),
                             (m_job_work, "m_job_work", work_w), (retire_work, "retire_work", work_w),
                             (m_job_epoch, "m_job_epoch", epoch_w), (chk_epoch, "chk_epoch", epoch_w)):
        if len(sig) != want:
            raise ValueError(f"{name}: {label} is {len(sig)} bits; it must be {want}")
    if len(job_live) != n_job or len(job_gen) != n_job * gen_w or len(job_epoch) != n_job * epoch_w:
        raise ValueError(f"{name}: job_live/job_gen/job_epoch must be N_JOB={n_job} x 1/{gen_w}/{epoch_w} bits, "
                         f"got {len(job_live)}/{len(job_gen)}/{len(job_epoch)}")
    if len(svc_rate) % n_tgt or len(outstanding) % n_tgt or len(outstanding_work) % n_tgt:
        raise ValueError(f"{name}: svc_rate ({len(svc_rate)}), outstanding ({len(outstanding)}) and "
                         f"outstanding_work ({len(outstanding_work)}) must be whole multiples of N_TGT={n_tgt}")
    rate_w = len(svc_rate) // n_tgt
    cnt_w = len(outstanding) // n_tgt
    owork_w = len(outstanding_work) // n_tgt
    if cnt_w < slot_w + 1:
        raise ValueError(f"{name}: outstanding has {cnt_w} bits per target; it must count up to "
                         f"N_JOB={n_job} jobs ({slot_w + 1} bits)")
    if owork_w < work_w + slot_w:
        raise ValueError(f"{name}: outstanding_work has {owork_w} bits per target; N_JOB={n_job} jobs of "
                         f"{work_w}-bit work need {work_w + slot_w}")
    prod_w = owork_w + rate_w
    rate_tot = len(svc_rate)

    # Job table, one list (memory) per field.
    tbl_live = [Signal(bool(0)) for _ in range(n_job)]
    tbl_gen = [Signal(modbv(0)[gen_w:]) for _ in range(n_job)]
    tbl_tid = [Signal(intbv(0)[job_w:]) for _ in range(n_job)]
    tbl_tgt = [Signal(intbv(0)[tgt_w:]) for _ in range(n_job)]
    tbl_epoch = [Signal(intbv(0)[epoch_w:]) for _ in range(n_job)]
    tbl_work = [Signal(intbv(0)[work_w:]) for _ in range(n_job)]
    # Per-target state.
    out_cnt = [Signal(modbv(0)[cnt_w:]) for _ in range(n_tgt)]
    out_work = [Signal(modbv(0)[owork_w:]) for _ in range(n_tgt)]
    rate = [Signal(intbv(0)[rate_w:]) for _ in range(n_tgt)]
    rr_ptr = Signal(intbv(0)[tgt_w:])

    # Combinational decision of this cycle.
    sel_target = Signal(intbv(0)[tgt_w:])
    sel_ok = Signal(bool(0))         # some target is eligible under the policy
    free_slot = Signal(intbv(0)[slot_w:])
    have_free = Signal(bool(0))
    retry_live = Signal(bool(0))
    fire_new = Signal(bool(0))       # a table entry is allocated this cycle
    cmpl_match = Signal(bool(0))

    # The combinational decisions below also read rst, so they are evaluated again when reset
    # is released: none of them relies on having run at time 0 (a constant input such as
    # tgt_enable may never produce an event, and Verilog-2012 gives no time-0 event either).
    @always_comb
    def unpack_rates():
        tmp = intbv(0)[rate_tot:]
        for t in range(n_tgt):
            tmp[:] = svc_rate >> (rate_w * t)
            if rst:
                rate[t].next = 0
            else:
                rate[t].next = tmp[rate_w:]

    @always_comb
    def find_free():
        idx = intbv(0)[slot_w:]
        found = False
        idx[:] = 0
        for j in range(n_job):  # lowest free slot wins
            if not found and not tbl_live[j]:
                idx[:] = j
                found = True
        free_slot.next = idx
        have_free.next = found and not rst

    @always_comb
    def select():
        best = intbv(0)[tgt_w:]
        cand = intbv(0)[tgt_w + 1:]
        best_known = False
        found = False
        lhs = intbv(0)[prod_w:]
        rhs = intbv(0)[prod_w:]
        best[:] = 0
        cand[:] = 0
        found = False
        best_known = False
        if POLICY == POLICY_ROUND_ROBIN:
            best[:] = rr_ptr
            found = True
        else:
            # Visit targets in round-robin order from rr_ptr; a candidate replaces the
            # best only when strictly better, so the first in that order wins a tie.
            for k in range(n_tgt):
                cand[:] = rr_ptr + k
                if cand >= n_tgt:
                    cand[:] = cand - n_tgt
                if tgt_enable[cand]:
                    if not found:
                        best[:] = cand
                        found = True
                        best_known = rate[cand] != 0
                    elif rate[cand] != 0:
                        if not best_known:
                            best[:] = cand       # a measured target beats an unknown one
                            best_known = True
                        else:
                            lhs[:] = out_work[cand] * rate[best]
                            rhs[:] = out_work[best] * rate[cand]
                            if lhs < rhs:
                                best[:] = cand
        sel_target.next = best
        sel_ok.next = found and not rst

    @always_comb
    def offer():
        rlive = False
        g = modbv(0)[gen_w:]
        rlive = bool(tbl_live[retry_slot])
        g[:] = tbl_gen[free_slot] + 1
        retry_live.next = rlive
        if retry_valid and rlive:
            # A retry re-sends the live entry to the target it was dispatched to.
            m_job_valid.next = True
            m_job_target.next = tbl_tgt[retry_slot]
            m_job_slot.next = retry_slot
            m_job_gen.next = tbl_gen[retry_slot]
            m_job_tid.next = tbl_tid[retry_slot]
            m_job_work.next = tbl_work[retry_slot]
            m_job_epoch.next = tbl_epoch[retry_slot]
            m_job_retry.next = True
        else:
            m_job_valid.next = s_axis_job_tvalid and have_free and sel_ok
            m_job_target.next = sel_target
            m_job_slot.next = free_slot
            m_job_gen.next = g
            m_job_tid.next = s_axis_job_tid
            m_job_work.next = s_axis_job_tdata
            m_job_epoch.next = route_epoch
            m_job_retry.next = False

    @always_comb
    def handshake():
        rf = False
        nf = False
        tr = False
        if retry_valid and retry_live:
            tr = tgt_ready[tbl_tgt[retry_slot]]
            rf = tr
        else:
            nf = s_axis_job_tvalid and have_free and sel_ok and tgt_ready[sel_target]
        fire_new.next = nf
        retry_fire.next = rf
        dispatch_fire.next = nf
        retry_ready.next = retry_valid and (rf or not retry_live)
        s_axis_job_tready.next = nf and not (retry_valid and retry_live)

    @always_comb
    def completion():
        m = False
        if s_cmpl_valid and tbl_live[s_cmpl_slot]:
            m = tbl_gen[s_cmpl_slot] == s_cmpl_gen
        cmpl_match.next = m
        retire_fire.next = m
        retire_target.next = tbl_tgt[s_cmpl_slot]
        retire_work.next = tbl_work[s_cmpl_slot]
        retire_tid.next = tbl_tid[s_cmpl_slot]

    @always_comb
    def debug_read():
        chk_live.next = tbl_live[chk_slot]
        chk_gen.next = tbl_gen[chk_slot]
        chk_epoch.next = tbl_epoch[chk_slot]

    @always_comb
    def pack_table():
        lv = intbv(0)[n_job:]
        gv = intbv(0)[n_job * gen_w:]
        ev = intbv(0)[n_job * epoch_w:]
        lv[:] = 0
        gv[:] = 0
        ev[:] = 0
        for j in range(n_job):
            if tbl_live[j]:
                lv[j] = 1
            gv[:] = gv | (tbl_gen[j] << (gen_w * j))
            ev[:] = ev | (tbl_epoch[j] << (epoch_w * j))
        job_live.next = lv
        job_gen.next = gv
        job_epoch.next = ev

    @always_comb
    def pack_counts():
        cnt = intbv(0)[len(outstanding):]
        wk = intbv(0)[len(outstanding_work):]
        cnt[:] = 0
        wk[:] = 0
        for t in range(n_tgt):
            cnt[:] = cnt | (out_cnt[t] << (cnt_w * t))
            wk[:] = wk | (out_work[t] << (owork_w * t))
        outstanding.next = cnt
        outstanding_work.next = wk

    @always_seq(clk.posedge, reset=rst)
    def state_update():
        # The job table has no reset of its payload, only of the live bits and counters.
        nxt = intbv(0)[tgt_w + 1:]
        new_tgt = intbv(0)[tgt_w:]
        ret_tgt = intbv(0)[tgt_w:]
        inc = intbv(0)[owork_w:]
        dec = intbv(0)[owork_w:]
        ci = intbv(0)[cnt_w:]
        cd = intbv(0)[cnt_w:]
        new_tgt[:] = sel_target
        ret_tgt[:] = tbl_tgt[s_cmpl_slot]

        if fire_new:
            tbl_live[free_slot].next = True
            tbl_gen[free_slot].next = tbl_gen[free_slot] + 1
            tbl_tgt[free_slot].next = new_tgt
            tbl_epoch[free_slot].next = route_epoch
            tbl_tid[free_slot].next = s_axis_job_tid
            tbl_work[free_slot].next = s_axis_job_tdata
            # Ties break round-robin: the rotation resumes after the target just used.
            nxt[:] = new_tgt + 1
            if nxt >= n_tgt:
                nxt[:] = 0
            rr_ptr.next = nxt[tgt_w:]

        if cmpl_match:
            tbl_live[s_cmpl_slot].next = False

        # One net next-state expression per target: +dispatch -retire, so a dispatch
        # and a retirement to the same target in one cycle both count.
        for t in range(n_tgt):
            inc[:] = 0
            dec[:] = 0
            ci[:] = 0
            cd[:] = 0
            if fire_new and new_tgt == t:
                ci[:] = 1
                inc[:] = s_axis_job_tdata
            if cmpl_match and ret_tgt == t:
                cd[:] = 1
                dec[:] = tbl_work[s_cmpl_slot]
            out_cnt[t].next = out_cnt[t] + ci - cd
            out_work[t].next = out_work[t] + inc - dec

    return (unpack_rates, find_free, select, offer, handshake, completion, debug_read, pack_table, pack_counts,
            state_update)
