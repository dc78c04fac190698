"""Frame encoders and decoders for the PRISM SINGLE node (docs/protocol.md).

A frame on the wire is a list of 512-bit beats (Python ints), header first,
`tlast` on the last one.  Every field position comes from the FIELDS table of
spec/frames.py, the one place the bit layout is written down in code.
"""
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

# The protocol's constants and its field table live in spec/ (shared with the design and the
# verification code); this module encodes and decodes frames with them and re-exports them,
# so callers keep writing P.FMT_FP32, P.DROP_REASONS and so on.
from spec.formats import (ELEMENT_BITS, FMT_AUTO, FMT_BF16, FMT_EXACT, FMT_FP16, FMT_FP32, FMT_INT8,
                          FORMAT_CODES, FORMAT_NAMES, KULISCH_WIDTH_DEFAULT)  # noqa: F401
from spec.frames import (ACTIVE_MISMATCH, BAD_CONTRIBUTORS, BAD_COUNT, BAD_FORMAT, BAD_LENGTH,
                         BAD_OPCODE, BAD_POLICY, BAD_RECIPIENTS, BEAT_BITS, BLOCK_ELEMS, BUSY,
                         CLASS_CONTROL, CLASS_DATA, CLASS_RESULT, DROP_REASONS, EXACT_FLAG_LSB,
                         EXACT_SUM_BITS, FIELDS, FRAME_FIELDS, GROUP_DESC_BITS, GROUP_DESC_LSB, GROUP_FORMAT_BITS,
                         MAX_CONTRIBUTORS, MAX_GROUPS, MAX_PAYLOAD_BEATS, MODE_ALLREDUCE, MODE_REDUCE,
                         NO_STAGED, NOT_OPEN, OK, OP_ABORT, OP_ACK, OP_COMMIT, OP_NACK, OP_STAGE,
                         POLICY_FP32_ARRIVAL, POLICY_KULISCH, POLICY_NAMES, RANGE_ELEMS, REASON_NAMES,
                         STAGED_MISMATCH)  # noqa: F401

ELEMS_PER_BEAT = {f: BEAT_BITS // w for f, w in ELEMENT_BITS.items()}
ELEMS_PER_BEAT[FMT_EXACT] = 1              # an EXACT partial fills its beat
_GROUP_DESC_MASK = (1 << GROUP_DESC_BITS) - 1
_GROUP_FORMAT_MASK = (1 << GROUP_FORMAT_BITS) - 1


def get_field(beat, name):
    lsb, width = FIELDS[name]
    return (beat >> lsb) & ((1 << width) - 1)


def set_field(beat, name, value):
    lsb, width = FIELDS[name]
    if not 0 <= value < (1 << width):
        raise ValueError(f"field {name} = {value} does not fit {width} bits")
    return (beat & ~(((1 << width) - 1) << lsb)) | (value << lsb)


def reserved_mask(kind):
    """The header bits a client sends as 0 and the node ignores in a received frame of `kind`
    ("stage", "commit", "abort" or "data"): every bit outside the kind's fields, and a DATA
    frame's opcode (docs/protocol.md, Reserved bits)."""
    used = 0
    for name in FRAME_FIELDS[kind]:
        if kind == "data" and name == "opcode":
            continue
        lsb, width = FIELDS[name]
        used |= ((1 << width) - 1) << lsb
    return ((1 << BEAT_BITS) - 1) & ~used


def payload_padding_mask(fmt, n):
    """The bits of a DATA frame's last payload beat past its element count n (ignored by the
    node): 0 when the last beat is full or the format fills a beat per element (EXACT)."""
    per = ELEMS_PER_BEAT[fmt]
    if fmt == FMT_EXACT or n % per == 0:
        return 0
    return ((1 << BEAT_BITS) - 1) & ~((1 << (ELEMENT_BITS[fmt] * (n % per))) - 1)


def _header(**fields):
    beat = 0
    for k, v in fields.items():
        beat = set_field(beat, k, v)
    return beat


def pack_elements(values, fmt):
    """Pack element bit patterns into beats (element j at [w*(j%P) +: w] of beat j//P)."""
    w, per = ELEMENT_BITS[fmt], ELEMS_PER_BEAT[fmt]
    mask = (1 << w) - 1
    beats = []
    for start in range(0, len(values), per):
        beat = 0
        for j, v in enumerate(values[start:start + per]):
            beat |= (int(v) & mask) << (w * j)
        beats.append(beat)
    return beats


def unpack_elements(beats, fmt, n):
    w, per = ELEMENT_BITS[fmt], ELEMS_PER_BEAT[fmt]
    mask = (1 << w) - 1
    return [(beats[j // per] >> (w * (j % per))) & mask for j in range(n)]


def payload_beats(fmt, n):
    per = ELEMS_PER_BEAT[fmt]
    return -(-n // per)


# --- frame objects ---------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    op_id: int
    generation: int
    policy: int
    in_format: int
    result_format: int
    mode: int
    count: int
    contributors: int
    recipients: int

    def encode(self):
        return [_header(**{"class": CLASS_CONTROL, "opcode": OP_STAGE, "op_id": self.op_id,
                           "generation": self.generation, "policy": self.policy,
                           "in_format": self.in_format, "result_format": self.result_format,
                           "mode": self.mode, "count": self.count, "contributors": self.contributors,
                           "recipients": self.recipients})]


@dataclass(frozen=True)
class Commit:
    op_id: int
    generation: int

    def encode(self):
        return [_header(**{"class": CLASS_CONTROL, "opcode": OP_COMMIT, "op_id": self.op_id,
                           "generation": self.generation})]


@dataclass(frozen=True)
class Abort:
    op_id: int
    generation: int

    def encode(self):
        return [_header(**{"class": CLASS_CONTROL, "opcode": OP_ABORT, "op_id": self.op_id,
                           "generation": self.generation})]


def encode_exact(total, flags):
    """An EXACT value's beat: the exact sum `total` (a signed int, units of 2^-149) as a 508-bit
    two's complement integer at [507:0], the flag nibble at [511:508]."""
    if not -(1 << (EXACT_SUM_BITS - 1)) <= total < (1 << (EXACT_SUM_BITS - 1)):
        raise ValueError(f"exact sum {total} does not fit {EXACT_SUM_BITS} signed bits")
    return (total & ((1 << EXACT_SUM_BITS) - 1)) | ((flags & 0xF) << EXACT_FLAG_LSB)


def decode_exact(beat):
    """(exact sum as a signed int, flag nibble) of an EXACT beat."""
    total = beat & ((1 << EXACT_SUM_BITS) - 1)
    if total >> (EXACT_SUM_BITS - 1):
        total -= 1 << EXACT_SUM_BITS
    return total, beat >> EXACT_FLAG_LSB


@dataclass(frozen=True)
class Response:
    ack: bool
    op_id: int
    generation: int
    reason: int
    request_opcode: int

    def encode(self):
        return [_header(**{"class": CLASS_CONTROL, "opcode": OP_ACK if self.ack else OP_NACK,
                           "op_id": self.op_id, "generation": self.generation, "reason": self.reason,
                           "request_opcode": self.request_opcode})]

    def __str__(self):
        word = "ACK" if self.ack else f"NACK {REASON_NAMES[self.reason] if self.reason < len(REASON_NAMES) else self.reason}"
        return f"{word} op {self.op_id} gen {self.generation} (request opcode {self.request_opcode})"


@dataclass(frozen=True)
class Data:
    """A DATA frame.  `values` are element bit patterns, or for format EXACT (sum, flags) pairs
    as a RESULT frame's EXACT group holds them (a child node's partials)."""
    op_id: int
    generation: int
    contributor: int
    fmt: int
    offset: int
    values: Tuple[int, ...]
    n: Optional[int] = None   # element count in the header; defaults to len(values)

    def encode(self):
        n = len(self.values) if self.n is None else self.n
        head = _header(**{"class": CLASS_DATA, "op_id": self.op_id, "generation": self.generation,
                          "contributor": self.contributor, "data_format": self.fmt,
                          "offset": self.offset, "n": n})
        if self.fmt == FMT_EXACT:
            return [head] + [encode_exact(total, flags) for total, flags in self.values]
        return [head] + pack_elements(self.values, self.fmt)


@dataclass(frozen=True)
class Result:
    """A RESULT frame.  `groups` is a tuple of (format code, tuple of element values);
    EXACT values are (sum, flags) pairs: the exact sum as a signed int (units of 2^-149) and
    the flag nibble {overflow, neg_inf, pos_inf, nan}.  `kulisch_w` is the header's W field."""
    op_id: int
    generation: int
    offset: int
    groups: Tuple[Tuple[int, Tuple], ...] = field(default_factory=tuple)
    kulisch_w: int = KULISCH_WIDTH_DEFAULT

    @property
    def count(self):
        return sum(len(v) for _, v in self.groups)

    def elements(self):
        """(global index, format code, value) for every element."""
        i = self.offset
        for fmt, values in self.groups:
            for v in values:
                yield i, fmt, v
                i += 1

    def encode(self):
        if not 1 <= len(self.groups) <= MAX_GROUPS:
            raise ValueError(f"a RESULT frame holds 1..{MAX_GROUPS} groups, not {len(self.groups)}")
        head = _header(**{"class": CLASS_RESULT, "op_id": self.op_id, "generation": self.generation,
                          "offset": self.offset, "n": self.count, "groups": len(self.groups),
                          "kulisch_w": self.kulisch_w})
        beats = []
        for g, (fmt, values) in enumerate(self.groups):
            head |= (fmt | (len(values) << GROUP_FORMAT_BITS)) << (GROUP_DESC_LSB + GROUP_DESC_BITS * g)
            if fmt == FMT_EXACT:
                beats += [encode_exact(total, flags) for total, flags in values]
            else:
                beats += pack_elements(values, fmt)
        return [head] + beats


@dataclass(frozen=True)
class Unsupported:
    frame_class: int
    beats: int


class MalformedFrame(ValueError):
    """A frame that cannot be decoded (the node drops and counts it)."""


def decode(beats):
    """Decode a frame (list of beats) into one of the frame objects above."""
    if not beats:
        raise MalformedFrame("empty frame")
    head = beats[0]
    cls, opc = get_field(head, "class"), get_field(head, "opcode")
    op_id, gen = get_field(head, "op_id"), get_field(head, "generation")
    if cls == CLASS_CONTROL:
        if opc == OP_STAGE:
            return Stage(op_id, gen, get_field(head, "policy"), get_field(head, "in_format"),
                         get_field(head, "result_format"), get_field(head, "mode"), get_field(head, "count"),
                         get_field(head, "contributors"), get_field(head, "recipients"))
        if opc == OP_COMMIT:
            return Commit(op_id, gen)
        if opc == OP_ABORT:
            return Abort(op_id, gen)
        if opc in (OP_ACK, OP_NACK):
            return Response(opc == OP_ACK, op_id, gen, get_field(head, "reason"), get_field(head, "request_opcode"))
        raise MalformedFrame(f"CONTROL opcode {opc}")
    if cls == CLASS_DATA:
        fmt, n = get_field(head, "data_format"), get_field(head, "n")
        if fmt not in ELEMS_PER_BEAT:
            raise MalformedFrame(f"DATA format code {fmt}")
        if len(beats) - 1 < payload_beats(fmt, n):
            raise MalformedFrame(f"DATA frame of {n} elements has {len(beats) - 1} payload beats")
        if fmt == FMT_EXACT:
            values = tuple(decode_exact(b) for b in beats[1:1 + n])
        else:
            values = tuple(unpack_elements(beats[1:], fmt, n))
        return Data(op_id, gen, get_field(head, "contributor"), fmt, get_field(head, "offset"), values)
    if cls == CLASS_RESULT:
        ngroups = get_field(head, "groups")
        groups, pos = [], 1
        for g in range(ngroups):
            desc = (head >> (GROUP_DESC_LSB + GROUP_DESC_BITS * g)) & _GROUP_DESC_MASK
            fmt, cnt = desc & _GROUP_FORMAT_MASK, desc >> GROUP_FORMAT_BITS
            if fmt == FMT_EXACT:
                vals = tuple(decode_exact(b) for b in beats[pos:pos + cnt])
                pos += cnt
            elif fmt in ELEMENT_BITS:
                nb = payload_beats(fmt, cnt)
                if len(beats) - pos < nb:
                    raise MalformedFrame(f"RESULT group {g} ({cnt} elements) needs {nb} beats, "
                                         f"{len(beats) - pos} are left")
                vals = tuple(unpack_elements(beats[pos:pos + nb], fmt, cnt))
                pos += nb
            else:
                raise MalformedFrame(f"RESULT group {g} has format code {fmt}")
            if len(vals) != cnt:
                raise MalformedFrame(f"RESULT group {g} is truncated")
            groups.append((fmt, vals))
        if pos != len(beats):
            raise MalformedFrame(f"RESULT frame has {len(beats)} beats, its groups need {pos}")
        return Result(op_id, gen, get_field(head, "offset"), tuple(groups), get_field(head, "kulisch_w"))
    return Unsupported(cls, len(beats))
