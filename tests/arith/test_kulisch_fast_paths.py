"""The Kulisch kernels' fast paths at their boundaries, against the pure-Python
reference (golden.reduce impl="python": Python ints and Fractions).

The C and numba reductions sum a chunk (up to 255 rows x 64 columns) exactly
in float64 when its exponent spread allows it, in 1, 2 or 3 levels, else by
integer digits (ckernels/kulisch.c states the bound: a column of n <= 2^g
values below 2^B, all multiples of 2^U, needs 1 + ceil(max(0, B + g - U - 53)
/ (51 - g)) levels).  Here every boundary of that rule is hit from both sides
with the magnitudes that push the sums hardest (all significand bits set, one
sign), the rounding straight from float64 level sums is checked at midpoints
with residuals of both signs, and long sequences mix fast and integer blocks.
"""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from golden.arith import kulisch_c as ck
from golden.arith import kulisch_numba as kn
from golden.reduce import reduce

ENGINES = {"c": ck, "numba": kn}
FRAC_BITS = {"fp32": 23, "bf16": 7, "fp16": 10}
BIAS = {"fp32": 127, "bf16": 127, "fp16": 15}


def pattern(fmt, exp_field, frac, negative=False):
    fb = FRAC_BITS[fmt]
    sign_shift = 31 if fmt == "fp32" else 15
    return (int(negative) << sign_shift) | (exp_field << fb) | frac


def expected_levels(fmt, rows, hi_field, lo_field):
    """The documented rule, in terms of exponent fields (normal numbers)."""
    g = max(1, math.ceil(math.log2(rows)))
    big = hi_field - BIAS[fmt] + 1
    unit = lo_field - BIAS[fmt] - FRAC_BITS[fmt]
    need = big + g - unit - 53
    levels = 1 if need <= 0 else 1 + -(-need // (51 - g))
    return levels if levels <= 3 else 0


def spread_column(fmt, rows, hi_field, lo_field, negative=False):
    """rows - 1 values with every significand bit set at hi_field, one value whose
    lowest significand bit is set at lo_field: the sums reach the rule's bound."""
    full = (1 << FRAC_BITS[fmt]) - 1
    col = [pattern(fmt, hi_field, full, negative)] * (rows - 1) + [pattern(fmt, lo_field, 1, negative)]
    return col


def dtype(fmt):
    return np.uint32 if fmt == "fp32" else np.uint16


def check_all(fmt, a, width=320, out_fmts=("exact", "fp32", "bf16", "fp16", "int8")):
    for out in out_fmts:
        ref = reduce("kulisch", fmt, out, a, impl="python", width=width)
        for impl in ENGINES:
            got = reduce("kulisch", fmt, out, a, impl=impl, width=width)
            assert got.same_as(ref), (impl, fmt, out, width)


def boundary_cases():
    cases = []
    for fmt, rows in (("fp32", 64), ("fp32", 255), ("fp32", 2), ("bf16", 64), ("bf16", 200)):
        g = max(1, math.ceil(math.log2(rows)))
        fb = FRAC_BITS[fmt]
        # spreads where the rule changes: need = spread + fb + 1 + g - 53 crosses 0, step, 2 step, 3 step
        base = 53 - fb - 1 - g
        for edge in (base, base + (51 - g), base + 2 * (51 - g)):
            for spread in (edge, edge + 1):
                cases.append((fmt, rows, spread))
    return cases


@pytest.mark.parametrize("fmt,rows,spread", boundary_cases())
@pytest.mark.parametrize("negative", [False, True])
def test_level_boundaries_are_exact(fmt, rows, spread, negative):
    lo_field = 1
    hi_field = lo_field + spread
    if hi_field > 254:                  # keep it finite: slide the pair down
        lo_field -= hi_field - 254
        hi_field = 254
    assert lo_field >= 1
    col = spread_column(fmt, rows, hi_field, lo_field, negative)
    a = np.array(col, dtype(fmt)).reshape(rows, 1)
    a = np.repeat(a, 3, axis=1)
    a[:, 1] ^= np.array([0] + [1 << (31 if fmt == "fp32" else 15)] * (rows - 1), dtype(fmt))  # mixed signs
    want = expected_levels(fmt, rows, hi_field, lo_field)
    for impl, mod in ENGINES.items():
        assert mod.chunk_levels(fmt, a) == want, impl
    check_all(fmt, a, out_fmts=("exact", "fp32", "bf16"))


def test_the_boundaries_cover_every_path():
    seen = set()
    for fmt, rows, spread in boundary_cases():
        seen.add(expected_levels(fmt, rows, 1 + spread, 1))
    assert seen == {0, 1, 2, 3}


def test_fp16_always_one_level_and_exact():
    rng = np.random.default_rng(5)
    finite = rng.integers(0, 0x7C00, 255 * 64).astype(np.uint16)      # every finite magnitude incl. subnormals
    a = (finite | (rng.integers(0, 2, finite.size).astype(np.uint16) << 15)).reshape(255, 64)
    a[:, 0] = 0x7BFF                                                   # the largest, 255 times
    a[:, 1] = 0x0001                                                   # the smallest subnormal
    for mod in ENGINES.values():
        assert mod.chunk_levels("fp16", a) == 1
    check_all("fp16", a[:, :20])


@pytest.mark.parametrize("special", [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001])
def test_a_special_sends_the_chunk_to_the_integer_path(special):
    rng = np.random.default_rng(6)
    a = (rng.integers(0x3F000000, 0x40000000, (64, 8))).astype(np.uint32)
    a[17, 3] = special
    for mod in ENGINES.values():
        assert mod.chunk_levels("fp32", a) == 0
    check_all("fp32", a)


@pytest.mark.parametrize("width", [320, 280])
@pytest.mark.parametrize("negative", [False, True])
def test_overflow_of_280_bits_through_the_fast_path(width, negative):
    """64 copies of the largest FP32: one level, a sum of about 2^134, which wraps
    a 280-bit register; 16 copies (about 2^130, just below the wrap) take the
    exact-state branch of the float64 rounding."""
    for rows in (64, 16, 15):
        a = np.full((rows, 2), pattern("fp32", 254, (1 << 23) - 1, negative), np.uint32)
        for mod in ENGINES.values():
            assert mod.chunk_levels("fp32", a) == 1
        check_all("fp32", a, width=width)


def test_subnormals_zeros_and_signed_zeros():
    cols = [[0x00000001] * 64, [0x80000001, 0x00000001] * 32, [0x80000000] * 64, [0] * 64,
            [0x007FFFFF] * 63 + [0x00800000], [0x00000003, 0x80000000] * 32]
    a = np.array(cols, np.uint32).T.copy()
    for mod in ENGINES.values():
        assert mod.chunk_levels("fp32", a) == 1
    check_all("fp32", a)


def f32(x):
    return np.array([x], np.float32).view(np.uint32)[0]


@pytest.mark.parametrize("residual_sign", [0, 1, -1])
def test_rounding_from_level_sums_at_midpoints(residual_sign):
    """Sums that are exact midpoints of an output grid, nudged by a residual 2^-60
    of the column's largest term -- below float64's precision there, so the
    rounded double is the midpoint itself and only the residual's sign decides --
    for every output format."""
    cols = []
    for halves in ([1.0, 2.0 ** -24], [1.0, 3 * 2.0 ** -24], [2.0, 0.5], [3.0, 0.5], [-2.0, -0.5],
                   [1.0, 2.0 ** -11], [1.0, 2.0 ** -8], [-(2.0 ** 15), -(2.0 ** 4)], [2.0 ** -120, 2.0 ** -144]):
        top = max(abs(v) for v in halves)
        col = [f32(v) for v in halves] + [f32(residual_sign * 2.0 ** (math.floor(math.log2(top)) - 60))]
        cols.append(col + [0] * (16 - len(col)))
    a = np.array(cols, np.uint32).T.copy()
    for mod in ENGINES.values():
        assert mod.chunk_levels("fp32", a) == (1 if residual_sign == 0 else 2)   # the residual widens the spread
    check_all("fp32", a)


def test_long_sequences_mix_fast_and_integer_blocks():
    block = ck.CHUNK_ROWS * ck.LANES
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(3 * block + 101) * np.exp2(rng.integers(-20, 20, 3 * block + 101))).astype(np.float32)
    s = x.view(np.uint32).copy()
    s[block + 5] = 0x7FC00000                       # block 1: a NaN -> integer bins
    s[2 * block + 9] = 0x00000001                   # block 2: spread beyond three levels
    s[2 * block + 10] = 0x7F000000
    s[-3] = 0xFF800000                              # the tail: -inf
    ref = reduce("kulisch", "fp32", "exact", s.reshape(-1, 1), impl="python")
    for impl, mod in ENGINES.items():
        assert reduce("kulisch", "fp32", "exact", s.reshape(-1, 1), impl=impl).same_as(ref), impl
        limbs, wraps, flags = mod.kulisch_accumulate("fp32", s)
        assert np.array_equal(limbs, ref.bits[0]) and wraps == ref.wraps[0] and flags == ref.flags[0], impl
    fast = s.copy()
    fast[block + 5] = 0
    fast[2 * block + 9: 2 * block + 11] = 0
    fast[-3] = 0
    ref = reduce("kulisch", "fp32", "fp32", fast.reshape(-1, 1), impl="python")
    for impl in ENGINES:
        assert reduce("kulisch", "fp32", "fp32", fast.reshape(-1, 1), impl=impl).same_as(ref), impl


@pytest.mark.parametrize("fmt", ["bf16", "fp16", pytest.param("int8", marks=pytest.mark.slow)])   # int8: 11 s
def test_long_sequences_of_narrow_formats(fmt):
    n = 2 * ck.CHUNK_ROWS * ck.LANES + 77
    rng = np.random.default_rng(8)
    if fmt == "int8":
        s = rng.integers(0, 256, n).astype(np.uint8)
    elif fmt == "bf16":
        s = (rng.standard_normal(n).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    else:
        s = rng.standard_normal(n).astype(np.float16).view(np.uint16)
    ref = reduce("kulisch", fmt, "exact", s.reshape(-1, 1), impl="python")
    for impl in ENGINES:
        assert reduce("kulisch", fmt, "exact", s.reshape(-1, 1), impl=impl).same_as(ref), impl


def test_many_rows_and_ragged_columns_mix_paths():
    """600 rows (chunks of 255, 255, 90) x 70 columns (blocks of 64 and 6): fast
    chunks, wide chunks and a special add into the same column states."""
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((600, 70)) * np.exp2(rng.integers(-10, 10, (600, 70)))).astype(np.float32)
    a = x.view(np.uint32).copy()
    a[300, 65] = 0x00000001                          # second chunk, second block: too wide -> integer digits
    a[301, 65] = 0x7E800000
    a[500, 2] = 0x7F800000                           # third chunk: +inf
    check_all("fp32", a, out_fmts=("exact", "fp32"))
    check_all("fp32", a, width=280, out_fmts=("exact",))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 254), st.integers(0, 120), st.integers(1, 80), st.integers(0, 2 ** 32 - 1))
def test_random_spreads_near_the_bounds(lo_field, spread, rows, seed):
    hi_field = min(254, lo_field + spread)
    rng = np.random.default_rng(seed)
    fields = rng.integers(lo_field, hi_field + 1, (rows, 4))
    fields[0, :] = lo_field
    fields[-1, :] = hi_field
    fracs = rng.integers(0, 1 << 23, (rows, 4))
    signs = rng.integers(0, 2, (rows, 4))
    a = ((signs << 31) | (fields << 23) | fracs).astype(np.uint32)
    check_all("fp32", a, out_fmts=("exact", "fp32", "int8"))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(2, 60))
def test_cancelling_pairs_across_three_levels(seed, pairs):
    """Columns of values and their negatives spread over ~100 binades, plus a few
    leftovers: the level sums cancel deeply, which the rounding from float64
    pairs must notice (it falls back to the exact state)."""
    rng = np.random.default_rng(seed)
    cols = []
    for _ in range(8):
        v = (rng.standard_normal(pairs) * np.exp2(rng.integers(-50, 50, pairs))).astype(np.float32)
        rest = (rng.standard_normal(3) * np.exp2(rng.integers(-60, 40, 3))).astype(np.float32)
        col = np.concatenate([v, -v, rest])
        cols.append(rng.permutation(col).view(np.uint32))
    a = np.array(cols).T.copy()
    check_all("fp32", a, out_fmts=("exact", "fp32", "bf16", "fp16", "int8"))


# fp32 in the slow set: its pure-Python reference takes 22 s (bf16 keeps the NaN and -inf rows)
@pytest.mark.parametrize("fmt", [pytest.param("fp32", marks=pytest.mark.slow), "bf16", "int8"])
def test_a_few_long_columns_go_as_sequences(fmt):
    """Fewer than 8 columns of more than 255 rows are gathered into sequences:
    3 columns of 17,000 rows (one full sequence block each, and a tail)."""
    rng = np.random.default_rng(10)
    rows = ck.CHUNK_ROWS * ck.LANES + 680
    if fmt == "int8":
        a = rng.integers(0, 256, (rows, 3)).astype(np.uint8)
    else:
        x = (rng.standard_normal((rows, 3)) * np.exp2(rng.integers(-20, 20, (rows, 3)))).astype(np.float32)
        a = x.view(np.uint32).copy()
        a[5, 1] = 0x7FC00000                       # a NaN in column 1's first block
        a[rows - 3, 2] = 0xFF800000                # -inf in column 2's tail
        if fmt == "bf16":
            a = (a >> 16).astype(np.uint16)
    check_all(fmt, a, out_fmts=("exact", "fp32"))
    check_all(fmt, a, width=280, out_fmts=("exact",))


# ---- FP32 results by the hardware conversion (numba) --------------------------------------
# For 2^-126 <= |sum| < 2^127 the numba reduction rounds a faithful (hi, lo) pair to FP32 by
# converting hi and moving one unit when hi is itself an FP32 midpoint that lo pushes across;
# subnormal and near-overflow sums take the general path.  These columns put the exact sum
# on, just beside and across midpoints at both ends of that range and in between.

def f32_bits_of(value):
    """The FP32 pattern of value (an exact FP32 number, given as a Fraction or int)."""
    from golden.arith.formats import round_exact
    bits = round_exact("fp32", Fraction(value))
    assert Fraction(np.array([bits], np.uint32).view(np.float32)[0].item()) == value
    return bits


def midpoint_column(exp, significand, offset, residual_sign, residual_drop, negative, rows):
    """Terms summing to (significand + 1/2 + offset) * 2^(exp - 23) + residual, where
    significand (2^23 .. 2^24 - 1) sets an FP32 value of exponent exp, offset (in units of
    2^(exp - 24 - 8), at least 2^-149) moves the sum off the midpoint, and the residual
    residual_sign * 2^(exp - 24 - residual_drop) decides a midpoint's rounding."""
    two = Fraction(2)
    terms = [significand * two ** (exp - 23), two ** (exp - 24)]
    if offset:
        terms.append(offset * two ** max(exp - 24 - 8, -149))
    drop = min(residual_drop, exp + 125)
    if residual_sign and drop >= 1:
        terms.append(residual_sign * two ** (exp - 24 - drop))
    col = [f32_bits_of(-t if negative else t) for t in terms]
    return col + [0] * (rows - len(col))


def midpoint_block(rng, exps, rows=8):
    cols = []
    for exp in exps:
        significand = int(rng.choice([1 << 23, (1 << 24) - 1, (1 << 23) + 1, int(rng.integers(1 << 23, 1 << 24))]))
        cols.append(midpoint_column(exp, significand, int(rng.choice([0, 0, 1, -1, 3])), int(rng.integers(-1, 2)),
                                    int(rng.integers(1, 90)), bool(rng.integers(0, 2)), rows))
    a = np.array(cols, np.uint32).T.copy()
    assert kn.chunk_levels("fp32", a) > 0          # a residual at most 2^-113 of the sum: float64 levels
    return a


@pytest.mark.parametrize("exps", [list(range(-125, -125 + 64)), list(range(127 - 63, 128)),
                                  [-125, -124, 126, 127] * 16, list(range(-120, 128, 4))],
                         ids=["smallest", "largest", "ends", "spread"])
def test_fp32_results_at_midpoints_across_the_range(exps):
    a = midpoint_block(np.random.default_rng(len(exps) + abs(exps[0])), exps)
    check_all("fp32", a, out_fmts=("fp32", "bf16", "exact"))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-125, 127), min_size=1, max_size=64), st.integers(0, 2 ** 32 - 1))
def test_fp32_results_at_random_midpoints(exps, seed):
    check_all("fp32", midpoint_block(np.random.default_rng(seed), exps), out_fmts=("fp32", "bf16"))


def test_fp32_results_beside_the_fast_range():
    """Sums just inside and just outside 2^-126 <= |sum| < 2^127, the overflow
    midpoint 2^128 - 2^103 with residuals of both signs, and a sum beyond it
    whose bits look like a midpoint; small and large sums in separate blocks, so
    each block's spread keeps it on the float64 path."""
    two = Fraction(2)
    small = [[two ** -126], [two ** -126, -(two ** -149)], [two ** -125, -(two ** -149)], [two ** -127, two ** -127],
             [two ** -149], [two ** -149, -(two ** -149)], [], [(2 ** 23 + 1) * two ** -148, two ** -149]]
    large = [[two ** 127], [two ** 127, -(two ** 103)], [two ** 127, -(two ** 102)],
             [two ** 126, two ** 126, -(two ** 80)],
             [(2 ** 24 - 1) * two ** 103, two ** 102, two ** 60],
             [(2 ** 24 - 1) * two ** 103, two ** 102, -(two ** 60)],
             [(2 ** 24 - 1) * two ** 104, two ** 103], [(2 ** 24 - 1) * two ** 104, two ** 103, two ** 50],
             [(2 ** 24 - 1) * two ** 104, two ** 103, -(two ** 50)],
             [(2 ** 24 - 1) * two ** 104, (2 ** 24 - 1) * two ** 104],
             [(2 ** 24 - 1) * two ** 104, (2 ** 24 - 1) * two ** 104, two ** 104, -(two ** 60)]]  # a midpoint's bits
    for sums in (small, large):
        cols = []
        for terms in sums:
            for negative in (False, True):
                col = [f32_bits_of(-t if negative else t) for t in terms]
                cols.append(col + [0] * (4 - len(col)))
        a = np.array(cols, np.uint32).T.copy()
        assert kn.chunk_levels("fp32", a) > 0
        for width in (320, 280):
            check_all("fp32", a, width=width, out_fmts=("fp32", "fp16", "exact"))


@pytest.mark.parametrize("negative", [False, True])
def test_int8_sums_beyond_fp32_precision_round_to_even(negative):
    """INT8 column sums above 2^24 (one float64 level, rounded to FP32 by the
    conversion): midpoints go to the even neighbour, others to the nearest.  The
    expected results: numpy's exact int64 column sums rounded by the reference's
    round_exact."""
    from golden.arith.formats import round_exact
    targets = [2 ** 24 + 1, 2 ** 24 + 3, 2 ** 25 + 2, 2 ** 25 + 6, 2 ** 25 + 1, 2 ** 25 + 3, 2 ** 25 - 1, 2 ** 24]
    rows = 270_000
    term = -128 if negative else 127
    a = np.zeros((rows, len(targets)), np.int8)
    for c, target in enumerate(targets):
        target = -target if negative else target
        full, rest = divmod(target, term)
        a[:full, c] = term
        a[full, c] = rest
    sums = a.astype(np.int64).sum(axis=0)
    assert sums.tolist() == [-t if negative else t for t in targets]
    for out in ("fp32", "bf16", "fp16", "int8"):
        want = [round_exact(out, Fraction(int(s))) for s in sums]
        for impl in ENGINES:
            got = reduce("kulisch", "int8", out, a.view(np.uint8), impl=impl)
            assert got.bits.tolist() == want, (impl, out)


# ---- full 64-column blocks ------------------------------------------------------------
# A block of exactly 64 columns is compiled with its width a constant (C and numba),
# numba combines rows in fours (bounds) and pairs (sums), and the next block is
# prefetched; the cases below put every kind of column inside full blocks, with row
# counts that leave each remainder of those groupings.

def full_block_array(fmt, rows, seed):
    """rows x (3 * 64 + 7) patterns.  Block 0: the rule's boundary columns (spread at
    and one past each edge), cancelling columns, zeros, -0.0, subnormals, random
    wide spreads.  Block 1: narrow spreads (one level).  Block 2: random spreads up
    to the integer path.  Then a ragged block of 7 columns."""
    rng = np.random.default_rng(seed)
    fb, top = FRAC_BITS[fmt], 30 if fmt == "fp16" else 254
    sign = 1 << (31 if fmt == "fp32" else 15)
    g = max(1, math.ceil(math.log2(rows)))
    base = 53 - fb - 1 - g
    cols = []
    for edge in (base, base + (51 - g), base + 2 * (51 - g)):
        for spread in (edge - 1, edge, edge + 1):
            lo = max(1, min(top - spread, 1 + spread % 7))
            hi = min(top, lo + spread)
            cols.append(spread_column(fmt, rows, hi, lo)[:rows])
            cols.append(spread_column(fmt, rows, hi, lo, negative=True)[:rows])
    half = [pattern(fmt, int(rng.integers(1, top + 1)), int(rng.integers(0, 1 << fb))) for _ in range(rows // 2)]
    cancel = half + [p | sign for p in half] + ([pattern(fmt, 1, 1)] if rows % 2 else [])
    cols.append(list(rng.permutation(cancel)))
    cols.append([0] * rows)
    cols.append([sign] * rows)                                    # -0.0 only
    cols.append([int(x) for x in rng.integers(0, 1 << fb, rows)])  # subnormals and zeros
    cols.append([int(x) | sign for x in rng.integers(0, 1 << fb, rows)])

    def random_col(max_spread):
        lo = int(rng.integers(1, top + 1))
        hi = min(top, lo + int(rng.integers(0, max_spread + 1)))
        f = rng.integers(lo, hi + 1, rows)
        f[0] = lo
        return [int((s * sign) | (e << fb) | m) for s, e, m in
                zip(rng.integers(0, 2, rows), f, rng.integers(0, 1 << fb, rows))]
    while len(cols) < 64:
        cols.append(random_col(70))
    cols += [random_col(8) for _ in range(64)]
    cols += [random_col(110) for _ in range(64 + 7)]
    return np.array(cols, dtype(fmt)).T.copy()


# 255 rows (the largest block) take 9-23 s per format, most of it the pure-Python reference: in the
# slow set; 64 rows (a full group of every level) stay in the default run.
FULL_BLOCK_CASES = [pytest.param(fmt, rows, marks=pytest.mark.slow if rows == 255 else ())
                    for fmt in ("fp32", "bf16", "fp16") for rows in (1, 2, 3, 5, 6, 64, 255)]


@pytest.mark.parametrize("fmt,rows", FULL_BLOCK_CASES)
def test_full_blocks_are_exact(fmt, rows):
    a = full_block_array(fmt, rows, seed=rows)
    for j in range(0, 128, 64):
        levels = {mod.chunk_levels(fmt, a[:, j:j + 64]) for mod in ENGINES.values()}
        assert len(levels) == 1, (j, levels)
    check_all(fmt, a, out_fmts=("exact", "fp32", "bf16"))
    check_all(fmt, a, width=280, out_fmts=("exact",))


@pytest.mark.parametrize("row", [0, 1, 2, 3, 4, 5, 62, 63, 64])
@pytest.mark.parametrize("special", [0x7F800000, 0xFF800000, 0x7FFFFFFF, 0xFFC00001])
def test_a_special_in_any_row_of_a_full_block(row, special):
    """One special in a full block sends it to the integer path, whichever of the
    grouped rows (or the remainder rows) holds it; a NaN beside an inf in the same
    group of rows too (numba's bounds may drop the NaN, its sums must not)."""
    rows = 66
    rng = np.random.default_rng(row)
    x = (rng.standard_normal((rows, 64 * 2 + 3)) * np.exp2(rng.integers(-20, 20, (rows, 64 * 2 + 3))))
    a = x.astype(np.float32).view(np.uint32).copy()
    a[row, 5] = special
    a[row, 64 + 63] = special
    a[row, 130] = special
    a[row, 70] = 0x7F800000
    a[row ^ 1, 70] = 0x7FC00000
    for mod in ENGINES.values():
        if row < 64:
            assert mod.chunk_levels("fp32", a[:64, :64]) == 0
            assert mod.chunk_levels("fp32", a[:64, 64:128]) == 0
            assert mod.chunk_levels("fp32", a[:64, 70:71]) == 0
    check_all("fp32", a, out_fmts=("exact", "fp32"))


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 254), st.integers(0, 110), st.integers(1, 70), st.integers(0, 2 ** 32 - 1))
def test_random_full_blocks_near_the_bounds(lo_field, spread, rows, seed):
    hi_field = min(254, lo_field + spread)
    rng = np.random.default_rng(seed)
    fields = rng.integers(lo_field, hi_field + 1, (rows, 64 + 5))
    fields[0, :] = lo_field
    fields[-1, :] = hi_field
    fracs = rng.integers(0, 1 << 23, fields.shape)
    signs = rng.integers(0, 2, fields.shape)
    a = ((signs << 31) | (fields << 23) | fracs).astype(np.uint32)
    a[:, 7] = 0                                      # a zero column leaves the bounds alone
    want = expected_levels("fp32", rows, hi_field, lo_field if rows > 1 else hi_field)
    for mod in ENGINES.values():
        assert mod.chunk_levels("fp32", a[:, :64]) == want
    check_all("fp32", a, out_fmts=("exact", "fp32", "int8"))


def window_block(fmt, rows, spread, shift, seed):
    """A full block of two-level columns at the widest spread two levels allow,
    each column placed `shift` + its index binades higher, so the 128-bit window
    the export puts each column's sum in starts at every bit offset of a limb
    and in every limb; columns of one sign, of mixed signs, with the smallest
    term alone (level 2 a single unit) and with level 1 cancelled to zero."""
    rng = np.random.default_rng(seed)
    full = (1 << FRAC_BITS[fmt]) - 1
    top_field = (1 << 8) - 2 if fmt != "fp16" else 30
    cols = []
    for j in range(64):
        lo_field = 1 + (shift + j) % (top_field - spread)
        hi_field = lo_field + spread
        kind = j % 4
        col = [pattern(fmt, hi_field, full, kind == 1 and r % 2 == 1) for r in range(rows - 1)]
        col.append(pattern(fmt, lo_field, int(rng.integers(1, full + 1)) if kind == 2 else 1, kind == 3))
        if kind == 3:                          # level 1 cancels: + and - of the same large value
            col[1] = col[0] ^ (1 << (31 if fmt == "fp32" else 15))
        cols.append(col)
    a = np.array(cols, dtype(fmt)).T.copy()
    assert {mod.chunk_levels(fmt, a) for mod in ENGINES.values()} == {2}
    return a


@pytest.mark.parametrize("fmt,rows", [("fp32", 64), ("fp32", 3), ("bf16", 64), ("bf16", 255)])
@pytest.mark.parametrize("shift", [0, 37, 101, 180])
def test_two_level_sums_at_every_offset_of_the_export_window(fmt, rows, shift):
    """The exact export of one- and two-level chunks (ckernels/kulisch.c, levels_export_n) puts
    each column's sum into a 128-bit word at an offset of its own: the widest two-level spread,
    at every offset, must give the reference's states at both widths and its rounded results."""
    g = max(1, math.ceil(math.log2(rows)))
    widest = 53 - FRAC_BITS[fmt] - 1 - g + (51 - g)          # need == 51 - g: still two levels
    for spread in (widest, widest - 7):
        if spread < 53 - FRAC_BITS[fmt] - g:
            continue
        a = window_block(fmt, rows, spread, shift, seed=shift + rows)
        check_all(fmt, a, out_fmts=("exact", "fp32"))
        check_all(fmt, a, width=280, out_fmts=("exact",))
