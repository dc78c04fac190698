"""ECMP hashing + binning throughput: implementation x size (x hash).

    python -m pytest bench/test_bench_ecmp.py --benchmark-only

Each case hashes every flow of a (random-address) flow set and bins it onto 32
uplinks per source leaf -- the `bin_flows` call the fabric report makes.
Target: 10^6 flows in <= 5 ms in C, numba within 1.5x of C.  The pure-Python
reference runs only the small size (it is bit-serial by design).
"""
import numpy as np
import pytest

from ckernels import ecmp as c_ecmp
from golden import ecmp, ecmp_numba

SIZES = (10_000, 1_000_000)


def _flows(n, seed=11):
    rng = np.random.default_rng(seed)
    z = np.zeros(n, np.int32)
    return ecmp.FlowSet(f"random {n}", rng.integers(0, 2**32, n, dtype=np.uint32),
                        rng.integers(0, 2**32, n, dtype=np.uint32),
                        (0xC000 | rng.integers(0, 0x4000, n)).astype(np.uint16),
                        np.full(n, ecmp.ROCEV2_UDP_PORT, np.uint16), np.full(n, ecmp.PROTO_UDP, np.uint8),
                        rng.integers(0, 32, n, dtype=np.int32), z, z, z, z)


_CACHE = {}


def flows(n):
    if n not in _CACHE:
        _CACHE[n] = _flows(n)
    return _CACHE[n]


IMPLS = {
    "c": lambda fs, algo: c_ecmp.bin_flows(fs, 32, algo, n_groups=32),
    "numba": lambda fs, algo: ecmp_numba.bin_flows(fs, 32, algo, n_groups=32),
    "python": lambda fs, algo: ecmp.bin_flows_ref(fs, 32, algo, n_groups=32),
}


# the bit-serial reference runs only the small size: it is not a throughput implementation
CASES = [(impl, size) for impl in IMPLS for size in SIZES if impl != "python" or size <= 10_000]


@pytest.mark.parametrize("impl,size", CASES, ids=[f"{i}-{s}" for i, s in CASES])
def test_bench_bin_crc32(benchmark, impl, size):
    fs = flows(size)
    IMPLS[impl](flows(100), "crc32")                  # warm the JIT / tables
    counts = benchmark(IMPLS[impl], fs, "crc32")
    assert int(np.asarray(counts).sum()) == size
    benchmark.extra_info["ns_per_flow"] = benchmark.stats.stats.min / size * 1e9


@pytest.mark.parametrize("algo", ["crc16", "toeplitz"])
@pytest.mark.parametrize("impl", ["c", "numba"])
def test_bench_bin_other_hashes(benchmark, impl, algo):
    fs = flows(1_000_000)
    IMPLS[impl](flows(100), algo)
    counts = benchmark(IMPLS[impl], fs, algo)
    assert int(counts.sum()) == 1_000_000
    benchmark.extra_info["ns_per_flow"] = benchmark.stats.stats.min / 1_000_000 * 1e9


@pytest.mark.parametrize("kernel", ["position_tables", "slicing_by_8"])
def test_bench_c_crc32_hash_only(benchmark, kernel):
    fs = flows(1_000_000)
    fn = c_ecmp.hash_flows if kernel == "position_tables" else c_ecmp.crc32_flows_slice8
    fn(flows(100))
    h = benchmark(fn, fs)
    assert len(h) == 1_000_000
    benchmark.extra_info["ns_per_flow"] = benchmark.stats.stats.min / 1_000_000 * 1e9
