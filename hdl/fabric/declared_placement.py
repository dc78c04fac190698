"""declared_placement: a leaf's flow placement with the two mechanisms seed 000 §14 asks a
fabric to add -- the collectives' declarations and the spines' load advertisement.

    decl_word --> collective_declaration_table --place_gbps, place_load_aware-->
    flow (job, hash, own rate) ----------^          load_aware_selector <-- spine_load_gbps
                                                         |
                                        chosen_path, path loads, counters

The table judges each flow by the job it carries: within its job's declaration it is placed
load-aware against the declared rate; otherwise it takes its hash's path at the rate it
claims itself (collective_declaration_table's docstring has the reasons).  The selector
places it, its path cost counting the advertised load of the spine downlink toward the
flow's destination (load_aware_selector's docstring has the rule).  load_aware_enable = 0
hashes every flow (the fabric's ECMP mode), declared or not.

Ports (W = len(place_gbps); PATHS = len(path_load_gbps) // W; widths from the signals):
    clk, rst                clock; synchronous reset (ResetSignal)
    decl_valid, decl_word   a declaration word (spec.fabric.DECL_FIELDS)
    flow_start              a flow starts this cycle
    flow_job                its job id                                (DECL_WIDTHS["job"] bits)
    flow_hash               its 32-bit ECMP hash
    flow_gbps               the rate it claims itself (0 if none)          (W bits)
    flow_end, ending_path, ending_gbps   a flow ends: its path and the rate it was placed at
                            (place_gbps when it started; the caller keeps it, as
                            ring_link_rates does for collective_fabric)
    load_aware_enable       allow load-aware placement at all
    spine_load_gbps         PATHS lanes: spines' advertised downlink load toward the flow's
                            destination (zero: none heard)
    chosen_path (out)       the flow's path
    path_load_gbps (out)    PATHS lanes: declared load per uplink (registered)
    busiest_gbps, lightest_gbps (out)   the selector's
    placed_load_aware (out) this flow is placed load-aware (declared and allowed)
    place_gbps (out)        the rate it is placed at
    flow_declared, over_declaration (out)   the table's verdict on its job
    spine_steered (out)     the advertisement moved it off the leaf's own lightest uplink
    jobs_active, declared_load_gbps (out)   the table's (registered)
    c_flows_placed, c_perfect_placements (out)   the selector's counters
    c_declared_flows, c_over_declaration, c_undeclared_flows (out)   the table's counters
    decl_error (out)        sticky: a declaration word was rejected
    accounting_error (out)  sticky: the selector's accounting flag

Parameters:
    JOBS        declaration slots (collective_declaration_table)
    PATH_MODE   "mod" or "mulhi" (load_aware_selector)

golden.fabric.declaration.DeclaredPlacementModel is the bit-exact reference.  MyHDL flattens
the hierarchy into one Verilog module: internal wires are named w_* so that none shadows a
child's process variable.
"""
from myhdl import Signal, always_comb, block, intbv

from hdl.fabric.collective_declaration_table import collective_declaration_table
from hdl.fabric.load_aware_selector import load_aware_selector


@block
def declared_placement(clk, rst, decl_valid, decl_word, flow_start, flow_job, flow_hash, flow_gbps, flow_end,
                       ending_path, ending_gbps, load_aware_enable, spine_load_gbps, chosen_path, path_load_gbps,
                       busiest_gbps, lightest_gbps, placed_load_aware, place_gbps, flow_declared, over_declaration,
                       spine_steered, jobs_active, declared_load_gbps, c_flows_placed, c_perfect_placements,
                       c_declared_flows, c_over_declaration, c_undeclared_flows, decl_error, accounting_error,
                       JOBS=4, PATH_MODE="mod"):
    w_place_aware = Signal(bool(0))        # the table's verdict, before load_aware_enable
    w_imbalance = Signal(intbv(0)[16:])
    w_was_hash = Signal(bool(0))
    w_sticky = Signal(bool(1))             # the selector's constant claim (its power-up value too)
    table = collective_declaration_table(clk, rst, decl_valid, decl_word, flow_start, flow_job, flow_gbps,
                                         place_gbps, w_place_aware, flow_declared, over_declaration, jobs_active,
                                         declared_load_gbps, c_declared_flows, c_over_declaration,
                                         c_undeclared_flows, decl_error, JOBS=JOBS)

    @always_comb
    def allow():
        placed_load_aware.next = load_aware_enable and w_place_aware

    selector = load_aware_selector(clk, rst, flow_start, flow_hash, place_gbps, flow_end, ending_path, ending_gbps,
                                   placed_load_aware, chosen_path, path_load_gbps, busiest_gbps, lightest_gbps,
                                   w_imbalance, w_was_hash, c_flows_placed, c_perfect_placements, w_sticky,
                                   accounting_error, spine_load_gbps, spine_steered, PATH_MODE=PATH_MODE)
    return table, allow, selector
