"""ZCube(n,k) and rail-optimized fat trees: every count the design document
states, checked against the generated graphs (not against the formulas alone)."""
import math

import numpy as np
import pytest

from golden.topology import topology as T
from golden.topology import topo_ecmp as E

SMALL_ZCUBES = [(2, 1), (5, 1), (2, 2), (3, 2), (4, 2), (7, 2), (2, 3), (3, 3), (4, 3), (5, 3),
                (2, 4), (3, 4), (2, 5), (3, 5)]


def undirected_set(links):
    return set(map(tuple, np.sort(links, axis=1).tolist()))


def level_degrees(t):
    """{level: set of switch port counts} counted on the graph."""
    deg = t.degree[t.n_gpus:]
    return {int(lvl): set(deg[t.switch_level == lvl].tolist()) for lvl in np.unique(t.switch_level)}


# ---- ZCube: counts against the generated graph ------------------------------------
@pytest.mark.parametrize("n,k", SMALL_ZCUBES)
def test_zcube_counts_on_graph(n, k):
    t = T.zcube(n, k)
    f = T.zcube_formulas(n, k)
    assert t.n_gpus == f["gpus"] == n ** k
    assert t.n_switches == f["switches"] == k * n ** (k - 1)
    assert t.n_links == f["links"] == (2 * k - 1) * n ** k
    assert not t.has_duplicate_links()
    # diameter from every GPU pair (exhaustive), and cross-checked by BFS rows
    assert t.diameter_bfs() == f["diameter"] == k
    assert max(int(t.gpu_distance_row(s).max()) for s in range(t.n_gpus)) == k
    # every GPU has one port per level
    gs = t.gpu_switches()
    assert gs.shape == (t.n_gpus, k)
    assert all(sorted(t.switch_level[gs[g] - t.n_gpus].tolist()) == list(range(k)) for g in range(t.n_gpus))
    # every switch carries n GPUs: none is a pure spine
    gpu_ports = np.bincount(t.links[(t.links < t.n_gpus).any(axis=1)].max(axis=1) - t.n_gpus,
                            minlength=t.n_switches)
    assert set(gpu_ports.tolist()) == {n}
    # switches per level n^(k-1); edge levels 2n ports, middle levels 3n (n when k = 1)
    assert np.bincount(t.switch_level).tolist() == [n ** (k - 1)] * k
    degs = level_degrees(t)
    if k == 1:
        assert degs == {0: {n}}
    else:
        assert degs[0] == degs[k - 1] == {2 * n} == {f["edge_switch_ports"]}
        for lvl in range(1, k - 1):
            assert degs[lvl] == {3 * n} == {f["middle_switch_ports"]}


@pytest.mark.parametrize("n,k", SMALL_ZCUBES)
def test_recursive_and_closed_form_wiring_agree(n, k):
    a, b = T.zcube(n, k), T.zcube_from_closed_form(n, k)
    assert undirected_set(a.links) == undirected_set(b.links)


def test_zcube_n2_is_group_index_grid():
    """ZCube(n,2): GPU (group g, index i) = g*n+i on group switch g (level 0) and
    index switch i (level 1); every group switch links to every index switch."""
    n = 5
    t = T.zcube(n, 2)
    N = t.n_gpus
    links = undirected_set(t.links)
    for g in range(n):
        for i in range(n):
            assert (g * n + i, N + g) in links and (g * n + i, N + n + i) in links
    mesh = {(u, v) for u, v in links if u >= N}
    assert mesh == {(N + g, N + n + i) for g in range(n) for i in range(n)}


def test_zcube_4_2_testbed_numbers():
    """Seed: ZCube(4,2) = 16 GPUs, 8 switches, 48 x 200G links, against the ROFT
    testbed's 8 switches and 32 x 400G links: 9.6 vs 12.8 Tb/s, 25% less."""
    z = T.zcube(4, 2)
    r = T.roft2(rails=4, servers_per_group=4, groups=1, spines=4)
    assert (z.n_gpus, z.n_switches, z.n_links) == (16, 8, 48)
    assert (r.n_gpus, r.n_switches, r.n_links) == (16, 8, 32)
    # ROFT links: 16 GPU-leaf plus a 4 x 4 leaf-spine mesh
    host = (r.links < r.n_gpus).any(axis=1)
    assert host.sum() == 16 and (~host).sum() == 16
    # ZCube links: two ports per GPU plus the 4 x 4 mesh
    zhost = (z.links < z.n_gpus).any(axis=1)
    assert zhost.sum() == 32 and (~zhost).sum() == 16
    assert int(z.link_gbps.sum()) == 9600 and int(r.link_gbps.sum()) == 12800
    assert 1 - z.link_gbps.sum() / r.link_gbps.sum() == pytest.approx(0.25)
    # every GPU gets 400 Gb/s in both fabrics
    for t in (z, r):
        gpu_side = np.where(t.links[:, 0] < t.n_gpus, t.links[:, 0], t.links[:, 1])
        per_gpu = np.bincount(gpu_side[(t.links < t.n_gpus).any(axis=1)],
                              weights=t.link_gbps[(t.links < t.n_gpus).any(axis=1)])
        assert set(per_gpu.tolist()) == {400.0}
    assert z.diameter_bfs() == 2 and r.diameter_bfs() == 3


def test_zcube_2_3_figure_8():
    """Seed Figure 8(b): ZCube(2,3) = 8 GPUs with three ports each, three levels of four switches."""
    t = T.zcube(2, 3)
    assert t.n_gpus == 8
    assert np.bincount(t.switch_level).tolist() == [4, 4, 4]
    assert set(np.diff(t.csr[0])[:8].tolist()) == {3}
    assert t.n_links == 40 == T.zcube_formulas(2, 3)["links"]
    assert t.diameter_bfs() == 3


def test_zcube_128_2_at_16384_gpus():
    """Seed: 51.2T chips at 200G have 2n = 256 ports, n = 128: 16,384 GPUs, 256
    switches, 49,152 links, diameter 2; 60% fewer switches than ROFT's 640."""
    z = T.zcube(128, 2)
    assert (z.n_gpus, z.n_switches, z.n_links) == (16384, 256, 49152)
    assert level_degrees(z) == {0: {256}, 1: {256}}
    assert 256 * 200 == 51200                       # every switch port at 200G = a 51.2T chip
    # diameter: one BFS per digit-pattern class on the explicit graph covers every source
    reps = [p[0] + 128 * p[1] for p in T.set_partitions(2, 128)]
    assert max(int(z.gpu_distance_row(r).max()) for r in reps) == 2
    r = T.roft_radix(128)
    assert r.n_switches == 640
    assert 1 - z.n_switches / r.n_switches == pytest.approx(0.60)


def test_zcube_42_4_on_128_port_switches():
    """Seed: ZCube(42,4) on 128-port switches holds 3,111,696 GPUs at diameter 4,
    against 524,288 for a three-tier fat tree (k^3/4, k = 128) at diameter 5."""
    f = T.zcube_formulas(42, 4)
    assert f["gpus"] == 3_111_696 == 42 ** 4
    assert f["middle_switch_ports"] == 126 <= 128 and f["edge_switch_ports"] == 84
    # the same counts from the closed-form wiring, without building the graph
    c = T.zcube_implicit_counts(42, 4)
    assert c == {k: f[k] for k in ("gpus", "switches", "links", "diameter")}
    assert c["diameter"] == 4
    assert 128 ** 3 // 4 == 524_288


def test_implicit_counts_match_explicit_graphs():
    for n, k in [(2, 2), (4, 2), (2, 3), (3, 3), (2, 4), (3, 4), (2, 5)]:
        t = T.zcube(n, k)
        c = T.zcube_implicit_counts(n, k)
        assert c == {"gpus": t.n_gpus, "switches": t.n_switches, "links": t.n_links, "diameter": t.diameter_bfs()}


@pytest.mark.parametrize("n,k", [(3, 2), (2, 3), (3, 3), (4, 3), (2, 4), (3, 4), (2, 5)])
def test_implicit_bfs_matches_explicit_bfs(n, k):
    t = T.zcube(n, k)
    for s in range(t.n_gpus):
        row = t.gpu_distance_row(s)
        assert np.array_equal(T.zcube_bfs_from(n, k, s, return_row=True), row)
        # the profile, counted inside the kernel, is the explicit row's count
        assert T.zcube_bfs_from(n, k, s) == {d: int(c) for d, c in enumerate(np.bincount(row)) if d > 0 and c}


# ---- hop histograms -------------------------------------------------------------------
@pytest.mark.parametrize("n,k", [(2, 2), (5, 2), (2, 3), (3, 3), (4, 3), (5, 3), (2, 4), (3, 4), (2, 5), (3, 5)])
def test_structural_histogram_equals_exhaustive(n, k):
    t = T.zcube(n, k)
    exhaustive = t.hop_histogram_all_pairs()
    assert T.zcube_hop_histogram(n, k) == exhaustive
    assert sum(exhaustive.values()) == t.n_gpus * (t.n_gpus - 1)
    assert t.hop_histogram_bfs() == exhaustive


@pytest.mark.parametrize("n", [2, 3, 8, 32])
def test_zcube_n2_histogram_is_hamming(n):
    """ZCube(n,2): 2(n-1) GPUs one switch away (same group or index), (n-1)^2 two away."""
    h = T.zcube_hop_histogram(n, 2)
    N = n * n
    assert h == {1: N * 2 * (n - 1), 2: N * (n - 1) ** 2} == T.zcube_hamming_histogram(n, 2)
    if n <= 8:
        assert T.zcube(n, 2).hop_histogram_all_pairs() == h


def test_zcube_k3_has_shortcuts_beyond_hamming():
    """For k >= 3 some pairs differing in d digits are fewer than d switches
    apart, so the histogram is NOT the Hamming one (the diameter is still k)."""
    for n, k in [(2, 3), (3, 3), (3, 4)]:
        exhaustive = T.zcube(n, k).hop_histogram_all_pairs()
        hamming = T.zcube_hamming_histogram(n, k)
        assert exhaustive != hamming
        assert exhaustive[k] < hamming[k] and max(exhaustive) == k


def test_zcube_128_2_histogram_against_sampled_bfs():
    n = 128
    z = T.zcube(n, 2)
    rng = np.random.default_rng(7)
    for s in rng.choice(z.n_gpus, 12, replace=False):
        row = z.gpu_distance_row(int(s))
        assert np.bincount(row).tolist() == [1, 2 * (n - 1), (n - 1) ** 2]
    assert T.hop_histogram_structural(z) == T.zcube_hamming_histogram(n, 2)


def test_zcube_42_4_histogram_by_symmetry_and_sampled_bfs():
    n, k = 42, 4
    N = n ** k
    total, classes = T.zcube_hop_histogram(n, k, return_classes=True)
    assert len(classes) == 15                                  # Bell(4) set partitions
    assert sum(c for c, _ in classes.values()) == N            # every source in one class
    assert sum(total.values()) == N * (N - 1)
    assert max(total) == 4
    rng = np.random.default_rng(11)
    sources = [int(s) for s in rng.integers(0, N, 3)] + [0, 1 + n + 2 * n * n + 3 * n ** 3]
    for s in sources:
        prof = T.zcube_bfs_from(n, k, s)
        assert prof == classes[T.zcube_digit_pattern(s, n, k)][1]


def test_digit_permutation_is_an_automorphism():
    """The symmetry the structural histogram rests on, checked on the graph."""
    for n, k in [(3, 3), (4, 3), (3, 4)]:
        t = T.zcube(n, k)
        perm = np.random.default_rng(n * 10 + k).permutation(n)
        N, per = t.n_gpus, n ** (k - 1)

        def relabel(x, digits):
            return sum(int(perm[(x // n ** i) % n]) * n ** i for i in range(digits))

        def node_map(v):
            if v < N:
                return relabel(v, k)
            lvl, s = divmod(v - N, per)
            return N + lvl * per + relabel(s, k - 1)
        mapped = {tuple(sorted((node_map(u), node_map(v)))) for u, v in t.links.tolist()}
        assert mapped == undirected_set(t.links)


# ---- two disjoint two-switch paths in ZCube(n,2) -----------------------------------
def _two_switch_paths(t, a, b):
    """All (s1, s2) switch pairs forming a GPU a -> s1 -> s2 -> GPU b path, from the graph."""
    N = t.n_gpus
    gs = t.gpu_switches()
    adj = np.zeros((t.n_switches, t.n_switches), dtype=bool)
    sw = t.links[(t.links >= N).all(axis=1)] - N
    adj[sw[:, 0], sw[:, 1]] = adj[sw[:, 1], sw[:, 0]] = True
    A, B = gs[a] - N, gs[b] - N               # (pairs, 2)
    common = (A[:, :, None] == B[:, None, :]).any(axis=(1, 2))
    paths = adj[A[:, :, None], B[:, None, :]]     # (pairs, port of a, port of b)
    return common, paths, A, B


def _check_two_disjoint(n, a, b):
    t = T.zcube(n, 2)
    common, paths, A, B = _two_switch_paths(t, a, b)
    other = (a // n != b // n) & (a % n != b % n)
    # pairs sharing group or index: one switch apart
    assert common[~other].all()
    # pairs sharing neither: no common switch, exactly two two-switch paths, disjoint
    assert not common[other].any()
    cnt = paths[other].sum(axis=(1, 2))
    assert (cnt == 2).all()
    p = paths[other]
    # the two paths are (a's port 0 -> b's port 1) and (a's port 1 -> b's port 0):
    # they share no switch and no link
    assert p[:, 0, 1].all() and p[:, 1, 0].all()
    assert (A[other][:, 0] != A[other][:, 1]).all() and (B[other][:, 0] != B[other][:, 1]).all()
    return int(other.sum())


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 16])
def test_two_disjoint_paths_exhaustive(n):
    N = n * n
    a, b = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
    a, b = a.reshape(-1), b.reshape(-1)
    keep = a != b
    assert _check_two_disjoint(n, a[keep], b[keep]) == N * (n - 1) ** 2


@pytest.mark.parametrize("n", [32, 128])
def test_two_disjoint_paths_sampled(n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, n * n, 20000)
    b = rng.integers(0, n * n, 20000)
    keep = a != b
    assert _check_two_disjoint(n, a[keep], b[keep]) > 0


def test_zcube_n2_at_most_two_minimal_paths_and_k3_more():
    """Seed: 'a pair has at most two minimal paths' -- true for ZCube(n,2); for
    k = 3 the count of shortest paths goes higher (counted on the graph)."""
    t = T.zcube(4, 2)
    counts = {E.count_shortest_paths(t, a, b) for a in range(16) for b in range(16) if a != b}
    assert counts == {1, 2}
    t3 = T.zcube(3, 3)
    counts3 = {E.count_shortest_paths(t3, a, b) for a in range(27) for b in range(27) if a != b}
    assert max(counts3) > 2


# ---- rail-optimized fat trees ------------------------------------------------------------
@pytest.mark.parametrize("n", [16, 32, 48, 64])
def test_roft_radix_counts(n):
    """Non-blocking three-tier ROFT of radix n: n^2 GPUs, 2n leaves + 2n spines +
    n cores = 5n switches, 3n^2 links, every switch port used (radix n), diameter 5."""
    t = T.roft_radix(n)
    assert t.n_gpus == n * n
    assert np.bincount(t.switch_level).tolist() == [2 * n, 2 * n, n]
    assert t.n_switches == 5 * n
    assert t.n_links == 3 * n * n
    assert not t.has_duplicate_links()
    assert set(t.degree[t.n_gpus:].tolist()) == {n}
    assert set(t.degree[:t.n_gpus].tolist()) == {1}
    f = T.roft3_formulas(**T.roft_radix_params(n))
    assert (f["gpus"], f["switches"], f["links"]) == (t.n_gpus, t.n_switches, t.n_links)
    if n <= 32:
        assert t.diameter_bfs() == 5 == f["diameter"]
    else:
        assert int(t.gpu_distance_row(0).max()) == 5


def test_roft_at_16384_gpus_seed_table():
    """Seed table: radix 128 at 400G; 128^2/2 = 8,192 < 16,384 so three tiers;
    256 leaves + 256 spines + 128 cores = 640 switches; 3 x 16,384 = 49,152 links."""
    two = T.fat_tree_radix(128, 2)
    assert two.n_gpus == 128 ** 2 // 2 == 8192 < 16384
    assert set(two.degree[two.n_gpus:].tolist()) == {128}
    assert int(two.gpu_distance_row(0).max()) == 3
    t = T.roft_radix(128)
    assert t.n_gpus == 16384
    assert np.bincount(t.switch_level).tolist() == [256, 256, 128]
    assert t.n_links == 49152
    lvl = lambda x: np.where(x < t.n_gpus, -1, t.switch_level[np.maximum(x - t.n_gpus, 0)])  # noqa: E731
    kinds = set(zip(lvl(t.links[:, 0]).tolist(), lvl(t.links[:, 1]).tolist()))
    assert kinds == {(-1, 0), (0, 1), (1, 2)}
    per_kind = [int(((lvl(t.links[:, 0]) == a) & (lvl(t.links[:, 1]) == b)).sum()) for a, b in [(-1, 0), (0, 1), (1, 2)]]
    assert per_kind == [16384, 16384, 16384]
    for s in (0, 4097, 16383):
        assert int(t.gpu_distance_row(s).max()) == 5


def test_fat_tree_three_tier_k3_over_4():
    for k in (16, 32):
        t = T.fat_tree_radix(k, 3)
        assert t.n_gpus == k ** 3 // 4
        assert t.n_switches == 5 * k * k // 4
        assert set(t.degree[t.n_gpus:].tolist()) == {k}
        assert int(t.gpu_distance_row(0).max()) == 5


@pytest.mark.slow
def test_fat_tree_radix_128_three_tiers_524288():
    t = T.fat_tree_radix(128, 3)
    assert t.n_gpus == 524_288
    assert set(t.degree[t.n_gpus:].tolist()) == {128}
    assert int(t.gpu_distance_row(0).max()) == 5


@pytest.mark.parametrize("make", [lambda: T.roft2(4, 4, 1, 4), lambda: T.roft2(2, 3, 2, 2),
                                  lambda: T.roft_radix(16), lambda: T.roft3(2, 2, 2, 3, 4, 2, 3)])
def test_roft_histogram_formula_equals_exhaustive(make):
    t = make()
    assert T.roft_hop_histogram_formula(t) == t.hop_histogram_all_pairs()


def test_roft_rail_pairs_cross_spines():
    """Rail-aligned pairs: same leaf 1 switch, same pod 3, other pod 5 (the seed's A/B/C)."""
    t = T.roft_radix(32)
    row = t.gpu_distance_row(0)
    rail0 = np.arange(0, t.n_gpus, t.params["rails"])[1:]
    vals = np.bincount(row[rail0], minlength=6)
    h = t.params["servers_per_group"]
    pod_servers = t.params["groups_per_pod"] * h
    assert vals[1] == h - 1
    assert vals[3] == pod_servers - h
    assert vals[5] == t.n_gpus // t.params["rails"] - pod_servers


# ---- bad parameters ---------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: T.zcube(1, 2), lambda: T.zcube(2, 0), lambda: T.zcube(2.0, 2), lambda: T.zcube(True, 2),
    lambda: T.zcube(42, 4),                    # too large to build explicitly
    lambda: T.roft3(2, 2, 2, 2, 4, 3, 2),      # planes must divide spines per pod
    lambda: T.roft_radix(20), lambda: T.roft2(0, 1), lambda: T.fat_tree_radix(32, 4),
    lambda: T.zcube_bfs_from(3, 2, 9),
])
def test_bad_parameters_rejected(call):
    with pytest.raises(ValueError):
        call()


def test_set_partitions_counts():
    # Bell numbers, and the cap on blocks (at most n distinct digit values)
    assert [len(T.set_partitions(k, 99)) for k in range(1, 7)] == [1, 2, 5, 15, 52, 203]
    assert len(T.set_partitions(4, 2)) == 8
    assert sum(math.perm(3, max(p) + 1) for p in T.set_partitions(4, 3)) == 3 ** 4
