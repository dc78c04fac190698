"""Kulisch exact accumulation and rounding, compiled with numba.

Same results as golden.arith.kulisch (the pure-Python reference) and the C kernel
(ckernels/kulisch.h), bit for bit; same function names as golden.arith.kulisch_c (the C kernel's wrapper).

Internals (the same algorithms as the C kernel, ckernels/kulisch.c, which
states the proofs).
- Exact float64 fast path: a chunk of at most CHUNK_ROWS rows x LANES columns
  of a float format whose exponent spread allows it is summed exactly in
  doubles, in 1..MAX_LEVELS levels (error-free extraction against
  1.5 * 2^k); the level sums, exact multiples of 2^-149, go into the integer
  state without rounding.
- Integer path (an inf/NaN in the chunk, or a wider spread): per element, the
  whole shifted significand (< 2^55) is added into the 32-bit digit holding
  its LSB, one add per term, at most 255 rows per chunk.
- Results rounded straight from the level sums (a TwoSum pair hi + lo): FP32
  by the float64-to-float32 conversion of hi, one unit further where hi is an
  FP32 midpoint that lo pushes across; other formats by integer steps.
- C x E states are 320-bit two's-complement limbs (the row count is bounded);
  one long sequence is read as CHUNK_ROWS x LANES blocks into WIDE_DIGITS
  signed 32-bit digits with deferred carries (448 bits), with exponent bins
  (x BANKS copies) for the blocks that take the integer path and the tail.
Either way the internal sum is the true sum; the exported W-bit state and the
net wrap count are derived from it (true = state + wraps * 2^W).
"""
import math

import numpy as np

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic

from golden.arith.formats import FORMAT_CODE, WIDTH_BITS, accumulator_state, bit_array as _bits
from golden.jit import jit
from spec.formats import (FMT_BF16, FMT_FP16, FMT_FP32, FMT_INT8, INF_BF16, INF_FP16, INF_FP32, INF_INT8,
                          KULISCH_LSB_SHIFT, KULISCH_WIDTH_DEFAULT, KULISCH_WIDTHS, NAN_BF16, NAN_FP16, NAN_FP32,
                          NAN_INT8, NEG_INF_BF16, NEG_INF_FP16, NEG_INF_FP32, NEG_INF_INT8)
from spec.frames import FLAG_NAN, FLAG_NEG_INF, FLAG_OVERFLOW, FLAG_POS_INF

WIDE_DIGITS = 14
ACC_DIGITS = 10
LIMBS = 5
NBINS = 256
BANKS = 4
FOLD_ROWS = 255
FLUSH_TERMS = 1 << 30
MAX_ROWS = 1 << 30
LANES = 64                # columns per block; a long sequence is read as rows of LANES lanes
CHUNK_ROWS = 255          # rows per chunk (also the integer path's fold bound)
MAX_LEVELS = 3
FEW_COLUMNS = 8           # below this many columns (and above CHUNK_ROWS rows) columns go as sequences
INT8_CHUNK = 1 << 24
NSE = 512                 # sign+exponent table entries
SPECIAL_MARK = 1 << 40    # marks an inf/NaN exponent in the hidden-bit table

DIGIT_MASK = 0xFFFFFFFF

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32}

# (exponent shift, exponent mask, fraction mask, sign shift, fraction bits)
_LAYOUT = np.array([[0, 0, 0, 7, 0], [10, 0x1F, 0x3FF, 15, 10], [7, 0xFF, 0x7F, 15, 7], [23, 0xFF, 0x7FFFFF, 31, 23]],
                   np.int64)


@intrinsic
def _prefetch(typingctx, arr, r, c):
    """Hint: fetch the cache line of arr[r, c] (a 2-d array) for reading.  A hint
    never faults, so (r, c) may lie past the end of the array."""
    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], args[2]], wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(arr, r, c), codegen


@jit
def _bin_shift(fmt, e):
    ee = e if e > 0 else 1
    if fmt == FMT_INT8:
        return KULISCH_LSB_SHIFT
    if fmt == FMT_FP16:
        return ee + 124
    if fmt == FMT_BF16:
        return ee + 15
    return ee - 1


@jit
def _is_special_bin(fmt, e):
    if fmt == FMT_INT8:
        return False
    if fmt == FMT_FP16:
        return e == 0x1F
    return e == 0xFF


@jit
def _special_flag(fmt, b):
    """Flag bit of an inf/NaN pattern."""
    frac = b & _LAYOUT[fmt, 2]
    neg = (b >> _LAYOUT[fmt, 3]) & 1
    if frac != 0:
        return FLAG_NAN
    return FLAG_NEG_INF if neg else FLAG_POS_INF


@jit
def _signed_mant(fmt, b):
    if fmt == FMT_INT8:
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
    if fmt == FMT_INT8:
        return NAN_INT8
    if fmt == FMT_FP16:
        return NAN_FP16
    if fmt == FMT_BF16:
        return NAN_BF16
    return NAN_FP32


@jit
def _infinity(fmt, neg):
    if fmt == FMT_INT8:
        return NEG_INF_INT8 if neg else INF_INT8
    if fmt == FMT_FP16:
        return NEG_INF_FP16 if neg else INF_FP16
    if fmt == FMT_BF16:
        return NEG_INF_BF16 if neg else INF_BF16
    return NEG_INF_FP32 if neg else INF_FP32


@jit(inline="always")
def _pack_float(fmt, sign, e, n, mbits, emax):
    """The float with sign bit `sign` of a value rounded to n (at most mbits + 2 bits: a carry of
    the rounding moves into the exponent) times 2^(e - mbits), e >= emin: +/-inf above emax, else
    normal, or subnormal (or a zero) when n has no hidden bit."""
    carry = n >> (mbits + 1)                # branch-free: the decision is data-dependent
    n >>= carry
    e += carry
    if e > emax:
        return sign | _infinity(fmt, False)
    if n >> mbits:
        return sign | ((e + emax) << mbits) | (n & ((1 << mbits) - 1))
    return sign | n


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
    if fmt == FMT_INT8:
        if p >= KULISCH_LSB_SHIFT + 8:
            return _infinity(fmt, neg)            # saturates
        n = _bits_at(d, KULISCH_LSB_SHIFT, 9)
        if _digit_bit(d, KULISCH_LSB_SHIFT - 1) and (_any_below(d, KULISCH_LSB_SHIFT - 1) or (n & 1)):
            n += 1
        v = -n if neg else n
        v = min(127, max(-128, v))
        return v & 0xFF
    mbits = _LAYOUT[fmt, 4]
    emin = -14 if fmt == FMT_FP16 else -126
    emax = 15 if fmt == FMT_FP16 else 127
    sign = (1 << _LAYOUT[fmt, 3]) if neg else 0
    e = p - KULISCH_LSB_SHIFT
    if e > emax:
        return sign | _infinity(fmt, False)
    if e < emin:
        e = emin
    sh = e - mbits + KULISCH_LSB_SHIFT
    n = _bits_at(d, sh, mbits + 1)
    if sh > 0 and _digit_bit(d, sh - 1) and ((sh > 1 and _any_below(d, sh - 1)) or (n & 1)):
        n += 1
    return _pack_float(fmt, sign, e, n, mbits, emax)


@jit
def _special_result(fmt, flags):
    """Result bits for the specials, or -1 when there are none."""
    if (flags & FLAG_NAN) or ((flags & FLAG_POS_INF) and (flags & FLAG_NEG_INF)):
        return _canonical_nan(fmt)
    if flags & FLAG_POS_INF:
        return _infinity(fmt, False)
    if flags & FLAG_NEG_INF:
        return _infinity(fmt, True)
    return -1


# ---- kernels --------------------------------------------------------------------

@jit
def _make_tables(fmt):
    """Integer-path tables indexed by sign and exponent together (pattern >>
    fraction bits): hidden bit (SPECIAL_MARK for inf/NaN), signed scale
    +/-2^(LSB offset in its 32-bit digit) -- 0 for inf/NaN -- and the digit's
    row offset in acc."""
    mbits = _LAYOUT[fmt, 4]
    ebits = 5 if fmt == FMT_FP16 else 8
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
        offset[se] = (sh >> 5) * LANES
    return hidden, scale, offset


# ---- 320-bit true sums (C x E) ---------------------------------------------------------

@jit
def _limbs_add_shifted(t, v, sh):
    """t (LIMBS uint64, two's complement mod 2^320) += v * 2^sh, |v| < 2^63, 0 <= sh < 320."""
    k = sh >> 6
    o = sh & 63
    ext = np.uint64(0xFFFFFFFFFFFFFFFF) if v < 0 else np.uint64(0)
    lo = np.uint64(v) << np.uint64(o)
    hi = np.uint64(v >> (64 - o)) if o > 0 else ext
    carry = np.uint64(0)
    for j in range(k, LIMBS):
        a = lo if j == k else (hi if j == k + 1 else ext)
        s1 = t[j] + a
        c1 = s1 < a
        s2 = s1 + carry
        c2 = s2 < carry
        t[j] = s2
        carry = np.uint64(1) if (c1 or c2) else np.uint64(0)


@jit
def _limbs_export(t, width, limbs_out):
    """True sum t (|t| < 2^319) -> limbs_out (sign-extended W-bit state); returns wraps."""
    for i in range(LIMBS - 1):
        limbs_out[i] = t[i]
    top = width - 64 * (LIMBS - 1)
    t4 = t[LIMBS - 1]
    if top == 64:
        limbs_out[LIMBS - 1] = t4
        return 0
    w = (np.int64(t4) >> top) + np.int64((t4 >> np.uint64(top - 1)) & np.uint64(1))
    mask = (np.uint64(1) << np.uint64(top)) - np.uint64(1)
    x = t4 & mask
    if (x >> np.uint64(top - 1)) & np.uint64(1):
        x |= ~mask
    limbs_out[LIMBS - 1] = x
    return w


# ---- the exact float64 fast path ---------------------------------------------------------

@jit(inline="always")
def _chunk_bounds(xf, r0, r1, c0, nc, mx, mn):
    """Per column of the float32 chunk: the largest magnitude (inf if an inf is
    there; a NaN is caught later, by the sums) and the smallest nonzero
    magnitude (inf if none).  Float32 throughout, row by row over 1-d views,
    so it vectorises 16 lanes wide; four rows are combined in registers before
    they meet the bounds in memory (each meeting is a store the next must wait for)."""
    inf = np.float32(np.inf)
    zero = np.float32(0.0)
    for c in range(nc):
        mx[c] = zero
        mn[c] = inf
    r = r0
    while r + 4 <= r1:
        x0 = xf[r, c0:c0 + nc]
        x1 = xf[r + 1, c0:c0 + nc]
        x2 = xf[r + 2, c0:c0 + nc]
        x3 = xf[r + 3, c0:c0 + nc]
        for c in range(nc):
            a0 = abs(x0[c])
            a1 = abs(x1[c])
            a2 = abs(x2[c])
            a3 = abs(x3[c])
            h01 = a0 if a0 > a1 else a1
            h23 = a2 if a2 > a3 else a3
            h = h01 if h01 > h23 else h23
            a0 = a0 if a0 != zero else inf
            a1 = a1 if a1 != zero else inf
            a2 = a2 if a2 != zero else inf
            a3 = a3 if a3 != zero else inf
            l01 = a0 if a0 < a1 else a1
            l23 = a2 if a2 < a3 else a3
            lo = l01 if l01 < l23 else l23
            m = mx[c]
            mx[c] = h if h > m else m
            m = mn[c]
            mn[c] = lo if lo < m else m
        r += 4
    for r in range(r, r1):
        row = xf[r, c0:c0 + nc]
        for c in range(nc):
            a = abs(row[c])
            m = mx[c]
            mx[c] = a if a > m else m
            a_nz = a if a != zero else inf
            m = mn[c]
            mn[c] = a_nz if a_nz < m else m


@jit
def _chunk_levels(nr, nc, fb, special_field, mx, mn, sig_bits):
    """Levels the chunk needs (0: an inf/NaN, or more than MAX_LEVELS); sig_bits[j, c]
    = the bits of 1.5 * 2^k per extraction level (ckernels/kulisch.c states the bound).
    mx, mn as FP32 patterns; fb: the input format's fraction bits (its values
    are multiples of 2^(exponent - 127 - fb) in the FP32 view); special_field:
    the FP32 exponent field from which a magnitude is an inf or NaN."""
    g = 1
    while (1 << g) < nr:
        g += 1
    step = 51 - g
    levels = 1
    special = False
    for c in range(nc):
        ehi = (np.int64(mx[c]) >> 23) & 0xFF
        special |= ehi >= special_field          # an inf (or, for FP16, any inf/NaN)
        elo = (np.int64(mn[c]) >> 23) & 0xFF
        hi = ehi if ehi != 0 else 1
        lo = hi if elo == 0xFF else (elo if elo != 0 else 1)
        big = hi - 127 + 1
        unit = lo - 127 - fb
        need = big + g - unit - 53
        lc = 1 + (need > 0) + (need > step) + (need > 2 * step)
        levels = max(levels, lc)
        for j in range(MAX_LEVELS - 1):
            k = big + g + 2
            sig_bits[j, c] = ((k + 1023) << 52) | (1 << 51)      # 1.5 * 2^k
            big = k - 53
    return 0 if special or levels > MAX_LEVELS else levels


@jit(inline="always")
def _prefetch_row(pf, r, c, step, lines):
    """Hint: fetch `lines` cache lines of row r of the 2-d array pf, from column c on, step elements apart."""
    for ln in range(lines):
        _prefetch(pf, r, c + ln * step)


@jit(inline="always")
def _extract(a, x):
    """One error-free extraction step against the accumulator a (kulisch.c states the proof):
    (a + x, the part of x below a's grid), both exact."""
    t = a + x
    return t, x - (t - a)


@jit(inline="always")
def _chunk_sum(xf, r0, r1, c0, nc, levels, sig, acc, pf, pf_r0, pf_c, pf_step, pf_lines):
    """Exact level sums of rows [r0, r1) x columns [c0, c0 + nc) of the float32
    array xf into acc[j, c] (row by row over 1-d views: they vectorise).  With
    each row, pf_lines cache lines of row pf_r0 + (r - r0) of the 2-d array pf
    from column pf_c on (pf_step elements apart) are prefetched: the next
    block's part of the row (the rows are far apart, more streams than the
    hardware prefetcher follows).  One and two levels go two rows per trip
    (half the store -> load waits on the accumulators; exact in any order)."""
    a1 = acc[0]
    a2 = acc[1]
    a3 = acc[2]
    s1 = sig[0]
    s2 = sig[1]
    pairs_end = r0 + (r1 - r0) // 2 * 2 if levels < 3 else r0
    for c in range(nc):
        a1[c] = s1[c] if levels > 1 else 0.0
        a2[c] = s2[c] if levels > 2 else 0.0
        a3[c] = 0.0
    for r in range(r0, pairs_end, 2):
        _prefetch_row(pf, pf_r0 + r - r0, pf_c, pf_step, pf_lines)
        _prefetch_row(pf, pf_r0 + r + 1 - r0, pf_c, pf_step, pf_lines)
        row0 = xf[r, c0:c0 + nc]
        row1 = xf[r + 1, c0:c0 + nc]
        if levels == 1:
            for c in range(nc):
                a1[c] += np.float64(row0[c]) + np.float64(row1[c])
        else:
            for c in range(nc):
                t, rest0 = _extract(a1[c], np.float64(row0[c]))
                a1[c], rest1 = _extract(t, np.float64(row1[c]))
                a2[c] += rest0 + rest1
    for r in range(pairs_end, r1):
        _prefetch_row(pf, pf_r0 + r - r0, pf_c, pf_step, pf_lines)
        row = xf[r, c0:c0 + nc]
        if levels == 1:
            for c in range(nc):
                a1[c] += np.float64(row[c])
        elif levels == 2:
            for c in range(nc):
                a1[c], rest = _extract(a1[c], np.float64(row[c]))
                a2[c] += rest
        else:
            for c in range(nc):
                a1[c], rest = _extract(a1[c], np.float64(row[c]))
                a2[c], rest2 = _extract(a2[c], rest)
                a3[c] += rest2
    if levels > 1:
        for c in range(nc):
            a1[c] -= s1[c]
    if levels > 2:
        for c in range(nc):
            a2[c] -= s2[c]


@jit(inline="always")
def _as_fp32(fmt, bits, r0, r1, c0, nc, buf):
    """FP16/BF16 patterns of the chunk as FP32 patterns in buf: BF16 exactly; FP16
    at 2^-112 times its value (its fields moved into FP32 position), where its
    inf/NaN land on FP32 exponent field 31, above every finite FP16."""
    for r in range(r0, r1):
        row = bits[r, c0:c0 + nc]
        out = buf[r - r0]
        if fmt == FMT_BF16:
            for c in range(nc):
                out[c] = np.uint32(row[c]) << np.uint32(16)
        else:
            for c in range(nc):
                b = np.uint32(row[c])
                out[c] = ((b & np.uint32(0x8000)) << np.uint32(16)) | ((b & np.uint32(0x7FFF)) << np.uint32(13))


@jit
def _chunk_fast(fmt, bits, xf, r0, r1, c0, nc, mx, mn, sig, buf, acc):
    """Bounds, levels and level sums of one chunk; returns the levels (0: integer
    path).  xf: the same array as float32 (FP32 input only).  A full block is
    compiled with its width a constant (the loops unroll and vectorise whole)."""
    if nc == LANES:
        return _chunk_fast_n(fmt, bits, xf, r0, r1, c0, LANES, mx, mn, sig, buf, acc)
    return _chunk_fast_n(fmt, bits, xf, r0, r1, c0, nc, mx, mn, sig, buf, acc)


@jit(inline="always")
def _chunk_fast_n(fmt, bits, xf, r0, r1, c0, nc, mx, mn, sig, buf, acc):
    if fmt == FMT_FP32:
        src, s0, s1, sc = xf, r0, r1, c0
    else:
        _as_fp32(fmt, bits, r0, r1, c0, nc, buf)
        src, s0, s1, sc = buf.view(np.float32), 0, r1 - r0, 0
    _chunk_bounds(src, s0, s1, sc, nc, mx, mn)
    levels = _chunk_levels(r1 - r0, nc, _LAYOUT[fmt, 4], 31 if fmt == FMT_FP16 else 0xFF, mx.view(np.uint32),
                           mn.view(np.uint32), sig.view(np.int64))
    if levels == 0:
        return 0
    full = nc == LANES and bits.shape[1] > LANES      # a block of a wide array: prefetch the next one
    step = 64 // bits.itemsize
    _chunk_sum(src, s0, s1, sc, nc, levels, sig, acc, bits, r0, c0 + LANES, step, LANES // step if full else 0)
    nan = False
    for c in range(nc):
        nan |= acc[0, c] != acc[0, c]       # a NaN input makes its column's first level NaN
    if nan:
        return 0
    if fmt == FMT_FP16:                       # back from the 2^-112 view: exact (a power of two)
        for j in range(levels):
            for c in range(nc):
                acc[j, c] *= 2.0 ** 112
    return levels


@jit
def _double_terms(acc_bits, levels, nc, m, sh):
    """Each level sum (exact double, multiple of 2^-149) as m * 2^(sh - 149), sh >= 0."""
    for j in range(levels):
        bits = acc_bits[j]
        mj = m[j]
        shj = sh[j]
        for c in range(nc):
            b = bits[c]
            e = (b >> 52) & 0x7FF
            x = (b & 0xFFFFFFFFFFFFF) | (1 << 52)
            if b < 0:
                x = -x
            s = e - 1075 + KULISCH_LSB_SHIFT
            r = -s if s < 0 else 0
            mj[c] = (x >> r) if e != 0 else 0
            shj[c] = s if s > 0 else 0


@jit(inline="always")
def _shifted128(m, d):
    """m * 2^d as a signed 128-bit word (lo, hi) of uint64s, for -63 <= d <= 127 - (bits of m);
    d < 0 shifts right (exact where the dropped bits are zeros).  Branch-free (masks), so
    the loop around it vectorises."""
    n = -d if d < 0 else np.int64(0)
    p = d if d > 0 else np.int64(0)
    r = m >> (n & 63)
    ur = np.uint64(r)
    p0 = np.uint64(0) - np.uint64(p == 0)
    small = np.uint64(0) - np.uint64(p < 64)
    lo = (ur << np.uint64(p & 63)) & small
    hi = ((np.uint64(r >> 63) & p0) | (np.uint64(r >> ((64 - p) & 63)) & small & ~p0)
          | ((ur << np.uint64((p - 64) & 63)) & ~small))
    return lo, hi


@jit
def _levels_export(acc, levels, nc, width, m, sh, limb, limbs_out, wraps_out, flags_out, c_out):
    """Each column's exact sum of its level sums -> state limbs, wraps, flags, element-wise
    over the columns (ckernels/kulisch.c, levels_export_n, states the bounds).  One or two
    levels: the column's sum as one 128-bit word at bit base = max(0, top - 126), top the
    larger significand top (sh + 53), then three limbs at that offset, zeros below, sign
    fill above.  Three levels: one 320-bit addend per level (limb k gets the low 64 bits of
    m * 2^(sh - 64k), or m >> (64k - sh) with sign fill), added limb by limb with carries."""
    _double_terms(acc.view(np.int64), levels, nc, m, sh)
    if levels <= 2:
        m1, s1, m2, s2 = m[0], sh[0], m[1], sh[1]
        if levels == 1:
            for c in range(nc):
                m2[c] = 0
                s2[c] = 0
        for c in range(nc):
            a1, a2, e1, e2 = m1[c], m2[c], s1[c], s2[c]
            t1 = e1 + 53 if a1 != 0 else np.int64(0)
            t2 = e2 + 53 if a2 != 0 else np.int64(0)
            top = max(t1, t2)
            base = top - 126 if top > 126 else np.int64(0)
            lo1, hi1 = _shifted128(a1, e1 - base)
            lo2, hi2 = _shifted128(a2, e2 - base)
            lo = lo1 + lo2
            hi = hi1 + hi2 + np.uint64(lo < lo1)
            kb = base >> 6
            o = np.uint64(base & 63)
            o0 = np.uint64(0) - np.uint64(o == 0)
            fill = np.uint64(np.int64(hi) >> 63)
            w0 = lo << o
            w1 = (hi & o0) | (((lo >> ((np.uint64(64) - o) & np.uint64(63))) | (hi << o)) & ~o0)
            w2 = (fill & o0) | (np.uint64(np.int64(hi) >> np.int64((np.uint64(64) - o) & np.uint64(63))) & ~o0)
            for k in range(LIMBS):
                limb[k, c] = ((w0 & (np.uint64(0) - np.uint64(k == kb))) | (w1 & (np.uint64(0) - np.uint64(k == kb + 1)))
                              | (w2 & (np.uint64(0) - np.uint64(k == kb + 2))) | (fill & (np.uint64(0) - np.uint64(k > kb + 2))))
    else:
        carry = limb[LIMBS]
        cy = limb[LIMBS + 1]
        for c in range(nc):
            carry[c] = 0
        for k in range(LIMBS):
            total = limb[k]
            for c in range(nc):
                total[c] = carry[c]
                cy[c] = 0
            for j in range(levels):
                mj = m[j]
                shj = sh[j]
                for c in range(nc):
                    d = shj[c] - 64 * k
                    mv = mj[c]
                    if d >= 64:
                        p = np.uint64(0)
                    elif d >= 0:
                        p = np.uint64(mv) << np.uint64(d)
                    else:
                        p = np.uint64(mv >> min(-d, 63))
                    a = total[c] + p
                    cy[c] += np.uint64(1) if a < p else np.uint64(0)
                    total[c] = a
            for c in range(nc):
                carry[c] = cy[c]
    top = width - 64 * (LIMBS - 1)
    t4 = limb[LIMBS - 1]
    # through slices indexed from 0 (an index c_out + c is checked for wrap-around per element)
    out, wraps, flags = limbs_out[c_out:c_out + nc], wraps_out[c_out:c_out + nc], flags_out[c_out:c_out + nc]
    for c in range(nc):
        w = np.int64(0)
        x = t4[c]
        if top < 64:            # wraps = floor((T + 2^(W-1)) / 2^W); state sign-extended from bit W-1
            w = (np.int64(x) >> top) + np.int64((x >> np.uint64(top - 1)) & np.uint64(1))
            mask = (np.uint64(1) << np.uint64(top)) - np.uint64(1)
            x &= mask
            if (x >> np.uint64(top - 1)) & np.uint64(1):
                x |= ~mask
        for k in range(LIMBS - 1):
            out[c, k] = limb[k, c]
        out[c, LIMBS - 1] = x
        wraps[c] = w
        flags[c] = FLAG_OVERFLOW if w != 0 else 0


@jit
def _double_term(v):
    """A nonzero double that is a multiple of 2^-149 as (m, sh): v = m * 2^(sh - 149), sh >= 0."""
    mant, ex = math.frexp(v)                    # v = mant * 2^ex exactly, 0.5 <= |mant| < 1
    mi = np.int64(mant * 9007199254740992.0)    # * 2^53: an exact integer
    sh = ex - 53 + KULISCH_LSB_SHIFT
    if sh < 0:
        mi >>= -sh                              # exact: the dropped bits are zeros
        sh = 0
    return mi, sh


# ---- rounding straight from float64 level sums (the argument: ckernels/kulisch.c) ----

@jit(inline="always")
def _round_pair(fmt, hib, lo):
    """RN of the exact hi + lo to fmt, where hi (given as its bits hib) =
    RN53(hi + lo) (a TwoSum pair)."""
    e_field = (hib >> 52) & 0x7FF
    if e_field == 0:
        return 0
    neg = hib < 0
    big_m = (hib & 0xFFFFFFFFFFFFF) | (np.int64(1) << 52)   # |hi| = big_m * 2^(e_field - 1075)
    resid = 0 if lo == 0.0 else (1 if (lo > 0.0) != neg else -1)
    e2 = e_field - 1075
    if fmt == FMT_INT8:
        t = -e2
        if t <= 0:
            return _infinity(fmt, neg)            # saturates
        if t > 60:
            return 0
        n = big_m >> t
        rem = big_m & ((np.int64(1) << t) - 1)
        half = np.int64(1) << (t - 1)
        n += np.int64((rem > half) | ((rem == half) & ((resid > 0) | ((resid == 0) & ((n & 1) != 0)))))
        v = -n if neg else n
        return min(127, max(-128, v)) & 0xFF
    mbits = _LAYOUT[fmt, 4]
    emin = -14 if fmt == FMT_FP16 else -126
    emax = 15 if fmt == FMT_FP16 else 127
    sign = (1 << _LAYOUT[fmt, 3]) if neg else 0
    e = max(e_field - 1023, emin)
    t = (e - mbits) - e2
    if t > 60:
        return sign
    n = big_m >> t
    rem = big_m & ((np.int64(1) << t) - 1)
    half = np.int64(1) << (t - 1)
    n += np.int64((rem > half) | ((rem == half) & ((resid > 0) | ((resid == 0) & ((n & 1) != 0)))))
    return _pack_float(fmt, sign, e, n, mbits, emax)


@jit
def _round_state(fmt, width, limbs, wraps, flags, d):
    """One exported state (W-bit limbs, wraps, flags) rounded to fmt (d: scratch digits)."""
    r = _special_result(fmt, flags)
    if r >= 0:
        return r
    if wraps != 0:              # |true sum| >= 2^(W-1-149) >= 2^130: beyond every format
        return _infinity(fmt, wraps < 0)            # INT8 saturates
    d[:] = 0
    _add_state(d, limbs, 0, width)
    _normalize(d)
    return _round_wide(fmt, d)


@jit
def _levels_pairs(acc, levels, nc, hi, lo):
    """Each column's exact sum of its 1 to 3 level sums as hi + lo: two levels are
    one TwoSum pair; three are (a, b) = TwoSum(s2, s3), (hi, cc) = TwoSum(s1, a),
    lo = fl(cc + b), which keeps the sign of cc + b (the argument for rounding
    from it: ckernels/kulisch.c, levels_round).  One loop per level count, so
    each is a straight element-wise loop over the columns."""
    s1 = acc[0]
    s2 = acc[1]
    s3 = acc[2]
    if levels == 1:
        for c in range(nc):
            hi[c] = s1[c] + 0.0                         # + 0.0: a -0 sum reads as +0, as a TwoSum would give
            lo[c] = 0.0
    elif levels == 2:
        for c in range(nc):
            a = s2[c] + 0.0
            h = s1[c] + a
            hv = h - s1[c]
            hi[c] = h
            lo[c] = (s1[c] - (h - hv)) + (a - hv)
    else:
        for c in range(nc):
            x2 = s2[c]
            x3 = s3[c]
            a = x2 + x3
            av = a - x2
            b = (x2 - (a - av)) + (x3 - av)
            h = s1[c] + a
            hv = h - s1[c]
            cc = (s1[c] - (h - hv)) + (a - hv)
            hi[c] = h
            lo[c] = cc + b


@jit
def _round_pairs_fp32(hi, lo, nc, r32, adj):
    """FP32 results of the pairs by the hardware's own rounding, element-wise
    (vectorised) over the columns; returns how many columns need the general
    path instead.

    For 2^-126 <= |hi| < 2^127 (normal FP32 results; no overflow) and a faithful
    pair (hi + lo == hi, so hi = RN53(hi + lo)): every FP32 midpoint there is a
    double, so none lies strictly between hi and the true sum, and
    RN32(hi + lo) = RN32(hi), which the conversion computes (RNE) -- unless hi
    is itself a midpoint (its 29 bits below the FP32 quantum are 100...0) and
    lo pushes the true sum away from the neighbour RNE chose: then the result
    is the other neighbour, one unit in the last place away (adj).  A zero sum
    (hi == lo == 0) converts to +0.  The other columns (subnormal or
    near-overflow results, unfaithful pairs) are counted, and the general path
    rounds them."""
    hib = hi.view(np.int64)
    slow = 0
    for c in range(nc):
        h = hi[c]
        l = lo[c]
        r = np.float32(h + 0.0)
        rd = np.float64(r)
        e = (hib[c] >> 52) & 0x7FF
        mid = (hib[c] & 0x1FFFFFFF) == 0x10000000
        up = h > rd                                     # RNE went below hi
        away = mid & (l != 0.0) & ((l > 0.0) == up)
        grow = up == (h > 0.0)                          # the other neighbour is larger in magnitude
        adj[c] = np.int32(away) * (np.int32(2) * np.int32(grow) - np.int32(1))
        r32[c] = r
        slow += ((e < 1023 - 126) & (h != 0.0)) | (e >= 1023 + 127) | (h + l != h)
    return slow


@jit
def _round_from_state(fmt, acc, levels, c, width, tsum, state, d, bits_out, wraps_out, flags_out, at):
    """One column's result, wraps and flags from its exact state (the level sums
    added into 320 bits): for sums near the 280-bit range, or a pair that is not
    faithful (deep cancellation)."""
    tsum[:] = 0
    for j in range(levels):
        v = acc[j, c]
        if v != 0.0:
            mi, sh = _double_term(v)
            _limbs_add_shifted(tsum, mi, sh)
    w = _limbs_export(tsum, width, state)
    wraps_out[at] = w
    flags_out[at] = FLAG_OVERFLOW if w != 0 else 0
    bits_out[at] = _round_state(fmt, width, state, w, flags_out[at], d)


@jit
def _levels_round(fmt, acc, levels, nc, width, bits_out, wraps_out, flags_out, c_out, tsum, state, d, pair, r32, adj):
    """Columns of a block with 1 to 3 level sums: rounded bits, wraps, flags.
    pair: (2, LANES) float64 scratch for the (hi, lo) pairs; r32 (float32) and
    adj (int32): LANES scratch for the FP32 conversion.  Scalars only in the
    per-column loops (a call that takes arrays costs reference counting)."""
    hi = pair[0]
    lo = pair[1]
    hib = hi.view(np.int64)
    _levels_pairs(acc, levels, nc, hi, lo)
    # through slices indexed from 0 (an index c_out + c is checked for wrap-around per element)
    wraps, flags = wraps_out[c_out:c_out + nc], flags_out[c_out:c_out + nc]
    for c in range(nc):
        wraps[c] = 0
        flags[c] = 0
    if fmt == FMT_FP32:
        slow = _round_pairs_fp32(hi, lo, nc, r32, adj)
        ru = r32.view(np.uint32)
        bits = bits_out[c_out:c_out + nc]
        for c in range(nc):
            bits[c] = np.uint32(np.int64(ru[c]) + adj[c])
        if slow == 0:
            return
    if fmt == FMT_BF16:                                   # one loop per format: its grid is a constant
        _round_pairs(FMT_BF16, acc, levels, nc, width, hi, lo, bits_out, wraps_out, flags_out, c_out, tsum, state, d)
    elif fmt == FMT_FP16:
        _round_pairs(FMT_FP16, acc, levels, nc, width, hi, lo, bits_out, wraps_out, flags_out, c_out, tsum, state, d)
    elif fmt == FMT_INT8:
        _round_pairs(FMT_INT8, acc, levels, nc, width, hi, lo, bits_out, wraps_out, flags_out, c_out, tsum, state, d)
    else:
        _round_pairs(FMT_FP32, acc, levels, nc, width, hi, lo, bits_out, wraps_out, flags_out, c_out, tsum, state, d)


@jit(inline="always")
def _round_pairs(fmt, acc, levels, nc, width, hi, lo, bits_out, wraps_out, flags_out, c_out, tsum, state, d):
    """The columns' results from their pairs, where the FP32 conversion did not
    give them (inlined where fmt is a constant, so the format's grid is too)."""
    hib = hi.view(np.int64)
    for c in range(nc):
        h = hi[c]
        e = (hib[c] >> 52) & 0x7FF
        if fmt == FMT_FP32 and not (((e < 1023 - 126) and h != 0.0) or e >= 1023 + 127 or h + lo[c] != h):
            continue                                    # converted already
        if abs(h) < 2.0 ** 129 and h + lo[c] == h:      # no wrap at either width; a faithful pair
            bits_out[c_out + c] = _round_pair(fmt, hib[c], lo[c])
        else:                                           # near the 280-bit range, or cancellation
            _round_from_state(fmt, acc, levels, c, width, tsum, state, d, bits_out, wraps_out, flags_out, c_out + c)


# ---- the integer path ------------------------------------------------------------------

@jit
def _chunk_integer(fmt, hidden, scale, offset, bits, r0, r1, c0, nc, acc, tsum, fl):
    """Rows [r0, r1) (<= 255) x columns [c0, c0 + nc) into the columns' true sums tsum[c]."""
    frac_bits = np.uint64(_LAYOUT[fmt, 4])
    frac_mask = np.uint64(_LAYOUT[fmt, 2])
    acc[:] = 0
    for r in range(r0, r1):
        any_special = 0
        for c in range(nc):
            b = np.uint64(bits[r, c0 + c])
            se = b >> frac_bits
            h = hidden[se]
            any_special |= h
            acc[offset[se] + np.uint64(c)] += (np.int64(b & frac_mask) | h) * scale[se]
        if any_special & SPECIAL_MARK:
            for c in range(nc):
                b = np.int64(bits[r, c0 + c])
                if hidden[b >> frac_bits] & SPECIAL_MARK:
                    fl[c] |= _special_flag(fmt, b)
    for c in range(nc):
        for i in range(ACC_DIGITS):
            v = acc[i * LANES + c]
            if v != 0:
                _limbs_add_shifted(tsum[c], v, 32 * i)


@jit
def _int8_column_sums(data, r0, r1, c0, nc, acc, out):
    """Column sums of INT8 rows [r0, r1) (r1 - r0 <= 2^24: int32 is exact) into out."""
    for c in range(nc):
        acc[c] = 0
    for r in range(r0, r1):
        row = data[r, c0:c0 + nc]
        for c in range(nc):
            acc[c] += np.int8(row[c])
    for c in range(nc):
        out[c] = acc[c]


# ---- one long sequence into wide digits ------------------------------------------------

@jit(inline="always")
def _bin_term(fmt, b, bins, bank, fl):
    """The float pattern b's signed integer significand added into bins[bank, its exponent
    field] (branch-free); an inf or NaN instead adds its flag to fl.  Returns fl."""
    e = (b >> _LAYOUT[fmt, 0]) & _LAYOUT[fmt, 1]
    if e == _LAYOUT[fmt, 1]:
        return fl | _special_flag(fmt, b)
    m = (b & _LAYOUT[fmt, 2]) | ((np.int64(1) << _LAYOUT[fmt, 4]) if e != 0 else 0)
    sm = -(b >> _LAYOUT[fmt, 3])
    bins[bank, e] += (m ^ sm) - sm
    return fl


@jit
def _seq_bins(fmt, seq, i0, i1, d, fl):
    """Terms [i0, i1) by exponent bins (any input, specials); returns the flags."""
    bins = np.zeros((BANKS, NBINS), np.int64)
    for j0 in range(i0, i1, FLUSH_TERMS):
        j1 = min(i1, j0 + FLUSH_TERMS)
        bins[:, :] = 0
        if fmt == FMT_INT8:
            s = np.int64(0)
            for i in range(j0, j1):
                s += (np.int64(seq[i]) ^ 0x80) - 0x80
            bins[0, 0] = s
        else:
            i = j0
            while i + BANKS <= j1:
                for k in range(BANKS):
                    fl = _bin_term(fmt, np.int64(seq[i + k]), bins, k, fl)
                i += BANKS
            while i < j1:
                fl = _bin_term(fmt, np.int64(seq[i]), bins, 0, fl)
                i += 1
        for e in range(NBINS):
            s = np.int64(0)
            for k in range(BANKS):
                s += bins[k, e]
            if s != 0:
                _add_shifted(d, s, _bin_shift(fmt, e))
        _normalize(d)
    return fl


@jit
def _seq_accumulate(fmt, seq, seq_f, d, fl):
    """Add the sequence into the wide digits d (normalised on return); returns the
    flags.  seq_f: the sequence as float32 (FP32 input only)."""
    n = seq.shape[0]
    if fmt == FMT_INT8:
        for i0 in range(0, n, INT8_CHUNK):
            s = np.int64(0)
            for i in range(i0, min(n, i0 + INT8_CHUNK)):
                s += np.int64(np.int8(seq[i]))
            _add_shifted(d, s, KULISCH_LSB_SHIFT)
        _normalize(d)
        return fl
    block = CHUNK_ROWS * LANES
    mx = np.zeros(LANES, np.float32)
    mn = np.zeros(LANES, np.float32)
    sig = np.zeros((MAX_LEVELS - 1, LANES), np.float64)
    buf = np.zeros((CHUNK_ROWS, LANES), np.uint32)
    acc = np.zeros((MAX_LEVELS, LANES), np.float64)
    i = 0
    while i + block <= n:
        blk = seq[i:i + block].reshape((CHUNK_ROWS, LANES))
        blk_f = seq_f[i:i + block].reshape((CHUNK_ROWS, LANES)) if fmt == FMT_FP32 else seq_f[:1].reshape((1, 1))
        levels = _chunk_fast(fmt, blk, blk_f, 0, CHUNK_ROWS, 0, LANES, mx, mn, sig, buf, acc)
        if levels == 0:
            fl = _seq_bins(fmt, seq, i, i + block, d, fl)
        else:
            for j in range(levels):
                for c in range(LANES):
                    v = acc[j, c]
                    if v != 0.0:
                        mi, sh = _double_term(v)
                        _add_shifted(d, mi, sh)
            _normalize(d)
        i += block
    return _seq_bins(fmt, seq, i, n, d, fl)


# ---- kernels --------------------------------------------------------------------

@jit
def _reduce_kernel(fmt, out_fmt, data, xf, width, limbs, bits, wraps, flags):
    """out_fmt < 0: exact states into limbs; else rounded patterns into bits."""
    rows, cols = data.shape
    rounding = out_fmt >= 0
    d = np.zeros(WIDE_DIGITS, np.int64)
    state = np.zeros(LIMBS, np.uint64)
    if cols == 1 or (cols < FEW_COLUMNS and rows > CHUNK_ROWS):
        # one column is one long sequence; a few long columns are gathered, block
        # by block, into one and summed as sequences too
        block = CHUNK_ROWS * LANES
        col = np.empty(min(rows, block) if cols > 1 else 0, data.dtype)
        no_floats = np.empty(1, np.float32)
        for j in range(cols):
            d[:] = 0
            if cols == 1:
                fl = _seq_accumulate(fmt, data.reshape(rows), xf.reshape(xf.size), d, 0)
            else:
                fl = 0
                for r0 in range(0, rows, block):
                    m = min(block, rows - r0)
                    for i in range(m):
                        col[i] = data[r0 + i, j]
                    part = col[:m]
                    fl = _seq_accumulate(fmt, part, part.view(np.float32) if fmt == FMT_FP32 else no_floats, d, fl)
            st = state if rounding else limbs[j]
            w = _export(d, width, st)
            wraps[j] = w
            flags[j] = fl | (FLAG_OVERFLOW if w != 0 else 0)
            if rounding:
                bits[j] = _round_state(out_fmt, width, st, w, flags[j], d)
        return
    tsum = np.zeros((LANES, LIMBS), np.uint64)
    tmp_limbs = np.zeros((LANES, LIMBS), np.uint64)
    fl = np.zeros(LANES, np.uint8)
    mx = np.zeros(LANES, np.float32)
    mn = np.zeros(LANES, np.float32)
    sig = np.zeros((MAX_LEVELS - 1, LANES), np.float64)
    buf = np.zeros((CHUNK_ROWS, LANES), np.uint32)
    acc = np.zeros((MAX_LEVELS, LANES), np.float64)
    m = np.zeros((MAX_LEVELS, LANES), np.int64)
    sh = np.zeros((MAX_LEVELS, LANES), np.int64)
    limb = np.zeros((LIMBS + 2, LANES), np.uint64)     # the limbs, then carry scratch
    iacc = np.zeros(ACC_DIGITS * LANES, np.int64)
    isum = np.zeros(LANES, np.int64)
    iacc32 = np.zeros(LANES, np.int32)
    hidden, scale, offset = _make_tables(fmt)
    pair = np.zeros((2, LANES), np.float64)
    r32 = np.zeros(LANES, np.float32)
    adj = np.zeros(LANES, np.int32)
    for c0 in range(0, cols, LANES):
        nc = min(LANES, cols - c0)
        levels = 0
        if fmt == FMT_INT8 and rows <= INT8_CHUNK:        # one int32 sum per column: exact as one double level
            _int8_column_sums(data, 0, rows, c0, nc, iacc32, isum)
            for c in range(nc):
                acc[0, c] = np.float64(isum[c])
            levels = 1
        elif fmt != FMT_INT8 and rows <= CHUNK_ROWS:      # one chunk: results straight from the level sums
            levels = _chunk_fast(fmt, data, xf, 0, rows, c0, nc, mx, mn, sig, buf, acc)
        if levels:
            if rounding:
                _levels_round(out_fmt, acc, levels, nc, width, bits, wraps, flags, c0, tsum[0], state, d, pair, r32,
                              adj)
                continue
            if rounding:
                _levels_export(acc, levels, nc, width, m, sh, limb, tmp_limbs, wraps[c0:], flags[c0:], 0)
                for c in range(nc):
                    bits[c0 + c] = _round_state(out_fmt, width, tmp_limbs[c], wraps[c0 + c], flags[c0 + c], d)
            else:
                _levels_export(acc, levels, nc, width, m, sh, limb, limbs, wraps, flags, c0)
            continue
        tsum[:, :] = 0
        fl[:] = 0
        if fmt == FMT_INT8:
            for r0 in range(0, rows, INT8_CHUNK):
                _int8_column_sums(data, r0, min(rows, r0 + INT8_CHUNK), c0, nc, iacc32, isum)
                for c in range(nc):
                    _limbs_add_shifted(tsum[c], isum[c], KULISCH_LSB_SHIFT)
        else:
            for r0 in range(0, rows, CHUNK_ROWS):
                r1 = min(rows, r0 + CHUNK_ROWS)
                levels = _chunk_fast(fmt, data, xf, r0, r1, c0, nc, mx, mn, sig, buf, acc)
                if levels:
                    _double_terms(acc.view(np.int64), levels, nc, m, sh)
                    for j in range(levels):
                        for c in range(nc):
                            if m[j, c] != 0:
                                _limbs_add_shifted(tsum[c], m[j, c], sh[j, c])
                else:
                    _chunk_integer(fmt, hidden, scale, offset, data, r0, r1, c0, nc, iacc, tsum, fl)
        for c in range(nc):
            st = state if rounding else limbs[c0 + c]
            w = _limbs_export(tsum[c], width, st)
            wraps[c0 + c] = w
            flags[c0 + c] = fl[c] | (FLAG_OVERFLOW if w != 0 else 0)
            if rounding:
                bits[c0 + c] = _round_state(out_fmt, width, st, w, flags[c0 + c], d)


@jit
def _accumulate_kernel(fmt, seq, seq_f, width, limbs, wraps_in, flags_in):
    d = np.zeros(WIDE_DIGITS, np.int64)
    _add_state(d, limbs, wraps_in, width)
    fl = _seq_accumulate(fmt, seq, seq_f, d, flags_in & (FLAG_NAN | FLAG_POS_INF | FLAG_NEG_INF))
    _normalize(d)
    w = _export(d, width, limbs)
    if w != 0:
        fl |= FLAG_OVERFLOW
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

_NO_FLOATS_2D = np.zeros((1, 1), np.float32)     # stands in for the float32 view of a non-FP32 input
_NO_FLOATS_1D = _NO_FLOATS_2D.reshape(1)
_NO_LIMBS = np.zeros((1, LIMBS), np.uint64)       # stand-ins for the output the call does not ask for
_NO_BITS = np.zeros(1, np.uint32)


def _check_width(width):
    if width not in KULISCH_WIDTHS:
        raise ValueError("Kulisch width must be 280 or 320")


def _reduce_args(in_fmt, data, width):
    _check_width(width)
    a = _bits(in_fmt, data, 2)
    if a.shape[0] > MAX_ROWS:
        raise ValueError("bad row count")
    xf = a.view(np.float32) if in_fmt == "fp32" else _NO_FLOATS_2D
    if in_fmt == "int8":
        a = a.view(np.int8)             # signed bytes: the column sums add them as they are
    return a, xf


def kulisch_reduce(in_fmt, data, width=KULISCH_WIDTH_DEFAULT):
    """Reduce a C x E array over rows -> (limbs uint64 (E, 5), wraps int64 (E,), flags uint8 (E,))."""
    a, xf = _reduce_args(in_fmt, data, width)
    rows, cols = a.shape
    alloc = np.zeros if cols == 1 else np.empty     # several columns: the kernel writes every entry
    limbs = alloc((cols, LIMBS), np.uint64)
    wraps = alloc(cols, np.int64)
    flags = alloc(cols, np.uint8)
    if cols == 1:       # one sequence: the very code kulisch_accumulate runs (one compiled kernel, not two)
        seq = a.reshape(rows).view(_UINT[WIDTH_BITS[in_fmt]])
        seq_f = xf.reshape(rows) if in_fmt == "fp32" else _NO_FLOATS_1D
        w, f = _accumulate_kernel(FORMAT_CODE[in_fmt], seq, seq_f, width, limbs[0], 0, 0)
        wraps[0] = w
        flags[0] = f
        return limbs, wraps, flags
    _reduce_kernel(FORMAT_CODE[in_fmt], -1, a, xf, width, limbs, _NO_BITS, wraps, flags)
    return limbs, wraps, flags


def kulisch_reduce_round(in_fmt, out_fmt, data, width=KULISCH_WIDTH_DEFAULT):
    """The reduction rounded once to out_fmt -> (bits uint32 (E,), wraps int64 (E,),
    flags uint8 (E,)); the same as kulisch_reduce then kulisch_round."""
    if out_fmt not in FORMAT_CODE:
        raise ValueError(f"unknown number format {out_fmt!r}")
    a, xf = _reduce_args(in_fmt, data, width)
    cols = a.shape[1]
    bits = np.empty(cols, np.uint32)                 # the kernel writes every entry
    wraps = np.empty(cols, np.int64)
    flags = np.empty(cols, np.uint8)
    _reduce_kernel(FORMAT_CODE[in_fmt], FORMAT_CODE[out_fmt], a, xf, width, _NO_LIMBS, bits, wraps, flags)
    return bits, wraps, flags


def chunk_levels(in_fmt, data):
    """Which path the reduction takes for one chunk (a rows x cols array of a float
    format, rows <= CHUNK_ROWS, cols <= LANES): float64 levels 1..3, or 0 for the
    integer path (an inf/NaN, or a wider spread).  For tests of the boundaries."""
    a = _bits(in_fmt, data, 2)
    rows, cols = a.shape
    if in_fmt == "int8" or not (1 <= rows <= CHUNK_ROWS and 1 <= cols <= LANES):
        raise ValueError(f"a chunk is a float format, 1..{CHUNK_ROWS} rows by 1..{LANES} columns")
    xf = a.view(np.float32) if in_fmt == "fp32" else _NO_FLOATS_2D
    return int(_chunk_levels_probe(FORMAT_CODE[in_fmt], a, xf))


@jit
def _chunk_levels_probe(fmt, bits, xf):
    rows, cols = bits.shape
    mx = np.zeros(LANES, np.float32)
    mn = np.zeros(LANES, np.float32)
    sig = np.zeros((MAX_LEVELS - 1, LANES), np.float64)
    buf = np.zeros((CHUNK_ROWS, LANES), np.uint32)
    acc = np.zeros((MAX_LEVELS, LANES), np.float64)
    return _chunk_fast(fmt, bits, xf, 0, rows, 0, cols, mx, mn, sig, buf, acc)


def kulisch_accumulate(in_fmt, seq, width=KULISCH_WIDTH_DEFAULT, state=None):
    """Accumulate one sequence into one state (optionally continuing `state` =
    (limbs, wraps, flags)).  Returns (limbs uint64 (5,), wraps, flags)."""
    _check_width(width)
    a = _bits(in_fmt, seq, 1)
    limbs, wraps, flags = accumulator_state(state, LIMBS)
    xf = a.view(np.float32) if in_fmt == "fp32" else _NO_FLOATS_1D
    w, f = _accumulate_kernel(FORMAT_CODE[in_fmt], a, xf, width, limbs, wraps, flags)
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
