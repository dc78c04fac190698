"""PRISM ingress for one receive port: classification, frame banks, drain path.

Phase 1 of the SINGLE node pipeline (docs/protocol.md).  Every beat offered on
s_axis is classified at its frame's header beat:

  * class 1 (CONTROL) and 2 (DATA) frames are stored whole in one of three
    frame banks (one fills while the others are validated or reread: with
    three, a frame can arrive while the previous one waits for its verdict
    and the one before is still being read, so back-to-back frames flow at
    one beat per cycle), header
    in a register, payload beats in the bank RAM (at most 256 payload beats
    are kept; longer frames are still consumed to TLAST and reported too long);
  * any other class (including RESULT, which a SINGLE node does not relay) is
    drained to TLAST without touching a bank and counted (`unsupported`).

At TLAST of a stored frame the ingress emits one `frame.valid` pulse with the
header, the beat count and the bank, and the header's digest for the control's
DATA rules (Frame in hdl/node/prism_buses.py): offset + n, the beats n elements
need, the frame's ranges and their 256-bit mask.  They are formed over the
frame's beats (registered from the header beat, the mask at the last beat), so
the control's checks start from registers; a frame's header beat always comes
before its last beat unless the frame is one beat long, and the control judges
such a DATA frame by its length alone, so only offset + n is formed from its one
beat (the rest of its digest is left over from the frame before, never read).
The node's validation stage answers exactly once (`verdict.valid`): admitted
frames join a queue that the NumberGroup reader takes in order (`bank_read`),
dropped frames free their bank.  The reader frees a bank with
`bank_read.release` when it has reread the payload.

A bank is in use from its frame's last beat until the verdict drops the frame
or the reader releases it.  The bank being filled needs no mark: banks are
filled round robin, and the next header beat (the only beat that asks whether
a bank is free) comes after the frame ends.

A new frame's header beat is only taken when a bank is free and the CONTROL
response queue has room (`room_ok`), so the validation stage never stalls and
answers frames in the order their TLAST beats were accepted.  Backpressure
never loses or repeats a beat: tready only depends on state and on the class
field of the offered header beat.  A reset drops a partly received frame and
every bank (nothing is half-admitted); `in_frame` lets the counters see it.

Ports (widths from the signals; buses in hdl/node/prism_buses.py and hdl/common/interface.py):
    clk, rst            clock; synchronous active-high reset (ResetSignal)
    s_axis              the receive port: AxiStream with tlast (the node's beats are 512 bits)
    room_ok             the CONTROL response queue has RESPONSE_MARGIN entries free (spec.frames)
    frame               out: Frame, a stored frame is complete (header >= 96 bits, beats >= 9 bits)
    verdict             Verdict: the validation stage's answer for the oldest pending frame
    status              out: PortStatus, unsupported frame drained / inside a frame
    bank_read           BankRead: the admitted-frame queue for the reader (out: avail, bank, header,
                        next_*; in: release) and the banks' read port (in: raddr or raddr_hold, as
                        advance picks; rdata out one cycle later; 10-bit {bank, beat[7:0]}, rdata as
                        wide as tdata)

Parameters:
    BANK_PAYLOAD_BEATS  payload beats per bank; must be 256 (the protocol's frame bank)
"""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

from hdl.common.interface import AxiStream
from hdl.node.prism_buses import FRAME_END_BITS, NR_BITS, ROW_BITS
from spec.formats import FMT_EXACT, FMT_FP32, FMT_INT8
from spec.frames import (CLASS_CONTROL, CLASS_DATA, F_CLASS_END, F_CLASS_LSB, F_CONTRIBUTOR_END, F_CONTRIBUTOR_LSB,
                         F_DATA_FORMAT_END, F_DATA_FORMAT_LSB, F_N_END, F_N_LSB, F_OFFSET_END, F_OFFSET_LSB, HDR_BITS,
                         MAX_RANGES, RANGE_ELEMS)

BANKS = 3


@block
def prism_ingress(clk, rst, s_axis: AxiStream, room_ok, frame, verdict, status, bank_read, BANK_PAYLOAD_BEATS=256):
    if BANK_PAYLOAD_BEATS != 256:
        raise ValueError(f"prism_ingress: BANK_PAYLOAD_BEATS={BANK_PAYLOAD_BEATS}; the protocol's frame "
                         "bank holds exactly 1 + 256 beats")
    data_width = len(s_axis.tdata)
    hdr_width = len(frame.header)
    if hdr_width < HDR_BITS or hdr_width > data_width:
        raise ValueError(f"prism_ingress: frame.header is {hdr_width} bits; it must hold {HDR_BITS}..{data_width}")
    if len(bank_read.header) != hdr_width:
        raise ValueError("prism_ingress: bank_read.header must be as wide as frame.header")
    if len(bank_read.rdata) != data_width:
        raise ValueError("prism_ingress: bank_read.rdata must be as wide as s_axis_tdata")
    if len(bank_read.raddr) != 10 or len(bank_read.raddr_hold) != 10 or len(bank_read.bank) != 2 or len(frame.bank) != 2 or len(verdict.bank) != 2:
        raise ValueError("prism_ingress: banks are numbered in 2 bits, bank_read.raddr is 10 ({bank, beat[7:0]})")
    beat_width = len(frame.beats)
    if beat_width < 9:
        raise ValueError("prism_ingress: frame.beats needs at least 9 bits")
    BEAT_MAX = (1 << beat_width) - 1
    BANK_BEATS = 1 + BANK_PAYLOAD_BEATS

    mem = [Signal(intbv(0)[data_width:]) for _ in range(BANKS * BANK_PAYLOAD_BEATS)]
    running = Signal(bool(0))
    frame_open = Signal(bool(0))
    draining = Signal(bool(0))
    beat_count = Signal(intbv(0)[beat_width:])    # beats of the current frame so far
    wr_bank = Signal(intbv(0)[2:])
    in_use = Signal(intbv(0)[BANKS:])             # bank k holds a frame (waiting for its verdict, or admitted)
    hdr = [Signal(intbv(0)[hdr_width:]) for _ in range(BANKS)]
    queue = Signal(intbv(0)[2 * BANKS:])          # admitted banks in admission order, entry i at [2i+1:2i]
    q_count = Signal(intbv(0, min=0, max=BANKS + 1))
    ready = Signal(bool(0))
    wr_en = Signal(bool(0))
    wr_addr = Signal(intbv(0)[10:])
    hdr0, hdr1, hdr2 = hdr
    # the digest of the header beat of the frame being received (read at its last beat)
    d_fe = Signal(intbv(0)[FRAME_END_BITS:])       # offset + n
    d_nr = Signal(intbv(0)[NR_BITS:])              # ceil(n / 16)
    d_need1 = Signal(intbv(0)[FRAME_END_BITS:])    # payload beats for n elements, + 1
    d_span = Signal(intbv(0)[MAX_RANGES:])          # its ranges [offset / 16, ceil((offset + n) / 16))
    d_c = Signal(intbv(0)[3:])                      # its contributor
    d_rf = Signal(intbv(0)[ROW_BITS + 1:])          # offset / 16, its first range
    d_re = Signal(modbv(0)[ROW_BITS + 1:])          # ceil((offset + n) / 16), its first range past the end
    d_rok = Signal(bool(0))                         # n != 0 and offset a multiple of 16
    d_part = Signal(bool(0))                        # n not a multiple of 16

    @always_comb
    def accept_beats():
        cls = intbv(0)[4:]
        beat_index = modbv(0)[8:]
        cls[:] = s_axis.tdata[F_CLASS_END:F_CLASS_LSB]
        beat_index[:] = beat_count - 1
        if not running:
            ready.next = 0
        elif frame_open:
            ready.next = 1
        elif cls != CLASS_CONTROL and cls != CLASS_DATA:
            ready.next = 1          # unsupported traffic drains without a bank
        else:
            ready.next = not in_use[wr_bank] and room_ok
        wr_en.next = (running and frame_open and not draining and s_axis.tvalid
                      and beat_count != 0 and beat_count <= BANK_PAYLOAD_BEATS)
        wr_addr.next = concat(wr_bank, beat_index)

    @always_comb
    def queue_outputs():
        head = modbv(0)[2:]
        nxt = modbv(0)[2:]
        head[:] = queue
        nxt[:] = queue >> 2
        s_axis.tready.next = ready
        frame.next_span.next = d_span
        frame.next_c.next = d_c
        frame.next_fe.next = d_fe
        frame.next_rf.next = d_rf
        frame.next_re.next = d_re
        frame.next_rok.next = d_rok
        frame.next_part.next = d_part
        status.in_frame.next = frame_open
        bank_read.avail.next = q_count != 0
        bank_read.bank.next = head
        bank_read.next_avail.next = q_count >= 2
        bank_read.next_bank.next = nxt
        bank_read.header.next = hdr0 if head == 0 else hdr1 if head == 1 else hdr2
        bank_read.next_header.next = hdr0 if nxt == 0 else hdr1 if nxt == 1 else hdr2

    read_addr = Signal(intbv(0)[len(bank_read.raddr):])

    @always_comb
    def read_address():
        # the reader's advance (its group's ready, the node's latest signal) picks one of its two
        # addresses here, one LUT before the RAM
        if bank_read.advance:
            read_addr.next = bank_read.raddr
        else:
            read_addr.next = bank_read.raddr_hold

    @always(clk.posedge)
    def bank_ram():
        # Plain RAM: one write port (receive), one registered read port (reader); never reset.
        if wr_en and ready:
            mem[wr_addr].next = s_axis.tdata
        bank_read.rdata.next = mem[read_addr]

    @always(clk.posedge)
    def track_frames():
        bs = modbv(0)[BANKS:]
        q = modbv(0)[2 * BANKS:]
        qc = intbv(0, min=0, max=BANKS + 1)
        head = modbv(0)[2:]
        cls = intbv(0)[4:]
        count = intbv(0)[beat_width:]
        three = modbv(0)[2 * BANKS:]
        v = modbv(0)[2 * BANKS:]
        offset = intbv(0)[FRAME_END_BITS - 1:]
        n = intbv(0)[FRAME_END_BITS - 1:]
        fmt = intbv(0)[3:]
        r_end = modbv(0)[ROW_BITS + 1:]
        span = intbv(0)[MAX_RANGES:]
        rf_hi = intbv(0)[5:]
        rf_lo = intbv(0)[4:]
        fe_hi = intbv(0)[6:]
        fe_lo = intbv(0)[4:]
        fe_part = bool(0)
        r_hi = intbv(0)[4:]
        r_lo = intbv(0)[4:]
        fe = intbv(0)[FRAME_END_BITS:]
        rf = intbv(0)[ROW_BITS + 1:]
        if rst:
            # Not reset, as no value of theirs can matter after a reset: draining and beat_count
            # (a frame's first beat writes both, and every read waits for frame_open); the
            # queue's entries (an admission writes its slot whole, and only the q_count slots
            # below are read).  wr_bank is: any bank would do after a reset (all are free), but
            # its fourth code names none
            running.next = 0
            frame_open.next = 0
            wr_bank.next = 0
            in_use.next = 0
            q_count.next = 0
            frame.valid.next = 0
            status.unsupported.next = 0
        else:
            running.next = 1
            bs[:] = in_use
            q[:] = queue
            qc[:] = q_count
            three[:] = 3
            frame.valid.next = 0
            status.unsupported.next = 0

            # The reader is done with the queue head: free its bank.
            if bank_read.release and qc != 0:
                head[:] = q
                # (bank by bank: a write at a variable bit index maps one LUT level deeper)
                for k in range(BANKS):
                    if head == k:
                        bs[k] = 0
                q[:] = q >> 2
                qc[:] = qc - 1
            # Verdict of the validation stage: admitted banks join the queue, dropped ones are freed.
            if verdict.valid:
                if verdict.admit:
                    v[:] = verdict.bank
                    q[:] = (q & ~(three << (2 * qc))) | (v << (2 * qc))
                    qc[:] = qc + 1
                else:
                    for k in range(BANKS):
                        if verdict.bank == k:
                            bs[k] = 0

            # Receive one beat.
            if s_axis.tvalid and ready:
                count[:] = beat_count
                if not frame_open:
                    cls[:] = s_axis.tdata[F_CLASS_END:F_CLASS_LSB]
                    if cls == CLASS_CONTROL or cls == CLASS_DATA:
                        draining.next = 0
                        # the DATA header's digest (read only for frames of two or more beats)
                        offset[:] = s_axis.tdata[F_OFFSET_END:F_OFFSET_LSB]
                        n[:] = s_axis.tdata[F_N_END:F_N_LSB]
                        fmt[:] = s_axis.tdata[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB]
                        rf[:] = offset[FRAME_END_BITS - 1:4]
                        fe[:] = offset + n
                        d_fe.next = fe
                        d_c.next = s_axis.tdata[F_CONTRIBUTOR_END:F_CONTRIBUTOR_LSB]
                        d_rf.next = rf
                        r_end[:] = fe[FRAME_END_BITS:4]
                        if fe[4:0] != 0:
                            r_end[:] = r_end + 1
                        d_re.next = r_end
                        d_rok.next = n != 0 and offset[4:0] == 0
                        d_part.next = n[4:0] != 0
                        d_nr.next = (n + (RANGE_ELEMS - 1)) >> 4
                        if fmt == FMT_INT8:
                            d_need1.next = (n + 127) >> 6          # ceil(n / 64) + 1
                        elif fmt == FMT_FP32:
                            d_need1.next = (n + 31) >> 4           # ceil(n / 16) + 1
                        elif fmt == FMT_EXACT:
                            d_need1.next = n + 1                   # one partial per beat
                        else:
                            d_need1.next = (n + 63) >> 5           # ceil(n / 32) + 1
                        # its ranges as a mask, each range's bit two compares with constants in
                        # pieces of at most six bits
                        rf_hi[:] = rf[9:4]
                        rf_lo[:] = rf[4:0]
                        fe_hi[:] = fe[14:8]
                        fe_lo[:] = fe[8:4]
                        fe_part = fe[4:0] != 0
                        for r in range(MAX_RANGES):
                            r_hi[:] = r // 16
                            r_lo[:] = r % 16
                            span[r] = (rf_hi < r_hi or (rf_hi == r_hi and rf_lo <= r_lo)) and (
                                fe_hi > r_hi or (fe_hi == r_hi and (fe_lo > r_lo or (fe_lo == r_lo and fe_part))))
                        d_span.next = span
                        if wr_bank == 0:
                            hdr0.next = s_axis.tdata[hdr_width:0]
                        elif wr_bank == 1:
                            hdr1.next = s_axis.tdata[hdr_width:0]
                        else:
                            hdr2.next = s_axis.tdata[hdr_width:0]
                    else:
                        draining.next = 1
                    count[:] = 1
                elif count != BEAT_MAX:
                    count[:] = count + 1
                if s_axis.tlast:
                    frame_open.next = 0
                    beat_count.next = 0
                    if frame_open and draining or (not frame_open and cls != CLASS_CONTROL
                                                   and cls != CLASS_DATA):
                        status.unsupported.next = 1
                    else:
                        frame.valid.next = 1
                        frame.beats.next = count
                        frame.too_long.next = count > BANK_BEATS
                        frame.bank.next = wr_bank
                        # the digest: its ranges [r_first, r_end) as a mask, each range's bit two
                        # compares with constants in pieces of at most six bits
                        frame.nr.next = d_nr
                        if not frame_open:
                            # a one-beat frame: the control's rules for it read frame_end (an adder
                            # on the beat) and its length alone, never need1, r_end or span (left
                            # over from the frame before)
                            offset[:] = s_axis.tdata[F_OFFSET_END:F_OFFSET_LSB]
                            n[:] = s_axis.tdata[F_N_END:F_N_LSB]
                            frame.frame_end.next = offset + n
                        else:
                            frame.frame_end.next = d_fe
                        frame.need1.next = d_need1
                        frame.r_end.next = d_re
                        frame.span.next = d_span
                        if not frame_open:
                            frame.header.next = s_axis.tdata[hdr_width:0]
                        else:
                            frame.header.next = hdr0 if wr_bank == 0 else hdr1 if wr_bank == 1 else hdr2
                        for k in range(BANKS):
                            if wr_bank == k:
                                bs[k] = 1
                        # banks are used round robin: they are freed in the order they were filled
                        if wr_bank == BANKS - 1:
                            wr_bank.next = 0
                        else:
                            wr_bank.next = wr_bank + 1
                else:
                    frame_open.next = 1
                    beat_count.next = count

            in_use.next = bs
            queue.next = q
            q_count.next = qc

    return accept_beats, queue_outputs, read_address, bank_ram, track_frames


@block
def header_ranges(header, fe, rf, r_end, span):
    """A DATA header's elements [offset, offset + n) as ranges, as a combinational function of
    `header`: their end `fe` (offset + n), first range `rf` (offset / 16), first range past the end
    `r_end` (ceil(fe / 16), wrapping) and the ranges [rf, r_end) as the mask `span`."""
    @always_comb
    def ranges():
        offset = intbv(0)[FRAME_END_BITS - 1:]
        n = intbv(0)[FRAME_END_BITS - 1:]
        start = intbv(0)[ROW_BITS + 1:]
        stop = intbv(0)[FRAME_END_BITS:]
        past = modbv(0)[ROW_BITS + 1:]
        mask = intbv(0)[MAX_RANGES:]
        offset[:] = header[F_OFFSET_END:F_OFFSET_LSB]
        n[:] = header[F_N_END:F_N_LSB]
        start[:] = offset[FRAME_END_BITS - 1:4]
        stop[:] = offset + n
        past[:] = stop[FRAME_END_BITS:4]
        if stop[4:0] != 0:
            past[:] = past + 1
        for r in range(MAX_RANGES):
            mask[r] = start <= r and stop > r * RANGE_ELEMS
        fe.next = stop
        rf.next = start
        r_end.next = past
        span.next = mask

    return ranges


@block
def frame_digest(header, frame):
    """The Frame's header digest (frame_end, nr, r_end, need1, span) as a combinational function of
    `header`, as prism_ingress forms it over the frame's beats: for benches that drive prism_control
    with frames directly."""
    ranges = header_ranges(header, frame.frame_end, Signal(intbv(0)[ROW_BITS + 1:]), frame.r_end, frame.span)

    @always_comb
    def digest():
        n = intbv(0)[FRAME_END_BITS - 1:]
        fmt = intbv(0)[3:]
        n[:] = header[F_N_END:F_N_LSB]
        fmt[:] = header[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB]
        frame.nr.next = (n + (RANGE_ELEMS - 1)) >> 4
        if fmt == FMT_INT8:
            frame.need1.next = (n + 127) >> 6
        elif fmt == FMT_FP32:
            frame.need1.next = (n + 31) >> 4
        elif fmt == FMT_EXACT:
            frame.need1.next = n + 1
        else:
            frame.need1.next = (n + 63) >> 5

    return ranges, digest


@block
def frame_digest_ahead(header, frame):
    """The Frame's digest of the frame a port completes next (next_c, next_span, next_fe, next_rf,
    next_re, next_rok, next_part) as a combinational function of that frame's `header`, as
    prism_ingress registers it from the header beat: for benches that drive prism_control with
    frames directly."""
    ranges = header_ranges(header, frame.next_fe, frame.next_rf, frame.next_re, frame.next_span)

    @always_comb
    def digest_ahead():
        offset = intbv(0)[FRAME_END_BITS - 1:]
        n = intbv(0)[FRAME_END_BITS - 1:]
        offset[:] = header[F_OFFSET_END:F_OFFSET_LSB]
        n[:] = header[F_N_END:F_N_LSB]
        frame.next_c.next = header[F_CONTRIBUTOR_END:F_CONTRIBUTOR_LSB]
        frame.next_rok.next = n != 0 and offset[4:0] == 0
        frame.next_part.next = n[4:0] != 0

    return ranges, digest_ahead
