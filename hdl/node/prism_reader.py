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

Logic depth: group.ready comes through prism_arrival_banks' grant, the node's
deepest path, so it is only the registers' enable.  The consumer keeps it high
while no group is presented (valid low), so it is the issue stage's advance as
it is: every register but the two release pulses holds unless it is high, and
takes then a next state computed without it; the group's fields are loaded
whether or not the RAM stage holds a range (they are read only while valid).
The order bus is registered from that next state; the RAM address is one of two
formed ahead (the stage holding or advancing, `bank_read.raddr_hold` and `raddr`),
and the ingress picks by the ready (`bank_read.advance`), one LUT before its RAM.
The beats of the two steps are kept as counters (a step is one beat in every
format), so neither address waits for a shift by the format.

Ports (buses in hdl/node/prism_buses.py):
    clk, rst        clock; synchronous active-high reset
    bank_read       BankRead from the ingress: the admitted-frame queue (avail, bank, header >= 96 bits:
                    offset [60:48], n [76:64], format [38:36]; next_avail, next_bank, next_header: a second
                    frame behind it, started right after the first) and the bank RAM (out: raddr and
                    raddr_hold = {bank, beat} = 8 bits + the width of bank, the address if the issue
                    stage advances and if it holds, and advance, which picks; rdata 512 bits, one cycle
                    after the address; out: release, pulse, the frame has been read and its bank is free)
    group           out: IssueGroup (ready is an input: the arithmetic takes the group this cycle; it must
                    be high while valid is low, as prism_arrival_banks and the KULISCH_FIXED path keep it)
    order           FrameOrder: may_start is an input (FP32_ARRIVAL: this port's frame is next in
                    admission order); out: start (a frame started at the last clock edge), and
                    the running frame (active, seq, lo, hi, next_range: the frame of the group presented,
                    or between frames the one starting) and the pending one (pend, pseq, plo, phi: started
                    behind it, nothing taken yet; without these a younger frame on the other port could
                    overtake it).  The node orders FP32_ARRIVAL contributions of two ports with these.
    seq_in          the start number the node gives a frame starting now (4 bits)
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, concat, intbv, modbv

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
    if len(group.lanes) != LANES or len(group.row) != 8 or len(bank_read.raddr) != 8 + len(bank_read.bank) \
            or len(bank_read.raddr_hold) != len(bank_read.raddr):
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
    # the frame's elements from step s1_k on (n_elem - 16 s1_k) and from next_k on, kept as the steps
    # move so a group's lanes need no subtraction (an EXACT frame does not read them)
    s1_rem, next_rem = Signal(modbv(0)[14:]), Signal(modbv(0)[14:])
    # the bank beats of steps s1_k and next_k (a step is one beat in every format), kept as counters so
    # the RAM address needs no shift by the format: the ready picks between two registers
    s1_beat, next_beat = Signal(modbv(0)[8:]), Signal(modbv(0)[8:])
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

    pre_start = Signal(bool(0))           # a frame would start at this edge if the issue stage advances
    start = Signal(bool(0))               # a frame starts at this edge (from the queue head when IDLE,
                                          # else the second queue entry right behind the current frame)
    release_wait = Signal(bool(0))        # a release was just issued: the ingress queue has not moved yet
    s1_seq, out_seq = Signal(intbv(0)[len(seq_in):]), Signal(intbv(0)[len(seq_in):])
    out_lo, out_hi = Signal(intbv(0)[9:]), Signal(intbv(0)[9:])

    @always_comb
    def read_ahead():
        # everything the edge needs but group.ready, from registers and the ingress' queue: group.ready
        # (through prism_arrival_banks' grant, the deepest input) then only enables the registers and
        # picks one of the two RAM addresses, in the ingress, one LUT before its RAM
        behind = bool(0)
        # a start right behind the current frame, its address formed below
        behind = state == LAST and bank_read.next_avail and order.may_start and not release_wait
        pre_start.next = (state == IDLE and bank_read.avail and order.may_start and not release_wait) or behind
        if state == IDLE:
            bank_read.raddr_hold.next = concat(bank_read.bank, intbv(0)[8:])
            bank_read.raddr.next = concat(bank_read.bank, intbv(0)[8:])
        else:
            bank_read.raddr_hold.next = concat(bank, s1_beat)
            if behind:
                bank_read.raddr.next = concat(bank_read.next_bank, intbv(0)[8:])
            elif state == RUN:
                bank_read.raddr.next = concat(bank, next_beat)
            else:
                bank_read.raddr.next = concat(bank, s1_beat)

    @always_comb
    def read_address():
        # group.ready is 1 while no group is presented (the consumer's contract, see the ports): it is the
        # stage's advance as it is, with no LUT before the registers' enables or the ingress's address pick
        advance.next = group.ready
        bank_read.advance.next = group.ready
        start.next = pre_start and group.ready

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
        # the stages' next state as variables, so the order bus can be registered from it
        ov = bool(0)
        sv = bool(0)
        oseq = intbv(0)[len(seq_in):]
        sseq = intbv(0)[len(seq_in):]
        olo = intbv(0)[9:]
        ohi = intbv(0)[9:]
        frow = intbv(0)[8:]
        rng = intbv(0)[9:]
        grow = intbv(0)[8:]
        ov = bool(out_valid)
        sv = bool(s1_valid)
        oseq[:] = out_seq
        sseq[:] = s1_seq
        olo[:] = out_lo
        ohi[:] = out_hi
        frow[:] = first_row
        rng[:] = ranges
        grow[:] = group.row
        # a starting frame's header: the queue head when IDLE, else the entry behind it
        if state == IDLE:
            hdr[:] = bank_read.header[HDR_BITS:0]
        else:
            hdr[:] = bank_read.next_header[HDR_BITS:0]
        n[:] = hdr[F_N_END:F_N_LSB]
        off[:] = hdr[F_OFFSET_END:F_OFFSET_LSB]
        rows[:] = (n + 15) >> 4
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
        # the next state if the issue stage advances, computed without group.ready: the issue stage
        # takes what the RAM stage holds
        ov = bool(s1_valid)
        if s1_valid:
            oseq[:] = s1_seq
            olo[:] = first_row
            ohi[:] = first_row + ranges
            if exact:
                grow[:] = first_row + s1_k[9:4]
            else:
                grow[:] = first_row + s1_k[8:0]
        if pre_start:
            frow[:] = off[12:4]
            rng[:] = rows
            sv = True
            sseq[:] = seq_in
        elif state == RUN:
            sv = True
        elif state == LAST:
            sv = False
        # the group the RAM stage's range makes (formed whether or not the stage holds one: the group is
        # read only while group.valid is high)
        if exact:
            # one partial: lane s1_k % 16 of range s1_k // 16; the range ends at lane 15 or at the
            # frame's last element
            lane[:] = s1_k[4:0]
            mask[:] = 0
            mask[lane] = 1
            ends[:] = 0
            if lane == 15 or s1_k + 1 == n_elem:
                ends[0] = 1
        else:
            # elements in the group: a whole group (16 per range) or the frame's tail
            rem[:] = s1_rem
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
        # group.ready, through prism_arrival_banks' grant the deepest input, is 1 while no group is
        # presented, so it is the issue stage's advance: it is every register's enable and no more (the
        # valid bits and the state also have the reset; the release pulses are one LUT from it)
        if rst:
            state.next = IDLE
            out_valid.next = 0
            s1_valid.next = 0
            group.valid.next = 0
            order.active.next = 0
            order.pend.next = 0
            bank_read.release.next = 0
            release_wait.next = 0
        else:
            # the frame's last range leaves the RAM stage: free its bank (a frame behind it may start
            # at the same edge)
            bank_read.release.next = advance and state == LAST
            release_wait.next = advance and state == LAST
            if advance:
                out_valid.next = ov
                s1_valid.next = sv
                group.valid.next = ov
                # the order bus, registered: the frame of the group presented next cycle (between
                # frames the one starting) and the frame started behind it with nothing taken yet
                order.active.next = ov or sv
                order.pend.next = ov and sv and sseq != oseq
                if pre_start:
                    if st <= gs:
                        state.next = LAST
                    else:
                        state.next = RUN
                elif state == RUN:
                    if next_k + gstep >= steps:
                        state.next = LAST
                elif state == LAST:
                    state.next = IDLE
        if advance:
            # not reset: each is read only while the valid bits above say so
            group.last.next = s1_k + gstep >= steps
            group.lanes.next = mask
            group.ends.next = ends
            if fmt == FMT_FP32 or exact:
                group.data.next = chunk
            elif fmt == FMT_INT8:
                group.data.next = lanes8
            else:
                group.data.next = lanes16
            group.row.next = grow
            out_seq.next = oseq
            s1_seq.next = sseq
            out_lo.next = olo
            out_hi.next = ohi
            first_row.next = frow
            ranges.next = rng
            order.pseq.next = sseq
            order.plo.next = frow
            order.phi.next = frow + rng
            if ov:
                order.seq.next = oseq
                order.lo.next = olo
                order.hi.next = ohi
                order.next_range.next = grow
            else:
                order.seq.next = sseq
                order.lo.next = frow
                order.hi.next = frow + rng
                order.next_range.next = frow
            if pre_start:
                if state == IDLE:
                    bank.next = bank_read.bank
                else:
                    bank.next = bank_read.next_bank
                fmt.next = hdr[F_DATA_FORMAT_LSB + 2:F_DATA_FORMAT_LSB]
                exact.next = hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB] == FMT_EXACT
                n_elem.next = n
                steps.next = st
                gstep.next = gs
                s1_k.next = 0
                next_k.next = gs
                s1_beat.next = 0
                next_beat.next = 1
                s1_rem.next = n
                next_rem.next = n - (gs << 4)
            elif state == RUN:
                s1_k.next = next_k
                next_k.next = next_k + gstep
                s1_beat.next = next_beat
                next_beat.next = next_beat + 1
                s1_rem.next = next_rem
                next_rem.next = next_rem - (gstep << 4)
        # a frame started at this edge (registered: prism_control's admission-order queue drops it at
        # the next edge, and the node reads the entry behind it meanwhile)
        if rst:
            order.start.next = 0
        else:
            order.start.next = start

    return read_ahead, read_address, select_ranges, issue_groups
