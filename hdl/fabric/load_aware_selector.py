"""load_aware_selector: place each flow on the least-loaded uplink at flow
start, falling back to its ECMP hash.

Stickiness is preserved: a flow's path is decided once, when it starts, and
never revisited, so nothing is reordered and the ECMP correctness argument
carries over unchanged; only the choice function differs.  The hash comes from
an ecmp_hash_unit (collective_fabric pairs them: the unit's m_hash drives
flow_hash, its m_valid drives flow_start).

Ports (W = len(busiest_gbps); widths from the signals):
    clk, rst                clock; synchronous reset (ResetSignal)
    flow_start              a flow starts this cycle and is placed on chosen_path
    flow_hash               its 32-bit ECMP hash (the fallback)
    declared_gbps           the rate it declares                               (W bits)
    flow_end                a flow ends this cycle ...
    ending_path             ... on this path ...
    ending_gbps             ... having declared this rate                      (W bits)
    load_aware_enable       choose the lightest path (else the hash's path)
    chosen_path (out)       the path a flow starting this cycle is placed on: the
                            lowest-index lightest path, or the hash's path
    path_load_gbps (out)    PATHS lanes of W bits: declared load per path (registered);
                            PATHS = len(path_load_gbps) // W
    busiest_gbps (out)      maximum path load
    lightest_gbps (out)     minimum path load
    imbalance_x10 (out)     floor(10 x busiest / lightest); all ones if lightest is 0
                            or the ratio does not fit
    choice_was_hash (out)   not load_aware_enable
    c_flows_placed (out)    flows placed (saturating)
    c_perfect_placements (out) flows placed onto an empty path (saturating)
    sticky_preserved (out)  the design's claim that no flow is ever moved: constant 1,
                            since no path here re-pins a flow (the conformance monitor
                            checks the behaviour: loads change only at start and end)
    accounting_error (out)  sticky: a flow_end asked to remove more load than its path
                            carried, named a path outside the set, or a load saturated

Parameters:
    PATH_MODE   "mod" (hash % PATHS) or "mulhi" ((hash x PATHS) >> 32), as in
                ecmp_hash_unit and golden.fabric.ecmp.select_path
    FAULT       test only: "" (correct), "C3" (publishes PATHS when the lightest
                is path PATHS-1), "C4" (after PATHS placements, idle cycles move
                1 Gb/s from the busiest to the lightest path: a re-pin), "D1" (after
                PATHS placements picks the path after the lightest), "D2" (hash
                path in the other PATH_MODE), "D3" (placement adds declared + 1),
                "D4" (placements on path 0 are not counted as perfect), "D5"
                (busiest scan broken: reads 0), "D6" (flow end wraps below zero)

Fixed from the seed's simplifications: a flow start and a flow end in the same
cycle both take effect (the seed's second non-blocking assignment discarded the
placement when they hit the same path); the ending flow's rate is its own input
(the seed subtracted the STARTING flow's declared rate); an over-removal is still
clamped at zero but now reported on accounting_error instead of hidden; loads and
counters saturate instead of wrapping.  Not fixed: two flows starting in the same
cycle are impossible here by construction (one flow_start per cycle); no hysteresis;
per-leaf only (the spine side is not visible).
"""
from myhdl import Signal, always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg

FAULTS = ("C3", "C4", "D1", "D2", "D3", "D4", "D5", "D6")


@block
def load_aware_selector(clk, rst, flow_start, flow_hash, declared_gbps, flow_end, ending_path,
                        ending_gbps, load_aware_enable, chosen_path, path_load_gbps, busiest_gbps,
                        lightest_gbps, imbalance_x10, choice_was_hash, c_flows_placed,
                        c_perfect_placements, sticky_preserved, accounting_error,
                        PATH_MODE="mod", FAULT=""):
    name = "load_aware_selector"
    pkg.check_fault(FAULT, FAULTS, name)
    if PATH_MODE not in pkg.PATH_MODES:
        raise ValueError(f"{name}: PATH_MODE={PATH_MODE!r}; choose one of {', '.join(pkg.PATH_MODES)}")
    W = len(busiest_gbps)
    PATHS = pkg.lanes(path_load_gbps, W, name, "path_load_gbps")
    for port, sig in (("lightest_gbps", lightest_gbps), ("declared_gbps", declared_gbps),
                      ("ending_gbps", ending_gbps)):
        pkg.require_width(sig, W, name, port)
    pkg.require_width(flow_hash, 32, name, "flow_hash")
    pkg.require_index_width(chosen_path, PATHS, name, "chosen_path")
    pkg.require_index_width(ending_path, PATHS, name, "ending_path")
    F_C3, F_C4, F_D1, F_D2, F_D3, F_D4, F_D5, F_D6 = (FAULT == f for f in FAULTS)
    MULHI = (PATH_MODE == "mulhi") != F_D2
    POW2 = PATHS & (PATHS - 1) == 0
    PATH_MASK = PATHS - 1
    PROD_W = 32 + PATHS.bit_length() + 1
    BUS = len(path_load_gbps)
    TOP = BUS - W
    LANE_MAX = (1 << W) - 1
    IDX_W = max(len(chosen_path), len(ending_path), PATHS.bit_length()) + 1
    CP_W = len(chosen_path)
    RATIO_W = W + 5
    RATIO_MAX = (1 << len(imbalance_x10)) - 1
    PLACED_MAX = (1 << len(c_flows_placed)) - 1
    PERFECT_MAX = (1 << len(c_perfect_placements)) - 1
    EXTRA = 1 if F_D3 else 0

    choice = Signal(intbv(0)[IDX_W:])      # the path actually loaded
    lightest_idx = Signal(intbv(0)[IDX_W:])
    busiest_idx = Signal(intbv(0)[IDX_W:])

    @always_comb
    def choose():
        rest = intbv(0)[BUS:]
        lane = intbv(0)[W:]
        lo = intbv(0)[W:]
        hi = intbv(0)[W:]
        lo_i = intbv(0)[IDX_W:]
        hi_i = intbv(0)[IDX_W:]
        prod = intbv(0)[PROD_W:]
        hp = intbv(0)[IDX_W:]
        pick = intbv(0)[IDX_W:]
        num = intbv(0)[RATIO_W:]
        rest[:] = path_load_gbps
        lo[:] = LANE_MAX
        hi[:] = 0
        lo_i[:] = 0
        hi_i[:] = 0
        for i in range(PATHS):
            lane[:] = rest[W:0]
            rest[:] = rest >> W
            if lane < lo:
                lo[:] = lane
                lo_i[:] = i
            if F_D5:
                if lane < hi:
                    hi[:] = lane
                    hi_i[:] = i
            elif lane > hi:
                hi[:] = lane
                hi_i[:] = i
        if MULHI:
            prod[:] = flow_hash * PATHS
            hp[:] = prod >> 32
        elif POW2:
            hp[:] = flow_hash & PATH_MASK
        else:
            hp[:] = flow_hash % PATHS
        if load_aware_enable:
            pick[:] = lo_i
            if F_D1 and c_flows_placed > PATHS:
                if lo_i == PATHS - 1:
                    pick[:] = 0
                else:
                    pick[:] = lo_i + 1
        else:
            pick[:] = hp
        choice.next = pick
        lightest_idx.next = lo_i
        busiest_idx.next = hi_i
        if F_C3 and load_aware_enable and pick == PATHS - 1:
            chosen_path.next = PATHS
        else:
            chosen_path.next = pick[CP_W:0]
        lightest_gbps.next = lo
        busiest_gbps.next = hi
        choice_was_hash.next = not load_aware_enable
        if lo == 0:
            imbalance_x10.next = RATIO_MAX
        else:
            num[:] = hi * 10
            num[:] = num // lo
            if num > RATIO_MAX:
                num[:] = RATIO_MAX
            imbalance_x10.next = num
        sticky_preserved.next = 1

    @always_seq(clk.posedge, reset=rst)
    def account():
        rest = intbv(0)[BUS:]
        lw = intbv(0)[BUS:]
        out = intbv(0)[BUS:]
        old = intbv(0)[W + 2:]
        new = intbv(0)[W + 2:]
        err = intbv(0)[1:]
        err[:] = 0
        rest[:] = path_load_gbps
        out[:] = 0
        for i in range(PATHS):
            old[:] = rest[W:0]
            rest[:] = rest >> W
            new[:] = old
            if flow_start and choice == i:
                new[:] = new + declared_gbps + EXTRA
                if new > LANE_MAX:
                    new[:] = LANE_MAX
                    err[:] = 1
                if old == 0 and c_perfect_placements < PERFECT_MAX and not (F_D4 and i == 0):
                    c_perfect_placements.next = c_perfect_placements + 1
            if flow_end and ending_path == i:
                if new >= ending_gbps:
                    new[:] = new - ending_gbps
                else:
                    err[:] = 1
                    if F_D6:
                        new[:] = (new + LANE_MAX + 1 - ending_gbps) & LANE_MAX
                    else:
                        new[:] = 0
            if F_C4 and not flow_start and not flow_end and c_flows_placed > PATHS \
                    and busiest_gbps > lightest_gbps + 1:
                if busiest_idx == i:
                    new[:] = new - 1
                elif lightest_idx == i:
                    new[:] = new + 1
            lw[:] = new[W:0]
            out[:] = (out >> W) | (lw << TOP)
        path_load_gbps.next = out
        if flow_end and ending_path >= PATHS:
            err[:] = 1
        if flow_start and c_flows_placed < PLACED_MAX:
            c_flows_placed.next = c_flows_placed + 1
        if err:
            accounting_error.next = 1

    return choose, account
