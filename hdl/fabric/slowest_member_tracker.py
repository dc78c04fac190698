"""slowest_member_tracker: combine per-member rates with the collective's
operator (MINIMUM) and report how wrong the usual operators would be.

A collective's rate is the minimum over its members, not the sum and not the
mean; the block computes all three so the gap is a measured quantity.

Ports (widths come from the signals passed in; W = len(min_gbps)):
    clk, rst                clock; synchronous reset (ResetSignal)
    sample                  count this cycle as a sample (stability counters)
    member_gbps             MEMBERS lanes of W bits, member i in bits [W*(i+1)-1 : W*i];
                            MEMBERS = len(member_gbps) // W (must be whole)
    min_gbps (out)          minimum over members                       (W bits)
    mean_gbps (out)         floor(sum / MEMBERS)                        (W bits)
    max_gbps (out)          maximum over members                        (W bits)
    collective_gbps (out)   the collective's rate: == min_gbps, always  (W bits)
    slowest_member (out)    lowest index holding the minimum (must index MEMBERS)
    mean_over_min_x10 (out) floor(10 * mean / min); all ones when min is 0 or the
                            ratio does not fit (saturates, never wraps)
    mean_would_overstate (out) mean > min: quoting the mean would overstate the rate
    reduction_op (out)      the operator collective_gbps is computed with
                            (collective_pkg.RED_*, 2 bits); always RED_MIN
    c_samples (out)         samples since reset (saturating)
    c_slowest_unchanged (out) consecutive samples with the same slowest member
                            (saturating; a pinned hash collision reads as a long run)

The outputs other than the counters are combinational in member_gbps, as in
the seed, so a checker sampling at the clock edge sees them consistent with
the members of the same cycle.

Fixed from the seed's simplifications: the sum is carried in W + clog2(MEMBERS)
bits (the seed's 32-bit `total` is only enough for 16-bit lanes and at most
65 536 members); the ratio and the counters saturate instead of wrapping.
Not fixed: a slowest member alternating between two indices still reads as
unstable; the minimum is this leaf's only (the job's minimum is imported by
collective_telemetry).

No parameters: every size comes from the ports.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg


@block
def slowest_member_tracker(clk, rst, sample, member_gbps, min_gbps, mean_gbps, max_gbps,
                           collective_gbps, slowest_member, mean_over_min_x10,
                           mean_would_overstate, reduction_op, c_samples, c_slowest_unchanged):
    name = "slowest_member_tracker"
    W = len(min_gbps)
    MEMBERS = pkg.lanes(member_gbps, W, name, "member_gbps")
    for port, sig in (("mean_gbps", mean_gbps), ("max_gbps", max_gbps),
                      ("collective_gbps", collective_gbps)):
        pkg.require_width(sig, W, name, port)
    pkg.require_index_width(slowest_member, MEMBERS, name, "slowest_member")
    pkg.require_width(reduction_op, pkg.REDUCTION_BITS, name, "reduction_op")
    BUS = len(member_gbps)
    SUM_W = W + pkg.clog2(MEMBERS) + 1
    RATIO_W = W + 5                      # 10 * mean fits in W + 4 bits
    LANE_MAX = (1 << W) - 1
    RATIO_MAX = (1 << len(mean_over_min_x10)) - 1
    SAMPLES_MAX = (1 << len(c_samples)) - 1
    UNCHANGED_MAX = (1 << len(c_slowest_unchanged)) - 1
    IDX_W = len(slowest_member)
    RED_MIN = pkg.RED_MIN

    slowest = Signal(intbv(0)[IDX_W:])
    prev_slowest = Signal(intbv(0)[IDX_W:])

    @always_comb
    def reduce_members():
        rest = intbv(0)[BUS:]
        lane = intbv(0)[W:]
        lo = intbv(0)[W:]
        hi = intbv(0)[W:]
        total = intbv(0)[SUM_W:]
        mean = intbv(0)[W:]
        idx = intbv(0)[IDX_W:]
        num = intbv(0)[RATIO_W:]
        ratio = intbv(0)[RATIO_W:]
        rest[:] = member_gbps
        lo[:] = LANE_MAX
        hi[:] = 0
        total[:] = 0
        idx[:] = 0
        for i in range(MEMBERS):
            lane[:] = rest[W:0]
            rest[:] = rest >> W
            total[:] = total + lane
            if lane < lo:
                lo[:] = lane
                idx[:] = i
            if lane > hi:
                hi[:] = lane
        mean[:] = total // MEMBERS
        min_gbps.next = lo
        max_gbps.next = hi
        slowest.next = idx
        slowest_member.next = idx
        mean_gbps.next = mean
        # The collective's rate is the minimum. Not the sum, not the mean.
        collective_gbps.next = lo
        reduction_op.next = RED_MIN
        if lo == 0:
            mean_over_min_x10.next = RATIO_MAX
        else:
            num[:] = mean * 10
            ratio[:] = num // lo
            if ratio > RATIO_MAX:
                ratio[:] = RATIO_MAX
            mean_over_min_x10.next = ratio
        mean_would_overstate.next = mean > lo

    @always_seq(clk.posedge, reset=rst)
    def count():
        if sample:
            if c_samples < SAMPLES_MAX:
                c_samples.next = c_samples + 1
            # A pinned ECMP assignment keeps the SAME member slowest for the job's life.
            if slowest == prev_slowest:
                if c_slowest_unchanged < UNCHANGED_MAX:
                    c_slowest_unchanged.next = c_slowest_unchanged + 1
            else:
                c_slowest_unchanged.next = 0
            prev_slowest.next = slowest

    return reduce_members, count
