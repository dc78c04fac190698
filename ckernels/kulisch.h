/* Kulisch exact accumulation, FP32_ARRIVAL fold and result rounding for the
 * PRISM reduction golden model (C, called through cffi).
 *
 * Number formats (format codes PRISM_FMT_* of prism_spec.h): 0 INT8 (two's
 * complement), 1 FP16 (IEEE binary16), 2 BF16 (bfloat16), 3 FP32 (IEEE binary32).  Inputs are raw
 * bit patterns held in uint8_t / uint16_t / uint32_t arrays by format.
 *
 * Kulisch state: a W-bit two's-complement fixed-point number, W = 320 or 280,
 * LSB weight 2^-149 (PRISM_KULISCH_LSB_EXP).  Exported as KULISCH_LIMBS uint64_t limbs per element,
 * limb 0 least significant, sign-extended from bit W-1 to 320 bits.  Beside
 * it: a signed net wrap count (the true sum = state + wraps * 2^W; overflow
 * <=> wraps != 0) and flags (bit0 NaN seen, bit1 +inf seen, bit2 -inf seen,
 * bit3 overflow).  Internally sums are exact (320-bit for a C x E reduction,
 * whose rows are bounded; 448-bit for a sequence of any length), so results
 * do not depend on the order of terms; the wrap count is the one a W-bit
 * register with a net wrap counter would hold after adding the terms in any
 * order.  Chunks whose exponent spread allows it are summed exactly in
 * float64 (kulisch.c states the bound); the others, and any chunk with an
 * inf/NaN, by integer digits.  Both give the true sum, bit for bit.
 *
 * Rounding (kulisch_round, *_to_format): round to nearest, ties to even,
 * floats overflow to +/-inf and keep subnormals, INT8 saturates to
 * [-128, 127].  Specials first: NaN seen, or +inf and -inf both seen ->
 * canonical NaN (PRISM_NAN_*: FP32 0x7FC00000, FP16 0x7E00, BF16 0x7FC0, INT8 0x80);
 * otherwise an infinity -> +/-inf (INT8 127 / -128).  An exact zero -> +0; a
 * non-zero value too small for the format -> zero with the value's sign.
 *
 * FP32_ARRIVAL: per element, the first row's value converted exactly to FP32,
 * then one IEEE binary32 add (RNE, no FTZ/DAZ) per later row in row order;
 * every NaN result becomes 0x7FC00000.
 *
 * All functions return 0 on success, a negative code on bad arguments:
 * -1 unknown format, -2 width not 280/320, -3 too many rows (> KULISCH_MAX_ROWS),
 * -4 out of memory.
 * Arrays must not overlap.  Sizes are element counts.
 */
#ifndef PRISM_KULISCH_H
#define PRISM_KULISCH_H

#include <stddef.h>
#include <stdint.h>

#include "prism_spec.h"     /* format codes, LSB exponent, canonical specials (generated from spec/) */

#define KULISCH_LIMBS 5
#define KULISCH_MAX_ROWS 1073741824
#define KULISCH_LANES 64
#define KULISCH_CHUNK_ROWS 255

/* Reduce a rows x cols row-major array of `in_fmt` patterns over the rows:
 * out_limbs[cols * KULISCH_LIMBS], out_wraps[cols], out_flags[cols]. */
int kulisch_reduce(int in_fmt, const void *data, size_t rows, size_t cols, int width,
                   uint64_t *out_limbs, int64_t *out_wraps, uint8_t *out_flags);

/* The same reduction rounded once to out_fmt: out_bits[cols] (patterns as in
 * kulisch_round), out_wraps[cols], out_flags[cols]; bit-identical to
 * kulisch_reduce followed by kulisch_round, without the states in between. */
int kulisch_reduce_round(int in_fmt, int out_fmt, const void *data, size_t rows, size_t cols, int width,
                         uint32_t *out_bits, int64_t *out_wraps, uint8_t *out_flags);

/* Accumulate one long sequence of n patterns into ONE state, which is read
 * and updated in place (limbs[KULISCH_LIMBS], *wraps, *flags); start from
 * zeros for a fresh sum.  Sequences of any length (chunked internally). */
int kulisch_accumulate(int in_fmt, const void *data, size_t n, int width,
                       uint64_t *limbs, int64_t *wraps, uint8_t *flags);

/* Which path a chunk of a float format takes (for tests of the fast path's
 * boundaries): for a rows x cols array, 1 <= rows <= KULISCH_CHUNK_ROWS,
 * 1 <= cols <= KULISCH_LANES, the number of exact float64 levels it is summed
 * in (1..3), or 0 for the integer path (an inf/NaN, or a wider exponent
 * spread).  kulisch_reduce cuts its input into such chunks: KULISCH_LANES
 * columns by up to KULISCH_CHUNK_ROWS rows, and a long sequence into
 * KULISCH_CHUNK_ROWS x KULISCH_LANES blocks read row-major. */
int kulisch_chunk_levels(int in_fmt, const void *data, size_t rows, size_t cols);

/* Round n states (limbs, wraps, flags as above) once to out_fmt. */
int kulisch_round(int out_fmt, int width, const uint64_t *limbs, const int64_t *wraps,
                  const uint8_t *flags, size_t n, uint32_t *out_bits);

/* FP32_ARRIVAL over the rows of a rows x cols array (rows >= 1): out[cols] FP32 patterns. */
int fp32_arrival_reduce(int in_fmt, const void *data, size_t rows, size_t cols, uint32_t *out_fp32);

/* One binary32 add on patterns, canonical NaN. */
uint32_t fp32_add_bits(uint32_t a, uint32_t b);

/* Round n FP32 patterns to out_fmt (NaN -> canonical NaN; float zeros keep their sign). */
int fp32_to_format(int out_fmt, const uint32_t *in_fp32, size_t n, uint32_t *out_bits);

/* AUTO: for each 16-element tile of n FP32 patterns, the narrowest lossless
 * format code (0..3, order INT8 < FP16 < BF16 < FP32) into
 * out_codes[ceil(n/16)], and each element's bits in its tile's format. */
int auto_classify(const uint32_t *in_fp32, size_t n, uint8_t *out_codes, uint32_t *out_bits);

/* Benchmark baseline: the plain sequential float32 loop sum x[0] + ... + x[n-1]. */
float sum_f32_plain(const float *x, size_t n);

#endif
