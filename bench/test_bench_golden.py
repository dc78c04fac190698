"""Golden arithmetic speed: Kulisch exact accumulation and the FP32_ARRIVAL
fold in pure Python, numba and C, against the plain float32 C loop.

Run: python -m pytest bench/test_bench_golden.py --benchmark-only
Each case records `ns_per_term` (mean time / terms) and `ns_per_term_min` in
extra_info.  Cases:
- kulisch_sequence: one long sequence of FP32 terms into one state;
- kulisch_reduce:   a C x E reduction (64 rows), exact state per element;
- fp32_arrival:     the FP32_ARRIVAL fold over the same C x E shape;
- plain_f32_loop:   `s += x[i]` over float32 in C (-O3, no fast-math), the baseline.
Python runs on ~10^4 terms (it is the naive reference); numba and C on 10^6
(2^20 for the 64 x 16384 reductions).  numba is warmed up before timing.
Each case checks its result against another implementation, so a fast wrong
kernel cannot pass.
"""
import numpy as np
import pytest

from ckernels import kulisch as ck
from golden import fp32_numba, kulisch_numba
from golden.fp32_arith import fp32_arrival_fold
from golden.kulisch import kulisch_sum

ROWS = 64


def fp32_terms(n, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(np.float32)
    return x.view(np.uint32)


def _record(benchmark, n):
    benchmark.extra_info["terms"] = n
    benchmark.extra_info["ns_per_term"] = benchmark.stats.stats.mean / n * 1e9
    # On a shared machine the minimum is the better estimate of the kernel's own cost.
    benchmark.extra_info["ns_per_term_min"] = benchmark.stats.stats.min / n * 1e9


def _py_sequence(x):
    acc = kulisch_sum("fp32", x.tolist())
    return acc.exact_limbs(), acc.wraps, acc.flags


def _py_reduce(a):
    cols = a.T.tolist()
    return [kulisch_sum("fp32", c).exact_limbs() for c in cols]


def _py_arrival(a):
    return [fp32_arrival_fold("fp32", c) for c in a.T.tolist()]


SEQUENCE = {"python": _py_sequence,
            "numba": lambda x: kulisch_numba.kulisch_accumulate("fp32", x),
            "c": lambda x: ck.kulisch_accumulate("fp32", x)}
REDUCE = {"python": _py_reduce,
          "numba": lambda a: kulisch_numba.kulisch_reduce("fp32", a),
          "c": lambda a: ck.kulisch_reduce("fp32", a)}
ARRIVAL = {"python": _py_arrival,
           "numba": lambda a: fp32_numba.fp32_arrival_reduce("fp32", a),
           "c": lambda a: ck.fp32_arrival_reduce("fp32", a)}

CASES = [("python", 10_000), ("numba", 1_000_000), ("c", 1_000_000)]
RED_CASES = [("python", 160), ("numba", 16384), ("c", 16384)]        # columns; rows = 64


@pytest.mark.parametrize("impl,n", CASES)
def test_kulisch_sequence(benchmark, impl, n):
    x = fp32_terms(n)
    fn = SEQUENCE[impl]
    fn(x[:1000])                                                        # warm-up (JIT)
    limbs, wraps, flags = benchmark(fn, x)
    ref = ck.kulisch_accumulate("fp32", x) if impl != "c" else kulisch_numba.kulisch_accumulate("fp32", x)
    assert list(map(int, limbs)) == ref[0].tolist() and (wraps, flags) == ref[1:]
    _record(benchmark, n)


@pytest.mark.parametrize("impl,cols", RED_CASES)
def test_kulisch_reduce(benchmark, impl, cols):
    a = fp32_terms(ROWS * cols, seed=1).reshape(ROWS, cols)
    fn = REDUCE[impl]
    fn(a[:, :8])
    out = benchmark(fn, a)
    limbs = np.array(out if impl == "python" else out[0], np.uint64)
    other = ck.kulisch_reduce("fp32", a)[0] if impl != "c" else kulisch_numba.kulisch_reduce("fp32", a)[0]
    assert np.array_equal(limbs, other)
    _record(benchmark, ROWS * cols)


@pytest.mark.parametrize("impl,cols", RED_CASES)
def test_fp32_arrival(benchmark, impl, cols):
    a = fp32_terms(ROWS * cols, seed=2).reshape(ROWS, cols)
    fn = ARRIVAL[impl]
    fn(a[:, :8])
    out = np.array(benchmark(fn, a), np.uint32)
    other = ck.fp32_arrival_reduce("fp32", a) if impl != "c" else fp32_numba.fp32_arrival_reduce("fp32", a)
    assert np.array_equal(out, other)
    _record(benchmark, ROWS * cols)


@pytest.mark.parametrize("n", [1_000_000])
def test_plain_f32_loop(benchmark, n):
    x = fp32_terms(n).view(np.float32)
    s = benchmark(ck.sum_f32_plain, x)
    assert np.isfinite(s)
    _record(benchmark, n)
