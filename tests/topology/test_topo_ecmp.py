"""ECMP routing of ring and all-to-all flows over ZCube and ROFT graphs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from golden.fabric import ecmp
from golden.topology import topology as T
from golden.topology import topo_ecmp as E

SMALL = {
    "zcube42": lambda: T.zcube(4, 2),
    "zcube33": lambda: T.zcube(3, 3),
    "zcube24": lambda: T.zcube(2, 4),
    "roft2": lambda: T.roft2(4, 4, 1, 4),
    "roft16": lambda: T.roft_radix(16),
    "roft3odd": lambda: T.roft3(2, 3, 2, 3, 4, 2, 3),
}
_cache = {}


def topo(name):
    if name not in _cache:
        _cache[name] = SMALL[name]()
    return _cache[name]


# ---- hashing helpers ----------------------------------------------------------------------
def test_fmix32_known_values_and_bijection():
    # MurmurHash3 fmix32 published constants: fmix32(0) = 0, and it is a bijection
    assert E.fmix32(0) == 0
    assert E.fmix32(1) == 0x514E28B7
    xs = np.random.default_rng(1).integers(0, 1 << 32, 4000, dtype=np.uint64).tolist()
    assert len({E.fmix32(x) for x in xs}) == len(set(xs))


@settings(max_examples=300, deadline=None)
@given(h=st.integers(0, 2 ** 32 - 1), node=st.integers(0, 2 ** 24))
def test_numba_hop_hash_matches_reference(h, node):
    for scheme in E.HOP_SCHEMES:
        assert int(E._hop_hash(h, node, scheme == "per-device")) == E.hop_hash(h, node, scheme)


@settings(max_examples=100, deadline=None)
@given(h=st.integers(0, 2 ** 32 - 1), dst=st.integers(64, 255))
def test_numba_decisions_match_reference(h, dst):
    """A flow leaving pod 0 of ROFT radix 16 meets a leaf, a spine and a core
    that each choose among several next hops: same choices as the reference."""
    t = topo("roft16")
    for scheme in E.SCHEMES:
        for mode in ecmp.PATH_MODES:
            r = E.route(t, [0], [dst], [h], mode, scheme, record_paths=True)
            ref = E.route_flow_ref(t, 0, dst, h, mode, scheme)
            assert [x for x in r.paths[0].tolist() if x >= 0] == ref


# ---- flows are golden.fabric.ecmp flows ----------------------------------------------------------
def test_collective_flows_use_golden_ecmp_tuples():
    t = topo("zcube42")
    for coll, order in (("ring", "grid"), ("all-to-all", "col")):
        fl = E.collective_flows(t, coll, order, stripes=2, epoch=5)
        for i in range(0, len(fl), 7):
            s, d, st_ = int(fl.src_rank[i]), int(fl.dst_rank[i]), int(fl.stripe[i])
            expect = ecmp.FlowTuple(E.gpu_ip(s), E.gpu_ip(d),
                                    ecmp.roce_src_port(ecmp.qpn_for(5, s, d, st_)), 4791, 17)
            assert fl.tuple(i) == expect
    assert ecmp.ip_str(E.gpu_ip(0x1234)) == "10.18.52.1"


def test_hash_implementations_agree():
    t = topo("roft16")
    fl = E.collective_flows(t, "ring", "grid", 2)
    ref = E.flow_hashes(fl, "ref")
    assert np.array_equal(E.flow_hashes(fl, "numba"), ref)
    assert np.array_equal(E.flow_hashes(fl, "c"), ref)
    import zlib
    for i in range(0, len(fl), 97):
        assert int(ref[i]) == zlib.crc32(ecmp.serialize(fl.tuple(i)))


def test_ring_orders_on_grid():
    t = T.zcube(4, 2)                       # grid: row = group, col = index
    s, d, _ = E.collective_pairs(t, "ring", "col")
    assert sorted(zip(s.tolist(), d.tolist()))[:4] == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert all(a % 4 == b % 4 for a, b in zip(s, d))             # same index
    s, d, _ = E.collective_pairs(t, "ring", "row")
    assert all(a // 4 == b // 4 for a, b in zip(s, d))           # same group
    s, d, st_ = E.collective_pairs(t, "ring", "grid", 3)
    assert len(s) == 2 * 3 * 16 and set(st_.tolist()) == set(range(6))
    s, d, _ = E.collective_pairs(t, "ring", "flat")
    assert (d == (s + 1) % 16).all()
    s, d, _ = E.collective_pairs(t, "all-to-all")
    assert len(s) == 16 * 15 and len(set(zip(s.tolist(), d.tolist()))) == 240 and not (s == d).any()
    r = T.roft_radix(16)
    s, d, _ = E.collective_pairs(r, "ring", "col")               # rail rings
    assert ((s % 8) == (d % 8)).all() and ((d // 8 - s // 8) % (r.n_gpus // 8) == 1).all()


# ---- routing: fast kernel vs reference, shortest paths, load accounting ---------------------
@pytest.mark.parametrize("name", list(SMALL))
@pytest.mark.parametrize("scheme", E.HOP_SCHEMES)
@pytest.mark.parametrize("mode", ecmp.PATH_MODES)
def test_kernel_matches_reference_router(name, scheme, mode):
    t = topo(name)
    fl = E.collective_flows(t, "all-to-all", stripes=2, epoch=3)
    h = E.flow_hashes(fl)
    r = E.route(t, fl.src_rank, fl.dst_rank, h, mode, scheme, record_paths=True)
    idx = np.random.default_rng(len(fl)).choice(len(fl), min(len(fl), 150), replace=False)
    for i in idx:
        ref = E.route_flow_ref(t, int(fl.src_rank[i]), int(fl.dst_rank[i]), int(h[i]), mode, scheme)
        assert [x for x in r.paths[i].tolist() if x >= 0] == ref


@pytest.mark.parametrize("name", ["zcube42", "zcube33", "zcube24", "roft2", "roft3odd"])
def test_paths_are_shortest_and_loads_add_up(name):
    t = topo(name)
    fl = E.collective_flows(t, "all-to-all")
    r = E.route(t, fl.src_rank, fl.dst_rank, E.flow_hashes(fl), record_paths=True)
    N = t.n_gpus
    links = {tuple(sorted(p)): i for i, p in enumerate(t.links.tolist())}
    expect = np.zeros(2 * t.n_links, dtype=np.int64)
    rows = {s: t.gpu_distance_row(s) for s in range(N)}
    for i in range(len(fl)):
        p = [x for x in r.paths[i].tolist() if x >= 0]
        a, b = p[0], p[-1]
        assert (a, b) == (int(fl.src_rank[i]), int(fl.dst_rank[i]))
        assert all(x >= N for x in p[1:-1])                    # only switches forward
        assert len(p) - 2 == rows[a][b]                        # shortest: switches on the path
        for u, v in zip(p, p[1:]):
            lid = links[tuple(sorted((u, v)))]
            expect[2 * lid + (t.links[lid, 0] != u)] += 1
    assert np.array_equal(expect, r.load)


def _flow_rates(t, r):
    """Per-flow equal-share rate straight from the recorded paths."""
    cap = np.repeat(t.link_gbps, 2)
    links = {tuple(sorted(p)): i for i, p in enumerate(t.links.tolist())}
    rates = []
    for row in r.paths:
        p = [x for x in row.tolist() if x >= 0]
        best = float("inf")
        for u, v in zip(p, p[1:]):
            lid = links[tuple(sorted((u, v)))]
            d = 2 * lid + int(t.links[lid, 0] != u)
            best = min(best, cap[d] / r.load[d])
        rates.append(best)
    return rates


@pytest.mark.parametrize("name", ["zcube42", "roft2", "roft3odd", "zcube33"])
@pytest.mark.parametrize("coll,order", [("ring", "flat"), ("ring", "grid"), ("all-to-all", "col")])
def test_collective_rate_is_minimum_over_members(name, coll, order):
    t = topo(name)
    r = E.route_collective(t, coll, order, stripes=2, epoch=1, record_paths=True)
    s = E.summarize(r)
    rates = _flow_rates(t, r)
    assert s.min_flow_gbps == pytest.approx(min(rates), rel=1e-12)
    per_gpu = np.bincount(r.src, minlength=t.n_gpus).min()
    assert s.gpu_gbps == pytest.approx(min(rates) * per_gpu, rel=1e-12)
    assert s.max_load == r.load.max()
    u, v = s.busiest_link
    assert r.load[[i for i, e in enumerate(E.directed_link_ends(t).tolist()) if e == [u, v]][0]] == s.max_load


@pytest.mark.parametrize("name", ["zcube42", "zcube33", "zcube24", "roft2", "roft16", "roft3odd"])
def test_path_counts_match_enumeration(name):
    t = topo(name)
    counts = E.path_counts(t)
    rng = np.random.default_rng(3)
    for a, b in rng.integers(0, t.n_gpus, (40, 2)).tolist():
        if a == b:
            continue
        paths = E.all_shortest_paths(t, a, b)
        assert len(paths) == E.count_shortest_paths(t, a, b)
        assert len({tuple(p) for p in paths}) == len(paths)
        first = E.shortest_next_hops(t, a, b)
        assert len(paths) == sum(int(counts[b, s - t.n_gpus]) for s in first)


def test_path_scheme_is_uniform_over_paths():
    """The path scheme spreads a pair's stripes evenly over all its paths:
    ROFT radix 16 across pods has 8 spines x 8 cores x 4 spines = 256 paths."""
    t = topo("roft16")
    a, b = 0, t.n_gpus - 1
    assert E.count_shortest_paths(t, a, b) == 256
    n = 256 * 64
    fl = ecmp.make_flowset("pair", np.full(n, a), np.full(n, b), np.arange(n), leaves=256,
                           acc_per_leaf=256, order="packed", perm=None, epoch=0)
    r = E.route(t, fl.src_rank, fl.dst_rank, E.flow_hashes(fl), scheme="path", record_paths=True)
    used = {}
    for p in r.paths.tolist():
        used[tuple(p)] = used.get(tuple(p), 0) + 1
    assert len(used) == 256
    # 64 flows per path on average; a uniform hash keeps every path within a wide band
    assert min(used.values()) > 25 and max(used.values()) < 110


def test_path_scheme_refuses_groups_beyond_select_path():
    # two single-GPU pods, 64 spines each, one plane of 64 cores: 64^3 = 262,144 paths
    t = T.roft3(1, 1, 1, 2, 64, 1, 64)
    counts = E.path_counts(t)[1]                          # towards the GPU of pod 1
    assert counts[0] == 64 ** 3 and counts[2] == 64 ** 2  # from pod 0's leaf, from a spine of pod 0
    with pytest.raises(ValueError, match="equal-cost"):
        E.route(t, [0], [1], [12345], scheme="path")
    E.route(t, [0], [1], [12345], scheme="per-device")


def test_zcube_two_switch_pairs_use_both_disjoint_paths():
    """Many stripes of one ZCube(n,2) pair: ECMP at the NIC spreads them over
    exactly the two disjoint two-switch paths."""
    t = T.zcube(5, 2)
    a, b = 0, 5 * 2 + 3                       # group 0 index 0 -> group 2 index 3
    fl = ecmp.make_flowset("pair", np.full(64, a), np.full(64, b), np.arange(64), leaves=256,
                           acc_per_leaf=256, order="packed", perm=None, epoch=0)
    r = E.route(t, fl.src_rank, fl.dst_rank, E.flow_hashes(fl), record_paths=True)
    used = {tuple(p[1:3]) for p in r.paths.tolist()}
    N = t.n_gpus
    assert used == {(N + 0, N + 5 + 3), (N + 5 + 0, N + 2)}    # G0 -> I3, I0 -> G2


def test_polarisation_same_hash_every_hop():
    """With one hash at every hop and power-of-two groups, a ROFT spine's core
    choice repeats the leaf's spine choice: each spine uses one core uplink.
    Per-device seeds use them all."""
    t = T.roft_radix(16)
    fl = E.collective_flows(t, "all-to-all")
    h = E.flow_hashes(fl)
    ends = E.directed_link_ends(t)
    lvl = np.concatenate([np.full(t.n_gpus, -1), t.switch_level])
    up = (lvl[ends[:, 0]] == 1) & (lvl[ends[:, 1]] == 2)
    per_spine = {}
    for scheme in E.HOP_SCHEMES:
        r = E.route(t, fl.src_rank, fl.dst_rank, h, "mod", scheme)
        used = ends[up & (r.load > 0)]
        per_spine[scheme] = np.bincount(used[:, 0] - t.n_gpus - 32, minlength=32)
    assert set(per_spine["same"].tolist()) == {1}
    assert set(per_spine["per-device"].tolist()) == {t.params["cores_per_plane"]}


def test_all_to_all_small_instance_accounting():
    """ZCube(16,2) vs ROFT radix 16 (256 GPUs): every GPU sends and receives N-1
    flows; link traversals equal the sum of (switches + 1) over all pairs."""
    for t in (T.zcube(16, 2), T.roft_radix(16)):
        r = E.route_collective(t, "all-to-all")
        N = t.n_gpus
        assert len(r.src) == N * (N - 1)
        ends = E.directed_link_ends(t)
        out_of_gpu = np.bincount(ends[:, 0], weights=r.load, minlength=t.n_nodes)[:N]
        into_gpu = np.bincount(ends[:, 1], weights=r.load, minlength=t.n_nodes)[:N]
        assert set(out_of_gpu.tolist()) == {N - 1} == set(into_gpu.tolist())
        hist = T.hop_histogram_structural(t)
        assert int(r.load.sum()) == sum((d + 1) * c for d, c in hist.items())


def test_all_to_all_million_flows_1024_gpus():
    """The 10^6-flow case: ZCube(32,2) and ROFT radix 32, 1,047,552 flows each."""
    out = {}
    for t in (T.zcube(32, 2), T.roft_radix(32)):
        r = E.route_collective(t, "all-to-all")
        N = t.n_gpus
        assert len(r.src) == N * (N - 1) == 1_047_552
        hist = T.hop_histogram_structural(t)
        assert int(r.load.sum()) == sum((d + 1) * c for d, c in hist.items())
        s = E.summarize(r)
        used = r.load[r.load > 0]
        # the busiest link carries more than the mean (hash imbalance) and the
        # collective runs at the busiest link's share
        assert s.max_load > used.mean()
        cap = np.repeat(t.link_gbps, 2)
        assert s.min_flow_gbps == pytest.approx((cap[r.load > 0] / used).min())
        assert 0 < s.efficiency <= 1
        out[t.kind] = s
    # every GPU port of ZCube carries traffic in both directions
    assert out["zcube"].per_class["GPU->L0"][1] == 1024 == out["zcube"].per_class["GPU->L1"][1]
    # ROFT: each NIC carries all N-1 flows, so the NIC is never the only bottleneck
    assert out["roft"].per_class["GPU->leaf"][2] == 1023


def test_bad_routing_input():
    t = topo("zcube42")
    with pytest.raises(ValueError):
        E.route(t, [0], [0], [1])
    with pytest.raises(ValueError):
        E.route(t, [0], [16], [1])
    with pytest.raises(ValueError):
        E.route(t, [0], [1], [1], mode="low")
    with pytest.raises(ValueError):
        E.route(t, [0], [1], [1], scheme="salted")
    with pytest.raises(ValueError):
        E.hop_hash(1, 2, "path")
    with pytest.raises(ValueError):
        E.collective_pairs(t, "ring", "diagonal")
    with pytest.raises(ValueError):
        E.collective_pairs(t, "broadcast")
    with pytest.raises(ValueError):
        E.collective_pairs(t, "ring", "col", stripes=0)
    with pytest.raises(ValueError):
        E.collective_flows(t, "ring", epoch=70000)
    with pytest.raises(ValueError):
        E.flow_hashes(E.collective_flows(t, "ring"), impl="asm")


def test_testbed_two_dimensional_ring_matches_the_roft_rail_ring():
    """The document's testbed (its Figure 12): ZCube(4,2) on 48 x 200G matched the ROFT's
    all-reduce bus bandwidth on 32 x 400G.  In the model, one ring channel on ZCube uses
    one 200G port per GPU (half the NIC); the two-dimensional ring (group and index
    channels at once) reaches the whole 400 Gb/s NIC, as the ROFT's rail ring does, in
    every job restart (every ring link is one switch with a single path: no ECMP luck)."""
    z, roft = T.zcube(4, 2), T.roft2(4, 4, 1, 4)
    for epoch in range(8):
        grid = E.summarize(E.route_collective(z, "ring", "grid", 1, epoch))
        one = E.summarize(E.route_collective(z, "ring", "col", 1, epoch))
        rail = E.summarize(E.route_collective(roft, "ring", "col", 1, epoch))
        assert grid.nic_gbps == rail.nic_gbps == 400
        assert grid.gpu_gbps == rail.gpu_gbps == 400
        assert one.gpu_gbps == 200
