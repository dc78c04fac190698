"""ECMP hashing and binning in numba, bit-identical to ``golden.fabric.ecmp``.

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

Byte planes and GF(2) affine maps (x86-64 with AVX-512BW and GFNI): the
same linear map, 64 flows at a time.  The 13 bytes of 64 flows are cut into
13 planes of 64 bytes; output byte j of the hash is XOR_p A_pj * plane_p with
A_pj the 8x8 bit matrix of T_p's contribution to byte j -- one GF2P8AFFINEQB
per position and output byte, emitted as LLVM vector IR through an intrinsic
(``_hash_block64``).  The matrices come from the position tables, so both paths
compute one function; other CPUs use the tables.

Binning counts into HIST_COPIES interleaved histograms (flow i into copy
i % 4), so flows landing on one bin back to back do not wait on each other's
increments; the copies are summed at the end.

The byte-string functions (``crc32_bytes`` etc.) are the classic table-driven
forms for any length; they back the known-answer tests.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

from golden.fabric import ecmp
from golden.jit import jit

BLOCK = 64                  # flows per byte-plane block
HIST_COPIES = 4
HIST_COPY_LIMIT = 65536     # n_groups * n_paths up to this: interleaved copies

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


# --- byte planes and GF2P8AFFINEQB (AVX-512BW + GFNI) ----------------------------------
def _host_has_gfni() -> bool:
    try:
        from numba.core.codegen import get_host_cpu_features
        features = (config.CPU_FEATURES or get_host_cpu_features()).split(",")
    except Exception:      # pragma: no cover - an LLVM without host introspection
        return False
    return all(f in features for f in ("+avx512f", "+avx512bw", "+gfni"))


HAVE_GFNI = _host_has_gfni()
_use_gfni = HAVE_GFNI


def use_gfni(enable: bool) -> bool:
    """Switch the GFNI kernel on or off (where supported); returns the previous setting."""
    global _use_gfni
    was, _use_gfni = _use_gfni, bool(enable) and HAVE_GFNI
    return was


def _hash_block64_intrinsic(nbytes):
    """An intrinsic hashing 64 flows into out[0:64] for a hash of nbytes bytes."""
    @intrinsic
    def hash_block64(typingctx, src_ip, dst_ip, sport, dport, proto, off, mats, h0, out):
        sig = types.void(src_ip, dst_ip, sport, dport, proto, off, mats, h0, out)
        return sig, lambda context, builder, signature, args: _hash_block64_ir(nbytes, context, builder, signature, args)
    return hash_block64


def _hash_block64_ir(nbytes, context, builder, signature, args):
    """out[0:64] = hashes of flows [off, off + 64): the 13 byte planes cut from the
    fields in vector registers, 13 GF2P8AFFINEQB per output byte (matrices
    mats[13, 4], uint64), the bytes joined into words.  Emitted as LLVM vector
    IR, so it needs no auto-vectoriser and no scratch memory."""
    i8, i16, i32, i64 = (ir.IntType(w) for w in (8, 16, 32, 64))
    v8 = ir.VectorType(i8, 64)
    q8 = ir.VectorType(i64, 8)

    def data(k):
        return context.make_array(signature.args[k])(context, builder, args[k]).data

    def load(k, elem):
        ptr = builder.gep(data(k), [args[5]])
        return builder.load(builder.bitcast(ptr, ir.VectorType(elem, 64).as_pointer()), align=1)

    def splat(vt, value):
        return ir.Constant(vt, [value] * vt.count)

    planes = []
    for k in (0, 1):                                  # addresses: big-endian bytes
        w = load(k, i32)
        for shift in (24, 16, 8, 0):
            planes.append(builder.trunc(builder.lshr(w, splat(w.type, shift)), v8))
    for k in (2, 3):                                  # ports
        w = load(k, i16)
        for shift in (8, 0):
            planes.append(builder.trunc(builder.lshr(w, splat(w.type, shift)), v8))
    planes.append(load(4, i8))
    affine = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v8, [v8, v8, i8]),
                                            "llvm.x86.vgf2p8affineqb.512")
    mats_ptr = data(6)
    h0 = builder.zext(args[7], i64) if args[7].type.width < 64 else args[7]
    word = ir.Constant(ir.VectorType(i32, 64), [0] * 64)
    for j in range(nbytes):
        acc = builder.trunc(builder.lshr(h0, ir.Constant(i64, 8 * j)), i8)
        acc = builder.insert_element(ir.Constant(v8, ir.Undefined), acc, ir.Constant(i32, 0))
        acc = builder.shuffle_vector(acc, ir.Constant(v8, ir.Undefined), ir.Constant(ir.VectorType(i32, 64), [0] * 64))
        for p in range(13):
            m = builder.load(builder.gep(mats_ptr, [ir.Constant(i64, 4 * p + j)]))
            mv = builder.insert_element(ir.Constant(q8, ir.Undefined), m, ir.Constant(i32, 0))
            mv = builder.shuffle_vector(mv, ir.Constant(q8, ir.Undefined), ir.Constant(ir.VectorType(i32, 8), [0] * 8))
            acc = builder.xor(acc, builder.call(affine, [planes[p], builder.bitcast(mv, v8), ir.Constant(i8, 0)]))
        wide = builder.zext(acc, ir.VectorType(i32, 64))
        word = builder.or_(word, builder.shl(wide, splat(ir.VectorType(i32, 64), 8 * j)))
    out_ptr = builder.bitcast(data(8), ir.VectorType(i32, 64).as_pointer())
    builder.store(word, out_ptr, align=1)
    return context.get_dummy_value()


_hash_block64_2 = _hash_block64_intrinsic(2)     # CRC-16
_hash_block64_4 = _hash_block64_intrinsic(4)


def _affine_matrices(t):
    """A[p, j]: row i (output bit i of byte j) in matrix byte 7 - i, bit k set when
    input bit k of byte p flips that output bit (t holds the linear parts)."""
    mats = np.zeros((ecmp.TUPLE_BYTES, 4), np.uint64)
    for p in range(ecmp.TUPLE_BYTES):
        for j in range(4):
            m = 0
            for i in range(8):
                for k in range(8):
                    if (int(t[p, 1 << k]) >> (8 * j + i)) & 1:
                        m |= 1 << (8 * (7 - i) + k)
            mats[p, j] = m
    return mats


_MATRICES = {}


def affine_matrices(algo: str):
    if algo not in _MATRICES:
        _MATRICES[algo] = _affine_matrices(position_tables(algo)[0])
    return _MATRICES[algo]


@jit
def _gfni_kernel(mats, t, h0, wide, binning, width, n_paths, mode, src_ip, dst_ip, sport, dport, proto, group,
                 n_groups, out_hash, out_paths, counts):
    """Hashes by byte planes and affine maps, BLOCK flows at a time (the tail by
    the tables); wide: a 32-bit hash (else 16-bit: two output bytes).  binning False: hashes into out_hash.  binning True: paths and
    counts through interleaved histogram copies (n_groups * n_paths <=
    HIST_COPY_LIMIT); returns the first flow whose group is out of range, or -1
    (counts then unchanged).  One function, no calls per block: a call with
    array arguments costs reference-count updates."""
    n = src_ip.shape[0]
    store = out_paths.shape[0] > 0
    pow2 = (n_paths & (n_paths - 1)) == 0
    mask = n_paths - 1
    cells = n_groups * n_paths if binning else 0
    stride = cells + 16                      # copies not a multiple of 4 KiB apart
    hist = np.zeros(HIST_COPIES * stride, np.uint32)
    h = np.zeros(BLOCK, np.uint32)
    cell = np.zeros(BLOCK, np.int64)
    bad = False
    for i0 in range(0, n, BLOCK):
        m = min(BLOCK, n - i0)
        if m == BLOCK and wide:
            _hash_block64_4(src_ip, dst_ip, sport, dport, proto, i0, mats, h0, h)
        elif m == BLOCK:
            _hash_block64_2(src_ip, dst_ip, sport, dport, proto, i0, mats, h0, h)
        else:
            for i in range(m):
                k = i0 + i
                h[i] = _tuple_hash(t, h0, np.int64(src_ip[k]), np.int64(dst_ip[k]), np.int64(sport[k]),
                                   np.int64(dport[k]), np.int64(proto[k]))
        # through slices indexed from 0: an index i0 + i would be checked for wrap-around
        # per element, and LLVM would turn these loops into scatters and gathers
        if not binning:
            out = out_hash[i0:i0 + m]
            for i in range(m):
                out[i] = h[i]
            continue
        if mode == 1:                        # one loop per mode: each vectorises
            for i in range(m):
                cell[i] = (np.int64(h[i]) * n_paths) >> width
        elif pow2:
            for i in range(m):
                cell[i] = np.int64(h[i]) & mask
        else:
            for i in range(m):
                cell[i] = np.int64(h[i]) % n_paths
        if store:
            out = out_paths[i0:i0 + m]
            for i in range(m):
                out[i] = cell[i]
        grp = group[i0:i0 + m]
        for i in range(m):
            g = np.int64(grp[i])
            oob = g < 0 or g >= n_groups
            bad |= oob
            cell[i] += (0 if oob else g) * n_paths + (i % HIST_COPIES) * stride   # flow i -> copy i % 4
        for i in range(m):
            hist[cell[i]] += 1
    if bad:
        for i in range(n):
            g = group[i]
            if g < 0 or g >= n_groups:
                return i
    for c in range(cells):
        s = np.int64(0)
        for k in range(HIST_COPIES):
            s += hist[k * stride + c]
        counts[c] += s
    return -1


_NO_GROUPS = np.zeros(0, np.int32)
_NO_PATHS = np.zeros(0, np.uint16)
_NO_COUNTS = np.zeros(0, np.int64)
_NO_HASHES = np.zeros(0, np.uint32)


def _arrays(flows):
    return (np.ascontiguousarray(flows.src_ip, dtype=np.uint32), np.ascontiguousarray(flows.dst_ip, dtype=np.uint32),
            np.ascontiguousarray(flows.src_port, dtype=np.uint16), np.ascontiguousarray(flows.dst_port, dtype=np.uint16),
            np.ascontiguousarray(flows.proto, dtype=np.uint8))


def hash_flows(flows, algo: str = "crc32") -> np.ndarray:
    """uint32 hash of every flow of a FlowSet (crc16 results are < 2**16)."""
    ecmp.check_algo(algo)
    t, h0 = position_tables(algo)
    out = np.empty(len(flows), dtype=np.uint32)
    if _use_gfni:
        _gfni_kernel(affine_matrices(algo), t, h0, algo != "crc16", False, 32, 1, 0, *_arrays(flows),
                     _NO_GROUPS, 1, out, _NO_PATHS, _NO_COUNTS)
    else:
        _hash_kernel(t, h0, *_arrays(flows), out)
    return out


def bin_flows(flows, n_paths: int, algo: str = "crc32", mode: str = "mod", n_groups: int | None = None,
              groups: np.ndarray | None = None, return_paths: bool = False):
    """counts[group, path] (int64, shape (n_groups, n_paths)); groups default to
    the flows' source leaf.  With return_paths, also the per-flow path (uint16)."""
    width = ecmp.check_algo(algo)
    ecmp.check_paths(n_paths, mode)
    g, n_groups = ecmp.check_groups(flows, groups, n_groups)
    t, h0 = position_tables(algo)
    counts = np.zeros(n_groups * n_paths, dtype=np.int64)
    paths = np.empty(len(flows) if return_paths else 0, dtype=np.uint16)
    if _use_gfni and n_groups * n_paths <= HIST_COPY_LIMIT:
        bad = _gfni_kernel(affine_matrices(algo), t, h0, algo != "crc16", True, np.int64(width),
                           np.int64(n_paths), np.int64(_MODE_IDS[mode]), *_arrays(flows), g, np.int64(n_groups),
                           _NO_HASHES, paths, counts)
    else:
        bad = _bin_kernel(t, h0, np.int64(width), np.int64(n_paths), np.int64(_MODE_IDS[mode]), *_arrays(flows), g,
                          np.int64(n_groups), paths, counts)
    if bad >= 0:
        raise ValueError(f"flow {bad} has group {g[bad]} outside 0..{n_groups - 1}")
    counts = counts.reshape(n_groups, n_paths)
    return (counts, paths) if return_paths else counts
