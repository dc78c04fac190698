"""Kulisch exact accumulation and rounding, compiled with numba.

Same results as golden.kulisch (the pure-Python reference) and the C kernel
(ckernels/kulisch.h), bit for bit; same function names as ckernels.kulisch.

Internals.  An exact sum is held as WIDE_DIGITS signed 32-bit digits in int64
with deferred carries (448 bits, far above any reachable sum); `_normalize`
propagates the carries.  Two accumulation strategies:
- one long sequence: one int64 bin per exponent field (x BANKS copies used
  round-robin so equal exponents do not serialise on one memory word); bins
  are shifted into the wide sum at the end (or every FLUSH_TERMS terms);
- a C x E reduction: per element, the whole shifted significand (< 2^55) is
  added into the 32-bit digit holding its LSB (one add per term), folded into
  carry-deferred digits every FOLD_ROWS rows.
Either way the internal sum is the true sum; the exported W-bit state and the
net wrap count are derived from it (true = state + wraps * 2^W).
"""
import numpy as np

from .formats import FORMAT_CODE, WIDTH_BITS
from .jit import jit

WIDE_DIGITS = 14
ACC_DIGITS = 10
LIMBS = 5
NBINS = 256
BANKS = 4
FOLD_ROWS = 255
FLUSH_TERMS = 1 << 30
MAX_ROWS = 1 << 30
COL_BLOCK = 256           # columns per cache block in the C x E reduction
NSE = 512                 # sign+exponent table entries
SPECIAL_MARK = 1 << 40    # marks an inf/NaN exponent in the hidden-bit table

F_INT8, F_FP16, F_BF16, F_FP32 = 0, 1, 2, 3
FLAG_NAN, FLAG_PINF, FLAG_NINF, FLAG_OVF = 1, 2, 4, 8
DIGIT_MASK = 0xFFFFFFFF

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32}

# (exponent shift, exponent mask, fraction mask, sign shift, fraction bits)
_LAYOUT = np.array([[0, 0, 0, 7, 0], [10, 0x1F, 0x3FF, 15, 10], [7, 0xFF, 0x7F, 15, 7], [23, 0xFF, 0x7FFFFF, 31, 23]],
                   np.int64)


@jit
def _bin_shift(fmt, e):
    ee = e if e > 0 else 1
    if fmt == F_INT8:
        return 149
    if fmt == F_FP16:
        return ee + 124
    if fmt == F_BF16:
        return ee + 15
    return ee - 1


@jit
def _is_special_bin(fmt, e):
    if fmt == F_INT8:
        return False
    if fmt == F_FP16:
        return e == 0x1F
    return e == 0xFF


@jit
def _special_flag(fmt, b):
    """Flag bit of an inf/NaN pattern."""
    frac = b & _LAYOUT[fmt, 2]
    neg = (b >> _LAYOUT[fmt, 3]) & 1
    if frac != 0:
        return FLAG_NAN
    return FLAG_NINF if neg else FLAG_PINF


@jit
def _signed_mant(fmt, b):
    if fmt == F_INT8:
        return (b ^ 0x80) - 0x80
    e = (b >> _LAYOUT[fmt, 0]) & _LAYOUT[fmt, 1]
    m = b & _LAYOUT[fmt, 2]
    if e != 0:
        m |= 1 << _LAYOUT[fmt, 4]
    return -m if (b >> _LAYOUT[fmt, 3]) & 1 else m


# ---- wide integers ------------------------------------------------------------

@jit
def _add_shifted(d, v, sh):
    """d += v * 2^sh (|v| < 2^63)."""
    k = sh >> 5
    o = sh & 31
    lo = v & DIGIT_MASK
    hi = v >> 32
    t = lo << o
    u = hi * (1 << o)
    d[k] += t & DIGIT_MASK
    d[k + 1] += (t >> 32) + (u & DIGIT_MASK)
    d[k + 2] += u >> 32


@jit
def _normalize(d):
    for i in range(WIDE_DIGITS - 1):
        c = d[i] >> 32
        d[i] &= DIGIT_MASK
        d[i + 1] += c


@jit
def _digit_bit(d, pos):
    return (d[pos >> 5] >> (pos & 31)) & 1


@jit
def _bits_at(d, pos, count):
    """count (<= 31) bits of the normalised value d starting at bit pos."""
    i = pos >> 5
    o = pos & 31
    v = d[i] >> o
    if o != 0 and i + 1 < WIDE_DIGITS:
        v |= (d[i + 1] & ((1 << o) - 1)) << (32 - o)
    return v & ((1 << count) - 1)


@jit
def _any_below(d, pos):
    i = pos >> 5
    for j in range(i):
        if d[j] != 0:
            return True
    o = pos & 31
    return o != 0 and (d[i] & ((1 << o) - 1)) != 0


@jit
def _add_state(d, limbs, wraps, width):
    """d += the W-bit two's-complement state in limbs + wraps * 2^W."""
    for i in range(0, width, 32):
        limb = limbs[i >> 6]
        dig = np.int64((limb >> np.uint64(i & 63)) & np.uint64(DIGIT_MASK))
        if width - i < 32:
            dig &= (1 << (width - i)) - 1
        d[i >> 5] += dig
    top = width - 1
    if (limbs[top >> 6] >> np.uint64(top & 63)) & np.uint64(1):
        _add_shifted(d, -1, width)
    _add_shifted(d, wraps, width)


@jit
def _export(d, width, limbs_out):
    """Normalised true sum -> limbs_out[5] (sign-extended W-bit state); returns wraps."""
    for i in range(LIMBS):
        limbs_out[i] = np.uint64(d[2 * i]) | (np.uint64(d[2 * i + 1]) << np.uint64(32))
    if width < 64 * LIMBS:
        top = width - 64 * (LIMBS - 1)
        mask = (np.uint64(1) << np.uint64(top)) - np.uint64(1)
        x = limbs_out[LIMBS - 1] & mask
        if (x >> np.uint64(top - 1)) & np.uint64(1):
            x |= ~mask
        limbs_out[LIMBS - 1] = x
    q = width >> 5
    hi = np.int64(0)
    for i in range(WIDE_DIGITS - 1, q - 1, -1):
        hi = hi * (1 << 32) + d[i]
    return (hi >> (width & 31)) + _digit_bit(d, width - 1)


# ---- rounding -----------------------------------------------------------------

@jit
def _canonical_nan(fmt):
    if fmt == F_INT8:
        return 0x80
    if fmt == F_FP16:
        return 0x7E00
    if fmt == F_BF16:
        return 0x7FC0
    return 0x7FC00000


@jit
def _infinity(fmt, neg):
    if fmt == F_INT8:
        return 0x80 if neg else 0x7F
    if fmt == F_FP16:
        return 0xFC00 if neg else 0x7C00
    if fmt == F_BF16:
        return 0xFF80 if neg else 0x7F80
    return 0xFF800000 if neg else 0x7F800000


@jit
def _round_wide(fmt, d):
    """Round a normalised exact value (units of 2^-149, digits d) to fmt.
    d is overwritten with the magnitude."""
    neg = d[WIDE_DIGITS - 1] < 0
    if neg:
        for i in range(WIDE_DIGITS):
            d[i] = -d[i]
        _normalize(d)
    p = -1
    for i in range(WIDE_DIGITS - 1, -1, -1):
        if d[i] != 0:
            x = d[i]
            b = 0
            while x > 1:
                x >>= 1
                b += 1
            p = 32 * i + b
            break
    if p < 0:
        return 0
    if fmt == F_INT8:
        if p >= 149 + 8:
            return 0x80 if neg else 0x7F
        n = _bits_at(d, 149, 9)
        if _digit_bit(d, 148) and (_any_below(d, 148) or (n & 1)):
            n += 1
        v = -n if neg else n
        v = min(127, max(-128, v))
        return v & 0xFF
    mbits = _LAYOUT[fmt, 4]
    emin = -14 if fmt == F_FP16 else -126
    emax = 15 if fmt == F_FP16 else 127
    sign = (1 << _LAYOUT[fmt, 3]) if neg else 0
    e = p - 149
    if e > emax:
        return sign | _infinity(fmt, False)
    if e < emin:
        e = emin
    sh = e - mbits + 149
    n = _bits_at(d, sh, mbits + 1)
    if sh > 0 and _digit_bit(d, sh - 1) and ((sh > 1 and _any_below(d, sh - 1)) or (n & 1)):
        n += 1
    if n >> (mbits + 1):
        n >>= 1
        e += 1
    if e > emax:
        return sign | _infinity(fmt, False)
    if n >> mbits:
        return sign | ((e + emax) << mbits) | (n & ((1 << mbits) - 1))
    return sign | n


@jit
def _special_result(fmt, flags):
    """Result bits for the specials, or -1 when there are none."""
    if (flags & FLAG_NAN) or ((flags & FLAG_PINF) and (flags & FLAG_NINF)):
        return _canonical_nan(fmt)
    if flags & FLAG_PINF:
        return _infinity(fmt, False)
    if flags & FLAG_NINF:
        return _infinity(fmt, True)
    return -1


# ---- kernels --------------------------------------------------------------------

@jit
def _make_tables(fmt):
    """Hot-loop tables indexed by sign and exponent together (pattern >> fraction
    bits): hidden bit (SPECIAL_MARK for inf/NaN), signed scale +/-2^(LSB offset
    in its 32-bit digit) -- 0 for inf/NaN -- and the digit's row offset in acc."""
    mbits = _LAYOUT[fmt, 4]
    ebits = 5 if fmt == F_FP16 else 8
    hidden = np.zeros(NSE, np.int64)
    scale = np.zeros(NSE, np.int64)
    offset = np.zeros(NSE, np.uint64)
    for se in range(NSE):
        e = se & ((1 << ebits) - 1)
        neg = (se >> ebits) & 1
        sh = _bin_shift(fmt, e)
        sp = _is_special_bin(fmt, e)
        hidden[se] = SPECIAL_MARK if sp else ((1 << mbits) if e != 0 else 0)
        scale[se] = 0 if sp else (-1 if neg else 1) * (1 << (sh & 31))
        offset[se] = (sh >> 5) * COL_BLOCK
    return hidden, scale, offset


@jit
def _reduce_kernel(fmt, data, width, limbs, wraps, flags):
    rows, cols = data.shape
    hidden, scale, offset = _make_tables(fmt)
    frac_bits = np.uint64(_LAYOUT[fmt, 4])
    frac_mask = np.uint64(_LAYOUT[fmt, 2])
    acc = np.zeros(ACC_DIGITS * COL_BLOCK, np.int64)
    hold = np.zeros((COL_BLOCK, ACC_DIGITS), np.int64)
    d = np.zeros(WIDE_DIGITS, np.int64)
    folds = rows > FOLD_ROWS          # else export straight from acc (|digit| < 2^63)
    for c0 in range(0, cols, COL_BLOCK):
        nc = min(COL_BLOCK, cols - c0)
        if folds:
            hold[:, :] = 0
        for r0 in range(0, rows, FOLD_ROWS):
            r1 = min(rows, r0 + FOLD_ROWS)
            acc[:] = 0
            for r in range(r0, r1):
                row = data[r, c0:c0 + nc]
                if fmt == F_INT8:
                    for c in range(nc):
                        acc[4 * COL_BLOCK + c] += (np.int64(row[c]) ^ 0x80) - 0x80
                    continue
                any_special = 0
                for c in range(nc):
                    b = np.uint64(row[c])
                    se = b >> frac_bits
                    h = hidden[se]
                    any_special |= h
                    acc[offset[se] + np.uint64(c)] += (np.int64(b & frac_mask) | h) * scale[se]
                if any_special & SPECIAL_MARK:
                    for c in range(nc):
                        b = np.int64(row[c])
                        if hidden[b >> frac_bits] & SPECIAL_MARK:
                            flags[c0 + c] |= _special_flag(fmt, b)
            if fmt == F_INT8:
                for c in range(nc):
                    acc[4 * COL_BLOCK + c] *= 1 << (149 & 31)
            if folds:
                for c in range(nc):
                    for i in range(ACC_DIGITS - 1):
                        v = acc[i * COL_BLOCK + c]
                        hold[c, i] += v & DIGIT_MASK
                        hold[c, i + 1] += v >> 32
        for c in range(nc):
            d[:] = 0
            for i in range(ACC_DIGITS):
                d[i] = hold[c, i] if folds else acc[i * COL_BLOCK + c]
            _normalize(d)
            w = _export(d, width, limbs[c0 + c])
            wraps[c0 + c] = w
            if w != 0:
                flags[c0 + c] |= FLAG_OVF


@jit
def _accumulate_kernel(fmt, seq, width, limbs, wraps_in, flags_in):
    d = np.zeros(WIDE_DIGITS, np.int64)
    _add_state(d, limbs, wraps_in, width)
    fl = flags_in & (FLAG_NAN | FLAG_PINF | FLAG_NINF)
    n = seq.shape[0]
    bins = np.zeros((BANKS, NBINS), np.int64)
    exp_shift = _LAYOUT[fmt, 0]
    exp_mask = _LAYOUT[fmt, 1]
    frac_mask = _LAYOUT[fmt, 2]
    sign_shift = _LAYOUT[fmt, 3]
    hid = np.int64(1) << _LAYOUT[fmt, 4]
    for i0 in range(0, n, FLUSH_TERMS):
        i1 = min(n, i0 + FLUSH_TERMS)
        bins[:, :] = 0
        if fmt == F_INT8:
            s = np.int64(0)
            for i in range(i0, i1):
                s += (np.int64(seq[i]) ^ 0x80) - 0x80
            bins[0, 0] = s
        else:
            i = i0
            while i + BANKS <= i1:
                for k in range(BANKS):
                    b = np.int64(seq[i + k])
                    e = (b >> exp_shift) & exp_mask
                    if e == exp_mask:
                        fl |= _special_flag(fmt, b)
                    else:
                        m = (b & frac_mask) | (hid if e != 0 else 0)
                        sm = -(b >> sign_shift)
                        bins[k, e] += (m ^ sm) - sm
                i += BANKS
            while i < i1:
                b = np.int64(seq[i])
                e = (b >> exp_shift) & exp_mask
                if e == exp_mask:
                    fl |= _special_flag(fmt, b)
                else:
                    m = (b & frac_mask) | (hid if e != 0 else 0)
                    sm = -(b >> sign_shift)
                    bins[0, e] += (m ^ sm) - sm
                i += 1
        for e in range(NBINS):
            s = np.int64(0)
            for k in range(BANKS):
                s += bins[k, e]
            if s != 0:
                _add_shifted(d, s, _bin_shift(fmt, e))
        _normalize(d)
    _normalize(d)
    w = _export(d, width, limbs)
    if w != 0:
        fl |= FLAG_OVF
    return w, fl


@jit
def _round_kernel(fmt, width, limbs, wraps, flags, out):
    d = np.zeros(WIDE_DIGITS, np.int64)
    for i in range(limbs.shape[0]):
        r = _special_result(fmt, flags[i])
        if r < 0:
            d[:] = 0
            _add_state(d, limbs[i], wraps[i], width)
            _normalize(d)
            r = _round_wide(fmt, d)
        out[i] = r


# ---- Python face ------------------------------------------------------------------

def _check_width(width):
    if width not in (280, 320):
        raise ValueError("Kulisch width must be 280 or 320")


def _bits(fmt, data, ndim):
    if fmt not in FORMAT_CODE:
        raise ValueError(f"unknown number format {fmt!r}")
    a = np.ascontiguousarray(data, dtype=_UINT[WIDTH_BITS[fmt]])
    if a.ndim != ndim:
        raise ValueError(f"expected a {ndim}-d array of {fmt} bit patterns, got shape {a.shape}")
    return a


def kulisch_reduce(in_fmt, data, width=320):
    """Reduce a C x E array over rows -> (limbs uint64 (E, 5), wraps int64 (E,), flags uint8 (E,))."""
    _check_width(width)
    a = _bits(in_fmt, data, 2)
    if a.shape[0] > MAX_ROWS:
        raise ValueError("bad row count")
    cols = a.shape[1]
    limbs = np.zeros((cols, LIMBS), np.uint64)
    wraps = np.zeros(cols, np.int64)
    flags = np.zeros(cols, np.uint8)
    _reduce_kernel(FORMAT_CODE[in_fmt], a, width, limbs, wraps, flags)
    return limbs, wraps, flags


def kulisch_accumulate(in_fmt, seq, width=320, state=None):
    """Accumulate one sequence into one state (optionally continuing `state` =
    (limbs, wraps, flags)).  Returns (limbs uint64 (5,), wraps, flags)."""
    _check_width(width)
    a = _bits(in_fmt, seq, 1)
    if state is None:
        limbs, wraps, flags = np.zeros(LIMBS, np.uint64), 0, 0
    else:
        limbs = np.array(state[0], np.uint64).reshape(LIMBS).copy()
        wraps, flags = int(state[1]), int(state[2])
    w, f = _accumulate_kernel(FORMAT_CODE[in_fmt], a, width, limbs, wraps, flags)
    return limbs, int(w), int(f)


def kulisch_round(out_fmt, width, limbs, wraps, flags):
    """Round states (limbs (n, 5), wraps (n,), flags (n,)) once -> uint32 patterns (n,)."""
    _check_width(width)
    limbs = np.ascontiguousarray(limbs, np.uint64).reshape(-1, LIMBS)
    n = limbs.shape[0]
    out = np.zeros(n, np.uint32)
    _round_kernel(FORMAT_CODE[out_fmt], width, limbs, np.ascontiguousarray(wraps, np.int64).reshape(n),
                  np.ascontiguousarray(flags, np.uint8).reshape(n), out)
    return out
