"""PRISM NumberGroup reader and dispatcher for one receive port.

Phase 3 of the SINGLE node.  Rereads an admitted DATA frame from its frame bank
and turns it into issue groups of consecutive 16-element ranges: the
dispatcher's unit, because arithmetic ownership follows the global element
index (element i -> range i // 16, lane i % 16), not packet boundaries.  A
512-bit beat holds 16 FP32, 32 FP16/BF16 or 64 INT8 elements, i.e. 1, 2 or 4
ranges.  Frame offsets are multiples of 16, so a beat's ranges are consecutive.

One group per beat: all the ranges of a beat in one cycle (4 ranges INT8, 2
FP16/BF16, 1 FP32), so one beat per cycle in every format.  Group element e
(0 .. 63) belongs to range iss_row + e // 16, lane e % 16; the frame's last
group may hold fewer ranges and a partial last range (iss_lanes).  The frm_*
and pend_* outputs describe the frames for the node's FP32_ARRIVAL
admission-order logic.

Each element is right-aligned in a 32-bit field of `iss_data` (group element e
at [32e + 31 : 32e]).

Pipeline: the bank RAM read (one cycle) feeds a registered issue stage; the
RAM address is chosen combinationally from whether the issue stage advances,
so one group per cycle is sustained under `iss_ready` backpressure and no group
is issued twice or skipped.  The bank is released when the frame's last group
has left the RAM stage (so a new frame can never overwrite a beat still needed),
and the next admitted frame starts in that same cycle when it is already
queued, so back-to-back frames leave no gap in the issue stream.

Ports (widths from the signals):
    clk, rst        clock; synchronous active-high reset
    rd_avail        an admitted frame waits in the ingress queue
    rd_bank         its bank
    rd_header       its header (>= 96 bits: offset [60:48], n [76:64], format [37:36])
    may_start       the reader may start that frame (FP32_ARRIVAL: it is next in admission order)
    rd_release      out: pulse, the frame has been read (frees the bank)
    mem_raddr       out: bank RAM address {bank, beat} (8 bits + the width of rd_bank)
    mem_rdata       bank RAM data, one cycle after mem_raddr (512 bits)
    iss_valid       out: an issue group is presented
    iss_ready       the arithmetic takes it this cycle
    iss_row         out: its first range index (global element index // 16), 8 bits
    iss_lanes       out: 64-bit mask of the group elements present (bit e: range iss_row + e // 16, lane e % 16)
    iss_data        out: 64 x 32-bit element fields (element bits right-aligned), 2048 bits
    iss_last        out: the group is the frame's last
    rd_next_avail   a second admitted frame waits behind the first (started right after it)
    rd_next_bank    its bank
    rd_next_header  its header
    frm_start       out: a frame starts at this clock edge (combinational)
    seq_in          the start sequence number the node gives a frame starting now (4 bits)
    frm_active      out: a frame has groups not yet taken; the fields below describe it: the
                    frame of the group presented on iss_* (or, between frames, the one starting)
    frm_seq         out: its start sequence number
    frm_lo, frm_hi  out: its ranges [frm_lo, frm_hi) (9 bits each)
    frm_next        out: its lowest range not yet taken (9 bits)
                    (the node orders FP32_ARRIVAL contributions of two ports with these)
    pend_active     out: a second frame has started behind it and none of its groups is taken yet
                    (its first group waits in the RAM stage while the issue stage still holds
                    the previous frame's last group); the fields below describe it
    pend_seq        out: its start sequence number
    pend_lo, pend_hi  out: its ranges [pend_lo, pend_hi) (9 bits each)
                    (without these a younger frame on the other port could overtake it)
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, concat, intbv

from spec.formats import FMT_FP32, FMT_INT8
from spec.frames import (F_DATA_FORMAT_END, F_DATA_FORMAT_LSB, F_N_END, F_N_LSB, F_OFFSET_END,
                         F_OFFSET_LSB)

IDLE, RUN, LAST = 0, 1, 2
LANES = 64                                # lane fields of an issue group: a whole INT8 beat
ALL_LANES = (1 << LANES) - 1


@block
def prism_reader(clk, rst, rd_avail, rd_bank, rd_header, may_start, rd_release, mem_raddr, mem_rdata,
                 iss_valid, iss_ready, iss_row, iss_lanes, iss_data, iss_last,
                 frm_start, seq_in, frm_active, frm_seq, frm_lo, frm_hi, frm_next,
                 rd_next_avail, rd_next_bank, rd_next_header, pend_active, pend_seq, pend_lo, pend_hi):
    if len(mem_rdata) != 512:
        raise ValueError("prism_reader: mem_rdata is a 512-bit beat")
    if len(iss_data) != 32 * LANES:
        raise ValueError(f"prism_reader: iss_data is {LANES} x 32-bit lane fields ({32 * LANES} bits)")
    if len(iss_lanes) != LANES or len(iss_row) != 8 or len(mem_raddr) != 8 + len(rd_bank):
        raise ValueError(f"prism_reader: iss_lanes {LANES} bits, iss_row 8 bits, mem_raddr = {{rd_bank, beat[7:0]}}")
    if len(rd_header) < 96:
        raise ValueError("prism_reader: rd_header needs the low 96 header bits")

    state = Signal(intbv(0)[2:])
    bank = Signal(intbv(0)[len(rd_bank):])
    fmt = Signal(intbv(0)[2:])
    next_k = Signal(intbv(0)[9:])         # next range (within the frame) to read
    ranges = Signal(intbv(0)[9:])         # ranges in the frame
    first_row = Signal(intbv(0)[8:])
    n_elem = Signal(intbv(0)[14:])        # elements in the frame
    gstep = Signal(intbv(1)[3:])          # ranges per issue group: a whole beat (FP32 1, FP16/BF16 2, INT8 4)
    s1_valid = Signal(bool(0))            # RAM stage: mem_rdata belongs to range s1_k
    s1_k = Signal(intbv(0)[9:])
    advance = Signal(bool(0))
    out_valid = Signal(bool(0))
    chunk = Signal(intbv(0)[512:])        # the beat shifted so the range sits at bit 0

    def lane_fields(elem_bits):
        parts = []
        lanes = 512 // elem_bits
        if lanes < LANES:
            parts.append(intbv(0)[32 * (LANES - lanes):])
        for lane in reversed(range(lanes)):
            parts.append(intbv(0)[32 - elem_bits:])
            parts.append(chunk(elem_bits * lane + elem_bits, elem_bits * lane))
        return ConcatSignal(*parts)

    lanes8 = lane_fields(8)
    lanes16 = lane_fields(16)

    start_idle = Signal(bool(0))          # start the queue head from IDLE
    start_next = Signal(bool(0))          # start the second queue entry right behind the current frame
    release_wait = Signal(bool(0))
    s1_seq, out_seq = Signal(intbv(0)[len(seq_in):]), Signal(intbv(0)[len(seq_in):])
    out_lo, out_hi = Signal(intbv(0)[9:]), Signal(intbv(0)[9:])        # a release was just issued: the ingress queue has not moved yet

    @always_comb
    def address():
        beat = intbv(0)[9:]
        k = intbv(0)[9:]
        adv = not out_valid or iss_ready
        advance.next = adv
        s_idle = state == IDLE and rd_avail and may_start and adv and not release_wait
        s_next = state == LAST and adv and rd_next_avail and may_start and not release_wait
        start_idle.next = s_idle
        start_next.next = s_next
        frm_start.next = s_idle or s_next
        if state == RUN and adv:
            k[:] = next_k
        else:
            k[:] = s1_k
        if fmt == FMT_FP32:
            beat[:] = k
        elif fmt == FMT_INT8:
            beat[:] = k >> 2
        else:
            beat[:] = k >> 1
        if state == IDLE:
            mem_raddr.next = concat(rd_bank, intbv(0)[8:])
        elif s_next:
            mem_raddr.next = concat(rd_next_bank, intbv(0)[8:])
        else:
            mem_raddr.next = concat(bank, beat[8:0])

    @always_comb
    def select():
        sub = intbv(0)[2:]
        sub[:] = s1_k[2:0]
        if fmt == FMT_FP32:
            chunk.next = mem_rdata
        elif fmt == FMT_INT8:
            chunk.next = mem_rdata >> (sub * 128)
        else:
            chunk.next = mem_rdata >> (sub[0] * 256)

    @always_comb
    def outputs():
        iss_valid.next = out_valid
        frm_active.next = out_valid or s1_valid
        pend_active.next = out_valid and s1_valid and s1_seq != out_seq
        pend_seq.next = s1_seq
        pend_lo.next = first_row
        pend_hi.next = first_row + ranges
        if out_valid:
            frm_seq.next = out_seq
            frm_lo.next = out_lo
            frm_hi.next = out_hi
            frm_next.next = iss_row
        else:
            frm_seq.next = s1_seq
            frm_lo.next = first_row
            frm_hi.next = first_row + ranges
            frm_next.next = first_row

    @always(clk.posedge)
    def step():
        n = intbv(0)[14:]
        off = intbv(0)[14:]
        hdr = intbv(0)[96:]
        rows = intbv(0)[9:]
        rem = intbv(0)[14:]
        cnt = intbv(0)[7:]
        sh = intbv(0)[7:]
        mask = intbv(0)[LANES:]
        gs = intbv(0)[3:]
        gsz = intbv(0)[7:]
        if rst:
            state.next = IDLE
            s1_valid.next = 0
            out_valid.next = 0
            rd_release.next = 0
            release_wait.next = 0
        else:
            rd_release.next = 0
            if advance:
                # issue stage takes what the RAM stage holds
                out_valid.next = s1_valid
                if s1_valid:
                    out_seq.next = s1_seq
                    out_lo.next = first_row
                    out_hi.next = first_row + ranges
                    iss_row.next = first_row + s1_k[8:0]
                    iss_last.next = s1_k + gstep >= ranges
                    # elements in the group: a whole group (16 per range) or the frame's tail
                    rem[:] = n_elem - (s1_k << 4)
                    gsz[:] = gstep << 4
                    if rem >= gsz:
                        cnt[:] = gsz
                    else:
                        cnt[:] = rem[7:0]
                    sh[:] = LANES - cnt
                    mask[:] = ALL_LANES
                    mask[:] = mask >> sh
                    iss_lanes.next = mask
                    if fmt == FMT_FP32:
                        iss_data.next = chunk
                    elif fmt == FMT_INT8:
                        iss_data.next = lanes8
                    else:
                        iss_data.next = lanes16
            release_wait.next = 0
            if start_idle or start_next:
                if start_idle:
                    hdr[:] = rd_header[96:0]
                    bank.next = rd_bank
                else:
                    hdr[:] = rd_next_header[96:0]
                    bank.next = rd_next_bank
                if start_next:
                    # the previous frame's last range leaves the RAM stage now: free its bank
                    rd_release.next = 1
                    release_wait.next = 1
                n[:] = hdr[F_N_END:F_N_LSB]
                off[:] = hdr[F_OFFSET_END:F_OFFSET_LSB]
                rows[:] = (n + 15) >> 4
                fmt.next = hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB]
                first_row.next = off[12:4]
                ranges.next = rows
                n_elem.next = n
                # ranges per group: all the ranges of a beat
                gs[:] = 1
                if hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB] == FMT_INT8:
                    gs[:] = 4
                elif hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB] != FMT_FP32:
                    gs[:] = 2
                gstep.next = gs
                s1_valid.next = 1
                s1_k.next = 0
                next_k.next = gs
                s1_seq.next = seq_in
                if rows <= gs:
                    state.next = LAST
                else:
                    state.next = RUN
            elif state == RUN:
                if advance:
                    s1_valid.next = 1
                    s1_k.next = next_k
                    next_k.next = next_k + gstep
                    if next_k + gstep >= ranges:
                        state.next = LAST
            elif state == LAST:
                # the last range sits in the RAM stage: the bank is released once it has left
                if advance:
                    s1_valid.next = 0
                    rd_release.next = 1
                    release_wait.next = 1
                    state.next = IDLE

    return address, select, outputs, step
