"""collective_fabric: one leaf's collective blocks wired together under the
conformance monitor.

Two ways to supply the ring's link rates (parameter RATES):

* "paths" -- the chapter's collision story in hardware.  Each ring connection
  (member m, stripe s: connection m*STRIPES + s) is a flow: its 5-tuple is
  hashed by ecmp_hash_unit, load_aware_selector places it (on the hash's path,
  or on a least-loaded path), ring_link_rates pins it there and gives it its
  share of that path's load, striping_controller sums each member's stripes,
  slowest_member_tracker follows the slowest member once per ring step,
  ring_step_engine ends each step when the slowest link has delivered its chunk
  and ring_allreduce_model counts the steps and prices the collective from the
  same rates; stall_accountant turns the loss into accelerator-seconds.  Only
  flows (start, end) come from outside.
* "bench" -- every rate and the step ticks come from the ports (member_gbps,
  stripe_gbps, step_tick, sample, ending_path/ending_gbps): the hostile scenario
  of the property tests drives values no placement could produce (zeros, rates
  above line rate, a new minimum every cycle).

    flow 5-tuple -> ecmp_hash_unit -> load_aware_selector --loads--> ring_link_rates
        ring_link_rates --shares--> striping_controller --member rates--+
        member rates --> slowest_member_tracker --> collective_telemetry
                    \-> ring_step_engine --step--> ring_allreduce_model --> stall_accountant
    collective, participants -> all_to_all_model
    every block's ports ---------------------------------> collective_conformance_monitor

All widths are fixed here (rates 16 bits, counters 32, the totals 64) except the
member, stripe and path counts, which come from the buses passed in.

Ports (a bus's converted ports are `<bus>_<field>`: s_flow_valid, ring_start,
step_time_us, ...; its fields are documented in its class, hdl/fabric/fabric_buses.py):
    clk, rst                  clock; synchronous reset (ResetSignal)
    sample                    tracker sample strobe                       ("bench" only)
    member_gbps               MEMBERS x 16: the ring-link rates            ("bench" only)
    ring                      Ring: start in; running, step, steps_done out
    step                      RingStep: tick in ("bench" only); cycles, wait ("paths"), time_us out
    s_flow                    FlowStart: a flow starting (valid, 104-bit tuple, declared gbps,
                              conn: its connection index m*STRIPES + s, "paths" only); it
                              reaches the selector 2 cycles later
    flow_end                  a flow ending: its path and rate on `ending` ("bench"); in
                              "paths" its connection index ending_conn (the table supplies
                              its path and rate)
    ending                    EndingFlow: path, gbps, conn of the flow ending
    load_aware_enable         selector mode
    chunk                     Chunk: striping chunk accounting (start, bytes)
    stripe                    Stripes: MEMBERS x STRIPES x 16 stripe shares in (gbps, "bench"
                              only); the connections' rates out (rates)
    collective, participants  all_to_all_model's inputs
    steps_per_run, exposed_pct                stall_accountant's inputs
    snapshot, active_fix, busiest_uplink_flows  telemetry inputs
    job_min                   JobMinimum: the job-wide minimum imported into the telemetry
    flow_placed, chosen_path (8 bits), placed_gbps   out: a flow is placed this cycle, where,
                              with what declared rate
    accounting_error          out: the selector's sticky accounting flag (or, in "paths", the
                              link table's)
    violations, violations_seen   out: the monitor's 34 property bits
    link_gbps                 out: MEMBERS x 16: the rates the ring runs on (the tracker's input)
    conn_path                 out: MEMBERS x STRIPES x 8: each connection's path ("paths"; else 0)
    path_load_gbps            out: PATHS x 16: declared load per path (the selector's)
    slowest                   out: SlowestMember: the tracker's slowest member and how long it stayed
    collective_gbps, mean_gbps   out: the tracker's
    collective_time_ms, slowdown_x100   out: the ring model's
    accel_seconds_lost        out: the stall accountant's (for the collective's time now)
    perfect_placements        out: placements onto an empty path (the selector's)
    pinned_pct, caveats, rate_claim_valid   out: the telemetry bank's o_pinned_samples_pct,
                              o_caveats, o_rate_claim_valid
    job_rate                  out: JobRateClaim: the telemetry's o_job_rate_claim, o_job_min_gbps

Parameters:
    PATHS         uplinks (1..255)
    PARTICIPANTS, S_MB        ring model (N, buffer MB)
    A2A_S_MB, ACC_PER_LEAF    all-to-all model
    PATH_MODE     "mod" or "mulhi"
    RATES         "bench" (default) or "paths", as above
    CHUNK         ring_step_engine's units per link per step ("paths")

MyHDL flattens the hierarchy into one Verilog module, and a wire of this block
named like a process variable of a child would be shadowed inside that child's
`always` block: internal wires are named w_*.
"""
from myhdl import ConcatSignal, Signal, always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg
from hdl.fabric.all_to_all_model import all_to_all_model
from hdl.fabric.collective_conformance_monitor import N_PROPERTIES, collective_conformance_monitor
from hdl.fabric.collective_telemetry import CAVEAT_BITS, collective_telemetry
from hdl.fabric.ecmp_hash_unit import ecmp_hash_unit
from hdl.fabric.fabric_buses import W, AllToAll, Chunk, EndingFlow, FlowEvents, FlowStart, JobMinimum, JobRateClaim, \
    Placement, RateTracker, Ring, RingModel, RingStep, SlowestMember, StallCost, Stripes, Striping, TelemetryClaims
from hdl.fabric.load_aware_selector import load_aware_selector
from hdl.fabric.ring_link_rates import ring_link_rates
from hdl.fabric.ring_step_engine import ring_step_engine
from hdl.fabric.ring_allreduce_model import ring_allreduce_model
from hdl.fabric.slowest_member_tracker import slowest_member_tracker
from hdl.fabric.stall_accountant import stall_accountant
from hdl.fabric.striping_controller import striping_controller


@block
def collective_fabric(clk, rst, sample, member_gbps, ring: Ring, step: RingStep, s_flow: FlowStart, flow_end,
                      ending: EndingFlow, load_aware_enable, chunk: Chunk, stripe: Stripes, collective, participants,
                      steps_per_run, exposed_pct, snapshot, job_min: JobMinimum, active_fix, busiest_uplink_flows,
                      flow_placed, chosen_path, placed_gbps, accounting_error, violations, violations_seen,
                      link_gbps, conn_path, path_load_gbps, slowest: SlowestMember, collective_gbps, mean_gbps,
                      collective_time_ms, slowdown_x100, accel_seconds_lost, perfect_placements, pinned_pct,
                      caveats, job_rate: JobRateClaim, rate_claim_valid,
                      PATHS=pkg.UPLINKS_PER_LEAF, PARTICIPANTS=pkg.PARTICIPANTS, S_MB=8000,
                      A2A_S_MB=1024, ACC_PER_LEAF=pkg.ACC_PER_LEAF, PATH_MODE="mod", RATES="bench",
                      CHUNK=1000):
    name = "collective_fabric"
    if not 1 <= PATHS <= 255:
        raise ValueError(f"{name}: PATHS must be 1..255, got {PATHS}")
    if RATES not in ("bench", "paths"):
        raise ValueError(f"{name}: RATES={RATES!r}; choose 'bench' or 'paths'")
    PATHS_RATES = RATES == "paths"
    pkg.require_width(chosen_path, 8, name, "chosen_path")
    pkg.require_width(placed_gbps, W, name, "placed_gbps")
    M = pkg.lanes(member_gbps, W, name, "member_gbps")
    CONNS = pkg.lanes(stripe.gbps, W, name, "stripe_gbps")
    if CONNS % M:
        raise ValueError(f"{name}: stripe_gbps holds {CONNS} lanes, not a whole number per member ({M})")
    pkg.require_width(link_gbps, M * W, name, "link_gbps")
    pkg.require_width(stripe.rates, CONNS * W, name, "stripe_rates")
    pkg.require_width(conn_path, CONNS * 8, name, "conn_path")
    pkg.require_width(path_load_gbps, PATHS * W, name, "path_load_gbps")
    if PATHS_RATES:
        pkg.require_index_width(s_flow.conn, CONNS, name, "s_flow_conn")
        pkg.require_index_width(ending.conn, CONNS, name, "ending_conn")
    RATE = pkg.RATE_GBPS
    u16 = lambda: Signal(intbv(0)[W:])
    u32 = lambda: Signal(intbv(0)[32:])
    u64 = lambda: Signal(intbv(0)[64:])
    b = lambda: Signal(bool(0))
    parts = []

    # ---- flows: hash unit -> selector (-> link table in "paths") ----------------------------
    w_flow_hash, w_hash_path = u32(), Signal(intbv(0)[8:])
    w_sel_error = b()
    if PATHS_RATES:
        CW = len(s_flow.conn)
        w_s_user = ConcatSignal(s_flow.conn, s_flow.gbps)
        w_m_user = Signal(intbv(0)[CW + W:])
        w_placed_conn = Signal(intbv(0)[CW:])
        w_end, w_end_path, w_end_gbps = b(), Signal(intbv(0)[8:]), u16()
        w_conns_placed, w_table_error = Signal(intbv(0)[CONNS.bit_length() + 1:]), b()
        parts.append(ecmp_hash_unit(clk, rst, s_flow.valid, s_flow.tuple, w_s_user, flow_placed, w_flow_hash,
                                    w_hash_path, w_m_user, PATHS=PATHS, PATH_MODE=PATH_MODE))

        @always_comb
        def split_user():
            placed_gbps.next = w_m_user[W:0]
            w_placed_conn.next = w_m_user[CW + W:W]

        @always_comb
        def errors():
            accounting_error.next = w_sel_error or w_table_error

        parts += [split_user, errors]
        parts.append(ring_link_rates(clk, rst, flow_placed, w_placed_conn, chosen_path, placed_gbps, flow_end,
                                     ending.conn, path_load_gbps, w_end, w_end_path, w_end_gbps, stripe.rates,
                                     conn_path, w_conns_placed, w_table_error, RATE=RATE))
        sel_end, sel_end_path, sel_end_gbps = w_end, w_end_path, w_end_gbps
    else:
        parts.append(ecmp_hash_unit(clk, rst, s_flow.valid, s_flow.tuple, s_flow.gbps, flow_placed, w_flow_hash,
                                    w_hash_path, placed_gbps, PATHS=PATHS, PATH_MODE=PATH_MODE))
        sel_end, sel_end_path, sel_end_gbps = flow_end, ending.path, ending.gbps
    w_busiest, w_lightest, w_imbalance = u16(), u16(), u16()
    w_was_hash, w_c_placed, w_sticky = b(), u32(), b()
    parts.append(load_aware_selector(clk, rst, flow_placed, w_flow_hash, placed_gbps, sel_end, sel_end_path,
                                     sel_end_gbps, load_aware_enable, chosen_path, path_load_gbps, w_busiest,
                                     w_lightest, w_imbalance, w_was_hash, w_c_placed, perfect_placements, w_sticky,
                                     accounting_error if not PATHS_RATES else w_sel_error, PATH_MODE=PATH_MODE))

    # ---- striping: connection rates -> member rates ----------------------------------------
    w_stripe_bytes, w_depth = u32(), u32()
    w_s_coll, w_s_pacing = u16(), Signal(intbv(0)[8:])
    w_reassembly, w_conns, w_c_chunks = b(), u16(), u32()
    if PATHS_RATES:
        stripes_in, striped_members = stripe.rates, link_gbps
        rates, tracker_sample = link_gbps, ring.step
    else:
        w_s_members = Signal(intbv(0)[M * W:])
        stripes_in, striped_members = stripe.gbps, w_s_members
        rates, tracker_sample = member_gbps, sample

        @always_comb
        def bench_rates():
            link_gbps.next = member_gbps
            stripe.rates.next = stripe.gbps
            ring.step.next = step.tick

        @always_seq(clk.posedge, reset=rst)
        def bench_unused():
            conn_path.next = 0
            step.cycles.next = 0
            step.wait.next = 0

        parts += [bench_rates, bench_unused]
    parts.append(striping_controller(clk, rst, chunk.start, chunk.bytes, stripes_in, w_stripe_bytes, striped_members,
                                     w_s_coll, w_s_pacing, w_reassembly, w_depth, w_conns, w_c_chunks))

    # ---- the ring: tracker, (engine,) ring model, stall accountant --------------------------
    w_min_gbps, w_max_gbps = u16(), u16()
    # Internal outputs of combinational processes start at the value those processes give
    # for the power-up inputs (every rate 0), so that no language mode depends on whether
    # a process runs at time 0 (the ports' X-to-value events cover the rest).
    w_ratio, w_red = Signal(intbv((1 << W) - 1)[W:]), Signal(intbv(pkg.RED_MIN)[2:])
    w_overstate, w_c_samples = b(), u32()
    parts.append(slowest_member_tracker(clk, rst, tracker_sample, rates, w_min_gbps, mean_gbps, w_max_gbps,
                                        collective_gbps, slowest.member, w_ratio, w_overstate, w_red, w_c_samples,
                                        slowest.unchanged))
    if PATHS_RATES:
        w_run_cycles = u32()
        parts.append(ring_step_engine(clk, rst, ring.start, ring.running, link_gbps, ring.step, step.cycles,
                                      step.wait, w_run_cycles, MEMBERS=M, CHUNK=CHUNK))
    w_r_slowest, w_r_pacing = u16(), Signal(intbv(0)[8:])
    w_step_kb = Signal(intbv(S_MB * 1000 // PARTICIPANTS)[32:])
    w_steps_total = Signal(intbv(2 * (PARTICIPANTS - 1))[32:])
    w_ideal_ms = Signal(intbv(S_MB * 8 * 2 * (PARTICIPANTS - 1) // (PARTICIPANTS * RATE))[32:])
    w_r_done = b()
    parts.append(ring_allreduce_model(clk, rst, ring.start, ring.step, rates, w_r_slowest, w_r_pacing, w_step_kb,
                                      w_steps_total, step.time_us, collective_time_ms, w_ideal_ms, slowdown_x100,
                                      ring.running, w_r_done, ring.steps_done, PARTICIPANTS=PARTICIPANTS, S_MB=S_MB,
                                      RATE=RATE))
    w_lost_ms, w_wall_h, w_accel_h, w_s_slowdown, w_c_coll, w_c_total = u32(), u32(), u32(), u16(), u32(), u64()
    parts.append(stall_accountant(clk, rst, w_ideal_ms, collective_time_ms, steps_per_run, exposed_pct, w_r_done,
                                  w_lost_ms, accel_seconds_lost, w_wall_h, w_accel_h, w_s_slowdown, w_c_coll,
                                  w_c_total, ACCELERATORS=PARTICIPANTS))

    # ---- all-to-all, telemetry, monitor -------------------------------------------------------
    w_flows, w_fpu, w_eff = u32(), u32(), u16()
    w_egress, w_a_ideal, w_a_time, w_a_slowdown, w_best, w_ring_flows = u32(), u32(), u32(), u16(), b(), u16()
    parts.append(all_to_all_model(collective, participants, w_flows, w_fpu, w_eff, w_egress, w_a_ideal, w_a_time,
                                  w_a_slowdown, w_best, w_ring_flows, S_MB=A2A_S_MB, ACC_PER_LEAF=ACC_PER_LEAF,
                                  UPLINKS=PATHS, RATE=RATE))
    w_o_min, w_o_mom, w_o_slowest, w_o_imb = u16(), u16(), Signal(intbv(0)[8:]), u16()
    w_o_accel, w_o_fix, w_o_eff = u32(), Signal(intbv(0)[3:]), u16()
    pkg.require_width(caveats, CAVEAT_BITS, name, "caveats")
    parts.append(collective_telemetry(clk, rst, snapshot, w_min_gbps, mean_gbps, slowest.member, slowest.unchanged,
                                      w_c_samples, accel_seconds_lost, w_flows, busiest_uplink_flows, job_min.gbps,
                                      job_min.valid, active_fix, w_c_placed, perfect_placements, w_o_min, w_o_mom,
                                      w_o_slowest, pinned_pct, w_o_imb, w_o_accel, job_rate.gbps, job_rate.claim,
                                      w_o_fix, w_o_eff, caveats, rate_claim_valid, UPLINKS=PATHS))
    # the monitor watches each block through a bus of that block's signals (hdl/fabric/fabric_buses.py)
    parts.append(collective_conformance_monitor(
        clk, rst,
        RateTracker.wrap(member_gbps=rates, min_gbps=w_min_gbps, mean_gbps=mean_gbps, collective_gbps=collective_gbps,
                         mean_over_min_x10=w_ratio, reduction_op=w_red, samples=w_c_samples),
        slowest,
        RingModel.wrap(start=ring.start, running=ring.running, steps_done=ring.steps_done, steps_total=w_steps_total,
                       step_bytes_kb=w_step_kb, step_time_us=step.time_us, slowdown_x100=slowdown_x100),
        AllToAll.wrap(collective=collective, participants=participants, flows_per_leaf=w_flows, efficiency_pct=w_eff),
        FlowEvents.wrap(start=flow_placed, hash=w_flow_hash, declared_gbps=placed_gbps, end=sel_end,
                        ending_path=sel_end_path, ending_gbps=sel_end_gbps),
        Placement.wrap(load_aware_enable=load_aware_enable, chosen_path=chosen_path, path_load_gbps=path_load_gbps,
                       lightest_gbps=w_lightest, busiest_gbps=w_busiest, flows_placed=w_c_placed,
                       perfect_placements=perfect_placements, sticky_preserved=w_sticky),
        Striping.wrap(stripe_gbps=stripes_in, member_gbps=striped_members, collective_gbps=w_s_coll,
                      stripe_bytes=w_stripe_bytes, reorder_depth_bytes=w_depth, reassembly_required=w_reassembly,
                      connections_total=w_conns),
        TelemetryClaims.wrap(snapshot=snapshot, job_min_valid=job_min.valid, local_min_gbps=w_o_min,
                             rate_claim_valid=rate_claim_valid, caveats=caveats),
        job_rate,
        StallCost.wrap(lost_ms_per_collective=w_lost_ms, accel_seconds_lost=accel_seconds_lost),
        violations, violations_seen,
        PARTICIPANTS=PARTICIPANTS, S_MB=S_MB, RATE=RATE, ACC_PER_LEAF=ACC_PER_LEAF, ACCELERATORS=PARTICIPANTS,
        PATH_MODE=PATH_MODE))
    if len(violations) != N_PROPERTIES:
        raise ValueError(f"{name}: violations must be {N_PROPERTIES} bits")
    return parts
