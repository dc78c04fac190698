"""FP32 arithmetic reference (pure Python, Fractions) and the FP32_ARRIVAL fold.

`fp32_add` is IEEE 754 binary32 addition, round to nearest ties to even,
subnormals kept (no FTZ/DAZ), with one deviation from IEEE's NaN payload
rules: every NaN result (NaN operand, inf - inf) is the canonical quiet NaN
0x7FC00000.  Signed zeros follow IEEE: x + (-x) = +0, (-0) + (-0) = -0.
"""
import functools
import struct

from golden.arith.formats import MINUS_INF, NAN, PLUS_INF, canonical_nan, decode, fp32_to_format, format_to_fp32, round_exact, sign_bit
from spec.formats import INF_FP32, NAN_FP32, SIGN_FP32


def fp32_add(a_bits, b_bits):
    """One binary32 addition on bit patterns (RNE, canonical NaN)."""
    a = decode("fp32", a_bits)
    b = decode("fp32", b_bits)
    if a == NAN or b == NAN:
        return NAN_FP32
    if isinstance(a, str) or isinstance(b, str):
        infs = {x for x in (a, b) if isinstance(x, str)}
        if infs == {PLUS_INF, MINUS_INF}:
            return NAN_FP32
        return round_exact("fp32", infs.pop())
    s = a + b
    if s == 0:
        # Exact zero: -0 only when both operands are -0 (RNE rule).
        both_neg = a == 0 and b == 0 and sign_bit("fp32", a_bits) and sign_bit("fp32", b_bits)
        return round_exact("fp32", s, neg_zero=both_neg)
    return round_exact("fp32", s)


# --- the same two operations on the host's binary64 -----------------------------------------
# The transaction-level node model adds FP32 values tens of thousands of times per regression
# seed; these give the bits of `fp32_add` and `format_to_fp32` at a fraction of the cost and are
# held to them bit for bit (tests/arith/test_fp32_fast.py: TestFloat's f32_add vectors, every
# 16-bit pattern, random and adversarial pairs).  Why the add is exact: both operands are
# binary64 values exactly, their sum rounded once to binary64 (53 bits) and then to binary32
# (24 bits) is the sum rounded once to binary32, because 53 >= 2 * 24 + 2 (double rounding is
# innocuous for +, -, *, / under that bound: Figueroa, "When is double rounding innocuous?",
# SIGNUM 1995); zeros, infinities and the canonical NaN follow the same IEEE rules.
_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")


def _f32(bits):
    return _F32.unpack(_U32.pack(bits))[0]


def fp32_add_fast(a_bits, b_bits):
    """`fp32_add` on the host's binary64 arithmetic (same bits; see above)."""
    s = _f32(a_bits) + _f32(b_bits)
    if s != s:
        return NAN_FP32
    try:
        return _U32.unpack(_F32.pack(s))[0]
    except OverflowError:           # finite, but rounds past binary32's largest value
        return INF_FP32 | (SIGN_FP32 if s < 0 else 0)


@functools.lru_cache(maxsize=None)
def _narrow_to_fp32(fmt, bits):
    return format_to_fp32(fmt, bits)


def format_to_fp32_fast(fmt, bits):
    """`format_to_fp32`, each pattern of the 8- and 16-bit formats converted once per process."""
    if fmt == "fp32":
        bits = int(bits)
        if not 0 <= bits <= 0xFFFFFFFF:
            return format_to_fp32(fmt, bits)         # its error
        return NAN_FP32 if (bits & INF_FP32) == INF_FP32 and bits & 0x7FFFFF else bits
    return _narrow_to_fp32(fmt, int(bits))


def fp32_arrival_fold(in_fmt, bits_seq, out_fmt="fp32"):
    """FP32_ARRIVAL for one element: the first contribution initialises the
    sum (converted exactly to FP32), each later one is added with one FP32 add
    in admission order; the FP32 result is finally rounded to `out_fmt`.
    Returns None for an empty sequence."""
    acc = None
    for b in bits_seq:
        x = format_to_fp32(in_fmt, int(b))
        acc = x if acc is None else fp32_add(acc, x)
    if acc is None:
        return None
    return fp32_to_format(out_fmt, acc)
