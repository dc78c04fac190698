"""ECMP hashing: known-answer tests against published values, and the three
implementations (pure-Python reference, numba, C) bit-identical on random and
adversarial flows."""
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from golden.fabric import ecmp
from golden.fabric import ecmp_numba

try:
    from golden.fabric import ecmp_c as c_ecmp
except ImportError as e:  # a broken build must fail loudly, not skip
    raise RuntimeError("C ECMP kernel not built: pip install -e .") from e

IMPLS = {"ref": ecmp, "numba": ecmp_numba, "c": c_ecmp}
BYTE_FNS = {
    "ref": (ecmp.crc32, ecmp.crc16_ccitt, ecmp.toeplitz),
    "numba": (ecmp_numba.crc32, ecmp_numba.crc16_ccitt, ecmp_numba.toeplitz),
    "c": (c_ecmp.crc32, c_ecmp.crc16_ccitt, c_ecmp.toeplitz),
}

# Microsoft "Verifying the RSS Hash Calculation", IPv4: (dst, dport, src, sport, IPv4-only, IPv4 with TCP)
RSS_VECTORS = [
    ("161.142.100.80", 1766, "66.9.149.187", 2794, 0x323E8FC2, 0x51CCC178),
    ("65.69.140.83", 4739, "199.92.111.2", 14230, 0xD718262A, 0xC626B0EA),
    ("12.22.207.184", 38024, "24.19.198.95", 12898, 0xD2D0A5DE, 0x5C2B394A),
    ("209.142.163.6", 2217, "38.27.205.30", 48228, 0x82989176, 0xAFC7327F),
    ("202.188.127.2", 1303, "153.39.163.191", 44251, 0x5D1809C5, 0x10E828A2),
]


def _ip_bytes(s):
    return bytes(int(x) for x in s.split("."))


# --- known answers (external facts) ------------------------------------------------------
@pytest.mark.parametrize("impl", BYTE_FNS)
def test_crc_check_values(impl):
    crc32, crc16, _ = BYTE_FNS[impl]
    assert crc32(b"123456789") == 0xCBF43926          # CRC-32/ISO-HDLC check value
    assert crc32(b"123456789") == zlib.crc32(b"123456789")
    assert crc16(b"123456789") == 0x29B1              # CRC-16/CCITT-FALSE check value
    assert crc32(b"") == 0 and crc16(b"") == 0xFFFF


@pytest.mark.parametrize("impl", BYTE_FNS)
@pytest.mark.parametrize("vec", RSS_VECTORS, ids=lambda v: v[2])
def test_toeplitz_microsoft_vectors(impl, vec):
    _, _, toeplitz = BYTE_FNS[impl]
    dst, dport, src, sport, h2, h4 = vec
    two = _ip_bytes(src) + _ip_bytes(dst)
    four = two + sport.to_bytes(2, "big") + dport.to_bytes(2, "big")
    assert toeplitz(two) == h2
    assert toeplitz(four) == h4


def test_toeplitz_of_canonical_tuple_extends_the_rss_4tuple():
    # Toeplitz is linear: the 13-byte hash is the published 12-byte hash xor the
    # proto byte's contribution (the hash of 12 zero bytes followed by proto).
    dst, dport, src, sport, _, h4 = RSS_VECTORS[0]
    t = ecmp.FlowTuple(ecmp.parse_ip(src), ecmp.parse_ip(dst), sport, dport, 6)
    assert ecmp.flow_hash(t, "toeplitz") == h4 ^ ecmp.toeplitz(bytes(12) + b"\x06")


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=64))
def test_crc32_any_bytes_matches_zlib(data):
    assert ecmp.crc32(data) == zlib.crc32(data)
    assert ecmp_numba.crc32(data) == zlib.crc32(data)
    assert c_ecmp.crc32(data) == zlib.crc32(data)


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=36))
def test_crc16_and_toeplitz_any_bytes_agree(data):
    assert ecmp_numba.crc16_ccitt(data) == ecmp.crc16_ccitt(data) == c_ecmp.crc16_ccitt(data)
    assert ecmp_numba.toeplitz(data) == ecmp.toeplitz(data) == c_ecmp.toeplitz(data)


@pytest.mark.parametrize("impl", BYTE_FNS)
def test_toeplitz_rejects_short_key(impl):
    with pytest.raises(ValueError, match="key"):
        BYTE_FNS[impl][2](bytes(13), key=bytes(16))


# --- serialisation, path selection, addressing ---------------------------------------------
def test_serialisation_is_13_bytes_big_endian():
    t = ecmp.FlowTuple(0x0A010203, 0xC0A80001, 0xC123, 4791, 17)
    assert ecmp.serialize(t) == bytes([10, 1, 2, 3, 192, 168, 0, 1, 0xC1, 0x23, 0x12, 0xB7, 17])
    assert ecmp.deserialize(ecmp.serialize(t)) == t
    with pytest.raises(ValueError):
        ecmp.deserialize(bytes(12))


@pytest.mark.parametrize("field,value", [("src_ip", 1 << 32), ("src_port", -1), ("dst_port", 65536), ("proto", 256)])
def test_flow_tuple_rejects_out_of_range(field, value):
    kw = dict(src_ip=1, dst_ip=2, src_port=3, dst_port=4, proto=17)
    kw[field] = value
    with pytest.raises(ValueError, match=field):
        ecmp.FlowTuple(**kw)


def test_path_selection_definitions():
    h = 0xDEADBEEF
    assert ecmp.select_path(h, 32, "mod") == h & 31                    # low 5 bits
    assert ecmp.select_path(h, 32, "mulhi") == h >> 27                 # top 5 bits
    assert ecmp.select_path(0xFFFF, 24, "mulhi", width=16) == 23
    assert ecmp.select_path(0xFFFFFFFF, 7, "mulhi") == 6
    for bad in ((h, 0, "mod"), (h, 70000, "mod"), (h, 32, "low")):
        with pytest.raises(ValueError):
            ecmp.select_path(*bad)
    with pytest.raises(ValueError):
        ecmp.select_path(1 << 16, 4, "mod", width=16)


def test_addressing_plan_and_roce_ports():
    assert ecmp.ip_str(ecmp.accel_ip(31, 7)) == "10.31.7.1"
    with pytest.raises(ValueError):
        ecmp.accel_ip(256, 0)
    fs = ecmp.ring_flows(stripes=2)
    assert len(fs) == 2048
    assert np.all(fs.dst_port == 4791) and np.all(fs.proto == 17)
    assert np.all(fs.src_port >= 0xC000)
    for i in (0, 1, 777, 2047):
        r, s = int(fs.src_rank[i]), int(fs.stripe[i])
        want = ecmp.flow_tuple_for(ecmp.rank_location(r), ecmp.rank_location((r + 1) % 1024), r, (r + 1) % 1024, 0, s)
        assert fs.tuple(i) == want
        assert bytes(fs.serialized()[i]) == ecmp.serialize(want)
    # a new epoch (job restart) redraws the source ports
    assert np.mean(ecmp.ring_flows(epoch=1).src_port != ecmp.ring_flows(epoch=0).src_port) > 0.99


def test_flow_sets_counts_and_ring_orderings():
    a2a = ecmp.all_to_all_flows(4, 3)
    pairs = set(zip(a2a.src_rank.tolist(), a2a.dst_rank.tolist()))
    assert len(a2a) == len(pairs) == 12 * 11 and all(s != d for s, d in pairs)
    assert len(ecmp.all_to_all_flows()) == 1_047_552
    strided, packed = ecmp.ring_flows(order="strided"), ecmp.ring_flows(order="packed")
    assert int(np.sum(strided.src_leaf != strided.dst_leaf)) == 1024        # every ring link crosses
    assert int(np.sum(packed.src_leaf != packed.dst_leaf)) == 32            # 1 of 32 per leaf
    assert len(packed.crossing()) == 32
    assert np.bincount(strided.src_leaf).tolist() == [32] * 32
    with pytest.raises(ValueError):
        ecmp.ring_flows(order="spiral")


# --- the implementations agree bit for bit ----------------------------------------------------
tuples = st.builds(ecmp.FlowTuple, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1),
                   st.integers(0, 2**16 - 1), st.integers(0, 2**16 - 1), st.integers(0, 255))


def _flowset(ts, groups=None):
    n = len(ts)
    col = lambda f, dt: np.array([getattr(t, f) for t in ts], dtype=dt)
    g = np.zeros(n, np.int32) if groups is None else np.asarray(groups, np.int32)
    z = np.zeros(n, np.int32)
    return ecmp.FlowSet("t", col("src_ip", np.uint32), col("dst_ip", np.uint32), col("src_port", np.uint16),
                        col("dst_port", np.uint16), col("proto", np.uint8), g, z, z, z, z)


ADVERSARIAL = [ecmp.FlowTuple(0, 0, 0, 0, 0), ecmp.FlowTuple(2**32 - 1, 2**32 - 1, 65535, 65535, 255),
               ecmp.FlowTuple(0x80000000, 1, 0x8000, 1, 0x80), ecmp.FlowTuple(1, 0x80000000, 1, 0x8000, 1)]


@settings(max_examples=60, deadline=None)
@given(st.lists(tuples, min_size=1, max_size=40), st.sampled_from(list(ecmp.HASHES)),
       st.sampled_from(ecmp.PATH_MODES), st.sampled_from([1, 2, 3, 7, 32, 64, 1000, 65535]))
def test_implementations_bit_identical(ts, algo, mode, n_paths):
    ts = ts + ADVERSARIAL
    fs = _flowset(ts, groups=[i % 3 for i in range(len(ts))])
    ref = [ecmp.flow_hash(t, algo) for t in ts]
    assert ecmp_numba.hash_flows(fs, algo).tolist() == ref
    assert c_ecmp.hash_flows(fs, algo).tolist() == ref
    if algo == "crc32":
        assert c_ecmp.crc32_flows_slice8(fs).tolist() == ref
    ref_paths = [ecmp.ecmp_path(t, n_paths, algo, mode) for t in ts]
    ref_counts = ecmp.bin_flows_ref(fs, n_paths, algo, mode, n_groups=3)
    for impl in (ecmp_numba, c_ecmp):
        counts, paths = impl.bin_flows(fs, n_paths, algo, mode, n_groups=3, return_paths=True)
        assert paths.tolist() == ref_paths
        assert counts.tolist() == ref_counts


@pytest.mark.parametrize("algo", list(ecmp.HASHES))
def test_million_flow_all_to_all_identical_between_numba_and_c(algo):
    fs = ecmp.all_to_all_flows()
    h_n, h_c = ecmp_numba.hash_flows(fs, algo), c_ecmp.hash_flows(fs, algo)
    assert np.array_equal(h_n, h_c)
    sample = np.random.default_rng(5).choice(len(fs), 200, replace=False)
    assert [int(h_c[i]) for i in sample] == [ecmp.flow_hash(fs.tuple(int(i)), algo) for i in sample]
    for mode in ecmp.PATH_MODES:
        assert np.array_equal(ecmp_numba.bin_flows(fs, 32, algo, mode), c_ecmp.bin_flows(fs, 32, algo, mode))


@pytest.mark.parametrize("impl", ["numba", "c"])
def test_bad_arguments_raise(impl):
    mod = IMPLS[impl]
    fs = ecmp.ring_flows(4, 4)
    with pytest.raises(ValueError, match="unknown hash"):
        mod.bin_flows(fs, 32, "md5")
    with pytest.raises(ValueError, match="path mode"):
        mod.bin_flows(fs, 32, "crc32", "top")
    with pytest.raises(ValueError, match="n_paths"):
        mod.bin_flows(fs, 0)
    with pytest.raises(ValueError, match="group"):
        mod.bin_flows(fs, 32, n_groups=2)
    with pytest.raises(ValueError, match="entries"):
        mod.bin_flows(fs, 32, groups=np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="n_groups"):
        mod.bin_flows(fs, 32, n_groups=0)
    with pytest.raises(ValueError, match="group -1"):
        mod.bin_flows(fs, 32, groups=np.full(len(fs), -1, np.int32), n_groups=4)


@pytest.mark.slow
@pytest.mark.parametrize("algo", list(ecmp.HASHES))
def test_million_flow_all_to_all_identical_across_all_three(algo):
    """The pure-Python reference over all 1,047,552 all-to-all flows (minutes; slow):
    every hash and every path bin equal to numba's and C's."""
    fs = ecmp.all_to_all_flows()
    ref = ecmp.hash_flows_ref(fs, algo)
    assert np.array_equal(np.asarray(ref, dtype=np.uint64), ecmp_numba.hash_flows(fs, algo).astype(np.uint64))
    assert np.array_equal(np.asarray(ref, dtype=np.uint64), c_ecmp.hash_flows(fs, algo).astype(np.uint64))
    for mode in ecmp.PATH_MODES:
        assert ecmp.bin_flows_ref(fs, 32, algo, mode) == c_ecmp.bin_flows(fs, 32, algo, mode).tolist()
