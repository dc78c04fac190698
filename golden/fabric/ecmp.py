"""ECMP path selection for collective traffic: the pure-Python reference.

This module is the single definition of everything the fabric chapter hashes:

* **Addressing plan.**  Accelerator ``acc`` on leaf ``leaf`` has IPv4 address
  ``10.<leaf>.<acc>.1`` (``accel_ip``); rank ``r`` of a job maps to a
  (leaf, acc) pair through a *ring ordering* (``rank_location``).
* **Flows.**  A flow is a 5-tuple ``FlowTuple(src_ip, dst_ip, src_port,
  dst_port, proto)``.  Collective traffic is RoCEv2: UDP (protocol 17) to
  destination port 4791; the UDP source port carries the flow's entropy and
  is derived from the queue-pair number as ``0xC000 | (qpn & 0x3FFF)``
  (the RoCEv2 convention of a source port in 49152..65535 chosen per QP).
  The QPN of a connection is ``qpn_for(epoch, src_rank, dst_rank, stripe)``,
  a splitmix64 draw: a new ``epoch`` (a job restart) redraws every QPN, and so
  every hash, which is the seed's "fresh draw from a distribution".
* **Canonical serialisation** (``serialize``): 13 bytes, big-endian,
  ``src_ip[4] dst_ip[4] src_port[2] dst_port[2] proto[1]``.  Every
  implementation (this one, numba, C, and the HDL hash unit) hashes exactly
  these bytes in this order, first byte first.
* **Hashes** (``HASHES``), each of a byte string:
  ``crc32``    IEEE 802.3 CRC-32, reflected, polynomial 0x04C11DB7 (reflected
               0xEDB88320), init 0xFFFFFFFF, final xor 0xFFFFFFFF -- equal to
               zlib.crc32; 32-bit result.
  ``crc16``    CRC-16/CCITT-FALSE: polynomial 0x1021, not reflected, init
               0xFFFF, final xor 0x0000 (check value 0x29B1); 16-bit result.
  ``toeplitz`` the RSS Toeplitz hash with Microsoft's published 40-byte key
               ``MS_RSS_KEY``: for every input bit, most significant bit of
               byte 0 first, XOR the key's current left-most 32 bits into the
               result when the bit is 1, then shift the key left one bit;
               32-bit result.
* **Path selection** (``select_path``) of a ``width``-bit hash ``h`` over
  ``n`` equal-cost paths:
  ``mod``    ``h % n``  -- the usual switch behaviour; for a power-of-two
             ``n`` it is the hash's low ``log2 n`` bits.
  ``mulhi``  ``(h * n) >> width`` -- multiply-shift range reduction, which
             uses the hash's HIGH bits (for a power-of-two ``n`` exactly the
             top ``log2 n`` bits) and is unbiased to within one part in
             ``2**width / n`` for any ``n``.

Everything here is deliberately simple (bit-serial loops over Python ints) so
that it can be read against the definitions above; ``golden.fabric.ecmp_numba`` and
``golden.fabric.ecmp_c`` (the C kernel's wrapper) are the fast versions and must match it bit for bit.  The
flow-set generators at the bottom build numpy arrays (a million flows do not
fit a bit-serial loop) from the same per-flow definitions, which the tests
check flow by flow against ``flow_tuple_for``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Sequence, Tuple

import numpy as np

from spec.fabric import ACC_PER_LEAF, LEAVES, PATH_MODES, TUPLE_BYTES, UPLINKS_PER_LEAF  # noqa: F401 (re-exported)

# --- constants ------------------------------------------------------------------
PROTO_UDP = 17
ROCEV2_UDP_PORT = 4791
ROCE_SPORT_BASE = 0xC000          # RoCEv2 entropy source ports: 0xC000..0xFFFF
ROCE_SPORT_MASK = 0x3FFF
QPN_MASK = 0xFFFFFF               # InfiniBand queue-pair numbers are 24-bit

CRC32_POLY_REFLECTED = 0xEDB88320  # 0x04C11DB7 bit-reversed
CRC32_INIT = 0xFFFFFFFF
CRC32_XOROUT = 0xFFFFFFFF
CRC16_POLY = 0x1021
CRC16_INIT = 0xFFFF
CRC16_XOROUT = 0x0000

# Microsoft's RSS verification key ("Verifying the RSS Hash Calculation").
MS_RSS_KEY = bytes.fromhex(
    "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c"
    "6a42b73bbeac01fa")


# --- flows and their serialisation ------------------------------------------------
@dataclass(frozen=True)
class FlowTuple:
    """One flow's 5-tuple.  Addresses are 32-bit ints, ports 16-bit, proto 8-bit."""
    src_ip: int
    dst_ip: int
    src_port: int
    dst_port: int
    proto: int = PROTO_UDP

    def __post_init__(self):
        for name, width in (("src_ip", 32), ("dst_ip", 32), ("src_port", 16),
                            ("dst_port", 16), ("proto", 8)):
            v = getattr(self, name)
            if not isinstance(v, int) or not 0 <= v < (1 << width):
                raise ValueError(f"{name}={v!r} is not a {width}-bit unsigned integer")


def serialize(t: FlowTuple) -> bytes:
    """The canonical 13-byte big-endian serialisation every implementation hashes."""
    return (t.src_ip.to_bytes(4, "big") + t.dst_ip.to_bytes(4, "big")
            + t.src_port.to_bytes(2, "big") + t.dst_port.to_bytes(2, "big")
            + t.proto.to_bytes(1, "big"))


def deserialize(b: bytes) -> FlowTuple:
    if len(b) != TUPLE_BYTES:
        raise ValueError(f"a serialised flow is {TUPLE_BYTES} bytes, got {len(b)}")
    return FlowTuple(int.from_bytes(b[0:4], "big"), int.from_bytes(b[4:8], "big"),
                     int.from_bytes(b[8:10], "big"), int.from_bytes(b[10:12], "big"), b[12])


def ip_str(ip: int) -> str:
    return ".".join(str((ip >> s) & 0xFF) for s in (24, 16, 8, 0))


def parse_ip(s: str) -> int:
    parts = s.split(".")
    if len(parts) != 4 or not all(p.isdigit() and int(p) < 256 for p in parts):
        raise ValueError(f"not a dotted-quad IPv4 address: {s!r}")
    v = 0
    for p in parts:
        v = (v << 8) | int(p)
    return v


# --- hashes (bit-serial, straight from the definitions) -----------------------------
def crc32(data: bytes) -> int:
    """IEEE 802.3 CRC-32 (reflected, init and final xor 0xFFFFFFFF) = zlib.crc32."""
    crc = CRC32_INIT
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ CRC32_POLY_REFLECTED if crc & 1 else crc >> 1
    return crc ^ CRC32_XOROUT


def crc16_ccitt(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, MSB first, init 0xFFFF, no final xor."""
    crc = CRC16_INIT
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ CRC16_POLY) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc ^ CRC16_XOROUT


def toeplitz(data: bytes, key: bytes = MS_RSS_KEY) -> int:
    """RSS Toeplitz hash: XOR the key's left-most 32 bits for every 1 input bit."""
    if len(key) < len(data) + 4:
        raise ValueError(f"a Toeplitz key for {len(data)} input bytes needs at least "
                         f"{len(data) + 4} bytes, got {len(key)}")
    key_int = int.from_bytes(key, "big")
    key_bits = 8 * len(key)
    result = 0
    for i in range(8 * len(data)):
        if (data[i // 8] >> (7 - i % 8)) & 1:
            result ^= (key_int >> (key_bits - 32 - i)) & 0xFFFFFFFF
    return result


# name -> (function of bytes, result width in bits)
HASHES: Dict[str, Tuple[Callable[[bytes], int], int]] = {
    "crc32": (crc32, 32),
    "crc16": (crc16_ccitt, 16),
    "toeplitz": (toeplitz, 32),
}
HASH_IDS = {"crc32": 0, "crc16": 1, "toeplitz": 2}   # the numeric id the fast kernels take


def check_algo(algo: str) -> int:
    if algo not in HASHES:
        raise ValueError(f"unknown hash {algo!r}; choose one of {', '.join(HASHES)}")
    return HASHES[algo][1]


def check_paths(n_paths: int, mode: str) -> None:
    if mode not in PATH_MODES:
        raise ValueError(f"unknown path mode {mode!r}; choose one of {', '.join(PATH_MODES)}")
    if not isinstance(n_paths, (int, np.integer)) or not 1 <= n_paths <= 0xFFFF:
        raise ValueError(f"n_paths must be an integer in 1..65535, got {n_paths!r}")


def check_groups(flows, groups, n_groups):
    """(group per flow as contiguous int32, group count) for the fast binning kernels: `groups`
    defaults to the flows' source leaf, `n_groups` to the largest group + 1."""
    g = np.ascontiguousarray(flows.src_leaf if groups is None else groups, dtype=np.int32)
    if len(g) != len(flows):
        raise ValueError(f"groups has {len(g)} entries for {len(flows)} flows")
    if n_groups is None:
        n_groups = int(g.max()) + 1 if len(g) else 1
    if not isinstance(n_groups, (int, np.integer)) or not 1 <= n_groups <= 2**31 - 1:
        raise ValueError(f"n_groups must be an integer in 1..2**31-1, got {n_groups!r}")
    return g, n_groups


def flow_hash(t: FlowTuple, algo: str = "crc32") -> int:
    check_algo(algo)
    return HASHES[algo][0](serialize(t))


def select_path(h: int, n_paths: int, mode: str = "mod", width: int = 32) -> int:
    """Path index in [0, n_paths) for a width-bit hash h (see the module docstring)."""
    check_paths(n_paths, mode)
    if not 0 <= h < (1 << width):
        raise ValueError(f"hash {h:#x} does not fit {width} bits")
    if mode == "mod":
        return h % n_paths
    return (h * n_paths) >> width


def ecmp_path(t: FlowTuple, n_paths: int, algo: str = "crc32", mode: str = "mod") -> int:
    return select_path(flow_hash(t, algo), n_paths, mode, HASHES[algo][1])


# --- addressing plan ---------------------------------------------------------------
def accel_ip(leaf: int, acc: int) -> int:
    """10.<leaf>.<acc>.1 -- one /24 per leaf, one /32 host per accelerator."""
    if not (0 <= leaf < 256 and 0 <= acc < 256):
        raise ValueError(f"leaf {leaf} / accelerator {acc} outside the 10.leaf.acc.1 plan (0..255)")
    return (10 << 24) | (leaf << 16) | (acc << 8) | 1


RING_ORDERS = ("strided", "packed", "random")


def rank_location(rank: int, leaves: int = LEAVES, acc_per_leaf: int = ACC_PER_LEAF,
                  order: str = "strided", perm: Sequence[int] | None = None) -> Tuple[int, int]:
    """(leaf, acc) of a rank.

    ``strided``: rank r sits on leaf r % leaves -- consecutive ranks are on
    different leaves, so EVERY ring link crosses the fabric (the seed's Section 8
    set-up: each leaf sends 32 ring flows over its uplinks).
    ``packed``: leaf-by-leaf, rank r on leaf r // acc_per_leaf -- 31 of every 32
    ring links stay inside a leaf (the seed's "ring ordered leaf-by-leaf").
    ``random``: slot perm[r] of the packed layout (a scheduler placing by
    availability).
    """
    if order == "strided":
        return rank % leaves, rank // leaves
    if order == "packed":
        return rank // acc_per_leaf, rank % acc_per_leaf
    if order == "random":
        if perm is None:
            raise ValueError("the random ring order needs a permutation")
        slot = perm[rank]
        return slot // acc_per_leaf, slot % acc_per_leaf
    raise ValueError(f"unknown ring order {order!r}; choose one of {', '.join(RING_ORDERS)}")


# --- QPN / source-port derivation ----------------------------------------------------
_M64 = (1 << 64) - 1


def splitmix64(x: int) -> int:
    """One splitmix64 output for state x (Steele, Lea & Flood; the Java SplittableRandom mixer)."""
    z = (x + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def qpn_for(epoch: int, src_rank: int, dst_rank: int, stripe: int = 0) -> int:
    """24-bit queue-pair number of a connection: a splitmix64 draw keyed by
    (epoch, src rank, dst rank, stripe), each field given 16 bits (epoch 0..65535,
    ranks and stripes 0..65535)."""
    key = ((epoch & 0xFFFF) << 48) | ((src_rank & 0xFFFF) << 32) | ((dst_rank & 0xFFFF) << 16) | (stripe & 0xFFFF)
    return splitmix64(key) & QPN_MASK


def roce_src_port(qpn: int) -> int:
    return ROCE_SPORT_BASE | (qpn & ROCE_SPORT_MASK)


def flow_tuple_for(src: Tuple[int, int], dst: Tuple[int, int], src_rank: int, dst_rank: int,
                   epoch: int = 0, stripe: int = 0) -> FlowTuple:
    """The RoCEv2 5-tuple of connection (src_rank -> dst_rank, stripe) in an epoch."""
    return FlowTuple(accel_ip(*src), accel_ip(*dst),
                     roce_src_port(qpn_for(epoch, src_rank, dst_rank, stripe)),
                     ROCEV2_UDP_PORT, PROTO_UDP)


# --- flow sets (numpy, vectorised from the same definitions) ----------------------------
@dataclass
class FlowSet:
    """Structure-of-arrays flow set.  ``src_leaf`` is the leaf whose uplink group
    the flow enters (the ECMP decision point); ``dst_leaf`` tells whether it
    crosses the fabric at all."""
    name: str
    src_ip: np.ndarray      # uint32
    dst_ip: np.ndarray      # uint32
    src_port: np.ndarray    # uint16
    dst_port: np.ndarray    # uint16
    proto: np.ndarray       # uint8
    src_leaf: np.ndarray    # int32
    dst_leaf: np.ndarray    # int32
    src_rank: np.ndarray    # int32
    dst_rank: np.ndarray    # int32
    stripe: np.ndarray      # int32

    def __len__(self) -> int:
        return len(self.src_ip)

    def tuple(self, i: int) -> FlowTuple:
        return FlowTuple(int(self.src_ip[i]), int(self.dst_ip[i]), int(self.src_port[i]),
                         int(self.dst_port[i]), int(self.proto[i]))

    def tuples(self) -> Iterator[FlowTuple]:
        for i in range(len(self)):
            yield self.tuple(i)

    def subset(self, mask: np.ndarray, name: str | None = None) -> "FlowSet":
        return FlowSet(name or self.name, *(getattr(self, f)[mask] for f in _ARRAY_FIELDS))

    def crossing(self) -> "FlowSet":
        """Only the flows that leave their leaf (the ones the uplink hash sees)."""
        return self.subset(self.src_leaf != self.dst_leaf, self.name + " (crossing)")

    def serialized(self) -> np.ndarray:
        """(n, 13) uint8 array of canonical serialisations."""
        out = np.empty((len(self), TUPLE_BYTES), dtype=np.uint8)
        for k, (arr, nbytes) in enumerate(((self.src_ip, 4), (self.dst_ip, 4))):
            for j in range(nbytes):
                out[:, 4 * k + j] = (arr >> np.uint32(8 * (nbytes - 1 - j))) & np.uint32(0xFF)
        out[:, 8] = self.src_port >> np.uint16(8)
        out[:, 9] = self.src_port & np.uint16(0xFF)
        out[:, 10] = self.dst_port >> np.uint16(8)
        out[:, 11] = self.dst_port & np.uint16(0xFF)
        out[:, 12] = self.proto
        return out


_ARRAY_FIELDS = ("src_ip", "dst_ip", "src_port", "dst_port", "proto", "src_leaf", "dst_leaf",
                 "src_rank", "dst_rank", "stripe")


def _splitmix64_np(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _locations(ranks: np.ndarray, leaves: int, acc_per_leaf: int, order: str, perm) -> Tuple[np.ndarray, np.ndarray]:
    if order == "strided":
        return ranks % leaves, ranks // leaves
    if order == "packed":
        return ranks // acc_per_leaf, ranks % acc_per_leaf
    if order == "random":
        slot = np.asarray(perm)[ranks]
        return slot // acc_per_leaf, slot % acc_per_leaf
    raise ValueError(f"unknown ring order {order!r}; choose one of {', '.join(RING_ORDERS)}")


def _check_fabric(leaves: int, acc_per_leaf: int, stripes: int, epoch: int) -> None:
    if not (1 <= leaves <= 256 and 1 <= acc_per_leaf <= 256):
        raise ValueError(f"leaves and accelerators per leaf must be 1..256 (got {leaves}, {acc_per_leaf})")
    if not 1 <= stripes <= 0xFFFF:
        raise ValueError(f"stripes must be 1..65535, got {stripes}")
    if not 0 <= epoch <= 0xFFFF:
        raise ValueError(f"epoch must be 0..65535, got {epoch}")


def make_flowset(name: str, src_rank: np.ndarray, dst_rank: np.ndarray, stripe: np.ndarray, *,
                 leaves: int, acc_per_leaf: int, order: str, perm, epoch: int) -> FlowSet:
    src_rank = np.asarray(src_rank, dtype=np.int64)
    dst_rank = np.asarray(dst_rank, dtype=np.int64)
    stripe = np.asarray(stripe, dtype=np.int64)
    sl, sa = _locations(src_rank, leaves, acc_per_leaf, order, perm)
    dl, da = _locations(dst_rank, leaves, acc_per_leaf, order, perm)
    key = ((np.uint64(epoch & 0xFFFF) << np.uint64(48)) | (src_rank.astype(np.uint64) << np.uint64(32))
           | (dst_rank.astype(np.uint64) << np.uint64(16)) | stripe.astype(np.uint64))
    qpn = _splitmix64_np(key) & np.uint64(QPN_MASK)
    ip = lambda leaf, acc: ((np.uint32(10) << np.uint32(24)) | (leaf.astype(np.uint32) << np.uint32(16))
                            | (acc.astype(np.uint32) << np.uint32(8)) | np.uint32(1))
    n = len(src_rank)
    return FlowSet(name, ip(sl, sa), ip(dl, da),
                   (np.uint64(ROCE_SPORT_BASE) | (qpn & np.uint64(ROCE_SPORT_MASK))).astype(np.uint16),
                   np.full(n, ROCEV2_UDP_PORT, dtype=np.uint16), np.full(n, PROTO_UDP, dtype=np.uint8),
                   sl.astype(np.int32), dl.astype(np.int32), src_rank.astype(np.int32),
                   dst_rank.astype(np.int32), stripe.astype(np.int32))


def ring_flows(leaves: int = LEAVES, acc_per_leaf: int = ACC_PER_LEAF, *, stripes: int = 1,
               order: str = "strided", epoch: int = 0, perm_seed: int = 0) -> FlowSet:
    """Ring all-reduce: rank r sends to rank (r+1) mod N, over ``stripes``
    connections per ring link.  N = leaves * acc_per_leaf flows per stripe."""
    _check_fabric(leaves, acc_per_leaf, stripes, epoch)
    n = leaves * acc_per_leaf
    perm = np.random.default_rng(perm_seed).permutation(n) if order == "random" else None
    r = np.repeat(np.arange(n), stripes)
    s = np.tile(np.arange(stripes), n)
    return make_flowset(f"ring N={n} x{stripes} {order} epoch {epoch}", r, (r + 1) % n, s,
                        leaves=leaves, acc_per_leaf=acc_per_leaf, order=order, perm=perm, epoch=epoch)


def all_to_all_flows(leaves: int = LEAVES, acc_per_leaf: int = ACC_PER_LEAF, *,
                     order: str = "packed", epoch: int = 0, perm_seed: int = 0) -> FlowSet:
    """All-to-all: every ordered pair of distinct ranks, N(N-1) flows."""
    _check_fabric(leaves, acc_per_leaf, 1, epoch)
    n = leaves * acc_per_leaf
    perm = np.random.default_rng(perm_seed).permutation(n) if order == "random" else None
    src = np.repeat(np.arange(n), n - 1)
    k = np.tile(np.arange(n - 1), n)
    dst = k + (k >= src)           # skip the diagonal
    return make_flowset(f"all-to-all N={n} {order} epoch {epoch}", src, dst, np.zeros_like(src),
                        leaves=leaves, acc_per_leaf=acc_per_leaf, order=order, perm=perm, epoch=epoch)


# --- reference hashing and binning of a flow set ----------------------------------------------
def hash_flows_ref(flows: FlowSet, algo: str = "crc32") -> List[int]:
    fn = HASHES[algo][0] if check_algo(algo) else None
    return [fn(serialize(t)) for t in flows.tuples()]


def bin_flows_ref(flows: FlowSet, n_paths: int, algo: str = "crc32", mode: str = "mod",
                  n_groups: int | None = None) -> List[List[int]]:
    """Per-group (source leaf) per-path flow counts, the reference way."""
    width = check_algo(algo)
    check_paths(n_paths, mode)
    groups = flows.src_leaf
    if n_groups is None:
        n_groups = int(groups.max()) + 1 if len(flows) else 1
    counts = [[0] * n_paths for _ in range(n_groups)]
    for i, h in enumerate(hash_flows_ref(flows, algo)):
        counts[int(groups[i])][select_path(h, n_paths, mode, width)] += 1
    return counts
