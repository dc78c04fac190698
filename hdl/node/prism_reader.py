"""PRISM NumberGroup reader and dispatcher for one receive port.

Phase 3 of the SINGLE node.  Rereads an admitted DATA frame from its frame bank
and turns it into issue groups of consecutive 16-element ranges: the
dispatcher's unit, because arithmetic ownership follows the global element
index (element i -> range i // 16, lane i % 16), not packet boundaries.  A
512-bit beat holds 16 FP32, 32 FP16/BF16 or 64 INT8 elements, i.e. 1, 2 or 4
ranges.  Frame offsets are multiples of 16, so a beat's ranges are consecutive.

One group per beat: all the ranges of a beat in one cycle (4 ranges INT8, 2
FP16/BF16, 1 FP32), so one beat per cycle in every format.  Group element e
(0 .. 63) belongs to range group.row + e // 16, lane e % 16; the frame's last
group may hold fewer ranges and a partial last range (group.lanes).  The
`order` bus describes the frames for the node's FP32_ARRIVAL admission-order
logic.

Each element is right-aligned in a 32-bit field of `group.data` (group element e
at [32e + 31 : 32e]).

An EXACT frame (Kulisch partials, one per beat) is read one beat per group: the
group holds one lane of one range (`lanes` has that lane's bit, `data` the whole
beat at [511:0]), and `ends` marks the beat that completes the frame's part of
its range (lane 15, or the frame's last element).

Pipeline: the bank RAM read (one cycle) feeds a registered issue stage; the
RAM address is chosen combinationally from whether the issue stage advances,
so one group per cycle is sustained under `group.ready` backpressure and no group
is issued twice or skipped.  The bank is released when the frame's last group
has left the RAM stage (so a new frame can never overwrite a beat still needed),
and the next admitted frame starts in that same cycle when it is already
queued, so back-to-back frames leave no gap in the issue stream.

Ports (buses in hdl/node/prism_buses.py):
    clk, rst        clock; synchronous active-high reset
    bank_read       BankRead from the ingress: the admitted-frame queue (avail, bank, header >= 96 bits:
                    offset [60:48], n [76:64], format [38:36]; next_avail, next_bank, next_header: a second
                    frame behind it, started right after the first) and the bank RAM (out: raddr =
                    {bank, beat} = 8 bits + the width of bank; rdata 512 bits, one cycle after raddr;
                    out: release, pulse, the frame has been read and its bank is free)
    group           out: IssueGroup (ready is an input: the arithmetic takes the group this cycle)
    order           FrameOrder: may_start is an input (FP32_ARRIVAL: this port's frame is next in
                    admission order); out: start (a frame starts at this clock edge, combinational), and
                    the running frame (active, seq, lo, hi, next_range: the frame of the group presented,
                    or between frames the one starting) and the pending one (pend, pseq, plo, phi: started
                    behind it, nothing taken yet; without these a younger frame on the other port could
                    overtake it).  The node orders FP32_ARRIVAL contributions of two ports with these.
    seq_in          the start number the node gives a frame starting now (4 bits)
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, concat, intbv

from spec.formats import FMT_EXACT, FMT_FP32, FMT_INT8
from spec.frames import (F_DATA_FORMAT_END, F_DATA_FORMAT_LSB, F_N_END, F_N_LSB, F_OFFSET_END,
                         F_OFFSET_LSB, HDR_BITS)

IDLE, RUN, LAST = 0, 1, 2
LANES = 64                                # lane fields of an issue group: a whole INT8 beat
ALL_LANES = (1 << LANES) - 1


@block
def prism_reader(clk, rst, bank_read, group, order, seq_in):
    if len(bank_read.rdata) != 512:
        raise ValueError("prism_reader: bank_read.rdata is a 512-bit beat")
    if len(group.data) != 32 * LANES:
        raise ValueError(f"prism_reader: group.data is {LANES} x 32-bit lane fields ({32 * LANES} bits)")
    if len(group.lanes) != LANES or len(group.row) != 8 or len(bank_read.raddr) != 8 + len(bank_read.bank):
        raise ValueError(f"prism_reader: group.lanes {LANES} bits, group.row 8 bits, bank_read.raddr = {{bank_read.bank, beat[7:0]}}")
    if len(bank_read.header) < HDR_BITS:
        raise ValueError(f"prism_reader: bank_read.header needs the low {HDR_BITS} header bits")

    state = Signal(intbv(0)[2:])
    bank = Signal(intbv(0)[len(bank_read.bank):])
    fmt = Signal(intbv(0)[2:])
    exact = Signal(bool(0))               # an EXACT frame: k counts beats (elements), not ranges
    next_k = Signal(intbv(0)[9:])         # next step (range, or EXACT beat) of the frame to read
    ranges = Signal(intbv(0)[9:])         # ranges in the frame
    steps = Signal(intbv(0)[9:])          # steps of the frame: its ranges, or an EXACT frame's beats
    first_row = Signal(intbv(0)[8:])
    n_elem = Signal(intbv(0)[14:])        # elements in the frame
    gstep = Signal(intbv(1)[3:])          # ranges per issue group: a whole beat (FP32 1, FP16/BF16 2, INT8 4)
    s1_valid = Signal(bool(0))            # RAM stage: bank_read.rdata belongs to range s1_k
    s1_k = Signal(intbv(0)[9:])
    advance = Signal(bool(0))
    out_valid = Signal(bool(0))
    chunk = Signal(intbv(0)[512:])        # the beat shifted so the range sits at bit 0

    def lane_fields(elem_bits):
        """The beat's elements one per 32-bit lane, each in its lane's low bits.  The bits above an
        element are copies of it and the lanes past the beat's last element copies of the lanes
        below, not zeros: no decoder reads them (each takes its format's low bits, and the lanes
        mask leaves the unused lanes out), and a constant there would be logic no test can see."""
        lanes = 512 // elem_bits
        parts = []
        for lane in reversed(range(lanes)):
            parts += [chunk(elem_bits * lane + elem_bits, elem_bits * lane)] * (32 // elem_bits)
        # one flat concatenation of slices of chunk: a ConcatSignal inside another converts as
        # its initial value, a constant
        return ConcatSignal(*(parts * (LANES // lanes)))

    lanes8 = lane_fields(8)
    lanes16 = lane_fields(16)

    start_idle = Signal(bool(0))          # start the queue head from IDLE
    start_next = Signal(bool(0))          # start the second queue entry right behind the current frame
    release_wait = Signal(bool(0))
    s1_seq, out_seq = Signal(intbv(0)[len(seq_in):]), Signal(intbv(0)[len(seq_in):])
    out_lo, out_hi = Signal(intbv(0)[9:]), Signal(intbv(0)[9:])        # a release was just issued: the ingress queue has not moved yet

    @always_comb
    def read_address():
        beat = intbv(0)[9:]
        k = intbv(0)[9:]
        adv = not out_valid or group.ready
        advance.next = adv
        s_idle = state == IDLE and bank_read.avail and order.may_start and adv and not release_wait
        s_next = state == LAST and adv and bank_read.next_avail and order.may_start and not release_wait
        start_idle.next = s_idle
        start_next.next = s_next
        order.start.next = s_idle or s_next
        if state == RUN and adv:
            k[:] = next_k
        else:
            k[:] = s1_k
        if fmt == FMT_FP32 or exact:
            beat[:] = k
        elif fmt == FMT_INT8:
            beat[:] = k >> 2
        else:
            beat[:] = k >> 1
        if state == IDLE:
            bank_read.raddr.next = concat(bank_read.bank, intbv(0)[8:])
        elif s_next:
            bank_read.raddr.next = concat(bank_read.next_bank, intbv(0)[8:])
        else:
            bank_read.raddr.next = concat(bank, beat[8:0])

    @always_comb
    def select_ranges():
        sub = intbv(0)[2:]
        sub[:] = s1_k[2:0]
        if fmt == FMT_FP32 or exact:
            chunk.next = bank_read.rdata
        elif fmt == FMT_INT8:
            chunk.next = bank_read.rdata >> (sub * 128)
        else:
            chunk.next = bank_read.rdata >> (sub[0] * 256)

    @always_comb
    def describe_frames():
        group.valid.next = out_valid
        order.active.next = out_valid or s1_valid
        order.pend.next = out_valid and s1_valid and s1_seq != out_seq
        order.pseq.next = s1_seq
        order.plo.next = first_row
        order.phi.next = first_row + ranges
        if out_valid:
            order.seq.next = out_seq
            order.lo.next = out_lo
            order.hi.next = out_hi
            order.next_range.next = group.row
        else:
            order.seq.next = s1_seq
            order.lo.next = first_row
            order.hi.next = first_row + ranges
            order.next_range.next = first_row

    @always(clk.posedge)
    def issue_groups():
        n = intbv(0)[14:]
        off = intbv(0)[14:]
        hdr = intbv(0)[HDR_BITS:]
        rows = intbv(0)[9:]
        st = intbv(0)[9:]
        rem = intbv(0)[14:]
        cnt = intbv(0)[7:]
        sh = intbv(0)[7:]
        mask = intbv(0)[LANES:]
        ends = intbv(0)[LANES // 16:]
        lane = intbv(0)[4:]
        gs = intbv(0)[3:]
        gsz = intbv(0)[7:]
        if rst:
            state.next = IDLE
            s1_valid.next = 0
            out_valid.next = 0
            bank_read.release.next = 0
            release_wait.next = 0
        else:
            bank_read.release.next = 0
            if advance:
                # issue stage takes what the RAM stage holds
                out_valid.next = s1_valid
                if s1_valid:
                    out_seq.next = s1_seq
                    out_lo.next = first_row
                    out_hi.next = first_row + ranges
                    group.last.next = s1_k + gstep >= steps
                    if exact:
                        # one partial: lane s1_k % 16 of range s1_k // 16; the range ends at lane 15
                        # or at the frame's last element
                        group.row.next = first_row + s1_k[9:4]
                        lane[:] = s1_k[4:0]
                        mask[:] = 0
                        mask[lane] = 1
                        ends[:] = 0
                        if lane == 15 or s1_k + 1 == n_elem:
                            ends[0] = 1
                    else:
                        group.row.next = first_row + s1_k[8:0]
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
                        # every range the group holds ends with it
                        for j in range(LANES // 16):
                            ends[j] = mask[16 * j]
                    group.lanes.next = mask
                    group.ends.next = ends
                    if fmt == FMT_FP32 or exact:
                        group.data.next = chunk
                    elif fmt == FMT_INT8:
                        group.data.next = lanes8
                    else:
                        group.data.next = lanes16
            release_wait.next = 0
            if start_idle or start_next:
                if start_idle:
                    hdr[:] = bank_read.header[HDR_BITS:0]
                    bank.next = bank_read.bank
                else:
                    hdr[:] = bank_read.next_header[HDR_BITS:0]
                    bank.next = bank_read.next_bank
                if start_next:
                    # the previous frame's last range leaves the RAM stage now: free its bank
                    bank_read.release.next = 1
                    release_wait.next = 1
                n[:] = hdr[F_N_END:F_N_LSB]
                off[:] = hdr[F_OFFSET_END:F_OFFSET_LSB]
                rows[:] = (n + 15) >> 4
                fmt.next = hdr[F_DATA_FORMAT_LSB + 2:F_DATA_FORMAT_LSB]
                exact.next = hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB] == FMT_EXACT
                first_row.next = off[12:4]
                ranges.next = rows
                n_elem.next = n
                # ranges per group: all the ranges of a beat (an EXACT beat: one element, a step of 1)
                gs[:] = 1
                if hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB] == FMT_INT8:
                    gs[:] = 4
                elif hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB] != FMT_FP32 and \
                        hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB] != FMT_EXACT:
                    gs[:] = 2
                if hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB] == FMT_EXACT:
                    st[:] = n[9:0]
                else:
                    st[:] = rows
                steps.next = st
                gstep.next = gs
                s1_valid.next = 1
                s1_k.next = 0
                next_k.next = gs
                s1_seq.next = seq_in
                if st <= gs:
                    state.next = LAST
                else:
                    state.next = RUN
            elif state == RUN:
                if advance:
                    s1_valid.next = 1
                    s1_k.next = next_k
                    next_k.next = next_k + gstep
                    if next_k + gstep >= steps:
                        state.next = LAST
            elif state == LAST:
                # the last range sits in the RAM stage: the bank is released once it has left
                if advance:
                    s1_valid.next = 0
                    bank_read.release.next = 1
                    release_wait.next = 1
                    state.next = IDLE

    return read_address, select_ranges, describe_frames, issue_groups
