"""golden.arith.kulisch: the exact accumulator (pure-Python reference), both widths."""
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from golden.arith import formats as F
from golden.arith.kulisch import KULISCH_LSB_EXP, KulischAccumulator, kulisch_sum, limbs_to_signed

FLT_MAX = 0x7F7FFFFF
FLT_MAX_TERM = (2 ** 24 - 1) * 2 ** 253     # (2^24-1)*2^104 * 2^149


def test_lsb_and_largest_term():
    assert KULISCH_LSB_EXP == -149
    assert F.to_kulisch_term("fp32", 0x00000001) == (1, False, False, False)
    assert F.to_kulisch_term("fp32", FLT_MAX)[0] == FLT_MAX_TERM
    assert FLT_MAX_TERM < 2 ** 277            # one term fits in 278 signed bits
    assert F.to_kulisch_term("int8", 0x80)[0] == -128 * 2 ** 149
    assert F.to_kulisch_term("fp16", 0x0001)[0] == 2 ** 125
    assert F.to_kulisch_term("bf16", 0x0001)[0] == 2 ** 16


def test_tiny_survives_cancellation():
    acc = kulisch_sum("fp32", [0x3F800000, 0x00000001, 0xBF800000, FLT_MAX, 0xFF7FFFFF])
    assert acc.true_sum == 1 and not acc.overflow
    assert acc.result("fp32") == 0x00000001
    assert acc.result("fp16") == 0x0000 and acc.result("int8") == 0
    assert acc.exact_limbs() == [1, 0, 0, 0, 0]


@pytest.mark.parametrize("width", [320, 280])
def test_negative_state_is_sign_extended(width):
    acc = kulisch_sum("fp32", [0x80000001], width)          # -2^-149
    assert acc.state == 2 ** width - 1
    assert acc.exact_limbs() == [2 ** 64 - 1] * 5
    assert limbs_to_signed(acc.exact_limbs(), width) == -1
    assert acc.result("fp32") == 0x80000001
    assert acc.result("fp16") == 0x8000                     # tiny negative -> -0 (IEEE)


def test_overflows_280_but_not_320():
    seq = [FLT_MAX] * 5
    a280, a320 = kulisch_sum("fp32", seq, 280), kulisch_sum("fp32", seq, 320)
    true = 5 * FLT_MAX_TERM
    assert 2 ** 279 <= true < 2 ** 319
    assert not a320.overflow and a320.true_sum == true and a320.wraps == 0
    assert limbs_to_signed(a320.exact_limbs(), 320) == true
    assert a280.overflow and a280.wraps == 1 and a280.flags == 8
    # Export: the sum modulo 2^280 as a signed 280-bit value.
    assert limbs_to_signed(a280.exact_limbs(), 280) == true - 2 ** 280
    assert a280.true_sum == true
    # Rounded results are of the TRUE sum: beyond FP32 -> +inf; INT8 saturates.
    for acc in (a280, a320):
        assert acc.result("fp32") == 0x7F800000
        assert acc.result("bf16") == 0x7F80 and acc.result("int8") == 0x7F
    # Four terms fit 280 bits; the fifth wraps; cancelling brings the counter back.
    a = kulisch_sum("fp32", seq[:4], 280)
    assert not a.overflow
    a.add("fp32", FLT_MAX)
    assert a.wraps == 1
    for _ in range(5):
        a.add("fp32", 0xFF7FFFFF)
    assert a.wraps == 0 and a.true_sum == 0 and a.result("fp32") == 0


def test_negative_overflow_280():
    a = kulisch_sum("fp32", [0xFF7FFFFF] * 13, 280)
    assert a.wraps == -2 and a.overflow and a.true_sum == -13 * FLT_MAX_TERM
    assert a.result("fp32") == 0xFF800000 and a.result("int8") == 0x80
    assert limbs_to_signed(a.exact_limbs(), 280) == -13 * FLT_MAX_TERM + 2 * 2 ** 280


def test_specials():
    cases = [
        ([0x7F800000, 0x3F800000], {"fp32": 0x7F800000, "fp16": 0x7C00, "bf16": 0x7F80, "int8": 0x7F}, 2),
        ([0xFF800000], {"fp32": 0xFF800000, "fp16": 0xFC00, "bf16": 0xFF80, "int8": 0x80}, 4),
        ([0x7F800000, 0xFF800000], {"fp32": 0x7FC00000, "fp16": 0x7E00, "bf16": 0x7FC0, "int8": 0x80}, 6),
        ([0x7F800123, 0x3F800000], {"fp32": 0x7FC00000, "fp16": 0x7E00, "bf16": 0x7FC0, "int8": 0x80}, 1),
    ]
    for seq, want, flags in cases:
        acc = kulisch_sum("fp32", seq)
        assert acc.flags == flags
        assert {f: acc.result(f) for f in want} == want
    # Specials do not disturb the finite state.
    acc = kulisch_sum("fp32", [0x7F800000, 0x40000000])
    assert acc.true_sum == 2 * 2 ** 149


def test_negative_zero_terms_sum_to_plus_zero():
    acc = kulisch_sum("fp16", [0x8000, 0x8000])
    assert acc.result("fp32") == 0 and acc.result("fp16") == 0 and acc.state == 0


def test_width_is_validated():
    with pytest.raises(ValueError):
        KulischAccumulator(256)
    with pytest.raises(ValueError):
        KulischAccumulator(280).merge(KulischAccumulator(320))


finite_fp32 = st.integers(0, 2 ** 32 - 1).filter(lambda b: (b >> 23) & 0xFF != 0xFF)


@settings(max_examples=150, deadline=None)
@given(st.lists(finite_fp32, max_size=40), st.sampled_from([280, 320]), st.randoms(use_true_random=False))
def test_state_is_exact_sum_and_order_free(seq, width, rnd):
    acc = kulisch_sum("fp32", seq, width)
    exact = sum((F.decode("fp32", b) for b in seq), Fraction(0))
    assert acc.value() == exact
    assert acc.overflow == (not -(2 ** (width - 1)) <= acc.true_sum < 2 ** (width - 1))
    shuffled = list(seq)
    rnd.shuffle(shuffled)
    acc2 = kulisch_sum("fp32", shuffled, width)
    assert (acc2.state, acc2.wraps) == (acc.state, acc.wraps)
    # Merging port-local partial states equals accumulating everything.
    cut = len(seq) // 2
    a, b = kulisch_sum("fp32", seq[:cut], width), kulisch_sum("fp32", seq[cut:], width)
    a.merge(b)
    assert (a.state, a.wraps, a.flags) == (acc.state, acc.wraps, acc.flags)


def test_big_sums_overflow_280_in_both_directions_randomly():
    rng = random.Random(7)
    for _ in range(30):
        seq = [rng.choice([0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000, 0xFE800000, 0x3F800000]) for _ in range(40)]
        a280, a320 = kulisch_sum("fp32", seq, 280), kulisch_sum("fp32", seq, 320)
        assert a280.true_sum == a320.true_sum
        assert not a320.overflow
        assert a280.overflow == (abs(a280.true_sum + 0.5) > 2 ** 279)
        for fmt in ("fp32", "bf16", "fp16", "int8"):
            assert a280.result(fmt) == a320.result(fmt)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2 ** 16 - 1).filter(lambda b: (b >> 10) & 0x1F != 0x1F), min_size=1, max_size=60))
def test_rounding_of_fp16_sums_matches_numpy(seq):
    # A sum of < 2^13 FP16 values is exact in float64 (40 bits of span + 13);
    # numpy's float64 -> float32/float16 casts then give an independent
    # correctly rounded result.
    acc = kulisch_sum("fp16", seq)
    x = np.array(seq, np.uint16).view(np.float16).astype(np.float64)
    s = float(np.sum(x))                      # exact by the argument above
    assert Fraction(s) == acc.value()
    want32 = int(np.array([s]).astype(np.float32).view(np.uint32)[0])
    with np.errstate(over="ignore"):
        want16 = int(np.array([s]).astype(np.float16).view(np.uint16)[0])
    if s == 0:
        want32 = want16 = 0                       # exact zero -> +0
    assert acc.result("fp32") == want32
    assert acc.result("fp16") == want16


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 255), max_size=300))
def test_int8_sums(seq):
    acc = kulisch_sum("int8", seq)
    vals = [b - 256 if b > 127 else b for b in seq]
    assert acc.true_sum == sum(vals) * 2 ** 149
    assert acc.result("int8") == max(-128, min(127, sum(vals))) & 0xFF
    assert acc.result("fp32") == int(np.array([sum(vals)], np.float32).view(np.uint32)[0])


def test_width_bounds_quoted_in_the_spec():
    # Every term fits 278 signed bits, so 280 leaves at least 2 bits of headroom
    # for one add (at most one wrap per add) ...
    assert (FLT_MAX_TERM).bit_length() + 1 == 278
    # ... and an overflowed register (|true sum| >= 2^(W-1) units of 2^-149)
    # exceeds every format's range, so rounded results are +/-inf / saturated.
    for width in (280, 320):
        assert Fraction(2 ** (width - 1), 2 ** 149) >= 2 ** 130 > F.decode("fp32", FLT_MAX)
