"""spec.formats: the values are derived again here from IEEE 754 and Python's own floats, not
copied from the module, so a wrong constant fails."""
import math
import struct

import numpy as np

from spec import formats as S


def _float_bits(x, fmt):
    """Bit pattern of the Python float x in an IEEE format, by the host's own encoders."""
    if fmt == S.FMT_FP32:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if fmt == S.FMT_FP16:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16     # BF16: the top half of FP32


def test_format_codes_are_the_protocol_order_and_unique():
    assert [S.FORMAT_NAMES[c] for c in range(6)] == ["int8", "fp16", "bf16", "fp32", "exact", "auto"]
    assert len(set(S.FORMAT_NAMES.values())) == len(S.FORMAT_NAMES)
    assert all(S.FORMAT_CODES[n] == c for c, n in S.FORMAT_NAMES.items())
    assert S.INPUT_FORMAT_CODES == {"int8": 0, "fp16": 1, "bf16": 2, "fp32": 3}
    # the RESULT group descriptor carries a format in 3 bits, DATA/STAGE input formats in 2
    assert max(S.FORMAT_NAMES) < 8 and max(S.INPUT_FORMATS) < 4


def test_element_widths_and_float_layouts_match_numpy():
    dtypes = {S.FMT_INT8: np.int8, S.FMT_FP16: np.float16, S.FMT_FP32: np.float32}
    for code, dt in dtypes.items():
        assert S.ELEMENT_BITS[code] == np.dtype(dt).itemsize * 8
    for code, dt in ((S.FMT_FP16, np.float16), (S.FMT_FP32, np.float32)):
        info = np.finfo(dt)
        assert S.FLOAT_LAYOUT[code] == (info.nexp, info.nmant)
    # BF16 is FP32's top half: same exponent, 16 - 1 - 8 fraction bits
    assert S.FLOAT_LAYOUT[S.FMT_BF16] == (S.FLOAT_LAYOUT[S.FMT_FP32][0], S.ELEMENT_BITS[S.FMT_BF16] - 1 - 8)
    for code, (e, m) in S.FLOAT_LAYOUT.items():
        assert 1 + e + m == S.ELEMENT_BITS[code]


def test_kulisch_lsb_exponent_is_the_smallest_fp32_subnormal():
    tiny = float(np.nextafter(np.float32(0), np.float32(1)))     # smallest positive FP32
    mant, exp = math.frexp(tiny)                                  # tiny = 0.5 * 2^exp
    assert mant == 0.5 and exp - 1 == S.KULISCH_LSB_EXP
    assert _float_bits(tiny, S.FMT_FP32) == 1                     # it is the pattern 0x00000001
    # every finite value of the four formats is an integer multiple of 2^KULISCH_LSB_EXP
    for x in (tiny, float(np.finfo(np.float16).smallest_subnormal), 1.0, float(np.finfo(np.float32).max)):
        assert (math.ldexp(x, -S.KULISCH_LSB_EXP)).is_integer()
    assert not math.ldexp(tiny / 2, -S.KULISCH_LSB_EXP).is_integer()
    assert S.KULISCH_LSB_SHIFT == -S.KULISCH_LSB_EXP == 149 and math.ldexp(tiny, S.KULISCH_LSB_SHIFT) == 1.0


def test_kulisch_widths_hold_every_fp32_term_and_overflow_beyond_every_format():
    flt_max_term = math.ldexp(float(np.finfo(np.float32).max), -S.KULISCH_LSB_EXP)
    need = int(flt_max_term).bit_length() + 1                     # plus a sign bit
    assert need == 278 == S.KULISCH_MIN_WIDTH
    for w in S.KULISCH_WIDTHS:
        assert w >= need
        # a wrapped W-bit register means |sum| >= 2^(W-1) LSBs, beyond FP32's largest finite value
        assert math.ldexp(1.0, w - 1 + S.KULISCH_LSB_EXP) > float(np.finfo(np.float32).max)
    assert S.KULISCH_WIDTH_DEFAULT in S.KULISCH_WIDTHS and sorted(S.KULISCH_WIDTHS) == [280, 320]
    assert S.KULISCH_WIDTH_CHOICES == (320, 280) and S.KULISCH_WIDTH_CHOICES[0] == S.KULISCH_WIDTH_DEFAULT


def test_canonical_nan_is_the_hosts_quiet_nan_and_infinities_are_ieee():
    for code in (S.FMT_FP16, S.FMT_BF16, S.FMT_FP32):
        e, m = S.FLOAT_LAYOUT[code]
        sign = 1 << (e + m)
        quiet = 1 << (m - 1)                                      # the quiet bit: top of the fraction
        assert S.CANONICAL_NAN[code] == _float_bits(float("nan"), code) == (((1 << e) - 1) << m) | quiet
        assert S.POS_INF[code] == _float_bits(math.inf, code) == ((1 << e) - 1) << m
        assert S.NEG_INF[code] == _float_bits(-math.inf, code) == S.POS_INF[code] | sign
    assert (S.NAN_FP32, S.INF_FP32, S.NEG_INF_FP32, S.SIGN_FP32) == (
        _float_bits(float("nan"), S.FMT_FP32), _float_bits(math.inf, S.FMT_FP32),
        _float_bits(-math.inf, S.FMT_FP32), _float_bits(-0.0, S.FMT_FP32))
    assert S.SIGN_FP16 == _float_bits(-0.0, S.FMT_FP16) and S.SIGN_BF16 == _float_bits(-0.0, S.FMT_BF16)


def test_int8_specials_are_the_saturation_bounds():
    # INT8 has no NaN: NaN and -inf give -128 (the integer indefinite), +inf saturates to 127
    assert S.NAN_INT8 == S.NEG_INF_INT8 == np.int8(-128).view(np.uint8)
    assert S.INF_INT8 == np.int8(127).view(np.uint8)
    assert S.CANONICAL_NAN[S.FMT_INT8] == S.NEG_INF[S.FMT_INT8] == 0x80 and S.POS_INF[S.FMT_INT8] == 0x7F
