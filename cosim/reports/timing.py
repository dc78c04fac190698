"""Time from logic depth: an estimated clock for a path of so many LUT levels, the line rate that
clock gives one 512-bit port, and the depth budget each phase block of the node is held to.

The delay model (UltraScale+, -2 speed grade, before place and route)
---------------------------------------------------------------------
    period = T_FIXED + levels x T_LEVEL          Fmax = 1 / period, at most FMAX_CAP

* `levels` is the LUT-level count `prism synth` reads from the mapped netlist
  (cosim/reports/synth.py, `logic_depth`: a LUT or LUT RAM read one level, a CARRY4 a quarter).
* T_LEVEL = 0.45 ns: one LUT and the net into the next.  The LUT itself is the smaller part
  (about 0.1-0.15 ns on a -2 part, AMD DS923, "Virtex UltraScale+ FPGA Data Sheet: DC and AC
  Switching Characteristics", CLB switching characteristics); AMD's UltraFast Design
  Methodology Guide (UG949, "Datapath Delay and Logic Levels") puts route delay at half of an
  UltraScale datapath or more, so a level with its net costs about three times its LUT.
* T_FIXED = 0.4 ns: the launching register's clock-to-output, the capturing register's set-up,
  clock skew and uncertainty.
* FMAX_CAP = 650 MHz: no estimate goes above what the device's clocking and block RAMs run at.

So 8 levels give 4.0 ns (250 MHz: 128 Gb/s on a 512-bit port), 6 levels 3.1 ns (322 MHz, the
CMAC's 512-bit clock for 100 GbE: 165 Gb/s).  This is an estimate from depth alone: fan-out,
congestion and placement move a routed path by tens of per cent either way.  A second opinion
from a real place-and-route tool, on another device, is `routed_fmax` below (nextpnr on a
Lattice ECP5).

Line rate: a port moves one 512-bit beat per cycle (beats per cycle 1.000 in every format, the
line-rate probe of the regression), so Gb/s per port = 512 x Fmax x beats per cycle.
"""
T_LEVEL_NS = 0.45
T_FIXED_NS = 0.4
FMAX_CAP_MHZ = 650.0
PORT_BITS = 512
BEATS_PER_CYCLE = 1.0           # measured: the regression's line-rate probe, every format, both policies

# The goal: every path at 8 levels or fewer (about 250 MHz); the stretch goal 6 (322 MHz).
DEPTH_GOAL = 8
DEPTH_STRETCH = 6

# The ceiling each phase block is held to (tests/reports/test_depth_budget.py): its depth when
# the budget was last lowered (both widths; the deeper one), so depth cannot creep back.  A
# block at the goal is held to the goal; lower an entry when a change makes its block shallower.
# Raised once, with the EXACT input (issue 35): the reader's one-lane mask of an EXACT beat (5.75 ->
# 6.75, under the goal), the result sender's header at W = 320 (51.5 -> 58.75: its exact store
# widened by the wrap count, and yosys maps the same header logic deeper beside it).  Lowered with the
# three-stage rounders (60.25 -> 32) and the sender's groups by a prefix count (58.75 -> 24.5), then
# with the rounder's FP32 magnitude taken straight from the significand (32 -> 26), and with the AUTO
# classifier's significand tests written per bit instead of through a variable mask (11.75 -> 5), and
# with the completion tracker's counts as bit planes and its FIFO written an edge later in banks (23 -> 6),
# and with the control's candidates checked in parallel and their outcomes selected late (19.5 -> 16.25,
# counted with logic_depth's fix: it had cut paths through cells that only waited on its stack), and
# with the ingress's header digest, the candidates selected by explicit multiplexers, a shifting hold
# queue and one-hot selects after the verdicts (16.25 -> 10.5), and with its checks formed a cycle ahead
# and its late outcomes selecting values formed for each case (10.5 -> 7.5; the ingress 3 -> 5 for it).
# Every other entry was then reset to its block's depth counted with the fix: the figures before it
# were lower bounds, so the rises below are corrections, not creep.  So were the composites' rises
# when black boxes came to be timed by their sub-blocks' declared paths (before, a black box was a
# zero-delay cell): the arrival banks 14 -> 16 (the read-out sums' chain through the sixteen banks),
# the read-out 7 -> 8 (into the rounder's format input); and the node's own row, the paths that
# cross from block to block, which no block's figures held: 22.  Lowered with the FP32_ARRIVAL path at 8
# levels (the arrival banks 16 -> 8, the node 22 -> 17.25), then the control's (the node 16.5).
DEPTH_BUDGET = {
    "prism_ingress": 5.0,           # 3 -> 5: the DATA digest formed at the header beat for the control
    "prism_control": 7.5,
    "prism_counters": 6.0,
    "prism_reader": 8.0,            # 6.75 was counted before logic_depth's fix
    "prism_kulisch_store": 6.25,    # 5.75 before the fix
    "prism_kulisch_route": 5.25,
    "prism_exact_operand": 3.0,
    "prism_kulisch_bank": 5.75,
    "prism_arrival_banks": 8.0,     # 6.5 before the fix; 15 -> 14; 16 with its banks timed by their paths; 8 (read-out sums OR'd, takes straight to the banks)
    "number_decoder": 5.0,
    "half_decoder": 6.25,           # 6 before the fix
    "int8_decoder": 4.0,
    "prism_fp32_bank": 7.0,
    "prism_completion": 7.5,        # 6 before the fix
    "prism_readout": 8.0,           # 7.5 before the fix, then 13.5 with it; 7 with stage A's format registered; 8 with its rounders timed
    "prism_round16": 6.5,           # 5 before the fix
    "auto_classifier": 5.0,
    "prism_result_sender": 7.0,     # 6 before the fix
    "prism_egress": 2.0,
    "prism_node": 8.0,              # paths across blocks (docs/hdl_sizes.md): 22; 17.25 with the sums OR'd; 16.5;
                                    # 10 with completion's ports registered and a reader whose ready is an enable;
                                    # 8 with the readies high while nothing is offered (the enables as they are)
}
# blocks yosys maps in seconds, resynthesised against their budget in the default test run (every
# block's committed figures are checked there too; every block is resynthesised in the slow set,
# prism_arrival_banks among them: 20 s of yosys and a GiB, 37 s of a cold run beside the other
# worker; prism_reader 16 s)
QUICK_BLOCKS = ("prism_egress",)


def period_ns(levels):
    """Estimated clock period of a path of `levels` LUT levels."""
    if levels < 0:
        raise ValueError(f"a path has no negative depth ({levels})")
    return T_FIXED_NS + levels * T_LEVEL_NS


def fmax_mhz(levels):
    """Estimated Fmax (MHz) of a block whose deepest path is `levels` LUT levels."""
    return min(FMAX_CAP_MHZ, 1000.0 / period_ns(levels))


def port_gbps(mhz, beats_per_cycle=BEATS_PER_CYCLE):
    """Gb/s one 512-bit port moves at `mhz` and `beats_per_cycle`."""
    return PORT_BITS * mhz * beats_per_cycle / 1000.0


def over_budget(block, levels):
    """A one-line complaint when `block`'s depth is over its budget, else None."""
    budget = DEPTH_BUDGET.get(block)
    if budget is None:
        return f"{block}: no depth budget (add it to DEPTH_BUDGET)"
    if levels > budget:
        return (f"{block}: {levels:g} LUT levels, over its budget of {budget:g} "
                f"(goal {DEPTH_GOAL}): the change made its deepest path longer")
    return None
