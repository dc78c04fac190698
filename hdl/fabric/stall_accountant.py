"""stall_accountant: price a collective's imbalance in accelerator-seconds.

The idle time of Section 6 is hardware that was bought, powered and scheduled,
waiting: every accelerator in the job waits for the whole of the lost time.

Ports (all widths from the signals):
    clk, rst                clock; synchronous reset (ResetSignal)
    ideal_time_ms           the collective's time at line rate
    actual_time_ms          its time at the slowest link's rate
    steps_per_run           training steps (collectives) in a run
    exposed_pct             per cent of the collective NOT hidden behind the backward
                            pass by bucketing (100 = nothing hidden; values above 100
                            are taken as 100)
    collective_done         one collective finished: count it and accumulate its loss
    lost_ms_per_collective (out) floor((actual - ideal) x exposed / 100), 0 if actual <= ideal
    accel_seconds_lost (out)  floor(lost_ms x ACCELERATORS / 1000)
    wall_hours_per_run (out)  floor(lost_ms x steps / 3.6e6)
    accel_hours_per_run (out) floor(lost_ms x steps x ACCELERATORS / 3.6e6)
    slowdown_x100 (out)       floor(100 x actual / ideal); 100 if ideal is 0
    c_collectives (out)       collectives counted (saturating)
    c_accel_seconds_total (out) sum of accel_seconds_lost over counted collectives
                            (saturating; choose its width as the SUM of the widths of
                            the loss and the collective count, e.g. 64 bits)
Every numeric output saturates at all ones if its value does not fit.

Parameters:
    ACCELERATORS  accelerators in the job (>= 1)

Fixed from the seed's simplifications: exposed_pct is an input (the seed hard-wires
it to 100, its honest worst case) and scales the loss, not the slowdown; every
product is formed at full width (the seed's 32-bit lost_ms x ACCELERATORS and
lost_ms x steps products wrap); accel_hours_per_run is computed from the exact
product (the seed multiplies the already-truncated wall hours by 1 024, which gives
91 136 where its own text quotes 91 705; exact: 91 704.9, floored here to 91 704); the running
total is as wide as the caller makes it and saturates instead of wrapping after
1.3 million collectives.  Not fixed: times are integer milliseconds.
"""
from myhdl import always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg


@block
def stall_accountant(clk, rst, ideal_time_ms, actual_time_ms, steps_per_run, exposed_pct,
                     collective_done, lost_ms_per_collective, accel_seconds_lost,
                     wall_hours_per_run, accel_hours_per_run, slowdown_x100, c_collectives,
                     c_accel_seconds_total, ACCELERATORS=pkg.PARTICIPANTS):
    name = "stall_accountant"
    if not isinstance(ACCELERATORS, int) or ACCELERATORS < 1:
        raise ValueError(f"{name}: ACCELERATORS must be a positive integer, got {ACCELERATORS!r}")
    MS_PER_SECOND = 1000
    MS_PER_HOUR = 3_600_000
    TW = max(len(ideal_time_ms), len(actual_time_ms))
    PW = len(exposed_pct)
    LW = len(lost_ms_per_collective)
    SW = len(steps_per_run)
    ACC_W = ACCELERATORS.bit_length()
    MAXES = {p: (1 << len(s)) - 1 for p, s in (
        ("lost", lost_ms_per_collective), ("accel", accel_seconds_lost), ("wall", wall_hours_per_run),
        ("hours", accel_hours_per_run), ("slow", slowdown_x100), ("cnt", c_collectives),
        ("total", c_accel_seconds_total))}
    LOST_MAX, ACCEL_MAX, WALL_MAX, HOURS_MAX = MAXES["lost"], MAXES["accel"], MAXES["wall"], MAXES["hours"]
    SLOW_MAX, CNT_MAX, TOTAL_MAX = MAXES["slow"], MAXES["cnt"], MAXES["total"]
    TOT_W = max(len(c_accel_seconds_total), len(accel_seconds_lost)) + 1

    @always_comb
    def price():
        diff = intbv(0)[TW + 1:]
        exp = intbv(0)[PW + 1:]
        scaled = intbv(0)[TW + PW + 2:]
        lost = intbv(0)[LW:]
        t1 = intbv(0)[LW + ACC_W:]
        t2 = intbv(0)[LW + SW:]
        t3 = intbv(0)[LW + SW + ACC_W:]
        sl = intbv(0)[TW + 8:]
        if actual_time_ms > ideal_time_ms:
            diff[:] = actual_time_ms - ideal_time_ms
        else:
            diff[:] = 0
        if exposed_pct > 100:
            exp[:] = 100
        else:
            exp[:] = exposed_pct
        scaled[:] = diff * exp
        scaled[:] = scaled // 100
        if scaled > LOST_MAX:
            lost[:] = LOST_MAX
        else:
            lost[:] = scaled
        lost_ms_per_collective.next = lost
        # Every accelerator in the job waits for the whole of the lost time.
        t1[:] = lost * ACCELERATORS
        t1[:] = t1 // MS_PER_SECOND
        if t1 > ACCEL_MAX:
            t1[:] = ACCEL_MAX
        accel_seconds_lost.next = t1
        t2[:] = lost * steps_per_run
        t3[:] = t2 * ACCELERATORS
        t2[:] = t2 // MS_PER_HOUR
        if t2 > WALL_MAX:
            t2[:] = WALL_MAX
        wall_hours_per_run.next = t2
        t3[:] = t3 // MS_PER_HOUR
        if t3 > HOURS_MAX:
            t3[:] = HOURS_MAX
        accel_hours_per_run.next = t3
        if ideal_time_ms == 0:
            slowdown_x100.next = 100
        else:
            sl[:] = actual_time_ms * 100
            sl[:] = sl // ideal_time_ms
            if sl > SLOW_MAX:
                sl[:] = SLOW_MAX
            slowdown_x100.next = sl

    @always_seq(clk.posedge, reset=rst)
    def accumulate():
        s = intbv(0)[TOT_W:]
        if collective_done:
            if c_collectives < CNT_MAX:
                c_collectives.next = c_collectives + 1
            s[:] = c_accel_seconds_total + accel_seconds_lost
            if s > TOTAL_MAX:
                s[:] = TOTAL_MAX
            c_accel_seconds_total.next = s

    return price, accumulate
