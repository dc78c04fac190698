"""golden.arith.formats: encode/decode, rounding, conversions.

Checked against Berkeley TestFloat 3 vectors (NaN results compared as "is NaN",
since TestFloat propagates payloads) and against numpy's independent
float16/float32 conversions; the canonical-NaN rule is checked separately.
"""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from golden.arith import formats as F
from golden.arith.testfloat import read_vectors

EXP2 = lambda e: Fraction(2) ** e  # noqa: E731


def _ok(fmt, got, want):
    if F.is_nan(fmt, want):
        return F.is_nan(fmt, got)
    return got == want


@pytest.mark.parametrize("fname,src,dst", [
    ("f32_to_f16", "fp32", "fp16"),
    ("f32_to_bf16", "fp32", "bf16"),
    ("f16_to_f32", "fp16", "fp32"),
    ("bf16_to_f32", "bf16", "fp32"),
])
def test_conversions_match_testfloat(fname, src, dst):
    vecs = read_vectors(fname + ".level1.rne")
    assert len(vecs) >= 400
    bad = [(a, z) for a, z, _ in vecs if not _ok(dst, F.convert(src, dst, a), z)]
    assert bad == []


def test_i32_to_f32_matches_testfloat():
    vecs = read_vectors("i32_to_f32.level1.rne")
    bad = [(a, z) for a, z, _ in vecs if F.round_exact("fp32", a - (a >> 31 << 32)) != z]
    assert bad == []


def test_round_half_even_matches_testfloat_f32_to_i32():
    # The INT8 rounding step is "nearest integer, ties to even"; TestFloat's
    # f32_to_i32 (RNE) checks that step wherever the result is not invalid.
    checked = 0
    for a, z, flags in read_vectors("f32_to_i32.level1.rne"):
        v = F.decode("fp32", a)
        if flags & 0x10:
            continue
        checked += 1
        assert F.round_half_even(v) & 0xFFFFFFFF == z, hex(a)
    assert checked > 300


def test_f32_add_vectors_with_canonical_nan():
    from golden.arith.fp32_arith import fp32_add
    vecs = read_vectors("f32_add.level1.rne")
    nan_results = 0
    for a, b, z, _ in vecs:
        r = fp32_add(a, b)
        if F.is_nan("fp32", z):
            nan_results += 1
            assert r == 0x7FC00000, (hex(a), hex(b))
        else:
            assert r == z, (hex(a), hex(b), hex(z), hex(r))
    assert nan_results > 1000


def test_canonical_nans_and_infinities():
    assert F.canonical_nan("fp32") == 0x7FC00000
    assert F.canonical_nan("fp16") == 0x7E00
    assert F.canonical_nan("bf16") == 0x7FC0
    assert F.canonical_nan("int8") == 0x80
    for fmt in ("fp32", "fp16", "bf16"):
        assert F.is_nan(fmt, F.canonical_nan(fmt))
        assert F.round_exact(fmt, "nan") == F.canonical_nan(fmt)
    assert F.infinity("fp32") == 0x7F800000 and F.infinity("fp32", True) == 0xFF800000
    assert F.infinity("fp16") == 0x7C00 and F.infinity("bf16", True) == 0xFF80
    assert F.infinity("int8") == 0x7F and F.infinity("int8", True) == 0x80
    # Payload NaNs convert to the canonical NaN, never propagate.
    assert F.fp32_to_format("fp16", 0xFFC12345) == 0x7E00
    assert F.fp32_to_format("fp32", 0xFF812345) == 0x7FC00000
    assert F.format_to_fp32("bf16", 0xFFC1) == 0x7FC00000
    assert F.fp32_to_format("int8", 0x7FC00000) == 0x80


def test_hand_rounding_cases():
    # FP16: smallest subnormal 2^-24; half of it ties to even (0), 3/4 rounds up.
    assert F.round_exact("fp16", EXP2(-24)) == 0x0001
    assert F.round_exact("fp16", EXP2(-25)) == 0x0000
    assert F.round_exact("fp16", -EXP2(-25)) == 0x8000       # IEEE: sign kept
    assert F.round_exact("fp16", 3 * EXP2(-26)) == 0x0001
    assert F.round_exact("fp16", 3 * EXP2(-25)) == 0x0002     # 1.5 ulp -> 2 (even)
    assert F.round_exact("fp16", 65504) == 0x7BFF
    assert F.round_exact("fp16", 65520) == 0x7C00             # halfway to 2^16: ties to even -> inf
    assert F.round_exact("fp16", 65519) == 0x7BFF
    assert F.round_exact("fp16", -70000) == 0xFC00
    # FP16 largest subnormal rounding up into the smallest normal.
    assert F.round_exact("fp16", EXP2(-14) - EXP2(-26)) == 0x0400
    # BF16 / FP32 extremes.
    assert F.round_exact("bf16", 1 + EXP2(-8)) == 0x3F80            # tie -> even
    assert F.round_exact("bf16", 1 + 3 * EXP2(-8)) == 0x3F82
    assert F.round_exact("fp32", EXP2(-149)) == 0x00000001
    assert F.round_exact("fp32", EXP2(-150)) == 0x00000000
    assert F.round_exact("fp32", (2 - EXP2(-23)) * EXP2(127)) == 0x7F7FFFFF
    assert F.round_exact("fp32", (2 - EXP2(-24)) * EXP2(127)) == 0x7F800000
    # Zero: +0 unless asked.
    assert F.round_exact("fp32", 0) == 0 and F.round_exact("fp32", 0, neg_zero=True) == 0x80000000
    # INT8: nearest-even then saturate.
    assert [F.round_exact("int8", Fraction(x, 2)) for x in (1, 3, 5, -1, -3, -5)] == [0, 2, 2, 0, 0xFE, 0xFE]
    assert F.round_exact("int8", 127.5) == 0x7F and F.round_exact("int8", Fraction(-257, 2)) == 0x80
    assert F.round_exact("int8", 10 ** 40) == 0x7F and F.round_exact("int8", -(10 ** 40)) == 0x80
    assert F.fp32_to_format("int8", 0x80000000) == 0                  # -0 -> 0
    assert F.fp32_to_format("int8", 0xFF800000) == 0x80


def test_decode_values():
    assert F.decode("int8", 0x80) == -128 and F.decode("int8", 0x7F) == 127
    assert F.decode("fp16", 0x3C00) == 1 and F.decode("fp16", 0x0001) == EXP2(-24)
    assert F.decode("bf16", 0x0001) == EXP2(-133)
    assert F.decode("fp32", 0x00000001) == EXP2(-149)
    assert F.decode("fp32", 0x7F7FFFFF) == (2 ** 24 - 1) * EXP2(104)
    assert F.decode("fp16", 0xFC00) == "-inf" and F.decode("bf16", 0x7F80) == "+inf"
    assert F.decode("fp32", 0x7F800001) == "nan"
    with pytest.raises(ValueError):
        F.decode("fp16", 0x10000)
    with pytest.raises(ValueError):
        F.decode("fp8", 0)


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "int8"])
def test_every_pattern_round_trips(fmt):
    # Exhaustive: decode then round back gives the same pattern (non-NaN).
    for b in range(1 << F.WIDTH_BITS[fmt]):
        if F.is_nan(fmt, b):
            continue
        v = F.decode(fmt, b)
        neg_zero = fmt != "int8" and F.sign_bit(fmt, b)
        assert F.round_exact(fmt, v, neg_zero=neg_zero) == b
        # and the Kulisch term is exact
        t, nan, pinf, ninf = F.to_kulisch_term(fmt, b)
        if not (pinf or ninf):
            assert Fraction(t, 2 ** 149) == v


def test_fp16_widening_matches_numpy_exhaustively():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    want = bits.view(np.float16).astype(np.float32).view(np.uint32)
    for b, w in zip(bits.tolist(), want.tolist()):
        got = F.format_to_fp32("fp16", b)
        if F.is_nan("fp16", b):
            assert got == 0x7FC00000
        else:
            assert got == w, hex(b)


@settings(max_examples=1000, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_fp32_narrowing_matches_independent_models(b):
    f16 = F.fp32_to_format("fp16", b)
    with np.errstate(over="ignore"):
        np16 = int(np.array([b], np.uint32).view(np.float32).astype(np.float16).view(np.uint16)[0])
    bf = F.fp32_to_format("bf16", b)
    if F.is_nan("fp32", b):
        assert f16 == 0x7E00 and bf == 0x7FC0
        return
    assert f16 == np16
    # Integer RNE model of FP32 -> BF16: add 0x7FFF plus the kept LSB, truncate.
    assert bf == ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF
    assert F.fp32_to_format("fp32", b) == b


@settings(max_examples=2000, deadline=None)
@given(st.integers(-(2 ** 300), 2 ** 300), st.integers(0, 400))
def test_round_exact_fp32_matches_numpy_double_rounding_free_cases(num, sh):
    # For values exactly representable as float64 numpy's float64->float32
    # cast is a single correctly rounded step: an independent check.
    v = Fraction(num, 2 ** sh)
    d = float(v)
    if Fraction(d) != v:
        return
    with np.errstate(over="ignore"):
        want = int(np.array([d]).astype(np.float32).view(np.uint32)[0])
    if v == 0:
        want = 0
    assert F.round_exact("fp32", v) == want
