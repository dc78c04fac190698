"""Per-target service-rate estimator: windowed completed work per *active* cycle,
plus saturating accepted/completed/active/stall counters.

A target is *active* in a cycle when it has work outstanding.  The rate is
measured over a bounded window of WINDOW active cycles: when a target's window
fills, the work it retired in that window is published as its svc_rate (units
per WINDOW active cycles) and the window restarts.  Consequences, all deliberate:
    - idle cycles never count, so an idle target is not mistaken for a slow one;
    - a bounded window sees a recent degradation that an all-time average hides;
    - the window has a fixed length in active cycles, so the rate needs no
      divider (a fixed-length elapsed-time epoch would need completed/active);
    - an idle target keeps its last published rate; 0 means "never measured"
      (or "retired nothing over a whole window": a stalled target), which the
      service-rate-aware policy treats as maximally loaded.

Only *retired* work counts as completed: a transport retry is not work, and the
distributor reports retirements (live entry and matching generation) only.

A *stall* cycle is an active cycle in which the target reports that something
downstream of its compute held it back (`tgt_stall`: a shared-resource grant
below what its compute could use, its own die-to-die link, or a completion it
could not hand over).  The design notes define stall as "outstanding, but
nothing retiring"; with multi-cycle jobs that count is set by the job size
(a healthy die retiring one 4-unit job every 8 cycles stalls 7 cycles in 8), so
it cannot tell a slow die from a starved one.  Counting the die's own report
keeps the notes' reading: high stall = waiting downstream (memory, link), low
stall with high activity = saturated compute.

Ports (widths from the signals; N_TGT = len(tgt_active)):
    clk, rst          clock; synchronous active-high reset (ResetSignal)
    dispatch_fire     a job was accepted this cycle
    dispatch_target   its target (TGT_W bits, N_TGT <= 2**TGT_W)
    dispatch_work     its work units (WORK_W bits)
    retire_fire       a job retired this cycle
    retire_target     its target (TGT_W bits)
    retire_work       its work units (WORK_W bits)
    outstanding       per-target outstanding job count, packed N_TGT x CNT_W
                      (from the distributor); non-zero = active
    tgt_stall         per-target "held back downstream this cycle" (N_TGT bits,
                      from the targets)
    tgt_active        out: per-target active bit this cycle (N_TGT bits)
    svc_rate          out: published rate per target, packed N_TGT x RATE_W,
                      saturating at 2**RATE_W - 1; 0 = unknown
    rate_valid        out: per-target bit, set once a window has completed since
                      reset (svc_rate is then a measurement, even when it is 0)
    accepted_work     out: saturating total of accepted work, packed N_TGT x STAT_W
    completed_work    out: saturating total of retired work, packed N_TGT x STAT_W
    active_cyc        out: saturating count of active cycles, packed N_TGT x STAT_W
    stall_cyc         out: saturating count of active cycles in which the target
                      reported a downstream stall, packed N_TGT x STAT_W

Parameters:
    WINDOW   active cycles per rate window; 2 <= WINDOW.  Must be short against a
             phase (the estimate has to be faster than what it estimates) and long
             against one job's service time (or it measures noise).
"""
from myhdl import Signal, always_comb, always_seq, block, intbv


@block
def service_rate_estimator(clk, rst, dispatch_fire, dispatch_target, dispatch_work,
                           retire_fire, retire_target, retire_work, outstanding, tgt_stall,
                           tgt_active, svc_rate, rate_valid, accepted_work, completed_work, active_cyc, stall_cyc,
                           WINDOW=64):
    name = "service_rate_estimator"
    n_tgt = len(tgt_active)
    tgt_w = len(dispatch_target)
    work_w = len(dispatch_work)
    if not isinstance(WINDOW, int) or WINDOW < 2:
        raise ValueError(f"{name}: WINDOW={WINDOW!r}; it must be an integer >= 2 active cycles")
    if n_tgt < 1 or n_tgt > (1 << tgt_w):
        raise ValueError(f"{name}: tgt_active is {n_tgt} bits; dispatch_target ({tgt_w} bits) must address them")
    if len(tgt_stall) != n_tgt or len(rate_valid) != n_tgt:
        raise ValueError(f"{name}: tgt_stall and rate_valid must be N_TGT={n_tgt} bits "
                         f"(len(tgt_active)), got {len(tgt_stall)} and {len(rate_valid)}")
    if len(retire_target) != tgt_w or len(retire_work) != work_w:
        raise ValueError(f"{name}: retire_target/retire_work must match dispatch_target ({tgt_w}) "
                         f"and dispatch_work ({work_w}) widths")
    for sig, label in ((outstanding, "outstanding"), (svc_rate, "svc_rate"), (accepted_work, "accepted_work"),
                       (completed_work, "completed_work"), (active_cyc, "active_cyc"), (stall_cyc, "stall_cyc")):
        if len(sig) % n_tgt:
            raise ValueError(f"{name}: {label} is {len(sig)} bits, not a whole multiple of N_TGT={n_tgt}")
    stat_w = len(stall_cyc) // n_tgt
    if not (len(accepted_work) == len(completed_work) == len(active_cyc) == len(stall_cyc)):
        raise ValueError(f"{name}: accepted_work, completed_work, active_cyc and stall_cyc must have equal widths")
    cnt_w = len(outstanding) // n_tgt
    rate_w = len(svc_rate) // n_tgt
    if stat_w < work_w + 1:
        raise ValueError(f"{name}: counters are {stat_w} bits per target; they need more than WORK_W={work_w}")
    if rate_w < work_w:
        raise ValueError(f"{name}: svc_rate has {rate_w} bits per target; it needs at least WORK_W={work_w}")
    win_w = max(1, (WINDOW - 1).bit_length())
    STAT_MAX = (1 << stat_w) - 1
    RATE_MAX = (1 << rate_w) - 1
    LAST = WINDOW - 1

    acc_w = [Signal(intbv(0)[stat_w:]) for _ in range(n_tgt)]
    cmp_w = [Signal(intbv(0)[stat_w:]) for _ in range(n_tgt)]
    act_c = [Signal(intbv(0)[stat_w:]) for _ in range(n_tgt)]
    stl_c = [Signal(intbv(0)[stat_w:]) for _ in range(n_tgt)]
    win_act = [Signal(intbv(0)[win_w:]) for _ in range(n_tgt)]
    win_done = [Signal(intbv(0)[rate_w:]) for _ in range(n_tgt)]
    rate = [Signal(intbv(0)[rate_w:]) for _ in range(n_tgt)]
    measured = [Signal(bool(0)) for _ in range(n_tgt)]
    active = [Signal(bool(0)) for _ in range(n_tgt)]

    @always_comb
    def activity():
        tmp = intbv(0)[len(outstanding):]
        cnt = intbv(0)[cnt_w:]
        bits = intbv(0)[n_tgt:]
        bits[:] = 0
        for t in range(n_tgt):
            tmp[:] = outstanding >> (cnt_w * t)
            cnt[:] = tmp[cnt_w:]
            active[t].next = cnt != 0
            if cnt != 0:
                bits[t] = 1
        tgt_active.next = bits

    @always_comb
    def pack():
        r = intbv(0)[len(svc_rate):]
        a = intbv(0)[len(accepted_work):]
        c = intbv(0)[len(completed_work):]
        ac = intbv(0)[len(active_cyc):]
        st = intbv(0)[len(stall_cyc):]
        rv = intbv(0)[n_tgt:]
        rv[:] = 0
        r[:] = 0
        a[:] = 0
        c[:] = 0
        ac[:] = 0
        st[:] = 0
        for t in range(n_tgt):
            r[:] = r | (rate[t] << (rate_w * t))
            a[:] = a | (acc_w[t] << (stat_w * t))
            c[:] = c | (cmp_w[t] << (stat_w * t))
            ac[:] = ac | (act_c[t] << (stat_w * t))
            st[:] = st | (stl_c[t] << (stat_w * t))
            if measured[t]:
                rv[t] = 1
        svc_rate.next = r
        rate_valid.next = rv
        accepted_work.next = a
        completed_work.next = c
        active_cyc.next = ac
        stall_cyc.next = st

    @always_seq(clk.posedge, reset=rst)
    def measure():
        s = intbv(0)[stat_w + 1:]        # one carry bit: saturate, never wrap
        d = intbv(0)[rate_w + 1:]
        retiring = False
        for t in range(n_tgt):
            if dispatch_fire and dispatch_target == t:
                s[:] = acc_w[t] + dispatch_work
                if s[stat_w]:
                    acc_w[t].next = STAT_MAX
                else:
                    acc_w[t].next = s[stat_w:]
            retiring = bool(retire_fire and retire_target == t)
            d[:] = win_done[t]
            if retiring:
                s[:] = cmp_w[t] + retire_work
                if s[stat_w]:
                    cmp_w[t].next = STAT_MAX
                else:
                    cmp_w[t].next = s[stat_w:]
                d[:] = win_done[t] + retire_work
                if d[rate_w]:
                    d[:] = RATE_MAX
            if active[t]:
                s[:] = act_c[t] + 1
                if not s[stat_w]:
                    act_c[t].next = s[stat_w:]
                if tgt_stall[t]:
                    s[:] = stl_c[t] + 1
                    if not s[stat_w]:
                        stl_c[t].next = s[stat_w:]
                if win_act[t] == LAST:
                    # Window full: publish the work retired in it, then restart.
                    rate[t].next = d[rate_w:]
                    measured[t].next = 1
                    win_act[t].next = 0
                    win_done[t].next = 0
                else:
                    win_act[t].next = win_act[t] + 1
                    win_done[t].next = d[rate_w:]
            else:
                win_done[t].next = d[rate_w:]

    return activity, pack, measure
