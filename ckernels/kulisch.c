/* Kulisch exact accumulation, FP32_ARRIVAL fold and rounding: see kulisch.h. */
#include "kulisch.h"

#include <string.h>

/* ---- Tunables and assumptions -------------------------------------------
 * Assumes: two's-complement integers with arithmetic >> on signed values
 * (gcc/clang on every supported target); float is IEEE binary32 with the
 * default environment (round to nearest even, no FTZ/DAZ); compiled without
 * -ffast-math (the FP32_ARRIVAL adds must not be re-associated or contracted).
 */
#define WIDE_DIGITS 14          /* exact internal sum: 14 x 32-bit digits = 448 bits, far above any reachable sum */
#define ACC_DIGITS 10           /* digits one term can touch: terms are below 2^278 < 2^320 */
#define PREFETCH_ROWS 2         /* kulisch_reduce: software-prefetch the row this many rows ahead */
#define FOLD_ROWS 255           /* kulisch_reduce: 255 terms of |v| < 2^55 per digit stay below 2^63 */
#define COL_BLOCK 256           /* columns per cache block in kulisch_reduce / fp32_arrival_reduce */
#define BANKS 4                 /* exponent-bin copies used round-robin: breaks store->load chains on equal exponents */
#define NBINS 256               /* one bin per exponent field value */
#define FLUSH_TERMS (1u << 30)  /* terms per bin flush: |bin| < 2^24 * 2^30, far from int64 overflow */
#define DIGIT_MASK 0xFFFFFFFFll

enum { F_INT8 = 0, F_FP16 = 1, F_BF16 = 2, F_FP32 = 3 };
enum { K_FINITE = 0, K_NAN = 1, K_PINF = 2, K_NINF = 3 };
enum { FLAG_NAN = 1, FLAG_PINF = 2, FLAG_NINF = 4, FLAG_OVF = 8 };

static inline uint32_t load_bits(int fmt, const void *data, size_t i)
{
    switch (fmt) {
    case F_INT8: return ((const uint8_t *)data)[i];
    case F_FP16:
    case F_BF16: return ((const uint16_t *)data)[i];
    default: return ((const uint32_t *)data)[i];
    }
}

/* Exponent-bin index of a pattern (0 for INT8); the bin's weight is 2^bin_shift. */
static inline int bin_of(int fmt, uint32_t b)
{
    switch (fmt) {
    case F_INT8: return 0;
    case F_FP16: return (b >> 10) & 0x1F;
    case F_BF16: return (b >> 7) & 0xFF;
    default: return (b >> 23) & 0xFF;
    }
}

static inline int bin_shift(int fmt, int e)
{
    int ee = e ? e : 1;               /* subnormals share the smallest normal's scale */
    switch (fmt) {
    case F_INT8: return 149;
    case F_FP16: return ee + 124;     /* m * 2^(e-25) * 2^149 */
    case F_BF16: return ee + 15;      /* m * 2^(e-134) * 2^149 */
    default: return ee - 1;           /* m * 2^(e-150) * 2^149 */
    }
}

static inline int is_special_bin(int fmt, int e)
{
    switch (fmt) {
    case F_INT8: return 0;
    case F_FP16: return e == 0x1F;
    default: return e == 0xFF;
    }
}

/* Signed integer significand of a finite pattern. */
static inline int64_t signed_mant(int fmt, uint32_t b)
{
    int64_t m, s;
    switch (fmt) {
    case F_INT8: return (int8_t)b;
    case F_FP16: m = (b & 0x3FF) | ((int64_t)(((b >> 10) & 0x1F) != 0) << 10); s = (b >> 15) & 1; break;
    case F_BF16: m = (b & 0x7F) | ((int64_t)(((b >> 7) & 0xFF) != 0) << 7); s = (b >> 15) & 1; break;
    default: m = (b & 0x7FFFFF) | ((int64_t)(((b >> 23) & 0xFF) != 0) << 23); s = b >> 31; break;
    }
    return (m ^ -s) + s;              /* branch-free negate when s == 1 */
}

static inline int special_kind(int fmt, uint32_t b)
{
    uint32_t frac = fmt == F_FP16 ? (b & 0x3FF) : fmt == F_BF16 ? (b & 0x7F) : (b & 0x7FFFFF);
    uint32_t neg = fmt == F_FP32 ? b >> 31 : (b >> 15) & 1;
    return frac ? K_NAN : (neg ? K_NINF : K_PINF);
}

static inline uint8_t flag_of_kind(int kind)
{
    return kind == K_NAN ? FLAG_NAN : kind == K_PINF ? FLAG_PINF : FLAG_NINF;
}

/* ---- wide exact integers: WIDE_DIGITS signed 32-bit digits with deferred carries ---- */

/* d += v * 2^sh for |v| < 2^63, 0 <= sh < 32 * (WIDE_DIGITS - 2). */
static inline void wide_add_shifted(int64_t *d, int64_t v, int sh)
{
    int k = sh >> 5, o = sh & 31;
    int64_t lo = v & DIGIT_MASK, hi = v >> 32;
    int64_t t = lo << o;              /* < 2^63 */
    int64_t u = hi * ((int64_t)1 << o); /* |u| < 2^62 */
    d[k] += t & DIGIT_MASK;
    d[k + 1] += (t >> 32) + (u & DIGIT_MASK);
    d[k + 2] += u >> 32;
}

static void wide_normalize(int64_t *d)
{
    for (int i = 0; i < WIDE_DIGITS - 1; i++) {
        int64_t c = d[i] >> 32;
        d[i] &= DIGIT_MASK;
        d[i + 1] += c;
    }
}

/* Normalised digits -> 7 uint64 limbs (two's complement, 448 bits). */
static void wide_to_limbs(const int64_t *d, uint64_t *L)
{
    for (int i = 0; i < WIDE_DIGITS / 2; i++)
        L[i] = (uint64_t)(uint32_t)d[2 * i] | ((uint64_t)(uint32_t)d[2 * i + 1] << 32);
}

static inline uint64_t limbs_extract64(const uint64_t *L, int nl, int pos)
{
    int i = pos >> 6, o = pos & 63;
    uint64_t lo = i < nl ? L[i] : 0, hi = i + 1 < nl ? L[i + 1] : 0;
    return o ? (lo >> o) | (hi << (64 - o)) : lo;
}

static inline int limbs_bit(const uint64_t *L, int pos)
{
    return (int)((L[pos >> 6] >> (pos & 63)) & 1);
}

/* Any bit set below position pos? */
static inline int limbs_any_below(const uint64_t *L, int pos)
{
    int i = pos >> 6, o = pos & 63;
    for (int j = 0; j < i; j++)
        if (L[j]) return 1;
    return o ? (L[i] & ((1ull << o) - 1)) != 0 : 0;
}

/* Add the W-bit two's-complement state (limbs) and wraps * 2^W into d. */
static void wide_add_state(int64_t *d, const uint64_t *limbs, int64_t wraps, int width)
{
    for (int i = 0; i < width; i += 32) {
        uint64_t dig = limbs_extract64(limbs, KULISCH_LIMBS, i) & DIGIT_MASK;
        if (width - i < 32) dig &= (1ull << (width - i)) - 1;
        d[i >> 5] += (int64_t)dig;
    }
    if (limbs_bit(limbs, width - 1)) wide_add_shifted(d, -1, width);
    wide_add_shifted(d, wraps, width);
}

/* Normalised true sum -> exported W-bit state, wrap count, overflow flag. */
static void wide_export(const int64_t *d, int width, uint64_t *limbs, int64_t *wraps, uint8_t *flags)
{
    uint64_t L[WIDE_DIGITS / 2];
    wide_to_limbs(d, L);
    int64_t w = (int64_t)limbs_extract64(L, WIDE_DIGITS / 2, width) + limbs_bit(L, width - 1);
    for (int i = 0; i < KULISCH_LIMBS; i++) limbs[i] = L[i];
    if (width < 64 * KULISCH_LIMBS) {     /* sign-extend bit W-1 through the top limb */
        int top = width - 64 * (KULISCH_LIMBS - 1);
        uint64_t mask = (1ull << top) - 1;
        uint64_t x = limbs[KULISCH_LIMBS - 1] & mask;
        if ((x >> (top - 1)) & 1) x |= ~mask;
        limbs[KULISCH_LIMBS - 1] = x;
    }
    *wraps = w;
    if (w) *flags |= FLAG_OVF; else *flags &= (uint8_t)~FLAG_OVF;
}

/* ---- rounding ---- */

static uint32_t canonical_nan(int fmt)
{
    switch (fmt) {
    case F_INT8: return 0x80;
    case F_FP16: return 0x7E00;
    case F_BF16: return 0x7FC0;
    default: return 0x7FC00000u;
    }
}

static uint32_t infinity_bits(int fmt, int neg)
{
    switch (fmt) {
    case F_INT8: return neg ? 0x80 : 0x7F;
    case F_FP16: return neg ? 0xFC00 : 0x7C00;
    case F_BF16: return neg ? 0xFF80 : 0x7F80;
    default: return neg ? 0xFF800000u : 0x7F800000u;
    }
}

static uint32_t special_result(int fmt, uint8_t flags, int *is_special)
{
    *is_special = 1;
    if ((flags & FLAG_NAN) || ((flags & FLAG_PINF) && (flags & FLAG_NINF))) return canonical_nan(fmt);
    if (flags & FLAG_PINF) return infinity_bits(fmt, 0);
    if (flags & FLAG_NINF) return infinity_bits(fmt, 1);
    *is_special = 0;
    return 0;
}

/* Round a normalised exact value (units of 2^-149) to fmt. */
static uint32_t wide_round(int fmt, const int64_t *d)
{
    uint64_t L[WIDE_DIGITS / 2];
    const int nl = WIDE_DIGITS / 2;
    wide_to_limbs(d, L);
    int neg = d[WIDE_DIGITS - 1] < 0;
    if (neg) {                               /* magnitude: two's-complement negate */
        unsigned carry = 1;
        for (int i = 0; i < nl; i++) {
            uint64_t x = ~L[i] + carry;
            carry = carry && x == 0;
            L[i] = x;
        }
    }
    int p = -1;
    for (int i = nl - 1; i >= 0; i--)
        if (L[i]) { p = 64 * i + 63 - __builtin_clzll(L[i]); break; }
    if (p < 0) return 0;                     /* exact zero -> +0 */

    if (fmt == F_INT8) {
        if (p >= 149 + 8) return neg ? 0x80 : 0x7F;
        int64_t n = (int64_t)(limbs_extract64(L, nl, 149) & 0x1FF);
        if (limbs_bit(L, 148) && (limbs_any_below(L, 148) || (n & 1))) n++;
        int64_t v = neg ? -n : n;
        if (v > 127) v = 127;
        if (v < -128) v = -128;
        return (uint32_t)v & 0xFF;
    }
    int mbits, emin, emax, sign_pos;
    switch (fmt) {
    case F_FP16: mbits = 10; emin = -14; emax = 15; sign_pos = 15; break;
    case F_BF16: mbits = 7; emin = -126; emax = 127; sign_pos = 15; break;
    default: mbits = 23; emin = -126; emax = 127; sign_pos = 31; break;
    }
    uint32_t sign = (uint32_t)neg << sign_pos;
    int e = p - 149;
    if (e > emax) return sign | infinity_bits(fmt, 0);
    if (e < emin) e = emin;
    int sh = e - mbits + 149;                /* >= 0 for every format */
    uint64_t n = limbs_extract64(L, nl, sh) & ((1ull << (mbits + 1)) - 1);
    if (sh > 0 && limbs_bit(L, sh - 1) && ((sh > 1 && limbs_any_below(L, sh - 1)) || (n & 1))) n++;
    if (n >> (mbits + 1)) { n >>= 1; e++; }
    if (e > emax) return sign | infinity_bits(fmt, 0);
    if (n >> mbits) return sign | ((uint32_t)(e + emax) << mbits) | (uint32_t)(n & ((1ull << mbits) - 1));
    return sign | (uint32_t)n;               /* subnormal, or a zero of the value's sign */
}

static int check_fmt(int fmt) { return fmt >= F_INT8 && fmt <= F_FP32; }
static int check_width(int w) { return w == 280 || w == 320; }

/* ---- Kulisch: C x E reduction ---- */

/* Tables for the reduction's hot loop, indexed by sign and exponent field
 * together (the pattern shifted right by the fraction width): the hidden bit
 * (bit 31 marks an inf/NaN exponent), the signed scale +/-2^(LSB offset in
 * its 32-bit digit) -- 0 for inf/NaN, so specials add nothing -- and the
 * digit row offset inside acc. */
#define NSE 512
typedef struct {
    uint32_t hidden[NSE];
    int64_t scale[NSE];
    uint32_t offset[NSE];
} term_tables;

#define SPECIAL_MARK 0x80000000u

static void make_tables(int fmt, term_tables *t)
{
    int mbits = fmt == F_FP16 ? 10 : fmt == F_BF16 ? 7 : 23;
    int ebits = fmt == F_FP16 ? 5 : 8;
    for (int se = 0; se < NSE; se++) {
        int e = se & ((1 << ebits) - 1);
        int neg = (se >> ebits) & 1;
        int sh = bin_shift(fmt, e);
        int sp = is_special_bin(fmt, e);
        t->hidden[se] = sp ? SPECIAL_MARK : e ? 1u << mbits : 0;
        t->scale[se] = sp ? 0 : (neg ? -1 : 1) * ((int64_t)1 << (sh & 31));
        t->offset[se] = (uint32_t)(sh >> 5) * COL_BLOCK;
    }
}

int kulisch_reduce(int in_fmt, const void *data, size_t rows, size_t cols, int width,
                   uint64_t *out_limbs, int64_t *out_wraps, uint8_t *out_flags)
{
    if (!check_fmt(in_fmt)) return -1;
    if (!check_width(width)) return -2;
    if (rows > KULISCH_MAX_ROWS) return -3;
    /* acc: one RMW per term -- the whole shifted significand (< 2^55) goes into
     * the digit holding its LSB; digits overlap, so they are folded into the
     * carry-deferred `hold` every FOLD_ROWS rows, before they could overflow
     * (with rows <= FOLD_ROWS, `hold` is never touched: it stays out of L1). */
    int64_t acc[ACC_DIGITS * COL_BLOCK];   /* digit-major: acc[digit * COL_BLOCK + column]; on the stack (TLS addressing is slower) */
    int64_t hold[COL_BLOCK][ACC_DIGITS];
    uint8_t fl[COL_BLOCK];
    term_tables tab;
    make_tables(in_fmt, &tab);
    for (size_t c0 = 0; c0 < cols; c0 += COL_BLOCK) {
        size_t nc = cols - c0 < COL_BLOCK ? cols - c0 : COL_BLOCK;
        const int folds = rows > FOLD_ROWS;
        const int fmt_bytes = in_fmt == F_INT8 ? 1 : in_fmt == F_FP32 ? 4 : 2;
        if (folds) memset(hold, 0, sizeof hold);
        memset(acc, 0, sizeof acc);           /* also the result when rows == 0 */
        memset(fl, 0, sizeof fl);
        for (size_t r0 = 0; r0 < rows; r0 += FOLD_ROWS) {
            size_t r1 = rows - r0 < FOLD_ROWS ? rows : r0 + FOLD_ROWS;
            if (r0) memset(acc, 0, sizeof acc);
            for (size_t r = r0; r < r1; r++) {
                unsigned any_special = 0;
                if (r + PREFETCH_ROWS < rows) {    /* rows are far apart: start the later row's lines early */
                    const char *next = (const char *)data + ((r + PREFETCH_ROWS) * cols + c0) * (size_t)fmt_bytes;
                    for (size_t off = 0; off < nc * (size_t)fmt_bytes; off += 64) __builtin_prefetch(next + off);
                }
                if (in_fmt == F_INT8) {
                    const int8_t *row = (const int8_t *)data + r * cols + c0;
                    for (size_t c = 0; c < nc; c++) acc[(149 >> 5) * COL_BLOCK + c] += (int64_t)row[c] * ((int64_t)1 << (149 & 31));
                    continue;
                }
#define REDUCE_ROW(T, FRAC_BITS)                                                      \
                {                                                                     \
                    const T *row = (const T *)data + r * cols + c0;                   \
                    for (size_t c = 0; c < nc; c++) {                                 \
                        uint32_t b = row[c];                                          \
                        uint32_t se = b >> FRAC_BITS;                                 \
                        uint32_t h = tab.hidden[se];                                  \
                        int64_t m = (b & ((1u << FRAC_BITS) - 1)) | h;                \
                        any_special |= h;                                             \
                        acc[tab.offset[se] + c] += m * tab.scale[se];                 \
                    }                                                                 \
                }
                switch (in_fmt) {
                case F_FP16: REDUCE_ROW(uint16_t, 10) break;
                case F_BF16: REDUCE_ROW(uint16_t, 7) break;
                default: REDUCE_ROW(uint32_t, 23) break;
                }
#undef REDUCE_ROW
                if (any_special & SPECIAL_MARK)   /* rare: classify this row's specials */
                    for (size_t c = 0; c < nc; c++) {
                        uint32_t b = load_bits(in_fmt, data, r * cols + c0 + c);
                        if (is_special_bin(in_fmt, bin_of(in_fmt, b))) fl[c] |= flag_of_kind(special_kind(in_fmt, b));
                    }
            }
            for (size_t c = 0; folds && c < nc; c++)
                for (int i = 0; i + 1 < ACC_DIGITS; i++) {
                    hold[c][i] += acc[i * COL_BLOCK + c] & DIGIT_MASK;
                    hold[c][i + 1] += acc[i * COL_BLOCK + c] >> 32;
                }
        }
        for (size_t c = 0; c < nc; c++) {
            int64_t d[WIDE_DIGITS] = {0};
            /* acc digits are < 2^63 in magnitude: normalising them cannot overflow */
            for (int i = 0; i < ACC_DIGITS; i++) d[i] = folds ? hold[c][i] : acc[i * COL_BLOCK + c];
            wide_normalize(d);
            out_flags[c0 + c] = fl[c];
            wide_export(d, width, out_limbs + (c0 + c) * KULISCH_LIMBS, out_wraps + c0 + c, out_flags + c0 + c);
        }
    }
    return 0;
}

/* ---- Kulisch: one long sequence ---- */

int kulisch_accumulate(int in_fmt, const void *data, size_t n, int width,
                       uint64_t *limbs, int64_t *wraps, uint8_t *flags)
{
    if (!check_fmt(in_fmt)) return -1;
    if (!check_width(width)) return -2;
    int64_t d[WIDE_DIGITS] = {0};
    wide_add_state(d, limbs, *wraps, width);
    uint8_t fl = *flags & (FLAG_NAN | FLAG_PINF | FLAG_NINF);
    int64_t bins[BANKS * NBINS];
    for (size_t i0 = 0; i0 < n; i0 += FLUSH_TERMS) {
        size_t i1 = n - i0 < FLUSH_TERMS ? n : i0 + FLUSH_TERMS;
        memset(bins, 0, sizeof bins);
#define ACC_SEQ(FMT)                                                              \
        {                                                                         \
            size_t i = i0;                                                        \
            for (; i + BANKS <= i1; i += BANKS) {                                 \
                for (int k = 0; k < BANKS; k++) {                                 \
                    uint32_t b = load_bits(FMT, data, i + k);                     \
                    int e = bin_of(FMT, b);                                       \
                    if (__builtin_expect(is_special_bin(FMT, e), 0))              \
                        fl |= flag_of_kind(special_kind(FMT, b));                 \
                    else                                                          \
                        bins[k * NBINS + e] += signed_mant(FMT, b);               \
                }                                                                 \
            }                                                                     \
            for (; i < i1; i++) {                                                 \
                uint32_t b = load_bits(FMT, data, i);                             \
                int e = bin_of(FMT, b);                                           \
                if (is_special_bin(FMT, e)) fl |= flag_of_kind(special_kind(FMT, b)); \
                else bins[e] += signed_mant(FMT, b);                              \
            }                                                                     \
        }
        switch (in_fmt) {
        case F_INT8: ACC_SEQ(F_INT8) break;
        case F_FP16: ACC_SEQ(F_FP16) break;
        case F_BF16: ACC_SEQ(F_BF16) break;
        default: ACC_SEQ(F_FP32) break;
        }
#undef ACC_SEQ
        for (int e = 0; e < NBINS; e++) {
            int64_t s = 0;
            for (int k = 0; k < BANKS; k++) s += bins[k * NBINS + e];
            if (s) wide_add_shifted(d, s, bin_shift(in_fmt, e));
        }
        wide_normalize(d);     /* keeps digits small between flushes */
    }
    wide_normalize(d);
    *flags = fl;
    wide_export(d, width, limbs, wraps, flags);
    return 0;
}

int kulisch_round(int out_fmt, int width, const uint64_t *limbs, const int64_t *wraps,
                  const uint8_t *flags, size_t n, uint32_t *out_bits)
{
    if (!check_fmt(out_fmt)) return -1;
    if (!check_width(width)) return -2;
    for (size_t i = 0; i < n; i++) {
        int sp;
        uint32_t r = special_result(out_fmt, flags[i], &sp);
        if (!sp) {
            int64_t d[WIDE_DIGITS] = {0};
            wide_add_state(d, limbs + i * KULISCH_LIMBS, wraps[i], width);
            wide_normalize(d);
            r = wide_round(out_fmt, d);
        }
        out_bits[i] = r;
    }
    return 0;
}

/* ---- FP32 ---- */

static inline float f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t bits_from_f32(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

/* Exact conversion of a pattern to FP32 (NaN -> canonical NaN). */
static inline uint32_t to_fp32_bits(int fmt, uint32_t b)
{
    switch (fmt) {
    case F_INT8: return bits_from_f32((float)(int8_t)b);
    case F_FP16: {
        uint32_t s = (b >> 15) << 31, e = (b >> 10) & 0x1F, m = b & 0x3FF;
        if (e == 0x1F) return m ? 0x7FC00000u : s | 0x7F800000u;
        if (e == 0) return s | bits_from_f32((float)m * 0x1p-24f);   /* exact: m < 2^10 */
        return s | ((e + 112) << 23) | (m << 13);
    }
    case F_BF16:
        if ((b & 0x7F80) == 0x7F80 && (b & 0x7F)) return 0x7FC00000u;
        return b << 16;
    default:
        if ((b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFF)) return 0x7FC00000u;
        return b;
    }
}

uint32_t fp32_add_bits(uint32_t a, uint32_t b)
{
    float r = f32_from_bits(a) + f32_from_bits(b);
    return r != r ? 0x7FC00000u : bits_from_f32(r);
}

int fp32_arrival_reduce(int in_fmt, const void *data, size_t rows, size_t cols, uint32_t *out_fp32)
{
    if (!check_fmt(in_fmt)) return -1;
    if (rows == 0) return -3;
    float acc[COL_BLOCK], row[COL_BLOCK];
    for (size_t c0 = 0; c0 < cols; c0 += COL_BLOCK) {
        size_t nc = cols - c0 < COL_BLOCK ? cols - c0 : COL_BLOCK;
        for (size_t c = 0; c < nc; c++) acc[c] = f32_from_bits(to_fp32_bits(in_fmt, load_bits(in_fmt, data, c0 + c)));
        for (size_t r = 1; r < rows; r++) {
            const float *x = row;
            if (in_fmt == F_FP32)     /* FP32 patterns are floats already: add them in place */
                x = (const float *)((const uint32_t *)data + r * cols + c0);
            else
                for (size_t c = 0; c < nc; c++) row[c] = f32_from_bits(to_fp32_bits(in_fmt, load_bits(in_fmt, data, r * cols + c0 + c)));
            for (size_t c = 0; c < nc; c++) acc[c] += x[c];    /* one IEEE add per element, in row order */
        }
        for (size_t c = 0; c < nc; c++) out_fp32[c0 + c] = acc[c] != acc[c] ? 0x7FC00000u : bits_from_f32(acc[c]);
    }
    return 0;
}

static uint32_t fp32_round_one(int fmt, uint32_t b)
{
    if (fmt == F_FP32) return ((b & 0x7F800000u) == 0x7F800000u && (b & 0x7FFFFF)) ? 0x7FC00000u : b;
    int e = (b >> 23) & 0xFF, neg = b >> 31;
    if (e == 0xFF) return (b & 0x7FFFFF) ? canonical_nan(fmt) : infinity_bits(fmt, neg);
    if ((b & 0x7FFFFFFF) == 0) return (fmt == F_INT8 || !neg) ? 0 : (uint32_t)1 << 15;
    int64_t d[WIDE_DIGITS] = {0};
    wide_add_shifted(d, signed_mant(F_FP32, b), bin_shift(F_FP32, e));
    wide_normalize(d);
    return wide_round(fmt, d);
}

int fp32_to_format(int out_fmt, const uint32_t *in_fp32, size_t n, uint32_t *out_bits)
{
    if (!check_fmt(out_fmt)) return -1;
    for (size_t i = 0; i < n; i++) out_bits[i] = fp32_round_one(out_fmt, in_fp32[i]);
    return 0;
}

int auto_classify(const uint32_t *in_fp32, size_t n, uint8_t *out_codes, uint32_t *out_bits)
{
    for (size_t t0 = 0; t0 < n; t0 += 16) {
        size_t nt = n - t0 < 16 ? n - t0 : 16;
        int chosen = F_FP32;
        for (int fmt = F_INT8; fmt < F_FP32 && chosen == F_FP32; fmt++) {
            int fits = 1;
            for (size_t i = 0; i < nt && fits; i++) {
                uint32_t b = in_fp32[t0 + i];
                fits = to_fp32_bits(fmt, fp32_round_one(fmt, b)) == b;
            }
            if (fits) chosen = fmt;
        }
        out_codes[t0 / 16] = (uint8_t)chosen;
        for (size_t i = 0; i < nt; i++) out_bits[t0 + i] = fp32_round_one(chosen, in_fp32[t0 + i]);
    }
    return 0;
}

float sum_f32_plain(const float *x, size_t n)
{
    float s = 0.0f;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}
