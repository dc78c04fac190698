"""Cluster topologies as compact graphs: ZCube(n,k) and rail-optimized fat trees.

A `Topology` is an undirected multigraph-free graph of GPUs and switches.
Nodes are integers: GPUs are ``0 .. N-1``, switches ``N .. N+S-1``.  Links are
an ``(L, 2)`` int64 array of node pairs; the adjacency is a CSR built on
demand.  GPUs terminate traffic and never forward it, so every distance in
this module is a path whose interior nodes are switches only, and the
*distance between two GPUs* is counted, as the design documents count it, in
**switches on the path** (a GPU pair on one switch is 1 apart).

Generators
----------
``zcube(n, k)``
    Built literally by the recursive rule: ZCube(n,1) is one switch with n
    GPUs; ZCube(n,k+1) takes n copies of ZCube(n,k) and adds n^k level-k
    switches.  The level-k port of GPU i in copy j goes to port j of level-k
    switch i, and level-(k-1) switch i of every copy connects to level-k
    switches i*n .. (i+1)*n-1.  ``zcube_closed_form`` gives the same wiring from
    the GPU's base-n digits (used for graphs too large to build, and checked
    against the literal construction).
``roft2(...)`` / ``roft3(...)``
    Rail-optimized fat trees: GPU r of every server goes to the leaf of rail r
    in its rail group.  Two tiers: every leaf to every spine.  Three tiers:
    pods of rail groups whose leaves mesh with the pod's spines, and spines
    grouped in core planes (spine j of each pod belongs to plane j // (P/Q);
    every spine of a plane links once to every core of that plane).
``roft_radix(n)``
    The non-blocking three-tier ROFT of radix n with n^2 GPUs (4 pods; 2n
    leaves, 2n spines, n cores; 3n^2 links), the fabric the ZCube(n,2) of 2n
    half-speed ports is compared with.

Formulas (``zcube_formulas``, ``roft*_formulas``) are the closed-form counts;
the tests compare them with the generated graphs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import numpy as np

# Link speeds of the comparison in the design document (Gb/s).
ZCUBE_PORT_GBPS = 200   # each GPU's 400G NIC split into two 200G ports
ROFT_PORT_GBPS = 400

# Sizes above this are refused by the explicit generators (memory guard);
# larger instances are handled by formulas and `zcube_closed_form`.
MAX_EXPLICIT_LINKS = 20_000_000


@dataclass(eq=False)
class Topology:
    """A GPU/switch graph.

    name            human-readable description, e.g. "ZCube(4,2)"
    kind            "zcube" or "roft"
    n_gpus          N; GPU nodes are 0..N-1
    n_switches      S; switch nodes are N..N+S-1
    links           (L, 2) int64 node pairs, each physical link once
    link_gbps       (L,) int64 capacity of each link, per direction (full duplex)
    switch_level    (S,) int8: ZCube level, or ROFT tier (0 leaf, 1 spine, 2 core)
    level_names     name of each level value
    gpus_per_server GPUs that share a server (and, in ZCube, the group switch)
    params          generator parameters
    """
    name: str
    kind: str
    n_gpus: int
    n_switches: int
    links: np.ndarray
    link_gbps: np.ndarray
    switch_level: np.ndarray
    level_names: tuple
    gpus_per_server: int
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        self.links = np.ascontiguousarray(self.links, dtype=np.int64)
        self.link_gbps = np.ascontiguousarray(self.link_gbps, dtype=np.int64)
        self.switch_level = np.ascontiguousarray(self.switch_level, dtype=np.int8)
        if self.links.ndim != 2 or self.links.shape[1] != 2:
            raise ValueError("links must be an (L, 2) array")
        if len(self.link_gbps) != len(self.links):
            raise ValueError("link_gbps must have one entry per link")
        if len(self.switch_level) != self.n_switches:
            raise ValueError("switch_level must have one entry per switch")

    # ---- sizes ---------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return self.n_gpus + self.n_switches

    @property
    def n_links(self) -> int:
        return len(self.links)

    def is_switch(self, node) -> np.ndarray:
        return np.asarray(node) >= self.n_gpus

    # ---- adjacency -----------------------------------------------------
    @cached_property
    def csr(self):
        """(indptr, neighbours, link_id) with neighbours of each node sorted by
        node id; ``link_id`` is the index into ``links`` of that adjacency."""
        u, v = self.links[:, 0], self.links[:, 1]
        src = np.concatenate([u, v])
        dst = np.concatenate([v, u])
        lid = np.concatenate([np.arange(self.n_links), np.arange(self.n_links)])
        order = np.lexsort((dst, src))
        src, dst, lid = src[order], dst[order], lid[order]
        indptr = np.zeros(self.n_nodes + 1, dtype=np.int64)
        np.add.at(indptr, src + 1, 1)
        np.cumsum(indptr, out=indptr)
        return indptr, dst.astype(np.int64), lid.astype(np.int64)

    @cached_property
    def degree(self) -> np.ndarray:
        indptr = self.csr[0]
        return np.diff(indptr)

    def neighbours(self, node: int) -> np.ndarray:
        indptr, nbr, _ = self.csr
        return nbr[indptr[node]:indptr[node + 1]]

    def gpu_switches(self) -> np.ndarray:
        """(N, P) switch node ids each GPU's ports attach to (P ports per GPU,
        in increasing switch-id order); raises if GPUs have unequal port counts."""
        indptr, nbr, _ = self.csr
        ports = np.diff(indptr[: self.n_gpus + 1])
        if self.n_gpus == 0 or ports.min() != ports.max():
            raise ValueError("GPUs have unequal port counts")
        return nbr[: indptr[self.n_gpus]].reshape(self.n_gpus, int(ports[0]))

    def has_duplicate_links(self) -> bool:
        a = np.sort(self.links, axis=1)
        return len(np.unique(a, axis=0)) != len(a)

    # ---- distances -----------------------------------------------------
    @cached_property
    def switch_distances(self) -> np.ndarray:
        """(S, S) int16 link hops between switches over switch-only paths
        (-1 where unreachable).  Meant for S up to a few thousand."""
        if self.n_switches > 20000:
            raise ValueError(f"{self.name}: {self.n_switches} switches is too many for all-pairs distances")
        indptr, nbr, _ = self.csr
        return _switch_apsp(indptr, nbr, self.n_gpus, self.n_switches)

    @cached_property
    def switch_to_gpu_hops(self) -> np.ndarray:
        """(S, N) int16 link hops from each switch to each GPU (a switch directly
        above a GPU is 1 hop away)."""
        return _switch_to_gpu(self.switch_distances, self.gpu_switches() - self.n_gpus)

    def gpu_distance_row(self, src_gpu: int) -> np.ndarray:
        """Switches on a shortest path from ``src_gpu`` to every GPU (0 for
        itself; -1 if unreachable).  BFS from one source over the explicit graph."""
        indptr, nbr, _ = self.csr
        return _bfs_gpu_row(indptr, nbr, self.n_gpus, self.n_nodes, int(src_gpu))

    def hop_histogram_bfs(self, sources=None) -> dict:
        """{switches: ordered GPU pairs} from BFS over ``sources`` (default all
        GPUs).  Excludes the pair of a GPU with itself."""
        if sources is None:
            sources = range(self.n_gpus)
        hist: dict = {}
        for s in sources:
            row = self.gpu_distance_row(int(s))
            vals, counts = np.unique(row, return_counts=True)
            for d, c in zip(vals.tolist(), counts.tolist()):
                if d == 0:
                    continue
                hist[d] = hist.get(d, 0) + c
        return dict(sorted(hist.items()))

    def diameter_bfs(self) -> int:
        """Largest switch count of any shortest GPU-to-GPU path, from all-pairs
        switch distances (exhaustive over GPU pairs through their ports)."""
        hist = self.hop_histogram_all_pairs()
        if -1 in hist:
            raise ValueError(f"{self.name} is disconnected")
        return max(hist)

    def hop_histogram_all_pairs(self) -> dict:
        """Exhaustive {switches: ordered GPU pairs}, computed from switch
        all-pairs distances (every GPU pair, no sampling)."""
        sw = self.gpu_switches() - self.n_gpus
        counts = _all_pairs_hist(self.switch_distances, sw, np.ones(self.n_gpus, dtype=np.int64))
        return {d: int(c) for d, c in enumerate(counts) if c and d > 0}


# ---- numba kernels --------------------------------------------------------
from golden.jit import jit  # noqa: E402  (after the dataclass for readability)


@jit
def _switch_apsp(indptr, nbr, n_gpus, n_switches):
    dist = np.full((n_switches, n_switches), -1, dtype=np.int16)
    queue = np.empty(n_switches, dtype=np.int64)
    for s in range(n_switches):
        dist[s, s] = 0
        queue[0] = s              # the queue holds s: head 0, tail 1
        head, tail = 0, 1
        while head < tail:
            u = queue[head]
            head += 1
            node = u + n_gpus
            for p in range(indptr[node], indptr[node + 1]):
                v = nbr[p]
                if v < n_gpus:
                    continue  # GPUs never forward
                w = v - n_gpus
                if dist[s, w] < 0:
                    dist[s, w] = dist[s, u] + 1
                    queue[tail] = w
                    tail += 1
    return dist


@jit
def _switch_to_gpu(swdist, gpu_sw):
    n_sw = swdist.shape[0]
    n_gpu, ports = gpu_sw.shape
    out = np.full((n_sw, n_gpu), -1, dtype=np.int16)
    for s in range(n_sw):
        for g in range(n_gpu):
            best = -1
            for p in range(ports):
                d = swdist[s, gpu_sw[g, p]]
                if d >= 0 and (best < 0 or d < best):
                    best = d
            if best >= 0:
                out[s, g] = best + 1
    return out


@jit
def _all_pairs_hist(swdist, gpu_sw, gpus_per_row):
    # Row r of gpu_sw stands for gpus_per_row[r] GPUs on those switches (1 when every
    # GPU has its own row): its ordered pairs with another row are the product of the
    # two, within the row its own GPUs' ordered pairs.
    n_gpu, ports = gpu_sw.shape
    counts = np.zeros(swdist.shape[0] + 2, dtype=np.int64)
    unreachable = 0
    for a in range(n_gpu):
        for b in range(n_gpu):
            pairs = gpus_per_row[a] * (gpus_per_row[b] - 1 if a == b else gpus_per_row[b])
            if pairs == 0:
                continue
            best = -1
            for p in range(ports):
                sa = gpu_sw[a, p]
                for q in range(ports):
                    d = swdist[sa, gpu_sw[b, q]]
                    if d >= 0 and (best < 0 or d < best):
                        best = d
            if best < 0:
                unreachable += pairs
            else:
                counts[best + 1] += pairs
    if unreachable:
        counts[0] = -unreachable
    return counts


@jit
def _bfs_gpu_row(indptr, nbr, n_gpus, n_nodes, src):
    dist = np.full(n_nodes, -1, dtype=np.int32)
    queue = np.empty(n_nodes, dtype=np.int64)
    dist[src] = 0
    queue[0] = src                # the queue holds src: head 0, tail 1
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        if u < n_gpus and u != src:
            continue  # reached a GPU: it terminates, never forwards
        for p in range(indptr[u], indptr[u + 1]):
            v = nbr[p]
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue[tail] = v
                tail += 1
    row = np.empty(n_gpus, dtype=np.int32)
    for g in range(n_gpus):
        # links on a GPU-to-GPU path = switches + 1
        row[g] = dist[g] - 1 if dist[g] > 0 else dist[g]
    return row


# ---- ZCube -------------------------------------------------------------------
def _check_int(name, value, lo):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
    return int(value)


def zcube_formulas(n: int, k: int) -> dict:
    """Closed-form counts of ZCube(n,k) from the design document: N = n^k GPUs,
    S = k n^(k-1) switches, L = (2k-1) n^k links, diameter D = k switches; plus
    the port counts (edge levels 2n, middle levels 3n; n for k = 1)."""
    n = _check_int("n", n, 2)
    k = _check_int("k", k, 1)
    return {
        "gpus": n ** k,
        "switches": k * n ** (k - 1),
        "links": (2 * k - 1) * n ** k,
        "diameter": k,
        "gpu_ports": k,
        "edge_switch_ports": n if k == 1 else 2 * n,
        "middle_switch_ports": 3 * n if k >= 3 else None,
    }


def zcube_hamming_histogram(n: int, k: int) -> dict:
    """{d: ordered GPU pairs whose base-n addresses differ in exactly d digits}
    = n^k C(k,d)(n-1)^d.  This is ZCube(n,2)'s hop histogram (1 switch: same
    group or index; 2: the rest).  For k >= 3 the graph has shortcuts and the
    true histogram (``zcube_hop_histogram``) differs from it."""
    n = _check_int("n", n, 2)
    k = _check_int("k", k, 1)
    N = n ** k
    return {d: N * math.comb(k, d) * (n - 1) ** d for d in range(1, k + 1)}


def set_partitions(k: int, max_blocks: int):
    """Restricted growth strings of length k with at most max_blocks blocks:
    each is one set partition of the k digit positions."""
    out = []

    def rec(prefix, blocks):
        if len(prefix) == k:
            out.append(tuple(prefix))
            return
        for b in range(min(blocks + 1, max_blocks)):
            rec(prefix + [b], max(blocks, b + 1))
    rec([], 0)
    return out


def zcube_digit_pattern(g: int, n: int, k: int) -> tuple:
    """Set partition (restricted growth string, position 0 = digit 0) of GPU
    g's base-n digits: which digit positions hold equal values."""
    seen: dict = {}
    out = []
    for lvl in range(k):
        d = (g // n ** lvl) % n
        out.append(seen.setdefault(d, len(seen)))
    return tuple(out)


def zcube_hop_histogram(n: int, k: int, return_classes: bool = False):
    """Exact {switches: ordered GPU pairs} of ZCube(n,k) from its symmetry.

    Applying one permutation of {0..n-1} to every base-n digit of every GPU
    and switch address maps links to links (GPU->switch drops a digit; the
    level l-1 -> l links (O, c, i) -> (O, i, x) hold for every x), so a
    source's distance profile depends only on which of its digits are equal:
    the set partition of its k digit positions.  The histogram is the sum over
    partitions with b <= n blocks of n(n-1)..(n-b+1) (sources with that
    pattern) times one representative's BFS profile (``zcube_bfs_from``).
    With return_classes, also {pattern: (sources, per-source profile)}."""
    n = _check_int("n", n, 2)
    k = _check_int("k", k, 1)
    total: dict = {}
    classes = {}
    for pat, sources, profile in _zcube_class_profiles(n, k):
        prof = dict(profile)
        classes[pat] = (sources, prof)
        for d, c in prof.items():
            total[d] = total.get(d, 0) + sources * c
    total = dict(sorted(total.items()))
    return (total, classes) if return_classes else total


@lru_cache(maxsize=None)
def _zcube_class_profiles(n: int, k: int) -> tuple:
    """((pattern, sources with that pattern, one representative's BFS profile as
    (switches, GPUs) pairs), ...) over the set partitions.  Cached: each ZCube(42,4)
    profile is a BFS reaching 3.1 M GPUs, and the report needs that histogram three times."""
    out = []
    for pat in set_partitions(k, n):
        b = max(pat) + 1
        rep = sum(pat[lvl] * n ** lvl for lvl in range(k))
        out.append((pat, math.perm(n, b), tuple(zcube_bfs_from(n, k, rep).items())))
    return tuple(out)


def zcube_bfs_from(n: int, k: int, src_gpu: int, return_row: bool = False):
    """BFS from one GPU of ZCube(n,k) using the closed-form wiring, never
    materialising the graph (so it reaches ZCube(42,4)'s 3.1 M GPUs).
    Returns {switches: GPUs} (the source itself excluded), or the per-GPU row."""
    n = _check_int("n", n, 2)
    k = _check_int("k", k, 1)
    N = n ** k
    if not 0 <= src_gpu < N:
        raise ValueError(f"GPU {src_gpu} outside ZCube({n},{k})")
    row, counts, _, _ = _zcube_implicit_bfs(n, k, int(src_gpu))
    if return_row:
        return row
    if counts[0]:
        raise ValueError(f"ZCube({n},{k}) is disconnected")
    return {d: int(c) for d, c in enumerate(counts[1:]) if d > 0 and c}


def zcube(n: int, k: int) -> Topology:
    """ZCube(n,k) built by the recursive rule (see module docstring).

    n  GPUs per switch and copies per recursion step; integer >= 2
    k  switch levels = ports per GPU = diameter; integer >= 1
    GPU g has base-n digits a_{k-1}..a_0 (a_{k-1} = outermost copy).
    Switch levels are numbered 0..k-1; ``switch_level`` holds the level.
    """
    f = zcube_formulas(n, k)
    if f["links"] > MAX_EXPLICIT_LINKS:
        raise ValueError(f"ZCube({n},{k}) has {f['links']} links, above the explicit-graph limit "
                         f"{MAX_EXPLICIT_LINKS}; use zcube_formulas / zcube_closed_form")
    # State of ZCube(n,m): gpu_sw[l][g] = index of GPU g's level-l switch within
    # level l; inter[l] = (lower, upper) index pairs of the level l-1 -> l links.
    gpu_sw = [np.zeros(n, dtype=np.int64)]          # ZCube(n,1): one switch, n GPUs
    inter: list = [None]
    for m in range(1, k):                            # build ZCube(n,m+1)
        n_gpu = n ** m                               # GPUs per copy
        per_level = n ** (m - 1)                     # switches per level per copy
        copies = np.arange(n, dtype=np.int64)
        new_gpu_sw = []
        for lvl in range(m):
            # copy j's switches are renumbered j*per_level + old index
            new_gpu_sw.append((copies[:, None] * per_level + gpu_sw[lvl][None, :]).reshape(-1))
        # new level m: GPU i of copy j -> level-m switch i (on its port j)
        new_gpu_sw.append(np.tile(np.arange(n_gpu, dtype=np.int64), n))
        new_inter = [None]
        for lvl in range(1, m):
            lo, up = inter[lvl]
            new_inter.append(((copies[:, None] * per_level + lo[None, :]).reshape(-1),
                              (copies[:, None] * per_level + up[None, :]).reshape(-1)))
        # level-(m-1) switch i of every copy j -> level-m switches i*n .. i*n+n-1
        j, i, x = np.meshgrid(copies, np.arange(per_level, dtype=np.int64), copies, indexing="ij")
        new_inter.append(((j * per_level + i).reshape(-1), (i * n + x).reshape(-1)))
        gpu_sw, inter = new_gpu_sw, new_inter
    return _zcube_topology(n, k, gpu_sw, inter, name=f"ZCube({n},{k})", construction="recursive")


def zcube_closed_form(n: int, k: int, gpus=None):
    """The ZCube(n,k) wiring from base-n digits, without recursion.

    Returns (gpu_sw, inter) in the layout `zcube` uses: gpu_sw[l][g] = level-l
    switch of GPU g = g's digits with digit l removed; inter[l] (l >= 1) =
    (lower, upper): level-(l-1) switch O*n^l + c*n^(l-1) + i links to level-l
    switch O*n^l + i*n + x for every outer O, copy c, inner i and x < n.
    ``gpus`` restricts gpu_sw to those GPU ids (for huge instances)."""
    n = _check_int("n", n, 2)
    k = _check_int("k", k, 1)
    g = np.arange(n ** k, dtype=np.int64) if gpus is None else np.asarray(gpus, dtype=np.int64)
    gpu_sw = []
    for lvl in range(k):
        high = g // n ** (lvl + 1)
        low = g % n ** lvl
        gpu_sw.append(high * n ** lvl + low)
    inter: list = [None]
    for lvl in range(1, k):
        O, c, i, x = np.meshgrid(np.arange(n ** (k - lvl - 1), dtype=np.int64), np.arange(n, dtype=np.int64),
                                 np.arange(n ** (lvl - 1), dtype=np.int64), np.arange(n, dtype=np.int64),
                                 indexing="ij")
        inter.append(((O * n ** lvl + c * n ** (lvl - 1) + i).reshape(-1),
                      (O * n ** lvl + i * n + x).reshape(-1)))
    return gpu_sw, inter


def zcube_from_closed_form(n: int, k: int) -> Topology:
    """ZCube(n,k) assembled from `zcube_closed_form` (a second, independent
    construction for cross-checking the recursive one)."""
    gpu_sw, inter = zcube_closed_form(n, k)
    return _zcube_topology(n, k, gpu_sw, inter, name=f"ZCube({n},{k})", construction="closed-form")


def _zcube_topology(n, k, gpu_sw, inter, name, construction):
    N = n ** k
    per_level = n ** (k - 1)
    base = lambda lvl: N + lvl * per_level  # noqa: E731
    parts = []
    gpus = np.arange(N, dtype=np.int64)
    for lvl in range(k):
        parts.append(np.stack([gpus, base(lvl) + gpu_sw[lvl]], axis=1))
    for lvl in range(1, k):
        lo, up = inter[lvl]
        parts.append(np.stack([base(lvl - 1) + lo, base(lvl) + up], axis=1))
    links = np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64)
    S = k * per_level
    return Topology(
        name=name, kind="zcube", n_gpus=N, n_switches=S, links=links,
        link_gbps=np.full(len(links), ZCUBE_PORT_GBPS, dtype=np.int64),
        switch_level=np.repeat(np.arange(k, dtype=np.int8), per_level),
        level_names=tuple(f"level {lvl}" for lvl in range(k)),
        # the design document puts all NICs of a server on one group switch;
        # a group switch has n GPU ports, so servers of 8 GPUs when n allows it
        gpus_per_server=math.gcd(n, 8),
        params={"n": n, "k": k, "construction": construction},
    )


# ---- rail-optimized fat trees ----------------------------------------------
def roft2_formulas(rails: int, servers_per_group: int, groups: int, spines: int) -> dict:
    """Two-tier ROFT: one leaf per rail per rail group, every leaf to every spine."""
    leaves = rails * groups
    gpus = rails * servers_per_group * groups
    return {
        "gpus": gpus, "leaves": leaves, "spines": spines, "cores": 0,
        "switches": leaves + spines,
        "links": gpus + leaves * spines,
        "diameter": 1 if (leaves == 1) else 3,
        "leaf_ports": servers_per_group + spines,
        "spine_ports": leaves,
    }


def roft2(rails: int, servers_per_group: int, groups: int = 1, spines: int | None = None,
          gbps: int = ROFT_PORT_GBPS) -> Topology:
    """Two-tier rail-optimized fat tree.

    rails              GPUs per server (= rails = leaves per rail group); >= 1
    servers_per_group  servers under one rail group (GPUs per leaf); >= 1
    groups             rail groups; >= 1
    spines             spine switches, each linked once to every leaf; >= 1
                       (default servers_per_group: non-blocking leaves)
    gbps               link speed of every link
    GPU id = (group * servers_per_group + server) * rails + rail.
    """
    r = _check_int("rails", rails, 1)
    h = _check_int("servers_per_group", servers_per_group, 1)
    g = _check_int("groups", groups, 1)
    s = _check_int("spines", h if spines is None else spines, 1)
    f = roft2_formulas(r, h, g, s)
    if f["links"] > MAX_EXPLICIT_LINKS:
        raise ValueError(f"ROFT with {f['links']} links is above the explicit-graph limit")
    N = f["gpus"]
    gpu = np.arange(N, dtype=np.int64)
    rail = gpu % r
    group = gpu // (r * h)
    leaf = group * r + rail
    n_leaf = f["leaves"]
    host_links = np.stack([gpu, N + leaf], axis=1)
    L, S = np.meshgrid(np.arange(n_leaf, dtype=np.int64), np.arange(s, dtype=np.int64), indexing="ij")
    up_links = np.stack([N + L.reshape(-1), N + n_leaf + S.reshape(-1)], axis=1)
    links = np.concatenate([host_links, up_links])
    return Topology(
        name=f"ROFT2(rails={r}, servers/group={h}, groups={g}, spines={s})", kind="roft",
        n_gpus=N, n_switches=n_leaf + s, links=links,
        link_gbps=np.full(len(links), gbps, dtype=np.int64),
        switch_level=np.concatenate([np.zeros(n_leaf, np.int8), np.ones(s, np.int8)]),
        level_names=("leaf", "spine"), gpus_per_server=r,
        params={"tiers": 2, "rails": r, "servers_per_group": h, "groups": g, "spines": s, "gbps": gbps},
    )


def roft3_formulas(rails, servers_per_group, groups_per_pod, pods, spines_per_pod, planes, cores_per_plane):
    leaves_per_pod = rails * groups_per_pod
    leaves = leaves_per_pod * pods
    spines = spines_per_pod * pods
    cores = planes * cores_per_plane
    gpus = leaves * servers_per_group
    spines_per_plane_per_pod = spines_per_pod // planes
    return {
        "gpus": gpus, "leaves": leaves, "spines": spines, "cores": cores,
        "switches": leaves + spines + cores,
        "links": gpus + leaves * spines_per_pod + spines * cores_per_plane,
        "diameter": 5 if pods > 1 else (3 if leaves_per_pod > 1 else 1),
        "leaf_ports": servers_per_group + spines_per_pod,
        "spine_ports": leaves_per_pod + cores_per_plane,
        "core_ports": spines_per_plane_per_pod * pods,
    }


def roft3(rails: int, servers_per_group: int, groups_per_pod: int, pods: int, spines_per_pod: int,
          planes: int, cores_per_plane: int, gbps: int = ROFT_PORT_GBPS) -> Topology:
    """Three-tier rail-optimized fat tree with pods.

    rails              GPUs per server = leaves per rail group; >= 1
    servers_per_group  servers under a rail group (GPUs per leaf); >= 1
    groups_per_pod     rail groups per pod; >= 1
    pods               >= 1
    spines_per_pod     each leaf links once to every spine of its pod; >= 1
    planes             core planes; must divide spines_per_pod.  Spine j of a
                       pod is in plane j // (spines_per_pod / planes)
    cores_per_plane    every spine of a plane links once to every core of it
    gbps               link speed of every link
    GPU id = ((pod * groups_per_pod + group) * servers_per_group + server) * rails + rail.
    Switch ids: leaves (pod-major, then group, then rail), spines (pod-major), cores (plane-major).
    """
    r = _check_int("rails", rails, 1)
    h = _check_int("servers_per_group", servers_per_group, 1)
    G = _check_int("groups_per_pod", groups_per_pod, 1)
    M = _check_int("pods", pods, 1)
    P = _check_int("spines_per_pod", spines_per_pod, 1)
    Q = _check_int("planes", planes, 1)
    C = _check_int("cores_per_plane", cores_per_plane, 1)
    if P % Q:
        raise ValueError(f"planes ({Q}) must divide spines_per_pod ({P})")
    f = roft3_formulas(r, h, G, M, P, Q, C)
    if f["links"] > MAX_EXPLICIT_LINKS:
        raise ValueError(f"ROFT with {f['links']} links is above the explicit-graph limit")
    N = f["gpus"]
    n_leaf, n_spine, n_core = f["leaves"], f["spines"], f["cores"]
    leaf0, spine0, core0 = N, N + n_leaf, N + n_leaf + n_spine
    gpu = np.arange(N, dtype=np.int64)
    rail = gpu % r
    group_global = gpu // (r * h)                  # pod * G + group
    leaf = group_global * r + rail
    host = np.stack([gpu, leaf0 + leaf], axis=1)
    lf = np.arange(n_leaf, dtype=np.int64)
    pod_of_leaf = lf // (r * G)
    Lm, Pm = np.meshgrid(lf, np.arange(P, dtype=np.int64), indexing="ij")
    leaf_spine = np.stack([leaf0 + Lm.reshape(-1), spine0 + (pod_of_leaf[:, None] * P + Pm).reshape(-1)], axis=1)
    sp = np.arange(n_spine, dtype=np.int64)
    plane = (sp % P) // (P // Q)
    Sm, Cm = np.meshgrid(sp, np.arange(C, dtype=np.int64), indexing="ij")
    spine_core = np.stack([spine0 + Sm.reshape(-1), core0 + (plane[:, None] * C + Cm).reshape(-1)], axis=1)
    links = np.concatenate([host, leaf_spine, spine_core])
    return Topology(
        name=f"ROFT3(rails={r}, servers/group={h}, groups/pod={G}, pods={M}, spines/pod={P}, "
             f"planes={Q}, cores/plane={C})",
        kind="roft", n_gpus=N, n_switches=n_leaf + n_spine + n_core, links=links,
        link_gbps=np.full(len(links), gbps, dtype=np.int64),
        switch_level=np.concatenate([np.zeros(n_leaf, np.int8), np.ones(n_spine, np.int8),
                                     np.full(n_core, 2, np.int8)]),
        level_names=("leaf", "spine", "core"), gpus_per_server=r,
        params={"tiers": 3, "rails": r, "servers_per_group": h, "groups_per_pod": G, "pods": M,
                "spines_per_pod": P, "planes": Q, "cores_per_plane": C, "gbps": gbps},
    )


def roft_radix_params(n: int, rails: int = 8) -> dict:
    """roft3 parameters of the non-blocking three-tier ROFT of radix n with n^2
    GPUs: leaves n/2 down + n/2 up, pods of n/2 leaves and n/2 spines, 4 pods,
    cores of n ports in 2 planes of n/2 (so 2n leaves, 2n spines, n cores)."""
    n = _check_int("n", n, 4)
    r = _check_int("rails", rails, 1)
    if n % 2 or (n // 2) % r:
        raise ValueError(f"radix {n} must be even with n/2 a multiple of rails ({r})")
    half = n // 2
    # Each core has n ports = (spines of its plane per pod) * pods; 4 pods and
    # n/2 spines per pod give 2 planes of n/4 spines per pod.
    if half % 2:
        raise ValueError(f"radix {n}: n/2 must be even to split spines into 2 planes")
    return dict(rails=r, servers_per_group=half, groups_per_pod=half // r, pods=4,
                spines_per_pod=half, planes=2, cores_per_plane=half)


def roft_radix(n: int, rails: int = 8, gbps: int = ROFT_PORT_GBPS) -> Topology:
    """Non-blocking three-tier ROFT of radix n at ``gbps`` (n^2 GPUs, 5n switches, 3n^2 links)."""
    t = roft3(**roft_radix_params(n, rails), gbps=gbps)
    t.name = f"ROFT radix {n} ({n * n} GPUs)"
    return t


def hop_histogram_structural(t: Topology) -> dict:
    """Hop histogram without enumerating pairs: ROFT by formula, ZCube by
    symmetry classes (``zcube_hop_histogram``)."""
    if t.kind == "zcube":
        return zcube_hop_histogram(t.params["n"], t.params["k"])
    return roft_hop_histogram_formula(t)


@jit
def _zcube_implicit_bfs(n, k, src):
    """Switch distances by BFS over the closed-form ZCube wiring; returns the
    switch count to every GPU (0 for the source, -1 unreachable), the GPUs at
    each count (index count + 1; index 0 the unreachable ones), the switches
    reached and the switch-to-switch adjacency entries scanned."""
    per_level = n ** (k - 1)
    S = k * per_level
    N = n ** k
    dist = np.full(S, -1, dtype=np.int16)
    queue = np.empty(S, dtype=np.int64)
    pw = np.empty(k + 1, dtype=np.int64)
    pw[0] = 1
    for i in range(1, k + 1):
        pw[i] = pw[i - 1] * n
    head = 0
    tail = 0
    scanned = 0           # switch-to-switch adjacency entries seen
    for lvl in range(k):
        sw = lvl * per_level + (src // pw[lvl + 1]) * pw[lvl] + src % pw[lvl]
        dist[sw] = 0
        queue[tail] = sw
        tail += 1
    while head < tail:
        node = queue[head]
        head += 1
        lvl = node // per_level
        s = node % per_level
        d = dist[node] + 1
        if lvl + 1 < k:        # up: (O, c, i) -> (O, i, x)
            O = s // pw[lvl + 1]
            i = s % pw[lvl]
            base = (lvl + 1) * per_level + O * pw[lvl + 1] + i * n
            for x in range(n):
                v = base + x
                scanned += 1
                if dist[v] < 0:
                    dist[v] = d
                    queue[tail] = v
                    tail += 1
        if lvl >= 1:           # down: (O, i, x) -> (O, c, i)
            O = s // pw[lvl]
            i = (s % pw[lvl]) // n
            base = (lvl - 1) * per_level + O * pw[lvl] + i
            for c in range(n):
                v = base + c * pw[lvl - 1]
                scanned += 1
                if dist[v] < 0:
                    dist[v] = d
                    queue[tail] = v
                    tail += 1
    # GPU g = h * n + x sits on level-0 switch h and on level-l switch
    # (h // n^l) * n^l + (h % n^(l-1)) * n + x: the divisions once per h, not per GPU
    row = np.empty(N, dtype=np.int16)
    above = np.empty(k, dtype=np.int64)
    for h in range(per_level):
        for lvl in range(1, k):
            above[lvl] = lvl * per_level + (h // pw[lvl]) * pw[lvl] + (h % pw[lvl - 1]) * n
        for x in range(n):
            best = dist[h]
            for lvl in range(1, k):
                dd = dist[above[lvl] + x]
                if dd >= 0 and (best < 0 or dd < best):
                    best = dd
            row[h * n + x] = best + 1 if best >= 0 else -1
    row[src] = 0
    hist = np.zeros(dist[queue[tail - 1]] + 3, dtype=np.int64)
    for g in range(N):
        hist[row[g] + 1] += 1
    return row, hist, tail, scanned


def zcube_implicit_counts(n: int, k: int) -> dict:
    """GPUs, switches, links and diameter of ZCube(n,k) counted from the
    closed-form wiring without building the graph: one BFS reaches every
    switch (S), scans every switch-switch link twice, and each of the N GPUs
    has k ports; the diameter is the largest BFS distance over the symmetry
    classes of ``zcube_hop_histogram``."""
    n = _check_int("n", n, 2)
    k = _check_int("k", k, 1)
    row, _, reached, scanned = _zcube_implicit_bfs(n, k, 0)
    hist = zcube_hop_histogram(n, k)
    return {"gpus": len(row), "switches": int(reached), "links": int(scanned) // 2 + k * len(row),
            "diameter": max(hist)}


def fat_tree_radix(k: int, tiers: int, rails: int = 8, gbps: int = ROFT_PORT_GBPS) -> Topology:
    """The full non-blocking rail-optimized fat tree of radix k (Chapter 6's
    Clos counts): two tiers hold k^2/2 GPUs (k leaves, k/2 spines), three
    tiers k^3/4 (k pods of k/2 leaves and k/2 spines, (k/2)^2 cores in k/2
    planes)."""
    k = _check_int("k", k, 4)
    if k % 2 or (k // 2) % rails:
        raise ValueError(f"radix {k} must be even with k/2 a multiple of rails ({rails})")
    half = k // 2
    if tiers == 2:
        t = roft2(rails, half, k // rails, half, gbps=gbps)
    elif tiers == 3:
        t = roft3(rails, half, half // rails, k, half, half, half, gbps=gbps)
    else:
        raise ValueError(f"tiers must be 2 or 3, got {tiers!r}")
    t.name = f"{tiers}-tier fat tree radix {k}"
    return t


# ---- PXN: forwarding over NVLink inside the server ---------------------------
# With PXN (NCCL's "PCIe x NVLink"), a GPU may first hand its data over NVLink to a
# GPU of its own server and let that GPU send it into the network -- in a ROFT, to
# the GPU on the destination's rail, so a cross-rail pair rides one rail.  Pairs in
# one server then never touch a switch.  Distances with PXN:
#     same server            0 switches (NVLink)
#     otherwise              min over GPUs g' of the source's server of the
#                            switches on a shortest g' -> destination path
# The server of GPU g is g // gpus_per_server (both generators number a server's
# GPUs consecutively).  Without PXN (the default everywhere else in this module)
# every pair goes through the network, so a same-server cross-rail pair in a ROFT
# crosses a spine.

@jit
def _pxn_hist(sw_to_dest, gpu_sw, per_server, dest_class, class_size):
    # Destinations in classes of GPUs equally far from every switch: sw_to_dest[s, c]
    # is the hops from switch s to class c, class_size[c] its GPUs, dest_class[g]
    # GPU g's class (one class per GPU gives the pair-by-pair count).
    n_gpu, ports = gpu_sw.shape
    n_class = class_size.shape[0]
    counts = np.zeros(sw_to_dest.shape[0] + 3, dtype=np.int64)   # index d + 1; index 0 = unreachable
    outside = np.empty(n_class, dtype=np.int64)
    for first in range(0, n_gpu, per_server):
        last = min(first + per_server, n_gpu)
        m = last - first
        counts[1] += m * (m - 1)                    # NVLink: 0 switches (the pairs a, a excluded)
        for c in range(n_class):
            outside[c] = class_size[c]
        for a in range(first, last):
            outside[dest_class[a]] -= 1             # server-mates: the NVLink pairs above
        for c in range(n_class):
            if outside[c] == 0:
                continue
            best = -1
            for a in range(first, last):
                for p in range(ports):
                    d = sw_to_dest[gpu_sw[a, p], c]
                    if d >= 0 and (best < 0 or d < best):
                        best = d
            if best < 0:
                counts[0] += m * outside[c]
            else:
                counts[best + 1] += m * outside[c]
    return counts


def _interchangeable_gpus(t: Topology):
    """GPUs whose ports attach to the same switches are equally far from every node
    (GPUs never forward), so exhaustive pair counts can run over these classes, each
    weighted by its size.  Returns (switches of each class, first GPU of each class,
    class of each GPU, GPUs per class)."""
    sw = t.gpu_switches() - t.n_gpus
    ports, first, gpu_class, size = np.unique(sw, axis=0, return_index=True, return_inverse=True,
                                              return_counts=True)
    return (np.ascontiguousarray(ports), first.astype(np.int64), gpu_class.reshape(-1).astype(np.int64),
            size.astype(np.int64))


def hop_histogram(t: Topology, pxn: bool = False) -> dict:
    """Exhaustive {switches: ordered GPU pairs} over every pair of the explicit
    graph; with pxn=True, forwarding over NVLink first (see above): key 0 counts the
    same-server pairs.  Key -1 counts unreachable pairs (e.g. cross-rail pairs of a
    rail-only fabric without PXN).  Pairs are counted class by class of GPUs on the
    same switches (``_interchangeable_gpus``): the rail-only fabric of radix 128 has
    256 classes for its 16,384 GPUs."""
    ports, first, gpu_class, class_size = _interchangeable_gpus(t)
    if not pxn:
        counts = _all_pairs_hist(t.switch_distances, ports, class_size)
        hist = {d: int(c) for d, c in enumerate(counts) if c and d > 0}
        if counts[0] < 0:
            hist[-1] = int(-counts[0])
        return dict(sorted(hist.items()))
    sw_to_class = np.ascontiguousarray(t.switch_to_gpu_hops[:, first])
    counts = _pxn_hist(sw_to_class, t.gpu_switches() - t.n_gpus, int(t.gpus_per_server), gpu_class, class_size)
    hist = {d - 1: int(c) for d, c in enumerate(counts) if c}
    return dict(sorted(hist.items()))


def roft_hop_histogram_formula(t: Topology, pxn: bool = False) -> dict:
    """{switches: ordered GPU pairs} of a ROFT by structure.  Without PXN: same leaf
    (same rail, same rail group) 1 switch, same pod 3 (two tiers: any other leaf),
    other pod 5.  With PXN: same server 0 (NVLink); same rail group 1 (the leaf of
    the destination's rail); same pod 3; other pod 5."""
    p = t.params
    N = t.n_gpus
    h, r = p["servers_per_group"], p["rails"]
    group = h * r
    if not pxn:
        hist = {1: N * (h - 1)}
        near = h              # GPUs of one leaf (this one included)
    else:
        hist = {0: N * (r - 1), 1: N * (group - r)}
        near = group          # GPUs of one rail group, reached within it
    if p["tiers"] == 2:
        hist[3] = N * (N - near)
    else:
        pod = r * p["groups_per_pod"] * h
        hist[3] = N * (pod - near)
        hist[5] = N * (N - pod)
    return {d: c for d, c in hist.items() if c}


def zcube2_pxn_hop_histogram(n: int, per_server: int) -> dict:
    """{switches: ordered GPU pairs} of ZCube(n,2) with PXN, servers of `per_server`
    GPUs (consecutive indices of one group).  From any GPU: its server-mates by
    NVLink; the rest of its group through the group switch (1); a GPU of another
    group whose index some server-mate has, through that index switch (1); the
    rest 2."""
    n = _check_int("n", n, 2)
    m = _check_int("per_server", per_server, 1)
    if n % m:
        raise ValueError(f"servers of {m} GPUs do not tile a group of {n}")
    N = n * n
    hist = {0: N * (m - 1), 1: N * ((n - m) + (n - 1) * m), 2: N * (n - 1) * (n - m)}
    return {d: c for d, c in hist.items() if c}


# ---- minimal paths per pair ----------------------------------------------------

@jit
def _minimal_path_hist(indptr, nbr, sw_to_gpu, gpu_sw, n_gpus):
    """Ordered pairs as a (switches on the path, minimal paths) array: row d counts
    the pairs d switches apart by their number of minimal paths (capped at the
    last column)."""
    n_sw, _ = sw_to_gpu.shape
    _, ports = gpu_sw.shape
    cap = 4096
    maxd = 0
    for s in range(n_sw):
        for g in range(n_gpus):
            if sw_to_gpu[s, g] > maxd:
                maxd = sw_to_gpu[s, g]
    hist = np.zeros((maxd + 1, cap + 1), dtype=np.int64)
    cnt = np.zeros(n_sw, dtype=np.int64)
    for b in range(n_gpus):
        # paths from each switch to GPU b over switch interiors, by increasing distance
        for d in range(1, maxd + 1):
            for s in range(n_sw):
                if sw_to_gpu[s, b] != d:
                    continue
                if d == 1:
                    cnt[s] = 1
                    continue
                c = 0
                node = s + n_gpus
                for q in range(indptr[node], indptr[node + 1]):
                    v = nbr[q]
                    if v >= n_gpus and sw_to_gpu[v - n_gpus, b] == d - 1:
                        c += cnt[v - n_gpus]
                cnt[s] = c
        for a in range(n_gpus):
            if a == b:
                continue
            best = -1
            for p in range(ports):
                d = sw_to_gpu[gpu_sw[a, p], b]
                if d >= 0 and (best < 0 or d < best):
                    best = d
            if best < 0:
                continue
            total = 0
            for p in range(ports):
                if sw_to_gpu[gpu_sw[a, p], b] == best:
                    total += cnt[gpu_sw[a, p]]
            hist[best, min(total, cap)] += 1
    return hist


def _minimal_path_table(t: Topology) -> np.ndarray:
    indptr, nbr, _ = t.csr
    return _minimal_path_hist(indptr, nbr, t.switch_to_gpu_hops, t.gpu_switches() - t.n_gpus, t.n_gpus)


def minimal_path_histogram(t: Topology) -> dict:
    """{number of minimal (shortest, switch-interior) paths: ordered GPU pairs},
    exhaustive over every pair of the explicit graph."""
    h = _minimal_path_table(t).sum(axis=0)
    return {k: int(c) for k, c in enumerate(h) if c}


def minimal_path_histogram_by_distance(t: Topology) -> dict:
    """{switches on the path: {minimal paths: ordered GPU pairs}}, exhaustive.
    Its row sums are the hop histogram (``hop_histogram``)."""
    h = _minimal_path_table(t)
    return {d: {k: int(c) for k, c in enumerate(row) if c} for d, row in enumerate(h) if row.any()}


def two_switch_path_bound(k: int) -> int:
    """Most minimal paths a ZCube(n,k) pair two switches apart can have.  Such a
    path is GPU a -> one of a's switches -> one of b's switches -> GPU b.  A GPU has
    one switch per level and ZCube links only adjacent levels, so the two
    switches sit on levels (l, l + 1) or (l + 1, l): 2 (k - 1) ordered level pairs,
    at most one path each.  For k = 2 that is the document's two; for k >= 3 it is
    more, and pairs three or more switches apart can have more still."""
    k = _check_int("k", k, 1)
    return 2 * (k - 1)


def zcube_gpu_label(t: Topology, g: int) -> str:
    """GPU g of a ZCube as its base-n address, most significant digit first."""
    n, k = _zcube_nk(t)
    g = int(g)
    if not 0 <= g < t.n_gpus:
        raise ValueError(f"GPU {g} is not in {t.name}")
    return "".join(str((g // n ** i) % n) for i in reversed(range(k)))


def zcube_switch_label(t: Topology, node: int) -> str:
    """Switch `node` of a ZCube as "L<level> <address>": the address its GPUs share,
    with '*' for the digit they differ in (a level-l switch joins the n GPUs whose
    addresses differ only in digit l)."""
    n, k = _zcube_nk(t)
    node = int(node)
    if not t.n_gpus <= node < t.n_nodes:
        raise ValueError(f"node {node} is not a switch of {t.name}")
    gpus = [g for g in t.neighbours(node).tolist() if g < t.n_gpus]
    labels = [zcube_gpu_label(t, g) for g in gpus]
    addr = "".join(col[0] if len(set(col)) == 1 else "*" for col in zip(*labels))
    return f"L{int(t.switch_level[node - t.n_gpus])} {addr}"


def _zcube_nk(t: Topology):
    if t.kind != "zcube":
        raise ValueError(f"{t.name} is not a ZCube")
    return int(t.params["n"]), int(t.params["k"])


# ---- the other fabrics of the 16,384-GPU comparison ----------------------------------

def rail_only_formulas(n: int, rails: int = 8) -> dict:
    """Rail-only fabric for n^2 GPUs on radix-n switches (400G): no spine joins the
    rails; each rail is its own two-tier non-blocking fat tree of radix n holding
    n^2 / rails GPUs (leaves of n/2 GPUs and n/2 uplinks; half as many spines)."""
    n = _check_int("n", n, 4)
    r = _check_int("rails", rails, 1)
    N = n * n
    per_rail = N // r
    if N % r or per_rail % (n // 2) or n % 2:
        raise ValueError(f"rail-only: {N} GPUs do not split into {r} rails of whole radix-{n} leaves")
    leaves = per_rail // (n // 2)
    if leaves % 2 or leaves > n:
        raise ValueError(f"rail-only: {leaves} leaves per rail do not form a two-tier tree of radix {n}")
    spines = leaves // 2
    if (n // 2) % spines:
        raise ValueError(f"rail-only: {n // 2} uplinks per leaf do not spread evenly over {spines} spines")
    return {"gpus": N, "leaves": r * leaves, "spines": r * spines, "switches": r * (leaves + spines),
            "links": N + r * leaves * (n // 2), "leaf_spine_bundle": (n // 2) // spines}


def rail_only(n: int, rails: int = 8, gbps: int = ROFT_PORT_GBPS) -> Topology:
    """Rail-only fabric (see rail_only_formulas).  GPU id = server * rails + rail.
    The `(n/2) / spines` parallel links between a leaf and a spine are one link of
    that many times the port speed (this graph has no parallel links); count
    physical links with `physical_links`."""
    f = rail_only_formulas(n, rails)
    r = rails
    N = f["gpus"]
    lpr, spr = f["leaves"] // r, f["spines"] // r
    half = n // 2
    gpu = np.arange(N, dtype=np.int64)
    rail = gpu % r
    index_in_rail = gpu // r                       # server number
    leaf = rail * lpr + index_in_rail // half
    host = np.stack([gpu, N + leaf], axis=1)
    L, S = np.meshgrid(np.arange(lpr, dtype=np.int64), np.arange(spr, dtype=np.int64), indexing="ij")
    ups = []
    for rr in range(r):
        ups.append(np.stack([N + rr * lpr + L.reshape(-1),
                             N + f["leaves"] + rr * spr + S.reshape(-1)], axis=1))
    links = np.concatenate([host] + ups)
    gb = np.concatenate([np.full(len(host), gbps, np.int64),
                         np.full(len(links) - len(host), gbps * f["leaf_spine_bundle"], np.int64)])
    return Topology(
        name=f"rail-only radix {n} ({N} GPUs)", kind="rail-only", n_gpus=N, n_switches=f["switches"],
        links=links, link_gbps=gb,
        switch_level=np.concatenate([np.zeros(f["leaves"], np.int8), np.ones(f["spines"], np.int8)]),
        level_names=("leaf", "spine"), gpus_per_server=r,
        params={"n": n, "rails": r, "gbps": gbps, "port_gbps": gbps},
    )


def dual_plane_formulas(n: int) -> dict:
    """Dual-plane two-tier fabric for n^2 GPUs on the 51.2T chip run as 2n ports of
    200G (HPN-style: each GPU's 400G NIC split into two 200G ports, port p into plane
    p, two different ToRs).  Each plane is a two-tier non-blocking fat tree of radix
    2n holding all n^2 GPUs: n^2 / n leaves (n down, n up) and half as many spines."""
    n = _check_int("n", n, 2)
    N = n * n
    leaves = N // n
    spines = leaves // 2
    if leaves % 2 or leaves > 2 * n or n % spines:
        raise ValueError(f"dual-plane: {leaves} leaves per plane do not form a two-tier tree of radix {2 * n}")
    return {"gpus": N, "leaves": 2 * leaves, "spines": 2 * spines, "switches": 2 * (leaves + spines),
            "links": 2 * (N + leaves * n), "leaf_spine_bundle": n // spines}


def dual_plane(n: int, gbps: int = ZCUBE_PORT_GBPS) -> Topology:
    """Dual-plane two-tier fabric (see dual_plane_formulas).  GPU g's plane-p port
    goes to leaf g // n of plane p; servers of 8 GPUs.  Leaf-spine bundles are one
    link of the bundle's capacity (count physical links with `physical_links`)."""
    f = dual_plane_formulas(n)
    N = f["gpus"]
    lpp, spp = f["leaves"] // 2, f["spines"] // 2
    gpu = np.arange(N, dtype=np.int64)
    parts, ups = [], []
    for plane in range(2):
        parts.append(np.stack([gpu, N + plane * lpp + gpu // n], axis=1))
        L, S = np.meshgrid(np.arange(lpp, dtype=np.int64), np.arange(spp, dtype=np.int64), indexing="ij")
        ups.append(np.stack([N + plane * lpp + L.reshape(-1), N + f["leaves"] + plane * spp + S.reshape(-1)], axis=1))
    host = np.concatenate(parts)
    links = np.concatenate([host] + ups)
    gb = np.concatenate([np.full(len(host), gbps, np.int64),
                         np.full(len(links) - len(host), gbps * f["leaf_spine_bundle"], np.int64)])
    return Topology(
        name=f"dual-plane radix {2 * n} at {gbps}G ({N} GPUs)", kind="dual-plane", n_gpus=N,
        n_switches=f["switches"], links=links, link_gbps=gb,
        switch_level=np.concatenate([np.zeros(f["leaves"], np.int8), np.ones(f["spines"], np.int8)]),
        level_names=("leaf", "spine"), gpus_per_server=math.gcd(n, 8),
        params={"n": n, "gbps": gbps, "port_gbps": gbps},
    )


def physical_links(t: Topology, port_gbps: int | None = None) -> int:
    """Cables: each link of the graph counts capacity / port speed times (a bundle of
    parallel links is stored as one link of their total capacity)."""
    port = port_gbps or int(t.params.get("port_gbps", t.params.get("gbps", int(t.link_gbps.min()))))
    if np.any(t.link_gbps % port):
        raise ValueError(f"{t.name}: a link capacity is not a whole number of {port}G ports")
    return int((t.link_gbps // port).sum())


def capacity_tbps(t: Topology) -> float:
    """Total link capacity (one direction), Tb/s."""
    return int(t.link_gbps.sum()) / 1000.0
