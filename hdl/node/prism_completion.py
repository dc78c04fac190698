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
the order of a two-event tracker).

Structure (every path 8 LUT levels or fewer, `prism synth prism_completion`, and
its ports cheap for the blocks around it: every output a register, every input
but cmd.ready into a register first):

* The events and op.expected are registered as they come (`e0_*`, `e1_*`,
  `expected`): they reach the node through its choice of the active policy's
  store, a LUT level the counts cannot afford.  An event in the cycle of a
  reset or an op.clear is dropped, as the counts drop it.
* Counts are kept per row as bit planes (`cnt0` .. `cnt3`: bit k is row k's count
  bit), so the eight updates of a cycle are one bitwise update of all 256 rows:
  a row's increment (0, 1 or 2) is decoded from the two events and added to its
  own count, with no read at a computed index.  A per-row valid bit (`seen`,
  cleared by `op.clear`) makes a row's count read 0 until the row's first
  contribution of the new operation.
* Two flags per row (`need1`, `need2`: count + 1, count + 2 equals op.expected,
  set when the row is updated) say whether one or two more contributions
  complete it, so whether a hit completes its row is one flag read per hit, at
  the event's first row in the flags rotated by the hit's offset (no adder
  before the read).  `op.expected` is constant between two op.clear pulses
  (prism_control changes it only at a COMMIT, which pulses op.clear); a row not
  seen since the clear compares op.expected itself.
* The completion flags and rows of a cycle's eight hits are registered
  (`pend`, `prows`; their number is `ranges_done`) and written into the FIFO at
  the next edge.  The FIFO is eight banks by a slot's low three bits
  (`fifo0` .. `fifo7`, 32 entries each, LUT RAM): a cycle's completions take
  at most eight consecutive slots, one per bank, so each bank takes at most
  one of them, at its own entry pointer (`wa`); which one is decided by the
  bank of the next free slot (`wp`) and the number of completions before it.
  Until then the FIFO's head is read from the pending entries.
* `cmd` is a register with a spare behind it.  The FIFO gives its head
  whenever the spare is free; cmd takes the spare, or the FIFO's head, when it
  is empty or taken, and the spare takes the FIFO's head otherwise.  So
  cmd.ready (the read-out's ready, through prism_arrival_banks' grant) only
  moves these two registers, and cmd shows the ranges on the same cycles as
  one register loaded from the FIFO whenever it is empty or taken.  The
  read-out keeps cmd.ready high while cmd is empty, so the ready is that
  "empty or taken" as it is: the two registers' enable, with no LUT of its own.

Latency: a range completed by the events of cycle t is counted in
`ranges_done` after edge t + 1 and is at the head of `cmd` after edge t + 2
at the earliest.

Ports (buses in hdl/node/prism_buses.py):
    clk, rst                clock; synchronous reset
    op                      ActiveOp: clear (pulse, a new operation starts) and expected (contributors
                            per range, 4 bits, 1..8) are read
    p0_events, p1_events    RangeEvents of port 0, 1: contributions applied to ranges row .. row + n - 1
                            (8-bit row, 3-bit n 1..4; the two ports' ranges may overlap)
    cmd                     out: ReadoutCmd, the oldest completed range not yet read out (ready: the
                            read-out takes it; it must be high while valid is low, as prism_arrival_banks
                            keeps it)
    ranges_done             out: ranges completed this cycle (4 bits, 0..8)
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, intbv, modbv

ROWS = 256
BANKS = 8                       # FIFO banks: slot s is entry s >> 3 of bank s & 7
BANK_ROWS = ROWS // BANKS


@block
def prism_completion(clk, rst, op, p0_events, p1_events, cmd, ranges_done):
    if len(p0_events.row) != 8 or len(p1_events.row) != 8 or len(cmd.row) != 8:
        raise ValueError("prism_completion: rows are 8 bits")
    if len(p0_events.n) != 3 or len(p1_events.n) != 3:
        raise ValueError("prism_completion: p0_events.n/p1_events.n are 3 bits (1..4 ranges)")
    if len(op.expected) != 4 or len(ranges_done) != 4:
        raise ValueError("prism_completion: op.expected is 4 bits, ranges_done 4")
    seen = Signal(intbv(0)[ROWS:])
    cnt0, cnt1, cnt2, cnt3 = [Signal(intbv(0)[ROWS:]) for _ in range(4)]      # count bit planes
    need1 = Signal(intbv(0)[ROWS:])         # row k: count + 1 == op.expected
    need2 = Signal(intbv(0)[ROWS:])         # row k: count + 2 == op.expected
    pend = Signal(intbv(0)[8:])             # hit j (port 0's 0..3, port 1's 4..7) completed its row
    prows = Signal(intbv(0)[64:])           # hit j's row at [8j + 7 : 8j]
    fifo0, fifo1, fifo2, fifo3, fifo4, fifo5, fifo6, fifo7 = (
        [Signal(intbv(0)[8:]) for _ in range(BANK_ROWS)] for _ in range(BANKS))
    heads = [Signal(intbv(0)[8:]) for _ in range(BANKS)]     # each bank's entry at the read pointer
    head_rows = ConcatSignal(*reversed(heads))
    rp = Signal(modbv(0)[8:])
    wp = Signal(modbv(0)[3:])               # the bank of the next free slot
    level = Signal(intbv(0, min=0, max=ROWS + 1))       # entries in the banks (the pending ones not counted)
    bank_we = Signal(intbv(0)[BANKS:])      # bank c takes a pending completion at the next edge
    bank_wd = Signal(intbv(0)[8 * BANKS:])  # bank c's at [8c + 7 : 8c]
    fifo_valid = Signal(bool(0))            # the FIFO (banks and pending entries) holds a range ...
    fifo_row = Signal(intbv(0)[8:])         # ... this one at its head
    pop = Signal(bool(0))                   # the head leaves the FIFO (into cmd or the spare) at the next edge
    spare_valid = Signal(bool(0))           # a range taken from the FIFO while cmd waited, next in line
    spare_row = Signal(intbv(0)[8:])
    # the events and op.expected as registers: the events come through the node's choice of the active
    # policy's store, a LUT level its flags and counts cannot afford
    e0_valid, e1_valid = Signal(bool(0)), Signal(bool(0))
    e0_row, e1_row = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    e0_n, e1_n = Signal(intbv(0)[3:]), Signal(intbv(0)[3:])
    expected = Signal(intbv(0)[4:])

    @block
    def bank(c, mem, head):
        """Bank c: takes the pending completion whose slot falls in it; its entry at the read pointer."""
        wa = Signal(modbv(0)[5:])       # the entry its next completion takes (slot 8 wa + c)

        @always(clk.posedge)
        def write_bank():
            # in the cycle of an op.clear or a reset too: the FIFO holds what a FIFO written at the
            # completing edge would
            if bank_we[c]:
                mem[wa].next = bank_wd[8 * c + 8:8 * c]
            if op.clear and not rst:
                wa.next = 0
            elif bank_we[c]:
                wa.next = wa + 1

        @always_comb
        def read_bank():
            head.next = mem[rp[8:3]]
        return write_bank, read_bank

    @always_comb
    def place_completions():
        # the i-th pending completion in order takes the slot after the completions before it: oh is
        # their number one-hot, b the slot's bank (oh rotated by wp)
        oh = modbv(0)[8:]
        b = modbv(0)[8:]
        we = intbv(0)[8:]
        wd = intbv(0)[64:]
        oh[:] = 1
        for i in range(8):
            if pend[i]:
                b[:] = (oh << wp) | (oh >> (8 - wp))
                we[:] = we | b
                for c in range(BANKS):
                    if b[c]:
                        wd[:] = wd | (((prows >> (8 * i)) & 0xFF) << (8 * c))
                oh[:] = oh << 1
        bank_we.next = we
        bank_wd.next = wd

    banks = [bank(c, mem, heads[c]) for c, mem in enumerate((fifo0, fifo1, fifo2, fifo3, fifo4, fifo5, fifo6, fifo7))]

    @always_comb
    def fifo_head():
        r = intbv(0)[8:]
        found = bool(0)
        fifo_valid.next = level != 0 or ranges_done != 0
        r[:] = 0
        if level != 0 or ranges_done == 0:
            # the oldest entry in the banks (or, with none waiting, what the read pointer shows)
            for c in range(BANKS):
                if rp[3:0] == c:
                    r[:] = (head_rows >> (8 * c)) & 0xFF
        else:
            # the banks are empty: the first range completed at the last edge
            for i in range(8):
                if pend[i] and not found:
                    r[:] = (prows >> (8 * i)) & 0xFF
                    found = True
        fifo_row.next = r

    @always_comb
    def head_taken():
        # from registers only: the FIFO gives its head whenever the spare is free, whether or not the
        # read-out takes cmd this cycle
        pop.next = fifo_valid and not spare_valid

    @always(clk.posedge)
    def present_head():
        # cmd is a register with a spare behind it, so the read-out's ready (the deepest input: it comes
        # through prism_arrival_banks' grant) only moves the two and reaches no pointer: taken (or
        # empty), cmd takes the spare, else what the FIFO gives now; kept, what the FIFO gives waits
        # in the spare.  cmd shows the ranges on the same cycles as one register loaded from the FIFO
        # when empty or taken would.  The rows are not reset (their valid bits are), so ready reaches
        # each register through one LUT at most (cmd.ready is high while cmd is empty: "empty or taken"
        # is cmd.ready).
        if rst or op.clear:
            cmd.valid.next = 0
            spare_valid.next = 0
        elif cmd.ready:
            cmd.valid.next = spare_valid or pop
            spare_valid.next = 0
        elif pop:
            spare_valid.next = 1
        if cmd.ready:
            if spare_valid:
                cmd.row.next = spare_row
            else:
                cmd.row.next = fifo_row
        if pop:
            spare_row.next = fifo_row

    @always(clk.posedge)
    def move_pointers():
        # seen, rp, wp and the banks' entry pointers are not reset: no event comes before the next
        # operation's op.clear, which empties them all, and the FIFO's head is read only while it is
        # valid; the pending completions are written (and wp moved past them) in the cycle of a
        # reset too
        if rst:
            level.next = 0
            wp.next = wp + ranges_done
        elif op.clear:
            level.next = 0
            wp.next = 0
            rp.next = 0
        else:
            wp.next = wp + ranges_done
            if pop:
                rp.next = rp + 1
                level.next = level + ranges_done - 1
            else:
                level.next = level + ranges_done

    @always(clk.posedge)
    def take_events():
        # an event in the cycle of a reset or an op.clear is dropped, as the counts below drop it
        if rst or op.clear:
            e0_valid.next = 0
            e1_valid.next = 0
        else:
            e0_valid.next = p0_events.valid
            e1_valid.next = p1_events.valid
        e0_row.next = p0_events.row
        e0_n.next = p0_events.n
        e1_row.next = p1_events.row
        e1_n.next = p1_events.n
        expected.next = op.expected

    @always(clk.posedge)
    def count_contributions():
        one = modbv(0)[ROWS:]
        oh = modbv(0)[ROWS:]
        h0 = modbv(0)[ROWS:]
        h1 = modbv(0)[ROWS:]
        hit = intbv(0)[ROWS:]
        keep = intbv(0)[ROWS:]
        i0 = intbv(0)[ROWS:]
        i1 = intbv(0)[ROWS:]
        k = intbv(0)[ROWS:]
        c0 = intbv(0)[ROWS:]
        c1 = intbv(0)[ROWS:]
        c2 = intbv(0)[ROWS:]
        c3 = intbv(0)[ROWS:]
        s0 = intbv(0)[ROWS:]
        s1 = intbv(0)[ROWS:]
        s2 = intbv(0)[ROWS:]
        s3 = intbv(0)[ROWS:]
        eq1 = intbv(0)[ROWS:]
        eq2 = intbv(0)[ROWS:]
        x = intbv(0)[ROWS:]
        g = modbv(0)[ROWS:]
        e1 = modbv(0)[4:]
        e2 = modbv(0)[4:]
        dl = modbv(0)[8:]
        r = modbv(0)[8:]
        rows = intbv(0)[64:]
        flags = intbv(0)[8:]
        done = intbv(0)[4:]
        th = modbv(0)[8:]
        hitj = bool(0)
        both = bool(0)
        excl = bool(0)
        ok = bool(0)
        sn0 = bool(0)
        sn1 = bool(0)
        f10 = bool(0)
        f11 = bool(0)
        f20 = bool(0)
        n1 = bool(0)
        n2 = bool(0)
        if rst:
            ranges_done.next = 0
            pend.next = 0
        elif op.clear:
            seen.next = 0
            ranges_done.next = 0
            pend.next = 0
        elif not (e0_valid or e1_valid):
            ranges_done.next = 0
            pend.next = 0
        else:
            # ---- the rows each port hits: bit k of h0 (h1) is port 0's (1's) hit of row k ----
            one[:] = 1
            oh[:] = one << e0_row
            h0[:] = 0
            if e0_valid:
                if e0_n > 0:
                    h0[:] = h0 | oh
                if e0_n > 1:
                    h0[:] = h0 | (oh << 1) | (oh >> (ROWS - 1))
                if e0_n > 2:
                    h0[:] = h0 | (oh << 2) | (oh >> (ROWS - 2))
                if e0_n > 3:
                    h0[:] = h0 | (oh << 3) | (oh >> (ROWS - 3))
            oh[:] = one << e1_row
            h1[:] = 0
            if e1_valid:
                if e1_n > 0:
                    h1[:] = h1 | oh
                if e1_n > 1:
                    h1[:] = h1 | (oh << 1) | (oh >> (ROWS - 1))
                if e1_n > 2:
                    h1[:] = h1 | (oh << 2) | (oh >> (ROWS - 2))
                if e1_n > 3:
                    h1[:] = h1 | (oh << 3) | (oh >> (ROWS - 3))
            # ---- every hit row's count + its increment (1, or 2 when both ports hit it), bit-sliced ----
            hit[:] = h0 | h1
            keep[:] = ~hit
            i0[:] = h0 ^ h1
            i1[:] = h0 & h1
            c0[:] = cnt0 & seen
            c1[:] = cnt1 & seen
            c2[:] = cnt2 & seen
            c3[:] = cnt3 & seen
            s0[:] = c0 ^ i0
            k[:] = c0 & i0
            s1[:] = c1 ^ i1 ^ k
            k[:] = (c1 & i1) | (c1 & k) | (i1 & k)
            s2[:] = c2 ^ k
            k[:] = c2 & k
            s3[:] = c3 ^ k
            cnt0.next = (s0 & hit) | (cnt0 & keep)
            cnt1.next = (s1 & hit) | (cnt1 & keep)
            cnt2.next = (s2 & hit) | (cnt2 & keep)
            cnt3.next = (s3 & hit) | (cnt3 & keep)
            seen.next = seen | hit
            # the new count against expected - 1 and - 2 (x: the rows where some bit of the count
            # differs from the constant's)
            e1[:] = expected - 1
            e2[:] = expected - 2
            eq1[:] = 0
            eq2[:] = 0
            if expected >= 1:
                x[:] = 0
                if e1[0]:
                    x[:] = x | ~s0
                else:
                    x[:] = x | s0
                if e1[1]:
                    x[:] = x | ~s1
                else:
                    x[:] = x | s1
                if e1[2]:
                    x[:] = x | ~s2
                else:
                    x[:] = x | s2
                if e1[3]:
                    x[:] = x | ~s3
                else:
                    x[:] = x | s3
                eq1[:] = ~x
            if expected >= 2:
                x[:] = 0
                if e2[0]:
                    x[:] = x | ~s0
                else:
                    x[:] = x | s0
                if e2[1]:
                    x[:] = x | ~s1
                else:
                    x[:] = x | s1
                if e2[2]:
                    x[:] = x | ~s2
                else:
                    x[:] = x | s2
                if e2[3]:
                    x[:] = x | ~s3
                else:
                    x[:] = x | s3
                eq2[:] = ~x
            need1.next = (eq1 & hit) | (need1 & keep)
            need2.next = (eq2 & hit) | (need2 & keep)
            # ---- which of the eight hits complete their row.  Hit j < 4 is port 0's range j (port 1
            # may hit it in the same cycle), hit 4 + j port 1's range j unless port 0 has counted it:
            # the FIFO's order.  A flag of row row + j is read as bit row of the flags rotated by j ----
            n1 = expected == 1
            n2 = expected == 2
            dl[:] = e0_row - e1_row
            rows[:] = 0
            flags[:] = 0
            th[:] = 0
            for j in range(4):
                g[:] = (seen >> j) | (seen << (ROWS - j))
                sn0 = g[e0_row]
                sn1 = g[e1_row]
                g[:] = (need1 >> j) | (need1 << (ROWS - j))
                f10 = g[e0_row]
                f11 = g[e1_row]
                g[:] = (need2 >> j) | (need2 << (ROWS - j))
                f20 = g[e0_row]
                # port 0's range j: complete if one more (two more, both ports) was what it needed.
                # Port 1 hits it if row0 + j - row1 = t for some t < e1_n, port 0 hits port 1's
                # range j if row1 + j - row0 = t < e0_n: each a comparison of dl with constants
                both = False
                excl = False
                for t in range(7):
                    if t < e1_n and dl == ((t + ROWS - j) & 0xFF):
                        both = True
                    if t < e0_n and dl == ((j + ROWS - t) & 0xFF):
                        excl = True
                r[:] = e0_row + j
                rows[:] = rows | (r << (8 * j))
                hitj = e0_valid and j < e0_n
                if e1_valid and both:
                    if sn0:
                        ok = f20
                    else:
                        ok = n2
                elif sn0:
                    ok = f10
                else:
                    ok = n1
                if hitj and ok:
                    flags[j] = 1
                    th[:] = (th << 1) | 1
                # port 1's range j
                r[:] = e1_row + j
                rows[:] = rows | (r << (8 * (j + 4)))
                hitj = e1_valid and j < e1_n and not (e0_valid and excl)
                if sn1:
                    ok = f11
                else:
                    ok = n1
                if hitj and ok:
                    flags[j + 4] = 1
                    th[:] = (th << 1) | 1
            # th: the completions as a thermometer code (bit i set: more than i), in binary
            done[3] = th[7]
            done[2] = th[3] and not th[7]
            done[1] = (th[1] and not th[3]) or (th[5] and not th[7])
            done[0] = (th[0] and not th[1]) or (th[2] and not th[3]) or (th[4] and not th[5]) or (th[6] and not th[7])
            pend.next = flags
            prows.next = rows
            ranges_done.next = done

    return banks, place_completions, fifo_head, head_taken, present_head, move_pointers, take_events, \
        count_contributions
