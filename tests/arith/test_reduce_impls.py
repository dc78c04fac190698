"""golden.reduce: the python, numba and C implementations are bit-identical on
random and adversarial inputs, for every policy x input format x output format
and both Kulisch widths."""
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from golden.arith import formats as F
from golden.arith.kulisch import kulisch_sum, limbs_to_signed
from golden.reduce import OUT_FORMATS, POLICIES, as_bit_patterns, reduce

IN_FORMATS = ("int8", "fp16", "bf16", "fp32")
UINT = {"int8": np.uint8, "fp16": np.uint16, "bf16": np.uint16, "fp32": np.uint32}

# Adversarial pattern pools per format: zeros, extremes, subnormals, specials.
SPECIAL_PATTERNS = {
    "int8": [0x00, 0x01, 0x7F, 0x80, 0x81, 0xFF],
    "fp16": [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00,
             0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01],
    "bf16": [0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80,
             0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0xFFC1],
    "fp32": [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF,
             0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x4B800000, 0x7F800000, 0xFF800000, 0x7FC00000,
             0x7F800001, 0xFFC00123],
}


def run_all(policy, in_fmt, out_fmt, data, width=320, impls=("python", "numba", "c")):
    results = [reduce(policy, in_fmt, out_fmt, data, impl=i, width=width) for i in impls]
    for r in results[1:]:
        assert r.same_as(results[0]), (policy, in_fmt, out_fmt, width, r.impl,
                                       results[0].bits, r.bits, results[0].flags, r.flags)
    return results[0]


@st.composite
def arrays(draw, fmt, max_rows=9, max_cols=40, specials=True):
    rows = draw(st.integers(1, max_rows))
    cols = draw(st.integers(0, max_cols))
    pool = SPECIAL_PATTERNS[fmt] if specials else [b for b in SPECIAL_PATTERNS[fmt] if not isinstance(F.decode(fmt, b), str)]
    element = st.one_of(st.integers(0, 2 ** F.WIDTH_BITS[fmt] - 1), st.sampled_from(pool))
    flat = draw(st.lists(element, min_size=rows * cols, max_size=rows * cols))
    return np.array(flat, UINT[fmt]).reshape(rows, cols)


@pytest.mark.parametrize("in_fmt", IN_FORMATS)
@pytest.mark.parametrize("policy", POLICIES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_and_adversarial_all_out_formats(policy, in_fmt, data):
    arr = data.draw(arrays(in_fmt))
    width = data.draw(st.sampled_from([320, 280]))
    for out_fmt in OUT_FORMATS:
        if policy == "fp32-arrival" and out_fmt == "exact":
            continue
        run_all(policy, in_fmt, out_fmt, arr, width)


@pytest.mark.slow      # 41 s; the default run meets every policy x input x result format in the random test above
def test_every_combination_once():
    """Every input format, policy and result format through every implementation; the width
    alternates from one combination to the next (each width meets every input format and
    result format), where both widths for each doubled the test's 33 s."""
    rng = np.random.default_rng(3)
    widths = itertools.cycle((320, 280, 280, 320))
    for in_fmt in IN_FORMATS:
        arr = rng.choice(np.array(SPECIAL_PATTERNS[in_fmt] * 3 + list(rng.integers(0, 2 ** F.WIDTH_BITS[in_fmt], 60)),
                                  UINT[in_fmt]), size=(6, 37))
        for policy in POLICIES:
            for out_fmt in OUT_FORMATS:
                if policy == "fp32-arrival" and out_fmt == "exact":
                    continue
                r = run_all(policy, in_fmt, out_fmt, arr, next(widths))
                assert r.bits.shape[0] == 37


def test_cancellation_keeps_the_tiny_term():
    # Per column: x, tiny, -x in varying orders; Kulisch returns exactly tiny.
    rng = np.random.default_rng(5)
    x = rng.integers(0x00800000, 0x7F800000, 64, dtype=np.uint32)
    tiny = rng.integers(1, 0x00800000, 64, dtype=np.uint32)
    arr = np.stack([x, tiny, x ^ np.uint32(0x80000000)])
    r = run_all("kulisch", "fp32", "fp32", arr)
    assert np.array_equal(r.bits, tiny)
    arrival = run_all("fp32-arrival", "fp32", "fp32", arr)
    assert not np.array_equal(arrival.bits, tiny)        # the IEEE fold loses most tiny terms


def test_extreme_exponents_and_subnormal_sums():
    arr = np.array([[0x7F7FFFFF, 0x00000001, 0x80000001, 0x007FFFFF],
                    [0xFF7FFFFF, 0x00000001, 0x80000001, 0x00000001],
                    [0x00000001, 0x00000001, 0x00000000, 0x00000000]], np.uint32)
    r = run_all("kulisch", "fp32", "fp32", arr)
    assert r.bits.tolist() == [0x00000001, 0x00000003, 0x80000002, 0x00800000]
    run_all("kulisch", "fp32", "exact", arr, 280)
    for out in ("fp16", "bf16", "int8", "auto"):
        run_all("kulisch", "fp32", out, arr)


@pytest.mark.parametrize("width", [280, 320])
def test_overflow_280_not_320_and_folding(width):
    # 600 rows of +FLT_MAX (exceeds FOLD_ROWS) and of -FLT_MAX, with a mixed column.
    rows = 600
    cols = np.array([[0x7F7FFFFF, 0xFF7FFFFF, 0x7F7FFFFF if r % 3 else 0xFF7FFFFF, 0x7F7FFFFF] for r in range(rows)],
                    np.uint32)
    cols[:5, 3] = 0x7F7FFFFF
    cols[5:, 3] = 0x00000000
    exact = run_all("kulisch", "fp32", "exact", cols, width)
    term = (2 ** 24 - 1) * 2 ** 253
    sums = [rows * term, -rows * term, (rows - 2 * 200) * term, 5 * term]
    for e, s in enumerate(sums):
        in_range = -(2 ** (width - 1)) <= s < 2 ** (width - 1)
        assert bool(exact.flags[e] & 8) == (not in_range)
        assert limbs_to_signed(exact.bits[e].tolist(), width) == (s + 2 ** (width - 1)) % 2 ** width - 2 ** (width - 1)
        assert exact.wraps[e] == (s - limbs_to_signed(exact.bits[e].tolist(), width)) >> width
    assert bool(exact.flags[3] & 8) == (width == 280)        # 5 x FLT_MAX: overflows 280 only
    r = run_all("kulisch", "fp32", "fp32", cols, width)
    assert r.bits.tolist() == [0x7F800000, 0xFF800000, 0x7F800000, 0x7F800000]
    run_all("kulisch", "fp32", "int8", cols, width)


def test_inf_nan_mixes():
    inf, ninf, nan = 0x7F800000, 0xFF800000, 0x7FC00001
    arr = np.array([[inf, inf, ninf, nan, inf, 0x3F800000],
                    [0x3F800000, ninf, ninf, 0x3F800000, 0x7F7FFFFF, 0x3F800000]], np.uint32)
    r = run_all("kulisch", "fp32", "fp32", arr)
    assert r.bits.tolist() == [inf, 0x7FC00000, ninf, 0x7FC00000, inf, 0x40000000]
    assert r.flags.tolist() == [2, 6, 4, 1, 2, 0]
    a = run_all("fp32-arrival", "fp32", "fp32", arr)
    assert a.bits.tolist() == [inf, 0x7FC00000, ninf, 0x7FC00000, inf, 0x40000000]
    for out in ("int8", "fp16", "bf16", "auto"):
        run_all("kulisch", "fp32", out, arr)
        run_all("fp32-arrival", "fp32", out, arr)


def test_auto_tiles_through_all_impls():
    vals = np.array([1.0] * 16 + [0.5] * 16 + [1e30] + [2.0] * 20, np.float32)
    arr = vals.view(np.uint32).reshape(1, -1)
    r = run_all("kulisch", "fp32", "auto", arr)
    assert r.auto_formats.tolist() == [0, 1, 3, 0]
    assert r.bits[:16].tolist() == [1] * 16 and r.bits[16] == 0x3800


@pytest.mark.slow      # 12 s; the default run holds numba and C equal on the long sequences of test_kulisch_fast_paths
def test_long_sequences_numba_vs_c_1e6():
    from golden.arith import kulisch_c as ck
    from golden.arith import kulisch_numba as kn
    rng = np.random.default_rng(11)
    n = 10 ** 6
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-140, 120, n))).astype(np.float32).view(np.uint32)
    x[rng.integers(0, n, 1000)] = 0x00000001                              # subnormals
    x[::7] = 0x7F7FFFFF                                                   # many equal exponents
    x[1::7] = 0xFF7FFFFF
    for width in (320, 280):
        a = kn.kulisch_accumulate("fp32", x, width)
        b = ck.kulisch_accumulate("fp32", x, width)
        assert np.array_equal(a[0], b[0]) and a[1:] == b[1:]
        # Continuing from a state equals one pass.
        h = n // 3
        s1 = ck.kulisch_accumulate("fp32", x[h:], width, state=kn.kulisch_accumulate("fp32", x[:h], width))
        assert np.array_equal(s1[0], b[0]) and s1[1:] == b[1:]
        for out in ("fp32", "bf16", "fp16", "int8"):
            assert np.array_equal(kn.kulisch_round(out, width, a[0], [a[1]], [a[2]]),
                                  ck.kulisch_round(out, width, b[0], [b[1]], [b[2]]))
    # A sequence that overflows 280 bits: 10^6 x FLT_MAX.
    big = np.full(n, 0x7F7FFFFF, np.uint32)
    a = kn.kulisch_accumulate("fp32", big, 280)
    b = ck.kulisch_accumulate("fp32", big, 280)
    assert a[2] & 8 and np.array_equal(a[0], b[0]) and a[1:] == b[1:]
    true = n * (2 ** 24 - 1) * 2 ** 253
    assert limbs_to_signed(a[0].tolist(), 280) + (a[1] << 280) == true
    # The same 10^6 terms as a 64 x 15625 reduction, every format.
    for fmt in IN_FORMATS:
        arr = rng.integers(0, 2 ** F.WIDTH_BITS[fmt], (64, 15625)).astype(UINT[fmt])
        for policy, out in (("kulisch", "exact"), ("kulisch", "fp32"), ("fp32-arrival", "fp32"), ("kulisch", "auto")):
            run_all(policy, fmt, out, arr, 280, impls=("numba", "c"))


def test_python_reference_on_a_slice_of_a_long_sequence():
    from golden.arith import kulisch_c as ck
    rng = np.random.default_rng(12)
    x = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    x &= ~np.uint32(0x40000000)          # keep it finite and mostly small
    ref = kulisch_sum("fp32", x.tolist(), 320)
    limbs, wraps, flags = ck.kulisch_accumulate("fp32", x, 320)
    assert limbs.tolist() == ref.exact_limbs() and wraps == ref.wraps and flags == ref.flags


@pytest.mark.slow
def test_python_reference_on_1e6_terms():
    from golden.arith import kulisch_numba as kn
    rng = np.random.default_rng(13)
    x = rng.integers(0, 2 ** 32, 10 ** 6, dtype=np.uint64).astype(np.uint32)
    for width in (320, 280):
        ref = kulisch_sum("fp32", x.tolist(), width)
        limbs, wraps, flags = kn.kulisch_accumulate("fp32", x, width)
        assert limbs.tolist() == ref.exact_limbs() and wraps == ref.wraps and flags == ref.flags


@pytest.mark.slow
@pytest.mark.parametrize("in_fmt", IN_FORMATS)
def test_python_vs_compiled_on_a_64x4096_reduction(in_fmt):
    rng = np.random.default_rng(14)
    arr = rng.integers(0, 2 ** F.WIDTH_BITS[in_fmt], (64, 4096)).astype(UINT[in_fmt])
    for policy in POLICIES:
        run_all(policy, in_fmt, "auto", arr)


def test_input_validation():
    good = np.zeros((2, 3), np.uint16)
    with pytest.raises(ValueError, match="bf16 input must be uint16"):
        reduce("kulisch", "bf16", "fp32", good.view(np.float16))
    assert as_bit_patterns("fp16", good.view(np.float16)).dtype == np.uint16
    assert as_bit_patterns("fp32", np.zeros((1, 1), np.float32)).dtype == np.uint32
    with pytest.raises(ValueError, match="2-d"):
        reduce("kulisch", "fp16", "fp32", good[0])
    with pytest.raises(ValueError, match="exact"):
        reduce("fp32-arrival", "fp16", "exact", good)
    with pytest.raises(ValueError, match="width"):
        reduce("kulisch", "fp16", "fp32", good, width=256)
    with pytest.raises(ValueError, match="policy"):
        reduce("sum", "fp16", "fp32", good)
    with pytest.raises(ValueError, match="at least one"):
        reduce("fp32-arrival", "fp16", "fp32", np.zeros((0, 3), np.uint16))
    # No rows: the Kulisch sum is +0 everywhere.
    for impl in ("python", "numba", "c"):
        r = reduce("kulisch", "fp16", "fp16", np.zeros((0, 3), np.uint16), impl=impl)
        assert r.bits.tolist() == [0, 0, 0]
