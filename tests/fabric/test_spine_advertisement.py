"""The spine-side load advertisement (seed 000 §13-§14: "load-aware path selection, plus a
spine-side load advertisement"): load_aware_selector's spine_load_gbps input against its
golden reference (golden.fabric.load_aware_selector), and leaves placing flows turn by turn
with the spines (golden.fabric.spine) advertising between turns -- the selector in
simulation, the spine model in the loop, every output of every cycle compared with golden.

Back ends: the `backend` fixture (MyHDL, and its converted Verilog replayed in Icarus or
co-simulated); the converted Verilog also runs batched under -g2005 and compiles under
Verilator's lint."""
import random

import pytest

from cosim.sim.vector_batch import VectorBench
from golden.fabric import fabric_collision as fc
from golden.fabric import spine as sp
from golden.fabric.load_aware_selector import INPUTS, SelectorModel, choose, pack, unpack
from hdl.fabric.load_aware_selector import load_aware_selector

from test_collective_blocks import SEL_IN, W, _rst, drive, selector_ports, sig

SEL_IN_SPINE = SEL_IN + ("spine_load_gbps",)
assert set(SEL_IN_SPINE) == set(INPUTS)


def spine_ports(paths):
    ports = selector_ports(paths)
    index_bits = max(4, (paths - 1).bit_length())           # selector_ports' 4 bits name up to 16 paths
    ports.update(chosen_path=sig(index_bits), ending_path=sig(index_bits), spine_load_gbps=sig(paths * W),
                 spine_steered=sig(1))
    return ports


# ------------------------------------------------------------------ the rule
def test_zero_advertisement_is_the_leaf_only_choice():
    rng = random.Random(5)
    for _ in range(2000):
        n = rng.randint(1, 9)
        leaf = [rng.choice((0, 100, 200, 65535, rng.getrandbits(16))) for _ in range(n)]
        assert choose(leaf, [0] * n) == choose(leaf) == leaf.index(min(leaf))


def test_rule_is_bottleneck_then_total_then_index():
    assert choose([0, 0], [100, 0]) == 1                 # the far hop alone decides
    assert choose([100, 0], [0, 100]) == 0               # equal bottleneck and total: lowest index
    assert choose([100, 100], [100, 0]) == 1             # equal bottleneck (100): less total load wins
    assert choose([100, 0], [100, 150]) == 0             # bottleneck first: 100 < 150, though 200 > 150
    assert choose([65535, 65535], [65535, 65534]) == 1   # the total is W + 1 bits: no saturation tie


def test_collision_reference_places_by_the_same_rule():
    """golden.fabric.fabric_collision.place (the collision story's simple reference) given an
    advertisement places a leaf's ring connections as the bit-exact model does."""
    conns = fc.ring_connections(0, 8, 1, 0)
    far = [300, 0, 0, 200, 0, 0, 100, 0]
    chosen, loads = fc.place(conns, 8, True, spine_loads=far)
    model = SelectorModel(8)
    out = model.run([dict(flow_start=1, declared_gbps=c.declared_gbps, load_aware_enable=1,
                          spine_load_gbps=pack(far)) for c in conns])
    assert chosen == [o["chosen_path"] for o in out] and loads == model.loads
    assert chosen[:5] == [1, 2, 4, 5, 7] and chosen != fc.place(conns, 8, True)[0]


# ------------------------------------------------------------------ the block against golden
def random_vectors(paths, seed, n=240):
    rng = random.Random(seed)
    vectors = []
    for k in range(n):
        quiet = 60 <= k < 100                             # a stretch with nothing advertised
        far = [rng.choice((0, 0, 100, 200, 65535, 65534, rng.randint(0, 400))) for _ in range(paths)]
        vectors.append(dict(flow_start=int(rng.random() < 0.6), flow_hash=rng.getrandbits(32),
                            declared_gbps=rng.choice((0, 100, 65535, rng.randint(1, 100))),
                            flow_end=int(k > 20 and rng.random() < 0.4), ending_path=rng.randrange(paths + 2),
                            ending_gbps=rng.randint(0, 150), load_aware_enable=int(k < 30 or rng.random() < 0.8),
                            spine_load_gbps=0 if quiet else pack(far)))
    return vectors


@pytest.mark.parametrize("paths,mode", [(8, "mod"), (6, "mulhi")])
def test_selector_with_advertisement_matches_golden(backend, paths, mode):
    vectors = random_vectors(paths, paths)
    got = drive(backend, load_aware_selector, spine_ports(paths), SEL_IN_SPINE, vectors, PATH_MODE=mode)
    ref = SelectorModel(paths, path_mode=mode).run(vectors)
    for k, (g, r) in enumerate(zip(got, ref)):
        assert g == r, f"cycle {k}"
    # the stimulus reaches what it is for: the advertisement moved flows, and with it at zero
    # the choice is the leaf's lightest uplink
    assert sum(r["spine_steered"] for r in ref) > 20
    assert all(r["spine_steered"] == 0 for v, r in zip(vectors, ref) if v["spine_load_gbps"] == 0)


def test_selector_without_the_port_equals_a_zero_advertisement():
    """The port omitted (collective_fabric, every caller before it existed) is the port at zero."""
    vectors = [{n: v for n, v in vec.items() if n != "spine_load_gbps"} for vec in random_vectors(6, 11)]
    without = drive("myhdl", load_aware_selector, selector_ports(6), SEL_IN, vectors)
    zero = drive("myhdl", load_aware_selector, spine_ports(6), SEL_IN_SPINE,
                 [dict(v, spine_load_gbps=0) for v in vectors])
    assert [{n: g[n] for n in without[0]} for g in zero] == without


@pytest.mark.parametrize("generation", ["2005", "2012"])
def test_selector_with_advertisement_batched_icarus(generation):
    """The converted Verilog under both language modes, against golden (vector_batch's
    protocol: sample j + 1 is taken with vector j applied)."""
    paths = 6
    vectors = random_vectors(paths, 21)
    ports = spine_ports(paths)
    outs = [n for n in ports if n not in SEL_IN_SPINE]
    bench = VectorBench(load_aware_selector, generation=generation, outputs=outs, clk=sig(1), rst=_rst(), **ports)
    got = bench.run(vectors).samples
    assert got[1:] == SelectorModel(paths).run(vectors)


def test_converted_selector_compiles_under_iverilog_2005_and_verilator_lint(compiles_everywhere):
    text = compiles_everywhere(load_aware_selector, clk=sig(1), rst=_rst(), **spine_ports(32))
    assert "spine_load_gbps" in text and "spine_steered" in text


@pytest.mark.parametrize("case", ["spine_lanes", "spine_steered"])
def test_advertisement_ports_checked_at_elaboration(case):
    p = spine_ports(8)
    if case == "spine_lanes":
        p["spine_load_gbps"] = sig(7 * W)                # one lane short
    else:
        p["spine_steered"] = sig(2)
    with pytest.raises(ValueError, match=case.replace("_lanes", "_load_gbps")):
        load_aware_selector(sig(1), _rst(), **p)


# ------------------------------------------------------------------ leaves in turns, spines in the loop
def run_turns(backend, turns, spines, leaves, advertise):
    """Each leaf's turn on the selector in simulation (one leaf, one selector, its flows one
    a cycle, then an idle cycle); the golden spines load the downlinks along the paths the
    design chose and advertise after every turn (or never).  Every output of every cycle
    must equal golden's SelectorModel on the same inputs.  Returns (golden's outcome on the
    design's paths, the design's samples per turn)."""
    advert = sp.silent(spines, leaves)
    spine = sp.SpineLayer(spines, leaves)
    placed, samples = [], []
    for leaf, flows in turns:
        vectors = [dict(flow_start=1, flow_hash=f.flow_hash, declared_gbps=f.gbps, flow_end=0, ending_path=0,
                        ending_gbps=0, load_aware_enable=1,
                        spine_load_gbps=pack(sp.far_hop_loads(advert, f.dst_leaf))) for f in flows]
        vectors.append(dict(vectors[-1], flow_start=0))
        got = drive(backend, load_aware_selector, spine_ports(spines), SEL_IN_SPINE, vectors)
        assert got == SelectorModel(spines).run(vectors), f"leaf {leaf}"
        paths = [g["chosen_path"] for g in got[:-1]]
        for f, p in zip(flows, paths):
            spine.place(p, f.dst_leaf, f.gbps)
        if advertise:
            advert = spine.advertise()
        placed.append(paths)
        samples.append(got)
    outcome = sp.place_in_turns(turns, spines, leaves, advertise, placed_paths=placed)
    assert outcome.spine.loads == spine.loads
    return outcome, samples


def two_leaves_one_destination():
    """Leaves 0 and 1 each send two flows to leaf 2 and two to leaf 3, on 4 spines."""
    return [(a, [sp.Flow(a, d) for d in (2, 3, 2, 3)]) for a in (0, 1)]


def test_two_leaves_advertisement_avoids_the_spine_collision(backend):
    """Each leaf alone balances its four uplinks perfectly (one flow each, with or without the
    advertisement), so neither can see that both routed their flows toward leaf 2 through
    spines 0 and 2 and toward leaf 3 through spines 1 and 3: four spine downlinks carry two
    flows (200 Gb/s) while four carry none.  After leaf 0's turn the spines advertise; leaf 1
    then places against leaf 0's downlink load and every downlink carries one flow."""
    turns = two_leaves_one_destination()
    leaf_only, lo_samples = run_turns(backend, turns, 4, 4, advertise=False)
    advertised, ad_samples = run_turns(backend, turns, 4, 4, advertise=True)
    # the same prediction from golden alone (its own choices, not the design's)
    for outcome, advertise in ((leaf_only, False), (advertised, True)):
        assert outcome.paths == sp.place_in_turns(turns, 4, 4, advertise).paths

    assert leaf_only.paths == [[0, 1, 2, 3], [0, 1, 2, 3]]          # the same tie-break on both leaves
    assert advertised.paths == [[0, 1, 2, 3], [1, 0, 3, 2]]         # leaf 1 steered off leaf 0's downlinks
    # the leaf's own view is identical: every uplink one flow, every placement perfect
    for samples in (lo_samples, ad_samples):
        for got in samples:
            end = got[-1]
            assert unpack(end["path_load_gbps"], 4) == [100] * 4
            assert end["c_perfect_placements"] == end["c_flows_placed"] == 4
    assert leaf_only.leaf_loads == advertised.leaf_loads
    # the spines see the difference
    assert leaf_only.max_downlink == 200 and leaf_only.spine.busiest_downlink() == (0, 2)
    assert [leaf_only.spine.loads[s][2:] for s in range(4)] == [[200, 0], [0, 200], [200, 0], [0, 200]]
    assert advertised.max_downlink == 100
    assert all(advertised.spine.loads[s][d] == 100 for s in range(4) for d in (2, 3))
    # leaf 1's first and third flows were moved by the advertisement (its second and fourth
    # then land where its own loads send them anyway); leaf 0 heard nothing yet
    assert [g["spine_steered"] for g in ad_samples[1][:-1]] == [1, 0, 1, 0]
    assert not any(g["spine_steered"] for samples in (lo_samples, ad_samples[:1]) for got in samples for g in got)


def test_all_to_all_ascending_leaves_converge_without_the_advertisement(backend):
    """8 leaves, 8 spines, one flow from every leaf to every other, each leaf's destinations in
    ascending order (the leaves take turns).  Leaf-only, every leaf's k-th flow goes to spine
    k-1 and most k-th destinations are the same leaf: spine 0's downlink toward leaf 0
    carries 7 flows.  With the advertisement every downlink carries at most one; the ECMP
    hash of the same 5-tuples (golden) gives 4."""
    turns = sp.all_to_all_turns(8)
    leaf_only, _ = run_turns(backend, turns, 8, 8, advertise=False)
    advertised, _ = run_turns(backend, turns, 8, 8, advertise=True)
    hashed = sp.place_in_turns(turns, 8, 8, advertise=False, load_aware=False)
    assert (leaf_only.max_downlink, leaf_only.spine.busiest_downlink()) == (700, (0, 0))
    assert advertised.max_downlink == 100
    assert hashed.max_downlink == 400
    assert leaf_only.max_uplink == advertised.max_uplink == 100 < hashed.max_uplink


def test_seed_scale_all_to_all_golden():
    """The same at the seed's 32 x 32 (golden only): leaf-only 3 100 Gb/s on one downlink
    (31 flows), the advertisement 100, ECMP 400; and rotating each leaf's destination order
    removes the leaf-only collision -- it comes from the shared tie-break, not the load.
    An advertisement the leaves all place against at once (none yet sent) is the leaf-only
    case: the remedy needs an advertisement between the placements it separates."""
    turns = sp.all_to_all_turns(32)
    figures = [sp.place_in_turns(turns, 32, 32, advertise=a, load_aware=la).max_downlink
               for a, la in ((False, True), (True, True), (False, False))]
    assert figures == [3100, 100, 400]
    rotated = sp.all_to_all_turns(32, order="rotated")
    assert sp.place_in_turns(rotated, 32, 32, advertise=False).max_downlink == 100
    assert sp.advert_bits(32) // 8 == 64                     # bytes per spine per advertisement
