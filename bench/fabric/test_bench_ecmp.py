"""ECMP hashing and binning speed beside CRC peers: implementation x hash.

    .venv/bin/python -m pytest bench/fabric/test_bench_ecmp.py --benchmark-only

Groups (one pytest-benchmark table each, so one run prints the ratios):
- hash-crc32: CRC-32 of 10^6 random flows -- our C (byte planes + GFNI where
  the CPU has them, and the position tables), C slicing-by-8, numba; and as
  correctness and speed references zlib.crc32 and fastcrc's CRC-32/ISO-HDLC,
  per flow from Python over the 13-byte serialisations (10^5 flows), and
  zlib.crc32 over the whole 13-MB serialisation in one call (its raw rate per
  13 bytes: a different function, the CRC of the concatenation).
- hash-crc16, hash-toeplitz: ours; fastcrc's CRC-16/IBM-3740 (=CCITT-FALSE).
- bin-{crc32,crc16,toeplitz}: hash and bin 10^6 flows onto 32 uplinks of 32
  source leaves (the fabric report's bin_flows call): C, numba.
- bin-reference: the bit-serial pure-Python reference on 10^4 flows.
Every case records ns_per_item (minimum time / flows), n, unit, impl, peer, and
checks its result against another implementation.
"""
import zlib

import fastcrc
import numpy as np
import pytest

from golden.fabric import ecmp_c as c_ecmp
from golden.fabric import ecmp, ecmp_numba

SIZES = (10_000, 1_000_000)
ITEM = "flow"             # what record() counts (bench/conftest.py)
N = 1_000_000
N_PEER = 100_000          # peers called per flow from Python


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


def serialised(n):
    """The canonical 13-byte serialisations of flows(N)[:n], one bytes object."""
    key = ("bytes", n)
    if key not in _CACHE:
        fs = flows(N)
        rec = np.zeros(n, np.dtype([("s", ">u4"), ("d", ">u4"), ("sp", ">u2"), ("dp", ">u2"), ("p", "u1")]))
        rec["s"], rec["d"], rec["sp"], rec["dp"], rec["p"] = (fs.src_ip[:n], fs.dst_ip[:n], fs.src_port[:n],
                                                             fs.dst_port[:n], fs.proto[:n])
        _CACHE[key] = rec.tobytes()
    return _CACHE[key]


class gfni_off:
    """Run our C kernel on its position tables (the byte-plane path switched off)."""
    def __enter__(self):
        self.was = c_ecmp.use_gfni(False)

    def __exit__(self, *exc):
        c_ecmp.use_gfni(self.was)


OURS_HASH = ["c", "c tables", "numba"]


def our_hash(impl, algo, fs):
    if impl == "c tables":
        with gfni_off():
            return c_ecmp.hash_flows(fs, algo)
    return (c_ecmp if impl == "c" else ecmp_numba).hash_flows(fs, algo)


HASH_CASES = [(algo, impl) for algo in ecmp.HASHES for impl in OURS_HASH] + [("crc32", "c slicing-by-8")]


@pytest.mark.parametrize("algo,impl", HASH_CASES, ids=[f"{a}-{i}" for a, i in HASH_CASES])
def test_hash(benchmark, record, algo, impl):
    benchmark.group = f"hash-{algo}"
    fs = flows(N)
    fn = (lambda: c_ecmp.crc32_flows_slice8(fs)) if impl == "c slicing-by-8" else (lambda: our_hash(impl, algo, fs))
    fn()                                                              # warm the JIT / tables
    h = benchmark(fn)
    assert np.array_equal(h, ecmp_numba.hash_flows(fs, algo) if impl != "numba" else c_ecmp.hash_flows(fs, algo))
    record(N, impl)


PEER_HASHES = {("crc32", "zlib.crc32"): zlib.crc32,
               ("crc32", "fastcrc crc32.iso_hdlc"): fastcrc.crc32.iso_hdlc,
               ("crc16", "fastcrc crc16.ibm_3740"): fastcrc.crc16.ibm_3740}


@pytest.mark.parametrize("algo,peer", list(PEER_HASHES), ids=[p for _, p in PEER_HASHES])
def test_peer_hash_per_flow(benchmark, record, algo, peer):
    """A CRC library called per flow from Python -- the way a user hashes tuples
    without our kernels; its hashes must equal ours flow for flow."""
    benchmark.group = f"hash-{algo}"
    buf, fn = serialised(N_PEER), PEER_HASHES[(algo, peer)]
    views = [buf[13 * i:13 * i + 13] for i in range(N_PEER)]
    h = benchmark(lambda: [fn(v) for v in views])
    assert h == c_ecmp.hash_flows(flows(N), algo)[:N_PEER].tolist()
    record(N_PEER, f"{peer} per flow", peer=True)


def test_peer_zlib_raw_rate(benchmark, record):
    """zlib.crc32 over all 13 MB at once: its raw speed per 13 bytes."""
    benchmark.group = "hash-crc32"
    buf = serialised(N)
    crc = benchmark(zlib.crc32, buf)
    assert crc == fastcrc.crc32.iso_hdlc(buf)
    record(N, "zlib.crc32, one 13-MB buffer", peer=True)


IMPLS = {
    "c": lambda fs, algo: c_ecmp.bin_flows(fs, 32, algo, n_groups=32),
    "numba": lambda fs, algo: ecmp_numba.bin_flows(fs, 32, algo, n_groups=32),
    "python": lambda fs, algo: ecmp.bin_flows_ref(fs, 32, algo, n_groups=32),
}


@pytest.mark.parametrize("impl", ["c", "numba"])
@pytest.mark.parametrize("algo", list(ecmp.HASHES))
def test_bin(benchmark, record, algo, impl):
    benchmark.group = f"bin-{algo}"
    fs = flows(N)
    IMPLS[impl](flows(100), algo)                                     # warm the JIT / tables
    counts = benchmark(IMPLS[impl], fs, algo)
    other = IMPLS["numba" if impl == "c" else "c"](fs, algo)
    assert np.array_equal(counts, other) and int(counts.sum()) == N
    record(N, impl)


def test_bin_reference(benchmark, record):
    benchmark.group = "bin-reference"
    fs = flows(10_000)
    counts = benchmark.pedantic(IMPLS["python"], args=(fs, "crc32"), rounds=3, iterations=1)
    assert counts == IMPLS["c"](fs, "crc32").tolist()
    record(10_000, "python reference")
