"""Python face of the C Kulisch / FP32_ARRIVAL kernel (ckernels/kulisch.h).

Owns dtype, shape and contiguity conversion and argument checks, so the C side
only sees valid buffers.  Same function names as golden.arith.kulisch_numba.
"""
from __future__ import annotations

import numpy as np

from golden.arith.formats import FORMAT_CODE, accumulator_state, bit_array as _bits
from spec.formats import KULISCH_WIDTH_DEFAULT

try:
    from ckernels._kulisch import ffi, lib
except ImportError as e:  # pragma: no cover - only on an unbuilt tree
    raise ImportError("the C Kulisch kernel is not built; run `pip install -e .` "
                      "(or python ckernels/build_kulisch.py)") from e

LIMBS = lib.KULISCH_LIMBS
LANES = lib.KULISCH_LANES              # columns per block
CHUNK_ROWS = lib.KULISCH_CHUNK_ROWS    # rows per chunk
_ERRORS = {-1: "unknown number format", -2: "Kulisch width must be 280 or 320", -3: "bad row count",
           -4: "out of memory"}


def _ptr(ctype, arr):
    return ffi.cast(ctype, ffi.from_buffer(arr))


def _check(rc):
    if rc:
        raise ValueError(_ERRORS.get(rc, f"C kernel error {rc}"))


def kulisch_reduce(in_fmt, data, width=KULISCH_WIDTH_DEFAULT):
    """Reduce a C x E array over rows -> (limbs uint64 (E, 5), wraps int64 (E,), flags uint8 (E,))."""
    a = _bits(in_fmt, data, 2)
    rows, cols = a.shape
    limbs = np.empty((cols, LIMBS), np.uint64)     # every entry is written
    wraps = np.empty(cols, np.int64)
    flags = np.empty(cols, np.uint8)
    _check(lib.kulisch_reduce(FORMAT_CODE[in_fmt], _ptr("void *", a), rows, cols, width,
                              _ptr("uint64_t *", limbs), _ptr("int64_t *", wraps), _ptr("uint8_t *", flags)))
    return limbs, wraps, flags


def kulisch_reduce_round(in_fmt, out_fmt, data, width=KULISCH_WIDTH_DEFAULT):
    """The reduction rounded once to out_fmt -> (bits uint32 (E,), wraps int64 (E,),
    flags uint8 (E,)); the same as kulisch_reduce then kulisch_round."""
    if out_fmt not in FORMAT_CODE:
        raise ValueError(f"unknown number format {out_fmt!r}")
    a = _bits(in_fmt, data, 2)
    rows, cols = a.shape
    bits = np.empty(cols, np.uint32)
    wraps = np.empty(cols, np.int64)
    flags = np.empty(cols, np.uint8)
    _check(lib.kulisch_reduce_round(FORMAT_CODE[in_fmt], FORMAT_CODE[out_fmt], _ptr("void *", a), rows, cols, width,
                                    _ptr("uint32_t *", bits), _ptr("int64_t *", wraps), _ptr("uint8_t *", flags)))
    return bits, wraps, flags


def kulisch_accumulate(in_fmt, seq, width=KULISCH_WIDTH_DEFAULT, state=None):
    """Accumulate one sequence into one state; `state` = (limbs, wraps, flags)
    to continue a previous sum.  Returns (limbs uint64 (5,), wraps, flags)."""
    a = _bits(in_fmt, seq, 1)
    limbs, wraps, flags = accumulator_state(state, LIMBS)
    w = ffi.new("int64_t *", wraps)
    f = ffi.new("uint8_t *", flags)
    _check(lib.kulisch_accumulate(FORMAT_CODE[in_fmt], _ptr("void *", a), a.size, width,
                                  _ptr("uint64_t *", limbs), w, f))
    return limbs, int(w[0]), int(f[0])


def kulisch_round(out_fmt, width, limbs, wraps, flags):
    """Round states (limbs (n, 5), wraps (n,), flags (n,)) once -> uint32 patterns (n,)."""
    limbs = np.ascontiguousarray(limbs, np.uint64).reshape(-1, LIMBS)
    n = limbs.shape[0]
    wraps = np.ascontiguousarray(wraps, np.int64).reshape(n)
    flags = np.ascontiguousarray(flags, np.uint8).reshape(n)
    out = np.zeros(n, np.uint32)
    _check(lib.kulisch_round(FORMAT_CODE[out_fmt], width, _ptr("uint64_t *", limbs), _ptr("int64_t *", wraps),
                             _ptr("uint8_t *", flags), n, _ptr("uint32_t *", out)))
    return out


def chunk_levels(in_fmt, data):
    """Which path kulisch_reduce takes for one chunk (a rows x cols array of a float
    format, rows <= CHUNK_ROWS, cols <= LANES): float64 levels 1..3, or 0 for the
    integer path.  For tests of the fast path's boundaries."""
    a = _bits(in_fmt, data, 2)
    rows, cols = a.shape
    rc = lib.kulisch_chunk_levels(FORMAT_CODE[in_fmt], _ptr("void *", a), rows, cols)
    if rc < 0:
        raise ValueError(f"a chunk is a float format, 1..{CHUNK_ROWS} rows by 1..{LANES} columns")
    return rc


def fp32_arrival_reduce(in_fmt, data):
    """FP32_ARRIVAL over the rows of a C x E array (C >= 1) -> FP32 patterns uint32 (E,)."""
    a = _bits(in_fmt, data, 2)
    rows, cols = a.shape
    if rows == 0:
        raise ValueError("FP32_ARRIVAL needs at least one contribution per element")
    out = np.zeros(cols, np.uint32)
    _check(lib.fp32_arrival_reduce(FORMAT_CODE[in_fmt], _ptr("void *", a), rows, cols, _ptr("uint32_t *", out)))
    return out


def fp32_add(a, b):
    return int(lib.fp32_add_bits(a, b))


def fp32_to_format(out_fmt, fp32_bits):
    a = np.ascontiguousarray(fp32_bits, np.uint32).reshape(-1)
    out = np.zeros(a.size, np.uint32)
    _check(lib.fp32_to_format(FORMAT_CODE[out_fmt], _ptr("uint32_t *", a), a.size, _ptr("uint32_t *", out)))
    return out


def auto_classify(fp32_bits):
    """-> (per-tile format codes uint8, per-element bits in the tile's format uint32)."""
    a = np.ascontiguousarray(fp32_bits, np.uint32).reshape(-1)
    codes = np.zeros(-(-a.size // 16), np.uint8)
    out = np.zeros(a.size, np.uint32)
    _check(lib.auto_classify(_ptr("uint32_t *", a), a.size, _ptr("uint8_t *", codes), _ptr("uint32_t *", out)))
    return codes, out


def sum_f32_plain(x):
    """Plain sequential float32 sum (benchmark baseline)."""
    a = np.ascontiguousarray(x, np.float32).reshape(-1)
    return float(lib.sum_f32_plain(_ptr("float *", a), a.size))
