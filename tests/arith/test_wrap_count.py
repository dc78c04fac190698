"""The net wrap count as docs/arithmetic.md defines it ("Kulisch exact accumulation",
Overflow): with s the W-bit state read as two's complement, the true sum is
sigma = s + wraps * 2^W, so wraps = floor((sigma + 2^(W-1)) / 2^W), overflow <=> wraps != 0,
and a sum of -1 is s = -1 with wraps = 0 (not the unsigned pattern 2^W - 1 with wraps = -1).
Held on the reference accumulator, on its merge, and on the exported limbs and wrap counts of
the python and C implementations of `golden.reduce`."""
import random

import numpy as np
import pytest

from golden.arith.kulisch import KulischAccumulator, limbs_to_signed
from golden.reduce import reduce

WIDTHS = (280, 320)
FP32_MAX, FP32_MIN_SUB = 0x7F7FFFFF, 0x00000001
NEG = 0x80000000


def expected_wraps(sigma, width):
    return (sigma + (1 << (width - 1))) >> width        # floor division by 2^W


def sums(width):
    half = 1 << (width - 1)
    return [0, -1, 1, half - 1, half, -half, -half - 1, 3 * half, -3 * half - 5]


def terms_for(sigma, width, rng):
    """A dozen terms or fewer, each one an add can take (|t| < 2^(W-1)), adding up to sigma,
    shuffled: the running sum crosses the register's ends in both directions."""
    step = (1 << (width - 2)) + 12345
    out, left = [], sigma
    while abs(left) > step:
        t = step if left > 0 else -step
        out.append(t)
        left -= t
    out.append(left)
    for _ in range(3):
        t = rng.randrange(-step, step)
        out += [t, -t]
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_true_sum_is_the_signed_state_plus_wraps(width):
    rng = random.Random(width)
    for sigma in sums(width):
        acc = KulischAccumulator(width)
        for t in terms_for(sigma, width, rng):
            acc.add_term(t)
        w = expected_wraps(sigma, width)
        assert acc.true_sum == sigma == acc.signed_state + acc.wraps * (1 << width)
        assert acc.wraps == w and -(1 << (width - 1)) <= acc.signed_state < (1 << (width - 1))
        assert acc.overflow == (w != 0) == (not -(1 << (width - 1)) <= sigma < (1 << (width - 1)))
        assert (w > 0) - (w < 0) == (sigma > 0) - (sigma < 0) or w == 0
        assert acc.state == acc.signed_state % (1 << width)
        assert limbs_to_signed(acc.exact_limbs(), width) == acc.signed_state


@pytest.mark.parametrize("width", WIDTHS)
def test_minus_one_is_not_an_overflow(width):
    acc = KulischAccumulator(width)
    acc.add_term(5)
    acc.add_term(-6)
    assert (acc.signed_state, acc.wraps, acc.overflow) == (-1, 0, False)
    assert acc.state == (1 << width) - 1           # the unsigned pattern: not "state + wraps * 2^W"


@pytest.mark.parametrize("width", WIDTHS)
def test_merge_keeps_the_definition(width):
    rng = random.Random(7 * width)
    for sigma_a in sums(width):
        for sigma_b in (-1, 1 << (width - 1), -(1 << (width - 1)) - 3):
            a, b = KulischAccumulator(width), KulischAccumulator(width)
            for t in terms_for(sigma_a, width, rng):
                a.add_term(t)
            for t in terms_for(sigma_b, width, rng):
                b.add_term(t)
            a.merge(b)
            assert a.true_sum == sigma_a + sigma_b
            assert a.wraps == expected_wraps(sigma_a + sigma_b, width)


@pytest.mark.parametrize("impl", ["python", "c"])
@pytest.mark.parametrize("width", WIDTHS)
def test_exported_limbs_and_wraps(impl, width):
    """Columns: -2^-149 (sigma = -1), 8 x FLT_MAX (sigma > 2^279: wraps 1 at 280, 0 at 320),
    8 x -FLT_MAX, and FLT_MAX - FLT_MAX + 1 subnormal (sigma = 1)."""
    data = np.zeros((8, 4), np.uint32)
    data[0, 0] = NEG | FP32_MIN_SUB
    data[:, 1] = FP32_MAX
    data[:, 2] = NEG | FP32_MAX
    data[0, 3], data[1, 3], data[2, 3] = FP32_MAX, NEG | FP32_MAX, FP32_MIN_SUB
    r = reduce("kulisch", "fp32", "exact", data, impl=impl, width=width)
    flt_max_term = ((1 << 24) - 1) << 253
    for col, sigma in enumerate((-1, 8 * flt_max_term, -8 * flt_max_term, 1)):
        s = limbs_to_signed(r.bits[col], width)
        assert s + int(r.wraps[col]) * (1 << width) == sigma
        assert int(r.wraps[col]) == expected_wraps(sigma, width)
        assert bool(r.flags[col] & 8) == (r.wraps[col] != 0)
