/* Kulisch exact accumulation, FP32_ARRIVAL fold and rounding: see kulisch.h. */
#include "kulisch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Tunables and assumptions -------------------------------------------
 * Assumes: two's-complement integers with arithmetic >> on signed values
 * (gcc/clang on every supported target); float is IEEE binary32 with the
 * default environment (round to nearest even, no FTZ/DAZ); compiled without
 * -ffast-math (the FP32_ARRIVAL adds must not be re-associated or contracted).
 */
#define WIDE_DIGITS 14          /* exact internal sum: 14 x 32-bit digits = 448 bits, far above any reachable sum */
#define ACC_DIGITS 10           /* digits one term can touch: terms are below 2^278 < 2^320 */
#define FOLD_ROWS 255           /* kulisch_reduce: 255 terms of |v| < 2^55 per digit stay below 2^63 */
#define COL_BLOCK 256           /* columns per cache block in fp32_arrival_reduce */
#define BANKS 4                 /* exponent-bin copies used round-robin: breaks store->load chains on equal exponents */
#define NBINS 256               /* one bin per exponent field value */
#define FLUSH_TERMS (1u << 30)  /* terms per bin flush: |bin| < 2^24 * 2^30, far from int64 overflow */
#define DIGIT_MASK 0xFFFFFFFFll

/* Protocol constants come from prism_spec.h (generated from spec/); short names for this file. */
enum { F_INT8 = PRISM_FMT_INT8, F_FP16 = PRISM_FMT_FP16, F_BF16 = PRISM_FMT_BF16, F_FP32 = PRISM_FMT_FP32 };
enum { K_FINITE = 0, K_NAN = 1, K_PINF = 2, K_NINF = 3 };
enum { FLAG_NAN = PRISM_FLAG_NAN, FLAG_PINF = PRISM_FLAG_POS_INF, FLAG_NINF = PRISM_FLAG_NEG_INF,
       FLAG_OVF = PRISM_FLAG_OVERFLOW };
#define LSB_SHIFT PRISM_KULISCH_LSB_SHIFT   /* bit of 2^0: a finite value's integer term is value * 2^LSB_SHIFT */

#define INLINE static inline __attribute__((always_inline))

/* Layout of a float format (fmt one of F_FP16, F_BF16, F_FP32). */
#define OF_FLOAT(fmt, NAME) ((fmt) == F_FP16 ? PRISM_##NAME##_FP16 : (fmt) == F_BF16 ? PRISM_##NAME##_BF16 : PRISM_##NAME##_FP32)
INLINE int frac_bits_of(const int fmt) { return OF_FLOAT(fmt, FRAC_BITS); }
INLINE uint32_t frac_mask_of(const int fmt) { return OF_FLOAT(fmt, FRAC_MASK); }
INLINE uint32_t emask_of(const int fmt) { return OF_FLOAT(fmt, EXP_MASK); }
INLINE int bias_of(const int fmt) { return OF_FLOAT(fmt, BIAS); }
INLINE int sign_bit_of(const int fmt) { return OF_FLOAT(fmt, SIGN_BIT); }
#undef OF_FLOAT

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
    case F_FP16: return (b >> PRISM_FRAC_BITS_FP16) & PRISM_EXP_MASK_FP16;
    case F_BF16: return (b >> PRISM_FRAC_BITS_BF16) & PRISM_EXP_MASK_BF16;
    default: return (b >> PRISM_FRAC_BITS_FP32) & PRISM_EXP_MASK_FP32;
    }
}

static inline int bin_shift(int fmt, int e)
{
    int ee = e ? e : 1;               /* subnormals share the smallest normal's scale */
    switch (fmt) {                    /* a float is m * 2^(e - bias - fraction bits), m its integer significand */
    case F_INT8: return LSB_SHIFT;
    case F_FP16: return ee - PRISM_BIAS_FP16 - PRISM_FRAC_BITS_FP16 + LSB_SHIFT;
    case F_BF16: return ee - PRISM_BIAS_BF16 - PRISM_FRAC_BITS_BF16 + LSB_SHIFT;
    default: return ee - PRISM_BIAS_FP32 - PRISM_FRAC_BITS_FP32 + LSB_SHIFT;
    }
}

static inline int is_special_bin(int fmt, int e)
{
    switch (fmt) {
    case F_INT8: return 0;
    case F_FP16: return e == PRISM_EXP_MASK_FP16;
    case F_BF16: return e == PRISM_EXP_MASK_BF16;
    default: return e == PRISM_EXP_MASK_FP32;
    }
}

/* Signed integer significand of a finite pattern. */
static inline int64_t signed_mant(int fmt, uint32_t b)
{
    int64_t m, s;
    switch (fmt) {
    case F_INT8: return (int8_t)b;
    case F_FP16: m = (b & PRISM_FRAC_MASK_FP16) | ((int64_t)(bin_of(fmt, b) != 0) << PRISM_FRAC_BITS_FP16); break;
    case F_BF16: m = (b & PRISM_FRAC_MASK_BF16) | ((int64_t)(bin_of(fmt, b) != 0) << PRISM_FRAC_BITS_BF16); break;
    default: m = (b & PRISM_FRAC_MASK_FP32) | ((int64_t)(bin_of(fmt, b) != 0) << PRISM_FRAC_BITS_FP32); break;
    }
    s = (b >> sign_bit_of(fmt)) & 1;
    return (m ^ -s) + s;              /* branch-free negate when s == 1 */
}

static inline int special_kind(int fmt, uint32_t b)
{
    uint32_t frac = b & frac_mask_of(fmt);
    uint32_t neg = (b >> sign_bit_of(fmt)) & 1;
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
    case F_INT8: return PRISM_NAN_INT8;
    case F_FP16: return PRISM_NAN_FP16;
    case F_BF16: return PRISM_NAN_BF16;
    default: return PRISM_NAN_FP32;
    }
}

static uint32_t infinity_bits(int fmt, int neg)
{
    switch (fmt) {
    case F_INT8: return neg ? PRISM_NEG_INF_INT8 : PRISM_POS_INF_INT8;
    case F_FP16: return neg ? PRISM_NEG_INF_FP16 : PRISM_POS_INF_FP16;
    case F_BF16: return neg ? PRISM_NEG_INF_BF16 : PRISM_POS_INF_BF16;
    default: return neg ? PRISM_NEG_INF_FP32 : PRISM_POS_INF_FP32;
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

/* Round a magnitude held in nl uint64 limbs (units of 2^-149) to fmt, with the
 * value's sign `neg`.  Zero -> +0. */
static uint32_t round_magnitude(int fmt, const uint64_t *L, int nl, int neg)
{
    int p = -1;
    for (int i = nl - 1; i >= 0; i--)
        if (L[i]) { p = 64 * i + 63 - __builtin_clzll(L[i]); break; }
    if (p < 0) return 0;                     /* exact zero -> +0 */

    if (fmt == F_INT8) {
        if (p >= LSB_SHIFT + 8) return infinity_bits(fmt, neg);     /* |value| >= 2^8: saturates */
        int64_t n = (int64_t)(limbs_extract64(L, nl, LSB_SHIFT) & 0x1FF);
        if (limbs_bit(L, LSB_SHIFT - 1) && (limbs_any_below(L, LSB_SHIFT - 1) || (n & 1))) n++;
        int64_t v = neg ? -n : n;
        if (v > INT8_MAX) v = INT8_MAX;
        if (v < INT8_MIN) v = INT8_MIN;
        return (uint32_t)(uint8_t)v;
    }
    const int mbits = frac_bits_of(fmt), emax = bias_of(fmt), emin = 1 - emax;
    uint32_t sign = (uint32_t)neg << sign_bit_of(fmt);
    int e = p - LSB_SHIFT;
    if (e > emax) return sign | infinity_bits(fmt, 0);
    if (e < emin) e = emin;
    int sh = e - mbits + LSB_SHIFT;          /* >= 0 for every format */
    uint64_t n = limbs_extract64(L, nl, sh) & ((1ull << (mbits + 1)) - 1);
    if (sh > 0 && limbs_bit(L, sh - 1) && ((sh > 1 && limbs_any_below(L, sh - 1)) || (n & 1))) n++;
    if (n >> (mbits + 1)) { n >>= 1; e++; }
    if (e > emax) return sign | infinity_bits(fmt, 0);
    if (n >> mbits) return sign | ((uint32_t)(e + emax) << mbits) | (uint32_t)(n & ((1ull << mbits) - 1));
    return sign | (uint32_t)n;               /* subnormal, or a zero of the value's sign */
}

/* Round a normalised exact value (units of 2^-149, wide digits) to fmt. */
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
    return round_magnitude(fmt, L, nl, neg);
}

/* ---- 320-bit true sums: KULISCH_LIMBS uint64 limbs, two's complement ----
 * A C x E reduction of at most KULISCH_MAX_ROWS = 2^30 rows has |true sum| <
 * 2^30 * 2^277 = 2^307 (units of 2^-149), so 320 signed bits hold it exactly. */
typedef unsigned __int128 u128;

/* T += v * 2^sh (mod 2^320), 0 <= sh < 320.  Branch-free: the addend's limbs
 * are selected, then one carry chain. */
static inline void limbs_add_shifted(uint64_t *T, int64_t v, int sh)
{
    int k = sh >> 6, o = sh & 63;
    u128 x = (u128)((__int128)v * ((__int128)1 << o));   /* |v| < 2^63: fits 127 bits */
    uint64_t lo = (uint64_t)x, hi = (uint64_t)(x >> 64), ext = (uint64_t)(v >> 63);
    u128 c = 0;
    for (int j = 0; j < KULISCH_LIMBS; j++) {
        uint64_t a = j < k ? 0 : j == k ? lo : j == k + 1 ? hi : ext;
        c += (u128)T[j] + a;
        T[j] = (uint64_t)c;
        c >>= 64;
    }
}

/* A double that is an exact multiple of 2^-149 as (integer m, shift sh >= 0): v = m * 2^(sh-149). */
static inline int double_to_term(double v, int64_t *m)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    int e = (int)((b >> 52) & 0x7FF);
    int64_t x = (int64_t)((b & 0xFFFFFFFFFFFFFull) | (1ull << 52));
    if (b >> 63) x = -x;
    int sh = e - 1075 + LSB_SHIFT;           /* a double is M * 2^(e - 1075) */
    if (sh < 0) { x >>= -sh; sh = 0; }       /* exact: the dropped bits are zeros */
    *m = x;
    return sh;
}

static inline void limbs_add_double(uint64_t *T, double v)
{
    if (v != 0.0) {
        int64_t m;
        int sh = double_to_term(v, &m);
        limbs_add_shifted(T, m, sh);
    }
}

static inline void wide_add_double(int64_t *d, double v)
{
    if (v != 0.0) {
        int64_t m;
        int sh = double_to_term(v, &m);
        wide_add_shifted(d, m, sh);
    }
}

/* The top limb of a column's state for `width`: the state sign-extended from bit
 * W-1 and its wraps, floor((T + 2^(W-1)) / 2^W), from the exact sum's limb T4. */
INLINE void limbs_top(uint64_t *t4, int64_t *wraps, const int width)
{
    const int top = width - 64 * (KULISCH_LIMBS - 1);
    *wraps = 0;
    if (top < 64) {
        const uint64_t mask = (1ull << top) - 1, t = *t4;
        *wraps = ((int64_t)t >> (top & 63)) + (int64_t)((t >> ((top - 1) & 63)) & 1);
        uint64_t x = t & mask;
        *t4 = ((x >> ((top - 1) & 63)) & 1) ? x | ~mask : x;
    }
}

/* True sum T (|T| < 2^319) -> exported W-bit state, wrap count, overflow flag. */
static inline void limbs_export(const uint64_t *T, int width, uint64_t *limbs, int64_t *wraps, uint8_t *flags)
{
    for (int i = 0; i < KULISCH_LIMBS; i++) limbs[i] = T[i];
    limbs_top(&limbs[KULISCH_LIMBS - 1], wraps, width);
    if (*wraps) *flags |= FLAG_OVF; else *flags &= (uint8_t)~FLAG_OVF;
}

/* Round a signed 320-bit value T (units of 2^-149) to fmt. */
static inline uint32_t limbs_round(int fmt, const uint64_t *T)
{
    uint64_t L[KULISCH_LIMBS];
    int neg = (int64_t)T[KULISCH_LIMBS - 1] < 0;
    u128 c = neg;
    for (int i = 0; i < KULISCH_LIMBS; i++) {
        c += neg ? ~T[i] : T[i];
        L[i] = (uint64_t)c;
        c >>= 64;
    }
    return round_magnitude(fmt, L, KULISCH_LIMBS, neg);
}

static int check_fmt(int fmt) { return fmt >= F_INT8 && fmt <= F_FP32; }
static int check_width(int w) { return w == PRISM_KULISCH_W280 || w == PRISM_KULISCH_W320; }

/* ---- Kulisch: the exact float64 fast path ---------------------------------
 *
 * Every finite FP32/BF16/FP16 value converts exactly to a double.  A chunk of
 * n <= 2^g values (one column of a block, g >= 1) whose magnitudes are below
 * 2^B and which are all multiples of 2^U is summed EXACTLY by plain double
 * adds when B + g - U <= 53: every partial sum is a multiple of 2^U below
 * 2^(B+g) <= 2^(53+U) in magnitude, so it is representable and no add rounds.
 *
 * A wider column is split into levels (error-free extraction, as in Rump,
 * Ogita and Oishi's AccSum): with k = B + g + 2 and sigma = 1.5 * 2^k, the
 * accumulator a starts at sigma and for each x
 *     t = a + x;  q = t - a;  r = x - q;  a = t;
 * Since |sum so far| + |x| < (2^g + 1)(2^B + 2^(k-53)) < 2^(k-1), a and t stay
 * in [2^k, 2^(k+1)), where doubles are multiples of u = 2^(k-52): t - a is
 * exact (Sterbenz), q is x rounded to a multiple of u, and r = x - q is exact
 * (the bits of x below u: at most as many as x has) with |r| <= u/2 = 2^(k-53).
 * a - sigma is the exact sum of the q's.  The remainders r form the next level
 * with B' = k - 53 = B - (51 - g); the last level is a plain double sum, exact
 * by the first paragraph.  So a column needs L = 1 + ceil(max(0, B + g - U - 53)
 * / (51 - g)) levels: 1 when its exponents span at most 53 - g - (fraction
 * bits + 1) binades (always for FP16), 2 for a span of up to 51 - 2g + 53 - ...
 * (e.g. 64 FP32 values spread over 2^-30 .. 2^30 need 2).  Chunks that need
 * more than MAX_LEVELS levels, or hold an inf/NaN, take the integer path.
 * The level sums are exact doubles, multiples of 2^-149, added into the
 * integer state without rounding: the result is the true sum, bit for bit. */
#define LANES KULISCH_LANES             /* columns per block; a long sequence is read as rows of LANES lanes */
#define CHUNK_ROWS KULISCH_CHUNK_ROWS   /* rows per chunk (g = 8; at most FOLD_ROWS for the integer path) */
#define MAX_LEVELS 3
#define FEW_COLUMNS 8           /* below this many columns (and above CHUNK_ROWS rows) columns go as sequences */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(PRISM_NO_CLONES)
/* one build for every x86-64: the hot loops are compiled for AVX-512, AVX2 and
 * baseline SSE2, and the loader picks the best the CPU has (ifunc) */
#define HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HOT
#endif

static inline float k_f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

INLINE uint32_t load_fmt(const int fmt, const void *data, size_t i)
{
    return fmt == F_FP32 ? ((const uint32_t *)data)[i] : ((const uint16_t *)data)[i];
}

/* Exact conversion of a finite pattern to double. */
INLINE double to_double(const int fmt, uint32_t b)
{
    if (fmt == F_FP32) return (double)k_f32_from_bits(b);
    if (fmt == F_BF16) return (double)k_f32_from_bits(b << 16);
    /* FP16 fields moved into FP32 position give 2^-112 times the value, normal or subnormal alike */
    return (double)k_f32_from_bits(((b & 0x8000u) << 16) | ((b & 0x7FFFu) << 13)) * 0x1p112;
}

/* Per column of rows [r0, r1) x columns [c0, c0 + nc): the largest exponent
 * field, and the smallest exponent field of a nonzero value (emask if none).
 * On magnitude patterns, whose order is the order of the values: the largest
 * magnitude, and the smallest of (magnitude - 1) in the pattern's own unsigned
 * type, where a zero wraps to the type's maximum and so never wins; two
 * min/max per element, in lanes as narrow as the format's patterns. */
#define CHUNK_BOUNDS(TY)                                                                        \
    {                                                                                           \
        TY amax[LANES], amin[LANES];                                                            \
        const TY absmask = (TY)((em << fb) | ((1u << fb) - 1));                                 \
        for (size_t c = 0; c < nc; c++) { amax[c] = 0; amin[c] = (TY)~(TY)0; }                  \
        for (size_t r = r0; r < r1; r++) {                                                      \
            const TY *row = (const TY *)data + r * stride + c0;                                 \
            for (size_t c = 0; c < nc; c++) {                                                   \
                TY a = row[c] & absmask, a1 = (TY)(a - 1);                                      \
                amax[c] = a > amax[c] ? a : amax[c];                                            \
                amin[c] = a1 < amin[c] ? a1 : amin[c];                                          \
            }                                                                                   \
        }                                                                                       \
        for (size_t c = 0; c < nc; c++) {                                                       \
            TY lo = (TY)(amin[c] + 1);                                                          \
            emax[c] = (uint32_t)amax[c] >> fb;                                                  \
            emin[c] = lo ? (uint32_t)lo >> fb : em;                                             \
        }                                                                                       \
    }
INLINE void chunk_exponents(const int fmt, const void *data, size_t stride, size_t r0, size_t r1,
                            size_t c0, size_t nc, uint32_t *emax, uint32_t *emin)
{
    const int fb = frac_bits_of(fmt);
    const uint32_t em = emask_of(fmt);
    if (fmt == F_FP32) CHUNK_BOUNDS(uint32_t) else CHUNK_BOUNDS(uint16_t)
}
#undef CHUNK_BOUNDS

static inline double one_and_half_pow2(int k)   /* 1.5 * 2^k for -1000 < k < 1000 */
{
    uint64_t b = ((uint64_t)(k + 1023) << 52) | (1ull << 51);
    double d;
    memcpy(&d, &b, 8);
    return d;
}

/* Levels the chunk needs (0: it holds an inf/NaN, or more than MAX_LEVELS),
 * and each column's sigma per extraction level: sig[j * LANES + c]. */
INLINE int chunk_levels(const int fmt, size_t nr, size_t nc, const uint32_t *emax, const uint32_t *emin, double *sig)
{
    int g = 1;
    while (((size_t)1 << g) < nr) g++;
    const uint32_t em = emask_of(fmt);
    const int fb = frac_bits_of(fmt), bias = bias_of(fmt);
    const int step = 51 - g;
    int levels = 1, special = 0;
    for (size_t c = 0; c < nc; c++) {
        special |= emax[c] == em;                    /* inf or NaN: the integer path sets the flags */
        int hi = emax[c] ? (int)emax[c] : 1;         /* subnormals share the smallest normal's scale */
        int lo = emin[c] == em ? hi : emin[c] ? (int)emin[c] : 1;
        int B = hi - bias + 1, U = lo - bias - fb;   /* |x| < 2^B, x multiple of 2^U */
        int need = B + g - U - 53;
        int lc = 1 + (need > 0) + (need > step) + (need > 2 * step);    /* 1 + ceil(need / step), capped */
        levels = lc > levels ? lc : levels;
        for (int j = 0; j < MAX_LEVELS - 1; j++) {
            int k = B + g + 2;
            sig[j * LANES + c] = one_and_half_pow2(k);
            B = k - 53;
        }
    }
    return special || levels > MAX_LEVELS ? 0 : levels;
}

/* One extraction step (above): t = a + x; q = t - a; r = x - q; a = t.  Adds to *a
 * the part of x on a's grid and returns the remainder r, both exact. */
INLINE double extract(double *a, double x)
{
    double t = *a + x, q = t - *a;
    *a = t;
    return x - q;
}

/* The exact level sums of rows [r0, r1) x columns [c0, c0 + nc) into
 * sum[j * LANES + c] (levels from chunk_levels). */
INLINE void chunk_sum(const int fmt, const void *data, size_t stride, size_t r0, size_t r1, size_t c0, size_t nc,
                      int levels, const double *sig, double *sum)
{
    /* local accumulators: they cannot alias the input, so they stay in registers */
    double a1[LANES], a2[LANES], a3[LANES];
    const double *s1 = sig, *s2 = sig + LANES;
    /* prefetch: the next block's part of each row while this one is summed (the
     * rows are far apart, more streams than the hardware prefetcher follows) */
    const size_t esize = fmt == F_FP32 ? 4 : 2, pf_lines = nc == LANES && stride > LANES ? LANES * esize / 64 : 0;
#define PREFETCH_NEXT(r) \
    for (size_t l = 0; l < pf_lines; l++) __builtin_prefetch((const char *)data + ((r) * stride + c0 + LANES) * esize + 64 * l)
#define ELEMENT(c) to_double(fmt, load_fmt(fmt, data, base + (c)))
    if (levels == 1) {
        for (size_t c = 0; c < nc; c++) a1[c] = 0.0;
        for (size_t r = r0; r < r1; r++) {
            size_t base = r * stride + c0;
            PREFETCH_NEXT(r);
            for (size_t c = 0; c < nc; c++) a1[c] += ELEMENT(c);
        }
        for (size_t c = 0; c < nc; c++) sum[c] = a1[c];
    } else if (levels == 2) {
        for (size_t c = 0; c < nc; c++) { a1[c] = s1[c]; a2[c] = 0.0; }
        for (size_t r = r0; r < r1; r++) {
            size_t base = r * stride + c0;
            PREFETCH_NEXT(r);
            for (size_t c = 0; c < nc; c++) a2[c] += extract(&a1[c], ELEMENT(c));
        }
        for (size_t c = 0; c < nc; c++) { sum[c] = a1[c] - s1[c]; sum[LANES + c] = a2[c]; }
    } else {
        for (size_t c = 0; c < nc; c++) { a1[c] = s1[c]; a2[c] = s2[c]; a3[c] = 0.0; }
        for (size_t r = r0; r < r1; r++) {
            size_t base = r * stride + c0;
            PREFETCH_NEXT(r);
            for (size_t c = 0; c < nc; c++) a3[c] += extract(&a2[c], extract(&a1[c], ELEMENT(c)));
        }
        for (size_t c = 0; c < nc; c++) { sum[c] = a1[c] - s1[c]; sum[LANES + c] = a2[c] - s2[c]; sum[2 * LANES + c] = a3[c]; }
    }
#undef ELEMENT
#undef PREFETCH_NEXT
}

/* Summary + levels + sums of one chunk; returns the levels (0: take the integer path). */
INLINE int chunk_fast(const int fmt, const void *data, size_t stride, size_t r0, size_t r1, size_t c0, size_t nc,
                      double *sum)
{
    uint32_t emax[LANES], emin[LANES];
    double sig[(MAX_LEVELS - 1) * LANES];
    chunk_exponents(fmt, data, stride, r0, r1, c0, nc, emax, emin);
    int levels = chunk_levels(fmt, r1 - r0, nc, emax, emin, sig);
    if (levels) chunk_sum(fmt, data, stride, r0, r1, c0, nc, levels, sig, sum);
    return levels;
}

HOT static int chunk_fast_any(int fmt, const void *data, size_t stride, size_t r0, size_t r1, size_t c0, size_t nc,
                              double *sum)
{
    if (nc == LANES)     /* a full block: constant trip counts keep the column accumulators in registers */
        switch (fmt) {
        case F_FP16: return chunk_fast(F_FP16, data, stride, r0, r1, c0, LANES, sum);
        case F_BF16: return chunk_fast(F_BF16, data, stride, r0, r1, c0, LANES, sum);
        default: return chunk_fast(F_FP32, data, stride, r0, r1, c0, LANES, sum);
        }
    switch (fmt) {
    case F_FP16: return chunk_fast(F_FP16, data, stride, r0, r1, c0, nc, sum);
    case F_BF16: return chunk_fast(F_BF16, data, stride, r0, r1, c0, nc, sum);
    default: return chunk_fast(F_FP32, data, stride, r0, r1, c0, nc, sum);
    }
}

/* One level sum (an exact double, a multiple of 2^-149) as m * 2^(sh - LSB_SHIFT):
 * m the signed integer significand (|m| < 2^53), sh >= 0 (a sum below 2^-97 has
 * its significand shifted right instead: exact, the dropped bits are zeros). */
INLINE void level_term(const double *v, int64_t *m, int64_t *sh)
{
    uint64_t b;
    memcpy(&b, v, 8);
    int64_t e = (int64_t)((b >> 52) & 0x7FF);
    int64_t x = (int64_t)((b & 0xFFFFFFFFFFFFFull) | (1ull << 52));
    x = (b >> 63) ? -x : x;
    int64_t s = e - 1075 + LSB_SHIFT;            /* the sums are multiples of 2^-149: s >= -52 */
    *m = e ? x >> (s < 0 ? -s : 0) : 0;
    *sh = s < 0 ? 0 : s;
}

/* All ones when cond holds, else zero: selects as masks keep loops branch-free. */
#define MASK(cond) ((uint64_t)0 - (uint64_t)(cond))

/* m * 2^d as a signed 128-bit word (hi, lo), for -63 <= d <= 127 - (bits of m);
 * d < 0 shifts right (exact where the dropped bits are zeros). */
INLINE void shifted128(int64_t m, int64_t d, uint64_t *lo, uint64_t *hi)
{
    int64_t n = d < 0 ? -d : 0, p = d > 0 ? d : 0;
    int64_t r = m >> (n & 63);
    uint64_t p0 = MASK(p == 0), small = MASK(p < 64);
    *lo = ((uint64_t)r << (p & 63)) & small;
    *hi = ((uint64_t)(r >> 63) & p0)
        | ((uint64_t)(r >> ((64 - p) & 63)) & small & ~p0)
        | (((uint64_t)r << ((p - 64) & 63)) & ~small);
}

/* Each column's exact sum of its level sums, exported for `width`.  Element-wise
 * over the columns, so it vectorises like the sums.
 *
 * One or two levels: the column's sum is one 128-bit integer at a bit offset of
 * its own.  chunk_levels gave two levels only where the column's terms span
 * need = B + g - U - 53 <= 51 - g binades (|x| < 2^B, every x a multiple of
 * 2^U, 2^g >= rows), so every bit of the two level sums lies in [U, B + g]
 * (level 1 is a multiple of 2^(B+g-50), level 2 of 2^U): at most 105 - g bits.
 * Each significand's top, sh + 53, is at most B + g + 1, so the offset
 * base = max(0, top - 126), top the larger of the two, is at most U: no set bit
 * lies below it, and both terms and their sum fit in a signed 128-bit word from
 * there.  That word becomes three limbs at the offset, zeros below, sign fill
 * above.
 *
 * Three levels span more than 128 bits: one 320-bit addend per level (limb k
 * gets the low 64 bits of m * 2^(sh - 64k), or m >> (64k - sh) with sign
 * fill), added limb by limb with carries. */
INLINE void levels_export_n(const double *sum, int levels, size_t nc, int width,
                            uint64_t *out_limbs, int64_t *out_wraps, uint8_t *out_flags)
{
    uint64_t limb[KULISCH_LIMBS][LANES];
    int64_t m[MAX_LEVELS][LANES], sh[MAX_LEVELS][LANES];
    for (int j = 0; j < levels; j++)
        for (size_t c = 0; c < nc; c++) level_term(sum + j * LANES + c, &m[j][c], &sh[j][c]);
    if (levels <= 2) {
        if (levels == 1)
            for (size_t c = 0; c < nc; c++) { m[1][c] = 0; sh[1][c] = 0; }
        for (size_t c = 0; c < nc; c++) {
            int64_t m1 = m[0][c], s1 = sh[0][c], m2 = m[1][c], s2 = sh[1][c];
            int64_t t1 = m1 ? s1 + 53 : 0, t2 = m2 ? s2 + 53 : 0;
            int64_t top = t1 > t2 ? t1 : t2;
            int64_t base = top > 126 ? top - 126 : 0;
            /* m * 2^(sh - base) as (hi, lo): sh - base in [-52, 73] for a nonzero m */
            uint64_t lo1, hi1, lo2, hi2;
            shifted128(m1, s1 - base, &lo1, &hi1);
            shifted128(m2, s2 - base, &lo2, &hi2);
            uint64_t lo = lo1 + lo2, hi = hi1 + hi2 + (lo < lo1);
            /* the 128-bit word at bit base: limbs kb, kb + 1, kb + 2; zeros below, sign fill above
             * (masks, not branches: the loop vectorises) */
            int64_t kb = base >> 6, o = base & 63;
            uint64_t o0 = MASK(o == 0), fill = (uint64_t)((int64_t)hi >> 63);
            uint64_t w0 = lo << o;
            uint64_t w1 = (hi & o0) | (((lo >> ((64 - o) & 63)) | (hi << o)) & ~o0);
            uint64_t w2 = (fill & o0) | ((uint64_t)((int64_t)hi >> ((64 - o) & 63)) & ~o0);
            for (int k = 0; k < KULISCH_LIMBS; k++)
                limb[k][c] = (w0 & MASK(k == kb)) | (w1 & MASK(k == kb + 1)) | (w2 & MASK(k == kb + 2))
                           | (fill & MASK(k > kb + 2));
        }
    } else {
        uint64_t carry[LANES], acc[LANES], cy[LANES];
        for (size_t c = 0; c < nc; c++) carry[c] = 0;
        for (int k = 0; k < KULISCH_LIMBS; k++) {
            for (size_t c = 0; c < nc; c++) { acc[c] = carry[c]; cy[c] = 0; }
            for (int j = 0; j < levels; j++)
                for (size_t c = 0; c < nc; c++) {
                    int64_t d = sh[j][c] - 64 * k;
                    int64_t r = -d > 63 ? 63 : -d;
                    uint64_t p = d >= 64 ? 0 : d >= 0 ? (uint64_t)m[j][c] << (d & 63) : (uint64_t)(m[j][c] >> (r & 63));
                    acc[c] += p;
                    cy[c] += acc[c] < p;
                }
            for (size_t c = 0; c < nc; c++) { limb[k][c] = acc[c]; carry[c] = cy[c]; }
        }
    }
    for (size_t c = 0; c < nc; c++) {
        uint64_t t4 = limb[KULISCH_LIMBS - 1][c];
        int64_t w;
        limbs_top(&t4, &w, width);
        for (int k = 0; k < KULISCH_LIMBS - 1; k++) out_limbs[c * KULISCH_LIMBS + k] = limb[k][c];
        out_limbs[c * KULISCH_LIMBS + KULISCH_LIMBS - 1] = t4;
        out_wraps[c] = w;
        out_flags[c] = w ? FLAG_OVF : 0;
    }
}

HOT static void levels_export(const double *sum, int levels, size_t nc, int width,
                              uint64_t *out_limbs, int64_t *out_wraps, uint8_t *out_flags)
{
    if (nc == LANES)       /* a full block: constant level counts unroll the level loops */
        switch (levels) {
        case 1: levels_export_n(sum, 1, LANES, width, out_limbs, out_wraps, out_flags); return;
        case 2: levels_export_n(sum, 2, LANES, width, out_limbs, out_wraps, out_flags); return;
        default: levels_export_n(sum, 3, LANES, width, out_limbs, out_wraps, out_flags); return;
        }
    levels_export_n(sum, levels, nc, width, out_limbs, out_wraps, out_flags);
}

/* INT8: exact int32 column sums of rows [r0, r1) (r1 - r0 <= 2^24: |sum| <= 2^31). */
HOT static void int8_column_sums(const int8_t *data, size_t stride, size_t r0, size_t r1, size_t c0, size_t nc,
                                 int32_t *sum)
{
    for (size_t c = 0; c < nc; c++) sum[c] = 0;
    for (size_t r = r0; r < r1; r++)
        for (size_t c = 0; c < nc; c++) sum[c] += data[r * stride + c0 + c];
}

#define INT8_CHUNK ((size_t)1 << 24)

HOT static int32_t int8_sum(const int8_t *x, size_t n)   /* n <= INT8_CHUNK */
{
    int32_t s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}

/* ---- Kulisch: the integer path (any input, specials) ----
 * Tables for its hot loop, indexed by sign and exponent field together (the
 * pattern shifted right by the fraction width): the hidden bit (bit 31 marks
 * an inf/NaN exponent), the signed scale +/-2^(LSB offset in its 32-bit
 * digit) -- 0 for inf/NaN, so specials add nothing -- and the digit row
 * offset inside acc. */
#define NSE 512
typedef struct {
    uint32_t hidden[NSE];
    int64_t scale[NSE];
    uint32_t offset[NSE];
} term_tables;

#define SPECIAL_MARK 0x80000000u

static void make_tables(int fmt, term_tables *t)
{
    const int mbits = frac_bits_of(fmt), ebits = sign_bit_of(fmt) - mbits;
    for (int se = 0; se < NSE; se++) {
        int e = se & (int)emask_of(fmt);
        int neg = (se >> ebits) & 1;
        int sh = bin_shift(fmt, e);
        int sp = is_special_bin(fmt, e);
        t->hidden[se] = sp ? SPECIAL_MARK : e ? 1u << mbits : 0;
        t->scale[se] = sp ? 0 : (neg ? -1 : 1) * ((int64_t)1 << (sh & 31));
        t->offset[se] = (uint32_t)(sh >> 5) * LANES;
    }
}

/* Rows [r0, r1) (at most FOLD_ROWS) x columns [c0, c0 + nc) of a float format
 * into the columns' true sums T[c] (320-bit), flags into fl[c].  One RMW per
 * term: the whole shifted significand (< 2^55) goes into the 32-bit digit
 * holding its LSB; 255 of them stay below 2^63. */
static void chunk_integer(int fmt, const term_tables *tab, const void *data, size_t stride, size_t r0, size_t r1,
                          size_t c0, size_t nc, uint64_t (*T)[KULISCH_LIMBS], uint8_t *fl)
{
    int64_t acc[ACC_DIGITS * LANES];
    memset(acc, 0, sizeof acc);
    for (size_t r = r0; r < r1; r++) {
        unsigned any_special = 0;
#define REDUCE_ROW(TY, FRAC_BITS)                                                     \
        {                                                                             \
            const TY *row = (const TY *)data + r * stride + c0;                       \
            for (size_t c = 0; c < nc; c++) {                                         \
                uint32_t b = row[c];                                                  \
                uint32_t se = b >> FRAC_BITS;                                         \
                uint32_t h = tab->hidden[se];                                         \
                int64_t m = (b & ((1u << FRAC_BITS) - 1)) | h;                        \
                any_special |= h;                                                     \
                acc[tab->offset[se] + c] += m * tab->scale[se];                       \
            }                                                                         \
        }
        switch (fmt) {
        case F_FP16: REDUCE_ROW(uint16_t, PRISM_FRAC_BITS_FP16) break;
        case F_BF16: REDUCE_ROW(uint16_t, PRISM_FRAC_BITS_BF16) break;
        default: REDUCE_ROW(uint32_t, PRISM_FRAC_BITS_FP32) break;
        }
#undef REDUCE_ROW
        if (any_special & SPECIAL_MARK)   /* rare: classify this row's specials */
            for (size_t c = 0; c < nc; c++) {
                uint32_t b = load_bits(fmt, data, r * stride + c0 + c);
                if (is_special_bin(fmt, bin_of(fmt, b))) fl[c] |= flag_of_kind(special_kind(fmt, b));
            }
    }
    for (size_t c = 0; c < nc; c++)
        for (int i = 0; i < ACC_DIGITS; i++)
            if (acc[i * LANES + c]) limbs_add_shifted(T[c], acc[i * LANES + c], 32 * i);
}

/* ---- Kulisch: one long sequence into wide digits ---- */

/* Terms [i0, i1) by exponent bins (the general path: any input, specials). */
static void seq_bins(int fmt, const void *data, size_t i0, size_t i1, int64_t *d, uint8_t *flags)
{
    int64_t bins[BANKS * NBINS];
    uint8_t fl = *flags;
    for (size_t j0 = i0; j0 < i1; j0 += FLUSH_TERMS) {
        size_t j1 = i1 - j0 < FLUSH_TERMS ? i1 : j0 + FLUSH_TERMS;
        memset(bins, 0, sizeof bins);
#define ACC_SEQ(FMT)                                                              \
        {                                                                         \
            size_t i = j0;                                                        \
            for (; i + BANKS <= j1; i += BANKS) {                                 \
                for (int k = 0; k < BANKS; k++) {                                 \
                    uint32_t b = load_bits(FMT, data, i + k);                     \
                    int e = bin_of(FMT, b);                                       \
                    if (__builtin_expect(is_special_bin(FMT, e), 0))              \
                        fl |= flag_of_kind(special_kind(FMT, b));                 \
                    else                                                          \
                        bins[k * NBINS + e] += signed_mant(FMT, b);               \
                }                                                                 \
            }                                                                     \
            for (; i < j1; i++) {                                                 \
                uint32_t b = load_bits(FMT, data, i);                             \
                int e = bin_of(FMT, b);                                           \
                if (is_special_bin(FMT, e)) fl |= flag_of_kind(special_kind(FMT, b)); \
                else bins[e] += signed_mant(FMT, b);                              \
            }                                                                     \
        }
        switch (fmt) {
        case F_INT8: ACC_SEQ(F_INT8) break;
        case F_FP16: ACC_SEQ(F_FP16) break;
        case F_BF16: ACC_SEQ(F_BF16) break;
        default: ACC_SEQ(F_FP32) break;
        }
#undef ACC_SEQ
        for (int e = 0; e < NBINS; e++) {
            int64_t s = 0;
            for (int k = 0; k < BANKS; k++) s += bins[k * NBINS + e];
            if (s) wide_add_shifted(d, s, bin_shift(fmt, e));
        }
        wide_normalize(d);     /* keeps digits small between flushes */
    }
    *flags = fl;
}

/* Add n terms into the wide digits d (normalised on return); specials into *flags. */
static void seq_accumulate(int fmt, const void *data, size_t n, int64_t *d, uint8_t *flags)
{
    size_t i = 0;
    if (fmt == F_INT8) {
        for (; i < n; i += INT8_CHUNK)
            wide_add_shifted(d, int8_sum((const int8_t *)data + i, n - i < INT8_CHUNK ? n - i : INT8_CHUNK), LSB_SHIFT);
        wide_normalize(d);
        return;
    }
    const size_t block = (size_t)CHUNK_ROWS * LANES;   /* the block as CHUNK_ROWS rows of LANES lanes */
    double sum[MAX_LEVELS * LANES];
    for (; i + block <= n; i += block) {
        const void *p = (const char *)data + i * (fmt == F_FP32 ? 4 : 2);
        int levels = chunk_fast_any(fmt, p, LANES, 0, CHUNK_ROWS, 0, LANES, sum);
        if (!levels) {
            seq_bins(fmt, data, i, i + block, d, flags);
            continue;
        }
        for (int j = 0; j < levels; j++)
            for (int c = 0; c < LANES; c++) wide_add_double(d, sum[j * LANES + c]);
        wide_normalize(d);
    }
    seq_bins(fmt, data, i, n, d, flags);
}

/* ---- rounding straight from float64 level sums ----
 * The exact sum of two level sums s1 + s2 is hi + lo with hi = RN53(s1 + s2),
 * |lo| <= ulp53(hi)/2 (TwoSum, exact).  Rounding |hi| to a format's grid:
 * with n the kept bits and rem the dropped ones (in units of ulp53(hi)),
 * rem < half or rem > half leaves the true sum on hi's side of the midpoint
 * (|lo| cannot cross a whole ulp53), rem == half is decided by lo's sign (a
 * tie, RNE, when lo == 0).  Same result as rounding the exact sum once. */
static inline __attribute__((always_inline)) uint32_t round_pair(const int fmt, double hi, double lo)
{
    uint64_t b;
    memcpy(&b, &hi, 8);
    int neg = (int)(b >> 63), E = (int)((b >> 52) & 0x7FF);
    if (E == 0) return 0;                    /* hi == 0: the sum is exactly zero -> +0 */
    uint64_t M = (b & 0xFFFFFFFFFFFFFull) | (1ull << 52);
    int l = (lo != 0.0) * (((lo > 0.0) != neg) ? 1 : -1);    /* the residual's sign against |hi| */
    int e2 = E - 1075;                       /* |hi| = M * 2^e2 */
    if (fmt == F_INT8) {
        int t = -e2;
        if (t <= 0) return infinity_bits(fmt, neg);   /* |hi| >= 2^52: saturates */
        if (t > 60) return 0;                    /* |hi| < 2^-7 */
        uint64_t n = M >> t, rem = M & ((1ull << t) - 1), half = 1ull << (t - 1);
        n += (rem > half) | ((rem == half) & ((l > 0) | ((l == 0) & (int)(n & 1))));
        int64_t v = neg ? -(int64_t)n : (int64_t)n;
        return (uint32_t)(uint8_t)(v > INT8_MAX ? INT8_MAX : v < INT8_MIN ? INT8_MIN : v);
    }
    const int mbits = frac_bits_of(fmt), emax = bias_of(fmt), emin = 1 - emax;
    uint32_t sign = (uint32_t)neg << sign_bit_of(fmt);
    int e = E - 1023;
    e = e < emin ? emin : e;
    int t = (e - mbits) - e2;                /* >= 52 - mbits > 0 */
    if (t > 60) return sign;                 /* far below half a quantum: a zero of the sum's sign */
    uint64_t n = M >> t, rem = M & ((1ull << t) - 1), half = 1ull << (t - 1);
    n += (rem > half) | ((rem == half) & ((l > 0) | ((l == 0) & (int)(n & 1))));
    int carry = (int)(n >> (mbits + 1));
    n >>= carry;
    e += carry;
    if (e > emax) return sign | infinity_bits(fmt, 0);
    return (n >> mbits) ? sign | ((uint32_t)(e + emax) << mbits) | (uint32_t)(n & ((1ull << mbits) - 1))
                        : sign | (uint32_t)n;     /* subnormal, or a zero of the sum's sign */
}

/* One exported state (W-bit limbs, wraps, flags) rounded to fmt. */
static inline uint32_t round_state(int fmt, int width, const uint64_t *limbs, int64_t wraps, uint8_t flags)
{
    int sp;
    uint32_t r = special_result(fmt, flags, &sp);
    if (sp) return r;
    if (wraps) {                             /* |true sum| >= 2^(W-1-149) >= 2^130: beyond every format */
        return infinity_bits(fmt, wraps < 0);     /* INT8 saturates */
    }
    const int top = width - 64 * (KULISCH_LIMBS - 1);
    const uint64_t mask = top == 64 ? ~0ull : (1ull << top) - 1;
    uint64_t T[KULISCH_LIMBS];
    memcpy(T, limbs, sizeof T);
    uint64_t x = T[KULISCH_LIMBS - 1] & mask;        /* the state's bits below W, sign-extended */
    if ((x >> (top - 1)) & 1) x |= ~mask;
    T[KULISCH_LIMBS - 1] = x;
    return limbs_round(fmt, T);
}

/* Columns [0, nc) of a block whose level sums (1 to 3 levels) are in sum:
 * rounded bits, wraps and flags (no specials: the fast path had none).  Two
 * levels are one TwoSum pair.  Three: (a, b) = TwoSum(s2, s3), (hi, c) =
 * TwoSum(s1, a), the exact sum is hi + c + b; lo = fl(c + b) keeps its sign,
 * and when hi + lo == hi (|lo| <= ulp53(hi)/2) the pair argument holds for
 * (hi, lo); otherwise (deep cancellation) the exact state decides. */
_Static_assert(PRISM_KULISCH_W280 - 1 - LSB_SHIFT >= 130, "a sum below 2^130 wraps neither width");

/* Column c's level sums (1 to 3) as a pair: (a, b) = TwoSum(s2, s3), (hi, c) = TwoSum(s1, a),
 * lo = fl(c + b). */
INLINE void level_pair(const double *sum, int levels, size_t c, double *hi, double *lo)
{
    double s1 = sum[c], s2 = levels >= 2 ? sum[LANES + c] : 0.0, s3 = levels == 3 ? sum[2 * LANES + c] : 0.0;
    double a = s2 + s3, av = a - s2, b = (s2 - (a - av)) + (s3 - av);        /* TwoSum */
    double h = s1 + a, hv = h - s1, cc = (s1 - (h - hv)) + (a - hv);         /* TwoSum */
    *hi = h;
    *lo = cc + b;
}

static inline __attribute__((always_inline)) void
levels_round_fmt(const int fmt, const double *sum, int levels, size_t nc, int width,
                 uint32_t *out_bits, int64_t *out_wraps, uint8_t *out_flags)
{
    double hi[LANES], lo[LANES];
    for (size_t c = 0; c < nc; c++) {
        level_pair(sum, levels, c, &hi[c], &lo[c]);
    }
    for (size_t c = 0; c < nc; c++) {
        if (fabs(hi[c]) < 0x1p129 && hi[c] + lo[c] == hi[c]) {   /* |sum| < 2^130: no wrap at either width */
            out_bits[c] = round_pair(fmt, hi[c], lo[c]);
            out_wraps[c] = 0;
            out_flags[c] = 0;
        } else {                              /* near the 280-bit range, or cancellation: the exact state decides */
            uint64_t T[KULISCH_LIMBS] = {0}, limbs[KULISCH_LIMBS];
            for (int j = 0; j < levels; j++) limbs_add_double(T, sum[j * LANES + c]);
            out_flags[c] = 0;
            limbs_export(T, width, limbs, out_wraps + c, out_flags + c);
            out_bits[c] = round_state(fmt, width, limbs, out_wraps[c], out_flags[c]);
        }
    }
}

/* FP32 results of a full block.  For a pair (hi, lo) with hi + lo == hi and hi in FP32's
 * normal range below 2^127, the hardware's conversion of hi is the rounded sum, except where
 * hi is itself an FP32 midpoint (its 29 fraction bits below FP32's are 1000...0) and lo is
 * not zero: then the sum lies beyond the midpoint, one unit of the pattern towards lo.
 * Element-wise over the columns (it vectorises); the other columns go through
 * levels_round_fmt's own rule. */
INLINE void levels_round_fp32_block(const double *sum, int levels, int width,
                                    uint32_t *out_bits, int64_t *out_wraps, uint8_t *out_flags)
{
    uint8_t general[LANES];
    int any_general = 0;
    for (size_t c = 0; c < LANES; c++) {
        double h, l;
        level_pair(sum, levels, c, &h, &l);
        double mag = fabs(h);
        int fast = (h + l == h) & (mag >= 0x1p-126) & (mag < 0x1p127);
        float f = (float)h;
        uint32_t fb;
        uint64_t hb;
        memcpy(&fb, &f, 4);
        memcpy(&hb, &h, 8);
        int midpoint = (hb & 0x1FFFFFFFull) == 0x10000000ull;
        int rounded_up = fabs((double)f) > mag;                          /* |f| above |h| */
        int toward_out = (l > 0.0) == (h > 0.0);                         /* lo pushes |sum| up */
        uint32_t step = (uint32_t)(midpoint & (l != 0.0));
        out_bits[c] = fb + (step & (uint32_t)((!rounded_up) & toward_out)) - (step & (uint32_t)(rounded_up & (!toward_out)));
        out_wraps[c] = 0;
        out_flags[c] = 0;
        general[c] = (uint8_t)!fast;
        any_general |= !fast;
    }
    if (any_general) {
        for (size_t c = 0; c < LANES; c++)
            if (general[c]) {
                double one[MAX_LEVELS * LANES] = {0};
                for (int j = 0; j < levels; j++) one[j * LANES] = sum[j * LANES + c];
                levels_round_fmt(F_FP32, one, levels, 1, width, out_bits + c, out_wraps + c, out_flags + c);
            }
    }
}

HOT static void levels_round(int fmt, const double *sum, int levels, size_t nc, int width,
                             uint32_t *out_bits, int64_t *out_wraps, uint8_t *out_flags)
{
    if (nc == LANES && fmt == F_FP32) {       /* a full block (the common case: constant trip counts) */
        switch (levels) {
        case 1: levels_round_fp32_block(sum, 1, width, out_bits, out_wraps, out_flags); return;
        case 2: levels_round_fp32_block(sum, 2, width, out_bits, out_wraps, out_flags); return;
        default: levels_round_fp32_block(sum, 3, width, out_bits, out_wraps, out_flags); return;
        }
    }
    switch (fmt) {                            /* one loop per format: its grid is a constant */
    case F_INT8: levels_round_fmt(F_INT8, sum, levels, nc, width, out_bits, out_wraps, out_flags); break;
    case F_FP16: levels_round_fmt(F_FP16, sum, levels, nc, width, out_bits, out_wraps, out_flags); break;
    case F_BF16: levels_round_fmt(F_BF16, sum, levels, nc, width, out_bits, out_wraps, out_flags); break;
    default: levels_round_fmt(F_FP32, sum, levels, nc, width, out_bits, out_wraps, out_flags); break;
    }
}

/* ---- Kulisch entry points ---- */

int kulisch_chunk_levels(int in_fmt, const void *data, size_t rows, size_t cols)
{
    if (in_fmt != F_FP16 && in_fmt != F_BF16 && in_fmt != F_FP32) return -1;
    if (rows < 1 || rows > CHUNK_ROWS || cols < 1 || cols > LANES) return -3;
    uint32_t emax[LANES], emin[LANES];
    double sig[(MAX_LEVELS - 1) * LANES];
    switch (in_fmt) {
    case F_FP16:
        chunk_exponents(F_FP16, data, cols, 0, rows, 0, cols, emax, emin);
        return chunk_levels(F_FP16, rows, cols, emax, emin, sig);
    case F_BF16:
        chunk_exponents(F_BF16, data, cols, 0, rows, 0, cols, emax, emin);
        return chunk_levels(F_BF16, rows, cols, emax, emin, sig);
    default:
        chunk_exponents(F_FP32, data, cols, 0, rows, 0, cols, emax, emin);
        return chunk_levels(F_FP32, rows, cols, emax, emin, sig);
    }
}


/* The reduction; out_fmt < 0: exact states into out_limbs, else rounded bits into out_bits. */
static int reduce_impl(int in_fmt, int out_fmt, const void *data, size_t rows, size_t cols, int width,
                       uint64_t *out_limbs, uint32_t *out_bits, int64_t *out_wraps, uint8_t *out_flags)
{
    if (!check_fmt(in_fmt) || (out_fmt >= 0 && !check_fmt(out_fmt))) return -1;
    if (!check_width(width)) return -2;
    if (rows > KULISCH_MAX_ROWS) return -3;
    uint64_t tmp_limbs[LANES * KULISCH_LIMBS];
    const int rounding = out_fmt >= 0;
    if (cols == 1 || (cols < FEW_COLUMNS && rows > CHUNK_ROWS)) {
        /* one column is one long sequence; a few long columns are gathered, block
         * by block, into one and summed as sequences too (their chunks would fill
         * only a few of the LANES) */
        const size_t esize = in_fmt == F_FP32 ? 4 : in_fmt == F_INT8 ? 1 : 2;
        const size_t block = (size_t)CHUNK_ROWS * LANES;
        unsigned char *buf = cols == 1 ? NULL : malloc(block * esize);
        if (cols > 1 && !buf) return -4;
        for (size_t j = 0; j < cols; j++) {
            int64_t d[WIDE_DIGITS] = {0};
            uint8_t fl = 0;
            uint64_t *limbs = rounding ? tmp_limbs : out_limbs + j * KULISCH_LIMBS;
            if (cols == 1) {
                seq_accumulate(in_fmt, data, rows, d, &fl);
            } else {
                for (size_t r0 = 0; r0 < rows; r0 += block) {
                    size_t m = rows - r0 < block ? rows - r0 : block;
                    const size_t at = r0 * cols + j;
                    if (esize == 4)
                        for (size_t i = 0; i < m; i++) ((uint32_t *)buf)[i] = ((const uint32_t *)data)[at + i * cols];
                    else if (esize == 2)
                        for (size_t i = 0; i < m; i++) ((uint16_t *)buf)[i] = ((const uint16_t *)data)[at + i * cols];
                    else
                        for (size_t i = 0; i < m; i++) buf[i] = ((const uint8_t *)data)[at + i * cols];
                    seq_accumulate(in_fmt, buf, m, d, &fl);
                }
            }
            out_flags[j] = fl;
            wide_export(d, width, limbs, out_wraps + j, out_flags + j);
            if (rounding) out_bits[j] = round_state(out_fmt, width, limbs, out_wraps[j], out_flags[j]);
        }
        free(buf);
        return 0;
    }
    uint64_t T[LANES][KULISCH_LIMBS];
    uint8_t fl[LANES];
    double sum[MAX_LEVELS * LANES];
    int32_t isum[LANES];
    term_tables tab;
    int have_tables = 0;
    for (size_t c0 = 0; c0 < cols; c0 += LANES) {
        size_t nc = cols - c0 < LANES ? cols - c0 : LANES;
        int levels = 0;
        if (in_fmt == F_INT8 && rows <= INT8_CHUNK) {   /* one int32 sum per column: exact as one double level */
            int8_column_sums((const int8_t *)data, cols, 0, rows, c0, nc, isum);
            for (size_t c = 0; c < nc; c++) sum[c] = (double)isum[c];
            levels = 1;
        } else if (in_fmt != F_INT8 && rows <= CHUNK_ROWS) {   /* one chunk: results straight from the level sums */
            levels = chunk_fast_any(in_fmt, data, cols, 0, rows, c0, nc, sum);
        }
        if (levels) {
            if (rounding) {
                levels_round(out_fmt, sum, levels, nc, width, out_bits + c0, out_wraps + c0, out_flags + c0);
                continue;
            }
            uint64_t *limbs = rounding ? tmp_limbs : out_limbs + c0 * KULISCH_LIMBS;
            levels_export(sum, levels, nc, width, limbs, out_wraps + c0, out_flags + c0);
            for (size_t c = 0; rounding && c < nc; c++)
                out_bits[c0 + c] = round_state(out_fmt, width, limbs + c * KULISCH_LIMBS, out_wraps[c0 + c],
                                               out_flags[c0 + c]);
            continue;
        }
        memset(T, 0, sizeof T);
        memset(fl, 0, sizeof fl);
        if (in_fmt == F_INT8) {
            for (size_t r0 = 0; r0 < rows; r0 += INT8_CHUNK) {
                size_t r1 = rows - r0 < INT8_CHUNK ? rows : r0 + INT8_CHUNK;
                int8_column_sums((const int8_t *)data, cols, r0, r1, c0, nc, isum);
                for (size_t c = 0; c < nc; c++) limbs_add_shifted(T[c], isum[c], LSB_SHIFT);
            }
        } else {
            for (size_t r0 = 0; r0 < rows; r0 += CHUNK_ROWS) {
                size_t r1 = rows - r0 < CHUNK_ROWS ? rows : r0 + CHUNK_ROWS;
                int levels = chunk_fast_any(in_fmt, data, cols, r0, r1, c0, nc, sum);
                if (levels) {
                    for (int j = 0; j < levels; j++)
                        for (size_t c = 0; c < nc; c++) limbs_add_double(T[c], sum[j * LANES + c]);
                } else {
                    if (!have_tables) { make_tables(in_fmt, &tab); have_tables = 1; }
                    chunk_integer(in_fmt, &tab, data, cols, r0, r1, c0, nc, T, fl);
                }
            }
        }
        for (size_t c = 0; c < nc; c++) {
            uint64_t *limbs = rounding ? tmp_limbs : out_limbs + (c0 + c) * KULISCH_LIMBS;
            out_flags[c0 + c] = fl[c];
            limbs_export(T[c], width, limbs, out_wraps + c0 + c, out_flags + c0 + c);
            if (rounding) out_bits[c0 + c] = round_state(out_fmt, width, limbs, out_wraps[c0 + c], out_flags[c0 + c]);
        }
    }
    return 0;
}

int kulisch_reduce(int in_fmt, const void *data, size_t rows, size_t cols, int width,
                   uint64_t *out_limbs, int64_t *out_wraps, uint8_t *out_flags)
{
    return reduce_impl(in_fmt, -1, data, rows, cols, width, out_limbs, NULL, out_wraps, out_flags);
}

int kulisch_reduce_round(int in_fmt, int out_fmt, const void *data, size_t rows, size_t cols, int width,
                         uint32_t *out_bits, int64_t *out_wraps, uint8_t *out_flags)
{
    return reduce_impl(in_fmt, out_fmt, data, rows, cols, width, NULL, out_bits, out_wraps, out_flags);
}

int kulisch_accumulate(int in_fmt, const void *data, size_t n, int width,
                       uint64_t *limbs, int64_t *wraps, uint8_t *flags)
{
    if (!check_fmt(in_fmt)) return -1;
    if (!check_width(width)) return -2;
    int64_t d[WIDE_DIGITS] = {0};
    wide_add_state(d, limbs, *wraps, width);
    uint8_t fl = *flags & (FLAG_NAN | FLAG_PINF | FLAG_NINF);
    seq_accumulate(in_fmt, data, n, d, &fl);
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
    for (size_t i = 0; i < n; i++) out_bits[i] = round_state(out_fmt, width, limbs + i * KULISCH_LIMBS, wraps[i], flags[i]);
    return 0;
}

/* ---- FP32 ---- */

static inline float f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t bits_from_f32(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

/* A float pattern's magnitude above +inf's: a NaN. */
static inline int is_nan_bits(int fmt, uint32_t b)
{
    return (b & (((uint32_t)1 << sign_bit_of(fmt)) - 1)) > (emask_of(fmt) << frac_bits_of(fmt));
}

/* Exact conversion of a pattern to FP32 (NaN -> canonical NaN). */
static inline uint32_t to_fp32_bits(int fmt, uint32_t b)
{
    switch (fmt) {
    case F_INT8: return bits_from_f32((float)(int8_t)b);
    case F_FP16: {
        uint32_t s = (b >> PRISM_SIGN_BIT_FP16) << PRISM_SIGN_BIT_FP32, e = bin_of(F_FP16, b), m = b & PRISM_FRAC_MASK_FP16;
        if (e == PRISM_EXP_MASK_FP16) return m ? PRISM_NAN_FP32 : s | PRISM_POS_INF_FP32;
        if (e == 0) return s | bits_from_f32((float)m * 0x1p-24f);   /* exact: m < 2^10, subnormal weight 2^-24 */
        return s | ((e - PRISM_BIAS_FP16 + PRISM_BIAS_FP32) << PRISM_FRAC_BITS_FP32)
                 | (m << (PRISM_FRAC_BITS_FP32 - PRISM_FRAC_BITS_FP16));
    }
    case F_BF16:
        if (is_nan_bits(F_BF16, b)) return PRISM_NAN_FP32;
        return b << 16;                       /* BF16 is FP32's top half */
    default:
        return is_nan_bits(F_FP32, b) ? PRISM_NAN_FP32 : b;
    }
}

uint32_t fp32_add_bits(uint32_t a, uint32_t b)
{
    float r = f32_from_bits(a) + f32_from_bits(b);
    return r != r ? PRISM_NAN_FP32 : bits_from_f32(r);
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
        for (size_t c = 0; c < nc; c++) out_fp32[c0 + c] = acc[c] != acc[c] ? PRISM_NAN_FP32 : bits_from_f32(acc[c]);
    }
    return 0;
}

static uint32_t fp32_round_one(int fmt, uint32_t b)
{
    if (fmt == F_FP32) return is_nan_bits(F_FP32, b) ? PRISM_NAN_FP32 : b;
    int e = bin_of(F_FP32, b), neg = b >> PRISM_SIGN_BIT_FP32;
    if (e == PRISM_EXP_MASK_FP32) return (b & PRISM_FRAC_MASK_FP32) ? canonical_nan(fmt) : infinity_bits(fmt, neg);
    if ((b & ~((uint32_t)1 << PRISM_SIGN_BIT_FP32)) == 0)     /* a float zero keeps its sign */
        return (fmt == F_INT8 || !neg) ? 0 : (uint32_t)1 << sign_bit_of(fmt);
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
