"""FP32_ARRIVAL fold, FP32 rounding conversions and the AUTO classifier, compiled
with numba.  Bit-identical to golden.arith.fp32_arith / golden.arith.formats / golden.arith.auto
and to the C kernel; same function names as golden.arith.kulisch_c (the C kernel's wrapper).

The adds are numba float32 + float32, which LLVM emits as IEEE binary32 `fadd`
(round to nearest even; numba does not enable FTZ/DAZ, and the project's jit
options forbid fastmath).  Every NaN result is mapped to 0x7FC00000.
"""
import numpy as np

from golden.arith.formats import FORMAT_CODE, WIDTH_BITS, bit_array as _bits
from golden.jit import jit
from golden.arith.kulisch_numba import (WIDE_DIGITS, _add_shifted, _bin_shift, _canonical_nan, _infinity, _normalize,
                                        _round_wide, _signed_mant)
from spec.formats import FMT_BF16, FMT_FP16, FMT_FP32, FMT_INT8, INF_BF16, INF_FP32, NAN_FP32

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32}


@jit
def _to_fp32_bits(fmt, b):
    """Exact conversion of a pattern to FP32 bits (NaN -> canonical NaN)."""
    if fmt == FMT_INT8:
        v = (b ^ 0x80) - 0x80
        if v == 0:
            return 0
        s = 0x80000000 if v < 0 else 0
        m = -v if v < 0 else v
        p = 0
        while (m >> (p + 1)) != 0:
            p += 1
        return s | ((p + 127) << 23) | ((m << (23 - p)) & 0x7FFFFF)
    if fmt == FMT_FP16:
        s = (b >> 15) << 31
        e = (b >> 10) & 0x1F
        m = b & 0x3FF
        if e == 0x1F:
            return NAN_FP32 if m != 0 else s | INF_FP32
        if e == 0:
            if m == 0:
                return s
            p = 0                      # subnormal: normalise m * 2^-24
            while (m >> (p + 1)) != 0:
                p += 1
            return s | ((p - 24 + 127) << 23) | ((m << (23 - p)) & 0x7FFFFF)
        return s | ((e + 112) << 23) | (m << 13)
    if fmt == FMT_BF16:
        if (b & INF_BF16) == INF_BF16 and (b & 0x7F) != 0:     # exponent all ones, fraction not 0
            return NAN_FP32
        return b << 16
    if (b & INF_FP32) == INF_FP32 and (b & 0x7FFFFF) != 0:
        return NAN_FP32
    return b


@jit
def _fp32_round_one(fmt, b):
    """Round one FP32 pattern to fmt."""
    if fmt == FMT_FP32:
        return NAN_FP32 if ((b & INF_FP32) == INF_FP32 and (b & 0x7FFFFF) != 0) else b
    e = (b >> 23) & 0xFF
    neg = (b >> 31) != 0
    if e == 0xFF:
        return _canonical_nan(fmt) if (b & 0x7FFFFF) != 0 else _infinity(fmt, neg)
    if (b & 0x7FFFFFFF) == 0:
        return 0x8000 if (neg and fmt != FMT_INT8) else 0
    d = np.zeros(WIDE_DIGITS, np.int64)
    _add_shifted(d, _signed_mant(FMT_FP32, b), _bin_shift(FMT_FP32, e))
    _normalize(d)
    return _round_wide(fmt, d)


@jit
def _convert_to_fp32(fmt, data, out_bits):
    flat_in = data.reshape(-1)
    flat_out = out_bits.reshape(-1)
    for i in range(flat_in.shape[0]):
        flat_out[i] = _to_fp32_bits(fmt, np.int64(flat_in[i]))


@jit
def _arrival_kernel(x, out):
    """x: C x E float32 (rows in admission order); out: E uint32."""
    rows, cols = x.shape
    acc = x[0].copy()
    for r in range(1, rows):
        row = x[r]
        for c in range(cols):
            acc[c] = acc[c] + row[c]             # float32 + float32: one IEEE binary32 add
    bits = acc.view(np.uint32)
    for c in range(cols):
        out[c] = NAN_FP32 if acc[c] != acc[c] else bits[c]


@jit
def _add_kernel(a, b, out):
    for i in range(a.shape[0]):
        r = a[i] + b[i]
        out[i] = r
    bits = out.view(np.uint32)
    for i in range(a.shape[0]):
        if out[i] != out[i]:
            bits[i] = NAN_FP32


@jit
def _to_format_kernel(fmt, bits, out):
    for i in range(bits.shape[0]):
        out[i] = _fp32_round_one(fmt, np.int64(bits[i]))


@jit
def _auto_kernel(bits, codes, out):
    n = bits.shape[0]
    for t0 in range(0, n, 16):
        t1 = min(n, t0 + 16)
        chosen = FMT_FP32
        for fmt in range(FMT_INT8, FMT_FP32):
            fits = True
            for i in range(t0, t1):
                b = np.int64(bits[i])
                if _to_fp32_bits(fmt, _fp32_round_one(fmt, b)) != b:
                    fits = False
                    break
            if fits:
                chosen = fmt
                break
        codes[t0 // 16] = chosen
        for i in range(t0, t1):
            out[i] = _fp32_round_one(chosen, np.int64(bits[i]))


# ---- Python face ---------------------------------------------------------------

def to_fp32(in_fmt, data):
    """Exact conversion of any-format patterns to FP32 patterns (same shape)."""
    a = np.ascontiguousarray(data, dtype=_UINT[WIDTH_BITS[in_fmt]])
    if in_fmt == "fp32":
        a = a.copy()
    out = np.zeros(a.shape, np.uint32)
    _convert_to_fp32(FORMAT_CODE[in_fmt], a, out)
    return out


def fp32_arrival_reduce(in_fmt, data):
    """FP32_ARRIVAL over the rows of a C x E array (C >= 1) -> FP32 patterns uint32 (E,)."""
    a = _bits(in_fmt, data, 2)
    if a.shape[0] == 0:
        raise ValueError("FP32_ARRIVAL needs at least one contribution per element")
    x = a.view(np.float32) if in_fmt == "fp32" else to_fp32(in_fmt, a).view(np.float32)
    out = np.zeros(a.shape[1], np.uint32)
    _arrival_kernel(x, out)
    return out


def fp32_add(a, b):
    """Element-wise binary32 add of uint32 pattern arrays (or scalars)."""
    scalar = np.ndim(a) == 0 and np.ndim(b) == 0
    x = np.atleast_1d(np.asarray(a, np.uint32)).view(np.float32)
    y = np.atleast_1d(np.asarray(b, np.uint32)).view(np.float32)
    out = np.zeros(max(x.size, y.size), np.float32)
    x, y = np.broadcast_arrays(x, y)
    _add_kernel(np.ascontiguousarray(x), np.ascontiguousarray(y), out)
    bits = out.view(np.uint32)
    return int(bits[0]) if scalar else bits


def fp32_to_format(out_fmt, fp32_bits):
    a = np.ascontiguousarray(fp32_bits, np.uint32).reshape(-1)
    out = np.zeros(a.size, np.uint32)
    _to_format_kernel(FORMAT_CODE[out_fmt], a, out)
    return out


def auto_classify(fp32_bits):
    """-> (per-tile format codes uint8, per-element bits in the tile's format uint32)."""
    a = np.ascontiguousarray(fp32_bits, np.uint32).reshape(-1)
    codes = np.zeros(-(-a.size // 16), np.uint8)
    out = np.zeros(a.size, np.uint32)
    _auto_kernel(a, codes, out)
    return codes, out
