/* ecmp.c -- see ecmp.h for types, widths and invariants.
 *
 * ---- tunables and assumptions --------------------------------------------
 * TUPLE_BYTES   13: the canonical serialisation length; the position tables
 *               below are specific to it.
 * Position tables: for a fixed length every hash here is affine over GF(2),
 *   H(x) = H(0) ^ XOR_i T_i[x_i], T_i[v] = H(v at byte i, 0 elsewhere) ^ H(0);
 *   H(0) is folded into T_0 (one register fewer in the hot loops).
 *   13 independent lookups (13 KiB of uint32 per hash, L1-resident) replace
 *   the dependent chain of a byte-wise CRC.  They are derived in C from this
 *   file's own slicing-by-8 CRC-32, byte-table CRC-16 and the Toeplitz key.
 * Byte planes + GF(2) affine maps (x86-64 with AVX-512BW and GFNI, chosen at
 *   run time): the same linear map, applied 64 flows at a time.  The 13 bytes
 *   of 64 flows are cut into 13 planes of 64 bytes; output byte j of the hash
 *   is XOR_p A_pj * plane_p, where A_pj is the 8x8 bit matrix of T_p's
 *   contribution to byte j (one GF2P8AFFINEQB per position and output byte:
 *   52 for a 32-bit hash, per 64 flows).  The matrices are derived from the
 *   position tables, so both paths compute one function.
 * Binning: HIST_COPIES interleaved histograms (flow i counts into copy i % 4),
 *   so flows that land on the same bin back to back do not wait on each
 *   other's increments; the copies are summed at the end.
 * Little-endian host assumed by the slicing-by-8 word loads (x86-64, AArch64).
 * -------------------------------------------------------------------------- */
#include "ecmp.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_GFNI_PATH 1
#else
#define HAVE_GFNI_PATH 0
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ecmp.c: the slicing-by-8 word loads assume a little-endian host"
#endif

#define TUPLE_BYTES 13

static const uint8_t MS_RSS_KEY[40] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
    0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
    0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
    0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

static uint32_t crc32_slice[8][256];
static uint16_t crc16_table[256];
static uint32_t pos_table[3][TUPLE_BYTES][256];   /* H(0^13) folded into position 0 */
static uint64_t affine_mat[3][TUPLE_BYTES][4];     /* GF2P8AFFINEQB matrix: position p -> output byte j */
static int initialised, use_gfni;

#define BLOCK 64                 /* flows per byte-plane block */
#define HIST_COPIES 4
#define HIST_COPY_LIMIT 65536    /* n_groups * n_paths up to this: interleaved uint32 copies (1 MiB) */

static uint32_t load32le(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint32_t lo = load32le(p) ^ crc, hi = load32le(p + 4);
        crc = crc32_slice[7][lo & 0xFF] ^ crc32_slice[6][(lo >> 8) & 0xFF]
            ^ crc32_slice[5][(lo >> 16) & 0xFF] ^ crc32_slice[4][lo >> 24]
            ^ crc32_slice[3][hi & 0xFF] ^ crc32_slice[2][(hi >> 8) & 0xFF]
            ^ crc32_slice[1][(hi >> 16) & 0xFF] ^ crc32_slice[0][hi >> 24];
        p += 8; n -= 8;
    }
    while (n--) crc = crc32_slice[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

uint32_t ecmp_crc32_bytes(const uint8_t *data, size_t n)
{
    ecmp_init();
    return crc32_update(0xFFFFFFFFu, data, n) ^ 0xFFFFFFFFu;
}

uint32_t ecmp_crc16_bytes(const uint8_t *data, size_t n)
{
    ecmp_init();
    uint32_t crc = 0xFFFF;
    for (size_t i = 0; i < n; i++)
        crc = (crc16_table[((crc >> 8) ^ data[i]) & 0xFF] ^ (crc << 8)) & 0xFFFF;
    return crc;
}

uint32_t ecmp_toeplitz_bytes(const uint8_t *key, size_t key_len,
                             const uint8_t *data, size_t n, int *ok)
{
    if (key_len < n + 4) { if (ok) *ok = 0; return 0xFFFFFFFFu; }
    if (ok) *ok = 1;
    uint64_t window = ((uint64_t)key[0] << 24) | ((uint64_t)key[1] << 16)
                    | ((uint64_t)key[2] << 8) | key[3];
    uint32_t result = 0;
    for (size_t i = 0; i < n; i++) {
        window = (window << 8) | key[i + 4];           /* key bits [8i, 8i+40) */
        for (int j = 0; j < 8; j++)
            if ((data[i] >> (7 - j)) & 1)
                result ^= (uint32_t)(window >> (8 - j));
    }
    return result;
}

static uint32_t hash_bytes(int algo, const uint8_t *d)
{
    switch (algo) {
    case 0: return crc32_update(0xFFFFFFFFu, d, TUPLE_BYTES) ^ 0xFFFFFFFFu;
    case 1: return ecmp_crc16_bytes(d, TUPLE_BYTES);
    default: return ecmp_toeplitz_bytes(MS_RSS_KEY, sizeof MS_RSS_KEY, d, TUPLE_BYTES, NULL);
    }
}

int ecmp_init(void)
{
    if (initialised) return 0;
    for (uint32_t v = 0; v < 256; v++) {
        uint32_t c = v;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        crc32_slice[0][v] = c;
        uint32_t s = v << 8;
        for (int k = 0; k < 8; k++) s = (s & 0x8000) ? ((s << 1) ^ 0x1021) & 0xFFFF : (s << 1) & 0xFFFF;
        crc16_table[v] = (uint16_t)s;
    }
    for (uint32_t v = 0; v < 256; v++)
        for (int t = 1; t < 8; t++)
            crc32_slice[t][v] = (crc32_slice[t - 1][v] >> 8) ^ crc32_slice[0][crc32_slice[t - 1][v] & 0xFF];
    initialised = 1;   /* the byte functions are usable from here on */
    uint8_t msg[TUPLE_BYTES];
    for (int algo = 0; algo < 3; algo++) {
        memset(msg, 0, sizeof msg);
        const uint32_t h_zero = hash_bytes(algo, msg);
        for (int pos = 0; pos < TUPLE_BYTES; pos++) {
            for (uint32_t v = 0; v < 256; v++) {
                msg[pos] = (uint8_t)v;
                /* T_pos[v] = H(v at pos) ^ H(0); position 0 keeps H(0) so the XOR of all 13 is H */
                pos_table[algo][pos][v] = hash_bytes(algo, msg) ^ (pos == 0 ? 0 : h_zero);
            }
            msg[pos] = 0;
        }
        /* A_pj: row i (output bit i of byte j) in matrix byte 7 - i, bit k set when
         * input bit k of byte p flips that output bit (the linear part of T_p) */
        for (int pos = 0; pos < TUPLE_BYTES; pos++)
            for (int j = 0; j < 4; j++) {
                uint64_t m = 0;
                for (int i = 0; i < 8; i++)
                    for (int k = 0; k < 8; k++) {
                        uint32_t lin = pos_table[algo][pos][1u << k] ^ pos_table[algo][pos][0];
                        if ((lin >> (8 * j + i)) & 1) m |= (uint64_t)1 << (8 * (7 - i) + k);
                    }
                affine_mat[algo][pos][j] = m;
            }
    }
#if HAVE_GFNI_PATH
    use_gfni = ecmp_gfni_supported();
#endif
    return 0;
}

int ecmp_gfni_supported(void)
{
#if HAVE_GFNI_PATH
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("gfni");
#else
    return 0;
#endif
}

int ecmp_use_gfni(int enable)
{
    ecmp_init();
    int was = use_gfni;
    use_gfni = enable && ecmp_gfni_supported();
    return was;
}

#if HAVE_GFNI_PATH
#define GFNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,gfni,bmi2")))
/* Hashes of BLOCK flows: byte planes, 13 x nbytes affine maps, then the words. */
GFNI_TARGET static void hash_block_gfni(int algo, const uint32_t *restrict src_ip, const uint32_t *restrict dst_ip,
                                        const uint16_t *restrict src_port, const uint16_t *restrict dst_port,
                                        const uint8_t *restrict proto, uint32_t *restrict out)
{
    uint8_t plane[TUPLE_BYTES][BLOCK] __attribute__((aligned(64)));
    uint8_t obyte[4][BLOCK] __attribute__((aligned(64)));
    for (int i = 0; i < BLOCK; i++) {      /* big-endian byte order of the serialisation */
        uint32_t a = src_ip[i], b = dst_ip[i];
        uint16_t sp = src_port[i], dp = dst_port[i];
        plane[0][i] = (uint8_t)(a >> 24); plane[1][i] = (uint8_t)(a >> 16);
        plane[2][i] = (uint8_t)(a >> 8);  plane[3][i] = (uint8_t)a;
        plane[4][i] = (uint8_t)(b >> 24); plane[5][i] = (uint8_t)(b >> 16);
        plane[6][i] = (uint8_t)(b >> 8);  plane[7][i] = (uint8_t)b;
        plane[8][i] = (uint8_t)(sp >> 8); plane[9][i] = (uint8_t)sp;
        plane[10][i] = (uint8_t)(dp >> 8); plane[11][i] = (uint8_t)dp;
        plane[12][i] = proto[i];
    }
    const int nbytes = algo == 1 ? 2 : 4;
    const uint32_t h0 = pos_table[algo][0][0];
    for (int j = 0; j < nbytes; j++) {
        __m512i acc = _mm512_set1_epi8((char)(h0 >> (8 * j)));
        for (int p = 0; p < TUPLE_BYTES; p++) {
            __m512i x = _mm512_load_si512((const void *)plane[p]);
            acc = _mm512_xor_si512(acc, _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64((long long)affine_mat[algo][p][j]), 0));
        }
        _mm512_store_si512((void *)obyte[j], acc);
    }
    if (nbytes == 2)
        for (int i = 0; i < BLOCK; i++) out[i] = obyte[0][i] | ((uint32_t)obyte[1][i] << 8);
    else
        for (int i = 0; i < BLOCK; i++)
            out[i] = obyte[0][i] | ((uint32_t)obyte[1][i] << 8) | ((uint32_t)obyte[2][i] << 16) | ((uint32_t)obyte[3][i] << 24);
}
#endif

static inline uint32_t tuple_hash(const uint32_t (*t)[256], uint32_t a, uint32_t b,
                                  uint32_t sp, uint32_t dp, uint32_t pr)
{
    return t[0][a >> 24] ^ t[1][(a >> 16) & 0xFF] ^ t[2][(a >> 8) & 0xFF] ^ t[3][a & 0xFF]
              ^ t[4][b >> 24] ^ t[5][(b >> 16) & 0xFF] ^ t[6][(b >> 8) & 0xFF] ^ t[7][b & 0xFF]
              ^ t[8][sp >> 8] ^ t[9][sp & 0xFF] ^ t[10][dp >> 8] ^ t[11][dp & 0xFF] ^ t[12][pr];
}

/* Hashes of m <= BLOCK flows: the GFNI kernel for whole blocks where the CPU
 * has it, else the position tables (a scalar loop: vectorised, its 13 lookups
 * would become emulated gathers, three times slower). */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_VECTORIZE __attribute__((optimize("no-tree-vectorize")))
#else
#define NO_VECTORIZE
#endif
static __attribute__((noinline)) NO_VECTORIZE void hash_block(int algo, const uint32_t *restrict src_ip,
                                                 const uint32_t *restrict dst_ip, const uint16_t *restrict src_port,
                                                 const uint16_t *restrict dst_port, const uint8_t *restrict proto,
                                                 size_t m, uint32_t *restrict out)
{
#if HAVE_GFNI_PATH
    if (use_gfni && m == BLOCK) {
        hash_block_gfni(algo, src_ip, dst_ip, src_port, dst_port, proto, out);
        return;
    }
#endif
    const uint32_t (*t)[256] = pos_table[algo];
    for (size_t i = 0; i < m; i++) out[i] = tuple_hash(t, src_ip[i], dst_ip[i], src_port[i], dst_port[i], proto[i]);
}

int ecmp_hash_tuples(int algo, const uint32_t *src_ip, const uint32_t *dst_ip,
                     const uint16_t *src_port, const uint16_t *dst_port,
                     const uint8_t *proto, size_t n, uint32_t *out)
{
    if (algo < 0 || algo > 2) return -1;
    ecmp_init();
    for (size_t i = 0; i < n; i += BLOCK)
        hash_block(algo, src_ip + i, dst_ip + i, src_port + i, dst_port + i, proto + i, n - i < BLOCK ? n - i : BLOCK,
                   out + i);
    return 0;
}

int ecmp_crc32_tuples_slice8(const uint32_t *src_ip, const uint32_t *dst_ip,
                             const uint16_t *src_port, const uint16_t *dst_port,
                             const uint8_t *proto, size_t n, uint32_t *out)
{
    ecmp_init();
    for (size_t i = 0; i < n; i++) {
        /* bytes 0..7 as a little-endian word: the big-endian addresses byte-swapped */
        uint32_t lo = __builtin_bswap32(src_ip[i]) ^ 0xFFFFFFFFu, hi = __builtin_bswap32(dst_ip[i]);
        uint32_t crc = crc32_slice[7][lo & 0xFF] ^ crc32_slice[6][(lo >> 8) & 0xFF]
                     ^ crc32_slice[5][(lo >> 16) & 0xFF] ^ crc32_slice[4][lo >> 24]
                     ^ crc32_slice[3][hi & 0xFF] ^ crc32_slice[2][(hi >> 8) & 0xFF]
                     ^ crc32_slice[1][(hi >> 16) & 0xFF] ^ crc32_slice[0][hi >> 24];
        /* bytes 8..11 by slicing-by-4 */
        uint32_t w = crc ^ ((uint32_t)(src_port[i] >> 8) | ((uint32_t)(src_port[i] & 0xFF) << 8)
                            | ((uint32_t)(dst_port[i] >> 8) << 16) | ((uint32_t)(dst_port[i] & 0xFF) << 24));
        crc = crc32_slice[3][w & 0xFF] ^ crc32_slice[2][(w >> 8) & 0xFF]
            ^ crc32_slice[1][(w >> 16) & 0xFF] ^ crc32_slice[0][w >> 24];
        crc = crc32_slice[0][(crc ^ proto[i]) & 0xFF] ^ (crc >> 8);
        out[i] = crc ^ 0xFFFFFFFFu;
    }
    return 0;
}

/* Path of a hash: `reduce` 0 mask, 1 modulo, 2 multiply-shift of a 32-bit
 * hash, 3 of a 16-bit hash (a compile-time constant where inlined). */
static inline __attribute__((always_inline)) uint32_t path_of(const int reduce, uint32_t h, uint32_t n_paths)
{
    return reduce == 0 ? (h & (n_paths - 1))
         : reduce == 1 ? h % n_paths
         : reduce == 2 ? (uint32_t)(((uint64_t)h * n_paths) >> 32)
         : (uint32_t)((h * n_paths) >> 16);          /* 16-bit hash: product < 2^32 */
}

/* Paths of a block of hashes, then the counts: into interleaved uint32 copies
 * (hist != NULL; a group out of range counts into group 0 there and sets
 * *bad, and the caller then discards the copies) or straight into counts
 * (groups checked beforehand). */
static inline __attribute__((always_inline)) void
bin_block(const int reduce, const uint32_t *restrict h, size_t m, uint32_t n_paths, const int32_t *restrict group,
          uint32_t n_groups, uint16_t *restrict out_paths, uint32_t *restrict hist, size_t hist_stride,
          uint64_t *restrict counts, int *bad)
{
    uint32_t cell[BLOCK];
    int oob = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t p = path_of(reduce, h[i], n_paths), g = (uint32_t)group[i];
        oob |= g >= n_groups;
        cell[i] = (g < n_groups ? g : 0) * n_paths + p;
        if (out_paths) out_paths[i] = (uint16_t)p;
    }
    if (hist) {
        *bad |= oob;
        for (size_t i = 0; i < m; i++) cell[i] += (uint32_t)((i % HIST_COPIES) * hist_stride);   /* flow i -> copy i % 4 */
        for (size_t i = 0; i < m; i++) hist[cell[i]]++;
    } else {
        for (size_t i = 0; i < m; i++) counts[cell[i]]++;
    }
}

/* Returns 0, or -2 when a group is out of range (counts then untouched). */
static inline __attribute__((always_inline)) int bin_all(const int reduce, int algo, uint32_t n_paths,
                    const uint32_t *src_ip, const uint32_t *dst_ip, const uint16_t *src_port,
                    const uint16_t *dst_port, const uint8_t *proto, const int32_t *group, uint32_t n_groups,
                    size_t n, uint16_t *out_paths, uint64_t *counts)
{
    const size_t cells = (size_t)n_groups * n_paths;
    const size_t stride = cells + 16;   /* copies not a multiple of 4 KiB apart: no false store-to-load aliasing */
    uint32_t *hist = cells <= HIST_COPY_LIMIT && n < ((size_t)1 << 32) ? calloc(HIST_COPIES * stride, sizeof *hist) : NULL;
    if (!hist) {                        /* counting straight into counts: check every group first */
        int bad = 0;
        for (size_t i = 0; i < n; i++) bad |= group[i] < 0 || (uint32_t)group[i] >= n_groups;
        if (bad) return -2;
    }
    uint32_t h[BLOCK];
    int bad = 0;
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
        hash_block(algo, src_ip + i0, dst_ip + i0, src_port + i0, dst_port + i0, proto + i0, m, h);
        bin_block(reduce, h, m, n_paths, group + i0, n_groups, out_paths ? out_paths + i0 : NULL, hist, stride,
                  counts, &bad);
    }
    if (hist) {
        for (size_t c = 0; c < cells && !bad; c++) {
            uint64_t sum = 0;
            for (int k = 0; k < HIST_COPIES; k++) sum += hist[k * stride + c];
            counts[c] += sum;
        }
        free(hist);
    }
    return bad ? -2 : 0;
}

int ecmp_bin(int algo, int mode, uint32_t n_paths,
             const uint32_t *src_ip, const uint32_t *dst_ip,
             const uint16_t *src_port, const uint16_t *dst_port,
             const uint8_t *proto, const int32_t *group, uint32_t n_groups,
             size_t n, uint16_t *out_paths, uint64_t *counts)
{
    if (algo < 0 || algo > 2 || mode < 0 || mode > 1 || n_paths < 1 || n_paths > 0xFFFF) return -1;
    ecmp_init();
    /* h % 2^k is the low k bits: skip the divide for power-of-two path counts */
    const int reduce = mode == 1 ? (algo == 1 ? 3 : 2) : ((n_paths & (n_paths - 1)) == 0 ? 0 : 1);
#define BIN_ALL(R) bin_all(R, algo, n_paths, src_ip, dst_ip, src_port, dst_port, proto, group, n_groups, n, out_paths, counts)
    switch (reduce) {
    case 0: return BIN_ALL(0);
    case 1: return BIN_ALL(1);
    case 2: return BIN_ALL(2);
    default: return BIN_ALL(3);
    }
#undef BIN_ALL
}
