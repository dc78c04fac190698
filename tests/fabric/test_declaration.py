"""The collective declaration interface (seed 000 §14: "a way for the collective library to
tell the fabric what it is doing"): the word (spec.fabric.DECL_FIELDS, golden.fabric.declaration),
collective_declaration_table against its golden model with hostile words, and the table wired
into the selector (declared_placement): the same flows with the same hashes are spread one per
uplink when their job is declared and collide as ECMP predicts when it is not.

Back ends: the `backend` fixture; the converted Verilog also runs batched under -g2005 and
compiles under Verilator's lint."""
import random
from collections import Counter

import pytest

from cosim.sim.vector_batch import VectorBench
from golden.fabric import declaration as dcl
from golden.fabric import ecmp
from golden.fabric import fabric_collision as fc
from golden.fabric.load_aware_selector import pack, unpack
from hdl.fabric.collective_declaration_table import collective_declaration_table
from hdl.fabric.declared_placement import declared_placement
from spec.fabric import (DECL_BITS, DECL_FIELDS, DECL_KIND_ALL_TO_ALL, DECL_KIND_RING, DECL_KIND_TREE,
                         DECL_OFFSETS, DECL_OP_END, DECL_OP_START, DECL_VERSION)

from test_collective_blocks import W, _rst, drive, sig

JOBS = 4


# ------------------------------------------------------------------ the word
def test_declaration_word_layout_and_round_trip():
    """The layout docs/fabric_declaration.md publishes, pinned: a library that packs the word
    by hand must get these offsets."""
    assert DECL_BITS == 104 and sum(b for _, b in DECL_FIELDS) == DECL_BITS
    assert DECL_OFFSETS == dict(version=0, op=4, kind=6, job=8, participants=24, flows=40, rate_gbps=56,
                                bytes_per_step=72)
    assert (DECL_VERSION, DECL_OP_START, DECL_OP_END) == (1, 1, 2)
    assert (DECL_KIND_RING, DECL_KIND_ALL_TO_ALL, DECL_KIND_TREE) == (0, 1, 2)
    d = dcl.start(job=0xBEEF, kind=DECL_KIND_TREE, participants=1024, flows=32736, rate_gbps=100,
                  bytes_per_step=8_000_000)
    word = d.encode()
    assert word == 0x007A1200_0064_7FE0_0400_BEEF_91
    assert word & 0xF == DECL_VERSION and (word >> 4) & 3 == DECL_OP_START and (word >> 6) & 3 == DECL_KIND_TREE
    assert dcl.CollectiveDeclaration.decode(word) == d and d.problems() == []
    assert d.declared_load_gbps == 32736 * 100 and d.step_time_us == 8_000_000 * 8 // 100_000 == 640
    assert dcl.end(0xBEEF).problems() == []
    with pytest.raises(ValueError, match="rate_gbps"):
        dcl.start(1, DECL_KIND_RING, 8, 8, 1 << 16).encode()


def bad_words():
    """One word per reason a leaf rejects a declaration."""
    good = dcl.start(5, DECL_KIND_RING, 8, 8, 100)
    return {"version": dcl.CollectiveDeclaration(**{**good.__dict__, "version": DECL_VERSION + 1}),
            "op 0": dcl.CollectiveDeclaration(**{**good.__dict__, "op": 0}),
            "op 3": dcl.CollectiveDeclaration(**{**good.__dict__, "op": 3}),
            "kind 3": dcl.CollectiveDeclaration(**{**good.__dict__, "kind": DECL_KIND_TREE + 1}),
            "no flows": dcl.start(5, DECL_KIND_RING, 8, 0, 100),
            "rate 0": dcl.start(5, DECL_KIND_RING, 8, 8, 0),
            "1 participant": dcl.start(5, DECL_KIND_TREE, 1, 8, 100),
            "end of an unknown job": dcl.end(6)}


def test_golden_rejects_each_bad_word():
    for reason, d in bad_words().items():
        if reason != "end of an unknown job":
            assert d.problems(), reason


# ------------------------------------------------------------------ the table
TABLE_IN = dcl.TABLE_INPUTS


def table_ports(jobs=JOBS):
    return dict(decl_valid=sig(1), decl_word=sig(DECL_BITS), flow_start=sig(1), flow_job=sig(16), flow_gbps=sig(W),
                place_gbps=sig(W), place_load_aware=sig(1), flow_declared=sig(1), over_declaration=sig(1),
                jobs_active=sig(jobs.bit_length()), declared_load_gbps=sig(32), c_declared_flows=sig(32),
                c_over_declaration=sig(32), c_undeclared_flows=sig(32), decl_error=sig(1))


def random_table_vectors(seed, n=400):
    """Declarations of six jobs into four slots (so the table fills), re-declarations, ends
    of jobs that are not active, one bad word in twenty, and flows of those jobs and others."""
    rng = random.Random(seed)
    bad = list(bad_words().values())
    vectors = []
    for _ in range(n):
        v = dict(decl_valid=0, flow_start=int(rng.random() < 0.5), flow_job=rng.choice((1, 2, 3, 4, 5, 6, 9)),
                 flow_gbps=rng.choice((0, 0, 100, 65535, rng.getrandbits(16))))
        r = rng.random()
        if r < 0.15:
            d = dcl.start(rng.randint(1, 6), rng.choice((0, 1, 2)), rng.choice((2, 8, 1024, 65535)),
                          rng.choice((1, 2, 3, 65535)), rng.choice((1, 100, 400, 65535)), rng.getrandbits(32))
        elif r < 0.25:
            d = dcl.end(rng.randint(1, 7))
        elif r < 0.27:
            d = rng.choice(bad)
        else:
            d = None
        if d is not None:
            v.update(decl_valid=1, decl_word=d.encode())
        elif rng.random() < 0.5:
            v["decl_word"] = rng.getrandbits(DECL_BITS)      # garbage on the bus while not valid
        vectors.append(v)
    return vectors


def test_table_matches_golden(backend):
    vectors = random_table_vectors(1)
    got = drive(backend, collective_declaration_table, table_ports(), TABLE_IN, vectors, JOBS=JOBS)
    ref = dcl.DeclarationTableModel(JOBS).run(vectors)
    for k, (g, r) in enumerate(zip(got, ref)):
        assert g == r, f"cycle {k}"
    # the stimulus reaches every decision
    assert max(r["jobs_active"] for r in ref) == JOBS
    assert all(ref[-1][c] > 5 for c in ("c_declared_flows", "c_over_declaration", "c_undeclared_flows"))
    assert any(r["place_load_aware"] and r["place_gbps"] != v.get("flow_gbps") for v, r in zip(vectors, ref))
    assert max(r["declared_load_gbps"] for r in ref) > 65535 * 2


@pytest.mark.parametrize("reason", list(bad_words()))
def test_table_rejects_each_bad_word_and_keeps_its_state(reason):
    good = dcl.start(5, DECL_KIND_RING, 8, 8, 100)
    vectors = [dict(decl_valid=1, decl_word=good.encode()),
               dict(decl_valid=1, decl_word=bad_words()[reason].encode()),
               dict(decl_valid=0, flow_start=1, flow_job=5)]
    got = drive("myhdl", collective_declaration_table, table_ports(), TABLE_IN, vectors, JOBS=JOBS)
    assert got == dcl.DeclarationTableModel(JOBS).run(vectors)
    assert [g["decl_error"] for g in got] == [0, 0, 1]
    assert (got[2]["jobs_active"], got[2]["declared_load_gbps"], got[2]["place_load_aware"]) == (1, 800, 1)


def test_table_full_rejects_a_fifth_job():
    vectors = [dict(decl_valid=1, decl_word=dcl.start(j, DECL_KIND_RING, 8, 1, 10).encode()) for j in range(1, 6)]
    vectors.append(dict(decl_valid=0, flow_start=1, flow_job=5))
    got = drive("myhdl", collective_declaration_table, table_ports(), TABLE_IN, vectors, JOBS=JOBS)
    assert got == dcl.DeclarationTableModel(JOBS).run(vectors)
    assert got[-1]["jobs_active"] == JOBS and got[-1]["decl_error"] == 1 and got[-1]["flow_declared"] == 0


@pytest.mark.parametrize("generation", ["2005", "2012"])
def test_table_batched_icarus(generation):
    vectors = random_table_vectors(2, 300)
    ports = table_ports()
    outs = [n for n in ports if n not in TABLE_IN]
    bench = VectorBench(collective_declaration_table, generation=generation, outputs=outs, clk=sig(1), rst=_rst(),
                        **ports, JOBS=JOBS)
    assert bench.run(vectors).samples[1:] == dcl.DeclarationTableModel(JOBS).run(vectors)


# ------------------------------------------------------------------ the table deciding placements
PATHS = 8
PLACE_IN = dcl.PLACEMENT_INPUTS


def placement_ports(paths=PATHS, jobs=JOBS):
    t = table_ports(jobs)
    del t["place_load_aware"]
    return dict(t, flow_hash=sig(32), flow_end=sig(1), ending_path=sig(4), ending_gbps=sig(W),
                load_aware_enable=sig(1), spine_load_gbps=sig(paths * W), chosen_path=sig(4),
                path_load_gbps=sig(paths * W), busiest_gbps=sig(W), lightest_gbps=sig(W), placed_load_aware=sig(1),
                spine_steered=sig(1), c_flows_placed=sig(32), c_perfect_placements=sig(32),
                accounting_error=sig(1))


def ring_job_flows():
    """Leaf 0's first 8 ring connections (epoch 0): their CRC-32 hashes, and the paths ECMP
    gives them on 8 uplinks."""
    conns = fc.ring_connections(0, PATHS, 1, 0)
    hashes = [ecmp.flow_hash(c.flow) for c in conns]
    return hashes, [ecmp.select_path(h, PATHS) for h in hashes]


def run_placement(backend, vectors):
    got = drive(backend, declared_placement, placement_ports(), PLACE_IN, vectors, JOBS=JOBS)
    ref = dcl.DeclaredPlacementModel(PATHS, JOBS).run(vectors)
    for k, (g, r) in enumerate(zip(got, ref)):
        assert g == r, f"cycle {k}"
    return got


JOB = 7


def flow_vectors(hashes, **extra):
    """Job 7's flows one a cycle; the connections carry no rate of their own (flow_gbps 0)."""
    return [dict(dict(decl_valid=0, flow_start=1, flow_job=JOB, flow_hash=h, flow_gbps=0, load_aware_enable=1),
                 **extra) for h in hashes]


def test_declaration_changes_the_placement(backend):
    """Eight ring connections of one job, the same hashes in both runs.  Undeclared, each
    takes its hash's path (four share uplink 6) and is placed at the 0 Gb/s it claims -- the
    selector cannot even see them.  Declared (ring, 8 flows at 100 Gb/s), each is placed
    load-aware at 100: one per uplink, every placement perfect, and the uplinks carry exactly
    what the job declared.  A ninth flow of the job is beyond its declaration: flagged, hashed.
    After the phase ends the job's flows are undeclared again."""
    hashes, ecmp_paths = ring_job_flows()
    counts = Counter(ecmp_paths)
    assert counts.most_common(1) == [(6, 4)] and len(counts) == 5       # what ECMP does to them
    idle = dict(decl_valid=0, flow_start=0)

    # without a declaration
    got = run_placement(backend, flow_vectors(hashes) + [idle])
    assert [g["chosen_path"] for g in got[:-1]] == ecmp_paths
    assert not any(g["placed_load_aware"] or g["flow_declared"] for g in got)
    assert unpack(got[-1]["path_load_gbps"], PATHS) == [0] * PATHS
    assert (got[-1]["c_undeclared_flows"], got[-1]["c_declared_flows"]) == (8, 0)

    # with it
    decl = dcl.start(JOB, DECL_KIND_RING, participants=1024, flows=8, rate_gbps=100, bytes_per_step=7_812_500)
    extra_hash = ecmp.flow_hash(fc.ring_connections(1, PATHS, 1, 0)[0].flow)
    vectors = [dict(decl_valid=1, decl_word=decl.encode()), idle] + flow_vectors(hashes) + [idle] + \
        flow_vectors([extra_hash]) + [dict(decl_valid=1, decl_word=dcl.end(JOB).encode(), flow_start=0), idle] + \
        flow_vectors([extra_hash]) + [idle]
    got = run_placement(backend, vectors)
    placed = got[2:10]
    assert sorted(g["chosen_path"] for g in placed) == list(range(PATHS))
    assert all(g["placed_load_aware"] and g["place_gbps"] == 100 for g in placed)
    after = got[10]
    assert unpack(after["path_load_gbps"], PATHS) == [100] * PATHS
    assert after["c_perfect_placements"] == after["c_flows_placed"] == 8
    # measured (what the uplinks carry) against declared (what the job said it would place)
    assert after["declared_load_gbps"] == sum(unpack(after["path_load_gbps"], PATHS)) == 800
    ninth = got[11]
    assert (ninth["over_declaration"], ninth["placed_load_aware"], ninth["place_gbps"]) == (1, 0, 0)
    assert ninth["chosen_path"] == ecmp.select_path(extra_hash, PATHS)
    assert got[13]["jobs_active"] == 0 and got[13]["declared_load_gbps"] == 0
    assert (got[14]["flow_declared"], got[14]["placed_load_aware"]) == (0, 0)
    end = got[-1]
    assert (end["c_declared_flows"], end["c_over_declaration"], end["c_undeclared_flows"]) == (8, 1, 1)
    assert end["decl_error"] == 0 and end["accounting_error"] == 0


def test_ecmp_mode_overrides_a_declaration(backend):
    """load_aware_enable = 0 hashes every flow, declared or not: the fabric's mode decides."""
    hashes, ecmp_paths = ring_job_flows()
    decl = dcl.start(JOB, DECL_KIND_RING, participants=8, flows=8, rate_gbps=100)
    vectors = [dict(decl_valid=1, decl_word=decl.encode())] + flow_vectors(hashes, load_aware_enable=0)
    got = run_placement(backend, vectors + [dict(decl_valid=0, flow_start=0)])
    assert [g["chosen_path"] for g in got[1:9]] == ecmp_paths
    assert all(g["flow_declared"] and not g["placed_load_aware"] and g["place_gbps"] == 100 for g in got[1:9])


def test_declaration_and_advertisement_together(backend):
    """A declared flow's placement still counts the spines' advertisement: an advertised
    downlink load on paths 0-3 toward its destination sends the job's first four flows to
    paths 4-7."""
    hashes, _ = ring_job_flows()
    decl = dcl.start(JOB, DECL_KIND_RING, participants=8, flows=8, rate_gbps=100)
    far = pack([300] * 4 + [0] * 4)
    vectors = [dict(decl_valid=1, decl_word=decl.encode())] + flow_vectors(hashes[:4], spine_load_gbps=far)
    got = run_placement(backend, vectors + [dict(decl_valid=0, flow_start=0)])
    assert [g["chosen_path"] for g in got[1:5]] == [4, 5, 6, 7]
    assert [g["spine_steered"] for g in got[1:5]] == [1, 1, 1, 1]


# ------------------------------------------------------------------ conversion and elaboration
def test_declaration_blocks_compile_under_iverilog_2005_and_verilator_lint(compiles_everywhere):
    compiles_everywhere(collective_declaration_table, clk=sig(1), rst=_rst(), **table_ports(), JOBS=JOBS)
    ports = placement_ports(32, jobs=8)
    ports.update(chosen_path=sig(5), ending_path=sig(5))
    compiles_everywhere(declared_placement, clk=sig(1), rst=_rst(), **ports, JOBS=8)


@pytest.mark.parametrize("case", ["JOBS", "decl_word", "flow_job", "jobs_active", "place_gbps"])
def test_table_parameters_checked_at_elaboration(case):
    p, kw = table_ports(), {}
    if case == "JOBS":
        kw["JOBS"] = 0
    elif case == "decl_word":
        p["decl_word"] = sig(DECL_BITS - 1)
    elif case == "flow_job":
        p["flow_job"] = sig(8)
    elif case == "jobs_active":
        p["jobs_active"] = sig(2)                      # 2 bits cannot count 4 jobs
    else:
        p["place_gbps"], p["flow_gbps"] = sig(8), sig(8)   # a declared 16-bit rate would not fit
    with pytest.raises(ValueError, match=case):
        collective_declaration_table(sig(1), _rst(), **p, **kw)
