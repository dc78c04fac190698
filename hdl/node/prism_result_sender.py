"""PRISM result sender: RESULT frames per 256-element block, groups joined across tiles.

Phase 6 of the SINGLE node (docs/protocol.md, "RESULT").  Finished tiles from
the read-out are kept in a striped result store (256 rows of 512 bits, a tile
packed in its format per row: 4,096 FP32 values at most, in vector order) plus
an exact store for EXACT results (16 x (WB + 5 + W) bits per row), with each tile's
format.  A block b (elements [256b, min(256b + 256, E))) is sent once all its
tiles are in; blocks go out lowest-numbered first among those complete.

Frame: a header beat (class 3, op_id, generation, offset 256b, element count,
G groups and their descriptors {count, format} at [256+16g +: 16]), then each
group from a new beat, packed like DATA (64 INT8, 32 FP16/BF16, 16 FP32 per
beat; EXACT one value per beat: the exact sum as a 508-bit two's complement
integer at [507:0], the W-bit state being its low bits, flags {ovf, -inf, +inf,
nan} at [511:508]; the header carries W at [104:96]).  A group is a maximal run of adjacent tiles of one format (with a
fixed result format the block is one group; with AUTO adjacent tiles of the
same format are joined across tile boundaries within the frame).  Unused
bits of a group's last beat are 0.

Each beat is presented once to the egress with the recipients mask (Reduce: one
port, AllReduce: every port in the mask); the egress loads it into each port.
One beat per cycle is formed.  `op_finished` pulses when the operation's last frame has been
queued; `op.clear` clears the bookkeeping for the next operation.

Stores as block RAM: every store is a RAM with one write port and one
registered read port.  The result store is four banks of 128 bits x 256 rows
(16 KiB, 8 RAMB36 of 512 x 72 when mapped; the seed's figure): a tile's useful
quarters are written where a beat of its format will read them, INT8 tile t
(128 bits) in bank t % 4, FP16/BF16 tile t (256 bits) in banks 2 (t % 2) and
2 (t % 2) + 1, FP32 tile t in all four, each at row t, so the up to four tiles
of one beat are always in four different banks.  The exact store is one RAM of
16 x (WB + 5 + W) bits per row, read whole and one lane selected after it.  A
lane is stored with the bits of its exact sum above the state already formed:
wraps - state[W-1] (WB + 1 bits, in the place of {wraps, wrap_sign}; wrap_sign
is not sent), so the assembly only sign-extends them (the subtraction after
the RAM was a borrow chain of 508 - W bits, the deepest path of the assembly).
Beats are formed in a pipeline moved by one enable (the egress took the
previous beat, or none is waiting): issue (which tile, rows, lane; the banks'
addresses), RAM read (and which bank fills which quarter of the beat),
assembly into the beat register.  A frame's header travels the same pipeline,
so a frame starts two cycles later than with asynchronously read stores; the
rate stays one beat per cycle.

Logic depth (every register-to-register path at most 6 LUT levels, issue 34)
with the frames on the same cycles as the one-cycle frame set-up before it:
* The block search (IDLE) only picks the block and registers it one-hot
  (`blk_oh`).  `have` marks the tiles that are in or hold no element of the
  operation, `done` the blocks whose tiles were all in a cycle ago; a block is
  complete when done or when the tile arriving now is the only one missing.
* The HEADER state (the cycle that issues the header beat, as before) forms
  from `blk_oh` and the registered formats the block's per-tile codes: formats,
  group starts, group ends, its last tile.  They load the payload walk and are
  registered for the header.
* The header beat is formed in the next cycle (`header_beat`): it reaches the
  assembly two cycles after the HEADER state at the earliest.  Group g is the
  tile that starts a group with g + 1 starts up to it: a prefix count of the
  starts as balanced adders of single bits (logic, no carry chain), then one
  AND-OR per descriptor slot.  A descriptor's tiles run to the next stop (a
  group's start or the block's end); its elements are 16 per tile but for a
  partial last tile of the operation.  No descriptor depends on another.
* The payload walk keeps no group number or group end as a number: the
  remaining tiles' formats, group ends and the block's last tile are shift
  registers moved by the tiles a beat takes (0 to 4), so a beat's format, row
  count and end come from their low bits.
* E's consequences (which blocks hold elements, the last block's tiles and
  elements, the tail) are registered from op.count a cycle after it changes:
  an operation's tiles arrive long after its clear.

Parameters:
    WRAP_BITS                       WB, the Kulisch rows' wrap counter width (KULISCH_WRAP_BITS)

Ports (buses in hdl/node/prism_buses.py; W = KULISCH_W, from the width of tiles.exact and WB):
    clk, rst                        clock; synchronous reset
    op                              ActiveOp: clear (pulse, a new operation starts), count (E, 13 bits),
                                    op_id (8), generation (16), recipients (transmit port mask, 2 bits)
    tiles                           Tile: a finished tile from prism_readout (row 8 bits, packed 512,
                                    fmt 3; exact lane l = {WB-bit wraps, wrap_sign, overflow, -inf, +inf,
                                    nan, W-bit state}, 16 x (WB + 5 + W) bits)
    beats                           out: ResultBeat, the beat presented to the egress with its ports
                                    (ready is an input: the egress has taken the beat)
    op_finished                     out: pulse, the last RESULT frame of the operation is queued
    idle                            out: no frame is being formed or offered to the egress
"""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

from spec.formats import FMT_BF16, FMT_EXACT, FMT_FP16, FMT_FP32, FMT_INT8, KULISCH_WIDTHS, KULISCH_WRAP_BITS
from spec.frames import (BEAT_BITS, BLOCK_ELEMS, CLASS_RESULT, EXACT_FLAG_LSB, EXACT_SUM_BITS, F_GENERATION_END,
                         F_GENERATION_LSB, F_GROUPS_END, F_GROUPS_LSB, F_KULISCH_W_END, F_KULISCH_W_LSB, F_N_END,
                         F_N_LSB, F_OFFSET_END, F_OFFSET_LSB, F_OP_ID_END, F_OP_ID_LSB, GROUP_DESC_BITS,
                         GROUP_DESC_LSB)

ROWS = 256
IDLE, HEADER, PAYLOAD = 0, 1, 2


@block
def prism_result_sender(clk, rst, op, tiles, beats, op_finished, idle, WRAP_BITS=KULISCH_WRAP_BITS):
    XW = len(tiles.exact) // 16
    WB = WRAP_BITS
    W = XW - 5 - WB
    if W not in KULISCH_WIDTHS or len(tiles.exact) != 16 * XW:
        raise ValueError(f"prism_result_sender: tiles.exact is 16 x ({WB} + 5 + KULISCH_W) bits")
    SUM_BITS = EXACT_SUM_BITS                   # EXACT beat: the exact sum at [507:0]
    WRAPS_LO = W + 5                            # an exact lane: {wraps, wrap_sign, 4 flags, state}
    HIGH_LO = W + 4                             # a stored lane: {high (WB + 1 bits), 4 flags, state}
    HIGH_FILL = ((1 << (SUM_BITS - W)) - 1) ^ ((1 << (WB + 1)) - 1)   # sign extension of the stored high part
    if len(tiles.packed) != BEAT_BITS or len(beats.data) != BEAT_BITS:
        raise ValueError("prism_result_sender: tiles.packed and beats.data are 512 bits")
    if len(op.count) != 13 or len(tiles.fmt) != 3 or len(tiles.row) != 8:
        raise ValueError("prism_result_sender: op.count 13, tiles.fmt 3, tiles.row 8 bits")

    QROWS = ROWS                                # rows of each result-store bank (one per tile)
    bank0 = [Signal(intbv(0)[128:]) for _ in range(QROWS)]
    bank1 = [Signal(intbv(0)[128:]) for _ in range(QROWS)]
    bank2 = [Signal(intbv(0)[128:]) for _ in range(QROWS)]
    bank3 = [Signal(intbv(0)[128:]) for _ in range(QROWS)]
    exact = [Signal(intbv(0)[16 * XW:]) for _ in range(ROWS)]
    wd0, wd1, wd2, wd3 = [Signal(intbv(0)[128:]) for _ in range(4)]       # bank write data
    wdx = Signal(intbv(0)[16 * XW:])                                       # exact store write data
    q0, q1, q2, q3 = [Signal(intbv(0)[128:]) for _ in range(4)]           # bank read data (registered)
    xq = Signal(intbv(0)[16 * XW:])                                        # exact store read data
    ra0, ra1, ra2, ra3 = [Signal(intbv(0)[8:]) for _ in range(4)]         # bank read addresses
    tile_fmt = Signal(intbv(0)[3 * ROWS:])      # 3 bits per tile
    have = Signal(intbv(0)[ROWS:])              # bit t: tile t is in, or holds no element of the operation
    done = Signal(intbv(0)[16:])                # bit b: every tile of block b is in
    sent = Signal(intbv(0)[16:])
    state = Signal(intbv(0)[2:])
    blk_oh = Signal(intbv(0)[16:])              # the block being sent, one-hot
    # op.count's consequences, registered (the operation's tiles arrive long after its clear)
    c_in = Signal(intbv(0)[16:])                # bit b: block b holds elements (256 b < E)
    c_last = Signal(intbv(0)[16:])              # bit b: block b is the operation's last
    c_thermo = Signal(intbv(0)[16:])            # bit i: tile i of the last block holds elements
    c_elems = Signal(intbv(0)[9:])              # elements of the last block, 1 .. 256
    c_tail = Signal(intbv(0)[4:])               # E mod 16: elements of the operation's last tile (0: 16)
    c_tail_m1 = Signal(modbv(0)[4:])            # ... less one
    # the frame's block, registered in its HEADER state (h_*), then the header beat
    h1_valid = Signal(bool(0))                  # h_* were formed in the previous cycle
    h_fmt = Signal(intbv(0)[48:])               # tile i's format at [3i+2:3i]
    h_starts = Signal(intbv(0)[16:])            # bit i: tile i starts a group
    h_stop = Signal(intbv(0)[16:])              # bit i: tile i starts a group or is past the block's tiles
    h_tail = Signal(bool(0))                    # the block holds the operation's last tile, which is partial
    h_elems = Signal(intbv(0)[9:])              # the block's elements
    h_block = Signal(intbv(0)[4:])
    header = Signal(intbv(0)[512:])
    # the payload walk: the current tile, the remaining tiles' formats, group ends and block end
    tile = Signal(intbv(0)[9:])                 # current tile (global row)
    lane = Signal(intbv(0)[5:])                 # EXACT: next element of the tile
    rf = Signal(intbv(0)[48:])                  # format of tile + i at [3i+2:3i]
    re = Signal(intbv(0)[16:])                  # bit i: tile + i ends its group
    rl = Signal(intbv(0)[16:])                  # bit i: tile + i is the block's last
    p_tail = Signal(bool(0))                    # the block's last tile is the operation's, partial
    out_valid = Signal(bool(0))
    load = Signal(bool(0))
    # beat pipeline: stage a (issued: what the beat holds), stage b (its rows read from the stores)
    a_valid, b_valid = Signal(bool(0)), Signal(bool(0))
    a_hdr, b_hdr = Signal(bool(0)), Signal(bool(0))           # the frame's header beat
    a_exact, b_exact = Signal(bool(0)), Signal(bool(0))       # an EXACT beat (one lane of the exact store)
    a_tile = Signal(intbv(0)[9:])                             # first tile of the beat
    a_per = Signal(intbv(0)[3:])                              # tiles per beat of the group's format
    a_rows = Signal(intbv(0)[3:])                             # tiles the beat holds (1 .. per)
    a_lane, b_lane = Signal(intbv(0)[5:]), Signal(intbv(0)[5:])   # EXACT: the lane
    a_last, b_last = Signal(bool(0)), Signal(bool(0))         # the frame's last beat
    a_fin, b_fin = Signal(bool(0)), Signal(bool(0))           # ... and the operation's last frame
    b_qsel = Signal(intbv(0)[16:])              # bit 4Q + k: quarter Q of the beat is bank k's read data

    @always_comb
    def offer_beats():
        load.next = not out_valid or beats.ready
        beats.valid.next = out_valid
        idle.next = state == IDLE and not out_valid and not a_valid and not b_valid

    @always_comb
    def store_write_data():
        # the tile's useful quarters go to the banks its format reads them from
        if tiles.fmt == FMT_INT8:
            wd0.next = tiles.packed[128:0]
            wd1.next = tiles.packed[128:0]
            wd2.next = tiles.packed[128:0]
            wd3.next = tiles.packed[128:0]
        elif tiles.fmt == FMT_FP16 or tiles.fmt == FMT_BF16:
            wd0.next = tiles.packed[128:0]
            wd1.next = tiles.packed[256:128]
            wd2.next = tiles.packed[128:0]
            wd3.next = tiles.packed[256:128]
        else:
            wd0.next = tiles.packed[128:0]
            wd1.next = tiles.packed[256:128]
            wd2.next = tiles.packed[384:256]
            wd3.next = tiles.packed[512:384]

    @always_comb
    def exact_write_data():
        # each lane is stored with its exact sum's bits above the state already formed: the sum
        # signed(state) + wraps * 2^W = state + (wraps - state[W-1]) * 2^W, and wraps - state[W-1]
        # fits WB + 1 bits, in place of {wraps, wrap_sign} (wrap_sign is not sent)
        xin = intbv(0)[16 * XW:]
        xout = intbv(0)[16 * XW:]
        ln = modbv(0)[XW:]
        wide = intbv(0)[16 * XW:]
        ws = modbv(0)[WB + 1:]
        hi = modbv(0)[WB + 1:]
        xin[:] = tiles.exact
        xout[:] = 0
        for l in range(16):
            ln[:] = xin >> (l * XW)
            ws[:] = ln[WRAPS_LO + WB:WRAPS_LO]
            if ln[WRAPS_LO + WB - 1]:
                ws[WB] = 1
            hi[:] = ws - ln[W - 1]
            ln[XW:HIGH_LO] = hi
            wide[:] = ln
            xout[:] = xout | (wide << (l * XW))
        wdx.next = xout

    @always_comb
    def read_addresses():
        # bank k holds, for the beat starting at tile t, tile t + ((k - t) mod 4) (INT8),
        # t + ((k // 2 - t) mod 2) (FP16/BF16), t (FP32)
        t = intbv(0)[9:]
        d = modbv(0)[2:]
        h = modbv(0)[1:]
        a = modbv(0)[8:]
        t[:] = a_tile
        for k in range(4):
            if a_per == 4:
                d[:] = k - t[2:0]
            elif a_per == 2:
                h[:] = (k // 2) - t[1:0]
                d[:] = h
            else:
                d[:] = 0
            a[:] = t[8:0] + d
            if k == 0:
                ra0.next = a
            elif k == 1:
                ra1.next = a
            elif k == 2:
                ra2.next = a
            else:
                ra3.next = a

    @always(clk.posedge)
    def store_ports():
        # four result-store banks and the exact store: one write port, one registered read port each
        if tiles.valid:
            bank0[tiles.row].next = wd0
            bank1[tiles.row].next = wd1
            bank2[tiles.row].next = wd2
            bank3[tiles.row].next = wd3
            exact[tiles.row].next = wdx
        if load:
            q0.next = bank0[ra0]
            q1.next = bank1[ra1]
            q2.next = bank2[ra2]
            q3.next = bank3[ra3]
            xq.next = exact[a_tile[8:0]]

    @always(clk.posedge)
    def assemble_beats():
        # the pipeline moves on `load`: beat register <- stage b (assembled from the stores' read
        # data), stage b <- stage a (its rows are read now; which bank fills which quarter of the
        # beat is decided here, a cycle before the assembly); schedule_frames issues stage a
        beat = intbv(0)[512:]
        xrow = intbv(0)[16 * XW:]
        xv = modbv(0)[XW:]
        total = modbv(0)[SUM_BITS:]
        high = modbv(0)[SUM_BITS - W:]
        quarter = intbv(0)[128:]
        wide = intbv(0)[512:]
        qs = intbv(0)[16:]
        kk = modbv(0)[2:]
        if rst:
            out_valid.next = 0
            op_finished.next = 0
            b_valid.next = 0
        else:
            op_finished.next = 0
            if load:
                out_valid.next = b_valid
                if b_valid:
                    beat[:] = 0
                    if b_hdr:
                        beat[:] = header
                    elif b_exact:
                        xrow[:] = xq
                        xv[:] = 0
                        for l in range(16):
                            if b_lane == l:
                                xv[:] = xrow >> (l * XW)
                        # the exact sum: the state's bits, and above them the stored high part
                        # sign-extended
                        high[:] = xv[XW:HIGH_LO]
                        if xv[XW - 1]:
                            high[:] = high | HIGH_FILL
                        total[SUM_BITS:W] = high
                        total[W:0] = xv[W:0]
                        beat[SUM_BITS:] = total
                        beat[BEAT_BITS:EXACT_FLAG_LSB] = xv[W + 4:W]
                    else:
                        for qn in range(4):
                            quarter[:] = 0
                            if b_qsel[4 * qn]:
                                quarter[:] = quarter | q0
                            if b_qsel[4 * qn + 1]:
                                quarter[:] = quarter | q1
                            if b_qsel[4 * qn + 2]:
                                quarter[:] = quarter | q2
                            if b_qsel[4 * qn + 3]:
                                quarter[:] = quarter | q3
                            wide[:] = quarter
                            beat[:] = beat | (wide << (128 * qn))
                    beats.data.next = beat
                    beats.last.next = b_last
                    beats.mask.next = op.recipients
                    op_finished.next = b_fin
                # which bank's read data fills each quarter of stage a's beat: FP32 tile t in all
                # four; INT8 tile t + j (j < rows) in quarter j from bank (t + j) mod 4; FP16/BF16
                # tile t + j in quarters 2j, 2j + 1 from banks 0, 1 or 2, 3 as (t + j) is even or odd
                qs[:] = 0
                if not a_hdr and not a_exact:
                    if a_per == 1:              # (one tile, always: rows >= 1)
                        qs[:] = 0x8421
                    elif a_per == 4:
                        for j in range(4):
                            if j < a_rows:
                                kk[:] = a_tile[2:0] + j
                                for k in range(4):
                                    if kk == k:
                                        qs[4 * j + k] = 1
                    else:
                        for j in range(2):
                            if j < a_rows:
                                kk[:] = a_tile[2:0] + j
                                if kk[0] == 0:
                                    qs[8 * j] = 1
                                    qs[8 * j + 5] = 1
                                else:
                                    qs[8 * j + 2] = 1
                                    qs[8 * j + 7] = 1
                b_qsel.next = qs
                b_valid.next = a_valid
                b_hdr.next = a_hdr
                b_exact.next = a_exact
                b_lane.next = a_lane
                b_last.next = a_last
                b_fin.next = a_fin
            if op.clear:
                b_valid.next = 0

    @always(clk.posedge)
    def count_flags():
        # what the search, the header and the payload need of E, a cycle after it is set
        le = intbv(0)[9:]
        th = intbv(0)[16:]
        ci = intbv(0)[16:]
        cl = intbv(0)[16:]
        tm = modbv(0)[4:]
        le[:] = op.count[8:0]
        if op.count[8:0] == 0:
            le[:] = 256
        for i in range(16):
            if le > 16 * i:
                th[i] = 1
        for b in range(16):
            if op.count > 256 * b:
                ci[b] = 1
                if op.count <= 256 * b + 256:
                    cl[b] = 1
        tm[:] = op.count[4:0]
        c_elems.next = le
        c_thermo.next = th
        c_in.next = ci
        c_last.next = cl
        c_tail.next = op.count[4:0]
        c_tail_m1.next = tm - 1

    @always(clk.posedge)
    def header_beat():
        # the header from the block's registered group starts (a cycle after the HEADER state formed
        # them; the header beat reaches the assembly two cycles after that state at the earliest).
        # Group g is the tile that starts a group and is the (g + 1)-th to: a prefix count of the
        # starts, as balanced adders of single bits (logic, no carry chain).  Its tiles run to the
        # next stop (the next group's start, or the block's end), its elements are 16 per tile but
        # for a partial last tile of the operation.
        x = intbv(0)[16:]
        xm = intbv(0)[16:]
        p1 = intbv(0)[16:]
        p2 = intbv(0)[12:]
        p3 = intbv(0)[8:]
        p4 = intbv(0)[5:]
        cs = intbv(0)[80:]
        fld80 = intbv(0)[80:]
        a = bool(0)
        b = bool(0)
        cy = bool(0)
        run = intbv(0)[5:]
        runm = intbv(0)[5:]
        el = intbv(0)[13:]
        f = modbv(0)[3:]
        c_i = modbv(0)[5:]
        desc = intbv(0)[16:]
        dsel = modbv(0)[16:]
        stop_seen = bool(0)
        slot = intbv(0)[16:]
        descs = intbv(0)[256:]
        slots = intbv(0)[256:]
        fld256 = intbv(0)[256:]
        hdr = intbv(0)[512:]
        if h1_valid:
            x[:] = h_starts
            cs[:] = 0
            for i in range(16):
                xm[:] = x & ((1 << (i + 1)) - 1)
                for k in range(8):
                    a = bool(xm[2 * k])
                    b = bool(xm[2 * k + 1])
                    p1[2 * k] = a ^ b
                    p1[2 * k + 1] = a & b
                for k in range(4):
                    cy = False
                    for m in range(2):
                        a = bool(p1[4 * k + m])
                        b = bool(p1[4 * k + 2 + m])
                        p2[3 * k + m] = a ^ b ^ cy
                        cy = (a & b) | (cy & (a ^ b))
                    p2[3 * k + 2] = cy
                for k in range(2):
                    cy = False
                    for m in range(3):
                        a = bool(p2[6 * k + m])
                        b = bool(p2[6 * k + 3 + m])
                        p3[4 * k + m] = a ^ b ^ cy
                        cy = (a & b) | (cy & (a ^ b))
                    p3[4 * k + 3] = cy
                cy = False
                for m in range(4):
                    a = bool(p3[m])
                    b = bool(p3[4 + m])
                    p4[m] = a ^ b ^ cy
                    cy = (a & b) | (cy & (a ^ b))
                p4[4] = cy
                fld80[:] = p4
                cs[:] = cs | (fld80 << (5 * i))
            # each tile's group descriptor, were it to start one
            descs[:] = 0
            for i in range(16):
                run[:] = 16 - i
                runm[:] = 15 - i
                stop_seen = False
                for j in range(i + 1, 16):
                    if h_stop[j] and not stop_seen:
                        run[:] = j - i
                        runm[:] = j - i - 1
                        stop_seen = True
                if h_tail and (x >> (i + 1)) == 0:
                    el[:] = concat(runm[4:0], c_tail)
                else:
                    el[:] = concat(run, intbv(0)[4:])
                f[:] = h_fmt >> (3 * i)
                desc[:] = concat(el, f)
                fld256[:] = desc
                descs[:] = descs | (fld256 << (16 * i))
            # slot g: the descriptor of the tile that starts group g
            slots[:] = 0
            for g in range(16):
                slot[:] = 0
                for i in range(g, 16):
                    c_i[:] = cs >> (5 * i)
                    if x[i] and c_i == g + 1:
                        dsel[:] = descs >> (16 * i)
                        slot[:] = slot | dsel
                fld256[:] = slot
                slots[:] = slots | (fld256 << (16 * g))
            hdr[:] = CLASS_RESULT
            hdr[F_OP_ID_END:F_OP_ID_LSB] = op.op_id
            hdr[F_GENERATION_END:F_GENERATION_LSB] = op.generation
            hdr[F_OFFSET_END:F_OFFSET_LSB] = concat(h_block, intbv(0)[8:])
            hdr[F_N_END:F_N_LSB] = h_elems
            hdr[F_GROUPS_END:F_GROUPS_LSB] = cs[80:75]
            hdr[F_KULISCH_W_END:F_KULISCH_W_LSB] = W
            hdr[GROUP_DESC_LSB + 16 * GROUP_DESC_BITS:GROUP_DESC_LSB] = slots
            header.next = hdr

    @always(clk.posedge)
    def schedule_frames():
        hv = intbv(0)[ROWS:]
        tf = intbv(0)[3 * ROWS:]
        fm = intbv(0)[3 * ROWS:]
        one = intbv(0)[3 * ROWS:]
        ones = intbv(0)[ROWS:]
        blk = modbv(0)[16:]
        dn = intbv(0)[16:]
        sn = intbv(0)[16:]
        el = intbv(0)[16:]
        oh = intbv(0)[16:]
        found = bool(0)
        allin = bool(0)
        hit_blk = bool(0)
        bf = intbv(0)[48:]
        fld48 = modbv(0)[48:]
        is_last = bool(0)
        bno = intbv(0)[4:]
        tm = intbv(0)[16:]
        st = intbv(0)[16:]
        stp = intbv(0)[16:]
        ends = intbv(0)[16:]
        lastoh = intbv(0)[16:]
        f = modbv(0)[3:]
        fp = modbv(0)[3:]
        per = intbv(0)[3:]
        rows = intbv(0)[3:]
        s = intbv(0)[3:]
        ln = modbv(0)[5:]
        lane_end = bool(0)
        last_beat = bool(0)
        all_sent = bool(0)
        if rst:
            have.next = 0
            done.next = 0
            sent.next = 0
            state.next = IDLE
            a_valid.next = 0
        else:
            hv[:] = have
            tf[:] = tile_fmt
            sn[:] = sent
            h1_valid.next = state == HEADER
            if tiles.valid:
                hv[tiles.row] = 1
                one[:] = 7
                fm[:] = tiles.fmt
                tf[:] = (tf & ~(one << (tiles.row * 3))) | (fm << (tiles.row * 3))
            # tiles past the operation's end hold nothing: count as in
            for b in range(16):
                ones[:] = 0
                if not c_in[b]:
                    ones[:] = 0xFFFF
                elif c_last[b]:
                    ones[:] = c_thermo ^ 0xFFFF
                hv[:] = hv | (ones << (16 * b))
            if load:
                a_valid.next = 0  # stage a moves on to stage b (assemble_beats)
            if op.clear:
                hv[:] = 0
                sn[:] = 0
                state.next = IDLE
                a_valid.next = 0
            elif state == IDLE and load:
                # lowest complete block not yet sent: complete a cycle ago (done), or now with the
                # tile that arrives (every other tile of its block in)
                for b in range(16):
                    el[b] = 0
                    if c_in[b] and not sent[b]:
                        if done[b]:
                            el[b] = 1
                        elif tiles.valid and tiles.row[8:4] == b:
                            allin = True
                            blk[:] = have >> (16 * b)
                            for i in range(16):
                                if not blk[i] and tiles.row[4:0] != i:
                                    allin = False
                            if allin:
                                el[b] = 1
                found = False
                oh[:] = 0
                for b in range(16):
                    if el[b] and not found:
                        oh[b] = 1
                        found = True
                if found:
                    blk_oh.next = oh
                    sn[:] = sn | oh
                    state.next = HEADER
            elif state == HEADER:
                # the block's tiles: formats, group starts, group ends, its last tile
                bf[:] = 0
                is_last = False
                bno[:] = 0
                for b in range(16):
                    if blk_oh[b]:
                        fld48[:] = tile_fmt >> (48 * b)
                        bf[:] = bf | fld48
                        bno[:] = b
                        if c_last[b]:
                            is_last = True
                tm[:] = 0xFFFF
                if is_last:
                    tm[:] = c_thermo
                st[:] = 1
                stp[:] = 0
                for i in range(1, 16):
                    f[:] = bf >> (3 * i)
                    fp[:] = bf >> (3 * i - 3)
                    if f != fp or not tm[i]:
                        stp[i] = 1
                    if f != fp and tm[i]:
                        st[i] = 1
                ends[:] = concat(True, stp[16:1])
                lastoh[:] = 0
                for i in range(16):
                    if i == 15:
                        if tm[i]:
                            lastoh[i] = 1
                    elif tm[i] and not tm[i + 1]:
                        lastoh[i] = 1
                h_fmt.next = bf
                h_starts.next = st
                h_stop.next = stp
                h_tail.next = is_last and c_tail != 0
                h_block.next = bno
                if is_last:
                    h_elems.next = c_elems
                else:
                    h_elems.next = BLOCK_ELEMS
                if load:
                    a_valid.next = 1
                    a_hdr.next = 1
                    a_exact.next = 0
                    a_last.next = 0
                    a_fin.next = 0
                    tile.next = concat(bno, intbv(0)[4:])
                    lane.next = 0
                    rf.next = bf
                    re.next = ends
                    rl.next = lastoh
                    p_tail.next = is_last and c_tail != 0
                    state.next = PAYLOAD
            elif state == PAYLOAD:
                if load:
                    f[:] = rf[3:0]
                    ln[:] = lane
                    last_beat = False
                    a_tile.next = tile
                    a_lane.next = lane
                    a_hdr.next = 0
                    if f == FMT_EXACT:
                        # one lane per beat; the tile is done after 16 lanes, or the tail's
                        # (a_per and a_rows keep the last tiled beat's: an EXACT beat reads neither)
                        a_exact.next = 1
                        lane_end = lane == 15 or (rl[0] and p_tail and lane == c_tail_m1)
                        s[:] = 0
                        if lane_end:
                            s[:] = 1
                            ln[:] = 0
                            last_beat = bool(rl[0])
                        else:
                            ln[:] = ln + 1
                    else:
                        # per tiles a beat, up to the group's end
                        a_exact.next = 0
                        if f == FMT_FP32:
                            per[:] = 1
                        elif f == FMT_INT8:
                            per[:] = 4
                        else:
                            per[:] = 2
                        a_per.next = per
                        if re[0] or per == 1:
                            rows[:] = 1
                        elif re[1] or per == 2:
                            rows[:] = 2
                        elif re[2]:
                            rows[:] = 3
                        else:
                            rows[:] = 4
                        a_rows.next = rows
                        s[:] = rows
                        last_beat = bool(rl[0] or (rows >= 2 and rl[1]) or (rows >= 3 and rl[2]) or
                                         (rows == 4 and rl[3]))
                    tile.next = tile + s
                    if s == 1:
                        rf.next = rf >> 3
                        re.next = re >> 1
                        rl.next = rl >> 1
                    elif s == 2:
                        rf.next = rf >> 6
                        re.next = re >> 2
                        rl.next = rl >> 2
                    elif s == 3:
                        rf.next = rf >> 9
                        re.next = re >> 3
                        rl.next = rl >> 3
                    elif s == 4:
                        rf.next = rf >> 12
                        re.next = re >> 4
                        rl.next = rl >> 4
                    a_valid.next = 1
                    a_last.next = last_beat
                    lane.next = ln
                    all_sent = (sent | (c_in ^ 0xFFFF)) == 0xFFFF
                    if last_beat:
                        state.next = IDLE
                    a_fin.next = last_beat and all_sent
            # a block is done when all its tiles are in
            dn[:] = 0
            for b in range(16):
                blk[:] = hv >> (16 * b)
                if blk == 0xFFFF:
                    dn[b] = 1
            have.next = hv
            done.next = dn
            tile_fmt.next = tf
            sent.next = sn

    return (offer_beats, store_write_data, exact_write_data, read_addresses, store_ports, assemble_beats,
            count_flags, header_beat, schedule_frames)
