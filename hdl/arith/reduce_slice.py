"""Sixteen-lane reduction slice: KULISCH_FIXED exact accumulation and FP32_ARRIVAL sums.

The arithmetic units put together behind one input and one read-out stream: the hardware
back end of `prism reduce` (driven by cosim/arith/slice_reduce.py) and an exportable block.
The node does not instantiate it; it builds its own phase blocks from the same units
(docs/reduce_slice.md, "What reduce_slice is, and is not").

Element index i belongs to range i // 16 and lane i % 16 (global indices, not
packet boundaries, choose the lane).  Each lane owns one RAM row per range:
a Kulisch state (hdl/arith/kulisch_lane.py) and an FP32 running sum
(hdl/arith/fp32_arrival_lane.py).  `policy` (a register of the node) selects which
one the admitted elements update:

    policy 0  KULISCH_FIXED   every element's exact term (hdl/arith/number_decoder.py)
                              is added into its element's W-bit state; specials
                              and the net wrap count travel beside it
    policy 1  FP32_ARRIVAL    every element, widened exactly to FP32, is added
                              with one IEEE binary32 add in admission order; the
                              first contribution initialises the element

Input stream (one 512-bit NumberGroup beat per transfer):
    64 INT8, 32 FP16/BF16 or 16 FP32 elements, element e at bits e*w .. e*w+w-1;
    s_axis_index is the global index of element 0 of the beat (any alignment),
    s_axis_count how many elements the beat holds (1 .. 512/w; a final partial
    beat holds fewer), s_axis_format the format code (int8 0, fp16 1, bf16 2,
    fp32 3).  Admission order is the order beats are accepted.

Throughput: one lane takes one element per cycle, so a beat is issued as
ceil(count/16) "sub-beats" of 16 consecutive elements, one per cycle:
    FP32 16 elements/cycle (1 beat/cycle), FP16/BF16 16 elements/cycle
    (1 beat per 2 cycles), INT8 16 elements/cycle (1 beat per 4 cycles).
s_axis_tready shows it: a two-entry input buffer (issuing + next beat) takes a
beat whenever its second entry is free.
FP32_ARRIVAL per-lane reservations: a sub-beat whose lane touches an element
that one of the previous FP32_LATENCY sub-beats touched in that lane waits
(the sum is still in the adder); independent positions enter every cycle.
KULISCH_FIXED never waits (the lane's read-after-write bypass).

Read-out: a command (rd_cmd_valid/ready, rd_cmd_range) waits until every beat
admitted before it has been issued (new beats are held off meanwhile), then
streams the range's results on m_axis and EMPTIES the range (ready for the next
collective):
    policy 0  16 beats, lane 0 first: m_axis_tstate = the element's W-bit
              two's-complement state, m_axis_tuser = flags (bit0 nan, bit1 +inf,
              bit2 -inf, bit3 overflow = wrap count != 0) and, from bit 4 up, the
              net wrap count (two's complement; its sign is the true sum's sign
              on overflow), m_axis_tdata = 0, tlast on lane 15
    policy 1  one beat: m_axis_tdata = the 16 FP32 sums (lane i at bits 32i+31..32i,
              +0 where nothing arrived), m_axis_tuser 0, tlast 1
A Kulisch range takes 16 cycles to read, an FP32 range one (both stall input
issue only for those cycles).  A 4-entry output queue with credits absorbs
m_axis backpressure; nothing is lost.

Bad input is dropped and sets the sticky index_error output: elements whose index
is >= CAPACITY, beats whose count is 0 or above the format's beat size (64/32/16),
and read commands for a range >= CAPACITY/16.

Parameters:
    CAPACITY      elements held (a multiple of 16, 16 .. 4096); rows per lane = CAPACITY/16
    FP32_LATENCY  latency of the FP32 adders (1 .. 4, hdl/arith/fp32_add.py); sets the
                  reservation window
    PATHS         "both" (default), "kulisch" or "fp32": which accumulation RAMs
                  are built (policy must select a built one)

Ports (widths come from the signals; a bus converts to the ports `<bus>_<field>`,
s_axis_tdata ... s_axis_format, m_axis_tdata ... m_axis_tstate):
    clk, rst          clock; synchronous active-high reset (ResetSignal); a reset empties
                      the FP32 ranges; Kulisch ranges are emptied by reading them out
    policy            in: 0 KULISCH_FIXED, 1 FP32_ARRIVAL (change only while idle and empty)
    s_axis            input beats (SliceInput)
    rd_cmd_valid      in: read out a range
    rd_cmd_ready      out
    rd_cmd_range      in: range number (>= log2(CAPACITY/16) bits, at least 1)
    m_axis            read-out (SliceReadout)
    index_error       out: sticky, an element or command was out of range
"""
from myhdl import ConcatSignal, Signal, always, always_comb, always_seq, block, intbv, modbv

from hdl.arith.fp32_arrival_lane import fp32_arrival_lane
from hdl.arith.kulisch_lane import kulisch_lane
from hdl.arith.number_decoder import number_decoder
from hdl.common.interface import AxiStream, vec
from spec.formats import KULISCH_MIN_WIDTH, KULISCH_WIDTH_DEFAULT
from spec.frames import BEAT_BITS, MAX_CAPACITY

LANES = 16
OUT_DEPTH = 4          # output queue entries (output register + 3); covers the 4-edge read pipeline


class SliceInput(AxiStream):
    """reduce_slice's input: one NumberGroup beat per transfer, an AxiStream without tlast whose
    beat carries its place and format beside tdata.

    tdata       in: 512-bit beat
    tvalid      in: a beat is offered
    tready      back: the beat is taken this cycle
    index       in: global index of the beat's first element (>= log2(CAPACITY) bits)
    count       in: elements in the beat, 7 bits (1..64)
    format      in: format code, 2 bits

    The fields are declared in this order, which is the order of the converted ports.
    """

    def __init__(self, index_width=12, data_width=BEAT_BITS):
        super().__init__(data_width, last=False)
        self.index = vec(index_width)
        self.count = vec(7)
        self.format = vec(2)

    @classmethod
    def field_names(cls):
        return tuple(vars(cls()))


class SliceReadout(AxiStream):
    """reduce_slice's read-out: an AxiStream with tuser and tlast, and an element's Kulisch state
    beside tdata.

    tdata       out: 512 bits (FP32 read-out)
    tuser       out: 4 flag bits + the net wrap counter above them (len - 4 >= 2 bits)
    tlast       out: last beat of the range
    tvalid      out: a beat is offered
    tready      back: the beat is taken this cycle
    tstate      out: W bits, W = KULISCH_W (>= 278; 320 or 280) (Kulisch read-out)

    The fields are declared in this order, which is the order of the converted ports.  The wrap
    counter holds at most 2^(len(tuser)-5) - 1 additions per element between read-outs.
    """

    def __init__(self, state_width=KULISCH_WIDTH_DEFAULT, user_width=20, data_width=BEAT_BITS):
        super().__init__(data_width, user_width=user_width)
        self.tstate = vec(state_width)

    @classmethod
    def field_names(cls):
        return tuple(vars(cls()))


@block
def reduce_slice(clk, rst, policy, s_axis: SliceInput, rd_cmd_valid, rd_cmd_ready, rd_cmd_range, m_axis: SliceReadout,
                 index_error, CAPACITY=MAX_CAPACITY, FP32_LATENCY=4, PATHS="both"):
    # ---- elaboration checks -------------------------------------------------------------
    if not (isinstance(CAPACITY, int) and LANES <= CAPACITY <= MAX_CAPACITY and CAPACITY % LANES == 0):
        raise ValueError(f"reduce_slice: CAPACITY={CAPACITY!r} must be a multiple of {LANES} in "
                         f"{LANES}..{MAX_CAPACITY} elements")
    if PATHS not in ("both", "kulisch", "fp32"):
        raise ValueError(f"reduce_slice: PATHS={PATHS!r}; choose 'both', 'kulisch' or 'fp32'")
    if FP32_LATENCY not in (1, 2, 3, 4):
        raise ValueError(f"reduce_slice: FP32_LATENCY={FP32_LATENCY!r}; fp32_add supports 1..4")
    WRAP_BITS = len(m_axis.tuser) - 4
    if WRAP_BITS < 2:
        raise ValueError(f"reduce_slice: m_axis_tuser is {len(m_axis.tuser)} bits; it carries 4 flag bits and "
                         "a wrap counter of at least 2 bits")
    # the loop holds buses, not signals: a local bound to a signal would give it its name in the Verilog
    for name, bus in (("s_axis", s_axis), ("m_axis", m_axis)):
        if len(bus.tdata) != BEAT_BITS:
            raise ValueError(f"reduce_slice: {name}_tdata is {len(bus.tdata)} bits; a beat is {BEAT_BITS}")
    W = len(m_axis.tstate)
    if W < KULISCH_MIN_WIDTH:
        raise ValueError(f"reduce_slice: m_axis_tstate is {W} bits; KULISCH_W must be >= {KULISCH_MIN_WIDTH} "
                         "(320 or 280)")
    ROWS = CAPACITY // LANES
    RB = max(1, (ROWS - 1).bit_length())              # row address bits
    IB = len(s_axis.index)
    if (1 << IB) < CAPACITY:
        raise ValueError(f"reduce_slice: s_axis_index is {IB} bits; it must address CAPACITY={CAPACITY} elements")
    if len(rd_cmd_range) < RB:
        raise ValueError(f"reduce_slice: rd_cmd_range is {len(rd_cmd_range)} bits; {ROWS} ranges need {RB}")
    if len(s_axis.count) != 7 or len(s_axis.format) != 2:
        raise ValueError("reduce_slice: s_axis_count must be 7 bits, s_axis_format 2")
    KULISCH = PATHS in ("both", "kulisch")
    FP32 = PATHS in ("both", "fp32")

    L = FP32_LATENCY
    RW = IB - 4 + 2                                   # wide row arithmetic (range of any index, +1 spare)
    E = LANES + 4 + RW                                # history entry: row | start lane | lane mask
    HB = L * E
    ALL_LANES = (1 << LANES) - 1
    MASK32 = 0xFFFFFFFF
    UW = len(m_axis.tuser)
    QW = BEAT_BITS + W + UW + 1                       # queue word: last | tuser | state | data
    ST_LO, FL_LO, LAST_BIT = BEAT_BITS, BEAT_BITS + W, BEAT_BITS + W + UW

    # ---- signals between the front end and the lanes --------------------------------------
    k_valid = Signal(intbv(0)[LANES:])                # Kulisch lane op valid, one bit per lane
    f_valid = Signal(intbv(0)[LANES:])                # FP32 lane op valid
    lane_rows = Signal(intbv(0)[LANES * RB:])         # row per lane
    elem_bits = Signal(intbv(0)[BEAT_BITS:])          # element per lane, right-aligned in 32 bits
    issue_fmt = Signal(intbv(0)[2:])
    op_read = Signal(bool(0))
    op_accumulate = Signal(bool(0))
    zero_wraps = Signal(intbv(0)[WRAP_BITS:])

    running = Signal(bool(0))
    h_valid, n_valid = Signal(bool(0)), Signal(bool(0))          # issuing beat, next beat
    # a buffered beat: {format, count, index, data}, as the input presents it
    IN_W = BEAT_BITS + IB + 9
    s_axis_beat = ConcatSignal(s_axis.format, s_axis.count, s_axis.index, s_axis.tdata)
    h_beat, n_beat = Signal(intbv(0)[IN_W:]), Signal(intbv(0)[IN_W:])
    h_data, h_index = h_beat(BEAT_BITS, 0), h_beat(BEAT_BITS + IB, BEAT_BITS)
    h_count, h_fmt = h_beat(IN_W - 2, BEAT_BITS + IB), h_beat(IN_W, IN_W - 2)
    h_sub = Signal(intbv(0)[2:])
    hist = Signal(modbv(0)[HB:])                      # last L issued sub-beats (newest lowest)
    ro_pending, ro_active = Signal(bool(0)), Signal(bool(0))
    ro_fp32 = Signal(bool(0))
    ro_row = Signal(intbv(0)[RB:])
    ro_lane = Signal(intbv(0)[5:])
    reserved = Signal(intbv(0)[4:])                   # read-out entries issued and not yet popped
    out_valid = Signal(bool(0))
    error = Signal(bool(0))

    # ---- lanes ---------------------------------------------------------------------------
    insts = []
    no_clear = Signal(bool(0))      # the slice empties a range by reading it out (a reset empties all)
    k_rd_valid, k_rd_state, k_rd_nan, k_rd_pinf, k_rd_ninf, k_rd_wraps = [], [], [], [], [], []
    f_rd_valid, f_rd_value = [], []
    for lane in range(LANES):
        # (names unlike any variable inside the sub-blocks: Verilog scoping would shadow them)
        lane_term = Signal(modbv(0)[W:])
        lane_nan, lane_pinf, lane_ninf = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
        lane_fp32 = Signal(intbv(0)[32:])
        insts.append(number_decoder(elem_bits(32 * lane + 32, 32 * lane), issue_fmt, lane_term, lane_nan,
                                    lane_pinf, lane_ninf, lane_fp32, TERM=KULISCH))
        row = lane_rows(RB * lane + RB, RB * lane)
        if KULISCH:
            rv, rrow, rst_, rn, rp, rm, rw = (Signal(bool(0)), Signal(intbv(0)[RB:]), Signal(intbv(0)[W:]),
                                             Signal(bool(0)), Signal(bool(0)), Signal(bool(0)),
                                             Signal(intbv(0)[WRAP_BITS:]))
            insts.append(kulisch_lane(clk, rst, k_valid(lane), row, op_accumulate, op_read, lane_term, lane_nan,
                                      lane_pinf, lane_ninf,
                                      zero_wraps, rv, rrow, rst_, rn, rp, rm, rw, ROWS=ROWS))
        else:
            rv, rst_, rn, rp, rm, rw = (Signal(bool(0)), Signal(intbv(0)[W:]), Signal(bool(0)), Signal(bool(0)),
                                        Signal(bool(0)), Signal(intbv(0)[WRAP_BITS:]))
        k_rd_valid.append(rv)
        k_rd_state.append(rst_)
        k_rd_nan.append(rn)
        k_rd_pinf.append(rp)
        k_rd_ninf.append(rm)
        k_rd_wraps.append(rw)
        fv, fval = Signal(bool(0)), Signal(intbv(0)[32:])
        if FP32:
            insts.append(fp32_arrival_lane(clk, rst, no_clear, f_valid(lane), row, op_read, lane_fp32, fv, fval,
                                           ROWS=ROWS, LATENCY=L))
        f_rd_valid.append(fv)
        f_rd_value.append(fval)

    def packed(sigs):     # lane 0 in the least significant position
        return ConcatSignal(*reversed(sigs))

    k_rd_valid_all = packed(k_rd_valid)
    k_rd_state_all = packed(k_rd_state)
    k_rd_nan_all, k_rd_pinf_all, k_rd_ninf_all = packed(k_rd_nan), packed(k_rd_pinf), packed(k_rd_ninf)
    k_rd_wraps_all = packed(k_rd_wraps)
    f_rd_value_all = packed(f_rd_value)
    f_rd_valid0 = f_rd_valid[0]

    def lane_halves(mask, start):
        """{lanes >= start, lanes < start} of a sub-beat's lane mask: a sub-beat starting at lane
        `start` puts lanes >= start in its first row and lanes < start in the next one."""
        low = modbv(0)[LANES:]
        halves = intbv(0)[2 * LANES:]
        low[:] = (1 << start) - 1
        halves[LANES:0] = mask & low
        halves[2 * LANES:LANES] = mask & (low ^ ALL_LANES)
        return halves

    # ---- front end: input buffer, sub-beat issue, reservations, read-out sequencing -------------
    @always_seq(clk.posedge, reset=rst)
    def front_end():
        res = intbv(0)[4:]
        kv = intbv(0)[LANES:]
        fv_ = intbv(0)[LANES:]
        rows = modbv(0)[LANES * RB:]
        bits = modbv(0)[BEAT_BITS:]
        rd = bool(0)
        acc = bool(0)
        fmt = intbv(0)[2:]
        ent = modbv(0)[E:]
        hent = modbv(0)[E:]
        c_mask = intbv(0)[LANES:]
        c_row = modbv(0)[RW:]
        c_row1 = modbv(0)[RW:]
        c_start = intbv(0)[4:]
        c_halves = intbv(0)[2 * LANES:]
        h_row = modbv(0)[RW:]
        h_row1 = modbv(0)[RW:]
        h_halves = intbv(0)[2 * LANES:]
        window = modbv(0)[BEAT_BITS:]
        slot = modbv(0)[32:]
        k = modbv(0)[4:]
        e = intbv(0)[7:]
        row_l = modbv(0)[RW:]
        sub = intbv(0)[2:]
        last_sub = modbv(0)[2:]
        shamt = intbv(0)[10:]
        nv = bool(0)
        beat_max = intbv(0)[7:]
        ebits = intbv(0)[3:]
        emask = intbv(0)[32:]
        conflict = bool(0)
        issued = bool(0)
        h_free = bool(0)
        hv = bool(0)
        err = bool(0)
        check = bool(0)

        running.next = 1
        err = bool(error)
        res[:] = reserved
        if out_valid and m_axis.tready:
            res[:] = res - 1
        kv[:] = 0
        fv_[:] = 0
        rows[:] = 0
        bits[:] = 0
        rd = False
        fmt[:] = h_fmt
        ent[:] = 0
        issued = False
        check = False
        c_mask[:] = 0

        # candidate for this edge: a read-out, or the held beat's current sub-beat
        if ro_active:
            c_row[:] = ro_row
            c_start[:] = 0
            c_mask[:] = ALL_LANES
            check = bool(ro_fp32)
        elif h_valid:
            sub[:] = h_sub
            c_row[:] = (h_index >> 4) + sub
            c_start[:] = h_beat[BEAT_BITS + 4:BEAT_BITS]      # the low bits of h_index
            if h_fmt == 0:
                ebits[:] = 3
                emask[:] = 0xFF
            elif h_fmt == 3:
                ebits[:] = 5
                emask[:] = MASK32
            else:
                ebits[:] = 4
                emask[:] = 0xFFFF
            shamt[:] = sub << 4
            shamt[:] = shamt << ebits
            window[:] = h_data >> shamt
            for lane in range(LANES):
                k[:] = lane - c_start
                e[:] = (sub << 4) + k
                row_l[:] = c_row
                if lane < c_start:
                    row_l[:] = c_row + 1
                if e < h_count:
                    if row_l < ROWS:
                        c_mask[lane] = 1
                        shamt[:] = k
                        shamt[:] = shamt << ebits
                        slot[:] = (window >> shamt) & emask
                        bits[:] = bits | (slot << (32 * lane))
                        rows[:] = rows | (row_l[RB:0] << (RB * lane))
                    else:
                        err = True
            check = bool(policy)

        # per-lane reservations (FP32_ARRIVAL): lanes >= start use row c_row, lanes < start c_row + 1
        conflict = False
        if check:
            c_halves[:] = lane_halves(c_mask, c_start)
            c_row1[:] = c_row + 1
            for i in range(L):
                hent[:] = hist >> (E * i)
                h_halves[:] = lane_halves(hent[LANES:0], hent[LANES + 4:LANES])
                h_row[:] = hent[E:LANES + 4]
                h_row1[:] = h_row + 1
                if c_row == h_row and (c_halves & h_halves) != 0:
                    conflict = True
                if c_row == h_row1 and (c_halves[2 * LANES:LANES] & h_halves[LANES:0]) != 0:
                    conflict = True
                if c_row1 == h_row and (c_halves[LANES:0] & h_halves[2 * LANES:LANES]) != 0:
                    conflict = True

        # issue
        if ro_active:
            if not conflict and res < OUT_DEPTH:
                issued = True
                rd = True
                res[:] = res + 1
                for lane in range(LANES):
                    rows[:] = rows | (ro_row << (RB * lane))
                if ro_fp32:
                    fv_[:] = ALL_LANES
                    ent[LANES:0] = ALL_LANES
                    ent[E:LANES + 4] = c_row
                    ro_active.next = 0
                else:
                    kv[:] = 1 << ro_lane[4:0]
                    if ro_lane == LANES - 1:
                        ro_active.next = 0
                    ro_lane.next = ro_lane + 1
        elif h_valid and not conflict:
            issued = True
            if policy:
                fv_[:] = c_mask
                ent[LANES:0] = c_mask
                ent[LANES + 4:LANES] = c_start
                ent[E:LANES + 4] = c_row
            else:
                kv[:] = c_mask
        acc = not rd

        # input buffer: the issuing entry frees after its last sub-beat; the next one moves up
        hv = bool(h_valid)
        last_sub[:] = (h_count - 1) >> 4
        h_free = not h_valid
        if h_valid and not ro_active and not conflict:
            if h_sub == last_sub:
                h_free = True
            else:
                h_sub.next = h_sub + 1
        if h_free:
            hv = False
            if n_valid:
                hv = True
                h_beat.next = n_beat
                h_sub.next = 0
        nv = bool(n_valid) and not h_free
        if s_axis.format == 0:
            beat_max[:] = 64
        elif s_axis.format == 3:
            beat_max[:] = 16
        else:
            beat_max[:] = 32
        if s_axis.tvalid and s_axis.tready and (s_axis.count == 0 or s_axis.count > beat_max):
            err = True                     # malformed beat: taken and dropped
        elif s_axis.tvalid and s_axis.tready:
            if not hv:
                hv = True
                h_beat.next = s_axis_beat
                h_sub.next = 0
            else:
                nv = True
                n_beat.next = s_axis_beat
        h_valid.next = hv
        n_valid.next = nv

        # read-out commands wait for every admitted beat to be issued
        if ro_pending and not h_valid and not n_valid and not ro_active:
            ro_pending.next = 0
            ro_active.next = 1
            ro_lane.next = 0
        if rd_cmd_valid and rd_cmd_ready:
            if rd_cmd_range < ROWS:
                ro_pending.next = 1
                ro_row.next = rd_cmd_range[RB:0]
                ro_fp32.next = policy
            else:
                err = True

        hist.next = (hist << E) | ent
        reserved.next = res
        error.next = err
        k_valid.next = kv
        f_valid.next = fv_
        lane_rows.next = rows
        elem_bits.next = bits
        issue_fmt.next = fmt
        op_read.next = rd
        op_accumulate.next = acc

    @always_comb
    def handshake():
        s_axis.tready.next = running and not n_valid and not ro_pending and not ro_active
        rd_cmd_ready.next = running and not ro_pending and not ro_active
        m_axis.tvalid.next = out_valid
        index_error.next = error

    # ---- output queue -----------------------------------------------------------------------
    queue = [Signal(modbv(0)[QW:]) for _ in range(OUT_DEPTH - 1)]
    out_count = Signal(intbv(0)[3:])

    @always(clk.posedge)
    def output_queue():
        n = intbv(0)[3:]
        word = modbv(0)[QW:]
        head = modbv(0)[QW:]
        st = modbv(0)[W:]
        wr = modbv(0)[WRAP_BITS:]
        push = bool(0)
        n[:] = out_count
        if out_valid and m_axis.tready:
            if n >= 2:
                head[:] = queue[0]
                m_axis.tdata.next = head[BEAT_BITS:0]
                m_axis.tstate.next = head[FL_LO:ST_LO]
                m_axis.tuser.next = head[LAST_BIT:FL_LO]
                m_axis.tlast.next = head[LAST_BIT]
                for i in range(OUT_DEPTH - 2):
                    queue[i].next = queue[i + 1]
            n[:] = n - 1
        push = False
        word[:] = 0
        if k_rd_valid_all != 0:
            push = True
            for lane in range(LANES):
                if k_rd_valid_all[lane]:
                    st[:] = k_rd_state_all >> (W * lane)
                    wr[:] = k_rd_wraps_all >> (WRAP_BITS * lane)
                    word[FL_LO:ST_LO] = st
                    word[FL_LO] = k_rd_nan_all[lane]
                    word[FL_LO + 1] = k_rd_pinf_all[lane]
                    word[FL_LO + 2] = k_rd_ninf_all[lane]
                    word[FL_LO + 3] = wr != 0
                    word[LAST_BIT:FL_LO + 4] = wr
                    word[LAST_BIT] = lane == LANES - 1
        elif f_rd_valid0:
            push = True
            word[BEAT_BITS:0] = f_rd_value_all
            word[LAST_BIT] = 1
        if push:
            if n == 0:
                m_axis.tdata.next = word[BEAT_BITS:0]
                m_axis.tstate.next = word[FL_LO:ST_LO]
                m_axis.tuser.next = word[LAST_BIT:FL_LO]
                m_axis.tlast.next = word[LAST_BIT]
            else:
                queue[n - 1].next = word
            n[:] = n + 1
        if rst:
            n[:] = 0
        out_count.next = n
        out_valid.next = n != 0

    return insts, front_end, handshake, output_queue
