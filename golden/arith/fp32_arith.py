"""FP32 arithmetic reference (pure Python, Fractions) and the FP32_ARRIVAL fold.

`fp32_add` is IEEE 754 binary32 addition, round to nearest ties to even,
subnormals kept (no FTZ/DAZ), with one deviation from IEEE's NaN payload
rules: every NaN result (NaN operand, inf - inf) is the canonical quiet NaN
0x7FC00000.  Signed zeros follow IEEE: x + (-x) = +0, (-0) + (-0) = -0.
"""
from golden.arith.formats import NAN, POS_INF, NEG_INF, canonical_nan, decode, fp32_to_format, format_to_fp32, round_exact, sign_bit
from spec.formats import NAN_FP32 as FP32_CANONICAL_NAN


def fp32_add(a_bits, b_bits):
    """One binary32 addition on bit patterns (RNE, canonical NaN)."""
    a = decode("fp32", a_bits)
    b = decode("fp32", b_bits)
    if a == NAN or b == NAN:
        return FP32_CANONICAL_NAN
    if isinstance(a, str) or isinstance(b, str):
        infs = {x for x in (a, b) if isinstance(x, str)}
        if infs == {POS_INF, NEG_INF}:
            return FP32_CANONICAL_NAN
        return round_exact("fp32", infs.pop())
    s = a + b
    if s == 0:
        # Exact zero: -0 only when both operands are -0 (RNE rule).
        both_neg = a == 0 and b == 0 and sign_bit("fp32", a_bits) and sign_bit("fp32", b_bits)
        return round_exact("fp32", s, neg_zero=both_neg)
    return round_exact("fp32", s)


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
