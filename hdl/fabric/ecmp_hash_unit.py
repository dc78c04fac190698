"""ecmp_hash_unit: CRC-32 of a flow's 5-tuple and its ECMP path, one flow per cycle.

The hash is IEEE 802.3 CRC-32 (reflected, polynomial 0xEDB88320, init and
final xor 0xFFFFFFFF -- zlib.crc32) over the canonical 13-byte big-endian
serialisation src_ip[4] dst_ip[4] src_port[2] dst_port[2] proto[1], which
s_tuple carries as one 104-bit word, byte 0 (hashed first) in bits 103:96
(collective_pkg.pack_tuple).

For a fixed 13-byte input a CRC is affine over GF(2):
crc(x) = crc(0) xor XOR_{bit i of x set} col_i, with col_i = crc(e_i) xor crc(0).
The process works a nibble at a time: for each of the 26 input nibbles a
16-entry table (built here at elaboration from the CRC definition) gives the
XOR of the columns that nibble's set bits select, so the hash is the XOR of 26
table entries -- a loop-free XOR network after constant propagation (the
`for` runs over constant indices; each table is a 16-way constant mux).

Pipeline (latency 2, one flow per cycle, no stalls):
    stage 1  m-side registers take crc(s_tuple)
    stage 2  m_hash, m_path, m_valid, m_user

Ports:
    clk, rst        clock; synchronous reset (ResetSignal)
    s_valid         a flow is presented this cycle
    s_tuple         the flow's 104-bit canonical 5-tuple
    s_user          side band carried alongside the flow (any width >= 1)
    m_valid (out)   m_hash/m_path/m_user hold a flow's result
    m_hash (out)    the 32-bit CRC-32
    m_path (out)    the path index in [0, PATHS) (must index PATHS)
    m_user (out)    s_user delayed with the flow (width of s_user)

Parameters:
    PATHS       equal-cost paths, 1..65535
    PATH_MODE   "mod":   path = hash % PATHS (for a power-of-two PATHS the low
                         log2 PATHS bits; otherwise a constant-divisor modulo)
                "mulhi": path = (hash * PATHS) >> 32, multiply-shift range
                         reduction on the hash's HIGH bits (no divider at all)
                Both are bit-exact against golden.fabric.ecmp.select_path.
"""
from myhdl import Signal, always_seq, block, intbv, modbv

from hdl.fabric import collective_pkg as pkg

CRC32_POLY_REFLECTED = 0xEDB88320


def crc32_bits(value, nbits):
    """CRC-32 of the nbits/8 big-endian bytes of `value` (bit-serial, from the definition)."""
    crc = 0xFFFFFFFF
    for k in range(nbits // 8):
        crc ^= (value >> (nbits - 8 - 8 * k)) & 0xFF
        for _ in range(8):
            crc = (crc >> 1) ^ CRC32_POLY_REFLECTED if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def crc32_columns(nbits):
    """(crc of all-zero input, column per input bit) for the affine form of the CRC."""
    base = crc32_bits(0, nbits)
    return base, [crc32_bits(1 << i, nbits) ^ base for i in range(nbits)]


@block
def ecmp_hash_unit(clk, rst, s_valid, s_tuple, s_user, m_valid, m_hash, m_path, m_user,
                   PATHS=pkg.UPLINKS_PER_LEAF, PATH_MODE="mod"):
    name = "ecmp_hash_unit"
    pkg.check_hash_params(PATHS, PATH_MODE, name)
    pkg.require_width(s_tuple, pkg.TUPLE_BITS, name, "s_tuple")
    pkg.require_width(m_hash, 32, name, "m_hash")
    pkg.require_index_width(m_path, PATHS, name, "m_path")
    pkg.require_width(m_user, len(s_user), name, "m_user")
    NB = pkg.TUPLE_BITS
    base, cols = crc32_columns(NB)
    NIBBLES = NB // 4
    # Entry v of nibble k's table: XOR of the columns of nibble k's set bits in v.
    # All 26 x 16 entries in one tuple (a ROM; entry 16k+v), which converts to a case statement.
    entries = []
    for k in range(NIBBLES):
        for v in range(16):
            e = 0
            for b in range(4):
                if (v >> b) & 1:
                    e ^= cols[4 * k + b]
            entries.append(e)
    TABLE = tuple(entries)
    IDX_W = (len(entries) - 1).bit_length()
    CRC_BASE = base
    MASK32 = 0xFFFFFFFF
    POW2 = PATHS & (PATHS - 1) == 0
    PATH_MASK = PATHS - 1
    MULHI = PATH_MODE == "mulhi"
    PROD_W = 32 + max(1, PATHS.bit_length())
    PW = len(m_path)
    UW = len(s_user)

    crc_reg = Signal(intbv(0)[32:])
    valid1 = Signal(bool(0))
    user1 = Signal(intbv(0)[UW:]) if UW > 1 else Signal(bool(0))

    @always_seq(clk.posedge, reset=rst)
    def pipeline():
        crc = modbv(0)[32:]
        idx = intbv(0)[IDX_W:]
        ent = intbv(0)[32:]
        prod = intbv(0)[PROD_W:]
        path = intbv(0)[32:]
        # stage 1: the XOR network, one 16-entry constant table per input nibble
        crc[:] = CRC_BASE
        for k in range(NIBBLES):
            idx[:] = k * 16 + ((s_tuple >> (4 * k)) & 15)
            ent[:] = TABLE[idx]
            crc[:] = crc ^ ent
        crc_reg.next = crc
        valid1.next = s_valid
        user1.next = s_user
        # stage 2: range reduction
        if MULHI:
            prod[:] = crc_reg * PATHS
            path[:] = prod >> 32
        elif POW2:
            path[:] = crc_reg & PATH_MASK
        else:
            path[:] = crc_reg % PATHS
        m_hash.next = crc_reg
        m_path.next = path[PW:0]
        m_valid.next = valid1
        m_user.next = user1

    return pipeline
