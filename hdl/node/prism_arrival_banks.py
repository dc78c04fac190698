"""FP32_ARRIVAL accumulation of the node: sixteen FP32 banks fed a whole beat per port per cycle, in admission order.

Phase 4 (online FP32 path) of the SINGLE node.  The FP32 running sums live in
BANKS = 16 banks (hdl/node/prism_fp32_bank.py, 16 lanes each): range r in bank
r % 16.  A reader presents an issue group of a whole 512-bit beat: 1 range
(FP32), 2 (FP16/BF16) or 4 (INT8), consecutive, so one group needs 1 .. 4
different banks and two ports need at most 8 of the 16.  A group is taken
whole, in one cycle, or not at all, which gives one beat per cycle per port in
every format whenever the two ports' groups use different banks and their
ranges are not reserved.

Admission order (docs/protocol.md): every element receives its contributions
in the order their frames were admitted.  The node starts frames in admission
order (its readers wait for their turn); this block keeps the order while two
started frames run at the same time:
  * the frame that started first is the *older* one; it never waits for the
    younger one;
  * the younger frame may issue a group only if no range of it is still ahead
    in the older frame (inside [next, hi) of the older frame: frames issue their
    ranges in increasing order);
  * the same holds against a frame that has started behind the other port's
    running one but has not issued anything yet (the reader's "pending" frame):
    when it is older, none of its ranges may be overtaken;
  * when both groups need a common bank in one cycle, the older frame gets it.
Within a bank, contributions enter in the order granted; a range touched in
the last FP32_LATENCY cycles is reserved (its sum is in the adder), so a later
contribution to it waits.

Bank conflicts settle by themselves: when two ports stream different ranges in
step and collide, the younger waits one cycle and from then on runs a group
behind, on other banks.  (With 8 banks, INT8 groups not aligned to 4 ranges
would collide on every cycle; 16 leave room for any alignment.)

Read-out: a completed range (cmd_valid, cmd_row) is read from its bank when
no port offers that bank a group this cycle (granted or not) and the range is
not reserved (cmd_ready); the bank empties the row.  Every read has the same latency
(3 cycles), and at most one is taken per cycle, so read-outs leave in command
order on o_valid / o_row / o_tile; o_tile is the OR of the banks' outputs
(a bank's output is 0 outside its read-out cycle; o_tile is 0 while o_valid
is low).

Logic depth: every path stays within 8 LUT levels, counted through the banks.
The grant is flat: the admission-order compares are made for every group
size in parallel and the group's size picks one at the end.  The banks
export their reservation bitmaps (registers, a row per bit), and the
reservation checks look the ranges up here, beside the admission terms,
rather than inside the banks behind their row decode.  The read-out never
waits for the grant: it yields its bank to any group offered on it, so
cmd_ready (prism_completion's head registers' enable) comes from the
groups' bank masks and the reservations, not from the grant's
admission-order terms.  Both readies are high while nothing is offered on
them, so each is its consumer's enable as it is.  Each
bank decodes its share of a group before the take arrives, so a take reaches
the bank's registers through at most one LUT.

Parameters:
    CAPACITY        elements held (multiple of 32, 32 .. 4096): CAPACITY / 16 ranges; the
                    banks are min(16, ranges), each with ceil(ranges / 16) rows
    FP32_LATENCY    fp32_add latency (1 .. 4)

Ports (widths from the signals):
    clk, rst                        clock; synchronous reset: empties the banks
    clear                           pulse: a new operation starts (the banks forget every sum)
    enable                          the active operation is FP32_ARRIVAL
    fmt                             input format code (2 bits)
    p{P}_valid, p{P}_ready (out)    (P = 0, 1) reader P's issue group handshake (ready always, while enable
                                    is low, the group then not taken; ready while valid is low)
    p{P}_row                        its first range (8 bits)
    p{P}_lanes                      its element mask (64 bits; bit e: range row + e // 16, lane e % 16)
    p{P}_data                       its elements, each right-aligned in a 32-bit field (2048 bits)
    p{P}_active, p{P}_seq           reader P has a frame with groups not yet taken; its start number
                                    (frames start in admission order; 4 bits, compared modulo 16)
    p{P}_lo, p{P}_hi, p{P}_next     that frame's ranges [lo, hi) and its lowest range not yet taken
    p{P}_pend, p{P}_pseq            reader P has started a second frame behind it, nothing taken yet;
                                    its start number
    p{P}_plo, p{P}_phi              that pending frame's ranges [plo, phi)
    cmd_valid, cmd_row              read out a completed range
    cmd_ready                       out: the read is taken (always, while enable is low; and while
                                    cmd_valid is low)
    ev{P}_valid, ev{P}_row, ev{P}_n out: port P's group was taken: its first range and its number of
                                    ranges (1 .. 4), for completion tracking
    o_valid, o_row, o_tile          out: a read-out range: its row and 16 FP32 sums (512 bits)
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, intbv, modbv

from hdl.arith.half_decoder import half_decoder
from hdl.arith.int8_decoder import int8_decoder
from hdl.arith.number_decoder import number_decoder
from hdl.arith.ports import check_widths
from hdl.node.prism_fp32_bank import prism_fp32_bank
from spec.frames import MAX_CAPACITY

BANKS = 16
GROUP_ELEMENTS = 64                 # a whole INT8 beat
NO_FP32_FROM = 16                   # lanes from here on never carry FP32 (an FP32 beat holds 16)
INT8_ONLY_FROM = 32                 # lanes from here on carry only INT8 (an FP16/BF16 beat holds 32)
READ_LATENCY = 3                    # read taken -> sums on the bank's output (see prism_fp32_bank)


@block
def prism_arrival_banks(clk, rst, clear, enable, fmt,
                        p0_valid, p0_ready, p0_row, p0_lanes, p0_data, p0_active, p0_seq, p0_lo, p0_hi, p0_next,
                        p0_pend, p0_pseq, p0_plo, p0_phi,
                        p1_valid, p1_ready, p1_row, p1_lanes, p1_data, p1_active, p1_seq, p1_lo, p1_hi, p1_next,
                        p1_pend, p1_pseq, p1_plo, p1_phi,
                        cmd_valid, cmd_row, cmd_ready, ev0_valid, ev0_row, ev0_n, ev1_valid, ev1_row, ev1_n,
                        o_valid, o_row, o_tile, CAPACITY=MAX_CAPACITY, FP32_LATENCY=4):
    if not (32 <= CAPACITY <= MAX_CAPACITY and CAPACITY % 32 == 0):
        raise ValueError(f"prism_arrival_banks: CAPACITY={CAPACITY}; a multiple of 32 in 32 .. {MAX_CAPACITY}")
    check_widths("prism_arrival_banks", ("p0_data", p0_data, 2048), ("p1_data", p1_data, 2048),
                 ("p0_lanes", p0_lanes, 64), ("p1_lanes", p1_lanes, 64), ("o_tile", o_tile, 512),
                 ("p0_row", p0_row, 8), ("p1_row", p1_row, 8), ("cmd_row", cmd_row, 8), ("o_row", o_row, 8),
                 ("ev0_n", ev0_n, 3), ("ev1_n", ev1_n, 3))

    RANGES = CAPACITY // 16
    NB = min(BANKS, RANGES)             # banks that can hold a range (ranges < CAPACITY / 16)
    ROWS = (RANGES + BANKS - 1) // BANKS
    ALL_BANKS = (1 << BANKS) - 1
    BANK_ROWS = 256 // BANKS            # a bank's reservation bitmap: one bit per row it could hold

    def sig(w=None):
        return Signal(bool(0)) if w is None else Signal(intbv(0)[w:])

    # ---- every element widened exactly to FP32 (no Kulisch term): lanes 0-15 by hdl/arith/number_decoder.py,
    # 16-31 (never FP32) by half_decoder.py, 32-63 (INT8 only) by int8_decoder.py ----
    insts = []
    values = []
    for data in (p0_data, p1_data):
        fields = []
        for e in range(GROUP_ELEMENTS):
            f32 = sig(32)
            if e < NO_FP32_FROM:
                insts.append(number_decoder(data(32 * e + 32, 32 * e), fmt, sig(1), sig(), sig(), sig(), f32,
                                            TERM=False))
            elif e < INT8_ONLY_FROM:
                insts.append(half_decoder(data(32 * e + 32, 32 * e), fmt, f32))
            else:
                insts.append(int8_decoder(data(32 * e + 32, 32 * e), f32))
            fields.append(f32)
        values.append(ConcatSignal(*reversed(fields)))
    p0_values, p1_values = values

    # ---- banks ----
    take0, take1, rd_take = sig(), sig(), sig()
    resvs, outs = [], []
    for b in range(NB):
        rv, ov, od = sig(BANK_ROWS), sig(), sig(512)
        insts.append(prism_fp32_bank(clk, rst, clear, take0, p0_row, p0_lanes, p0_values, take1, p1_row, p1_lanes,
                                     p1_values, rd_take, cmd_row, rv, ov, od,
                                     BANK=b, BANKS=BANKS, ROWS=ROWS, FP32_LATENCY=FP32_LATENCY))
        resvs.append(rv)
        outs.append(od)
    # every range's reservation (bit 16 r + b: range 16 r + b, in bank b), straight from the banks' registers
    resv_all = ConcatSignal(*reversed(resvs)) if NB > 1 else resvs[0]
    # the read-out: the OR of the banks' outputs (each 0 outside its read-out cycle), a tree of 4-input ORs
    while len(outs) > 1:
        level = []
        for i in range(0, len(outs), 4):
            part = outs[i:i + 4]
            while len(part) < 4:
                part.append(part[0])            # (a | a = a)
            y = sig(512)
            insts.append(_or4(part[0], part[1], part[2], part[3], y))
            level.append(y)
        outs = level
    sums_out = outs[0]

    n0, n1 = sig(3), sig(3)
    mask0, mask1 = sig(BANKS), sig(BANKS)
    GROUP_W = BANKS + 3                 # group_of() result: {ranges present (3 bits), banks (BANKS bits)}

    def group_of(lanes, row):
        """A port's issue group: how many ranges it holds (the ranges present: lane 0 of each range
        set) and the banks they need (range row + i in bank (row + i) % BANKS)."""
        pres = intbv(0)[4:]
        m = intbv(0)[BANKS + 4:]
        n = intbv(0)[3:]
        g = intbv(0)[GROUP_W:]
        pres[0] = lanes[0]
        pres[1] = lanes[16]
        pres[2] = lanes[32]
        pres[3] = lanes[48]
        n[:] = 0
        for i in range(4):
            if pres[i]:
                n[:] = i + 1
        m[:] = pres << row[4:0]
        g[BANKS:0] = (m[BANKS:0] | m[BANKS + 4:BANKS]) & ALL_BANKS
        g[GROUP_W:BANKS] = n
        return g

    @always_comb
    def group_banks():
        g = intbv(0)[GROUP_W:]
        g[:] = group_of(p0_lanes, p0_row)
        n0.next = g[GROUP_W:BANKS]
        mask0.next = g[BANKS:0]
        g[:] = group_of(p1_lanes, p1_row)
        n1.next = g[GROUP_W:BANKS]
        mask1.next = g[BANKS:0]

    # ---- admission: every term from the ports' registers, in parallel; the grant picks late ----
    # A group of n ranges from `row` reaches past a range `x` when row + n > x.  That compare is made for
    # every n (0 .. 4) in parallel, from the row alone; the group's own n picks one at the end (the compare
    # grows with n, so row + n > x is the OR over k of (row + k > x and n >= k)).
    wins1 = sig()                       # on a common bank, port 1's group goes first
    held0, held1 = sig(), sig()         # port P's group waits for admission order
    free_ok0, free_ok1 = sig(), sig()   # every bank of port P's group free (no reservation on its range)
    conflict = sig()                    # the two groups need a common bank
    rd_bank0, rd_bank1 = sig(), sig()   # the read-out's bank is one of port P's group
    rd_free = sig()                     # the read-out's range is not reserved
    ok0, ok1 = sig(), sig()

    @always_comb
    def order_terms():
        d = modbv(0)[4:]
        e = intbv(0)[10:]
        g0 = intbv(0)[5:]
        g1 = intbv(0)[5:]
        o1 = bool(0)
        run0 = bool(0)
        run1 = bool(0)
        pd0 = bool(0)
        pd1 = bool(0)
        h0 = bool(0)
        h1 = bool(0)
        # port 1's frame started first (port 0's start number is 1 .. 7 later, modulo 16)
        d[:] = p0_seq - p1_seq
        o1 = d != 0 and d < 8
        wins1.next = o1 and bool(p1_active)
        # admission order between the two running frames: the younger waits while the older
        # one still has one of its ranges ahead
        run0 = p0_active and p1_active and o1 and p0_row < p1_hi
        run1 = p0_active and p1_active and not o1 and p1_row < p0_hi
        # ... and while a pending frame of the other port, older than it, has one of its ranges
        d[:] = p0_seq - p1_pseq           # 1..7: port 1's pending frame started before port 0's frame
        pd0 = p1_pend and d != 0 and d < 8 and p0_row < p1_phi
        d[:] = p1_seq - p0_pseq
        pd1 = p0_pend and d != 0 and d < 8 and p1_row < p0_phi
        # n >= k from the ranges present (lane 0 of range i: lane 16 i); n is the highest present + 1
        g0[:] = 1
        g1[:] = 1
        for k in range(1, 5):
            g0[k] = p0_lanes[16 * k - 16]
            g1[k] = p1_lanes[16 * k - 16]
            for i in range(k, 4):
                if p0_lanes[16 * i]:
                    g0[k] = 1
                if p1_lanes[16 * i]:
                    g1[k] = 1
        for k in range(5):
            e[:] = p0_row + k
            if g0[k] and ((run0 and e > p1_next) or (pd0 and e > p1_plo)):
                h0 = True
            e[:] = p1_row + k
            if g1[k] and ((run1 and e > p0_next) or (pd1 and e > p0_plo)):
                h1 = True
        held0.next = h0
        held1.next = h1

    @always_comb
    def bank_terms():
        bank = intbv(0)[4:]
        hi = modbv(0)[4:]
        f0 = bool(0)
        f1 = bool(0)
        fr = bool(0)
        # every bank of the group free: the group's range in bank b (b in its mask) is in row row // 16, or
        # the next row when row % 16 > b; it must not be reserved.  The lookups read the banks' reservation
        # registers directly, so they run beside the admission terms
        f0 = True
        f1 = True
        for b in range(NB):
            hi[:] = p0_row[8:4]
            if p0_row[4:0] > b:
                hi[:] = hi + 1
            if mask0[b] and resv_all[BANK_ROWS * b + hi]:
                f0 = False
            hi[:] = p1_row[8:4]
            if p1_row[4:0] > b:
                hi[:] = hi + 1
            if mask1[b] and resv_all[BANK_ROWS * b + hi]:
                f1 = False
        free_ok0.next = f0
        free_ok1.next = f1
        # the read-out's range (in bank cmd_row % 16, row cmd_row // 16) is not reserved
        fr = True
        if cmd_row[4:0] < NB and resv_all[BANK_ROWS * cmd_row[4:0] + cmd_row[8:4]]:
            fr = False
        rd_free.next = fr
        conflict.next = (mask0 & mask1) != 0
        bank[:] = cmd_row[4:0]
        rd_bank0.next = mask0[bank]
        rd_bank1.next = mask1[bank]

    @always_comb
    def arbitrate():
        a0 = bool(0)
        a1 = bool(0)
        g0 = bool(0)
        g1 = bool(0)
        a0 = p0_valid and not held0
        a1 = p1_valid and not held1
        # one group per bank per cycle: the older frame first (the loser is refused even when the
        # winner's banks turn out reserved)
        g0 = enable and free_ok0 and a0 and not (a1 and conflict and wins1)
        g1 = enable and free_ok1 and a1 and not (a0 and conflict and not wins1)
        ok0.next = g0
        ok1.next = g1

    @always_comb
    def handshake():
        # (disabled, every group is ready: the node passes these on to the readers as they are; and ready
        # with no group presented, so a reader's ready is its issue stage's advance with no LUT of its own)
        p0_ready.next = not enable or not p0_valid or ok0
        p1_ready.next = not enable or not p1_valid or ok1
        take0.next = ok0
        take1.next = ok1
        # read-out: no group is offered on the range's bank this cycle and the range is not reserved
        # (a group offered there but refused still holds the bank off: the read never waits for the grant)
        rd_take.next = (cmd_valid and enable and rd_free and not (p0_valid and rd_bank0)
                        and not (p1_valid and rd_bank1))
        # (disabled, every command is ready: the node then passes cmd_ready on to prism_completion as it is,
        # with no LUT of its own behind this path's seven levels; and ready with no command, so it is
        # completion's "empty or taken" as it is)
        cmd_ready.next = not enable or not cmd_valid or (rd_free and not (p0_valid and rd_bank0)
                                                         and not (p1_valid and rd_bank1))

    # ---- read-out order: fixed latency, one per cycle ----
    rd_rows = Signal(modbv(0)[READ_LATENCY * 9:])     # valid | range per stage (newest lowest)

    @always(clk.posedge)
    def bookkeeping():
        ent = intbv(0)[9:]
        if rst:
            rd_rows.next = 0
            ev0_valid.next = 0
            ev1_valid.next = 0
        else:
            ent[:] = 0
            if cmd_valid and cmd_ready and enable:
                ent[8] = 1
                ent[8:0] = cmd_row
            rd_rows.next = (rd_rows << 9) | ent
            # a contribution counts once its banks have taken it (read-outs queue behind it)
            ev0_valid.next = take0
            ev1_valid.next = take1
            if take0:
                ev0_row.next = p0_row
                ev0_n.next = n0
            if take1:
                ev1_row.next = p1_row
                ev1_n.next = n1

    LAST = READ_LATENCY - 1

    @always_comb
    def read_out():
        ent = intbv(0)[9:]
        ent[:] = (rd_rows >> (9 * LAST)) & 0x1FF
        o_valid.next = ent[8]
        o_row.next = ent[8:0]
        o_tile.next = sums_out

    insts += [group_banks, order_terms, bank_terms, arbitrate, handshake, bookkeeping, read_out]
    return insts


@block
def _or4(a, b, c, d, y):
    """y = a | b | c | d (one node of the read-out's OR tree)."""
    @always_comb
    def orr():
        y.next = a | b | c | d

    return orr
