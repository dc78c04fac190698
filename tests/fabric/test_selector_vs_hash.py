"""One leaf's 32 ring all-reduce flows on its 32 uplinks, in simulation on both back
ends: the load-aware selector places them perfectly (one flow per path), while
hashing alone (the hash unit's paths, and the selector in its ECMP fallback mode fed
the hash unit's hashes) collides exactly as the golden ECMP model predicts."""
from collections import Counter

import pytest

from golden.fabric import ecmp
from hdl.fabric.load_aware_selector import load_aware_selector

from test_collective_blocks import SEL_IN, drive, selector_ports, sig, unpack
from test_ecmp_hash_unit import run_hash_unit

PATHS = 32
GBPS = 100          # every flow declares one 100 Gb/s link


def leaf_ring_flows(leaf):
    flows = ecmp.ring_flows()                   # 32 leaves x 32 accelerators, one flow per rank
    return flows.subset(flows.src_leaf == leaf)


def run_selector(backend, hashes, load_aware):
    ports = selector_ports(PATHS)
    ports["chosen_path"], ports["ending_path"] = sig(5), sig(5)
    start = [dict(flow_start=1, flow_hash=h, declared_gbps=GBPS, flow_end=0, ending_path=0, ending_gbps=0,
                  load_aware_enable=load_aware) for h in hashes]
    idle = dict(start[0], flow_start=0)
    got = drive(backend, load_aware_selector, ports, SEL_IN, start + [idle])
    return [g["chosen_path"] for g in got[:-1]], got[-1]


@pytest.mark.parametrize("leaf", [0, 17])
def test_load_aware_places_32_ring_flows_perfectly_hashing_does_not(backend, leaf):
    flows = leaf_ring_flows(leaf)
    assert len(flows) == PATHS
    # golden ECMP: the same flows hashed (CRC-32) and binned onto the leaf's 32 uplinks
    golden_counts = ecmp.bin_flows_ref(flows, PATHS, "crc32", "mod", n_groups=ecmp.LEAVES)[leaf]
    golden_distinct = sum(1 for c in golden_counts if c)
    golden_max = max(golden_counts)

    # the hash unit in simulation: 32 flows, one per cycle
    hashed = run_hash_unit(backend, list(flows.tuples()), PATHS, "mod")
    assert [i for i, _, _ in hashed] == list(range(PATHS))
    hdl_hashes = [h for _, h, _ in hashed]
    unit_loads = Counter(p for _, _, p in hashed)
    assert len(unit_loads) == golden_distinct and max(unit_loads.values()) == golden_max

    # (a) load-aware: every placement onto an empty path
    paths_a, end_a = run_selector(backend, hdl_hashes, load_aware=1)
    assert sorted(paths_a) == list(range(PATHS))
    assert end_a["c_flows_placed"] == end_a["c_perfect_placements"] == PATHS
    assert unpack(end_a["path_load_gbps"], PATHS) == [GBPS] * PATHS
    assert end_a["busiest_gbps"] == end_a["lightest_gbps"] == GBPS          # max load: 1 flow
    assert end_a["accounting_error"] == 0

    # (b) ECMP fallback: the selector follows the hash; collisions as golden predicts
    paths_b, end_b = run_selector(backend, hdl_hashes, load_aware=0)
    assert paths_b == [p for _, _, p in hashed]
    loads_b = [v // GBPS for v in unpack(end_b["path_load_gbps"], PATHS)]
    assert loads_b == golden_counts
    assert sum(1 for v in loads_b if v) == golden_distinct
    assert end_b["busiest_gbps"] == golden_max * GBPS and end_b["lightest_gbps"] == 0
    assert end_b["c_flows_placed"] == PATHS
    # a placement is perfect only for the first flow on each path
    assert end_b["c_perfect_placements"] == golden_distinct < PATHS
    assert golden_max > 1
