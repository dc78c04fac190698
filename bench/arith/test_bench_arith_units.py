"""FP32 additions per second: the MyHDL adder (hdl/arith/fp32_add.py) under pure
MyHDL simulation and per-cycle Icarus co-simulation, against the golden FP32
add in pure Python (Fractions), numba (array kernel) and C (one cffi call per add).

Run: python -m pytest bench/arith/test_bench_arith_units.py --benchmark-only
Each case records `adds_per_s` in extra_info (n / mean time).  A simulator
case is one pipelined run of n additions, one per cycle, including simulator
start-up, reset and pipeline drain (LATENCY + a few cycles); for Icarus the
design is converted and compiled before timing (the build is cached).
Every case checks its results bit for bit against the pure-Python golden add.
"""
import random

import numpy as np
import pytest
from myhdl import ResetSignal, Signal, intbv

from cosim.sim import toolchain
from cosim.sim.pipeline import run_pipeline
from golden.arith import fp32_arith, fp32_numba
from hdl.arith.fp32_add import fp32_add

LATENCY = 4


def operands(n, seed=0):
    rng = random.Random(seed)
    return [rng.getrandbits(32) for _ in range(n)], [rng.getrandbits(32) for _ in range(n)]


def simulate(backend, a, b):
    """n pipelined additions on `backend`; returns the results in order."""
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    in_valid, out_valid = Signal(bool(0)), Signal(bool(0))
    in_a, in_b, out_result = Signal(intbv(0)[32:]), Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    in_tag, out_tag = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    dut_factory = toolchain.select(fp32_add, backend)

    def load(pair):
        in_a.next, in_b.next = pair

    ports = (clk, rst, in_valid, in_a, in_b, in_tag, out_valid, out_result, out_tag)
    got = run_pipeline(dut_factory, ports, dict(LATENCY=LATENCY), clk, rst, in_valid, out_valid, list(zip(a, b)),
                       load, lambda: int(out_result), backend, LATENCY)
    return [r for r, *_ in got]


def _python(a, b):
    return [fp32_arith.fp32_add(x, y) for x, y in zip(a, b)]


def _c_scalar(a, b):
    from golden.arith import kulisch_c as ck
    return [ck.fp32_add(x, y) for x, y in zip(a, b)]


CASES = [("myhdl", 500), ("myhdl", 2000), ("icarus", 500), ("icarus", 2000),
         ("python", 2000), ("python", 20000), ("c-scalar", 20000), ("c-scalar", 200000),
         ("numba", 20000), ("numba", 1000000)]


@pytest.mark.parametrize("impl,n", CASES, ids=[f"{i}-{n}" for i, n in CASES])
def test_bench_fp32_add(benchmark, impl, n):
    a, b = operands(n, seed=n)
    check_n = min(n, 2000)
    expected = _python(a[:check_n], b[:check_n])
    if impl in ("myhdl", "icarus"):
        if impl == "icarus":
            simulate("icarus", a[:8], b[:8])          # convert + compile outside the timing
        got = benchmark.pedantic(simulate, args=(impl, a, b), rounds=3, iterations=1)
    elif impl == "python":
        got = benchmark.pedantic(_python, args=(a, b), rounds=3, iterations=1)
    elif impl == "c-scalar":
        _c_scalar(a[:8], b[:8])
        got = benchmark(_c_scalar, a, b)
    else:
        ua, ub = np.array(a, np.uint32), np.array(b, np.uint32)
        fp32_numba.fp32_add(ua[:8], ub[:8])           # JIT warm-up
        got = benchmark(fp32_numba.fp32_add, ua, ub)
    got = [int(x) for x in got[:check_n]]
    assert got == expected
    benchmark.extra_info["n"] = n
    benchmark.extra_info["adds_per_s"] = n / benchmark.stats.stats.mean
