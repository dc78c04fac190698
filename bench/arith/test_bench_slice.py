"""Reduction slice speed: simulator cycles per second (MyHDL, per-cycle Icarus
co-simulation) and reduced terms (C x E contributions) per second against the
golden numba and C models, in one run parametrized over implementation x size.

    python -m pytest bench/arith/test_bench_slice.py --benchmark-only

Every benchmark records `terms_per_s` (and, for the simulators, `cycles` and
`cycles_per_s`: clock cycles of pass 1 — the slice — per wall-clock second
of the whole run, elaboration included, and `sim_cycles_per_s`, the same per
second of simulation proper) in the benchmark's extra_info.
"""
import time

import numpy as np
import pytest

from cosim.arith.slice_reduce import run_slice
from golden.reduce import reduce

SIZES = {"8x256": (8, 256), "16x1024": (16, 1024), "64x4096": (64, 4096)}
CASES = [(impl, size) for impl in ("myhdl", "icarus") for size in ("8x256",)] + \
        [(impl, size) for impl in ("numba", "c") for size in SIZES]


def data_for(size):
    c, e = SIZES[size]
    rng = np.random.default_rng(1)
    return rng.integers(0, 1 << 32, size=(c, e), dtype=np.uint64).astype(np.uint32)


@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
@pytest.mark.parametrize("impl,size", CASES)
def test_bench_slice_terms_per_second(benchmark, impl, size, policy):
    data = data_for(size)
    terms = data.size
    if impl in ("myhdl", "icarus"):
        run_slice(impl, policy, "fp32", data[:, :16])           # compile / warm the build cache
        info = {}

        def once():
            t = time.perf_counter()
            r = run_slice(impl, policy, "fp32", data)
            info["cycles"], info["seconds"], info["sim"] = r.cycles, time.perf_counter() - t, r.sim_seconds
            return r

        benchmark.pedantic(once, rounds=2, iterations=1)
        benchmark.extra_info["cycles"] = info["cycles"]
        benchmark.extra_info["cycles_per_s"] = info["cycles"] / info["seconds"]
        benchmark.extra_info["sim_cycles_per_s"] = info["cycles"] / info["sim"]
    else:
        reduce(policy, "fp32", "fp32", data[:, :16], impl=impl)   # JIT warm-up / library load
        benchmark(reduce, policy, "fp32", "fp32", data, impl=impl)
    benchmark.extra_info["terms"] = terms
    benchmark.extra_info["terms_per_s"] = terms / benchmark.stats.stats.mean
