"""ring_allreduce_model: 2(N-1) steps of S/N bytes, each complete only when
its SLOWEST link has delivered.

A ring is a chain: step s needs the chunk its predecessor sent in step s-1,
so every step lasts as long as the slowest ring link needs and the 31 fast
links wait.  The model divides by the minimum link rate and never by the mean.

Units: 1 MB = 10^6 B, 1 kB = 10^3 B, Gb/s = 10^9 b/s, so kB x 8 / (Gb/s) is
microseconds and MB x 8 / (Gb/s) is milliseconds exactly.

Ports (W = len(slowest_gbps)):
    clk, rst            clock; synchronous reset (ResetSignal)
    start               begin a collective (restarts one in progress)
    step_tick           one ring step completes (while running)
    link_gbps           MEMBERS lanes of W bits, this leaf's ring links (MEMBERS = len // W)
    slowest_gbps (out)  minimum link rate                                   (W bits)
    pacing_member (out) lowest index of a slowest link (a LOCAL index)
    step_bytes_kb (out) floor(S_MB * 1000 / N): bytes per step
    steps_total (out)   2 (N - 1)
    step_time_us (out)  floor(step_bytes_kb * 8 / slowest); all ones if slowest is 0
    collective_time_ms (out) floor(S_MB * 8 * steps / (N * slowest)), computed from
                        the exact product, not from the rounded step time; all ones
                        if slowest is 0
    ideal_time_ms (out) the same with every link at RATE
    slowdown_x100 (out) floor(100 * RATE / slowest) = 100 x collective / ideal, exact
                        (>= 100 whenever no link exceeds RATE); all ones if slowest is 0
    running (out)       a collective is in progress
    done (out)          one-cycle pulse: the last step completed
    c_steps_done (out)  steps completed in the current (or last) collective
Every numeric output saturates at all ones if its value does not fit.

Parameters:
    PARTICIPANTS  N, the ring's participant count (>= 2)
    S_MB          gradient buffer in MB (>= 1)
    RATE          line rate in Gb/s (>= 1)

Fixed from the seed's simplifications: the seed computes kB as MB x 1024 but
converts kB to microseconds as if decimal, so its own 1.279 s ideal
(S = 8 GB = 8 000 MB, N = 1 024) is not what its RTL computes (1 340 ms for
S_MB = 8 192); here units are decimal throughout and S_MB = 8 000 gives 1 278 ms.
Times are computed from the exact products (the seed truncates the step time
and then multiplies it by 2 046), and a step advances on step_tick rather than
on every clock.  Not fixed: per-step synchronisation latency is not modelled
and link rates are taken as constant for the collective.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg


@block
def ring_allreduce_model(clk, rst, start, step_tick, link_gbps, slowest_gbps, pacing_member,
                         step_bytes_kb, steps_total, step_time_us, collective_time_ms,
                         ideal_time_ms, slowdown_x100, running, done, c_steps_done,
                         PARTICIPANTS=pkg.PARTICIPANTS, S_MB=8000, RATE=pkg.RATE_GBPS):
    name = "ring_allreduce_model"
    if PARTICIPANTS < 2 or S_MB < 1 or RATE < 1:
        raise ValueError(f"{name}: need PARTICIPANTS >= 2, S_MB >= 1, RATE >= 1 "
                         f"(got {PARTICIPANTS}, {S_MB}, {RATE})")
    W = len(slowest_gbps)
    MEMBERS = pkg.lanes(link_gbps, W, name, "link_gbps")
    pkg.require_index_width(pacing_member, MEMBERS, name, "pacing_member")
    N = PARTICIPANTS
    STEPS = 2 * (N - 1)
    STEP_KB = S_MB * 1000 // N
    TIME_NUM = S_MB * 8 * 2 * (N - 1)          # ms x Gb/s x N over the whole collective
    IDEAL_MS = TIME_NUM // (N * RATE)
    STEP_NUM = STEP_KB * 8
    SLOW_NUM = RATE * 100
    for port, sig, v in (("steps_total", steps_total, STEPS), ("step_bytes_kb", step_bytes_kb, STEP_KB),
                         ("ideal_time_ms", ideal_time_ms, IDEAL_MS),
                         ("c_steps_done", c_steps_done, STEPS)):
        if v >= (1 << len(sig)):
            raise ValueError(f"{name}: {port} is {len(sig)} bits, too narrow for {v}")
    BUS = len(link_gbps)
    DEN_W = W + N.bit_length() + 1
    NUM_W = max(TIME_NUM.bit_length(), STEP_NUM.bit_length(), SLOW_NUM.bit_length()) + 1
    IDX_W = len(pacing_member)
    LANE_MAX = (1 << W) - 1
    STEP_T_MAX = (1 << len(step_time_us)) - 1
    COLL_T_MAX = (1 << len(collective_time_ms)) - 1
    SLOWDOWN_MAX = (1 << len(slowdown_x100)) - 1

    @always_comb
    def model():
        rest = intbv(0)[BUS:]
        lane = intbv(0)[W:]
        lo = intbv(0)[W:]
        idx = intbv(0)[IDX_W:]
        den = intbv(0)[DEN_W:]
        q = intbv(0)[NUM_W:]
        rest[:] = link_gbps
        lo[:] = LANE_MAX
        idx[:] = 0
        for i in range(MEMBERS):
            lane[:] = rest[W:0]
            rest[:] = rest >> W
            if lane < lo:
                lo[:] = lane
                idx[:] = i
        slowest_gbps.next = lo
        pacing_member.next = idx
        steps_total.next = STEPS
        step_bytes_kb.next = STEP_KB
        ideal_time_ms.next = IDEAL_MS
        # A step completes when the SLOWEST link has delivered its chunk.
        if lo == 0:
            step_time_us.next = STEP_T_MAX
        else:
            q[:] = STEP_NUM // lo
            if q > STEP_T_MAX:
                q[:] = STEP_T_MAX
            step_time_us.next = q
        if lo == 0:
            collective_time_ms.next = COLL_T_MAX
            slowdown_x100.next = SLOWDOWN_MAX
        else:
            den[:] = lo * N
            q[:] = TIME_NUM // den
            if q > COLL_T_MAX:
                q[:] = COLL_T_MAX
            collective_time_ms.next = q
            q[:] = SLOW_NUM // lo
            if q > SLOWDOWN_MAX:
                q[:] = SLOWDOWN_MAX
            slowdown_x100.next = q

    @always_seq(clk.posedge, reset=rst)
    def steps():
        done.next = 0
        if start:
            running.next = 1
            c_steps_done.next = 0
        elif running and step_tick:
            c_steps_done.next = c_steps_done + 1
            if c_steps_done + 1 >= STEPS:
                running.next = 0
                done.next = 1

    return model, steps
