"""collective_fabric: one leaf's collective blocks wired together under the
conformance monitor -- the unit the property tests co-simulate.

    member_gbps --> slowest_member_tracker --+--> collective_telemetry
                \-> ring_allreduce_model ----+--> stall_accountant
    flow 5-tuple -> ecmp_hash_unit -> load_aware_selector (hash fallback)
    stripe_gbps --> striping_controller
    collective, participants -> all_to_all_model
    every block's ports ----------------------> collective_conformance_monitor

All widths are fixed here (rates 16 bits, counters 32, the totals 64) except the
member, stripe and path counts, which come from the buses passed in.

Ports:
    clk, rst                  clock; synchronous reset (ResetSignal)
    sample                    tracker sample strobe
    member_gbps               MEMBERS x 16: this leaf's ring-link rates
    ring_start, step_tick     start a ring all-reduce; one ring step completed
    s_flow_valid, s_flow_tuple, s_flow_gbps   a flow starting: its 104-bit 5-tuple and
                              declared rate; it reaches the selector 2 cycles later
    flow_end, ending_path, ending_gbps        a flow ending: its path and declared rate
    load_aware_enable         selector mode
    chunk_start, chunk_bytes, stripe_gbps     striping (stripe_gbps: MEMBERS x STRIPES x 16)
    collective, participants  all_to_all_model's inputs
    steps_per_run, exposed_pct                stall_accountant's inputs
    snapshot, job_min_gbps, job_min_valid, active_fix, busiest_uplink_flows  telemetry
    flow_placed (out)         a flow is placed this cycle ...
    chosen_path (out)         ... on this path (8 bits) ...
    placed_gbps (out)         ... with this declared rate
    accounting_error (out)    the selector's sticky accounting flag
    ring_running (out)        the ring model is running
    violations, violations_seen (out)   the monitor's 34 property bits

Parameters:
    PATHS         uplinks (1..255)
    PARTICIPANTS, S_MB        ring model (N, buffer MB)
    A2A_S_MB, ACC_PER_LEAF    all-to-all model
    PATH_MODE     "mod" or "mulhi"
    FAULT         test only: "" or a property id (A1 ... F5); injects that
                  property's fault into the block that owns it
"""
from myhdl import Signal, block, intbv

from hdl import collective_pkg as pkg
from hdl.all_to_all_model import FAULTS as A2A_FAULTS, all_to_all_model
from hdl.collective_conformance_monitor import N_PROPERTIES, collective_conformance_monitor
from hdl.collective_telemetry import CAVEAT_BITS, FAULTS as TEL_FAULTS, collective_telemetry
from hdl.ecmp_hash_unit import ecmp_hash_unit
from hdl.load_aware_selector import FAULTS as SEL_FAULTS, load_aware_selector
from hdl.ring_allreduce_model import FAULTS as RING_FAULTS, ring_allreduce_model
from hdl.slowest_member_tracker import FAULTS as TRK_FAULTS, slowest_member_tracker
from hdl.stall_accountant import FAULTS as STALL_FAULTS, stall_accountant
from hdl.striping_controller import FAULTS as STRIPE_FAULTS, striping_controller

W = 16
FAULT_OWNERS = {}
for _owner, _faults in (("tracker", TRK_FAULTS), ("ring", RING_FAULTS), ("a2a", A2A_FAULTS),
                        ("selector", SEL_FAULTS), ("striping", STRIPE_FAULTS), ("telemetry", TEL_FAULTS),
                        ("stall", STALL_FAULTS)):
    for _f in _faults:
        FAULT_OWNERS[_f] = _owner


@block
def collective_fabric(clk, rst, sample, member_gbps, ring_start, step_tick,
                      s_flow_valid, s_flow_tuple, s_flow_gbps, flow_end, ending_path, ending_gbps,
                      load_aware_enable, chunk_start, chunk_bytes, stripe_gbps, collective, participants,
                      steps_per_run, exposed_pct, snapshot, job_min_gbps, job_min_valid, active_fix,
                      busiest_uplink_flows,
                      flow_placed, chosen_path, placed_gbps, accounting_error, ring_running,
                      violations, violations_seen,
                      PATHS=pkg.UPLINKS_PER_LEAF, PARTICIPANTS=pkg.PARTICIPANTS, S_MB=8000,
                      A2A_S_MB=1024, ACC_PER_LEAF=pkg.ACC_PER_LEAF, PATH_MODE="mod", FAULT=""):
    name = "collective_fabric"
    if FAULT and FAULT not in FAULT_OWNERS:
        raise ValueError(f"{name}: FAULT={FAULT!r} is not a property id with a test fault")
    if not 1 <= PATHS <= 255:
        raise ValueError(f"{name}: PATHS must be 1..255, got {PATHS}")
    pkg.require_width(chosen_path, 8, name, "chosen_path")
    pkg.require_width(placed_gbps, W, name, "placed_gbps")
    owner = FAULT_OWNERS.get(FAULT, "")
    fault = lambda who: FAULT if owner == who else ""
    M = pkg.lanes(member_gbps, W, name, "member_gbps")
    RATE = pkg.RATE_GBPS
    u16 = lambda: Signal(intbv(0)[W:])
    u32 = lambda: Signal(intbv(0)[32:])
    u64 = lambda: Signal(intbv(0)[64:])
    b = lambda: Signal(bool(0))

    # tracker  (internal wires are named w_*: MyHDL flattens the hierarchy, and a
    # wire named like a block's process variable would be shadowed inside it)
    w_min_gbps, w_mean_gbps, w_max_gbps, w_coll_gbps = u16(), u16(), u16(), u16()
    w_slowest, w_ratio, w_red = Signal(intbv(0)[8:]), u16(), Signal(intbv(0)[2:])
    w_overstate, w_c_samples, w_c_unchanged = b(), u32(), u32()
    trk = slowest_member_tracker(clk, rst, sample, member_gbps, w_min_gbps, w_mean_gbps, w_max_gbps, w_coll_gbps,
                                 w_slowest, w_ratio, w_overstate, w_red, w_c_samples, w_c_unchanged, FAULT=fault("tracker"))
    # ring
    w_r_slowest, w_r_pacing = u16(), Signal(intbv(0)[8:])
    w_step_kb, w_steps_total, w_step_us, w_coll_ms, w_ideal_ms, w_r_slowdown = u32(), u32(), u32(), u32(), u32(), u16()
    w_r_done, w_c_steps = b(), u32()
    ring = ring_allreduce_model(clk, rst, ring_start, step_tick, member_gbps, w_r_slowest, w_r_pacing, w_step_kb,
                                w_steps_total, w_step_us, w_coll_ms, w_ideal_ms, w_r_slowdown, ring_running, w_r_done,
                                w_c_steps, PARTICIPANTS=PARTICIPANTS, S_MB=S_MB, RATE=RATE, FAULT=fault("ring"))
    # stall accountant
    w_lost_ms, w_accel_s, w_wall_h, w_accel_h, w_s_slowdown, w_c_coll, w_c_total = u32(), u32(), u32(), u32(), u16(), u32(), u64()
    stall = stall_accountant(clk, rst, w_ideal_ms, w_coll_ms, steps_per_run, exposed_pct, w_r_done, w_lost_ms, w_accel_s,
                             w_wall_h, w_accel_h, w_s_slowdown, w_c_coll, w_c_total, ACCELERATORS=PARTICIPANTS,
                             FAULT=fault("stall"))
    # hash unit -> selector
    w_flow_hash = u32()
    w_hash_path = Signal(intbv(0)[8:])
    hu = ecmp_hash_unit(clk, rst, s_flow_valid, s_flow_tuple, s_flow_gbps, flow_placed, w_flow_hash, w_hash_path,
                        placed_gbps, PATHS=PATHS, PATH_MODE=PATH_MODE)
    w_path_loads = Signal(intbv(0)[PATHS * W:])
    w_busiest, w_lightest, w_imbalance = u16(), u16(), u16()
    w_was_hash, w_c_placed, w_c_perfect, w_sticky = b(), u32(), u32(), b()
    sel = load_aware_selector(clk, rst, flow_placed, w_flow_hash, placed_gbps, flow_end, ending_path, ending_gbps,
                              load_aware_enable, chosen_path, w_path_loads, w_busiest, w_lightest, w_imbalance, w_was_hash,
                              w_c_placed, w_c_perfect, w_sticky, accounting_error, PATH_MODE=PATH_MODE,
                              FAULT=fault("selector"))
    # striping
    w_s_members = Signal(intbv(0)[M * W:])
    w_stripe_bytes, w_depth = u32(), u32()
    w_s_coll, w_s_pacing = u16(), Signal(intbv(0)[8:])
    w_reassembly, w_conns, w_c_chunks = b(), u16(), u32()
    stp = striping_controller(clk, rst, chunk_start, chunk_bytes, stripe_gbps, w_stripe_bytes, w_s_members, w_s_coll,
                              w_s_pacing, w_reassembly, w_depth, w_conns, w_c_chunks, FAULT=fault("striping"))
    # all-to-all
    w_flows, w_fpu, w_eff = u32(), u32(), u16()
    w_egress, w_a_ideal, w_a_time, w_a_slowdown, w_best, w_ring_flows = u32(), u32(), u32(), u16(), b(), u16()
    a2a = all_to_all_model(collective, participants, w_flows, w_fpu, w_eff, w_egress, w_a_ideal, w_a_time, w_a_slowdown, w_best,
                           w_ring_flows, S_MB=A2A_S_MB, ACC_PER_LEAF=ACC_PER_LEAF, UPLINKS=PATHS, RATE=RATE,
                           FAULT=fault("a2a"))
    # telemetry
    w_o_min, w_o_mom, w_o_slowest, w_o_pinned, w_o_imb = u16(), u16(), Signal(intbv(0)[8:]), u16(), u16()
    w_o_accel, w_o_job, w_o_claim, w_o_fix, w_o_eff = u32(), u16(), b(), Signal(intbv(0)[3:]), u16()
    w_o_caveats, w_o_valid = Signal(intbv(0)[CAVEAT_BITS:]), b()
    tel = collective_telemetry(clk, rst, snapshot, w_min_gbps, w_mean_gbps, w_slowest, w_c_unchanged, w_c_samples, w_accel_s,
                               w_flows, busiest_uplink_flows, job_min_gbps, job_min_valid, active_fix, w_c_placed,
                               w_c_perfect, w_o_min, w_o_mom, w_o_slowest, w_o_pinned, w_o_imb, w_o_accel, w_o_job, w_o_claim,
                               w_o_fix, w_o_eff, w_o_caveats, w_o_valid, UPLINKS=PATHS, FAULT=fault("telemetry"))
    mon = collective_conformance_monitor(
        clk, rst, member_gbps, w_min_gbps, w_mean_gbps, w_coll_gbps, w_slowest, w_ratio, w_red,
        ring_start, w_steps_total, w_step_kb, w_step_us, w_c_steps, ring_running, w_r_slowdown,
        collective, participants, w_flows, w_eff,
        flow_placed, w_flow_hash, placed_gbps, flow_end, ending_path, ending_gbps, load_aware_enable,
        chosen_path, w_path_loads, w_lightest, w_busiest, w_c_placed, w_c_perfect, w_sticky,
        stripe_gbps, w_s_members, w_s_coll, w_stripe_bytes, w_depth, w_reassembly, w_conns,
        snapshot, job_min_valid, w_o_claim, w_o_job, w_o_min, w_o_valid, w_o_caveats, w_c_unchanged, w_c_samples,
        w_lost_ms, w_accel_s, violations, violations_seen,
        PARTICIPANTS=PARTICIPANTS, S_MB=S_MB, RATE=RATE, ACC_PER_LEAF=ACC_PER_LEAF, ACCELERATORS=PARTICIPANTS,
        PATH_MODE=PATH_MODE)
    if len(violations) != N_PROPERTIES:
        raise ValueError(f"{name}: violations must be {N_PROPERTIES} bits")
    return trk, ring, stall, hu, sel, stp, a2a, tel, mon
