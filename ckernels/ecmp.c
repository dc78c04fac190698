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
 * Little-endian host assumed by the slicing-by-8 word loads (x86-64, AArch64).
 * -------------------------------------------------------------------------- */
#include "ecmp.h"

#include <string.h>

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
static int initialised;

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
    }
    return 0;
}

static inline uint32_t tuple_hash(const uint32_t (*t)[256], uint32_t a, uint32_t b,
                                  uint32_t sp, uint32_t dp, uint32_t pr)
{
    return t[0][a >> 24] ^ t[1][(a >> 16) & 0xFF] ^ t[2][(a >> 8) & 0xFF] ^ t[3][a & 0xFF]
              ^ t[4][b >> 24] ^ t[5][(b >> 16) & 0xFF] ^ t[6][(b >> 8) & 0xFF] ^ t[7][b & 0xFF]
              ^ t[8][sp >> 8] ^ t[9][sp & 0xFF] ^ t[10][dp >> 8] ^ t[11][dp & 0xFF] ^ t[12][pr];
}

int ecmp_hash_tuples(int algo, const uint32_t *src_ip, const uint32_t *dst_ip,
                     const uint16_t *src_port, const uint16_t *dst_port,
                     const uint8_t *proto, size_t n, uint32_t *out)
{
    if (algo < 0 || algo > 2) return -1;
    ecmp_init();
    const uint32_t (*t)[256] = pos_table[algo];
    for (size_t i = 0; i < n; i++)
        out[i] = tuple_hash(t, src_ip[i], dst_ip[i], src_port[i], dst_port[i], proto[i]);
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

/* The bin loop, specialised by inlining: `reduce` (0 mask, 1 modulo, 2
 * multiply-shift of a 32-bit hash, 3 of a 16-bit hash) and `store` (per-flow paths wanted) are compile-time
 * constants in each call below, so every variant is a branch-free loop. */
static inline __attribute__((always_inline)) void
bin_loop(const int reduce, const int store, const uint32_t (*restrict t)[256], uint32_t n_paths,
         const uint32_t *restrict src_ip, const uint32_t *restrict dst_ip, const uint16_t *restrict src_port,
         const uint16_t *restrict dst_port, const uint8_t *restrict proto, const int32_t *restrict group,
         size_t n, uint16_t *restrict out_paths, uint64_t *restrict counts)
{
    const uint32_t mask = n_paths - 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t h = tuple_hash(t, src_ip[i], dst_ip[i], src_port[i], dst_port[i], proto[i]);
        uint32_t p = reduce == 0 ? (h & mask)
                   : reduce == 1 ? h % n_paths
                   : reduce == 2 ? (uint32_t)(((uint64_t)h * n_paths) >> 32)
                   : (uint32_t)((h * n_paths) >> 16);          /* 16-bit hash: product < 2^32 */
        counts[(size_t)(uint32_t)group[i] * n_paths + p]++;
        if (store) out_paths[i] = (uint16_t)p;
    }
}

#define BIN_CASE(R, S) bin_loop(R, S, t, n_paths, src_ip, dst_ip, src_port, dst_port, \
                                proto, group, n, out_paths, counts)

int ecmp_bin(int algo, int mode, uint32_t n_paths,
             const uint32_t *src_ip, const uint32_t *dst_ip,
             const uint16_t *src_port, const uint16_t *dst_port,
             const uint8_t *proto, const int32_t *group, uint32_t n_groups,
             size_t n, uint16_t *out_paths, uint64_t *counts)
{
    if (algo < 0 || algo > 2 || mode < 0 || mode > 1 || n_paths < 1 || n_paths > 0xFFFF) return -1;
    /* validate every group first, so the hot loop has no early exit */
    for (size_t i = 0; i < n; i++)
        if (group[i] < 0 || (uint32_t)group[i] >= n_groups) return -2;
    ecmp_init();
    const uint32_t (*t)[256] = pos_table[algo];
    /* h % 2^k is the low k bits: skip the divide for power-of-two path counts */
    const int reduce = mode == 1 ? (algo == 1 ? 3 : 2) : ((n_paths & (n_paths - 1)) == 0 ? 0 : 1);
    if (out_paths) {
        switch (reduce) {
        case 0: BIN_CASE(0, 1); break;
        case 1: BIN_CASE(1, 1); break;
        case 2: BIN_CASE(2, 1); break;
        default: BIN_CASE(3, 1); break;
        }
    } else {
        switch (reduce) {
        case 0: BIN_CASE(0, 0); break;
        case 1: BIN_CASE(1, 0); break;
        case 2: BIN_CASE(2, 0); break;
        default: BIN_CASE(3, 0); break;
        }
    }
    return 0;
}
