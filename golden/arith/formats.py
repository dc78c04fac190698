"""Bit-level model of the four native number formats: INT8, FP16, BF16, FP32.

Deliberately simple pure-Python reference: values are `fractions.Fraction`,
bit patterns are Python ints.  Every other implementation (numba, C, MyHDL)
is checked against this module.

Rules (see docs/arithmetic.md):
- Rounding of an exact value: round to nearest, ties to even.  Floats overflow
  to +/-inf and keep subnormals (never flushed).  INT8 rounds to the nearest
  (ties-to-even) integer, then saturates to [-128, 127].
- An exact zero rounds to +0 unless the caller asks for -0 (`neg_zero=True`,
  used by IEEE addition of two -0 operands).  A non-zero value that is too
  small for the format rounds to a zero carrying the value's sign (IEEE).
- Canonical quiet NaN: FP32 0x7FC00000, FP16 0x7E00, BF16 0x7FC0.  INT8 has no
  NaN: NaN becomes 0x80 (-128, the "integer indefinite"); +inf -> 127,
  -inf -> -128.
"""
from fractions import Fraction

from spec import formats as _spec
from spec.formats import KULISCH_LSB_EXP  # noqa: F401  (Kulisch LSB weight 2^-149; re-exported)

# By format name; codes, widths and layouts from spec/formats.py.
FORMAT_CODE = dict(_spec.INPUT_FORMAT_CODES)
FORMATS = tuple(FORMAT_CODE)
WIDTH_BITS = {fmt: _spec.ELEMENT_BITS[code] for fmt, code in FORMAT_CODE.items()}

# What decode() gives for a special (a tag, not a bit pattern: those are spec's NAN_*, INF_*, ...).
NAN = "nan"
PLUS_INF = "+inf"
MINUS_INF = "-inf"


UINT_DTYPE = {8: "uint8", 16: "uint16", 32: "uint32"}   # numpy dtype of a format's bit patterns


def bit_array(fmt, data, ndim):
    """`data` as a contiguous numpy array of `fmt` bit patterns with `ndim` dimensions (the fast
    kernels' input); a clear ValueError for an unknown format or a wrong shape."""
    import numpy as np
    if fmt not in FORMAT_CODE:
        raise ValueError(f"unknown number format {fmt!r}")
    a = np.ascontiguousarray(data, dtype=UINT_DTYPE[WIDTH_BITS[fmt]])
    if a.ndim != ndim:
        raise ValueError(f"expected a {ndim}-d array of {fmt} bit patterns, got shape {a.shape}")
    return a


def accumulator_state(state, limbs):
    """The fast kernels' kulisch_accumulate start: (limbs, a fresh uint64 array of `limbs` words,
    wraps, flags) from `state` = (limbs, wraps, flags), or a zero state when `state` is None."""
    import numpy as np
    if state is None:
        return np.zeros(limbs, np.uint64), 0, 0
    return np.array(state[0], np.uint64).reshape(limbs), int(state[1]), int(state[2])   # np.array copies


def _check_fmt(fmt):
    if fmt not in WIDTH_BITS:
        raise ValueError(f"unknown number format {fmt!r}; expected one of {', '.join(FORMATS)}")


def _check_bits(fmt, bits):
    bits = int(bits)
    if not 0 <= bits < (1 << WIDTH_BITS[fmt]):
        raise ValueError(f"{fmt} bit pattern {bits:#x} does not fit in {WIDTH_BITS[fmt]} bits")
    return bits


def float_params(fmt):
    """(exponent bits, fraction bits, bias, emin, emax) of a float format."""
    ebits, mbits = _spec.FLOAT_LAYOUT[FORMAT_CODE[fmt]]
    bias = (1 << (ebits - 1)) - 1
    return ebits, mbits, bias, 1 - bias, bias


def canonical_nan(fmt):
    """The format's canonical quiet NaN (INT8: 0x80, the integer indefinite)."""
    _check_fmt(fmt)
    return _spec.CANONICAL_NAN[FORMAT_CODE[fmt]]


def infinity(fmt, negative=False):
    """Bit pattern of +/-inf (INT8: saturated 127 / -128)."""
    _check_fmt(fmt)
    if fmt == "int8":
        return 0x80 if negative else 0x7F
    ebits, mbits, _, _, _ = float_params(fmt)
    return (int(negative) << (ebits + mbits)) | (((1 << ebits) - 1) << mbits)


def sign_bit(fmt, bits):
    """True if the pattern's sign bit is set (for INT8: the value is negative)."""
    _check_fmt(fmt)
    bits = _check_bits(fmt, bits)
    return bool(bits >> (WIDTH_BITS[fmt] - 1))


def is_nan(fmt, bits):
    _check_fmt(fmt)
    bits = _check_bits(fmt, bits)
    if fmt == "int8":
        return False
    ebits, mbits, _, _, _ = float_params(fmt)
    return (bits >> mbits) & ((1 << ebits) - 1) == (1 << ebits) - 1 and bits & ((1 << mbits) - 1) != 0


def decode(fmt, bits):
    """Value of a bit pattern: a `Fraction` for finite values (both zeros give
    Fraction(0); use `sign_bit` to tell -0 apart), or one of the strings
    "nan", "+inf", "-inf"."""
    _check_fmt(fmt)
    bits = _check_bits(fmt, bits)
    if fmt == "int8":
        return Fraction(bits - 256 if bits & 0x80 else bits)
    ebits, mbits, bias, emin, _ = float_params(fmt)
    negative = bits >> (ebits + mbits)
    exp_field = (bits >> mbits) & ((1 << ebits) - 1)
    frac = bits & ((1 << mbits) - 1)
    if exp_field == (1 << ebits) - 1:
        if frac:
            return NAN
        return MINUS_INF if negative else PLUS_INF
    if exp_field == 0:
        mag = Fraction(frac) * Fraction(2) ** (emin - mbits)
    else:
        mag = Fraction(frac + (1 << mbits)) * Fraction(2) ** (exp_field - bias - mbits)
    return -mag if negative else mag


def round_half_even(value):
    """Nearest integer to a Fraction, ties to even."""
    value = Fraction(value)
    q, r = divmod(value.numerator, value.denominator)   # floor division, 0 <= r < den
    twice = 2 * r
    if twice > value.denominator or (twice == value.denominator and q & 1):
        q += 1
    return q


def _floor_log2(mag):
    """floor(log2(mag)) for a positive Fraction."""
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    return e


def round_exact(fmt, value, neg_zero=False):
    """Bit pattern of the exact value `value` (Fraction, int, or one of
    "nan"/"+inf"/"-inf") rounded to `fmt` (RNE, see the module docstring)."""
    _check_fmt(fmt)
    if isinstance(value, str):
        if value == NAN:
            return canonical_nan(fmt)
        if value in (PLUS_INF, MINUS_INF):
            return infinity(fmt, value == MINUS_INF)
        raise ValueError(f"not a value: {value!r}")
    value = Fraction(value)
    if fmt == "int8":
        n = round_half_even(value)
        return max(-128, min(127, n)) & 0xFF
    ebits, mbits, bias, emin, emax = float_params(fmt)
    sign = int(value < 0) if value != 0 else int(bool(neg_zero))
    sign_mask = sign << (ebits + mbits)
    mag = abs(value)
    if mag == 0:
        return sign_mask
    e = max(_floor_log2(mag), emin)
    n = round_half_even(mag / Fraction(2) ** (e - mbits))
    if n == 1 << (mbits + 1):          # rounding carried into the next binade
        n >>= 1
        e += 1
    if e > emax:
        return sign_mask | infinity(fmt)
    if n == 0:                          # underflow to a zero of the value's sign
        return sign_mask
    if n >= 1 << mbits:
        return sign_mask | ((e + bias) << mbits) | (n - (1 << mbits))
    return sign_mask | n                # subnormal (e == emin)


def to_kulisch_term(fmt, bits):
    """(term, nan, pos_inf, neg_inf): term is the integer value * 2^149 for a
    finite value (0 for specials); exactly one flag is set for a special.
    Integer arithmetic only (the value is m * 2^(e - bias - fraction bits),
    and every such exponent is >= -149), checked against decode() in tests."""
    _check_fmt(fmt)
    bits = _check_bits(fmt, bits)
    if fmt == "int8":
        return (bits - 256 if bits & 0x80 else bits) << -KULISCH_LSB_EXP, False, False, False
    ebits, mbits, bias, _, _ = float_params(fmt)
    negative = bits >> (ebits + mbits)
    exp_field = (bits >> mbits) & ((1 << ebits) - 1)
    frac = bits & ((1 << mbits) - 1)
    if exp_field == (1 << ebits) - 1:
        return 0, bool(frac), not frac and not negative, not frac and bool(negative)
    m = frac | (1 << mbits) if exp_field else frac
    term = m << (max(exp_field, 1) - bias - mbits - KULISCH_LSB_EXP)
    return (-term if negative else term), False, False, False


def fp32_to_format(fmt, bits32):
    """Round an FP32 pattern to `fmt` (NaN -> the format's canonical NaN; the
    sign of zero is kept for floats)."""
    _check_fmt(fmt)
    v = decode("fp32", bits32)
    if fmt == "fp32":
        return canonical_nan("fp32") if v == NAN else _check_bits("fp32", bits32)
    return round_exact(fmt, v, neg_zero=sign_bit("fp32", bits32))


def format_to_fp32(fmt, bits):
    """Exact conversion of a pattern to FP32 (NaN -> 0x7FC00000)."""
    _check_fmt(fmt)
    v = decode(fmt, bits)
    if fmt == "fp32":
        return canonical_nan("fp32") if v == NAN else _check_bits("fp32", bits)
    neg_zero = fmt != "int8" and sign_bit(fmt, bits)
    return round_exact("fp32", v, neg_zero=neg_zero)


def convert(src_fmt, dst_fmt, bits):
    """Convert a pattern between any two formats: exactly to FP32 first, then
    rounded to `dst_fmt` (every source value is exact in FP32, so this is a
    single rounding of the source value)."""
    return fp32_to_format(dst_fmt, format_to_fp32(src_fmt, bits))
