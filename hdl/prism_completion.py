"""PRISM completion tracking: contributions per 16-element range, completed ranges in order.

Phase 5 (front) of the SINGLE node.  The arithmetic reports every applied range
contribution (`e0_*`, `e1_*`: up to two per cycle, possibly the same range).
A range is complete when it has received `expected` contributions (the number
of contributors in the operation's set: duplicates and foreign contributors
were already dropped at validation, so a count is enough).  Completed ranges
enter a FIFO (256 entries: every range completes once per operation, so it
cannot overflow) whose head is the read-out command `cmd_*`.

Counts live in a 256 x 4-bit RAM; a per-row valid bit (cleared by `commit`)
makes a row's count read 0 until the row's first contribution of the new
operation, so no clearing pass is needed.

Ports (widths from the signals):
    clk, rst                clock; synchronous reset
    commit                  pulse: a new operation starts
    expected                contributors per range (4 bits, 1..8)
    e0_valid, e0_row        a range contribution has been applied (8-bit row)
    e1_valid, e1_row        a second one in the same cycle
    cmd_valid, cmd_row      out: the oldest completed range not yet read out
    cmd_ready               the read-out takes it
    ranges_done             out: ranges completed this cycle (2 bits, 0..2)
"""
from myhdl import Signal, always, always_comb, block, intbv, modbv

ROWS = 256


@block
def prism_completion(clk, rst, commit, expected, e0_valid, e0_row, e1_valid, e1_row, cmd_valid, cmd_row, cmd_ready,
                     ranges_done):
    if len(e0_row) != 8 or len(e1_row) != 8 or len(cmd_row) != 8:
        raise ValueError("prism_completion: rows are 8 bits")
    if len(expected) != 4 or len(ranges_done) != 2:
        raise ValueError("prism_completion: expected is 4 bits, ranges_done 2")
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
        w = modbv(0)[8:]
        lv = intbv(0, min=0, max=ROWS + 1)
        done = intbv(0)[2:]
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
                c0[:] = 0
                c1[:] = 0
                if sv[e0_row]:
                    c0[:] = counts[e0_row]
                if sv[e1_row]:
                    c1[:] = counts[e1_row]
                if e0_valid and e1_valid and e0_row == e1_row:
                    c0[:] = c0 + 2
                    counts[e0_row].next = c0[4:0]
                    sv[e0_row] = 1
                    if c0 == expected:
                        fifo[w].next = e0_row
                        w[:] = w + 1
                        lv[:] = lv + 1
                        done[:] = 1
                else:
                    if e0_valid:
                        c0[:] = c0 + 1
                        counts[e0_row].next = c0[4:0]
                        sv[e0_row] = 1
                        if c0 == expected:
                            fifo[w].next = e0_row
                            w[:] = w + 1
                            lv[:] = lv + 1
                            done[:] = done + 1
                    if e1_valid:
                        c1[:] = c1 + 1
                        counts[e1_row].next = c1[4:0]
                        sv[e1_row] = 1
                        if c1 == expected:
                            fifo[w].next = e1_row
                            w[:] = w + 1
                            lv[:] = lv + 1
                            done[:] = done + 1
            seen.next = sv
            wp.next = w
            level.next = lv
            ranges_done.next = done

    return head, step
