"""The collective fabric's 34 properties (groups A-F) and the test bench that
checks them every cycle on either back end.

`PROPERTIES` is the table: id (as in the seed), bit in the conformance
monitor's `violations` vector, the statement as checked, and the block whose
test fault (cosim/fabric/faults.py, named by the id) breaks it.
`run_fabric(backend, fault, ...)` drives
`hdl.fabric.collective_fabric` (every collective block plus
`collective_conformance_monitor`) with a deterministic random scenario built
to exercise every property's antecedent, samples `violations` at every rising
edge, and returns a `FabricRun` with the first cycle each property fired.

Only the fabric's top-level ports are used, so the same bench runs the MyHDL
blocks and their Icarus co-simulation; a faulted fabric exists only as Verilog
and runs on the co-simulation.
"""
import random
from dataclasses import dataclass, field

from myhdl import ResetSignal, Signal, StopSimulation, block, instance, intbv

from cosim.fabric.faults import FABRIC_FAULTS
from cosim.sim import toolchain
from cosim.sim.faults import with_fault
from cosim.sim.tbutil import clock_gen, reset_pulse
from cosim.sim.vector_batch import VectorBench
from hdl.common.wiring import bundle
from hdl.fabric import collective_pkg as pkg
from hdl.fabric.collective_fabric import collective_fabric

W = 16

# (id, statement as checked); the block each property's test fault breaks, and how, are the
# fault's (cosim/fabric/faults.py)
_TABLE = [
    ("A1", "collective_gbps == min_gbps (the collective's rate is the minimum)"),
    ("A2", "min_gbps <= mean_gbps"),
    ("A3", "min_gbps <= member_gbps[i] for every member i"),
    ("A4", "slowest_member names a member and member_gbps[slowest_member] == min_gbps"),
    ("A5", "the declared reduction operator (reduction_op) is RED_MIN"),
    ("A6", "mean_over_min_x10 >= 10"),
    ("B1", "steps_total == 2 (N - 1)"),
    ("B2", "step_bytes_kb == floor(S_MB x 1000 / N)"),
    ("B3", "min over links != 0 -> step_time_us == floor(step_bytes_kb x 8 / min over links)"),
    ("B4", "c_steps_done <= steps_total"),
    ("B5", "(c_steps_done >= steps_total && !start) |=> !running"),
    ("B6", "min over links <= RATE -> slowdown_x100 >= 100"),
    ("C1", "collective == ALLREDUCE -> flows_per_leaf == ACC_PER_LEAF"),
    ("C2", "collective == ALLTOALL -> flows_per_leaf == ACC_PER_LEAF x (N - 1)"),
    ("C3", "flow_start -> chosen_path < PATHS"),
    ("C4", "sticky_preserved, and (no flow start or end) |=> path loads unchanged"),
    ("C5", "efficiency_pct is monotone in flows_per_leaf across consecutive samples"),
    ("C6", "efficiency_pct <= 100"),
    ("D1", "flow_start && load_aware_enable -> load[chosen_path] == min over paths of load"),
    ("D2", "flow_start && !load_aware_enable -> chosen_path == select_path(flow_hash, PATHS, PATH_MODE)"),
    ("D3", "flow_start |=> load[chosen] == sat(past load[chosen] + declared), no other path moved "
           "(a flow end on another path excepted)"),
    ("D4", "every placement load-aware && c_flows_placed <= PATHS -> c_perfect_placements == c_flows_placed"),
    ("D5", "lightest_gbps <= busiest_gbps"),
    ("D6", "flow_end |=> load[ending_path] == max(0, past load - ending_gbps) (never wraps below zero)"),
    ("E1", "member_gbps[m] == sat(sum of member m's stripes)"),
    ("E2", "collective_gbps == min over members of member_gbps"),
    ("E3", "STRIPES > 1 -> reassembly_required"),
    ("E4", "reorder_depth_bytes == stripe_bytes x (STRIPES - 1)"),
    ("E5", "connections_total == MEMBERS x STRIPES"),
    ("F1", "job_rate_claim -> the job-wide minimum was imported (valid at the snapshot)"),
    ("F2", "job_rate_claim -> claimed job rate <= this leaf's minimum"),
    ("F3", "rate_claim_valid == job_min_valid (at the snapshot)"),
    ("F4", "2 x c_slowest_unchanged > c_samples (at the snapshot) -> caveat PINNED"),
    ("F5", "accel_seconds_lost == floor(lost_ms_per_collective x ACCELERATORS / 1000)"),
]


# The seed's own statement of each property (Section 20).
_SEED_FORMS = {
    "A1": "collective_gbps == min_gbps", "A2": "min_gbps <= mean_gbps", "A3": "min_gbps <= member_gbps[member_idx]",
    "A4": "member_gbps[slowest_member] == min_gbps", "A5": "COLLECTIVE_REDUCTION == RED_MIN",
    "A6": "mean_over_min_x10 >= 10", "B1": "steps_total == 2(N-1)", "B2": "step_bytes_kb == (S_MB*1024)/N",
    "B3": "min_gbps != 0 |-> step_time_us == step_bytes_kb*8/min_gbps", "B4": "c_steps_done <= steps_total",
    "B5": "c_steps_done >= steps_total |=> !running", "B6": "slowdown_x100 >= 100",
    "C1": "coll == ALLREDUCE |-> flows_per_leaf_o == ACC_PER_LEAF",
    "C2": "coll == ALLTOALL |-> flows_per_leaf_o == ACC_PER_LEAF*(N-1)",
    "C3": "flow_start |-> chosen_path < UPLINKS_PER_LEAF", "C4": "sticky_preserved",
    "C5": "flows_a > flows_b |-> eff(flows_a) >= eff(flows_b)", "C6": "eff(flows_a) <= 100",
    "D1": "flow_start && load_aware_enable |-> path_load_at_choice == lightest_gbps",
    "D2": "flow_start && !load_aware_enable |-> chosen_path == flow_hash % UPLINKS",
    "D3": "flow_start |=> load[$past(chosen)] == $past(load) + $past(declared)",
    "D4": "load_aware_enable && c_flows_placed <= UPLINKS |-> c_perfect == c_flows_placed",
    "D5": "lightest_gbps <= busiest_gbps", "D6": "flow_end |=> load[$past(ending_path)] >= 0",
    "E1": "member_gbps[m] == stripe_sum(m)", "E2": "collective_gbps == min_over_members()",
    "E3": "STRIPES > 1 |-> reassembly_required", "E4": "reorder_depth_bytes == stripe_bytes*(STRIPES-1)",
    "E5": "connections_total == MEMBERS*STRIPES", "F1": "claim_job_rate |-> job_min_valid",
    "F2": "claim_job_rate |-> job_min_gbps <= min_gbps", "F3": "rate_claim_valid == job_min_valid",
    "F4": "c_slowest_unchanged*2 > c_steps_done |-> caveat_pinned",
    "F5": "accel_seconds_lost == lost_ms*PARTICIPANTS/1000",
}


@dataclass(frozen=True)
class Property:
    id: str
    bit: int
    statement: str          # as the monitor checks it
    fault_block: str        # the block whose test fault <id> breaks it
    fault: str = ""         # what that fault does
    seed_form: str = ""     # the seed's Section 20 statement

    @property
    def tests(self):
        return (f"test_fabric_properties.py::test_fault_fires_exactly_its_property[{self.id}] "
                "(Icarus co-simulation, batched Icarus)")


PROPERTIES = [Property(pid, bit, stmt, FABRIC_FAULTS[pid].block, FABRIC_FAULTS[pid].bug, _SEED_FORMS[pid])
              for bit, (pid, stmt) in enumerate(_TABLE)]
BY_ID = {p.id: p for p in PROPERTIES}
assert len(PROPERTIES) == 34


# The property the seed refuses (Sections 3, 4, 11, 16, 20): every design that forgets
# that a collective's rate is a MINIMUM would assert it, and every correct design
# violates it.  It is not in the monitor; `refused_property_failures` evaluates it on a
# run's outputs to show that it fails on the correct fabric.
REFUSED = Property("R", -1, "mean_gbps rises |-> collective_gbps does not fall (an improvement in the "
                            "aggregate never slows the collective)", "none: refused",
                   "none: the correct fabric violates it",
                   "not printed; Section 4: 'Section 20's refused property is exactly this observation "
                   "[improving one participant can make the collective slower] written as an assertion'")


def refused_property_failures(outputs):
    """Sample cycles at which the refused property fails, evaluated at the tracker's
    samples (the cycles a ring step ends, `ring_step`): the mean rose and the
    collective's rate (the minimum) fell since the previous sample."""
    at = [i for i, o in enumerate(outputs) if o["ring_step"]]
    return [j for i, j in zip(at, at[1:])
            if outputs[j]["mean_gbps"] > outputs[i]["mean_gbps"]
            and outputs[j]["collective_gbps"] < outputs[i]["collective_gbps"]]


def decode(bits):
    """Property ids whose bit is set in a violations word."""
    return [p.id for p in PROPERTIES if (bits >> p.bit) & 1]


@dataclass
class FabricConfig:
    members: int = 6
    stripes: int = 3
    paths: int = 8
    participants: int = 16          # ring: 30 steps
    s_mb: int = 8000
    a2a_s_mb: int = 1024
    acc_per_leaf: int = 8
    path_mode: str = "mod"
    rates: str = "bench"            # hdl.fabric.collective_fabric's RATES
    chunk: int = 1000               # ring_step_engine's CHUNK ("paths")
    cycles: int = 260
    seed: int = 1


@dataclass
class FabricRun:
    first_cycle: dict = field(default_factory=dict)   # property id -> first cycle it fired
    counts: dict = field(default_factory=dict)        # property id -> cycles it fired
    seen: list = field(default_factory=list)          # violations_seen at the end, decoded
    placements: int = 0
    flow_ends: int = 0
    ring_runs: int = 0
    inputs: list = field(default_factory=list)        # per cycle: every input port's value
    outputs: list = field(default_factory=list)       # per cycle: every output port's value
    simulator: str = "myhdl"

    @property
    def fired(self):
        return set(self.first_cycle)

    def tally(self):
        """first_cycle / counts / seen from the per-cycle outputs."""
        self.first_cycle, self.counts = {}, {}
        for cyc, out in enumerate(self.outputs):
            for pid in decode(out["violations"]):
                self.first_cycle.setdefault(pid, cyc)
                self.counts[pid] = self.counts.get(pid, 0) + 1
        self.seen = decode(self.outputs[-1]["violations_seen"]) if self.outputs else []
        return self


# The fabric's ports (hdl.fabric.collective_fabric).
INPUTS = ("sample", "member_gbps", "ring_start", "step_tick", "s_flow_valid", "s_flow_tuple", "s_flow_gbps",
          "s_flow_conn", "flow_end", "ending_path", "ending_gbps", "ending_conn", "load_aware_enable",
          "chunk_start", "chunk_bytes", "stripe_gbps", "collective", "participants", "steps_per_run",
          "exposed_pct", "snapshot", "job_min_gbps", "job_min_valid", "active_fix", "busiest_uplink_flows")
OUTPUTS = ("flow_placed", "chosen_path", "placed_gbps", "accounting_error", "ring_running", "violations",
           "violations_seen", "link_gbps", "stripe_rates", "conn_path", "path_load_gbps", "ring_step",
           "ring_steps_done", "step_cycles", "step_wait", "slowest_member", "collective_gbps", "mean_gbps",
           "slowest_unchanged", "step_time_us", "collective_time_ms", "slowdown_x100", "accel_seconds_lost",
           "perfect_placements", "pinned_pct", "caveats", "job_rate_claim", "job_rate_gbps", "rate_claim_valid")
CONN_BITS = 12


def fabric_signals(cfg):
    """{port name: Signal} for hdl.fabric.collective_fabric at configuration `cfg`."""
    M, S, P = cfg.members, cfg.stripes, cfg.paths
    sig = lambda n: Signal(bool(0)) if n == 1 else Signal(intbv(0)[n:])
    widths = dict(sample=1, member_gbps=M * W, ring_start=1, step_tick=1, s_flow_valid=1,
                  s_flow_tuple=pkg.TUPLE_BITS, s_flow_gbps=W, s_flow_conn=CONN_BITS, flow_end=1, ending_path=8,
                  ending_gbps=W, ending_conn=CONN_BITS, load_aware_enable=1, chunk_start=1, chunk_bytes=32,
                  stripe_gbps=M * S * W, collective=3, participants=16, steps_per_run=32, exposed_pct=7, snapshot=1,
                  job_min_gbps=W, job_min_valid=1, active_fix=3, busiest_uplink_flows=16, flow_placed=1,
                  chosen_path=8, placed_gbps=W, accounting_error=1, ring_running=1, violations=34,
                  violations_seen=34, link_gbps=M * W, stripe_rates=M * S * W, conn_path=M * S * 8,
                  path_load_gbps=P * W, ring_step=1, ring_steps_done=32, step_cycles=32, step_wait=32,
                  slowest_member=8, collective_gbps=W, mean_gbps=W, slowest_unchanged=32, step_time_us=32,
                  collective_time_ms=32, slowdown_x100=16, accel_seconds_lost=32, perfect_placements=32,
                  pinned_pct=16, caveats=4, job_rate_claim=1, job_rate_gbps=W, rate_claim_valid=1)
    ports = dict(clk=sig(1), rst=ResetSignal(0, active=1, isasync=False))
    ports.update({n: sig(widths[n]) for n in INPUTS + OUTPUTS})
    return ports


def fabric_params(cfg):
    return dict(PATHS=cfg.paths, PARTICIPANTS=cfg.participants, S_MB=cfg.s_mb, A2A_S_MB=cfg.a2a_s_mb,
                ACC_PER_LEAF=cfg.acc_per_leaf, PATH_MODE=cfg.path_mode, RATES=cfg.rates, CHUNK=cfg.chunk)


def replay_batched(run, fault="", cfg=None, simulator="icarus", generation="2012"):
    """Replay a run's per-cycle inputs on the converted fabric (with test fault `fault`, a
    property id; '' = the correct design) in a batched simulator (cosim.sim.vector_batch);
    returns a FabricRun of the batched outputs."""
    cfg = cfg or FabricConfig()
    bench = VectorBench(collective_fabric_block(fault), simulator=simulator, generation=generation,
                        max_vectors=max(1024, len(run.inputs)), **fabric_signals(cfg), **fabric_params(cfg))
    res = bench.run(run.inputs[1:])
    out = FabricRun(inputs=run.inputs, outputs=res.samples, simulator=simulator)
    return out.tally()


def collective_fabric_block(fault=""):
    """collective_fabric, broken by the test fault of property `fault` ('' = none)."""
    return with_fault(collective_fabric, FABRIC_FAULTS[fault] if fault else None)


# participant counts chosen so all-to-all flows per uplink (ACC=PATHS=8: N-1) cross every bucket
_PARTICIPANT_MENU = (0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 20, 21, 22, 50, 100, 101, 102, 150, 1024, 3000, 65535)


def run_fabric(backend="myhdl", fault="", cfg=None):
    """Run the scenario on `backend` with the test fault of property `fault` ('' = the correct
    design; a fault runs on 'icarus' only, it exists only as Verilog).  The returned FabricRun
    holds every input and output port's value at every cycle, so the run can be replayed in a
    batched simulator (`replay_batched`)."""
    cfg = cfg or FabricConfig()
    rng = random.Random(cfg.seed)
    M, S, P = cfg.members, cfg.stripes, cfg.paths
    ports = fabric_signals(cfg)
    clk, rst = ports["clk"], ports["rst"]
    sample, member_gbps, ring_start, step_tick = (ports[n] for n in ("sample", "member_gbps", "ring_start", "step_tick"))
    s_flow_valid, s_flow_tuple, s_flow_gbps = (ports[n] for n in ("s_flow_valid", "s_flow_tuple", "s_flow_gbps"))
    flow_end, ending_path, ending_gbps, load_aware_enable = (ports[n] for n in (
        "flow_end", "ending_path", "ending_gbps", "load_aware_enable"))
    chunk_start, chunk_bytes, stripe_gbps = (ports[n] for n in ("chunk_start", "chunk_bytes", "stripe_gbps"))
    collective, participants, steps_per_run, exposed_pct = (ports[n] for n in (
        "collective", "participants", "steps_per_run", "exposed_pct"))
    snapshot, job_min_gbps, job_min_valid, active_fix, busiest_uplink_flows = (ports[n] for n in (
        "snapshot", "job_min_gbps", "job_min_valid", "active_fix", "busiest_uplink_flows"))
    flow_placed, chosen_path, placed_gbps, ring_running = (ports[n] for n in (
        "flow_placed", "chosen_path", "placed_gbps", "ring_running"))
    run = FabricRun()
    active = []            # (path, rate) of flows the design reported placed
    dut_factory = toolchain.select(collective_fabric_block(fault), backend)

    def pack(lanes):
        return sum(v << (W * i) for i, v in enumerate(lanes))

    @block
    def bench():
        dut = dut_factory(**bundle(collective_fabric, ports), **fabric_params(cfg))

        @instance
        def drive():
            yield rst.negedge
            pinned = [20, 60, 45, 80, 55, 70, 90, 65, 75, 85, 95, 35][:M] + [50] * max(0, M - 12)
            idle_until = 0
            for cyc in range(cfg.cycles):
                yield clk.negedge
                if cyc == 0:
                    steps_per_run.next = 100_000
                    exposed_pct.next = 100
                early = cyc < 60
                # members: pinned (member 0 slowest, constant) early, then random, a zero now and then
                if early:
                    lanes = pinned
                else:
                    lanes = [rng.randint(1, pkg.RATE_GBPS) for _ in range(M)]
                    if cyc % 37 == 0:
                        lanes[rng.randrange(M)] = 0
                    if cyc % 11 == 0:
                        lanes[0] = min(lanes) - 1 if min(lanes) > 1 else lanes[0]
                member_gbps.next = pack(lanes)
                sample.next = 1
                # ring: restart when idle; occasionally restart a running collective
                ring_start.next = 0
                if ring_running:
                    idle_until = cyc + 3             # rest a few cycles after each collective
                if not ring_running and cyc >= idle_until and rng.random() < 0.5:
                    ring_start.next = 1
                    run.ring_runs += 1
                    idle_until = cyc + 3
                elif ring_running and rng.random() < 0.01:
                    ring_start.next = 1
                step_tick.next = rng.random() < 0.8
                # flows: load-aware while the first PATHS flows are placed, then phases
                load_aware_enable.next = early or (110 <= cyc < 170) or cyc >= 215
                s_flow_valid.next = 0
                if rng.random() < 0.4:
                    s_flow_valid.next = 1
                    s_flow_tuple.next = rng.getrandbits(pkg.TUPLE_BITS)
                    s_flow_gbps.next = rng.randint(1, 100)
                flow_end.next = 0
                if not early and active and rng.random() < 0.3:
                    path, rate = active.pop(rng.randrange(len(active)))
                    flow_end.next, ending_path.next, ending_gbps.next = 1, path, rate
                    run.flow_ends += 1
                elif cyc in (125, 200):           # an over-removal: D6's clamp
                    flow_end.next, ending_path.next, ending_gbps.next = 1, rng.randrange(P), 1000
                # striping
                stripe_gbps.next = pack([rng.randint(0, 100) for _ in range(M * S)])
                chunk_start.next = rng.random() < 0.3
                chunk_bytes.next = rng.getrandbits(rng.choice((8, 20, 31)))
                # all-to-all model
                if 60 <= cyc < 140:                   # a sweep: all-to-all flows rise through the buckets
                    collective.next = pkg.COLL_ALLTOALL
                    participants.next = cyc - 58
                elif cyc % 3 == 0:
                    collective.next = rng.choice((3, 3, 3, 1, 1, 0, 2, 4, 7))
                    participants.next = rng.choice(_PARTICIPANT_MENU)
                # stall accountant
                if cyc % 17 == 0:
                    exposed_pct.next = rng.choice((100, 100, 40, 0, 120))
                # telemetry: imports valid half the time, stale (above the local minimum) a fifth
                snapshot.next = cyc == 40 or rng.random() < 0.15
                job_min_valid.next = rng.random() < 0.5
                lo = min(lanes)
                job_min_gbps.next = rng.randint(lo, lo + 40) if rng.random() < 0.2 else rng.randint(0, lo)
                active_fix.next = rng.randrange(6)
                busiest_uplink_flows.next = rng.randrange(64)
            raise StopSimulation()

        @instance
        def observe():
            while True:
                yield clk.posedge
                if rst:
                    continue
                if flow_placed:
                    active.append((int(chosen_path), int(placed_gbps)))
                    run.placements += 1
                run.inputs.append({n: int(ports[n]) for n in INPUTS})
                run.outputs.append({n: int(ports[n]) for n in OUTPUTS})

        return dut, clock_gen(clk), reset_pulse(clk, rst), drive, observe

    toolchain.run(bench(), backend=backend)
    run.simulator = backend
    return run.tally()


# The seed's Section 21 ("Fifty-eight scenarios.  Group 2's need a chain rather than a
# stream, and group 6's need more than one leaf.") names groups 1-3 with their counts and
# breaks off there; it lists no individual scenario.  Groups 4-6 (30 scenarios) are
# unnamed; we take them in the order of the chapter's property groups D-F, group 6 being
# the one that needs more than one leaf (the job-rate claim).
SCENARIO_GROUPS = [
    ("1", "the reduction operator", "8",
     "test_collective_blocks.py::test_tracker_matches_reference (min, mean, max, slowest, ratio, pinned counter; "
     "both back ends); properties A1-A6 and their broken variants (test_fabric_properties.py); the tracker following "
     "the slowest member at every ring step (test_fabric_collision.py); the refused property failing on the correct "
     "fabric (test_fabric_collision.py::test_refused_property_fails_on_the_correct_fabric)"),
    ("2", "the ring, which needs a chain", "10",
     "ring_step_engine is the chain: a step ends when the slowest link has delivered "
     "(test_ring_link_blocks.py::test_step_engine_*); the whole ring paced cycle by cycle by one collision, then "
     "by none (test_fabric_collision.py::test_one_collision_makes_every_step_of_the_ring_longer, seed geometry: "
     "::test_seed_geometry_one_leaf_32_ring_links_on_32_uplinks); test_collective_blocks.py::test_ring_model_*; "
     "B1-B6 and their broken variants"),
    ("3", "flow counts and efficiency", "10",
     "test_collective_blocks.py::test_all_to_all_model_matches_package, ::test_all_to_all_reproduces_seed_flow_counts, "
     "::test_efficiency_lookup_is_the_rounded_balls_in_bins_curve; test_fabric_math.py (exact balls in bins, every "
     "seed figure); test_ecmp.py and the report's real-hash Monte Carlo; C1, C2, C5, C6 and their broken variants"),
    ("4", "(not named in the text) load-aware selection and paths", "30 in groups 4-6",
     "test_collective_blocks.py::test_selector_matches_reference, ::test_selector_greedy_placement_is_perfect_for_"
     "flows_up_to_paths; test_selector_vs_hash.py; the load-aware phase of the collision tests; C3, C4, D1-D6"),
    ("5", "(not named) striping", "",
     "test_collective_blocks.py::test_striping_matches_reference; "
     "test_fabric_collision.py::test_striped_ring_links_sum_their_connection_shares (stripe shares from the path "
     "loads in hardware); E1-E5"),
    ("6", "(not named) the claim -- needs more than one leaf", "",
     "test_fabric_collision.py::test_two_leaves_the_job_minimum_is_imported_not_local (two leaves, the job minimum "
     "imported from the control plane, a stale import clamped); test_collective_blocks.py::test_telemetry_matches_"
     "reference; F1-F5; the job-level minimum over 32 leaves in the report (exact)"),
]
