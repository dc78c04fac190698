"""The co-simulated accelerator package: one phase on each back end, simulated
cycles per second.

    python -m pytest bench/package/test_bench_package.py --benchmark-only

The phase is the degraded-die scenario in the compute-bound package (1200 units,
die 2 at half rate, service-rate dispatch, no barrier: 699 cycles).  Every run
records every output of every cycle, and each case checks that its record equals
the MyHDL design's.  Timings are end to end (stimulus, simulator start, parsing);
compilation is done once before timing (the batched test benches are cached).
"""
import functools

import pytest

from cosim.package.package_bench import run_package, setup_from_graph
from golden.package import resource_graph as rg

SETUP = setup_from_graph(rg.Package(hbm_rate=20, d2d_per_die=3), barrier_cycles=0, die_rate=(8, 8, 4, 8))


@functools.lru_cache(maxsize=None)
def reference():
    return run_package(SETUP, "myhdl")


@pytest.mark.parametrize("backend", ["myhdl", "icarus", "icarus-2005", "icarus-2012", "verilator"])
def test_bench_package_phase(benchmark, backend):
    ref = reference()
    run_package(SETUP, backend)                    # compile and cache outside the timing
    r = benchmark.pedantic(run_package, args=(SETUP, backend), rounds=3 if backend in ("myhdl", "icarus") else 5,
                           iterations=1)
    assert r.trace == ref.trace
    benchmark.extra_info["cycles"] = r.cycles
    benchmark.extra_info["cycles_per_s"] = r.cycles / benchmark.stats.stats.mean
