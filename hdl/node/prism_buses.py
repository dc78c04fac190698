"""The node's internal buses, one class each (MyHDL interfaces, hdl/common/interface.py).

prism_node creates them and hands each to the blocks that drive and read it, by
keyword.  A bus that exists once per receive port is passed as `p0_<bus>` and
`p1_<bus>` (port 0, port 1) everywhere; the converted Verilog names its signals
`<bus>_<field>`.  Widths that depend on the node's parameters are arguments.

Data flow (phase numbers as in prism_node):

    s_axis_P -> prism_ingress P --Frame--> prism_control --Verdict--> prism_ingress P
                prism_ingress P --BankRead--> prism_reader P --IssueGroup, FrameOrder--> accumulation
                prism_control --ActiveOp--> every datapath block;  --AdmissionOrder--> dispatch
                accumulation --RangeEvents--> prism_completion --ReadoutCmd--> accumulation
                prism_kulisch_store --MergedRange-->  prism_readout --Tile--> prism_result_sender
                prism_arrival_banks --Fp32Range--> prism_readout
                prism_result_sender --ResultBeat--> prism_egress <--Responses-- prism_control
                prism_control --CounterEvent-->, prism_ingress --PortStatus-->, egress --SentEvents--> counters
"""
from hdl.common.interface import Interface, bit, vec
from spec.formats import KULISCH_WRAP_BITS
from spec.frames import HDR_BITS, MAX_RANGES       # header bits a Frame or BankRead carries

BEAT_COUNT_BITS = 9     # a frame's beat count, saturating (1 + 256 beats fit)
ROW_BITS = 8            # a range (16 elements) of the node: 256 at most
FRAME_END_BITS = 14     # a DATA frame's offset + n (two 13-bit fields)
NR_BITS = 10            # ceil(n / 16) of a 13-bit n
GROUP_LANES = 64        # elements of an issue group: a whole INT8 beat


class Frame(Interface):
    """prism_ingress -> prism_control: a stored frame is complete (one per receive port).

    valid       pulse: the frame's TLAST was taken and the frame sits in a bank
    header      its header beat, low `hdr_width` bits (>= 96)
    beats       its beat count including the header, saturating (`beat_width` >= 9 bits)
    too_long    more than 1 + 256 beats: it did not fit the bank
    bank        the bank that holds it (2 bits)
    DATA header digest, formed by the ingress from the header beat before the last beat:
    frame_end   offset + n (14 bits; of a one-beat frame too)
    need1       the beats the frame must have: its payload beats for n elements + 1 (14 bits)
    nr          ranges the frame covers when it passes the range rule: ceil(n / 16) (10 bits)
    r_end       ceil(frame_end / 16), its first range past the end (9 bits, wrapping)
    span        its ranges [offset / 16, r_end) as a bit mask (MAX_RANGES bits)
    (a one-beat DATA frame is judged by its length and frame_end alone: it fails the length rule
    unless n = 0, and then the range rule first; its need1, nr, r_end and span are left over from an
    earlier frame and never read)
    The digest of the frame being received, registered from its header beat (for the control's
    duplicate check a cycle ahead of the frame's `valid`; meaningful from the cycle after a header
    beat, so in the cycle a frame of two or more beats takes its last beat):
    next_c      its contributor (3 bits)
    next_span   its ranges as a bit mask, as `span` will carry them (MAX_RANGES bits)
    next_fe     offset + n (14 bits), as `frame_end` will carry it (of a frame of two or more beats)
    next_rf     offset / 16, its first range (9 bits)
    next_re     its first range past the end, as `r_end` will carry it (9 bits)
    next_rok    n != 0 and offset a multiple of 16 (the range rule's parts that read the header alone)
    next_part   n is not a multiple of 16 (its end must then be the operation's end)
    """

    def __init__(self, hdr_width=HDR_BITS, beat_width=BEAT_COUNT_BITS):
        self.valid = bit()
        self.header = vec(hdr_width)
        self.beats = vec(beat_width)
        self.too_long = bit()
        self.bank = vec(2)
        self.frame_end = vec(FRAME_END_BITS)
        self.nr = vec(NR_BITS)
        self.r_end = vec(ROW_BITS + 1)
        self.need1 = vec(FRAME_END_BITS)
        self.span = vec(MAX_RANGES)
        self.next_c = vec(3)
        self.next_span = vec(MAX_RANGES)
        self.next_fe = vec(FRAME_END_BITS)
        self.next_rf = vec(ROW_BITS + 1)
        self.next_re = vec(ROW_BITS + 1)
        self.next_rok = bit()
        self.next_part = bit()


class Verdict(Interface):
    """prism_control -> prism_ingress: the answer to a Frame, exactly once per frame.

    valid       pulse: a verdict
    admit       1: admitted (the bank joins the reader queue), 0: dropped or CONTROL (the bank is freed)
    bank        the bank the verdict is about (2 bits)
    """

    def __init__(self):
        self.valid = bit()
        self.admit = bit()
        self.bank = vec(2)


class CounterEvent(Interface):
    """prism_control -> prism_counters: the counter event of a verdict (same cycle as the Verdict).

    valid       pulse: an event of this port
    code        4 bits: 0 CONTROL answered, 1 DATA admitted, 2 + k drop reason k (prism_counters' map)
    """

    def __init__(self):
        self.valid = bit()
        self.code = vec(4)


class PortStatus(Interface):
    """prism_ingress -> prism_counters: what a receive port's counters see besides verdicts.

    unsupported  pulse: an unsupported frame has been drained (its TLAST taken)
    in_frame     a frame has been started and not finished (a reset now truncates it)
    """

    def __init__(self):
        self.unsupported = bit()
        self.in_frame = bit()


class BankRead(Interface):
    """prism_ingress <-> prism_reader: the queue of admitted frames and the frame banks' read port.

    avail       an admitted frame waits (the queue head)
    bank        its bank (2 bits)
    header      its header (`hdr_width` bits, >= 96)
    next_avail  a second admitted frame waits behind the head
    next_bank   its bank (2 bits)
    next_header  its header
    release     reader -> ingress: pulse, done with bank `bank` (pops the queue, frees the bank)
    raddr       reader -> ingress: bank RAM address {bank, payload beat[7:0]} (10 bits) if the reader's
                issue stage advances this cycle ...
    raddr_hold  ... and if it holds
    advance     reader -> ingress: the issue stage advances (its IssueGroup's ready); the RAM reads
                raddr or raddr_hold by it, so the late ready meets the address in one LUT, at the RAM
    rdata       the payload beat at the address read, one cycle later (`data_width` bits, 512 in the node)
    """

    def __init__(self, hdr_width=HDR_BITS, data_width=512):
        self.avail = bit()
        self.bank = vec(2)
        self.header = vec(hdr_width)
        self.next_avail = bit()
        self.next_bank = vec(2)
        self.next_header = vec(hdr_width)
        self.release = bit()
        self.raddr = vec(10)
        self.raddr_hold = vec(10)
        self.advance = bit()
        self.rdata = vec(data_width)


class IssueGroup(Interface):
    """prism_reader -> accumulation (prism_kulisch_store or prism_arrival_banks): one beat's ranges.

    valid       a group is presented
    ready       accumulation -> reader: the group is taken this cycle
    row         its first range (global element index // 16; 8 bits)
    lanes       64-bit mask: bit e set = group element e present (range row + e // 16, lane e % 16);
                elements are present from e = 0 up
    data        64 x 32-bit element fields, element e right-aligned at [32e + 31 : 32e] (2048 bits);
                an EXACT group (one partial, one lane) carries its whole beat at [511:0]
    last        the group is its frame's last
    ends        4 bits: bit j set = the group ends the frame's part of range row + j (an element
                group ends every range it holds; an EXACT frame's range ends with its last beat)
    """

    def __init__(self):
        self.valid = bit()
        self.ready = bit()
        self.row = vec(ROW_BITS)
        self.lanes = vec(GROUP_LANES)
        self.data = vec(32 * GROUP_LANES)
        self.last = bit()
        self.ends = vec(GROUP_LANES // 16)


class FrameOrder(Interface):
    """prism_reader <-> the node's FP32_ARRIVAL ordering (dispatch, prism_arrival_banks): which frames run.

    may_start   node -> reader: the reader may start its next frame (FP32_ARRIVAL: its turn in admission order)
    start       a frame started at the last clock edge (a register)
    active      a frame has groups not yet taken; the fields below describe it (the frame of the group
                presented, or between frames the one starting); these fields are registers
    seq         its start number (4 bits, given by the node as frames start; compared modulo 16)
    lo, hi      its ranges [lo, hi) (9 bits each)
    next_range  its lowest range not yet taken (9 bits)
    pend        a second frame has started behind it and none of its groups is taken yet
    pseq        that pending frame's start number (4 bits)
    plo, phi    its ranges [plo, phi) (9 bits each)
    """

    def __init__(self):
        self.may_start = bit()
        self.start = bit()
        self.active = bit()
        self.seq = vec(4)
        self.lo = vec(9)
        self.hi = vec(9)
        self.next_range = vec(9)
        self.pend = bit()
        self.pseq = vec(4)
        self.plo = vec(9)
        self.phi = vec(9)


class ActiveOp(Interface):
    """prism_control -> the datapath: the active operation (fields valid while busy).

    clear       pulse: a new operation starts, or an ABORT's drain is over: forget the previous one
    policy      reduction policy (2 bits): 0 KULISCH_FIXED, 1 FP32_ARRIVAL
    in_fmt      element format code (2 bits: the STAGE input format's low bits)
    exact_in    the input format is EXACT (code 4): DATA carries Kulisch partials
    out_fmt     result format code (3 bits)
    count       E, elements of the operation (13 bits)
    contributors  the contributor set (8 bits, one per contributor)
    expected    contributions per range: the set's popcount (4 bits)
    recipients  transmit ports of the RESULT frames (2 bits)
    op_id       the operation's id (8 bits)
    generation  its generation (16 bits)
    busy        an operation is open or its datapath is busy (the node's `busy`)
    """

    def __init__(self):
        self.clear = bit()
        self.policy = vec(2)
        self.in_fmt = vec(2)
        self.exact_in = bit()
        self.out_fmt = vec(3)
        self.count = vec(13)
        self.contributors = vec(8)
        self.expected = vec(4)
        self.recipients = vec(2)
        self.op_id = vec(8)
        self.generation = vec(16)
        self.busy = bit()


class AdmissionOrder(Interface):
    """prism_control -> the node's dispatch: admitted FP32_ARRIVAL frames not yet started, oldest first.

    valid       such a frame waits
    port        its receive port (0, 1)
    valid2      a second one waits behind it
    port2       its receive port
    pop         dispatch -> control: the oldest frame started at the last clock edge (the queue drops it
                at the next edge; meanwhile the dispatch reads the second entry as the head)
    """

    def __init__(self):
        self.valid = bit()
        self.port = bit()
        self.valid2 = bit()
        self.port2 = bit()
        self.pop = bit()


class Responses(Interface):
    """prism_control -> prism_egress: the head of the CONTROL response queue (TX port 0).

    valid       a response waits
    data        its 44-bit response header
    pop         egress -> control: the response is taken this cycle
    """

    def __init__(self):
        self.valid = bit()
        self.data = vec(44)
        self.pop = bit()


class RangeEvents(Interface):
    """accumulation -> prism_completion: a port's issue group has been applied (one per receive port).

    valid       pulse: applied
    row         its first range (8 bits)
    n           its number of consecutive ranges, 1 .. 4 (3 bits)
    """

    def __init__(self):
        self.valid = bit()
        self.row = vec(ROW_BITS)
        self.n = vec(3)


class ReadoutCmd(Interface):
    """prism_completion -> accumulation: the oldest completed range not yet read out.

    valid       a completed range waits
    row         the range (8 bits)
    ready       accumulation -> completion: the read-out takes it
    """

    def __init__(self):
        self.valid = bit()
        self.row = vec(ROW_BITS)
        self.ready = bit()


class MergedRange(Interface):
    """prism_kulisch_store -> prism_readout: a completed range's 16 merged Kulisch lanes.

    valid       the range is presented (MERGE_LATENCY = 3 cycles after its ReadoutCmd was taken,
                hdl/node/prism_kulisch_bank.py)
    row         the range (8 bits)
    states      16 x W merged states, lane l at [W*l + W - 1 : W*l] (W = KULISCH_W, the caller's)
    flags       16 x 5 flags, lane l at [5l+4:5l] = {wrap_sign, overflow, -inf, +inf, nan}
    wraps       16 x WB wrap counts (WB = KULISCH_WRAP_BITS), lane l at [WB*l + WB - 1 : WB*l]:
                the true sum is signed(state) + wraps * 2^W
    """

    def __init__(self, kulisch_w, wrap_bits=KULISCH_WRAP_BITS):
        self.valid = bit()
        self.row = vec(ROW_BITS)
        self.states = vec(16 * kulisch_w)
        self.flags = vec(80)
        self.wraps = vec(16 * wrap_bits)


class Fp32Range(Interface):
    """prism_arrival_banks -> prism_readout: a completed range's 16 FP32 sums.

    valid       the range is presented
    row         the range (8 bits)
    tile        16 FP32 sums, lane l at [32l + 31 : 32l] (512 bits)
    """

    def __init__(self):
        self.valid = bit()
        self.row = vec(ROW_BITS)
        self.tile = vec(512)


class Tile(Interface):
    """prism_readout -> prism_result_sender: a finished tile (one range in its result format).

    valid       pulse: a tile
    row         its range (8 bits)
    packed      the 16 results packed in the format (512 bits; low bits used by narrow formats)
    fmt         that format code (3 bits; EXACT = 4)
    exact       EXACT: 16 x (W + 5 + WB) bits, lane l = {WB-bit wraps, wrap_sign, overflow, -inf, +inf,
                nan, W-bit state}
    """

    def __init__(self, kulisch_w, wrap_bits=KULISCH_WRAP_BITS):
        self.valid = bit()
        self.row = vec(ROW_BITS)
        self.packed = vec(512)
        self.fmt = vec(3)
        self.exact = vec(16 * (kulisch_w + 5 + wrap_bits))


class ResultBeat(Interface):
    """prism_result_sender -> prism_egress: a RESULT frame's beat, presented once for its ports.

    valid       a beat is presented
    data        the beat (512 bits)
    last        it ends its frame
    mask        its transmit ports (2 bits: bit p = TX port p)
    ready       egress -> sender: every masked port has taken it
    """

    def __init__(self):
        self.valid = bit()
        self.data = vec(512)
        self.last = bit()
        self.mask = vec(2)
        self.ready = bit()


class SentEvents(Interface):
    """prism_egress -> the counters: what left the transmit ports (taken: tvalid and tready).

    response    pulse: a response beat was taken on TX port 0
    result0     pulse: a RESULT frame's last beat was taken on TX port 0
    result1     pulse: the same on TX port 1
    """

    def __init__(self):
        self.response = bit()
        self.result0 = bit()
        self.result1 = bit()


class SubStorePort(Interface):
    """prism_kulisch_route -> the 16 prism_kulisch_bank lanes of one sub-store: one port's range for it.

    go          16-bit lane mask of the port's range that belongs to this sub-store (0: none this cycle)
    srow        that range's row in the sub-store (range // 4; 8 bits)
    first       the port has not contributed to that range since the operation started
    sdata       its 16 x 32-bit element fields, lane l at [32l + 31 : 32l] (512 bits)
    """

    def __init__(self):
        self.go = vec(16)
        self.srow = vec(ROW_BITS)
        self.first = bit()
        self.sdata = vec(512)
