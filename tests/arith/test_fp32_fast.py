"""The FP32 operations on the host's binary64 (`fp32_add_fast`, `format_to_fp32_fast`, which the
node's transaction-level model uses) against the Fractions reference, bit for bit: Berkeley
TestFloat's f32_add level-1 RNE vectors, adversarial pairs (each class of operand against each,
sums at the overflow threshold and its midpoint, ties at every exponent, cancellations into
the subnormals), random pairs, and the 8- and 16-bit conversions (the reference, memoised)."""
import random

import pytest

from golden.arith.formats import format_to_fp32
from golden.arith.fp32_arith import fp32_add, fp32_add_fast, format_to_fp32_fast
from golden.arith.testfloat import read_vectors
from spec.formats import NAN_FP32

MAX_FINITE = 0x7F7FFFFF
SMALLEST_SUBNORMAL = 0x00000001
CLASSES = [0x00000000, 0x80000000, SMALLEST_SUBNORMAL, 0x807FFFFF, 0x00800000, 0x3F800000, 0xBF800000,
           0x3F800001, MAX_FINITE, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF,
           0x4B800000, 0x33800000, 0x34000000]


def _adversarial():
    pairs = [(a, b) for a in CLASSES for b in CLASSES]
    for e in range(1, 255):
        one = e << 23
        pairs += [(one, one | 1), (one | 1, (max(e - 24, 0) << 23)), (one, (max(e - 25, 0) << 23) | 1),
                  (one | 0x7FFFFF, max(e - 24, 0) << 23), (one | 0x7FFFFF, (max(e - 24, 0) << 23) | 0x80000000)]
    # at the overflow threshold: the largest value plus half an ulp (a tie to even: rounds up to
    # infinity), plus just under half, and the same negative
    half_ulp = (254 - 24) << 23
    pairs += [(MAX_FINITE, half_ulp), (MAX_FINITE, half_ulp - 1), (MAX_FINITE | 0x80000000, half_ulp | 0x80000000),
              (MAX_FINITE, (254 - 25) << 23), (0x7F7FFFFE, half_ulp)]
    # cancellations landing on subnormals and on exact zeros of both signs
    pairs += [(0x00800000, 0x807FFFFF), (0x00800001, 0x80800000), (0x3F800000, 0xBF800000),
              (0x80000000, 0x80000000), (0x00000000, 0x80000000)]
    return pairs


@pytest.fixture(scope="module")
def testfloat_pairs():
    return read_vectors("f32_add.level1.rne")


def test_fast_add_is_the_reference_on_testfloat(testfloat_pairs):
    bad = [(a, b) for a, b, _, _ in testfloat_pairs if fp32_add_fast(a, b) != fp32_add(a, b)]
    assert not bad, [f"{a:#010x} + {b:#010x}" for a, b in bad[:5]]
    assert len(testfloat_pairs) > 40_000


def test_fast_add_is_the_reference_on_adversarial_and_random_pairs():
    rng = random.Random(20261205)
    pairs = _adversarial() + [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(20_000)]
    # operands within a few exponents of each other: the carries and cancellations that matter
    for _ in range(20_000):
        a = rng.getrandbits(32)
        e = max(0, min(254, ((a >> 23) & 0xFF) + rng.randint(-26, 26)))
        pairs.append((a, (rng.getrandbits(1) << 31) | (e << 23) | rng.getrandbits(23)))
    bad = [(a, b) for a, b in pairs if fp32_add_fast(a, b) != fp32_add(a, b)]
    assert not bad, [f"{a:#010x} + {b:#010x}" for a, b in bad[:5]]


def test_fast_add_meets_the_overflow_threshold_and_the_nan_rules():
    half_ulp = (254 - 24) << 23
    assert fp32_add_fast(MAX_FINITE, half_ulp) == 0x7F800000               # a tie at the threshold: to even, inf
    assert fp32_add_fast(MAX_FINITE, half_ulp - 1) == MAX_FINITE
    assert fp32_add_fast(0xFF7FFFFF, half_ulp | 0x80000000) == 0xFF800000
    assert fp32_add_fast(0x7F800000, 0xFF800000) == NAN_FP32
    assert fp32_add_fast(0x7F800001, 0x3F800000) == NAN_FP32
    assert fp32_add_fast(0x80000000, 0x80000000) == 0x80000000 and fp32_add_fast(0x3F800000, 0xBF800000) == 0


@pytest.mark.parametrize("fmt", ["int8", "fp16", "bf16"])
def test_fast_conversion_is_the_reference(fmt):
    """The narrow formats' conversion is the reference's, memoised: every int8 pattern, and for the
    16-bit formats the zeros, subnormals, infinities and NaNs at both signs plus a random sample
    (each looked up twice: the memo must give the same bits the second time)."""
    n = 256 if fmt == "int8" else 65536
    rng = random.Random(fmt)
    sample = range(n) if n == 256 else sorted(set(
        [b | s for s in (0, 0x8000) for b in (list(range(0, 64)) + list(range(0x7C00 if fmt == "fp16" else 0x7F80,
                                                                                0x7C40 if fmt == "fp16" else 0x7FC1)))]
        + [rng.randrange(n) for _ in range(3000)]))
    for _ in range(2):
        assert all(format_to_fp32_fast(fmt, b) == format_to_fp32(fmt, b) for b in sample)


def test_fast_conversion_of_fp32_canonicalises_nan_only():
    rng = random.Random(5)
    for b in CLASSES + [rng.getrandbits(32) for _ in range(5000)]:
        assert format_to_fp32_fast("fp32", b) == format_to_fp32("fp32", b)
    with pytest.raises(ValueError):
        format_to_fp32_fast("fp32", 1 << 32)
