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

Ports (inputs):
    clk, rst                  clock; synchronous reset (ResetSignal)
    sample                    tracker sample strobe                       ("bench" only)
    member_gbps               MEMBERS x 16: the ring-link rates            ("bench" only)
    ring_start                start a ring all-reduce
    step_tick                 one ring step completed                      ("bench" only)
    s_flow_valid, s_flow_tuple, s_flow_gbps   a flow starting: its 104-bit 5-tuple and
                              declared rate; it reaches the selector 2 cycles later
    s_flow_conn               its connection index (m*STRIPES + s)        ("paths" only)
    flow_end, ending_path, ending_gbps        a flow ending: its path and rate ("bench");
    ending_conn               in "paths", flow_end and the connection index ending_conn
                              (the table supplies its path and rate)
    load_aware_enable         selector mode
    chunk_start, chunk_bytes  striping chunk accounting
    stripe_gbps               MEMBERS x STRIPES x 16 stripe shares         ("bench" only)
    collective, participants  all_to_all_model's inputs
    steps_per_run, exposed_pct                stall_accountant's inputs
    snapshot, job_min_gbps, job_min_valid, active_fix, busiest_uplink_flows  telemetry
Ports (outputs):
    flow_placed, chosen_path (8 bits), placed_gbps   a flow is placed this cycle, where,
                              with what declared rate
    accounting_error          the selector's sticky accounting flag (or, in "paths", the
                              link table's)
    ring_running              the ring model is running
    violations, violations_seen   the monitor's 34 property bits
    link_gbps                 MEMBERS x 16: the rates the ring runs on (the tracker's input)
    stripe_rates              MEMBERS x STRIPES x 16: the connections' rates
    conn_path                 MEMBERS x STRIPES x 8: each connection's path ("paths"; else 0)
    path_load_gbps            PATHS x 16: declared load per path (the selector's)
    ring_step                 a ring step ends this cycle (the engine's, or step_tick)
    ring_steps_done           steps completed in the current collective
    step_cycles, step_wait    the engine's last step length and waiting link-cycles ("paths")
    slowest_member, collective_gbps, mean_gbps, slowest_unchanged   the tracker's
    step_time_us, collective_time_ms, slowdown_x100   the ring model's
    accel_seconds_lost        the stall accountant's (for the collective's time now)
    perfect_placements        placements onto an empty path (the selector's)
    pinned_pct, caveats, job_rate_claim, job_rate_gbps, rate_claim_valid   the telemetry
                              bank's o_pinned_samples_pct, o_caveats, o_job_rate_claim,
                              o_job_min_gbps, o_rate_claim_valid

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
from hdl.fabric.load_aware_selector import load_aware_selector
from hdl.fabric.ring_link_rates import ring_link_rates
from hdl.fabric.ring_step_engine import ring_step_engine
from hdl.fabric.ring_allreduce_model import ring_allreduce_model
from hdl.fabric.slowest_member_tracker import slowest_member_tracker
from hdl.fabric.stall_accountant import stall_accountant
from hdl.fabric.striping_controller import striping_controller

W = 16


@block
def collective_fabric(clk, rst, sample, member_gbps, ring_start, step_tick,
                      s_flow_valid, s_flow_tuple, s_flow_gbps, s_flow_conn, flow_end, ending_path, ending_gbps,
                      ending_conn, load_aware_enable, chunk_start, chunk_bytes, stripe_gbps, collective, participants,
                      steps_per_run, exposed_pct, snapshot, job_min_gbps, job_min_valid, active_fix,
                      busiest_uplink_flows,
                      flow_placed, chosen_path, placed_gbps, accounting_error, ring_running,
                      violations, violations_seen, link_gbps, stripe_rates, conn_path, path_load_gbps,
                      ring_step, ring_steps_done, step_cycles, step_wait, slowest_member, collective_gbps,
                      mean_gbps, slowest_unchanged, step_time_us, collective_time_ms, slowdown_x100,
                      accel_seconds_lost, perfect_placements, pinned_pct, caveats, job_rate_claim, job_rate_gbps,
                      rate_claim_valid,
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
    CONNS = pkg.lanes(stripe_gbps, W, name, "stripe_gbps")
    if CONNS % M:
        raise ValueError(f"{name}: stripe_gbps holds {CONNS} lanes, not a whole number per member ({M})")
    pkg.require_width(link_gbps, M * W, name, "link_gbps")
    pkg.require_width(stripe_rates, CONNS * W, name, "stripe_rates")
    pkg.require_width(conn_path, CONNS * 8, name, "conn_path")
    pkg.require_width(path_load_gbps, PATHS * W, name, "path_load_gbps")
    if PATHS_RATES:
        pkg.require_index_width(s_flow_conn, CONNS, name, "s_flow_conn")
        pkg.require_index_width(ending_conn, CONNS, name, "ending_conn")
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
        CW = len(s_flow_conn)
        w_s_user = ConcatSignal(s_flow_conn, s_flow_gbps)
        w_m_user = Signal(intbv(0)[CW + W:])
        w_placed_conn = Signal(intbv(0)[CW:])
        w_end, w_end_path, w_end_gbps = b(), Signal(intbv(0)[8:]), u16()
        w_conns_placed, w_table_error = Signal(intbv(0)[CONNS.bit_length() + 1:]), b()
        parts.append(ecmp_hash_unit(clk, rst, s_flow_valid, s_flow_tuple, w_s_user, flow_placed, w_flow_hash,
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
                                     ending_conn, path_load_gbps, w_end, w_end_path, w_end_gbps, stripe_rates,
                                     conn_path, w_conns_placed, w_table_error, RATE=RATE))
        sel_end, sel_end_path, sel_end_gbps = w_end, w_end_path, w_end_gbps
    else:
        parts.append(ecmp_hash_unit(clk, rst, s_flow_valid, s_flow_tuple, s_flow_gbps, flow_placed, w_flow_hash,
                                    w_hash_path, placed_gbps, PATHS=PATHS, PATH_MODE=PATH_MODE))
        sel_end, sel_end_path, sel_end_gbps = flow_end, ending_path, ending_gbps
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
        stripes_in, striped_members = stripe_rates, link_gbps
        rates, tracker_sample = link_gbps, ring_step
    else:
        w_s_members = Signal(intbv(0)[M * W:])
        stripes_in, striped_members = stripe_gbps, w_s_members
        rates, tracker_sample = member_gbps, sample

        @always_comb
        def bench_rates():
            link_gbps.next = member_gbps
            stripe_rates.next = stripe_gbps
            ring_step.next = step_tick

        @always_seq(clk.posedge, reset=rst)
        def bench_unused():
            conn_path.next = 0
            step_cycles.next = 0
            step_wait.next = 0

        parts += [bench_rates, bench_unused]
    parts.append(striping_controller(clk, rst, chunk_start, chunk_bytes, stripes_in, w_stripe_bytes, striped_members,
                                     w_s_coll, w_s_pacing, w_reassembly, w_depth, w_conns, w_c_chunks))

    # ---- the ring: tracker, (engine,) ring model, stall accountant --------------------------
    w_min_gbps, w_max_gbps = u16(), u16()
    # Internal outputs of combinational processes start at the value those processes give
    # for the power-up inputs (every rate 0), so that no language mode depends on whether
    # a process runs at time 0 (the ports' X-to-value events cover the rest).
    w_ratio, w_red = Signal(intbv((1 << W) - 1)[W:]), Signal(intbv(pkg.RED_MIN)[2:])
    w_overstate, w_c_samples = b(), u32()
    parts.append(slowest_member_tracker(clk, rst, tracker_sample, rates, w_min_gbps, mean_gbps, w_max_gbps,
                                        collective_gbps, slowest_member, w_ratio, w_overstate, w_red, w_c_samples,
                                        slowest_unchanged))
    if PATHS_RATES:
        w_run_cycles = u32()
        parts.append(ring_step_engine(clk, rst, ring_start, ring_running, link_gbps, ring_step, step_cycles,
                                      step_wait, w_run_cycles, MEMBERS=M, CHUNK=CHUNK))
    w_r_slowest, w_r_pacing = u16(), Signal(intbv(0)[8:])
    w_step_kb = Signal(intbv(S_MB * 1000 // PARTICIPANTS)[32:])
    w_steps_total = Signal(intbv(2 * (PARTICIPANTS - 1))[32:])
    w_ideal_ms = Signal(intbv(S_MB * 8 * 2 * (PARTICIPANTS - 1) // (PARTICIPANTS * RATE))[32:])
    w_r_done = b()
    parts.append(ring_allreduce_model(clk, rst, ring_start, ring_step, rates, w_r_slowest, w_r_pacing, w_step_kb,
                                      w_steps_total, step_time_us, collective_time_ms, w_ideal_ms, slowdown_x100,
                                      ring_running, w_r_done, ring_steps_done, PARTICIPANTS=PARTICIPANTS, S_MB=S_MB,
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
    parts.append(collective_telemetry(clk, rst, snapshot, w_min_gbps, mean_gbps, slowest_member, slowest_unchanged,
                                      w_c_samples, accel_seconds_lost, w_flows, busiest_uplink_flows, job_min_gbps,
                                      job_min_valid, active_fix, w_c_placed, perfect_placements, w_o_min, w_o_mom,
                                      w_o_slowest, pinned_pct, w_o_imb, w_o_accel, job_rate_gbps, job_rate_claim,
                                      w_o_fix, w_o_eff, caveats, rate_claim_valid, UPLINKS=PATHS))
    parts.append(collective_conformance_monitor(
        clk, rst, rates, w_min_gbps, mean_gbps, collective_gbps, slowest_member, w_ratio, w_red,
        ring_start, w_steps_total, w_step_kb, step_time_us, ring_steps_done, ring_running, slowdown_x100,
        collective, participants, w_flows, w_eff,
        flow_placed, w_flow_hash, placed_gbps, sel_end, sel_end_path, sel_end_gbps, load_aware_enable,
        chosen_path, path_load_gbps, w_lightest, w_busiest, w_c_placed, perfect_placements, w_sticky,
        stripes_in, striped_members, w_s_coll, w_stripe_bytes, w_depth, w_reassembly, w_conns,
        snapshot, job_min_valid, job_rate_claim, job_rate_gbps, w_o_min, rate_claim_valid, caveats, slowest_unchanged,
        w_c_samples,
        w_lost_ms, accel_seconds_lost, violations, violations_seen,
        PARTICIPANTS=PARTICIPANTS, S_MB=S_MB, RATE=RATE, ACC_PER_LEAF=ACC_PER_LEAF, ACCELERATORS=PARTICIPANTS,
        PATH_MODE=PATH_MODE))
    if len(violations) != N_PROPERTIES:
        raise ValueError(f"{name}: violations must be {N_PROPERTIES} bits")
    return parts
