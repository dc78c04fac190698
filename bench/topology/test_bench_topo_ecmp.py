"""Routing speed: ring and all-to-all flows over ZCube(n,2) and ROFT radix n.

Run: python -m pytest bench/topology/test_bench_topo_ecmp.py --benchmark-only
Each case is warmed up (JIT compiled, topology distances cached) before timing.
"""
import pytest

from golden.topology import topology as T
from golden.topology import topo_ecmp as E

_TOPOS = {}


def _topo(kind, n):
    key = (kind, n)
    if key not in _TOPOS:
        t = T.zcube(n, 2) if kind == "zcube" else T.roft_radix(n)
        _ = t.switch_to_gpu_hops, E.directed_csr(t)
        _TOPOS[key] = t
    return _TOPOS[key]


@pytest.mark.parametrize("n", [16, 32])
@pytest.mark.parametrize("kind", ["zcube", "roft"])
@pytest.mark.parametrize("impl", ["numba", "c"])
def test_bench_all_to_all_pipeline(benchmark, kind, n, impl):
    """Flow set + hash + route + summary: n=32 is the 1,047,552-flow case."""
    t = _topo(kind, n)
    E.route_collective(t, "all-to-all", impl=impl)          # warm-up
    s = benchmark(lambda: E.summarize(E.route_collective(t, "all-to-all", impl=impl)))
    assert s.flows == n * n * (n * n - 1)


@pytest.mark.parametrize("n", [32])
@pytest.mark.parametrize("kind", ["zcube", "roft"])
def test_bench_route_kernel_only(benchmark, kind, n):
    """The routing kernel alone on precomputed hashes."""
    t = _topo(kind, n)
    fl = E.collective_flows(t, "all-to-all")
    h = E.flow_hashes(fl)
    E.route(t, fl.src_rank, fl.dst_rank, h)
    r = benchmark(E.route, t, fl.src_rank, fl.dst_rank, h)
    assert int(r.load.sum()) > 0


@pytest.mark.parametrize("kind", ["zcube", "roft"])
def test_bench_ring_16384_gpus(benchmark, kind):
    t = _topo(kind, 128)
    E.route_collective(t, "ring", "col")
    r = benchmark(E.route_collective, t, "ring", "col")
    assert len(r.src) == 16384
