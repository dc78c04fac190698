"""ECMP hashing and binning in numba, bit-identical to ``golden.ecmp``.

Algorithm.  For a FIXED input length every hash here is affine over GF(2):
``H(a xor b) = H(a) xor H(b) xor H(0)``.  So the hash of a 13-byte tuple is

    H(b0..b12) = H(0^13) xor T_0[b0] xor T_1[b1] xor ... xor T_12[b12]

with one 256-entry table per byte POSITION, ``T_i[v] = H(v at position i,
zeros elsewhere) xor H(0^13)``.  Thirteen independent loads and XORs, no
dependency chain -- faster than slicing-by-8, whose last five bytes are
sequential.  The position tables are built here from this module's own
byte-at-a-time (Sarwate) CRC tables and from the Toeplitz key directly, not
from the reference, so the reference check is a check of two independent
derivations.

The byte-string functions (``crc32_bytes`` etc.) are the classic table-driven
forms for any length; they back the known-answer tests.
"""
from __future__ import annotations

import numpy as np

from golden import ecmp
from golden.jit import jit

_MODE_IDS = {"mod": 0, "mulhi": 1}


# --- byte-at-a-time tables --------------------------------------------------------
def _crc32_table() -> np.ndarray:
    t = np.zeros(256, dtype=np.uint32)
    for v in range(256):
        c = v
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        t[v] = c
    return t


def _crc16_table() -> np.ndarray:
    t = np.zeros(256, dtype=np.uint16)
    for v in range(256):
        c = v << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) & 0xFFFF if c & 0x8000 else (c << 1) & 0xFFFF
        t[v] = c
    return t


CRC32_TABLE = _crc32_table()
CRC16_TABLE = _crc16_table()
MS_KEY_ARRAY = np.frombuffer(ecmp.MS_RSS_KEY, dtype=np.uint8).copy()


@jit
def crc32_bytes(data):
    crc = np.uint32(0xFFFFFFFF)
    for i in range(data.shape[0]):
        crc = CRC32_TABLE[(crc ^ data[i]) & np.uint32(0xFF)] ^ (crc >> np.uint32(8))
    return crc ^ np.uint32(0xFFFFFFFF)


@jit
def crc16_bytes(data):
    crc = np.uint32(0xFFFF)
    for i in range(data.shape[0]):
        crc = (np.uint32(CRC16_TABLE[((crc >> np.uint32(8)) ^ data[i]) & np.uint32(0xFF)])
               ^ (crc << np.uint32(8))) & np.uint32(0xFFFF)
    return crc


@jit
def toeplitz_bytes(data, key):
    """Toeplitz hash; key must have at least len(data) + 4 bytes (checked by the wrapper)."""
    # a 32-bit window that slides one key byte per input byte
    window = ((np.uint64(key[0]) << np.uint64(24)) | (np.uint64(key[1]) << np.uint64(16))
              | (np.uint64(key[2]) << np.uint64(8)) | np.uint64(key[3]))
    result = np.uint64(0)
    for i in range(data.shape[0]):
        window = (window << np.uint64(8)) | np.uint64(key[i + 4])     # 40 bits live
        b = data[i]
        for j in range(8):
            if (b >> (7 - j)) & 1:
                result ^= (window >> np.uint64(8 - j)) & np.uint64(0xFFFFFFFF)
    return np.uint32(result)


def toeplitz(data: bytes, key: bytes = ecmp.MS_RSS_KEY) -> int:
    if len(key) < len(data) + 4:
        raise ValueError(f"a Toeplitz key for {len(data)} input bytes needs at least {len(data) + 4} bytes")
    return int(toeplitz_bytes(np.frombuffer(data, dtype=np.uint8), np.frombuffer(key, dtype=np.uint8)))


def crc32(data: bytes) -> int:
    return int(crc32_bytes(np.frombuffer(data, dtype=np.uint8)))


def crc16_ccitt(data: bytes) -> int:
    return int(crc16_bytes(np.frombuffer(data, dtype=np.uint8)))


# --- per-position tables for the 13-byte tuple ---------------------------------------
def _position_tables():
    """tables[algo] = (T uint32[13,256], H(0^13))."""
    out = []
    fns = (lambda d: int(crc32_bytes(d)), lambda d: int(crc16_bytes(d)),
           lambda d: int(toeplitz_bytes(d, MS_KEY_ARRAY)))
    for fn in fns:
        zero = np.zeros(ecmp.TUPLE_BYTES, dtype=np.uint8)
        h0 = fn(zero)
        t = np.zeros((ecmp.TUPLE_BYTES, 256), dtype=np.uint32)
        for pos in range(ecmp.TUPLE_BYTES):
            for v in range(256):
                zero[pos] = v
                t[pos, v] = fn(zero) ^ h0
            zero[pos] = 0
        out.append((t, np.uint32(h0)))
    return out


_TABLES = None


def position_tables(algo: str):
    global _TABLES
    if _TABLES is None:
        _TABLES = _position_tables()
    return _TABLES[ecmp.HASH_IDS[algo]]


@jit
def _tuple_hash(t, h0, a, b, sp, dp, pr):
    """a, b, sp, dp, pr as int64; 13 independent position-table lookups."""
    return (h0 ^ t[0, a >> 24] ^ t[1, (a >> 16) & 0xFF] ^ t[2, (a >> 8) & 0xFF] ^ t[3, a & 0xFF]
            ^ t[4, b >> 24] ^ t[5, (b >> 16) & 0xFF] ^ t[6, (b >> 8) & 0xFF] ^ t[7, b & 0xFF]
            ^ t[8, sp >> 8] ^ t[9, sp & 0xFF] ^ t[10, dp >> 8] ^ t[11, dp & 0xFF] ^ t[12, pr])


@jit
def _hash_kernel(t, h0, src_ip, dst_ip, sport, dport, proto, out):
    for i in range(src_ip.shape[0]):
        out[i] = _tuple_hash(t, h0, np.int64(src_ip[i]), np.int64(dst_ip[i]), np.int64(sport[i]),
                             np.int64(dport[i]), np.int64(proto[i]))


@jit
def _bin_kernel(t, h0, width, n_paths, mode, src_ip, dst_ip, sport, dport, proto, group, n_groups,
                out_paths, counts):
    # all index arithmetic in int64: a hash < 2**32 times n_paths < 2**16 fits
    store = out_paths.shape[0] > 0
    pow2 = (n_paths & (n_paths - 1)) == 0
    mask = n_paths - 1
    for i in range(src_ip.shape[0]):
        h = np.int64(_tuple_hash(t, h0, np.int64(src_ip[i]), np.int64(dst_ip[i]), np.int64(sport[i]),
                                 np.int64(dport[i]), np.int64(proto[i])))
        if mode == 1:
            p = (h * n_paths) >> width
        elif pow2:
            p = h & mask
        else:
            p = h % n_paths
        g = np.int64(group[i])
        if g < 0 or g >= n_groups:
            return i            # the wrapper reports the bad group
        counts[g * n_paths + p] += 1
        if store:
            out_paths[i] = p
    return -1


def _arrays(flows):
    return (np.ascontiguousarray(flows.src_ip, dtype=np.uint32), np.ascontiguousarray(flows.dst_ip, dtype=np.uint32),
            np.ascontiguousarray(flows.src_port, dtype=np.uint16), np.ascontiguousarray(flows.dst_port, dtype=np.uint16),
            np.ascontiguousarray(flows.proto, dtype=np.uint8))


def hash_flows(flows, algo: str = "crc32") -> np.ndarray:
    """uint32 hash of every flow of a FlowSet (crc16 results are < 2**16)."""
    ecmp.check_algo(algo)
    t, h0 = position_tables(algo)
    out = np.empty(len(flows), dtype=np.uint32)
    _hash_kernel(t, h0, *_arrays(flows), out)
    return out


def bin_flows(flows, n_paths: int, algo: str = "crc32", mode: str = "mod", n_groups: int | None = None,
              groups: np.ndarray | None = None, return_paths: bool = False):
    """counts[group, path] (int64, shape (n_groups, n_paths)); groups default to
    the flows' source leaf.  With return_paths, also the per-flow path (uint16)."""
    width = ecmp.check_algo(algo)
    ecmp.check_paths(n_paths, mode)
    g = np.ascontiguousarray(flows.src_leaf if groups is None else groups, dtype=np.int32)
    if len(g) != len(flows):
        raise ValueError(f"groups has {len(g)} entries for {len(flows)} flows")
    if n_groups is None:
        n_groups = int(g.max()) + 1 if len(g) else 1
    if not isinstance(n_groups, (int, np.integer)) or not 1 <= n_groups <= 2**31 - 1:
        raise ValueError(f"n_groups must be an integer in 1..2**31-1, got {n_groups!r}")
    t, h0 = position_tables(algo)
    counts = np.zeros(n_groups * n_paths, dtype=np.int64)
    paths = np.empty(len(flows) if return_paths else 0, dtype=np.uint16)
    bad = _bin_kernel(t, h0, np.int64(width), np.int64(n_paths), np.int64(_MODE_IDS[mode]), *_arrays(flows), g,
                      np.int64(n_groups), paths, counts)
    if bad >= 0:
        raise ValueError(f"flow {bad} has group {g[bad]} outside 0..{n_groups - 1}")
    counts = counts.reshape(n_groups, n_paths)
    return (counts, paths) if return_paths else counts
