"""Golden arithmetic speed beside its peers: exact Kulisch sums (C, numba, the
pure-Python reference) against numpy's float32 sum, xsum's small and large
superaccumulators and math.fsum on the same values; the FP32_ARRIVAL fold.

Run: .venv/bin/python -m pytest bench/arith/test_bench_golden.py --benchmark-only
     (add --benchmark-json=FILE for docs/perf.md: python bench/plot_perf.py FILE)

Groups (pytest-benchmark prints each group as one table, so the ratios of one
run sit side by side):
- sum-allreduce-fp32: 64 x 16,384 FP32 reduced over the 64 rows (the
  all-reduce shape): our C and numba kernels, through their own entry point
  and through golden.reduce.reduce (exact states and FP32 results); numpy's
  float32 sum over axis 0; xsum and fsum over the same 2^20 values (one sum:
  they have no column form).
- sum-sequence-fp32: one sequence of 10^6 FP32 (the 10^6 x 1 shape): the
  same, plus a plain sequential float32 loop in C.
- sum-allreduce-{fp16,bf16,int8}: our reductions of narrower inputs beside
  numpy's float32 sum of the same values converted beforehand.
- reference: the pure-Python reference (Python ints), on a slice.
- fp32-arrival: the FP32_ARRIVAL fold (one binary32 add per row, in order).
Every case records ns_per_item (minimum time / terms; on a shared machine the
minimum is the better estimate of a kernel's own cost), n, unit, impl and
whether it is a peer.  Every case checks its result against another
implementation, so a fast wrong kernel cannot pass.
"""
import math
from fractions import Fraction

import numpy as np
import pytest
import xsum

from golden.arith import kulisch_c as ck
from golden.arith import fp32_numba, kulisch_numba
from golden.arith.fp32_arith import fp32_arrival_fold
from golden.arith.kulisch import kulisch_sum, limbs_to_signed
from golden.reduce import reduce

ITEM = "term"             # what record() counts (bench/conftest.py)
ROWS, COLS = 64, 16384
SEQ = 1_000_000


def fp32_terms(n, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(np.float32)
    return x.view(np.uint32)


_DATA = {}


def data(name):
    if name not in _DATA:
        if name == "allreduce-fp32":
            _DATA[name] = fp32_terms(ROWS * COLS, seed=1).reshape(ROWS, COLS)
        elif name == "sequence-fp32":
            _DATA[name] = fp32_terms(SEQ).reshape(SEQ, 1)
        elif name == "allreduce-bf16":
            _DATA[name] = (data("allreduce-fp32") >> 16).astype(np.uint16)
        elif name == "allreduce-fp16":                              # finite, subnormals included
            rng = np.random.default_rng(2)
            f = rng.standard_normal(ROWS * COLS) * np.exp2(rng.integers(-20, 10, ROWS * COLS))
            _DATA[name] = f.astype(np.float16).view(np.uint16).reshape(ROWS, COLS)
        elif name == "allreduce-int8":
            _DATA[name] = np.random.default_rng(3).integers(0, 256, (ROWS, COLS)).astype(np.uint8)
    return _DATA[name]


def as_float32(fmt, a):
    """The same values as float32 (exact conversions), for numpy's sum."""
    if fmt == "fp32":
        return a.view(np.float32)
    if fmt == "bf16":
        return (a.astype(np.uint32) << 16).view(np.float32)
    if fmt == "fp16":
        return a.view(np.float16).astype(np.float32)
    return a.view(np.int8).astype(np.float32)


# pytest-benchmark sizes a case's rounds from ONE calibration call, which on a shared
# machine may land in a busy moment and leave a sub-millisecond kernel with a few
# dozen rounds; the minimum over so few is not its own cost.  The fast cases (ours,
# numpy's sum, xsum large) run at least MANY_ROUNDS rounds each.
MANY_ROUNDS = pytest.mark.benchmark(min_rounds=3000)


# ---- exact sums: ours ---------------------------------------------------------------------

ENGINES = {"c": ck, "numba": kulisch_numba}
OURS = [("c", "kernel"), ("c", "reduce-exact"), ("c", "reduce-fp32"),
        ("numba", "kernel"), ("numba", "reduce-exact"), ("numba", "reduce-fp32")]


def ours(fmt, shape_name, impl, entry):
    """A callable summing data(shape) exactly, through the kernel's own entry point
    (kulisch_reduce for the all-reduce shape, kulisch_accumulate for a sequence)
    or through golden.reduce.reduce."""
    a = data(f"{shape_name}-{fmt}")
    mod = ENGINES[impl]
    if entry == "kernel":
        if a.shape[1] == 1:
            seq = a.reshape(-1)
            return lambda: mod.kulisch_accumulate(fmt, seq)
        return lambda: mod.kulisch_reduce(fmt, a)
    out = entry.split("-")[1]
    return lambda: reduce("kulisch", fmt, out, a, impl=impl)


def check_ours(fmt, shape_name, impl, entry, result):
    """Compare with the other engine's kernel (exact states) or reduce (rounded)."""
    other = "numba" if impl == "c" else "c"
    a = data(f"{shape_name}-{fmt}")
    if entry == "kernel":
        want = ENGINES[other].kulisch_reduce(fmt, a)
        got = result if a.shape[1] > 1 else (result[0].reshape(1, -1), np.array([result[1]]), np.array([result[2]]))
        assert all(np.array_equal(x, y) for x, y in zip(got, want))
    else:
        assert result.same_as(reduce("kulisch", fmt, entry.split("-")[1], a, impl=other))


@MANY_ROUNDS
@pytest.mark.parametrize("impl,entry", OURS, ids=[f"{i}-{e}" for i, e in OURS])
@pytest.mark.parametrize("shape_name", ["allreduce", "sequence"])
def test_exact_sum_fp32(benchmark, record, shape_name, impl, entry):
    benchmark.group = f"sum-{shape_name}-fp32"
    fn = ours("fp32", shape_name, impl, entry)
    fn()                                                              # warm-up (JIT)
    check_ours("fp32", shape_name, impl, entry, benchmark(fn))
    record(data(f"{shape_name}-fp32").size, f"{impl} {entry}")


NARROW = [(i, e) for i, e in OURS if e != "reduce-exact"]


@MANY_ROUNDS
@pytest.mark.parametrize("impl,entry", NARROW, ids=[f"{i}-{e}" for i, e in NARROW])
@pytest.mark.parametrize("fmt", ["fp16", "bf16", "int8"])
def test_exact_sum_narrow(benchmark, record, fmt, impl, entry):
    benchmark.group = f"sum-allreduce-{fmt}"
    fn = ours(fmt, "allreduce", impl, entry)
    fn()
    check_ours(fmt, "allreduce", impl, entry, benchmark(fn))
    record(ROWS * COLS, f"{impl} {entry}")


# ---- exact and plain sums: peers ------------------------------------------------------------

def xsum_large(v):
    acc = xsum.xsum_large_accumulator()
    xsum.xsum_add(acc, v)
    return xsum.xsum_round(acc)


def xsum_small(v):
    acc = xsum.xsum_small_accumulator()
    xsum.xsum_add(acc, v)
    return xsum.xsum_round(acc)


def exact_double(x32):
    """The exact sum of float32 values rounded once to a double, from our Kulisch state."""
    limbs, wraps, _ = ck.kulisch_accumulate("fp32", x32.view(np.uint32))
    return float(Fraction(limbs_to_signed(limbs, 320) + (wraps << 320), 1 << 149))


PEERS = {"numpy float32 sum": None, "xsum large": xsum_large, "xsum small": xsum_small, "math.fsum": math.fsum}


@pytest.mark.parametrize("peer", [pytest.param(p, marks=MANY_ROUNDS) if p in ("numpy float32 sum", "xsum large") else p
                                  for p in PEERS])
@pytest.mark.parametrize("shape_name", ["allreduce", "sequence"])
def test_peer_sum_fp32(benchmark, record, shape_name, peer):
    benchmark.group = f"sum-{shape_name}-fp32"
    a = data(f"{shape_name}-fp32").view(np.float32)
    if peer == "numpy float32 sum":
        fn = (lambda: a.sum(axis=0)) if shape_name == "allreduce" else (lambda: a.sum())
        result = benchmark(fn)
        assert np.all(np.isfinite(result))
    else:
        values = a.reshape(-1).astype(np.float64)                     # exact; outside the timing
        result = benchmark(PEERS[peer], values)
        assert result == exact_double(a.reshape(-1))                  # the exact sum, correctly rounded
    record(a.size, peer, peer=True)


@MANY_ROUNDS
@pytest.mark.parametrize("fmt", ["fp16", "bf16", "int8"])
def test_peer_numpy_sum_narrow(benchmark, record, fmt):
    benchmark.group = f"sum-allreduce-{fmt}"
    f = as_float32(fmt, data(f"allreduce-{fmt}"))
    result = benchmark(lambda: f.sum(axis=0))
    assert result.shape == (COLS,)
    record(f.size, "numpy float32 sum", peer=True)


@MANY_ROUNDS
def test_plain_f32_loop(benchmark, record):
    benchmark.group = "sum-sequence-fp32"
    x = data("sequence-fp32").view(np.float32).reshape(-1)
    s = benchmark(ck.sum_f32_plain, x)
    assert np.isfinite(s)
    record(x.size, "C plain float32 loop", peer=True)


# ---- the pure-Python reference -----------------------------------------------------------------

def test_python_reference(benchmark, record):
    benchmark.group = "reference"
    x = data("sequence-fp32").reshape(-1)[:10_000]
    acc = benchmark.pedantic(kulisch_sum, args=("fp32", x.tolist()), rounds=3, iterations=1)
    assert acc.exact_limbs() == ck.kulisch_accumulate("fp32", x)[0].tolist()
    record(x.size, "python reference")


# ---- FP32_ARRIVAL --------------------------------------------------------------------------------

ARRIVAL = {"python": lambda a: [fp32_arrival_fold("fp32", c) for c in a.T.tolist()],
           "numba": lambda a: fp32_numba.fp32_arrival_reduce("fp32", a),
           "c": lambda a: ck.fp32_arrival_reduce("fp32", a)}


@pytest.mark.parametrize("impl,cols", [("python", 160), ("numba", COLS), ("c", COLS)])
def test_fp32_arrival(benchmark, record, impl, cols):
    benchmark.group = "fp32-arrival"
    a = data("allreduce-fp32")[:, :cols]
    fn = ARRIVAL[impl]
    fn(a[:, :8])
    out = np.array(benchmark(fn, a), np.uint32)
    other = ck.fp32_arrival_reduce("fp32", a) if impl != "c" else fp32_numba.fp32_arrival_reduce("fp32", a)
    assert np.array_equal(out, other)
    record(a.size, impl)
