"""striping_controller: split each ring link into STRIPES connections.

A ring link's bandwidth is then the SUM of its stripes' shares (they run in
parallel) while the collective's rate is still the MINIMUM over ring links
(they run in series) -- two reductions, both correct, at different levels.
The hazard is reassembly, not reordering: each stripe carries a disjoint,
individually ordered byte range, and the receiver holds the gap.

Ports (W = len(collective_gbps); widths from the signals):
    clk, rst            clock; synchronous reset (ResetSignal)
    chunk_start         a chunk is issued (counted)
    chunk_bytes         bytes in the chunk
    stripe_gbps         MEMBERS x STRIPES lanes of W bits; stripe s of member m is lane
                        m*STRIPES + s.  STRIPES = len(stripe_gbps) // len(member_gbps)
    stripe_bytes (out)  ceil(chunk_bytes / STRIPES): the stripes together cover the chunk
    member_gbps (out)   MEMBERS lanes of W bits: each ring link's SUM of stripes
                        (saturating at all ones)
    collective_gbps (out) MINIMUM over members                                (W bits)
    pacing_member (out) lowest index of a slowest member
    reassembly_required (out) STRIPES > 1
    reorder_depth_bytes (out) stripe_bytes x (STRIPES - 1): one stripe lagging
    connections_total (out) MEMBERS x STRIPES
    c_chunks (out)      chunks issued (saturating)

No parameters: MEMBERS and STRIPES come from the port widths.

Fixed from the seed's simplifications: a member's sum saturates instead of being
truncated to 16 bits; stripe_bytes rounds up so the stripes cover a chunk that
STRIPES does not divide (the seed drops the remainder); STRIPES comes from the
port widths.  Not fixed: stripe shares are inputs (the block consumes the
assignment's result rather than modelling it); the depth assumes one lagging
stripe; connection set-up cost is not modelled.
"""
from myhdl import always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg


@block
def striping_controller(clk, rst, chunk_start, chunk_bytes, stripe_gbps, stripe_bytes, member_gbps,
                        collective_gbps, pacing_member, reassembly_required, reorder_depth_bytes,
                        connections_total, c_chunks):
    name = "striping_controller"
    W = len(collective_gbps)
    MEMBERS = pkg.lanes(member_gbps, W, name, "member_gbps")
    STRIPES = pkg.lanes(stripe_gbps, len(member_gbps), name, "stripe_gbps (whole MEMBERS x W groups)")
    pkg.require_index_width(pacing_member, MEMBERS, name, "pacing_member")
    if MEMBERS * STRIPES >= (1 << len(connections_total)):
        raise ValueError(f"{name}: connections_total is too narrow for {MEMBERS * STRIPES}")
    CONNS = MEMBERS * STRIPES
    GAPS = STRIPES - 1
    REASSEMBLY = STRIPES > 1
    SBUS, MBUS = len(stripe_gbps), len(member_gbps)
    TOP = MBUS - W
    SUM_W = W + pkg.clog2(STRIPES) + 1
    LANE_MAX = (1 << W) - 1
    CW = len(chunk_bytes)
    SB_MAX = (1 << len(stripe_bytes)) - 1
    DEPTH_MAX = (1 << len(reorder_depth_bytes)) - 1
    DW = CW + STRIPES.bit_length() + 2
    CHUNKS_MAX = (1 << len(c_chunks)) - 1
    IDX_W = len(pacing_member)

    @always_comb
    def combine():
        rest = intbv(0)[SBUS:]
        lane = intbv(0)[W:]
        acc = intbv(0)[SUM_W:]
        lw = intbv(0)[MBUS:]
        out = intbv(0)[MBUS:]
        lo = intbv(0)[W:]
        idx = intbv(0)[IDX_W:]
        sb = intbv(0)[DW:]
        d = intbv(0)[DW:]
        rest[:] = stripe_gbps
        out[:] = 0
        lo[:] = LANE_MAX
        idx[:] = 0
        for m in range(MEMBERS):
            # A ring link's bandwidth is the SUM of its stripes: they run in parallel.
            acc[:] = 0
            for s in range(STRIPES):
                acc[:] = acc + rest[W:0]
                rest[:] = rest >> W
            if acc > LANE_MAX:
                lane[:] = LANE_MAX
            else:
                lane[:] = acc
            lw[:] = lane
            out[:] = (out >> W) | (lw << TOP)
            # The collective's rate is the MINIMUM over ring links: they run in series.
            if lane < lo:
                lo[:] = lane
                idx[:] = m
        member_gbps.next = out
        collective_gbps.next = lo
        pacing_member.next = idx
        sb[:] = chunk_bytes + (STRIPES - 1)
        sb[:] = sb // STRIPES
        if sb > SB_MAX:
            stripe_bytes.next = SB_MAX
        else:
            stripe_bytes.next = sb
        d[:] = sb * GAPS
        if d > DEPTH_MAX:
            d[:] = DEPTH_MAX
        reorder_depth_bytes.next = d
        reassembly_required.next = REASSEMBLY
        connections_total.next = CONNS

    @always_seq(clk.posedge, reset=rst)
    def count():
        if chunk_start and c_chunks < CHUNKS_MAX:
            c_chunks.next = c_chunks + 1

    return combine, count
