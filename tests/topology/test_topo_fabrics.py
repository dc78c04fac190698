"""PXN hop counts, minimal paths per pair, and the other fabrics of the
16,384-GPU comparison (rail-only, dual-plane HPN-style): each structural formula
against an exhaustive computation on the generated graph, each of the document's
savings recomputed from graphs."""
import numpy as np
import pytest

from golden.topology import topo_ecmp as E
from golden.topology import topology as T


def pxn_rows_by_bfs(t):
    """PXN distances straight from the definition, with plain BFS rows: same server
    0; otherwise the best server-mate's network distance."""
    m = t.gpus_per_server
    rows = np.array([t.gpu_distance_row(g) for g in range(t.n_gpus)])
    out = {}
    for a in range(t.n_gpus):
        first = a - a % m
        mates = rows[first:first + m]
        for b in range(t.n_gpus):
            if a == b:
                continue
            if first <= b < first + m:
                d = 0
            else:
                ok = mates[:, b][mates[:, b] >= 0]
                d = int(ok.min()) if len(ok) else -1
            out[d] = out.get(d, 0) + 1
    return dict(sorted(out.items()))


SMALL = {
    "testbed ROFT": lambda: T.roft2(4, 4, 1, 4),
    "ROFT radix 16": lambda: T.roft_radix(16),
    "ROFT3 two groups per pod": lambda: T.roft3(4, 2, 2, 3, 2, 2, 3),
    "ZCube(4,2)": lambda: T.zcube(4, 2),
    "ZCube(8,2)": lambda: T.zcube(8, 2),
    "ZCube(12,2)": lambda: T.zcube(12, 2),
    "rail-only radix 8": lambda: T.rail_only(8, rails=4),
    "dual-plane radix 16": lambda: T.dual_plane(8),
}


@pytest.mark.parametrize("name", list(SMALL))
def test_pxn_histogram_matches_the_definition(name):
    t = SMALL[name]()
    assert T.hop_histogram(t, pxn=True) == pxn_rows_by_bfs(t)
    # PXN never lengthens a pair: the histogram only moves towards fewer switches
    plain = T.hop_histogram(t)
    assert sum(plain.values()) == sum(T.hop_histogram(t, pxn=True).values()) == t.n_gpus * (t.n_gpus - 1)
    mean = lambda h: sum(d * c for d, c in h.items() if d >= 0) / sum(c for d, c in h.items() if d >= 0)  # noqa
    if -1 not in plain:
        assert mean(T.hop_histogram(t, pxn=True)) <= mean(plain)


@pytest.mark.parametrize("name", list(SMALL))
def test_histogram_by_gpu_classes_equals_bfs_from_every_gpu(name):
    """hop_histogram counts pairs class by class of GPUs on the same switches (with
    PXN: checked against the definition above); BFS from every GPU counts them one by one."""
    t = SMALL[name]()
    assert T.hop_histogram(t) == t.hop_histogram_bfs()
    if "ZCube" not in name:
        assert len(T._interchangeable_gpus(t)[3]) < t.n_gpus    # classes of several GPUs


@pytest.mark.parametrize("make", [lambda: T.roft2(4, 4, 1, 4), lambda: T.roft2(8, 4, 3, 4), lambda: T.roft_radix(16),
                                  lambda: T.roft_radix(32), lambda: T.roft3(4, 2, 2, 3, 2, 2, 3)])
def test_roft_formulas_with_and_without_pxn(make):
    t = make()
    for pxn in (False, True):
        assert T.roft_hop_histogram_formula(t, pxn) == T.hop_histogram(t, pxn=pxn)


@pytest.mark.parametrize("n", [4, 8, 12, 16, 32])
def test_zcube2_pxn_formula(n):
    t = T.zcube(n, 2)
    assert T.zcube2_pxn_hop_histogram(n, t.gpus_per_server) == T.hop_histogram(t, pxn=True)


def test_roft_same_server_cross_rail_pairs_cross_a_spine_only_without_pxn():
    # the testbed: a server's GPUs sit on four different rail leaves
    t = T.roft2(4, 4, 1, 4)
    row = t.gpu_distance_row(0)
    assert list(row[1:4]) == [3, 3, 3]                     # via a spine
    assert T.hop_histogram(t, pxn=True) == {0: 48, 1: 192}  # NVLink in the server, one leaf otherwise
    # at 16,384 GPUs, by structure (rail groups of 64 servers x 8 GPUs): PXN brings a GPU's 7
    # server-mates to NVLink and its whole rail group to one leaf; other pods stay 5 switches away
    big = T.roft_radix(128)
    plain, pxn = T.roft_hop_histogram_formula(big), T.roft_hop_histogram_formula(big, True)
    N = big.n_gpus
    assert (plain[1], pxn[0], pxn[1]) == (N * 63, N * 7, N * (512 - 8))
    assert pxn[5] == plain[5] and max(pxn) == max(plain) == 5
    assert sum(plain.values()) == sum(pxn.values()) == N * (N - 1)


def test_rail_only_needs_pxn_across_rails():
    t = T.rail_only(16, rails=8)
    plain = T.hop_histogram(t)
    assert plain[-1] == t.n_gpus * (t.n_gpus - t.n_gpus // 8)    # every cross-rail pair: no path
    assert max(T.hop_histogram(t, pxn=True)) == 3


def test_minimal_paths_per_pair():
    # The document: "a pair has at most two minimal paths".  ZCube(n,2): yes (exhaustive).
    for n in (3, 4, 8):
        h = T.minimal_path_histogram(T.zcube(n, 2))
        assert max(h) == 2 and h[2] == n * n * (n - 1) ** 2
    # k >= 3: the level-to-level shortcuts give more
    got = {(n, k): max(T.minimal_path_histogram(T.zcube(n, k))) for n, k in ((3, 3), (4, 3), (2, 4), (3, 4))}
    assert got == {(3, 3): 5, (4, 3): 6, (2, 4): 6, (3, 4): 8}
    # an independent count (topo_ecmp's memoised path enumeration) agrees pair by pair
    t = T.zcube(3, 3)
    mine = T.minimal_path_histogram(t)
    theirs = {}
    for a in range(t.n_gpus):
        for b in range(t.n_gpus):
            if a != b:
                c = E.count_shortest_paths(t, a, b)
                theirs[c] = theirs.get(c, 0) + 1
    assert mine == dict(sorted(theirs.items()))


def two_switch_paths_brute_force(t, a, b):
    """Minimal paths of a pair two switches apart, from the link list alone: every
    (switch of a, switch of b) joined by a link."""
    links = {tuple(sorted(x)) for x in t.links.tolist()}
    up = lambda g: [s for s in range(t.n_gpus, t.n_nodes) if tuple(sorted((g, s))) in links]  # noqa: E731
    return [(s, u) for s in up(a) for u in up(b) if tuple(sorted((s, u))) in links]


@pytest.mark.parametrize("n,k", [(4, 2), (6, 2), (2, 3), (3, 3), (2, 4)])
def test_minimal_paths_by_distance(n, k):
    t = T.zcube(n, k)
    by_d = T.minimal_path_histogram_by_distance(t)
    # rows are the hop histogram, columns the minimal-path histogram
    assert {d: sum(r.values()) for d, r in by_d.items()} == T.hop_histogram(t)
    cols = {}
    for r in by_d.values():
        for p, c in r.items():
            cols[p] = cols.get(p, 0) + c
    assert dict(sorted(cols.items())) == T.minimal_path_histogram(t)
    # pairs two switches apart, counted from the link list pair by pair
    brute = {}
    rows = [t.gpu_distance_row(a) for a in range(t.n_gpus)]
    for a in range(t.n_gpus):
        for b in range(t.n_gpus):
            if a != b and rows[a][b] == 2:
                c = len(two_switch_paths_brute_force(t, a, b))
                brute[c] = brute.get(c, 0) + 1
    assert dict(sorted(brute.items())) == by_d[2]
    # the bound: one path per ordered pair of adjacent levels; 2 for k = 2 (the document's statement)
    assert max(by_d[2]) <= T.two_switch_path_bound(k) == 2 * (k - 1)
    if k == 2:
        assert max(T.minimal_path_histogram(t)) == 2
    else:
        assert max(T.minimal_path_histogram(t)) > 2


def test_zcube_labels_name_what_a_switch_joins():
    t = T.zcube(3, 3)
    gpu = [T.zcube_gpu_label(t, g) for g in range(t.n_gpus)]
    assert len(set(gpu)) == t.n_gpus and all(len(x) == 3 and set(x) <= set("012") for x in gpu)
    assert gpu[int("120", 3)] == "120"
    for node in range(t.n_gpus, t.n_nodes):
        level, addr = T.zcube_switch_label(t, node).split()
        lv = int(level[1:])
        assert addr.count("*") == 1 and addr[len(addr) - 1 - lv] == "*"      # a level-l switch frees digit l
        joined = sorted(g for g in t.neighbours(node).tolist() if g < t.n_gpus)
        match = sorted(g for g in range(t.n_gpus) if all(p in ("*", q) for p, q in zip(addr, gpu[g])))
        assert joined == match
    with pytest.raises(ValueError, match="not a ZCube"):
        T.zcube_gpu_label(T.roft2(4, 4, 1, 4), 0)
    with pytest.raises(ValueError, match="not a switch"):
        T.zcube_switch_label(t, 0)


def test_fabrics_at_16384_gpus_and_the_documents_savings():
    z, roft, ro, dp = T.zcube(128, 2), T.roft_radix(128), T.rail_only(128), T.dual_plane(128)
    assert z.n_gpus == roft.n_gpus == ro.n_gpus == dp.n_gpus == 16384
    assert (z.n_switches, roft.n_switches, ro.n_switches, dp.n_switches) == (256, 640, 384, 384)
    for t, f in ((ro, T.rail_only_formulas(128)), (dp, T.dual_plane_formulas(128))):
        assert t.n_switches == f["switches"] and T.physical_links(t) == f["links"]
    # every switch of rail-only uses all 128 ports at 400G; of dual-plane all 256 at 200G
    for t, ports in ((ro, 128), (dp, 256)):
        port = t.params["port_gbps"]
        used = np.zeros(t.n_nodes, np.int64)
        np.add.at(used, t.links[:, 0], t.link_gbps // port)
        np.add.at(used, t.links[:, 1], t.link_gbps // port)
        assert set(used[t.n_gpus:].tolist()) == {ports}
    saving = lambda a, b: 1 - a.n_switches / b.n_switches  # noqa: E731
    assert round(saving(z, roft) * 100) == 60 and round(saving(z, ro) * 100) == 33 == round(saving(z, dp) * 100)


def test_testbed_link_capacity_saving():
    z, roft = T.zcube(4, 2), T.roft2(4, 4, 1, 4)
    assert (T.physical_links(z), T.physical_links(roft)) == (48, 32)
    assert (T.capacity_tbps(z), T.capacity_tbps(roft)) == (9.6, 12.8)
    assert 1 - T.capacity_tbps(z) / T.capacity_tbps(roft) == pytest.approx(0.25, abs=1e-12)
    assert z.n_switches == roft.n_switches == 8


@pytest.mark.parametrize("call", [lambda: T.rail_only(10), lambda: T.rail_only(16, rails=3),
                                  lambda: T.dual_plane(3), lambda: T.zcube2_pxn_hop_histogram(6, 4)])
def test_impossible_parameters(call):
    with pytest.raises(ValueError):
        call()
