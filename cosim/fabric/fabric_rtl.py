"""The fabric report's RTL figures, from our own blocks.

Every number here is produced by co-simulating a block of hdl/ (converted to
Verilog, run in a batched simulator through cosim.sim.vector_batch) at the seed's
parameters, or by counting the register bits of its converted Verilog.  The seed's SystemVerilog as written is NOT simulated here; its
figures are transcribed in golden.fabric.fabric_math (seed_sv_*) and the report
shows them in their own column.

    ring_model(link_sets)       ring_allreduce_model (32 links, N = 1 024, S = 8 000 MB)
    stall(cases)                stall_accountant (1 024 accelerators, 64-bit total)
    all_to_all(cases)           all_to_all_model (32 accelerators and 32 uplinks per leaf, S = 1 024 MB)
    register_bits(name)         register bits of a fabric block at the seed's geometry
    collision(...)              the collision story (collective_fabric, RATES="paths")
"""
import os
import re
from dataclasses import dataclass

from myhdl import ResetSignal, Signal, intbv

from cosim.fabric.fabric_collision import Phase, collision_config, run_collision
from cosim.sim import toolchain
from cosim.sim.vector_batch import VectorBench
from golden.fabric import fabric_collision as fc
from hdl.fabric import collective_pkg as pkg
from hdl.fabric.all_to_all_model import all_to_all_model
from hdl.fabric.collective_conformance_monitor import collective_conformance_monitor
from hdl.fabric.collective_telemetry import collective_telemetry
from hdl.fabric.ecmp_hash_unit import ecmp_hash_unit
from hdl.fabric.load_aware_selector import load_aware_selector
from hdl.fabric.ring_allreduce_model import ring_allreduce_model
from hdl.fabric.ring_link_rates import ring_link_rates
from hdl.fabric.ring_step_engine import ring_step_engine
from hdl.fabric.slowest_member_tracker import slowest_member_tracker
from hdl.fabric.stall_accountant import stall_accountant
from hdl.fabric.striping_controller import striping_controller

MEMBERS, PATHS, STRIPES, W = 32, 32, 8, 16
N, S_MB, A2A_S_MB = pkg.PARTICIPANTS, 8000, 1024


def _sig(n):
    return Signal(bool(0)) if n == 1 else Signal(intbv(0)[n:])


def _sigs(widths, clocked=True):
    ports = {n: _sig(w) for n, w in widths.items()}
    if clocked:
        ports = dict(clk=_sig(1), rst=ResetSignal(0, active=1, isasync=False), **ports)
    return ports


# port widths of each block at the seed's geometry (the fabric's widths)
RING_PORTS = dict(start=1, step_tick=1, link_gbps=MEMBERS * W, slowest_gbps=W, pacing_member=8, step_bytes_kb=32,
                  steps_total=32, step_time_us=32, collective_time_ms=32, ideal_time_ms=32, slowdown_x100=16,
                  running=1, done=1, c_steps_done=32)
STALL_PORTS = dict(ideal_time_ms=32, actual_time_ms=32, steps_per_run=32, exposed_pct=7, collective_done=1,
                   lost_ms_per_collective=32, accel_seconds_lost=32, wall_hours_per_run=32, accel_hours_per_run=32,
                   slowdown_x100=16, c_collectives=32, c_accel_seconds_total=64)
A2A_PORTS = dict(collective=3, participants=16, flows_per_leaf_o=32, flows_per_uplink=32, efficiency_pct=8,
                 egress_mb=32, ideal_ms=32, time_ms=32, slowdown_x100=16, is_ecmp_best_case=1,
                 ring_flows_same_job=16)
TRACKER_PORTS = dict(sample=1, member_gbps=MEMBERS * W, min_gbps=W, mean_gbps=W, max_gbps=W, collective_gbps=W,
                     slowest_member=8, mean_over_min_x10=16, mean_would_overstate=1, reduction_op=2, c_samples=32,
                     c_slowest_unchanged=32)
STRIPING_PORTS = dict(chunk_start=1, chunk_bytes=32, stripe_gbps=MEMBERS * STRIPES * W, stripe_bytes=32,
                      member_gbps=MEMBERS * W, collective_gbps=W, pacing_member=8, reassembly_required=1,
                      reorder_depth_bytes=32, connections_total=16, c_chunks=32)
SELECTOR_PORTS = dict(flow_start=1, flow_hash=32, declared_gbps=W, flow_end=1, ending_path=8, ending_gbps=W,
                      load_aware_enable=1, chosen_path=8, path_load_gbps=PATHS * W, busiest_gbps=W, lightest_gbps=W,
                      imbalance_x10=16, choice_was_hash=1, c_flows_placed=32, c_perfect_placements=32,
                      sticky_preserved=1, accounting_error=1)
HASH_PORTS = dict(s_valid=1, s_tuple=pkg.TUPLE_BITS, s_user=W, m_valid=1, m_hash=32, m_path=8, m_user=W)
TELEMETRY_PORTS = dict(snapshot=1, i_local_min_gbps=W, i_local_mean_gbps=W, i_slowest_member=8,
                       i_slowest_unchanged=32, i_samples=32, i_accel_seconds_lost=32, i_flows_this_leaf=32,
                       i_busiest_uplink_flows=16, i_job_min_gbps=W, i_job_min_valid=1, i_active_fix=3,
                       i_fix_attempts=32, i_fix_successes=32, o_local_min_gbps=W, o_mean_over_min_x10=16,
                       o_slowest_member=8, o_pinned_samples_pct=16, o_imbalance_x10=16, o_accel_seconds_lost=32,
                       o_job_min_gbps=W, o_job_rate_claim=1, o_active_fix=3, o_fix_effective_pct=16, o_caveats=4,
                       o_rate_claim_valid=1)
LINK_RATES_PORTS = dict(place=1, place_conn=6, place_path=8, place_gbps=W, end_valid=1, end_conn=6,
                        path_load_gbps=PATHS * W, flow_end=1, ending_path=8, ending_gbps=W, conn_gbps=MEMBERS * W,
                        conn_path=MEMBERS * 8, conns_placed=7, table_error=1)
ENGINE_PORTS = dict(start=1, running=1, link_gbps=MEMBERS * W, step_tick=1, step_cycles=32, c_step_wait=32,
                    c_run_cycles=32)


def _bench(func, widths, simulator, clocked=True, **params):
    return VectorBench(func, simulator=simulator, **_sigs(widths, clocked), **params)


def _run(func, widths, vectors, simulator, clocked=True, **params):
    """Outputs after each vector (each vector held for one cycle, its outputs sampled at the next edge)."""
    run = _bench(func, widths, simulator, clocked, **params).run(vectors)
    return run.samples[1:]


def pack(lanes, w=W):
    return sum(v << (w * i) for i, v in enumerate(lanes))


def ring_model(link_sets, simulator="icarus"):
    """ring_allreduce_model's outputs for each set of 32 link rates."""
    vecs = [dict(link_gbps=pack(links)) for links in link_sets]
    return _run(ring_allreduce_model, RING_PORTS, vecs, simulator, PARTICIPANTS=N, S_MB=S_MB)


def stall(cases, simulator="icarus"):
    """stall_accountant's outputs for (ideal ms, actual ms, steps per run, exposed %) cases."""
    vecs = [dict(ideal_time_ms=i, actual_time_ms=a, steps_per_run=s, exposed_pct=e) for i, a, s, e in cases]
    return _run(stall_accountant, STALL_PORTS, vecs, simulator, ACCELERATORS=N)


def all_to_all(cases, simulator="icarus"):
    """all_to_all_model's outputs for (collective, participants) cases."""
    vecs = [dict(collective=c, participants=p) for c, p in cases]
    return _run(all_to_all_model, A2A_PORTS, vecs, simulator, clocked=False, S_MB=A2A_S_MB,
                ACC_PER_LEAF=pkg.ACC_PER_LEAF, UPLINKS=pkg.UPLINKS_PER_LEAF, RATE=pkg.RATE_GBPS)


# ------------------------------------------------------------------ register bits
_REG_DECL = re.compile(r"^\s*(?:output\s+)?reg\s+(?:signed\s+)?(?:\[([^:\]]+):([^\]]+)\]\s+)?(\w+)\s*(?:=[^;]*)?;", re.M)
_YOSYS_DFF = re.compile(r"^\s+\$(?:a|s|al)?dff(?:e|sr|sre)?_(\d+)\s+(\d+)\s*$")   # `stat -width` lines
_NONBLOCKING = re.compile(r"^\s*(\w+)\s*(?:\[[^\]]*\])?\s*<=", re.M)    # a statement, not a comparison


def clocked_register_bits(verilog_text):
    """Register bits of a converted design: the declared widths of every signal assigned
    in a clocked (`always @(posedge ...)`) process -- the count the seed makes of its
    always_ff targets.  (MyHDL emits non-blocking assignments only there.)"""
    widths = {}
    for hi, lo, name in _REG_DECL.findall(verilog_text):
        widths[name] = (int(eval(hi, {}, {})) - int(eval(lo, {}, {})) + 1) if hi else 1
    targets = set()
    for chunk in verilog_text.split("always @(")[1:]:
        if chunk.startswith("posedge") or chunk.startswith("negedge"):
            targets |= set(_NONBLOCKING.findall(chunk.split("endmodule")[0]))
    missing = targets - set(widths)
    if missing:
        raise ValueError(f"clocked targets without a reg declaration: {sorted(missing)}")
    return sum(widths[t] for t in targets)


def register_bits(name):
    """Register bits of block `name` at the seed's geometry, counted from its converted Verilog."""
    func, widths, clocked, params = register_blocks()[name]
    folder, module, _ = toolchain.build(func, **_sigs(widths, clocked), **params)
    with open(os.path.join(folder, module + ".v")) as fh:
        return clocked_register_bits(fh.read())


def _monitor_ports():
    """The monitor's ports by their converted names (a bus's fields as `<bus>_<field>`)."""
    return dict(tracker_member_gbps=MEMBERS * W, tracker_min_gbps=W, tracker_mean_gbps=W, tracker_collective_gbps=W,
                tracker_mean_over_min_x10=16, tracker_reduction_op=2, tracker_samples=32,
                slowest_member=8, slowest_unchanged=32,
                ring_start=1, ring_running=1, ring_steps_done=32, ring_steps_total=32, ring_step_bytes_kb=32,
                ring_step_time_us=32, ring_slowdown_x100=16,
                a2a_collective=3, a2a_participants=16, a2a_flows_per_leaf=32, a2a_efficiency_pct=8,
                flow_start=1, flow_hash=32, flow_declared_gbps=W, flow_end=1, flow_ending_path=8, flow_ending_gbps=W,
                selector_load_aware_enable=1, selector_chosen_path=8, selector_path_load_gbps=PATHS * W,
                selector_lightest_gbps=W, selector_busiest_gbps=W, selector_flows_placed=32,
                selector_perfect_placements=32, selector_sticky_preserved=1,
                striping_stripe_gbps=MEMBERS * STRIPES * W, striping_member_gbps=MEMBERS * W,
                striping_collective_gbps=W, striping_stripe_bytes=32, striping_reorder_depth_bytes=32,
                striping_reassembly_required=1, striping_connections_total=16,
                telemetry_snapshot=1, telemetry_job_min_valid=1, telemetry_local_min_gbps=W,
                telemetry_rate_claim_valid=1, telemetry_caveats=4, job_rate_claim=1, job_rate_gbps=W,
                stall_lost_ms_per_collective=32, stall_accel_seconds_lost=32, violations=34, violations_seen=34)


def register_blocks():
    """name -> (block, port widths, clocked, parameters) at the seed's geometry."""
    return {
        "slowest_member_tracker": (slowest_member_tracker, TRACKER_PORTS, True, {}),
        "ring_allreduce_model": (ring_allreduce_model, RING_PORTS, True, dict(PARTICIPANTS=N, S_MB=S_MB)),
        "stall_accountant": (stall_accountant, STALL_PORTS, True, dict(ACCELERATORS=N)),
        "all_to_all_model": (all_to_all_model, A2A_PORTS, False, {}),
        "striping_controller": (striping_controller, STRIPING_PORTS, True, {}),
        "load_aware_selector": (load_aware_selector, SELECTOR_PORTS, True, {}),
        "collective_telemetry": (collective_telemetry, TELEMETRY_PORTS, True, {}),
        "collective_conformance_monitor": (collective_conformance_monitor, _monitor_ports(), True, {}),
        "ecmp_hash_unit": (ecmp_hash_unit, HASH_PORTS, True, {}),
        "ring_link_rates": (ring_link_rates, LINK_RATES_PORTS, True, {}),
        "ring_step_engine": (ring_step_engine, ENGINE_PORTS, True, dict(MEMBERS=MEMBERS, CHUNK=1000)),
    }


# ------------------------------------------------------------------ the collision story
@dataclass
class CollisionFigures:
    conns: list
    hashed: object          # golden prediction, ECMP
    aware: object           # golden prediction, load-aware
    run: object             # CollisionRun
    steps_seen: int
    chunk: int


def collision(leaf=0, epoch=0, steps_seen=12, chunk=3300, simulator="icarus"):
    """Seed geometry: `leaf`'s 32 ring links (strided ring, `epoch`) on 32 uplinks, N = 1 024,
    S = 8 000 MB; ECMP then load-aware, the first `steps_seen` steps of each collective."""
    conns = fc.ring_connections(leaf, MEMBERS, 1, epoch)
    hashed = fc.predict(conns, MEMBERS, PATHS, False, chunk, N, S_MB)
    aware = fc.predict(conns, MEMBERS, PATHS, True, chunk, N, S_MB)
    cfg = collision_config(MEMBERS, PATHS, participants=N, s_mb=S_MB, chunk=chunk)
    phases = [Phase(False, steps_seen * hashed.step_cycles + 1), Phase(True, steps_seen * aware.step_cycles + 1)]
    run = run_collision(conns, cfg, phases, simulator)
    return CollisionFigures(conns, hashed, aware, run, steps_seen, chunk)
