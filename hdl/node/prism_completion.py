"""PRISM completion tracking: contributions per 16-element range, completed ranges in order.

Phase 5 (front) of the SINGLE node.  The arithmetic reports every applied issue
group of each receive port (`p0_events`, `p1_events`): its first range and its number of
consecutive ranges (1 .. 4: a whole INT8 beat), so up to eight range
contributions per cycle; both ports may hit the same range in the same cycle.
A range is complete when it has received `op.expected` contributions (the number
of contributors in the operation's set: duplicates and foreign contributors
were already dropped at validation, so a count is enough).  Completed ranges
(up to eight per cycle) enter a FIFO (256 entries: every range completes once
per operation, so it cannot overflow) whose head is the read-out command
`cmd`.

A range both ports hit in the same cycle is counted +2 in one update; ranges
completing in the same cycle enter the FIFO port 0's first, in increasing
order, then port 1's (with one range per port, as under FP32_ARRIVAL, exactly
the order of a two-event tracker).  Counts live in
a 256 x 4-bit RAM; a per-row valid bit (cleared by `op.clear`) makes a row's
count read 0 until the row's first contribution of the new operation, so no
clearing pass is needed.

Ports (buses in hdl/node/prism_buses.py):
    clk, rst                clock; synchronous reset
    op                      ActiveOp: clear (pulse, a new operation starts) and expected (contributors
                            per range, 4 bits, 1..8) are read
    p0_events, p1_events    RangeEvents of port 0, 1: contributions applied to ranges row .. row + n - 1
                            (8-bit row, 3-bit n 1..4; the two ports' ranges may overlap)
    cmd                     out: ReadoutCmd, the oldest completed range not yet read out (ready: the
                            read-out takes it)
    ranges_done             out: ranges completed this cycle (4 bits, 0..8)
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv

ROWS = 256


@block
def prism_completion(clk, rst, op, p0_events, p1_events, cmd, ranges_done):
    if len(p0_events.row) != 8 or len(p1_events.row) != 8 or len(cmd.row) != 8:
        raise ValueError("prism_completion: rows are 8 bits")
    if len(p0_events.n) != 3 or len(p1_events.n) != 3:
        raise ValueError("prism_completion: p0_events.n/p1_events.n are 3 bits (1..4 ranges)")
    if len(op.expected) != 4 or len(ranges_done) != 4:
        raise ValueError("prism_completion: op.expected is 4 bits, ranges_done 4")
    counts = [Signal(intbv(0)[4:]) for _ in range(ROWS)]
    fifo = [Signal(intbv(0)[8:]) for _ in range(ROWS)]
    seen = Signal(intbv(0)[ROWS:])
    rp = Signal(modbv(0)[8:])
    wp = Signal(modbv(0)[8:])
    level = Signal(intbv(0, min=0, max=ROWS + 1))

    @always_comb
    def fifo_head():
        cmd.valid.next = level != 0
        cmd.row.next = fifo[rp]

    @always(clk.posedge)
    def count_contributions():
        sv = intbv(0)[ROWS:]
        c = intbv(0)[5:]
        d = modbv(0)[8:]
        r = modbv(0)[8:]
        w = modbv(0)[8:]
        lv = intbv(0, min=0, max=ROWS + 1)
        done = intbv(0)[4:]
        hit = bool(0)
        both = bool(0)
        if rst:
            # seen, rp and wp are not reset: no event comes before the next operation's op.clear,
            # which empties all three, and the FIFO's head is read only while level != 0
            level.next = 0
            ranges_done.next = 0
        else:
            sv[:] = seen
            w[:] = wp
            lv[:] = level
            done[:] = 0
            if op.clear:
                sv[:] = 0
                w[:] = 0
                lv[:] = 0
                rp.next = 0
            else:
                if cmd.ready and lv != 0:
                    rp.next = rp + 1
                    lv[:] = lv - 1
                # port 0's ranges in increasing order (a range port 1 also hits now counts twice),
                # then port 1's other ranges: completed ranges enter the FIFO in that order
                for j in range(8):
                    if j < 4:
                        # port 0's range j; port 1 may hit it in the same cycle
                        r[:] = p0_events.row + j
                        d[:] = r - p1_events.row
                        hit = p0_events.valid and j < p0_events.n
                        both = p1_events.valid and d < p1_events.n
                    else:
                        # port 1's range j - 4, unless port 0 has counted it above
                        r[:] = p1_events.row + (j - 4)
                        d[:] = r - p0_events.row
                        hit = p1_events.valid and j - 4 < p1_events.n and not (p0_events.valid and d < p0_events.n)
                        both = False
                    if hit:
                        c[:] = 0
                        if sv[r]:
                            c[:] = counts[r]
                        if both:
                            c[:] = c + 2
                        else:
                            c[:] = c + 1
                        counts[r].next = c[4:0]
                        sv[r] = 1
                        if c == op.expected:
                            fifo[w].next = r
                            w[:] = w + 1
                            lv[:] = lv + 1
                            done[:] = done + 1
            seen.next = sv
            wp.next = w
            level.next = lv
            ranges_done.next = done

    return fifo_head, count_contributions
