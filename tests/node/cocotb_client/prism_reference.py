"""What the node must answer, computed from docs/protocol.md alone.

Arithmetic ("Arithmetic of the results"):
- KULISCH_FIXED: the exact sum as a `fractions.Fraction`, rounded once to the
  result format (round to nearest, ties to even, subnormals kept, beyond range
  -> inf; INT8 to the nearest integer, ties to even, then saturated);
- FP32_ARRIVAL: numpy float32 adds in admission order, then one rounding to a
  narrower format;
- AUTO: per 16-element tile, the narrowest format whose round trip keeps the
  FP32 bits;
- canonical NaN / inf patterns from the document's table.

The transaction-level part (`NodeModel`) follows the document's rules for
CONTROL answers, DATA validation, operation end, ABORT, RESULT blocks and
counters, processing frames in the order their last beats were accepted.
"""
from fractions import Fraction

import numpy as np

import prism_wire as W

CANONICAL_NAN = {W.INT8: 0x80, W.FP16: 0x7E00, W.BF16: 0x7FC0, W.FP32: 0x7FC00000}
POS_INF = {W.INT8: 0x7F, W.FP16: 0x7C00, W.BF16: 0x7F80, W.FP32: 0x7F800000}
NEG_INF = {W.INT8: 0x80, W.FP16: 0xFC00, W.BF16: 0xFF80, W.FP32: 0xFF800000}
# (exponent bits, fraction bits) of the float formats
FLOAT_LAYOUT = {W.FP16: (5, 10), W.BF16: (8, 7), W.FP32: (8, 23)}
KULISCH_LSB = Fraction(1, 1 << 149)     # the unit of sigma: 2^-149


# ------------------------------------------------------------------------------- numbers
class Special:
    """A non-finite input value: kind 'nan', '+inf' or '-inf'."""
    __slots__ = ("kind",)

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return self.kind


def decode(fmt, pattern):
    """(value, negative_zero) for a finite pattern; (Special, False) otherwise."""
    if fmt == W.INT8:
        return Fraction(pattern - 256 if pattern & 0x80 else pattern), False
    e_bits, f_bits = FLOAT_LAYOUT[fmt]
    sign = pattern >> (e_bits + f_bits)
    exp = (pattern >> f_bits) & ((1 << e_bits) - 1)
    frac = pattern & ((1 << f_bits) - 1)
    bias = (1 << (e_bits - 1)) - 1
    if exp == (1 << e_bits) - 1:
        return Special("nan" if frac else ("-inf" if sign else "+inf")), False
    if exp == 0:
        mag = Fraction(frac) * Fraction(2) ** (1 - bias - f_bits)
    else:
        mag = Fraction((1 << f_bits) | frac) * Fraction(2) ** (exp - bias - f_bits)
    return (-mag if sign else mag), (sign == 1 and mag == 0)


def _round_half_even(q):
    """Nearest integer to the Fraction q, ties to even."""
    fl = q.numerator // q.denominator
    rem = q - fl
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2):
        return fl + 1
    return fl


def _floor_log2(a):
    """floor(log2(a)) of a positive Fraction."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    return e


def round_exact(fmt, value, negative_zero=False):
    """The pattern of `fmt` nearest to the finite Fraction `value`, one rounding."""
    if fmt == W.INT8:
        return max(-128, min(127, _round_half_even(value))) & 0xFF
    e_bits, f_bits = FLOAT_LAYOUT[fmt]
    bias = (1 << (e_bits - 1)) - 1
    sign = 1 if (value < 0 or (value == 0 and negative_zero)) else 0
    sign_bit = sign << (e_bits + f_bits)
    a = abs(value)
    if a == 0:
        return sign_bit
    e = max(_floor_log2(a), 1 - bias)             # subnormals share the smallest exponent
    m = _round_half_even(a / Fraction(2) ** (e - f_bits))
    if m >> (f_bits + 1):                          # rounded up into the next binade
        m >>= 1
        e += 1
    if e > bias:
        return NEG_INF[fmt] if sign else POS_INF[fmt]
    if m == 0:
        return sign_bit                            # too small: a zero with the value's sign
    if m >> f_bits:
        return sign_bit | ((e + bias) << f_bits) | (m & ((1 << f_bits) - 1))
    return sign_bit | m                            # subnormal


def fp32_to(fmt, pattern):
    """One FP32 pattern rounded once to `fmt` (canonical specials)."""
    if fmt == W.FP32:
        v, _ = decode(W.FP32, pattern)
        return CANONICAL_NAN[W.FP32] if isinstance(v, Special) and v.kind == "nan" else pattern
    v, negz = decode(W.FP32, pattern)
    if isinstance(v, Special):
        return {"nan": CANONICAL_NAN, "+inf": POS_INF, "-inf": NEG_INF}[v.kind][fmt]
    return round_exact(fmt, v, negz)


def to_fp32(fmt, pattern):
    """Exact widening to FP32 (a NaN becomes the canonical NaN)."""
    v, negz = decode(fmt, pattern)
    if isinstance(v, Special):
        return {"nan": CANONICAL_NAN, "+inf": POS_INF, "-inf": NEG_INF}[v.kind][W.FP32]
    return round_exact(W.FP32, v, negz)


# ------------------------------------------------------------------------------- policies
def kulisch_sigma(contributions):
    """(sigma in units of 2^-149, nan, pos_inf, neg_inf) of [(fmt, pattern)]."""
    sigma, nan, pinf, ninf = 0, False, False, False
    for fmt, p in contributions:
        v, _ = decode(fmt, p)
        if isinstance(v, Special):
            nan |= v.kind == "nan"
            pinf |= v.kind == "+inf"
            ninf |= v.kind == "-inf"
        else:
            term = v / KULISCH_LSB
            assert term.denominator == 1, "every finite input is a whole multiple of 2^-149"
            sigma += term.numerator
    return sigma, nan, pinf, ninf


def kulisch_result(out_fmt, contributions):
    """Pattern of `out_fmt` (INT8/FP16/BF16/FP32) for one element under KULISCH_FIXED."""
    sigma, nan, pinf, ninf = kulisch_sigma(contributions)
    if nan or (pinf and ninf):
        return CANONICAL_NAN[out_fmt]
    if pinf:
        return POS_INF[out_fmt]
    if ninf:
        return NEG_INF[out_fmt]
    return round_exact(out_fmt, sigma * KULISCH_LSB)       # an exact zero is +0


def kulisch_exact(contributions, kulisch_w):
    """The EXACT beat's content: (sigma, nan, pos_inf, neg_inf, overflow); the special bits are
    what was seen (docs/protocol.md: +inf and -inf both seen is a NaN value, bit 508 stays as seen)."""
    sigma, nan, pinf, ninf = kulisch_sigma(contributions)
    overflow = not (-(1 << (kulisch_w - 1)) <= sigma < (1 << (kulisch_w - 1)))
    return sigma, nan, pinf, ninf, overflow


def _as_f32(pattern):
    return np.array([pattern], dtype=np.uint32).view(np.float32)[0]


def _bits_f32(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def arrival_fp32(contributions):
    """FP32 pattern of one element under FP32_ARRIVAL: numpy float32 adds in admission order."""
    acc = None
    for fmt, p in contributions:
        x = _as_f32(to_fp32(fmt, p))
        acc = x if acc is None else np.float32(acc + x)
        if np.isnan(acc):
            acc = _as_f32(CANONICAL_NAN[W.FP32])
    return _bits_f32(acc)


def arrival_result(out_fmt, contributions):
    return fp32_to(out_fmt, arrival_fp32(contributions))


def fp32_value(policy, contributions):
    """The element's FP32 pattern that AUTO classifies."""
    if policy == W.KULISCH_FIXED:
        return kulisch_result(W.FP32, contributions)
    return arrival_fp32(contributions)


def auto_format(fp32_patterns):
    """Narrowest of INT8, FP16, BF16, FP32 in which every pattern of the tile round-trips."""
    for fmt in (W.INT8, W.FP16, W.BF16):
        if all(to_fp32(fmt, fp32_to(fmt, p)) == p for p in fp32_patterns):
            return fmt
    return W.FP32


def block_groups(policy, out_fmt, per_element, kulisch_w=320):
    """Expected groups of one block: [(format, [values])], values as patterns, or as
    (sigma, nan, pos_inf, neg_inf, overflow) for EXACT.  `per_element`: contributions
    of the block's elements in admission order."""
    if out_fmt == W.EXACT:
        return [(W.EXACT, [kulisch_exact(c, kulisch_w) for c in per_element])]
    if out_fmt != W.AUTO:
        f = kulisch_result if policy == W.KULISCH_FIXED else arrival_result
        return [(out_fmt, [f(out_fmt, c) for c in per_element])]
    groups = []
    for t in range(0, len(per_element), W.RANGE):
        tile = [fp32_value(policy, c) for c in per_element[t:t + W.RANGE]]
        fmt = auto_format(tile)
        vals = [fp32_to(fmt, p) for p in tile]
        if groups and groups[-1][0] == fmt:
            groups[-1][1].extend(vals)
        else:
            groups.append((fmt, vals))
    return groups


# ------------------------------------------------------------------------------- the node
class Operation:
    def __init__(self, op_id, generation, policy, in_fmt, out_fmt, mode, count, contributors, recipients):
        self.op_id, self.generation = op_id, generation
        self.policy, self.in_fmt, self.out_fmt, self.mode = policy, in_fmt, out_fmt, mode
        self.count, self.contributors, self.recipients = count, contributors, recipients
        self.members = [c for c in range(8) if contributors >> c & 1]
        self.n_ranges = -(-count // W.RANGE)
        self.n_blocks = -(-count // W.BLOCK)
        self.sent = {}                               # (contributor, range) admitted
        self.elements = [[] for _ in range(count)]   # contributions in admission order
        self.open = False
        self.aborted = False
        self.blocks_done = []

    @property
    def key(self):
        return (self.op_id, self.generation)

    def range_complete(self, r):
        return all((c, r) in self.sent for c in self.members)

    def block_ranges(self, b):
        return range(b * W.BLOCK // W.RANGE, min((b + 1) * W.BLOCK // W.RANGE, self.n_ranges))

    def block_complete(self, b):
        return all(self.range_complete(r) for r in self.block_ranges(b))

    def __repr__(self):
        return (f"op {self.op_id}/{self.generation} {W.POLICIES[self.policy]} {W.FORMATS[self.in_fmt]}->"
                f"{W.FORMATS[self.out_fmt]} E={self.count} contributors={self.contributors:#x} "
                f"recipients={self.recipients:#x}")


class ExpectedResult:
    def __init__(self, op, block, groups):
        self.op, self.block, self.groups = op, block, groups
        self.offset = block * W.BLOCK
        self.count = min(W.BLOCK, op.count - self.offset)


class NodeModel:
    """The node as docs/protocol.md describes it, frame by frame in processing order."""

    def __init__(self, capacity=4096, kulisch_w=320):
        self.capacity, self.kulisch_w = capacity, kulisch_w
        self.staged = None
        self.active = None
        self.counters = {k: 0 for k in W.all_counter_selects()}
        self.responses = []          # expected CONTROL responses, in order (TX port 0)
        self.results = []            # ExpectedResult, in the order their blocks completed
        self.operations = []         # every committed operation, in commit order

    # -- CONTROL -------------------------------------------------------------------------
    def _control(self, port, frame):
        h = frame[0]
        opcode, op_id, gen = W.bits(h, 7, 4), W.bits(h, 15, 8), W.bits(h, 31, 16)
        self.counters[(port, "control")] += 1
        reason = self._control_reason(opcode, op_id, gen, h, len(frame))
        if reason == "OK":
            if opcode == W.OP_STAGE:
                self.staged = Operation(op_id, gen, W.bits(h, 33, 32), W.bits(h, 37, 36), W.bits(h, 42, 40),
                                        W.bits(h, 44, 44), W.bits(h, 60, 48), W.bits(h, 71, 64), W.bits(h, 81, 80))
            elif opcode == W.OP_COMMIT:
                self.active, self.staged = self.staged, None
                self.active.open = True
                self.operations.append(self.active)
            else:                                      # ABORT
                self.active.open = False
                self.active.aborted = True
        r = W.Response(reason == "OK", op_id, gen, W.REASON[reason], opcode)
        self.responses.append(r)
        return r

    def _control_reason(self, opcode, op_id, gen, h, n_beats):
        if n_beats > 1:
            return "BAD_LENGTH"
        if opcode == W.OP_STAGE:
            policy, out_fmt, mode = W.bits(h, 33, 32), W.bits(h, 42, 40), W.bits(h, 44, 44)
            count, contributors, recipients = W.bits(h, 60, 48), W.bits(h, 71, 64), W.bits(h, 81, 80)
            if policy not in (W.KULISCH_FIXED, W.FP32_ARRIVAL):
                return "BAD_POLICY"
            if out_fmt > W.AUTO or (out_fmt == W.EXACT and policy == W.FP32_ARRIVAL):
                return "BAD_FORMAT"
            if count == 0 or count > self.capacity:
                return "BAD_COUNT"
            if contributors == 0:
                return "BAD_CONTRIBUTORS"
            if recipients == 0 or (mode == W.REDUCE and recipients == 0b11):
                return "BAD_RECIPIENTS"
            return "OK"
        if opcode == W.OP_COMMIT:
            if self.staged is None:
                return "NO_STAGED"
            if (op_id, gen) != self.staged.key:
                return "STAGED_MISMATCH"
            if self.active is not None and self.active.open:
                return "BUSY"
            return "OK"
        if opcode == W.OP_ABORT:
            if self.active is None or not self.active.open:
                return "NOT_OPEN"
            if (op_id, gen) != self.active.key:
                return "ACTIVE_MISMATCH"
            return "OK"
        return "BAD_OPCODE"

    # -- DATA ----------------------------------------------------------------------------
    def data_verdict(self, frame):
        """'admit' or the drop reason of a DATA frame, against the current state."""
        h = frame[0]
        if len(frame) > W.MAX_FRAME_BEATS:
            return "too_long"
        op = self.active
        if op is None or not op.open:
            return "no_operation"
        if W.bits(h, 15, 8) != op.op_id:
            return "wrong_op"
        if W.bits(h, 31, 16) != op.generation:
            return "stale_generation"
        contributor = W.bits(h, 34, 32)
        if not op.contributors >> contributor & 1:
            return "bad_contributor"
        fmt = W.bits(h, 37, 36)
        if fmt != op.in_fmt:
            return "bad_format"
        offset, n = W.bits(h, 60, 48), W.bits(h, 76, 64)
        if not (n >= 1 and offset % W.RANGE == 0 and offset + n <= op.count
                and (n % W.RANGE == 0 or offset + n == op.count)):
            return "bad_range"
        if len(frame) != 1 + -(-n // W.PER_BEAT[fmt]):
            return "bad_length"
        ranges = range(offset // W.RANGE, -(-(offset + n) // W.RANGE))
        if any((contributor, r) in op.sent for r in ranges):
            return "duplicate"
        return "admit"

    def _data(self, port, frame):
        verdict = self.data_verdict(frame)
        if verdict != "admit":
            self.counters[(port, verdict)] += 1
            return verdict
        self.counters[(port, "admitted")] += 1
        op, h = self.active, frame[0]
        contributor, fmt = W.bits(h, 34, 32), W.bits(h, 37, 36)
        offset, n = W.bits(h, 60, 48), W.bits(h, 76, 64)
        for j, p in enumerate(W.unpack(fmt, frame[1:], n)):
            op.elements[offset + j].append((fmt, p))
        for r in range(offset // W.RANGE, -(-(offset + n) // W.RANGE)):
            op.sent[(contributor, r)] = True
            if op.range_complete(r):
                self.counters["ranges_completed"] += 1
        for b in range(op.n_blocks):
            if b not in op.blocks_done and op.block_complete(b):
                op.blocks_done.append(b)
                per_element = op.elements[b * W.BLOCK:min((b + 1) * W.BLOCK, op.count)]
                self.results.append(ExpectedResult(op, b, block_groups(op.policy, op.out_fmt, per_element,
                                                                       self.kulisch_w)))
        if all(op.range_complete(r) for r in range(op.n_ranges)):
            op.open = False                            # the operation ends at this admission
        return "admit"

    # -- any frame -----------------------------------------------------------------------
    def process(self, port, frame):
        """Apply one received frame; returns the Response, 'admit' or the drop/unsupported verdict."""
        cls = W.bits(frame[0], 3, 0)
        if cls == W.CLASS_CONTROL:
            return self._control(port, frame)
        if cls == W.CLASS_DATA:
            return self._data(port, frame)
        self.counters[(port, "unsupported")] += 1
        return "unsupported"

    def reset(self):
        """rst: everything but the counters returns to power-on."""
        if self.active is not None:
            self.active.open = False
        self.staged = None
        self.active = None

    def expected_results_for(self, op):
        return [r for r in self.results if r.op is op]
