"""ECMP routing of collective flows over a `golden.topology.topology.Topology`.

Flows
-----
A flow is a RoCEv2 connection between two GPUs, built by ``golden.fabric.ecmp``'s
definitions: GPU ``g`` has address ``10.<g >> 8>.<g & 255>.1`` (the
``10.a.b.1`` plan of ``golden.fabric.ecmp.accel_ip`` with (a, b) the two bytes of the
GPU id), the UDP source port is drawn from the connection's queue-pair number
``qpn_for(epoch, src, dst, stripe)``, destination port 4791, protocol 17.
GPU ids double as ranks, so at most 65,536 GPUs.

Collectives (``collective_flows``), viewing GPU ids as a grid of rows x cols
(ZCube: row = group, col = index, i.e. digit 0; ROFT: row = server, col = rail):

``ring``       one channel of ring all-reduce flows, by ``order``:
               ``flat``: one ring over all GPUs in id order, g -> g+1 mod N;
               ``col``:  a closed ring per column, (row, col) -> (row+1, col)
               (ZCube: through the index switch; ROFT: the rail ring NCCL
               builds when NVLink carries the traffic inside a server);
               ``row``:  a closed ring per row, (row, col) -> (row, col+1)
               (ZCube: through the group switch; ROFT: across the rails of
               one server, which the network sees only without NVLink);
               ``grid``: ``row`` and ``col`` as two channels (2N flows), the
               two-dimensional all-reduce with the channels in opposite
               phase order, so both dimensions are busy at once.
               ``stripes`` connections per ring link.
``all-to-all`` every ordered pair of distinct GPUs, N(N-1) flows.

Routing
-------
Flows follow shortest paths whose interior nodes are switches.  ``scheme``:

``"per-device"`` / ``"same"`` (per-hop ECMP)
    At every node with more than one shortest next hop (a multi-port NIC, or
    a switch), the node's ECMP group is its shortest-path neighbours in
    increasing node-id order, and the member is
    ``golden.fabric.ecmp.select_path(h_node, size, mode)`` (``mod``: h % size;
    ``mulhi``: (h * size) >> 32), where for ``"same"`` h_node = h, the flow's
    CRC-32 at every hop (so a switch sees only flows that an upstream
    switch's identical hash already sorted: hash polarisation), and for
    ``"per-device"`` h_node = fmix32(h xor seed(node)), seed(node) =
    fmix32(node * 0x9E3779B9 + 0x7F4A7C15) (mod 2^32), fmix32 the
    MurmurHash3 finaliser -- the per-switch hash seed deployed switches use
    against polarisation.
``"path"`` (one hash over the pair's paths)
    The pair's shortest paths in depth-first order (neighbours by node id)
    are numbered 0..P-1 and the flow takes path ``select_path(h, P, mode)``:
    the textbook "hash mod the number of equal-cost paths", as a source-routed
    or centrally programmed fabric would apply it.  P must not exceed 65,535
    (the largest group ``golden.fabric.ecmp.select_path`` accepts).

Load and rate
-------------
Links are full duplex: each physical link is two directed links, id
``2*l + (0 if forward along links[l] else 1)``.  The load of a directed link
is the number of flows on it.  A flow's rate is the minimum over its links of
capacity / load (equal share at the bottleneck); the collective rate is the
minimum over its member flows (every flow carries the same bytes, so the
collective finishes when its slowest flow does).  The per-GPU rate is that
minimum times the flows each GPU sources, comparable with the GPU's NIC.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from golden.fabric import ecmp
from golden.jit import jit
from golden.topology.topology import Topology

COLLECTIVES = ("ring", "all-to-all")
RING_ORDERS = ("flat", "row", "col", "grid")
SCHEMES = ("per-device", "same", "path")
HOP_SCHEMES = ("per-device", "same")
HASH_IMPLS = ("numba", "c", "ref")
MAX_GPUS = 1 << 16
_M32 = 0xFFFFFFFF


# ---- hashing helpers (pure Python reference) ----------------------------------
def fmix32(x: int) -> int:
    """MurmurHash3's 32-bit finaliser (a bijection on 32-bit values)."""
    x &= _M32
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & _M32
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & _M32
    x ^= x >> 16
    return x


def device_seed(node: int) -> int:
    return fmix32((node * 0x9E3779B9 + 0x7F4A7C15) & _M32)


def hop_hash(h: int, node: int, scheme: str) -> int:
    """The hash a device uses under a per-hop scheme."""
    if scheme == "same":
        return h
    if scheme == "per-device":
        return fmix32(h ^ device_seed(node))
    raise ValueError(f"unknown per-hop scheme {scheme!r}; choose one of {', '.join(HOP_SCHEMES)}")


# ---- grid view and flow sets -------------------------------------------------
def grid_cols(t: Topology) -> int:
    """Columns of the GPU grid: ZCube index (n), ROFT rail (GPUs per server)."""
    return t.params["n"] if t.kind == "zcube" else t.params["rails"]


def ring_links(t: Topology, order: str):
    """(src, dst) of one ring channel of the given order (see module docstring)."""
    N = t.n_gpus
    cols = grid_cols(t)
    rows = N // cols
    g = np.arange(N, dtype=np.int64)
    r, c = g // cols, g % cols
    if order == "flat":
        return g, (g + 1) % N
    if order == "row":
        return g, r * cols + (c + 1) % cols
    if order == "col":
        return g, ((r + 1) % rows) * cols + c
    raise ValueError(f"unknown ring order {order!r}; choose one of {', '.join(RING_ORDERS)}")


def collective_pairs(t: Topology, collective: str, order: str = "col", stripes: int = 1):
    """(src, dst, stripe) int64 arrays of a collective's connections."""
    if t.n_gpus > MAX_GPUS:
        raise ValueError(f"{t.name}: {t.n_gpus} GPUs exceed the {MAX_GPUS}-rank flow plan")
    if isinstance(stripes, bool) or not isinstance(stripes, (int, np.integer)) or not 1 <= stripes <= 256:
        raise ValueError(f"stripes must be an integer in 1..256, got {stripes!r}")
    N = t.n_gpus
    if collective == "ring":
        if order not in RING_ORDERS:
            raise ValueError(f"unknown ring order {order!r}; choose one of {', '.join(RING_ORDERS)}")
        chans = ("row", "col") if order == "grid" else (order,)
        src, dst, stp = [], [], []
        for ch, name in enumerate(chans):
            a, b = ring_links(t, name)
            keep = a != b                    # a one-GPU row or column has no ring link
            for s in range(stripes):
                src.append(a[keep])
                dst.append(b[keep])
                stp.append(np.full(int(keep.sum()), ch * stripes + s, dtype=np.int64))
        return np.concatenate(src), np.concatenate(dst), np.concatenate(stp)
    if collective == "all-to-all":
        src = np.repeat(np.arange(N, dtype=np.int64), N - 1)
        k = np.tile(np.arange(N - 1, dtype=np.int64), N)
        dst = k + (k >= src)
        if stripes > 1:
            src, dst = np.repeat(src, stripes), np.repeat(dst, stripes)
            return src, dst, np.tile(np.arange(stripes, dtype=np.int64), len(src) // stripes)
        return src, dst, np.zeros_like(src)
    raise ValueError(f"unknown collective {collective!r}; choose one of {', '.join(COLLECTIVES)}")


def collective_flows(t: Topology, collective: str, order: str = "col", stripes: int = 1,
                     epoch: int = 0) -> ecmp.FlowSet:
    """The collective's flows as a `golden.fabric.ecmp.FlowSet` (ranks = GPU ids)."""
    if not 0 <= epoch <= 0xFFFF:
        raise ValueError(f"epoch must be 0..65535, got {epoch}")
    src, dst, stp = collective_pairs(t, collective, order, stripes)
    label = f"{collective} ({order}, x{stripes})" if collective == "ring" else f"{collective} (x{stripes})"
    # 'packed' with 256 GPUs per /16 gives exactly 10.<g >> 8>.<g & 255>.1
    return ecmp.make_flowset(label, src, dst, stp, leaves=MAX_GPUS // 256, acc_per_leaf=256,
                             order="packed", perm=None, epoch=epoch)


def gpu_ip(g: int) -> int:
    return ecmp.accel_ip(g >> 8, g & 0xFF)


def flow_hashes(flows: ecmp.FlowSet, impl: str = "numba", algo: str = "crc32") -> np.ndarray:
    """uint32 hash of every flow with golden.fabric.ecmp's numba, C or reference hash."""
    if impl == "numba":
        from golden.fabric import ecmp_numba
        return ecmp_numba.hash_flows(flows, algo)
    if impl == "c":
        from golden.fabric import ecmp_c as cecmp
        return cecmp.hash_flows(flows, algo)
    if impl == "ref":
        return np.array(ecmp.hash_flows_ref(flows, algo), dtype=np.uint32)
    raise ValueError(f"unknown hash implementation {impl!r}; choose one of {', '.join(HASH_IMPLS)}")


# ---- directed-link adjacency ----------------------------------------------------
def directed_csr(t: Topology):
    """(indptr, neighbours, directed link id) -- neighbours sorted by node id."""
    cached = getattr(t, "_directed_csr", None)
    if cached is None:
        indptr, nbr, lid = t.csr
        src = np.repeat(np.arange(t.n_nodes, dtype=np.int64), np.diff(indptr))
        dlink = 2 * lid + (t.links[lid, 0] != src)
        cached = (indptr, nbr, dlink.astype(np.int64))
        t._directed_csr = cached
    return cached


def directed_link_ends(t: Topology) -> np.ndarray:
    """(2L, 2) (from, to) node of every directed link."""
    out = np.empty((2 * t.n_links, 2), dtype=np.int64)
    out[0::2] = t.links
    out[1::2] = t.links[:, ::-1]
    return out


# ---- reference router (pure Python, one flow at a time) -------------------------------
def shortest_next_hops(t: Topology, node: int, dst: int) -> list:
    """Shortest-path next hops from ``node`` towards GPU ``dst``, by node id."""
    hops = t.switch_to_gpu_hops
    N = t.n_gpus
    if node < N:
        here = 1 + min(int(hops[s - N, dst]) for s in t.neighbours(node).tolist())
    else:
        here = int(hops[node - N, dst])
    out = []
    for v in t.neighbours(node).tolist():
        if v == dst or (v >= N and int(hops[v - N, dst]) == here - 1):
            out.append(v)
    return out


def all_shortest_paths(t: Topology, src: int, dst: int) -> list:
    """Every shortest path (node lists) in depth-first order, neighbours by node
    id -- the canonical path order of the ``path`` scheme."""
    out = []

    def walk(node, prefix):
        if node == dst:
            out.append(prefix)
            return
        for v in shortest_next_hops(t, node, dst):
            walk(v, prefix + [v])
    walk(src, [src])
    return out


def route_flow_ref(t: Topology, src: int, dst: int, h: int, mode: str = "mod",
                   scheme: str = "per-device") -> list:
    """Node sequence of one flow, straight from the definitions in the module docstring."""
    if src == dst:
        raise ValueError("a flow needs two distinct GPUs")
    if scheme == "path":
        paths = all_shortest_paths(t, src, dst)
        if not paths:
            raise ValueError(f"{t.name}: GPU {dst} unreachable from GPU {src}")
        return paths[ecmp.select_path(h, len(paths), mode, 32)]
    path = [src]
    node = src
    while node != dst:
        cand = shortest_next_hops(t, node, dst)
        if not cand:
            raise ValueError(f"{t.name}: GPU {dst} unreachable from node {node}")
        if len(cand) == 1:
            node = cand[0]
        else:
            node = cand[ecmp.select_path(hop_hash(h, node, scheme), len(cand), mode, 32)]
        path.append(node)
    return path


def count_shortest_paths(t: Topology, src: int, dst: int) -> int:
    """Number of distinct shortest GPU-to-GPU paths (switch interiors)."""
    memo: dict = {}

    def count(node):
        if node == dst:
            return 1
        if node not in memo:
            memo[node] = sum(count(v) for v in shortest_next_hops(t, node, dst))
        return memo[node]
    return count(src)


# ---- fast router -----------------------------------------------------------------------
@jit
def _fmix32(x):
    # uint64 arithmetic masked to 32 bits (numba widens uint32 products)
    m = np.uint64(0xFFFFFFFF)
    x = np.uint64(x) & m
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x85EBCA6B)) & m
    x ^= x >> np.uint64(13)
    x = (x * np.uint64(0xC2B2AE35)) & m
    x ^= x >> np.uint64(16)
    return x


@jit
def _hop_hash(h, node, seeded):
    """numba twin of `hop_hash` (as uint64 holding a 32-bit value)."""
    hh = np.uint64(h) & np.uint64(0xFFFFFFFF)
    if seeded:
        seed = _fmix32((np.uint64(node) * np.uint64(0x9E3779B9) + np.uint64(0x7F4A7C15)) & np.uint64(0xFFFFFFFF))
        hh = _fmix32(hh ^ seed)
    return hh


@jit
def _path_counts(indptr, nbr, hops_by_dst, n_gpus):
    """counts[t, s] = shortest paths from switch s to GPU t (switch interiors)."""
    n_dst, n_sw = hops_by_dst.shape
    counts = np.zeros((n_dst, n_sw), dtype=np.int64)
    maxd = 0
    for t in range(n_dst):
        for s in range(n_sw):
            if hops_by_dst[t, s] > maxd:
                maxd = hops_by_dst[t, s]
    for t in range(n_dst):
        row = hops_by_dst[t]
        for d in range(1, maxd + 1):
            for s in range(n_sw):
                if row[s] != d:
                    continue
                if d == 1:
                    counts[t, s] = 1             # the switch above GPU t
                    continue
                node = s + n_gpus
                c = 0
                for p in range(indptr[node], indptr[node + 1]):
                    v = nbr[p]
                    if v >= n_gpus and row[v - n_gpus] == d - 1:
                        c += counts[t, v - n_gpus]
                counts[t, s] = c
    return counts


@jit
def _route_kernel(indptr, nbr, dlink, hops_by_dst, n_gpus, src, dst, hashes, mulhi, scheme,
                  path_counts, max_paths, load, paths, err):
    # hops_by_dst[t, s] = links from switch s to GPU t: one destination's row is
    # contiguous, which keeps a flow's look-ups in cache.
    # scheme: 0 per-device seeds, 1 one hash at every hop, 2 hash over the pair's paths
    record = paths.shape[0] > 0
    cand = np.empty(indptr.shape[0], dtype=np.int64)
    candl = np.empty(indptr.shape[0], dtype=np.int64)
    for f in range(src.shape[0]):
        u = src[f]
        t = dst[f]
        h = np.uint32(hashes[f])
        # links still to go from u
        here = np.int64(1 << 30)
        for p in range(indptr[u], indptr[u + 1]):
            d = np.int64(hops_by_dst[t, nbr[p] - n_gpus]) + 1
            if d < here:
                here = d
        rank = np.int64(0)
        if scheme == 2:
            total = np.int64(0)
            for p in range(indptr[u], indptr[u + 1]):
                v = nbr[p]
                if np.int64(hops_by_dst[t, v - n_gpus]) == here - 1:
                    total += path_counts[t, v - n_gpus]
            if total > max_paths:
                err[0] = 2
                err[1] = f
                return
            if mulhi:
                rank = np.int64((np.uint64(h) * np.uint64(total)) >> np.uint64(32))
            else:
                rank = np.int64(np.uint64(h) % np.uint64(total))
        step = 0
        if record:
            paths[f, 0] = u
        while u != t:
            nc = 0
            for p in range(indptr[u], indptr[u + 1]):
                v = nbr[p]
                if v == t or (v >= n_gpus and np.int64(hops_by_dst[t, v - n_gpus]) == here - 1):
                    cand[nc] = v
                    candl[nc] = dlink[p]
                    nc += 1
            if nc == 0:
                err[0] = 1
                err[1] = f
                return
            if nc == 1:
                k = 0
            elif scheme == 2:
                # unrank: walk the candidates in order, skipping whole subtrees of paths
                k = 0
                while True:
                    c = np.int64(1) if cand[k] == t else path_counts[t, cand[k] - n_gpus]
                    if rank < c:
                        break
                    rank -= c
                    k += 1
            else:
                hh = _hop_hash(h, u, scheme == 0)
                if mulhi:
                    k = np.int64((hh * np.uint64(nc)) >> np.uint64(32))
                else:
                    k = np.int64(hh % np.uint64(nc))
            load[candl[k]] += 1
            u = cand[k]
            here -= 1
            step += 1
            if record:
                paths[f, step] = u


@dataclass
class Routing:
    """Result of routing a flow set."""
    topology: Topology
    name: str
    src: np.ndarray
    dst: np.ndarray
    load: np.ndarray                 # (2L,) flows per directed link
    paths: np.ndarray | None = None  # (F, max_len) node ids, -1 padded
    mode: str = "mod"
    scheme: str = "per-device"


def path_counts(t: Topology) -> np.ndarray:
    """(N, S) int64: shortest paths from each switch to each GPU (cached)."""
    cached = getattr(t, "_path_counts", None)
    if cached is None:
        indptr, nbr, _ = directed_csr(t)
        cached = t._path_counts = _path_counts(indptr, nbr, _hops_by_dst(t), t.n_gpus)
    return cached


def _hops_by_dst(t: Topology) -> np.ndarray:
    cached = getattr(t, "_hops_by_dst", None)
    if cached is None:
        cached = t._hops_by_dst = np.ascontiguousarray(t.switch_to_gpu_hops.T)
    return cached


# The largest ECMP group golden.fabric.ecmp.select_path accepts.
MAX_PATHS = 0xFFFF


def route(t: Topology, src, dst, hashes, mode: str = "mod", scheme: str = "per-device",
          record_paths: bool = False, name: str = "") -> Routing:
    """Route flows (src GPU, dst GPU, 32-bit hash) and count directed-link loads."""
    if mode not in ecmp.PATH_MODES:
        raise ValueError(f"unknown path mode {mode!r}; choose one of {', '.join(ecmp.PATH_MODES)}")
    if scheme not in SCHEMES:
        raise ValueError(f"unknown ECMP scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    hashes = np.ascontiguousarray(hashes, dtype=np.uint32)
    if not (len(src) == len(dst) == len(hashes)):
        raise ValueError("src, dst and hashes must have the same length")
    if len(src) and (src.min() < 0 or dst.min() < 0 or max(src.max(), dst.max()) >= t.n_gpus):
        raise ValueError(f"flow endpoints must be GPUs 0..{t.n_gpus - 1}")
    if np.any(src == dst):
        raise ValueError("a flow needs two distinct GPUs")
    indptr, nbr, dlink = directed_csr(t)
    hops = t.switch_to_gpu_hops
    hops_by_dst = _hops_by_dst(t)
    counts = path_counts(t) if scheme == "path" else np.zeros((1, 1), dtype=np.int64)
    load = np.zeros(2 * t.n_links, dtype=np.int64)
    if record_paths:
        maxlen = int(hops.max()) + 2
        paths = np.full((len(src), maxlen), -1, dtype=np.int64)
    else:
        paths = np.zeros((0, 1), dtype=np.int64)
    err = np.zeros(2, dtype=np.int64)
    _route_kernel(indptr, nbr, dlink, hops_by_dst, t.n_gpus, src, dst, hashes, mode == "mulhi",
                  SCHEMES.index(scheme), counts, MAX_PATHS, load, paths, err)
    if err[0] == 1:
        raise ValueError(f"{t.name}: GPU {dst[err[1]]} unreachable from GPU {src[err[1]]}")
    if err[0] == 2:
        raise ValueError(f"{t.name}: GPU {src[err[1]]} -> {dst[err[1]]} has more than {MAX_PATHS} equal-cost "
                         f"paths, above the largest ECMP group; use a per-hop scheme")
    return Routing(t, name, src, dst, load, paths if record_paths else None, mode, scheme)


def route_collective(t: Topology, collective: str, order: str = "col", stripes: int = 1, epoch: int = 0,
                     mode: str = "mod", scheme: str = "per-device", impl: str = "numba",
                     record_paths: bool = False) -> Routing:
    flows = collective_flows(t, collective, order, stripes, epoch)
    h = flow_hashes(flows, impl)
    return route(t, flows.src_rank, flows.dst_rank, h, mode, scheme, record_paths, name=flows.name)


# ---- load statistics -----------------------------------------------------------------------
def node_level_names(t: Topology) -> list:
    prefix = "L" if t.kind == "zcube" else ""
    names = [f"{prefix}{i}" if t.kind == "zcube" else n for i, n in enumerate(t.level_names)]
    return names


def link_class_names(t: Topology) -> np.ndarray:
    """Name ("GPU->leaf", "L0->L1", ...) of every directed link."""
    ends = directed_link_ends(t)
    names = ["GPU"] + node_level_names(t)
    lvl = np.concatenate([np.full(t.n_gpus, -1, dtype=np.int64), t.switch_level.astype(np.int64)]) + 1
    a, b = lvl[ends[:, 0]], lvl[ends[:, 1]]
    table = np.array([[f"{names[i]}->{names[j]}" for j in range(len(names))] for i in range(len(names))])
    return table[a, b]


@dataclass
class LoadSummary:
    topology: str
    collective: str
    flows: int
    flows_per_gpu: float
    max_load: int
    busiest_link: tuple            # (from node, to node)
    busiest_class: str
    min_flow_gbps: float           # the collective rate: minimum over member flows
    gpu_gbps: float                # min flow rate x flows sourced per GPU
    nic_gbps: int                  # a GPU's total NIC capacity
    efficiency: float              # gpu_gbps / nic_gbps
    per_class: dict = field(default_factory=dict)   # class -> (links, used, max, mean over used)


def summarize(r: Routing) -> LoadSummary:
    t = r.topology
    load = r.load
    cap = np.repeat(t.link_gbps, 2).astype(np.float64)
    used = load > 0
    if not used.any():
        raise ValueError("no flow crossed the network")
    share = cap[used] / load[used]
    min_rate = float(share.min())
    busiest = int(np.argmax(load))
    ends = directed_link_ends(t)
    classes = link_class_names(t)
    per_class = {}
    for c in dict.fromkeys(classes.tolist()):
        m = classes == c
        lm = load[m]
        u = lm > 0
        per_class[c] = (int(m.sum()), int(u.sum()), int(lm.max()), float(lm[u].mean()) if u.any() else 0.0)
    src_counts = np.bincount(r.src, minlength=t.n_gpus)
    fpg = float(src_counts.mean())
    nic = _nic_gbps(t)
    gpu_rate = min_rate * float(src_counts.min())
    return LoadSummary(t.name, r.name, len(r.src), fpg, int(load[busiest]),
                       (int(ends[busiest, 0]), int(ends[busiest, 1])), str(classes[busiest]),
                       min_rate, gpu_rate, nic, gpu_rate / nic, per_class)


def _nic_gbps(t: Topology) -> int:
    gpu_side = np.where(t.links[:, 0] < t.n_gpus, t.links[:, 0], t.links[:, 1])
    is_host = (t.links < t.n_gpus).any(axis=1)
    return int(np.bincount(gpu_side[is_host], weights=t.link_gbps[is_host], minlength=t.n_gpus).max())
