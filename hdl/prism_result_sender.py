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
One beat per cycle is formed (the store is read asynchronously, up to four
rows a beat).  `op_finished` pulses when the operation's last frame has been
queued; `commit` clears the bookkeeping for the next operation.

Ports (widths from the signals; W = KULISCH_W):
    clk, rst                        clock; synchronous reset
    commit                          pulse: a new operation starts
    count, op_id, generation        the active operation's E (13 bits), op_id (8), generation (16)
    recipients                      transmit port mask (2 bits)
    w_valid, w_row, w_packed, w_fmt, w_exact   a finished tile (prism_readout's outputs; w_exact lane l =
                                    {wrap_sign, overflow, -inf, +inf, nan, W-bit state}, W + 5 bits)
    res_valid, res_data, res_last   out: the beat presented to the egress
    res_mask                        out: its ports
    res_ready                       the egress has taken the beat
    op_finished                     out: pulse, the last RESULT frame of the operation is queued
    idle                            out: no frame is being formed or offered to the egress
"""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

ROWS = 256
IDLE, HEADER, PAYLOAD = 0, 1, 2
FMT_INT8, FMT_FP16, FMT_BF16, FMT_FP32, FMT_EXACT = 0, 1, 2, 3, 4


@block
def prism_result_sender(clk, rst, commit, count, op_id, generation, recipients, w_valid, w_row, w_packed, w_fmt,
                        w_exact, res_valid, res_data, res_last, res_mask, res_ready, op_finished, idle):
    XW = len(w_exact) // 16
    W = XW - 5
    if W not in (280, 320) or len(w_exact) != 16 * XW:
        raise ValueError("prism_result_sender: w_exact is 16 x (KULISCH_W + 5) bits")
    SUM_BITS = 508                              # EXACT beat: the exact sum at [507:0]
    HIGH_ONES = ((1 << SUM_BITS) - 1) ^ ((1 << W) - 1)     # bits [507:W]: sign extension of the state
    WRAP = 1 << W                               # one wrap of the W-bit accumulator
    if len(w_packed) != 512 or len(res_data) != 512:
        raise ValueError("prism_result_sender: w_packed and res_data are 512 bits")
    if len(count) != 13 or len(w_fmt) != 3 or len(w_row) != 8:
        raise ValueError("prism_result_sender: count 13, w_fmt 3, w_row 8 bits")

    store = [Signal(intbv(0)[512:]) for _ in range(ROWS)]
    exact = [Signal(intbv(0)[16 * XW:]) for _ in range(ROWS)]
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

    @always_comb
    def handshake():
        load.next = not out_valid or res_ready
        res_valid.next = out_valid
        idle.next = state == IDLE and not out_valid

    @always(clk.posedge)
    def store_write():
        if w_valid:
            store[w_row].next = w_packed
            exact[w_row].next = w_exact

    @always(clk.posedge)
    def step():
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
        cur = intbv(0)[3:]
        ng = intbv(0)[5:]
        gf = intbv(0)[48:]
        gt = intbv(0)[80:]
        ge = intbv(0)[208:]                     # group g elements at [13g+12:13g]
        run = intbv(0)[5:]
        run_e = intbv(0)[13:]
        te = intbv(0)[5:]
        elems = intbv(0)[13:]
        hdr = intbv(0)[512:]
        desc = intbv(0)[512:]
        beat = intbv(0)[512:]
        row_data = intbv(0)[512:]
        xrow = intbv(0)[16 * XW:]
        xv = modbv(0)[XW:]
        total = modbv(0)[SUM_BITS:]
        per = intbv(0)[3:]
        t = intbv(0)[9:]
        gi = intbv(0)[5:]
        ln = intbv(0)[5:]
        tail = intbv(0)[5:]
        sn = intbv(0)[16:]
        found = bool(0)
        bsel = intbv(0)[4:]
        last_beat = bool(0)
        if rst:
            ready_rows.next = 0
            sent.next = 0
            state.next = IDLE
            out_valid.next = 0
            op_finished.next = 0
        else:
            op_finished.next = 0
            rr[:] = ready_rows
            tf[:] = tile_fmt
            sn[:] = sent
            tiles_all[:] = (count + 15) >> 4
            n_blocks[:] = (count + 255) >> 8
            tail[:] = count[4:0]
            if w_valid:
                rr[w_row] = 1
                one[:] = 7
                fm[:] = w_fmt
                tf[:] = (tf & ~(one << (w_row * 3))) | (fm << (w_row * 3))
            if load:
                out_valid.next = 0
            if commit:
                rr[:] = 0
                sn[:] = 0
                state.next = IDLE
            elif state == IDLE:
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
                    ng[:] = 0
                    gf[:] = 0
                    gt[:] = 0
                    ge[:] = 0
                    run[:] = 0
                    run_e[:] = 0
                    cur[:] = tfs[3:0]
                    for i in range(16):
                        f[:] = tfs[3:0]
                        tfs[:] = tfs >> 3
                        if i < nt:
                            te[:] = 16
                            if first + i + 1 == tiles_all and tail != 0:
                                te[:] = tail
                            if i != 0 and f != cur:
                                gf[:] = gf | (cur << (3 * ng))
                                gt[:] = gt | (run << (5 * ng))
                                ge[:] = ge | (run_e << (13 * ng))
                                ng[:] = ng + 1
                                run[:] = 0
                                run_e[:] = 0
                            cur[:] = f
                            run[:] = run + 1
                            run_e[:] = run_e + te
                    gf[:] = gf | (cur << (3 * ng))
                    gt[:] = gt | (run << (5 * ng))
                    ge[:] = ge | (run_e << (13 * ng))
                    ng[:] = ng + 1
                    g_fmts.next = gf
                    g_tiles.next = gt
                    n_groups.next = ng
                    # header beat
                    hdr[:] = 3
                    hdr[16:8] = op_id
                    hdr[32:16] = generation
                    hdr[61:48] = concat(bsel, intbv(0)[8:])
                    elems[:] = count - concat(bsel, intbv(0)[8:])
                    if elems > 256:
                        elems[:] = 256
                    hdr[77:64] = elems
                    hdr[85:80] = ng
                    hdr[105:96] = W
                    for i in range(16):
                        if i < ng:
                            desc[:] = concat(ge[13:0], gf[3:0])
                            hdr[:] = hdr | (desc << (256 + 16 * i))
                        ge[:] = ge >> 13
                        gf[:] = gf >> 3
                    header.next = hdr
                    block_no.next = bsel
                    state.next = HEADER
                    sn[bsel] = 1
            elif state == HEADER:
                if load:
                    res_data.next = header
                    res_last.next = 0
                    res_mask.next = recipients
                    out_valid.next = 1
                    g.next = 0
                    tile.next = concat(block_no, intbv(0)[4:])
                    g_end.next = concat(block_no, intbv(0)[4:]) + g_tiles[5:0]
                    lane.next = 0
                    state.next = PAYLOAD
            else:
                if load:
                    gi[:] = g
                    f[:] = g_fmts >> (3 * gi)
                    t[:] = tile
                    ln[:] = lane
                    beat[:] = 0
                    last_beat = False
                    if f == FMT_EXACT:
                        xrow[:] = exact[t[8:0]]
                        xv[:] = xrow >> (ln * XW)
                        # the exact sum: the state sign-extended, plus the wraps it lost
                        # (at most one either way: |sum| < 2^280, docs/protocol.md)
                        total[:] = xv[W:]
                        if xv[W - 1]:
                            total[:] = total | HIGH_ONES
                        if xv[W + 3]:
                            if xv[W + 4]:
                                total[:] = total - WRAP
                            else:
                                total[:] = total + WRAP
                        beat[SUM_BITS:] = total
                        beat[512:508] = xv[W + 4:W]
                        te[:] = 16
                        if t + 1 == tiles_all and tail != 0:
                            te[:] = tail
                        ln[:] = ln + 1
                        if ln == te:
                            ln[:] = 0
                            t[:] = t + 1
                    else:
                        if f == FMT_FP32:
                            per[:] = 1
                        elif f == FMT_INT8:
                            per[:] = 4
                        else:
                            per[:] = 2
                        for j in range(4):
                            if j < per and t < g_end:
                                row_data[:] = store[t[8:0]]
                                if per == 4:
                                    beat[:] = beat | (row_data << (128 * j))
                                elif per == 2:
                                    beat[:] = beat | (row_data << (256 * j))
                                else:
                                    beat[:] = row_data
                                t[:] = t + 1
                    if t >= g_end:
                        gi[:] = gi + 1
                        t[:] = g_end
                        gstep[:] = g_tiles >> (5 * gi)
                        g_end.next = g_end + gstep
                        ln[:] = 0
                        if gi == n_groups:
                            last_beat = True
                    res_data.next = beat
                    res_last.next = last_beat
                    res_mask.next = recipients
                    out_valid.next = 1
                    g.next = gi
                    tile.next = t
                    lane.next = ln
                    if last_beat:
                        state.next = IDLE
                        one17[:] = 1
                        nb_mask[:] = (one17 << n_blocks) - 1
                        if (sn & nb_mask[16:0]) == nb_mask[16:0]:
                            op_finished.next = 1
            ready_rows.next = rr
            tile_fmt.next = tf
            sent.next = sn

    return handshake, store_write, step
