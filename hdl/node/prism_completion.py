"""PRISM completion tracking: contributions per 16-element range, completed ranges in order.

Phase 5 (front) of the SINGLE node.  The arithmetic reports every applied issue
group of each receive port (`e0_*`, `e1_*`): its first range and its number of
consecutive ranges (1 .. 4: a whole INT8 beat), so up to eight range
contributions per cycle; both ports may hit the same range in the same cycle.
A range is complete when it has received `expected` contributions (the number
of contributors in the operation's set: duplicates and foreign contributors
were already dropped at validation, so a count is enough).  Completed ranges
(up to eight per cycle) enter a FIFO (256 entries: every range completes once
per operation, so it cannot overflow) whose head is the read-out command
`cmd_*`.

A range both ports hit in the same cycle is counted +2 in one update; ranges
completing in the same cycle enter the FIFO port 0's first, in increasing
order, then port 1's (with one range per port, as under FP32_ARRIVAL, exactly
the order of a two-event tracker).  Counts live in
a 256 x 4-bit RAM; a per-row valid bit (cleared by `commit`) makes a row's
count read 0 until the row's first contribution of the new operation, so no
clearing pass is needed.

Ports (widths from the signals):
    clk, rst                clock; synchronous reset
    commit                  pulse: a new operation starts
    expected                contributors per range (4 bits, 1..8)
    e0_valid, e0_row, e0_n  port 0 contributions applied: ranges e0_row .. e0_row + e0_n - 1
                            (8-bit row, 3-bit count 1..4)
    e1_valid, e1_row, e1_n  port 1, the same (may overlap port 0's ranges)
    cmd_valid, cmd_row      out: the oldest completed range not yet read out
    cmd_ready               the read-out takes it
    ranges_done             out: ranges completed this cycle (4 bits, 0..8)
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv

ROWS = 256


@block
def prism_completion(clk, rst, commit, expected, e0_valid, e0_row, e0_n, e1_valid, e1_row, e1_n, cmd_valid, cmd_row,
                     cmd_ready, ranges_done):
    if len(e0_row) != 8 or len(e1_row) != 8 or len(cmd_row) != 8:
        raise ValueError("prism_completion: rows are 8 bits")
    if len(e0_n) != 3 or len(e1_n) != 3:
        raise ValueError("prism_completion: e0_n/e1_n are 3 bits (1..4 ranges)")
    if len(expected) != 4 or len(ranges_done) != 4:
        raise ValueError("prism_completion: expected is 4 bits, ranges_done 4")
    counts = [Signal(intbv(0)[4:]) for _ in range(ROWS)]
    fifo = [Signal(intbv(0)[8:]) for _ in range(ROWS)]
    seen = Signal(intbv(0)[ROWS:])
    rp = Signal(modbv(0)[8:])
    wp = Signal(modbv(0)[8:])
    level = Signal(intbv(0, min=0, max=ROWS + 1))

    @always_comb
    def head():
        cmd_valid.next = level != 0
        cmd_row.next = fifo[rp]

    @always(clk.posedge)
    def step():
        sv = intbv(0)[ROWS:]
        c0 = intbv(0)[5:]
        c1 = intbv(0)[5:]
        d0 = modbv(0)[8:]
        d1 = modbv(0)[8:]
        r0 = modbv(0)[8:]
        r1 = modbv(0)[8:]
        w = modbv(0)[8:]
        lv = intbv(0, min=0, max=ROWS + 1)
        done = intbv(0)[4:]
        if rst:
            seen.next = 0
            rp.next = 0
            wp.next = 0
            level.next = 0
            ranges_done.next = 0
        else:
            sv[:] = seen
            w[:] = wp
            lv[:] = level
            done[:] = 0
            if commit:
                sv[:] = 0
                w[:] = 0
                lv[:] = 0
                rp.next = 0
            else:
                if cmd_ready and lv != 0:
                    rp.next = rp + 1
                    lv[:] = lv - 1
                # port 0's ranges in increasing order (a range port 1 also hits now counts twice),
                # then port 1's other ranges: completed ranges enter the FIFO in that order
                for j in range(4):
                    r0[:] = e0_row + j
                    d1[:] = r0 - e1_row
                    if e0_valid and j < e0_n:
                        c0[:] = 0
                        if sv[r0]:
                            c0[:] = counts[r0]
                        if e1_valid and d1 < e1_n:
                            c0[:] = c0 + 2
                        else:
                            c0[:] = c0 + 1
                        counts[r0].next = c0[4:0]
                        sv[r0] = 1
                        if c0 == expected:
                            fifo[w].next = r0
                            w[:] = w + 1
                            lv[:] = lv + 1
                            done[:] = done + 1
                for j in range(4):
                    r1[:] = e1_row + j
                    d0[:] = r1 - e0_row
                    if e1_valid and j < e1_n and not (e0_valid and d0 < e0_n):
                        c1[:] = 0
                        if sv[r1]:
                            c1[:] = counts[r1]
                        c1[:] = c1 + 1
                        counts[r1].next = c1[4:0]
                        sv[r1] = 1
                        if c1 == expected:
                            fifo[w].next = r1
                            w[:] = w + 1
                            lv[:] = lv + 1
                            done[:] = done + 1
            seen.next = sv
            wp.next = w
            level.next = lv
            ranges_done.next = done

    return head, step
