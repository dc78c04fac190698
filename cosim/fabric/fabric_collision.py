"""The collision story run on the fabric: ring connections hashed and placed by
the hardware, their rates set by the path loads, the ring paced by its slowest
link (hdl.fabric.collective_fabric with RATES="paths").

`collision_vectors(conns, cfg, phases)` builds the stimulus (per-cycle input
vectors, cosim.sim.vector_batch's protocol): for each phase the connections start
one per cycle (ECMP or load-aware), the ring all-reduce starts once the rates
have settled and runs for the phase's cycle budget, then every connection
ends.  The stimulus depends only on the flows: no input reacts to the design.
`run_collision(...)` runs it on MyHDL, batched Icarus or Verilator and returns
every output port at every cycle, with the index of each phase's start.
"""
from dataclasses import dataclass, field
from typing import List, Sequence

from hdl.fabric import collective_pkg as pkg

from cosim.fabric.fabric_properties import (OUTPUTS, FabricConfig, fabric_params, fabric_signals,
                                            refused_property_failures)
from cosim.sim.vector_batch import VectorBench, run_myhdl
from golden.fabric import ecmp
from golden.fabric import fabric_collision as fc
from hdl.fabric.collective_fabric import collective_fabric

SETTLE = 5          # cycles from the last flow to the ring start: hash (2), placement, share, margin


@dataclass
class Phase:
    load_aware: bool
    run_cycles: int                  # cycles the ring is given after its start
    end_flows: bool = True           # end this phase's connections afterwards
    conns: Sequence = None           # this phase's connections (default: the scenario's)
    end_first: Sequence = ()         # connection indices ended before this phase's flows start


@dataclass
class CollisionRun:
    samples: List[dict]
    starts: List[int] = field(default_factory=list)      # sample index of each phase's ring start
    placed_at: List[List[int]] = field(default_factory=list)   # per phase: sample index each flow is placed
    wall_seconds: float = 0.0
    simulator: str = ""


def collision_config(members, paths, stripes=1, participants=pkg.PARTICIPANTS, s_mb=8000, chunk=1000,
                     path_mode="mod"):
    return FabricConfig(members=members, stripes=stripes, paths=paths, participants=participants, s_mb=s_mb,
                        acc_per_leaf=members, path_mode=path_mode, rates="paths", chunk=chunk)


def collision_vectors(conns, cfg, phases):
    """(vectors, starts, placed_at) for `phases`; conns: golden.fabric.fabric_collision.Connection
    (or anything with member, stripe, flow, declared_gbps).  Sample indices follow the
    vector protocol: vector j is seen by the rising edge of cycle j + 1; a flow presented
    in vector j is placed at the edge of cycle j + 3 (hash latency 2)."""
    vectors, starts, placed_at = [], [], []
    base = dict(collective=pkg.COLL_ALLREDUCE, participants=cfg.participants, steps_per_run=100_000,
                exposed_pct=100, job_min_valid=0, snapshot=0, ring_start=0, s_flow_valid=0, flow_end=0)
    vectors.append(dict(base))
    for ph in phases:
        cs = list(ph.conns if ph.conns is not None else conns)
        for idx in ph.end_first:
            vectors.append(dict(flow_end=1, ending_conn=idx))
        if ph.end_first:
            vectors.append(dict(flow_end=0))
        vectors.append(dict(load_aware_enable=int(ph.load_aware)))
        placed = []
        for c in cs:
            t = c.flow
            placed.append(len(vectors) + 3)
            vectors.append(dict(s_flow_valid=1, s_flow_tuple=pkg.pack_tuple(t.src_ip, t.dst_ip, t.src_port,
                                                                          t.dst_port, t.proto),
                                s_flow_gbps=c.declared_gbps, s_flow_conn=c.member * cfg.stripes + c.stripe))
        vectors.append(dict(s_flow_valid=0))
        vectors += [{} for _ in range(SETTLE)]
        starts.append(len(vectors) + 1)                  # the edge that starts the ring closes cycle j + 1
        vectors.append(dict(ring_start=1))
        vectors.append(dict(ring_start=0))
        for k in range(ph.run_cycles):
            vectors.append(dict(snapshot=int(k % 16 == 15)) if k % 16 in (0, 15) else {})
        vectors.append(dict(snapshot=0))
        if ph.end_flows:
            for c in cs:
                vectors.append(dict(flow_end=1, ending_conn=c.member * cfg.stripes + c.stripe))
            vectors.append(dict(flow_end=0))
            vectors += [{} for _ in range(3)]
        placed_at.append(placed)
    return vectors, starts, placed_at


def run_collision(conns, cfg, phases, simulator="myhdl", generation="2012", edit=None):
    """Run the scenario; simulator: "myhdl", "icarus" (batched vvp) or "verilator".
    `edit(vectors, starts)`, if given, may change the vectors before the run (e.g. the
    control plane's job-minimum import)."""
    vectors, starts, placed_at = collision_vectors(conns, cfg, phases)
    if edit is not None:
        edit(vectors, starts)
    samples, wall = run_vectors(vectors, cfg, simulator, generation)
    return CollisionRun(samples, starts, placed_at, wall, simulator)


def run_vectors(vectors, cfg, simulator="myhdl", generation="2012"):
    """(samples, simulator seconds) of hdl.fabric.collective_fabric at `cfg` under `vectors`."""
    ports = fabric_signals(cfg)
    params = fabric_params(cfg)
    if simulator == "myhdl":
        res = run_myhdl(collective_fabric, vectors, outputs=list(OUTPUTS), **ports, **params)
    else:
        bench = VectorBench(collective_fabric, simulator=simulator, generation=generation,
                            max_vectors=max(1 << 12, len(vectors)), **ports, **params)
        res = bench.run(vectors)
    return res.samples, res.wall_seconds


def unpack(word, n, w=16):
    return [(word >> (w * i)) & ((1 << w) - 1) for i in range(n)]


# ---------------------------------------------------------------- scenarios shared by tests and report
ONE_COLLISION_CHUNK = 1000        # units per link per step: 10 cycles at 100 Gb/s
SMALL_N = 8                       # ring participants of the small runs: 14 steps


def one_collision(members=8, paths=8, chunk=ONE_COLLISION_CHUNK):
    """(epoch, leaf, connections): the first epoch and leaf whose first `members` ring
    links, hashed (CRC-32) onto `paths` uplinks, collide exactly once -- one uplink
    carries two links, every other link has an uplink of its own."""
    want = sorted([0] * (paths - members + 1) + [1] * (members - 2) + [2])
    for epoch in range(64):
        for leaf in range(32):
            conns = fc.ring_connections(leaf, members, 1, epoch)
            pred = fc.predict(conns, members, paths, False, chunk, SMALL_N, 1)
            if sorted(pred.paths_of.count(p) for p in range(paths)) == want:
                return epoch, leaf, tuple(conns)
    raise ValueError("no epoch in 0..63 with exactly one collision")


def tuple_on_path(flow, path, paths):
    """`flow` with the first RoCEv2 source port (from its own) that CRC-32 hashes onto `path`."""
    for k in range(1 << 14):
        port = 0xC000 | ((flow.src_port + k) & 0x3FFF)
        t = ecmp.FlowTuple(flow.src_ip, flow.dst_ip, port, flow.dst_port, flow.proto)
        if fc.hash_path(t, paths) == path:
            return t
    raise ValueError(f"no RoCEv2 source port hashes onto path {path}")


@dataclass
class RefusedRun:
    run: CollisionRun
    before: object           # golden prediction before the rebalance
    after: object            # and after
    failures: List[int]      # sample cycles where the refused property fails


def refused_property_scenario(simulator="icarus", chunk=ONE_COLLISION_CHUNK):
    """Section 4's counterexample, co-simulated: six ring links in pairs on three
    uplinks (all at 50 Gb/s); a rebalancer moves links 4 and 5 to idle uplinks and link
    2 onto uplink 0.  More uplinks carry traffic and the aggregate rises, but uplink 0
    now carries three links and every ring step is longer."""
    base = fc.ring_connections(0, 6, 1, 0)
    on = lambda c, p: fc.Connection(c.member, c.stripe, tuple_on_path(c.flow, p, 6), c.declared_gbps)
    pairs = [on(c, p) for c, p in zip(base, (0, 0, 1, 1, 2, 2))]
    moved = [on(base[2], 0), on(base[4], 3), on(base[5], 4)]
    after = [pairs[0], pairs[1], moved[0], pairs[3], moved[1], moved[2]]
    before_pred = fc.predict(pairs, 6, 6, False, chunk, SMALL_N, 1)
    after_pred = fc.predict(after, 6, 6, False, chunk, SMALL_N, 1)
    steps = 2 * (SMALL_N - 1)
    phases = [Phase(False, steps * before_pred.step_cycles + 4, end_flows=False, conns=pairs),
              Phase(False, steps * after_pred.step_cycles + 4, conns=moved, end_first=(2, 4, 5))]
    cfg = collision_config(6, 6, participants=SMALL_N, s_mb=1, chunk=chunk)
    run = run_collision(base, cfg, phases, simulator)
    return RefusedRun(run, before_pred, after_pred, refused_property_failures(run.samples))
