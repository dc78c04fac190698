"""PRISM result sender: RESULT frames per 256-element block, groups joined across tiles.

Phase 6 of the SINGLE node (docs/protocol.md, "RESULT").  Finished tiles from
the read-out are kept in a striped result store (256 rows of 512 bits, a tile
packed in its format per row: 4,096 FP32 values at most, in vector order) plus
an exact store for EXACT results (16 x (W + 5) bits per row), with each tile's
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
16 x (W + 5) bits per row, read whole and one lane selected after it.  Beats
are formed in a pipeline moved by one enable (the egress took the previous
beat, or none is waiting): issue (which tile, rows, lane; the banks'
addresses), RAM read, assembly into the beat register.  A frame's header
travels the same pipeline, so a frame starts two cycles later than with
asynchronously read stores; the rate stays one beat per cycle.

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
    WRAPS_LO = W + 5                            # an exact lane: {wraps, 5 flags, state}
    HIGH_EXTEND = ((1 << (SUM_BITS - W)) - 1) ^ ((1 << WB) - 1)   # sign extension of the wraps
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
    q0, q1, q2, q3 = [Signal(intbv(0)[128:]) for _ in range(4)]           # bank read data (registered)
    xq = Signal(intbv(0)[16 * XW:])                                        # exact store read data
    ra0, ra1, ra2, ra3 = [Signal(intbv(0)[8:]) for _ in range(4)]         # bank read addresses
    tile_fmt = Signal(intbv(0)[3 * ROWS:])      # 3 bits per tile
    ready_rows = Signal(intbv(0)[ROWS:])
    sent = Signal(intbv(0)[16:])
    state = Signal(intbv(0)[2:])
    block_no = Signal(intbv(0)[4:])
    header = Signal(intbv(0)[512:])
    g_fmts = Signal(intbv(0)[48:])              # group g: format at [3g+2:3g]
    g_tiles = Signal(intbv(0)[80:])             # group g: tiles at [5g+4:5g]
    n_groups = Signal(intbv(0)[5:])
    g = Signal(intbv(0)[5:])                    # current group
    tile = Signal(intbv(0)[9:])                 # current tile (global row)
    g_end = Signal(intbv(0)[9:])                # first tile after the current group
    lane = Signal(intbv(0)[5:])                 # EXACT: next element of the tile
    out_valid = Signal(bool(0))
    load = Signal(bool(0))
    # beat pipeline: stage a (issued: what the beat holds), stage b (its rows read from the stores)
    a_valid, b_valid = Signal(bool(0)), Signal(bool(0))
    a_hdr, b_hdr = Signal(bool(0)), Signal(bool(0))           # the frame's header beat
    a_exact, b_exact = Signal(bool(0)), Signal(bool(0))       # an EXACT beat (one lane of the exact store)
    a_tile, b_tile = Signal(intbv(0)[9:]), Signal(intbv(0)[9:])   # first tile of the beat
    a_per, b_per = Signal(intbv(0)[3:]), Signal(intbv(0)[3:])     # tiles per beat of the group's format
    a_rows, b_rows = Signal(intbv(0)[3:]), Signal(intbv(0)[3:])   # tiles the beat holds (0 .. per)
    a_lane, b_lane = Signal(intbv(0)[5:]), Signal(intbv(0)[5:])   # EXACT: the lane
    a_last, b_last = Signal(bool(0)), Signal(bool(0))         # the frame's last beat
    a_fin, b_fin = Signal(bool(0)), Signal(bool(0))           # ... and the operation's last frame

    @always_comb
    def offer_beats():
        load.next = not out_valid or beats.ready
        beats.valid.next = out_valid
        idle.next = state == IDLE and not out_valid and not a_valid and not b_valid

    @always_comb
    def store_write_data():
        # the tile's useful quarters go to the banks its format reads them from
        r2 = intbv(0)[2:]
        r2[:] = tiles.row[2:0]
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
            exact[tiles.row].next = tiles.exact
        if load:
            q0.next = bank0[ra0]
            q1.next = bank1[ra1]
            q2.next = bank2[ra2]
            q3.next = bank3[ra3]
            xq.next = exact[a_tile[8:0]]

    @always(clk.posedge)
    def assemble_beats():
        # the pipeline moves on `load`: beat register <- stage b (assembled from the stores' read
        # data), stage b <- stage a (its rows are read now); schedule_frames issues stage a
        beat = intbv(0)[512:]
        row_data = intbv(0)[512:]
        xrow = intbv(0)[16 * XW:]
        xv = modbv(0)[XW:]
        total = modbv(0)[SUM_BITS:]
        high = modbv(0)[SUM_BITS - W:]
        qs = intbv(0)[128:]
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
                        xv[:] = xrow >> (b_lane * XW)
                        # the exact sum signed(state) + wraps * 2^W = state + (wraps - state[W-1]) * 2^W:
                        # the state's bits, and above them the wraps sign-extended, less the state's sign
                        high[:] = xv[WRAPS_LO + WB:WRAPS_LO]
                        if xv[WRAPS_LO + WB - 1]:
                            high[:] = high | HIGH_EXTEND
                        high[:] = high - xv[W - 1]
                        total[SUM_BITS:W] = high
                        total[W:0] = xv[W:0]
                        beat[SUM_BITS:] = total
                        beat[BEAT_BITS:EXACT_FLAG_LSB] = xv[W + 4:W]
                    elif b_per == 1:
                        if b_rows != 0:
                            beat[:] = concat(q3, q2, q1, q0)
                    else:
                        for j in range(4):
                            if j < b_rows and j < b_per:
                                kk[:] = b_tile[2:0] + j
                                if b_per == 4:
                                    qs[:] = q0 if kk == 0 else q1 if kk == 1 else q2 if kk == 2 else q3
                                    row_data[:] = qs
                                    beat[:] = beat | (row_data << (128 * j))
                                else:
                                    if kk[0] == 0:
                                        row_data[:] = concat(q1, q0)
                                    else:
                                        row_data[:] = concat(q3, q2)
                                    beat[:] = beat | (row_data << (256 * j))
                    beats.data.next = beat
                    beats.last.next = b_last
                    beats.mask.next = op.recipients
                    op_finished.next = b_fin
                b_valid.next = a_valid
                b_hdr.next = a_hdr
                b_exact.next = a_exact
                b_tile.next = a_tile
                b_per.next = a_per
                b_rows.next = a_rows
                b_lane.next = a_lane
                b_last.next = a_last
                b_fin.next = a_fin
            if op.clear:
                b_valid.next = 0

    @always(clk.posedge)
    def schedule_frames():
        rr = intbv(0)[ROWS:]
        tf = intbv(0)[3 * ROWS:]
        fm = intbv(0)[3 * ROWS:]
        blk = modbv(0)[16:]
        need = intbv(0)[17:]
        one17 = intbv(0)[17:]
        nb_mask = intbv(0)[17:]
        gstep = modbv(0)[5:]
        one = intbv(0)[3 * ROWS:]
        tiles_all = intbv(0)[9:]
        n_blocks = intbv(0)[5:]
        first = intbv(0)[9:]
        nt = intbv(0)[9:]
        tfs = modbv(0)[48:]
        f = modbv(0)[3:]
        ng = intbv(0)[5:]
        gf = intbv(0)[48:]
        gt = intbv(0)[80:]
        ge = intbv(0)[208:]                     # group g elements at [13g+12:13g]
        starts = intbv(0)[16:]                  # bit i: tile i of the block starts a group
        f_prev = modbv(0)[3:]
        counts = intbv(0)[80:]                  # tile i: groups started in tiles 0 .. i, at [5i+4:5i]
        counts_next = intbv(0)[80:]
        c_a = modbv(0)[5:]
        c_b = modbv(0)[5:]
        field80 = intbv(0)[80:]
        field48 = intbv(0)[48:]
        field208 = intbv(0)[208:]
        g_first = intbv(0)[80:]                 # group g: its first tile, at [5g+4:5g]
        g_exists = intbv(0)[17:]                # bit g: group g exists (bit 16 always 0)
        first_tile = modbv(0)[5:]
        end_tile = modbv(0)[5:]
        run = intbv(0)[5:]
        run_e = intbv(0)[13:]
        te = intbv(0)[5:]
        elems = intbv(0)[13:]
        hdr = intbv(0)[512:]
        desc = intbv(0)[512:]
        per = intbv(0)[3:]
        t = intbv(0)[9:]
        gi = intbv(0)[5:]
        ln = intbv(0)[5:]
        tail = intbv(0)[5:]
        sn = intbv(0)[16:]
        found = bool(0)
        bsel = intbv(0)[4:]
        last_beat = bool(0)
        rows = intbv(0)[3:]
        fin = bool(0)
        if rst:
            ready_rows.next = 0
            sent.next = 0
            state.next = IDLE
            a_valid.next = 0
        else:
            rr[:] = ready_rows
            tf[:] = tile_fmt
            sn[:] = sent
            tiles_all[:] = (op.count + 15) >> 4
            n_blocks[:] = (op.count + 255) >> 8
            tail[:] = op.count[4:0]
            if tiles.valid:
                rr[tiles.row] = 1
                one[:] = 7
                fm[:] = tiles.fmt
                tf[:] = (tf & ~(one << (tiles.row * 3))) | (fm << (tiles.row * 3))
            if load:
                a_valid.next = 0  # stage a moves on to stage b (assemble_beats)
            if op.clear:
                rr[:] = 0
                sn[:] = 0
                state.next = IDLE
                a_valid.next = 0
            elif state == IDLE and load:
                # lowest complete block not yet sent
                found = False
                bsel[:] = 0
                for b in range(16):
                    blk[:] = rr >> (16 * b)
                    first[:] = 16 * b
                    if not found and b < n_blocks and not sn[b]:
                        nt[:] = tiles_all - first
                        if nt >= 16:
                            need[:] = 0xFFFF
                        else:
                            one17[:] = 1
                            need[:] = (one17 << nt) - 1
                        if blk == need[16:0]:
                            found = True
                            bsel[:] = b
                if found:
                    first[:] = concat(bsel, intbv(0)[4:])
                    nt[:] = tiles_all - first
                    if nt > 16:
                        nt[:] = 16
                    tfs[:] = tf >> (first * 3)
                    # The block's groups, every tile at once: no chain runs through the group number
                    # (placing each finished group at 5 x its number was a 16-step serial chain, most
                    # of the sender's depth).  Tile i starts a group when it is the first or its
                    # format differs from tile i - 1's; its group is the number of starts up to it,
                    # less one: a prefix count, four levels of 5-bit adds.
                    starts[:] = 0
                    for i in range(16):
                        if i < nt:
                            f[:] = tfs >> (3 * i)
                            if i == 0:
                                starts[i] = 1
                            else:
                                f_prev[:] = tfs >> (3 * i - 3)
                                if f != f_prev:
                                    starts[i] = 1
                    counts[:] = 0
                    for i in range(16):
                        field80[:] = starts[i]
                        counts[:] = counts | (field80 << (5 * i))
                    for k in range(4):
                        counts_next[:] = 0
                        for i in range(16):
                            c_a[:] = counts >> (5 * i)
                            if i >= (1 << k):
                                c_b[:] = counts >> (5 * (i - (1 << k)))
                                c_a[:] = c_a + c_b
                            field80[:] = c_a
                            counts_next[:] = counts_next | (field80 << (5 * i))
                        counts[:] = counts_next
                    # group g: the tile whose count is g + 1 and that starts a group; its format
                    g_first[:] = 0
                    g_exists[:] = 0
                    gf[:] = 0
                    for g_no in range(16):
                        for i in range(16):
                            c_a[:] = counts >> (5 * i)
                            if starts[i] and c_a == g_no + 1:
                                field80[:] = i
                                g_first[:] = g_first | (field80 << (5 * g_no))
                                f[:] = tfs >> (3 * i)
                                field48[:] = f
                                gf[:] = gf | (field48 << (3 * g_no))
                                g_exists[g_no] = 1
                    ng[:] = counts >> 75
                    # its tiles run to the next group's first (the last group's to the block's end);
                    # its elements are 16 per tile, but for the operation's last tile, which holds
                    # the tail
                    gt[:] = 0
                    ge[:] = 0
                    for g_no in range(16):
                        first_tile[:] = g_first >> (5 * g_no)
                        if g_exists[g_no + 1]:
                            end_tile[:] = g_first >> (5 * g_no + 5)
                        else:
                            end_tile[:] = nt
                        run[:] = 0
                        if g_exists[g_no]:
                            run[:] = end_tile - first_tile
                        run_e[:] = run << 4
                        if g_exists[g_no] and not g_exists[g_no + 1] and first + nt == tiles_all and tail != 0:
                            run_e[:] = run_e - 16 + tail
                        field80[:] = run
                        gt[:] = gt | (field80 << (5 * g_no))
                        field208[:] = run_e
                        ge[:] = ge | (field208 << (13 * g_no))
                    g_fmts.next = gf
                    g_tiles.next = gt
                    n_groups.next = ng
                    # header beat
                    hdr[:] = CLASS_RESULT
                    hdr[F_OP_ID_END:F_OP_ID_LSB] = op.op_id
                    hdr[F_GENERATION_END:F_GENERATION_LSB] = op.generation
                    hdr[F_OFFSET_END:F_OFFSET_LSB] = concat(bsel, intbv(0)[8:])
                    elems[:] = op.count - concat(bsel, intbv(0)[8:])
                    if elems > BLOCK_ELEMS:
                        elems[:] = BLOCK_ELEMS
                    hdr[F_N_END:F_N_LSB] = elems
                    hdr[F_GROUPS_END:F_GROUPS_LSB] = ng
                    hdr[F_KULISCH_W_END:F_KULISCH_W_LSB] = W
                    for i in range(16):
                        if i < ng:
                            desc[:] = concat(ge[13:0], gf[3:0])
                            hdr[:] = hdr | (desc << (GROUP_DESC_LSB + GROUP_DESC_BITS * i))
                        ge[:] = ge >> 13
                        gf[:] = gf >> 3
                    header.next = hdr
                    block_no.next = bsel
                    state.next = HEADER
                    sn[bsel] = 1
            elif state == HEADER:
                if load:
                    a_valid.next = 1
                    a_hdr.next = 1
                    a_exact.next = 0
                    a_last.next = 0
                    a_fin.next = 0
                    g.next = 0
                    tile.next = concat(block_no, intbv(0)[4:])
                    g_end.next = concat(block_no, intbv(0)[4:]) + g_tiles[5:0]
                    lane.next = 0
                    state.next = PAYLOAD
            elif state == PAYLOAD:
                if load:
                    gi[:] = g
                    f[:] = g_fmts >> (3 * gi)
                    t[:] = tile
                    ln[:] = lane
                    last_beat = False
                    a_tile.next = tile
                    a_lane.next = lane
                    a_hdr.next = 0
                    if f == FMT_EXACT:
                        a_exact.next = 1
                        a_per.next = 1
                        a_rows.next = 1
                        te[:] = 16
                        if t + 1 == tiles_all and tail != 0:
                            te[:] = tail
                        ln[:] = ln + 1
                        if ln == te:
                            ln[:] = 0
                            t[:] = t + 1
                    else:
                        a_exact.next = 0
                        if f == FMT_FP32:
                            per[:] = 1
                        elif f == FMT_INT8:
                            per[:] = 4
                        else:
                            per[:] = 2
                        a_per.next = per
                        rows[:] = 0
                        for j in range(4):
                            if j < per and t < g_end:
                                rows[:] = rows + 1
                                t[:] = t + 1
                        a_rows.next = rows
                    if t >= g_end:
                        gi[:] = gi + 1
                        t[:] = g_end
                        gstep[:] = g_tiles >> (5 * gi)
                        g_end.next = g_end + gstep
                        ln[:] = 0
                        if gi == n_groups:
                            last_beat = True
                    a_valid.next = 1
                    a_last.next = last_beat
                    g.next = gi
                    tile.next = t
                    lane.next = ln
                    fin = False
                    if last_beat:
                        state.next = IDLE
                        one17[:] = 1
                        nb_mask[:] = (one17 << n_blocks) - 1
                        if (sn & nb_mask[16:0]) == nb_mask[16:0]:
                            fin = True
                    a_fin.next = fin
            ready_rows.next = rr
            tile_fmt.next = tf
            sent.next = sn

    return offer_beats, store_write_data, read_addresses, store_ports, assemble_beats, schedule_frames
