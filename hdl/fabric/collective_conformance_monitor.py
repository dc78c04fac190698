"""collective_conformance_monitor: the 34 properties of a leaf carrying a
collective (groups A to F of docs/fabric_hdl.md), checked at every clock edge.

Each property is one bit of `violations`: bit k is 1 in the cycle after an
edge at which property k failed (the checks use the values sampled at the
edge, as a concurrent assertion does; `|=>` properties compare with the
previous edge's values).  `violations_seen` is the sticky OR since reset.
Reset disables every check and clears the history (SystemVerilog's
`disable iff (rst)`).  Bit order: A1..A6 = 0..5, B1..B6 = 6..11,
C1..C6 = 12..17, D1..D6 = 18..23, E1..E5 = 24..28, F1..F5 = 29..33
(cosim.fabric.fabric_properties.PROPERTIES holds the table).

Every property holds while the fabric delivers 28 % of line rate; none says the
collective is fast, because nothing in a switch promises that.

Ports: one bus per block watched (hdl/fabric/fabric_buses.py documents every field; a
bus's converted ports are `<bus>_<field>`), all inputs but the two results; widths come
from the signals, W = len(tracker.min_gbps).  [properties reading it]
    clk, rst        clock; synchronous reset (ResetSignal)
    tracker         RateTracker: slowest_member_tracker's input rates (MEMBERS x W) and its
                    min, mean, collective rate, mean/min ratio, operator, samples  [A, B3, B6, F4]
    slowest         SlowestMember: the tracker's slowest member and for how many samples it
                    stayed the same  [A4, F4]
    ring            RingModel: ring_allreduce_model's start, running, steps done and total,
                    step size and time, slowdown  [B]
    a2a             AllToAll: all_to_all_model's collective, participants, flows per leaf,
                    efficiency  [C1, C2, C5, C6]
    flow            FlowEvents: the flows load_aware_selector places and releases (start,
                    hash, declared rate; end, the ending flow's path and rate)  [C3, C4, D]
    selector        Placement: the selector's mode and outputs (chosen path, path loads
                    PATHS x W, lightest, busiest, placements, perfect placements, sticky
                    flag)  [C3, C4, D]
    striping        Striping: striping_controller's input stripe rates (MEMBERS' x STRIPES x W)
                    and its member rates (MEMBERS' x W), collective rate, stripe bytes,
                    reorder depth, reassembly flag, connections  [E]
    telemetry       TelemetryClaims: collective_telemetry's snapshot strobe, the import
                    entering it (job_min_valid) and what it registers (local minimum,
                    rate_claim_valid, caveats)  [F1-F4]
    job_rate        JobRateClaim: the telemetry's claim of the job's rate, and that rate  [F1, F2]
    stall           StallCost: stall_accountant's lost ms and accelerator-seconds per
                    collective  [F5]
    violations (out), violations_seen (out)   34 bits each

Parameters (must match the design's): PARTICIPANTS, S_MB, RATE, ACC_PER_LEAF
(all_to_all_model's), ACCELERATORS (stall_accountant's), PATH_MODE.

Where the seed's statement needed tightening to be checkable (docs/fabric_hdl.md):
A3 is checked against every member each cycle; B5's antecedent excludes a new
start; B6 assumes no member above RATE; C5 compares consecutive samples; C4 also
checks the behaviour (loads change only at a flow start or end), not just the
flag; D1 computes the lightest path from the load bus itself; D3/D6 compare the
loaded path with the previous edge and exclude a start and an end on the same
path in one cycle; D4 holds while every placement so far was load-aware; D6
states the clamp (load = max(0, load - ending rate)); F1..F4 compare the
telemetry's registered outputs with the inputs latched at the same snapshot.
A property whose path index is outside the set is vacuous: the range is C3's.
"""
from myhdl import Signal, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg
from hdl.fabric.fabric_buses import AllToAll, FlowEvents, JobRateClaim, Placement, RateTracker, RingModel, \
    SlowestMember, StallCost, Striping, TelemetryClaims

N_PROPERTIES = 34


@block
def collective_conformance_monitor(
        clk, rst, tracker: RateTracker, slowest: SlowestMember, ring: RingModel, a2a: AllToAll,
        flow: FlowEvents, selector: Placement, striping: Striping, telemetry: TelemetryClaims,
        job_rate: JobRateClaim, stall: StallCost, violations, violations_seen,
        PARTICIPANTS=pkg.PARTICIPANTS, S_MB=8000, RATE=pkg.RATE_GBPS, ACC_PER_LEAF=pkg.ACC_PER_LEAF,
        ACCELERATORS=pkg.PARTICIPANTS, PATH_MODE="mod"):
    name = "collective_conformance_monitor"
    if PATH_MODE not in pkg.PATH_MODES:
        raise ValueError(f"{name}: PATH_MODE={PATH_MODE!r}; choose one of {', '.join(pkg.PATH_MODES)}")
    if PARTICIPANTS < 2 or S_MB < 1 or RATE < 1 or ACC_PER_LEAF < 1 or ACCELERATORS < 1:
        raise ValueError(f"{name}: PARTICIPANTS >= 2 and S_MB, RATE, ACC_PER_LEAF, ACCELERATORS >= 1")
    pkg.require_width(violations, N_PROPERTIES, name, "violations")
    pkg.require_width(violations_seen, N_PROPERTIES, name, "violations_seen")
    W = len(tracker.min_gbps)
    M = pkg.lanes(tracker.member_gbps, W, name, "tracker_member_gbps")
    PATHS = pkg.lanes(selector.path_load_gbps, W, name, "selector_path_load_gbps")
    SM = pkg.lanes(striping.member_gbps, W, name, "striping_member_gbps")
    STRIPES = pkg.lanes(striping.stripe_gbps, len(striping.member_gbps), name, "striping_stripe_gbps")
    STEPS = 2 * (PARTICIPANTS - 1)
    STEP_KB = S_MB * 1000 // PARTICIPANTS
    RED_MIN = pkg.RED_MIN
    ALLREDUCE, ALLTOALL = pkg.COLL_ALLREDUCE, pkg.COLL_ALLTOALL
    MULHI = PATH_MODE == "mulhi"
    POW2 = PATHS & (PATHS - 1) == 0
    PATH_MASK = PATHS - 1
    CONNS = SM * STRIPES
    GAPS = STRIPES - 1
    MBUS, PBUS = len(tracker.member_gbps), len(selector.path_load_gbps)
    SBUS, SMBUS = len(striping.stripe_gbps), len(striping.member_gbps)
    LANE_MAX = (1 << W) - 1
    STEP_T_MAX = (1 << len(ring.step_time_us)) - 1
    FLOWS_MAX = (1 << len(a2a.flows_per_leaf)) - 1
    DEPTH_MAX = (1 << len(striping.reorder_depth_bytes)) - 1
    ACCEL_MAX = (1 << len(stall.accel_seconds_lost)) - 1
    IW = max(len(slowest.member), len(selector.chosen_path), len(flow.ending_path), M.bit_length(),
             PATHS.bit_length()) + 1
    WIDE = max(len(ring.step_bytes_kb) + 4, len(a2a.participants) + ACC_PER_LEAF.bit_length() + 2,
               len(striping.stripe_bytes) + STRIPES.bit_length() + 1,
               len(stall.lost_ms_per_collective) + ACCELERATORS.bit_length() + 1, 32 + PATHS.bit_length() + 1,
               len(slowest.unchanged) + 2, W + 8)
    UW = max(len(slowest.unchanged), len(tracker.samples)) + 2
    SSUM_W = W + STRIPES.bit_length() + 1

    prev_loads = Signal(intbv(0)[PBUS:])
    prev_valid = Signal(bool(0))          # the previous edge was out of reset
    prev_b5 = Signal(bool(0))             # steps_done >= steps_total and no start
    prev_quiet = Signal(bool(0))          # no flow start and no flow end
    prev_place = Signal(bool(0))          # D3 antecedent
    prev_chosen = Signal(intbv(0)[IW:])
    prev_declared = Signal(intbv(0)[W:])
    prev_end = Signal(bool(0))            # D6 antecedent
    prev_other_end = Signal(bool(0))      # a flow end on another path (D3's exclusion)
    prev_ending = Signal(intbv(0)[IW:])
    prev_ending_gbps = Signal(intbv(0)[W:])
    prev_flows = Signal(intbv(0)[len(a2a.flows_per_leaf):])
    prev_eff = Signal(intbv(0)[len(a2a.efficiency_pct):])
    all_load_aware = Signal(bool(1))
    snap_valid = Signal(bool(0))          # job_min_valid at the last snapshot
    snap_pinned = Signal(bool(0))         # 2 x unchanged > samples at the last snapshot

    @always_seq(clk.posedge, reset=rst)
    def check():
        v = intbv(0)[N_PROPERTIES:]
        rest = intbv(0)[MBUS:]
        prest = intbv(0)[PBUS:]
        qrest = intbv(0)[PBUS:]
        srest = intbv(0)[SBUS:]
        smrest = intbv(0)[SMBUS:]
        lane = intbv(0)[W:]
        plane = intbv(0)[W:]
        at_slowest = intbv(0)[W:]
        link_min = intbv(0)[W:]
        load_min = intbv(0)[W:]
        load_chosen = intbv(0)[W:]
        ssum = intbv(0)[SSUM_W:]
        smin = intbv(0)[W:]
        x = intbv(0)[WIDE:]
        u = intbv(0)[UW:]
        hp = intbv(0)[WIDE:]
        ok = intbv(0)[1:]
        v[:] = 0

        # ---- A: the reduction operator ----
        if tracker.collective_gbps != tracker.min_gbps:
            v[0] = 1                                   # A1
        if tracker.min_gbps > tracker.mean_gbps:
            v[1] = 1                                   # A2
        rest[:] = tracker.member_gbps
        at_slowest[:] = 0
        ok[:] = 0
        link_min[:] = LANE_MAX
        for i in range(M):
            lane[:] = rest[W:0]
            rest[:] = rest >> W
            if lane < link_min:
                link_min[:] = lane
            if tracker.min_gbps > lane:
                v[2] = 1                               # A3
            if slowest.member == i:
                at_slowest[:] = lane
                ok[:] = 1
        if not ok or at_slowest != tracker.min_gbps:
            v[3] = 1                                   # A4
        if tracker.reduction_op != RED_MIN:
            v[4] = 1                                   # A5
        if tracker.mean_over_min_x10 < 10:
            v[5] = 1                                   # A6

        # ---- B: the ring's structure ----
        if ring.steps_total != STEPS:
            v[6] = 1                                   # B1
        if ring.step_bytes_kb != STEP_KB:
            v[7] = 1                                   # B2
        # B3 and B6 take the minimum from the links themselves, not from the tracker's
        # min_gbps, so a broken tracker shows as A-group failures only.
        if link_min != 0:
            x[:] = ring.step_bytes_kb * 8
            x[:] = x // link_min
            if x > STEP_T_MAX:
                x[:] = STEP_T_MAX
            if ring.step_time_us != x:
                v[8] = 1                               # B3
        if ring.steps_done > ring.steps_total:
            v[9] = 1                                   # B4
        if prev_valid and prev_b5 and ring.running:
            v[10] = 1                                  # B5
        if link_min <= RATE and ring.slowdown_x100 < 100:
            v[11] = 1                                  # B6

        # ---- C: flows and paths ----
        if a2a.collective == ALLREDUCE and a2a.flows_per_leaf != ACC_PER_LEAF:
            v[12] = 1                                  # C1
        if a2a.collective == ALLTOALL:
            if a2a.participants < 1:
                x[:] = 0
            else:
                x[:] = (a2a.participants - 1) * ACC_PER_LEAF
            if x > FLOWS_MAX:
                x[:] = FLOWS_MAX
            if a2a.flows_per_leaf != x:
                v[13] = 1                              # C2
        if flow.start and selector.chosen_path >= PATHS:
            v[14] = 1                                  # C3
        if not selector.sticky_preserved or \
                (prev_valid and prev_quiet and selector.path_load_gbps != prev_loads):
            v[15] = 1                                  # C4
        if prev_valid:
            if a2a.flows_per_leaf > prev_flows and a2a.efficiency_pct < prev_eff:
                v[16] = 1                              # C5
            if a2a.flows_per_leaf < prev_flows and a2a.efficiency_pct > prev_eff:
                v[16] = 1                              # C5
        if a2a.efficiency_pct > 100:
            v[17] = 1                                  # C6

        # ---- D: load-aware selection ----
        prest[:] = selector.path_load_gbps
        qrest[:] = prev_loads
        load_min[:] = LANE_MAX
        load_chosen[:] = 0
        for p in range(PATHS):
            lane[:] = prest[W:0]
            prest[:] = prest >> W
            plane[:] = qrest[W:0]
            qrest[:] = qrest >> W
            if lane < load_min:
                load_min[:] = lane
            if selector.chosen_path == p:
                load_chosen[:] = lane
            if prev_valid and prev_place:
                if prev_chosen == p:
                    x[:] = plane + prev_declared
                    if x > LANE_MAX:
                        x[:] = LANE_MAX
                    if lane != x:
                        v[20] = 1                      # D3: the chosen path rose by the rate
                elif not (prev_other_end and prev_ending == p) and lane != plane:
                    v[20] = 1                          # D3: and no other path moved
            if prev_valid and prev_end and prev_ending == p:
                if plane >= prev_ending_gbps:
                    x[:] = plane - prev_ending_gbps
                else:
                    x[:] = 0
                if lane != x:
                    v[23] = 1                          # D6
        if flow.start and selector.load_aware_enable and selector.chosen_path < PATHS \
                and load_chosen != load_min:
            v[18] = 1                                  # D1
        if flow.start and not selector.load_aware_enable:
            if MULHI:
                hp[:] = flow.hash * PATHS
                hp[:] = hp >> 32
            elif POW2:
                hp[:] = flow.hash & PATH_MASK
            else:
                hp[:] = flow.hash % PATHS
            if selector.chosen_path != hp:
                v[19] = 1                              # D2
        if all_load_aware and selector.load_aware_enable and selector.flows_placed <= PATHS \
                and selector.perfect_placements != selector.flows_placed:
            v[21] = 1                                  # D4
        if selector.lightest_gbps > selector.busiest_gbps:
            v[22] = 1                                  # D5

        # ---- E: striping ----
        srest[:] = striping.stripe_gbps
        smrest[:] = striping.member_gbps
        smin[:] = LANE_MAX
        for m in range(SM):
            ssum[:] = 0
            for s in range(STRIPES):
                ssum[:] = ssum + srest[W:0]
                srest[:] = srest >> W
            if ssum > LANE_MAX:
                ssum[:] = LANE_MAX
            lane[:] = smrest[W:0]
            smrest[:] = smrest >> W
            if lane != ssum:
                v[24] = 1                              # E1
            if lane < smin:
                smin[:] = lane
        if striping.collective_gbps != smin:
            v[25] = 1                                  # E2
        if STRIPES > 1 and not striping.reassembly_required:
            v[26] = 1                                  # E3
        x[:] = striping.stripe_bytes * GAPS
        if x > DEPTH_MAX:
            x[:] = DEPTH_MAX
        if striping.reorder_depth_bytes != x:
            v[27] = 1                                  # E4
        if striping.connections_total != CONNS:
            v[28] = 1                                  # E5

        # ---- F: the claim ----
        if job_rate.claim and not snap_valid:
            v[29] = 1                                  # F1
        if job_rate.claim and job_rate.gbps > telemetry.local_min_gbps:
            v[30] = 1                                  # F2
        if telemetry.rate_claim_valid != snap_valid:
            v[31] = 1                                  # F3
        if snap_pinned and not telemetry.caveats[1]:
            v[32] = 1                                  # F4
        x[:] = stall.lost_ms_per_collective * ACCELERATORS
        x[:] = x // 1000
        if x > ACCEL_MAX:
            x[:] = ACCEL_MAX
        if stall.accel_seconds_lost != x:
            v[33] = 1                                  # F5

        violations.next = v
        violations_seen.next = violations_seen | v

        # ---- history for the next edge ----
        prev_valid.next = 1
        prev_loads.next = selector.path_load_gbps
        prev_b5.next = ring.steps_done >= ring.steps_total and not ring.start
        prev_quiet.next = not flow.start and not flow.end
        prev_place.next = flow.start and selector.chosen_path < PATHS and \
            not (flow.end and flow.ending_path == selector.chosen_path)
        prev_chosen.next = selector.chosen_path
        prev_declared.next = flow.declared_gbps
        prev_end.next = flow.end and flow.ending_path < PATHS and \
            not (flow.start and selector.chosen_path == flow.ending_path)
        prev_other_end.next = flow.end
        prev_ending.next = flow.ending_path
        prev_ending_gbps.next = flow.ending_gbps
        prev_flows.next = a2a.flows_per_leaf
        prev_eff.next = a2a.efficiency_pct
        if flow.start and not selector.load_aware_enable:
            all_load_aware.next = 0
        if telemetry.snapshot:
            snap_valid.next = telemetry.job_min_valid
            u[:] = slowest.unchanged * 2
            snap_pinned.next = tracker.samples != 0 and u > tracker.samples

    return check
