"""Python face of the C ECMP kernel (ckernels/ecmp.h, built as ckernels._ecmp): owns dtype/contiguity
conversion and argument checks, so the C side only ever sees valid input.

Same API as ``golden.fabric.ecmp_numba``: ``hash_flows``, ``bin_flows``, and the
byte-string hashes ``crc32``, ``crc16_ccitt``, ``toeplitz``.
"""
from __future__ import annotations

import numpy as np

from golden.fabric import ecmp

try:
    from ckernels._ecmp import ffi, lib
except ImportError as e:  # pragma: no cover - exercised only on an unbuilt tree
    raise ImportError("the C ECMP kernel is not built; run `pip install -e .` "
                      "(or python ckernels/build_ecmp.py)") from e

_MODE_IDS = {"mod": 0, "mulhi": 1}


def _ptr(ctype: str, arr: np.ndarray):
    return ffi.cast(ctype, ffi.from_buffer(arr))


def crc32(data: bytes) -> int:
    return int(lib.ecmp_crc32_bytes(data, len(data)))


def crc16_ccitt(data: bytes) -> int:
    return int(lib.ecmp_crc16_bytes(data, len(data)))


def toeplitz(data: bytes, key: bytes = ecmp.MS_RSS_KEY) -> int:
    ok = ffi.new("int *")
    h = lib.ecmp_toeplitz_bytes(key, len(key), data, len(data), ok)
    if not ok[0]:
        raise ValueError(f"a Toeplitz key for {len(data)} input bytes needs at least {len(data) + 4} bytes")
    return int(h)


def gfni_supported() -> bool:
    """Whether this CPU runs the byte-plane GFNI kernel (AVX-512BW + GFNI)."""
    return bool(lib.ecmp_gfni_supported())


def use_gfni(enable: bool) -> bool:
    """Switch the GFNI kernel on or off (where supported); returns the previous setting."""
    return bool(lib.ecmp_use_gfni(int(bool(enable))))


def _arrays(flows):
    return (np.ascontiguousarray(flows.src_ip, dtype=np.uint32), np.ascontiguousarray(flows.dst_ip, dtype=np.uint32),
            np.ascontiguousarray(flows.src_port, dtype=np.uint16), np.ascontiguousarray(flows.dst_port, dtype=np.uint16),
            np.ascontiguousarray(flows.proto, dtype=np.uint8))


def _ptrs(arrs):
    a, b, sp, dp, pr = arrs
    return (_ptr("uint32_t *", a), _ptr("uint32_t *", b), _ptr("uint16_t *", sp),
            _ptr("uint16_t *", dp), _ptr("uint8_t *", pr))


def hash_flows(flows, algo: str = "crc32") -> np.ndarray:
    """uint32 hash of every flow (crc16 results are < 2**16)."""
    ecmp.check_algo(algo)
    arrs = _arrays(flows)
    out = np.empty(len(flows), dtype=np.uint32)
    rc = lib.ecmp_hash_tuples(ecmp.HASH_IDS[algo], *_ptrs(arrs), len(flows), _ptr("uint32_t *", out))
    assert rc == 0, rc
    return out


def crc32_flows_slice8(flows) -> np.ndarray:
    """CRC-32 of every flow by the classic slicing-by-8 kernel (for comparison)."""
    arrs = _arrays(flows)
    out = np.empty(len(flows), dtype=np.uint32)
    lib.ecmp_crc32_tuples_slice8(*_ptrs(arrs), len(flows), _ptr("uint32_t *", out))
    return out


def bin_flows(flows, n_paths: int, algo: str = "crc32", mode: str = "mod", n_groups: int | None = None,
              groups: np.ndarray | None = None, return_paths: bool = False):
    """counts[group, path] (int64, (n_groups, n_paths)); groups default to the
    flows' source leaf.  With return_paths, also the per-flow path (uint16)."""
    ecmp.check_algo(algo)
    ecmp.check_paths(n_paths, mode)
    g, n_groups = ecmp.check_groups(flows, groups, n_groups)
    counts = np.zeros(n_groups * n_paths, dtype=np.uint64)
    paths = np.empty(len(flows), dtype=np.uint16) if return_paths else None
    rc = lib.ecmp_bin(ecmp.HASH_IDS[algo], _MODE_IDS[mode], n_paths, *_ptrs(_arrays(flows)),
                      _ptr("int32_t *", g), n_groups, len(flows),
                      _ptr("uint16_t *", paths) if return_paths else ffi.NULL, _ptr("uint64_t *", counts))
    if rc == -2:            # the kernel checks every group before counting anything
        bad = int(np.flatnonzero((g < 0) | (g >= n_groups))[0])
        raise ValueError(f"flow {bad} has group {g[bad]} outside 0..{n_groups - 1}")
    if rc != 0:
        raise RuntimeError(f"ecmp_bin returned {rc}")
    counts = counts.astype(np.int64).reshape(n_groups, n_paths)
    return (counts, paths) if return_paths else counts
