"""Frames of the PRISM SINGLE node, encoded and decoded from docs/protocol.md alone.

A frame is a list of beats; a beat is a 512-bit int (bit 0 = tdata[0]).  On an
AXI-Stream byte interface, beat k is bytes [64k, 64k + 64) little-endian.
Nothing here comes from the kit's own models or tool chain: every constant and
bit position is the document's.
"""
from dataclasses import dataclass, field
from typing import List

BEAT_BITS = 512
BEAT_BYTES = BEAT_BITS // 8
MAX_FRAME_BEATS = 1 + 256           # frame bank: header + 256 payload beats

# Common header: class [3:0]
CLASS_CONTROL, CLASS_DATA, CLASS_RESULT = 1, 2, 3
# CONTROL opcodes [7:4]
OP_STAGE, OP_COMMIT, OP_ABORT, OP_ACK, OP_NACK = 1, 2, 3, 8, 9
# STAGE fields
KULISCH_FIXED, FP32_ARRIVAL = 0, 1
POLICIES = {KULISCH_FIXED: "KULISCH_FIXED", FP32_ARRIVAL: "FP32_ARRIVAL"}
INT8, FP16, BF16, FP32, EXACT, AUTO = 0, 1, 2, 3, 4, 5
FORMATS = {INT8: "INT8", FP16: "FP16", BF16: "BF16", FP32: "FP32", EXACT: "EXACT", AUTO: "AUTO"}
INPUT_FORMATS = (INT8, FP16, BF16, FP32)
REDUCE, ALLREDUCE = 0, 1
# element width w and elements per beat P of the packed formats
ELEMENT_BITS = {INT8: 8, FP16: 16, BF16: 16, FP32: 32}
PER_BEAT = {f: BEAT_BITS // w for f, w in ELEMENT_BITS.items()}
RANGE = 16                          # elements per range (and per AUTO tile)
BLOCK = 256                         # elements per RESULT block

REASONS = ("OK", "BAD_OPCODE", "BAD_POLICY", "BAD_FORMAT", "BAD_COUNT", "BAD_CONTRIBUTORS", "BAD_RECIPIENTS",
           "NO_STAGED", "STAGED_MISMATCH", "BUSY", "BAD_LENGTH", "NOT_OPEN", "ACTIVE_MISMATCH")
REASON = {name: code for code, name in enumerate(REASONS)}

# Counters: counter_select values
DROP_REASONS = ("too_long", "no_operation", "wrong_op", "stale_generation", "bad_contributor", "bad_format",
                "bad_range", "bad_length", "duplicate")


def counter_select(port, name):
    """counter_select of a per-port counter: 'control', 'admitted', a drop reason, 'unsupported', 'truncated'."""
    per_port = ("control", "admitted") + DROP_REASONS + ("unsupported", "truncated")
    return 16 * port + per_port.index(name)


COUNTER_RANGES_COMPLETED, COUNTER_RESULTS_SENT, COUNTER_RESPONSES_SENT = 32, 33, 34
PORT_COUNTERS = ("control", "admitted") + DROP_REASONS + ("unsupported", "truncated")


def all_counter_selects():
    """{name: counter_select} for every counter of the document's map."""
    sel = {(p, n): counter_select(p, n) for p in (0, 1) for n in PORT_COUNTERS}
    sel.update({"ranges_completed": COUNTER_RANGES_COMPLETED, "results_sent": COUNTER_RESULTS_SENT,
                "responses_sent": COUNTER_RESPONSES_SENT})
    return sel


def bits(value, hi, lo):
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


def put(hi, lo, value):
    width = hi - lo + 1
    if not 0 <= value < (1 << width):
        raise ValueError(f"field [{hi}:{lo}] cannot hold {value}")
    return value << lo


def common_header(cls, opcode, op_id, generation):
    return put(3, 0, cls) | put(7, 4, opcode) | put(15, 8, op_id) | put(31, 16, generation)


# ------------------------------------------------------------------------------- CONTROL
def stage(op_id, generation, policy, in_fmt, out_fmt, count, contributors, recipients, mode=ALLREDUCE):
    """STAGE request (one beat).  Field values are not checked beyond their widths, so a
    client can send requests the node must refuse."""
    return [common_header(CLASS_CONTROL, OP_STAGE, op_id, generation) | put(33, 32, policy) |
            put(37, 36, in_fmt) | put(42, 40, out_fmt) | put(44, 44, mode) | put(60, 48, count) |
            put(71, 64, contributors) | put(81, 80, recipients)]


def commit(op_id, generation):
    return [common_header(CLASS_CONTROL, OP_COMMIT, op_id, generation)]


def abort(op_id, generation):
    return [common_header(CLASS_CONTROL, OP_ABORT, op_id, generation)]


def control(opcode, op_id, generation):
    """A CONTROL request with any opcode (BAD_OPCODE tests)."""
    return [common_header(CLASS_CONTROL, opcode, op_id, generation)]


@dataclass(frozen=True)
class Response:
    ack: bool
    op_id: int
    generation: int
    reason: int
    request: int            # the request's opcode

    @property
    def reason_name(self):
        return REASONS[self.reason] if self.reason < len(REASONS) else f"reason {self.reason}"

    def __str__(self):
        req = {OP_STAGE: "STAGE", OP_COMMIT: "COMMIT", OP_ABORT: "ABORT"}.get(self.request, f"opcode {self.request}")
        return (f"{'ACK' if self.ack else 'NACK ' + self.reason_name} to {req} "
                f"(op {self.op_id}, generation {self.generation})")


def decode_response(frame):
    if len(frame) != 1:
        raise ValueError(f"a CONTROL response is one beat; got {len(frame)}")
    h = frame[0]
    if bits(h, 3, 0) != CLASS_CONTROL or bits(h, 7, 4) not in (OP_ACK, OP_NACK):
        raise ValueError(f"not a CONTROL response: class {bits(h, 3, 0)}, opcode {bits(h, 7, 4)}")
    return Response(bits(h, 7, 4) == OP_ACK, bits(h, 15, 8), bits(h, 31, 16), bits(h, 39, 32), bits(h, 43, 40))


# ------------------------------------------------------------------------------- DATA
def pack(fmt, patterns):
    """Payload beats: element j in beat j // P at bits [w(j mod P) + w - 1 : w(j mod P)]."""
    w, per = ELEMENT_BITS[fmt], PER_BEAT[fmt]
    beats = []
    for start in range(0, len(patterns), per):
        beat = 0
        for j, v in enumerate(patterns[start:start + per]):
            if not 0 <= v < (1 << w):
                raise ValueError(f"{FORMATS[fmt]} pattern {v:#x} does not fit {w} bits")
            beat |= v << (w * j)
        beats.append(beat)
    return beats


def unpack(fmt, beats, n):
    w, per = ELEMENT_BITS[fmt], PER_BEAT[fmt]
    return [bits(beats[j // per], w * (j % per) + w - 1, w * (j % per)) for j in range(n)]


def data(op_id, generation, contributor, fmt, offset, patterns, count=None, payload_beats=None):
    """DATA frame carrying `patterns` (raw bit patterns of `fmt`) from global element `offset`.
    `count` overrides the header's n and `payload_beats` the payload (malformed-frame tests)."""
    n = len(patterns) if count is None else count
    head = (common_header(CLASS_DATA, 0, op_id, generation) | put(34, 32, contributor) | put(37, 36, fmt) |
            put(60, 48, offset) | put(76, 64, n))
    return [head] + (pack(fmt, patterns) if payload_beats is None else list(payload_beats))


# ------------------------------------------------------------------------------- RESULT
@dataclass
class Group:
    fmt: int
    count: int
    values: list               # bit patterns (packed formats) or ExactValue (EXACT)
    beats: list


@dataclass(frozen=True)
class ExactValue:
    """One EXACT beat: sigma from bits [507:0] (two's complement) and the four flags."""
    sigma: int
    nan: bool
    pos_inf: bool
    neg_inf: bool
    overflow: bool
    raw: int

    @classmethod
    def decode(cls, beat):
        s = bits(beat, 507, 0)
        if s >> 507:
            s -= 1 << 508
        return cls(s, bool(bits(beat, 508, 508)), bool(bits(beat, 509, 509)), bool(bits(beat, 510, 510)),
                   bool(bits(beat, 511, 511)), beat)

    def accumulator(self, w):
        """The node's W-bit accumulator: bits [W-1:0], signed."""
        a = bits(self.raw, w - 1, 0)
        return a - (1 << w) if a >> (w - 1) else a


@dataclass
class Result:
    op_id: int
    generation: int
    offset: int
    count: int
    kulisch_w: int
    groups: List[Group] = field(default_factory=list)

    @property
    def block(self):
        return self.offset // BLOCK

    def elements(self):
        """[(format, value)] per element, in element order."""
        return [(g.fmt, v) for g in self.groups for v in g.values]


def decode_result(frame):
    """A RESULT frame (header + groups); raises ValueError when the frame's shape disagrees
    with its own header."""
    h = frame[0]
    if bits(h, 3, 0) != CLASS_RESULT:
        raise ValueError(f"not a RESULT frame: class {bits(h, 3, 0)}")
    r = Result(bits(h, 15, 8), bits(h, 31, 16), bits(h, 60, 48), bits(h, 76, 64), bits(h, 104, 96))
    n_groups = bits(h, 84, 80)
    if not 1 <= n_groups <= 16:
        raise ValueError(f"RESULT header: {n_groups} groups (1..16 allowed)")
    pos = 1
    for g in range(n_groups):
        fmt = bits(h, 256 + 16 * g + 2, 256 + 16 * g)
        count = bits(h, 256 + 16 * g + 15, 256 + 16 * g + 3)
        if fmt == EXACT:
            n_beats = count
        elif fmt in ELEMENT_BITS:
            n_beats = -(-count // PER_BEAT[fmt])
        else:
            raise ValueError(f"RESULT group {g}: format code {fmt}")
        beats = frame[pos:pos + n_beats]
        if len(beats) != n_beats:
            raise ValueError(f"RESULT frame of {len(frame)} beats is shorter than its groups")
        values = [ExactValue.decode(b) for b in beats] if fmt == EXACT else unpack(fmt, beats, count)
        r.groups.append(Group(fmt, count, values, beats))
        pos += n_beats
    if pos != len(frame):
        raise ValueError(f"RESULT frame has {len(frame)} beats; its groups account for {pos}")
    return r


def classify(frame):
    return bits(frame[0], 3, 0)


# ------------------------------------------------------------------------------- AXI-Stream bytes
def to_bytes(frame):
    return b"".join(b.to_bytes(BEAT_BYTES, "little") for b in frame)


def from_bytes(data):
    data = bytes(data)
    if len(data) % BEAT_BYTES:
        raise ValueError(f"{len(data)} bytes is not a whole number of {BEAT_BYTES}-byte beats")
    return [int.from_bytes(data[i:i + BEAT_BYTES], "little") for i in range(0, len(data), BEAT_BYTES)]
