/* ecmp -- ECMP flow hashing and path binning (bit-identical to golden/ecmp.py).
 *
 * Flow tuple: src_ip uint32, dst_ip uint32, src_port uint16, dst_port uint16,
 * proto uint8 (host-order integers).  Hashed as the canonical 13-byte
 * big-endian serialisation src_ip[4] dst_ip[4] src_port[2] dst_port[2] proto[1].
 *
 * Hash ids (algo):  0 = CRC-32 IEEE 802.3 (reflected 0xEDB88320, init and
 *   final xor 0xFFFFFFFF; = zlib.crc32), 32-bit result;
 *   1 = CRC-16/CCITT-FALSE (0x1021, MSB first, init 0xFFFF, no final xor),
 *   result in the low 16 bits;  2 = Toeplitz with Microsoft's 40-byte RSS key,
 *   32-bit result.
 * Path modes (mode): 0 = hash % n_paths;  1 = (hash * n_paths) >> width,
 *   width = 32 for algos 0 and 2, 16 for algo 1.
 * Invariants: 1 <= n_paths <= 65535; 0 <= group[i] < n_groups; counts holds
 *   n_groups * n_paths uint64 and is ADDED to (callers zero it); out_paths may
 *   be NULL.  Return values: 0 ok, -1 bad algo/mode/n_paths, -2 a group out of
 *   range (counts then unchanged; out_paths may be partly written).
 * ecmp_init() builds the tables once; every entry point calls it (idempotent,
 *   not thread-safe on the very first call).
 */
#include <stddef.h>
#include <stdint.h>

int ecmp_init(void);

/* The byte-plane GFNI path (x86-64 with AVX-512BW and GFNI): whether this CPU
 * has it, and a switch (for tests and comparisons) that returns the previous
 * setting; on by default where supported.  Both paths give the same hashes. */
int ecmp_gfni_supported(void);
int ecmp_use_gfni(int enable);

uint32_t ecmp_crc32_bytes(const uint8_t *data, size_t n);          /* slicing-by-8 */
uint32_t ecmp_crc16_bytes(const uint8_t *data, size_t n);          /* byte table */
/* key_len must be >= n + 4, else returns 0xFFFFFFFF and sets *ok = 0 */
uint32_t ecmp_toeplitz_bytes(const uint8_t *key, size_t key_len,
                             const uint8_t *data, size_t n, int *ok);

int ecmp_hash_tuples(int algo, const uint32_t *src_ip, const uint32_t *dst_ip,
                     const uint16_t *src_port, const uint16_t *dst_port,
                     const uint8_t *proto, size_t n, uint32_t *out);

/* CRC-32 of tuples by slicing-by-8 (8 bytes) + slicing-by-4 (4) + 1 byte:
 * the classic kernel, kept for comparison with the position-table one. */
int ecmp_crc32_tuples_slice8(const uint32_t *src_ip, const uint32_t *dst_ip,
                             const uint16_t *src_port, const uint16_t *dst_port,
                             const uint8_t *proto, size_t n, uint32_t *out);

int ecmp_bin(int algo, int mode, uint32_t n_paths,
             const uint32_t *src_ip, const uint32_t *dst_ip,
             const uint16_t *src_port, const uint16_t *dst_port,
             const uint8_t *proto, const int32_t *group, uint32_t n_groups,
             size_t n, uint16_t *out_paths, uint64_t *counts);
