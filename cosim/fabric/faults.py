"""The collective fabric's test faults: one deliberate bug per conformance property (A1 ... F5),
each an edit of collective_fabric's converted Verilog (cosim/sim/faults.py) that breaks exactly
that property in the block named.

    bench = VectorBench(with_fault(collective_fabric, FABRIC_FAULTS["B1"]), **signals, **params)

The edits are written against MyHDL's output for collective_fabric (the top of the property
bench and of the formal target): each is confined to one process, named by its block's label
(`<instance>_<process>`), and the literals the converter computed from the fabric's parameters
are derived from the same bound arguments, so a fault applies at every configuration.  A
design change that moves an anchor makes the fault fail to build (FaultAnchorError), never
pass silently; tests/sim/test_faults.py builds every fault at the bench's and the formal
target's configuration.
"""
from cosim.sim.faults import Edit, Fault
from hdl.fabric import collective_pkg as pkg
from hdl.fabric.collective_fabric import W

LANE_MAX = (1 << W) - 1

# The processes the faults edit (MyHDL labels each process's block <instance>_<process>).
TRACKER = "slowest_member_tracker0_reduce_members"
RING_MODEL = "ring_allreduce_model0_model"
RING_STEPS = "ring_allreduce_model0_steps"
ALL_TO_ALL = "all_to_all_model0_model"
CHOOSE = "load_aware_selector0_choose"
ACCOUNT = "load_aware_selector0_account"
STRIPING = "striping_controller0_combine"
TELEMETRY = "collective_telemetry0_bank"
STALL = "stall_accountant0_price"


def _bit(flag):
    return "1'b1" if flag else "1'b0"


def _step_round_robin(target, current, count, indent):
    """MyHDL's Verilog for `target = 0 if current == count - 1 else current + 1`, each line
    indented by `indent` spaces: the faults that move a choice on to the next member or path."""
    pad = " " * indent
    return (f"{pad}if (($signed({{1'b0, {current}}}) == ({count} - 1))) begin\n"
            f"{pad}    {target} = 0;\n"
            f"{pad}end\n"
            f"{pad}else begin\n"
            f"{pad}    {target} = ({current} + 1);\n"
            f"{pad}end\n")


class _Fabric:
    """collective_fabric's sizes and the ring model's constants, from its bound arguments."""

    def __init__(self, p):
        self.members = len(p["member_gbps"]) // W
        self.stripes = len(p["stripe_gbps"]) // len(p["member_gbps"])
        self.n, self.s_mb = p["PARTICIPANTS"], p["S_MB"]
        self.steps = 2 * (self.n - 1)
        self.step_kb = self.s_mb * 1000 // self.n
        self.time_num = self.s_mb * 8 * 2 * (self.n - 1)
        self.slow_num = pkg.RATE_GBPS * 100

    def q_width(self, step_kb=None):
        """Width of the ring model's quotient register: the design's, or (step_kb given) the one the
        broken ring models use, as wide as a sum of the links' rates too (so that B6's lo x 100
        wraps where it always has: the variants behave as they did as parameters of the block)."""
        widths = [self.time_num.bit_length(), (self.step_kb * 8).bit_length(), self.slow_num.bit_length()]
        if step_kb is not None:
            widths[1] = (step_kb * 8).bit_length()
            widths.append(self.sum_width())
        return max(widths) + 1

    def sum_width(self):
        """Bits of a sum over the members' rates."""
        return W + pkg.clog2(self.members) + 1


def _ring_quotient_as_built(f, step_kb):
    """The quotient register at the width the broken variant was built with (none if it is the same)."""
    now, then = f.q_width(), f.q_width(step_kb)
    if now == then:
        return ()
    return (Edit(f"    reg [{now}-1:0] q;\n", f"    reg [{then}-1:0] q;\n", within=RING_MODEL),
            Edit(f"    q = {now}'h0;\n", f"    q = {then}'h0;\n", within=RING_MODEL))


# ---- slowest_member_tracker ---------------------------------------------------------------
def _a3(p):
    f = _Fabric(p)
    return (Edit("""        total = (total + lane);
        if ((lane < lo)) begin
            lo = lane;
            idx = i;
        end
""", """        if ((i != 0)) begin
            total = (total + lane);
            if ((lane < lo)) begin
                lo = lane;
                idx = i;
            end
        end
""", within=TRACKER),
            Edit(f"mean = (total / {f.members});", f"mean = (total / {max(f.members - 1, 1)});", within=TRACKER))


def _a4(p):
    m = _Fabric(p).members
    return Edit(f"    mean = (total / {m});\n", f"    mean = (total / {m});\n" + _step_round_robin("idx", "idx", m, 4),
                within=TRACKER)


# ---- ring_allreduce_model -----------------------------------------------------------------
def _b1(p):
    f = _Fabric(p)
    return (Edit(f"ring_allreduce_model0_steps_total = {f.steps};", f"ring_allreduce_model0_steps_total = {2 * f.n};",
                 within=RING_MODEL),
            Edit(f" + 1) >= {f.steps}))", f" + 1) >= {2 * f.n}))", within=RING_STEPS))


def _b2(p):
    f = _Fabric(p)
    wrong = f.s_mb * 1000 // (f.n - 1)
    return (Edit(f"ring_allreduce_model0_step_bytes_kb = {f.step_kb};", f"ring_allreduce_model0_step_bytes_kb = {wrong};",
                 within=RING_MODEL),
            Edit(f"q = ({f.step_kb * 8} / lo);", f"q = ({wrong * 8} / lo);", within=RING_MODEL),
            *_ring_quotient_as_built(f, wrong))


def _b3(p):
    f = _Fabric(p)
    sw = f.sum_width()
    return (Edit("    integer i;\n", f"    reg [{sw}-1:0] total;\n    reg [{sw}-1:0] div;\n    integer i;\n",
                 within=RING_MODEL),
            Edit("    idx = 0;\n    for (i=0;", "    idx = 0;\n    total = 0;\n    for (i=0;", within=RING_MODEL),
            Edit("        if ((lane < lo)) begin\n", "        total = (total + lane);\n        if ((lane < lo)) begin\n",
                 within=RING_MODEL),
            Edit("    if ((lo == 0)) begin\n        step_time_us",
                 f"    div = (total / {f.members});\n    if ((div == 0)) begin\n        step_time_us", within=RING_MODEL),
            Edit(f"q = ({f.step_kb * 8} / lo);", f"q = ({f.step_kb * 8} / div);", within=RING_MODEL),
            *_ring_quotient_as_built(f, f.step_kb))


def _b4(p):
    steps = _Fabric(p).steps
    return Edit("""                ring_allreduce_model0_done <= 1;
            end
        end
""", f"""                ring_allreduce_model0_done <= 1;
            end
        end
        else if ((ring_step && (ring_steps_done == {steps}))) begin
            ring_steps_done <= (ring_steps_done + 1);
        end
""", within=RING_STEPS)


def _b5(p):
    steps = _Fabric(p).steps
    return Edit(f"""            ring_steps_done <= (ring_steps_done + 1);
            if (((ring_steps_done + 1) >= {steps})) begin
                ring_running <= 0;
                ring_allreduce_model0_done <= 1;
            end
""", f"""            if ((ring_steps_done < {steps})) begin
                ring_steps_done <= (ring_steps_done + 1);
            end
""", within=RING_STEPS)


def _b6(p):
    f = _Fabric(p)
    return (Edit(f"        q = ({f.slow_num} / lo);\n", f"        q = (lo * 100);\n        q = (q / {pkg.RATE_GBPS});\n",
                 within=RING_MODEL),
            *_ring_quotient_as_built(f, f.step_kb))


# ---- all_to_all_model ---------------------------------------------------------------------
def _c1(p):
    acc = p["ACC_PER_LEAF"]
    return Edit(f"        flows = (($signed({{1'b0, n}}) - 1) * {acc});\n    end\n",
                f"        flows = (($signed({{1'b0, n}}) - 1) * {acc});\n    end\n"
                f"    else if ((collective == {pkg.COLL_ALLREDUCE})) begin\n        flows = (2 * {acc});\n    end\n",
                within=ALL_TO_ALL)


def _c2(p):
    acc = p["ACC_PER_LEAF"]
    return Edit(f"flows = (($signed({{1'b0, n}}) - 1) * {acc});", f"flows = (n * {acc});", within=ALL_TO_ALL)


def _c5(p):
    (_, l1, l2, *_), (_, e1, e2, *_) = pkg.EFF_FPU_LIMITS, pkg.EFF_PCT
    branch = "    else if ((fpu <= {})) begin\n        eff = {};\n    end\n"
    return Edit(branch.format(l1, e1) + branch.format(l2, e2), branch.format(l1, e2) + branch.format(l2, e1),
                within=ALL_TO_ALL)


C6_TOP_ENTRY = 105


def _c6(p):
    return Edit(f"    else begin\n        eff = {pkg.EFF_PCT[-1]};\n", f"    else begin\n        eff = {C6_TOP_ENTRY};\n",
                within=ALL_TO_ALL)


# ---- load_aware_selector ------------------------------------------------------------------
def _c3(p):
    paths = p["PATHS"]
    return Edit("    chosen_path = pick[8-1:0];\n", f"""    if ((load_aware_enable && ($signed({{1'b0, pick}}) == ({paths} - 1)))) begin
        chosen_path = {paths};
    end
    else begin
        chosen_path = pick[8-1:0];
    end
""", within=CHOOSE)


def _c4(p):
    paths = p["PATHS"]
    # the index registers are as wide as the selector's others (its choice, its lightest path)
    return (Edit(r"^reg \[(\d+):0\] load_aware_selector0_choice = 0;$",
                 r"reg [\1:0] load_aware_selector0_choice = 0;\n"
                 r"reg [\1:0] load_aware_selector0_busiest_idx = 0;\n"
                 r"reg [\1:0] load_aware_selector0_lightest_idx = 0;", regex=True),
            Edit(r"^    reg \[(\d+)-1:0\] lo_i;$", r"    reg [\1-1:0] lo_i;\n    reg [\1-1:0] hi_i;", regex=True,
                 within=CHOOSE),
            Edit(r"^    lo_i = (\d+)'h0;$", r"    lo_i = \1'h0;\n    hi_i = \1'h0;", regex=True, within=CHOOSE),
            Edit("    lo_i = 0;\n", "    lo_i = 0;\n    hi_i = 0;\n", within=CHOOSE),
            Edit("            hi = lane;\n", "            hi = lane;\n            hi_i = i;\n", within=CHOOSE),
            Edit("    load_aware_selector0_choice = pick;\n", "    load_aware_selector0_choice = pick;\n"
                 "    load_aware_selector0_lightest_idx = lo_i;\n    load_aware_selector0_busiest_idx = hi_i;\n",
                 within=CHOOSE),
            Edit("            lw = new[", f"""            if (((!flow_placed) && (!flow_end) && (load_aware_selector0_c_flows_placed > {paths}) && (load_aware_selector0_busiest_gbps > (load_aware_selector0_lightest_gbps + 1)))) begin
                if (($signed({{1'b0, load_aware_selector0_busiest_idx}}) == i)) begin
                    new = (new - 1);
                end
                else if (($signed({{1'b0, load_aware_selector0_lightest_idx}}) == i)) begin
                    new = (new + 1);
                end
            end
            lw = new[""", within=ACCOUNT))


def _d1(p):
    paths = p["PATHS"]
    return (Edit("        pick = best_i;\n", "        pick = best_i;\n"
                 f"        if ((load_aware_selector0_c_flows_placed > {paths})) begin\n"
                 + _step_round_robin("pick", "best_i", paths, 12) + "        end\n", within=CHOOSE),
            # the choice now reads the placement counter: the process wakes when it changes
            Edit(rf"^always @\((.*)\) begin: {CHOOSE}$",
                 rf"always @(\1, load_aware_selector0_c_flows_placed) begin: {CHOOSE}", regex=True, within=CHOOSE))


def _d2(p):
    mulhi = p["PATH_MODE"] == "mulhi"
    return Edit(f"    if ({_bit(mulhi)}) begin\n        prod = ", f"    if ({_bit(not mulhi)}) begin\n        prod = ",
                within=CHOOSE)


# ---- striping_controller ------------------------------------------------------------------
def _e1(p):
    stripes = _Fabric(p).stripes
    return Edit(f"            acc = (acc + rest[{W}-1:0]);\n", f"""            if ((s < {stripes - 1})) begin
                acc = (acc + rest[{W}-1:0]);
            end
""", within=STRIPING)


def _e2(p):
    f = _Fabric(p)
    sw = f.sum_width()
    return (Edit("    integer m;\n", f"    reg [{sw}-1:0] msum;\n    integer m;\n", within=STRIPING),
            Edit("    idx = 0;\n    for (m=0;", "    idx = 0;\n    msum = 0;\n    for (m=0;", within=STRIPING),
            Edit("        if ((lane < lo)) begin\n", "        msum = (msum + lane);\n        if ((lane < lo)) begin\n",
                 within=STRIPING),
            Edit("striping_controller0_collective_gbps = lo;",
                 f"striping_controller0_collective_gbps = (msum / {f.members});", within=STRIPING))


def _e3(p):
    return Edit(f"reassembly_required = {_bit(_Fabric(p).stripes > 1)};", f"reassembly_required = {_bit(False)};",
                within=STRIPING)


def _e4(p):
    stripes = _Fabric(p).stripes
    return Edit(f"d = (sb * {stripes - 1});", f"d = (sb * {stripes});", within=STRIPING)


def _e5(p):
    f = _Fabric(p)
    return Edit(f"connections_total = {f.members * f.stripes};", f"connections_total = {f.members + f.stripes};",
                within=STRIPING)


_FAULTS = [
    Fault("A1", "slowest_member_tracker", "tracker publishes the mean as the collective rate",
          Edit("    collective_gbps = lo;\n", "    collective_gbps = mean;\n", within=TRACKER)),
    Fault("A2", "slowest_member_tracker", "tracker publishes half the mean",
          Edit("mean_gbps = mean;", "mean_gbps = (mean >>> 1);", within=TRACKER)),
    Fault("A3", "slowest_member_tracker", "member 0 left out of the minimum and the mean", _a3),
    Fault("A4", "slowest_member_tracker", "slowest index off by one", _a4),
    Fault("A5", "slowest_member_tracker", "tracker declares RED_MEAN",
          Edit(f"reduction_op = {pkg.RED_MIN};", f"reduction_op = {pkg.RED_MEAN};", within=TRACKER)),
    Fault("A6", "slowest_member_tracker", "ratio inverted (min / mean)",
          Edit("        num = (mean * 10);\n        ratio = (num / lo);\n",
               "        num = (lo * 10);\n        ratio = (num / mean);\n", within=TRACKER)),
    Fault("B1", "ring_allreduce_model", "2N steps", _b1),
    Fault("B2", "ring_allreduce_model", "S / (N - 1) chunk", _b2),
    Fault("B3", "ring_allreduce_model", "step time divides by the mean", _b3),
    Fault("B4", "ring_allreduce_model", "counter also counts the tick after the last step", _b4),
    Fault("B5", "ring_allreduce_model", "running never clears", _b5),
    Fault("B6", "ring_allreduce_model", "slowdown inverted", _b6),
    Fault("C1", "all_to_all_model", "ring counted twice", _c1),
    Fault("C2", "all_to_all_model", "self-flow counted (ACC x N)", _c2),
    Fault("C3", "load_aware_selector", "publishes PATHS for path PATHS - 1", _c3),
    Fault("C4", "load_aware_selector", "idle cycles move 1 Gb/s busiest -> lightest (a re-pin)", _c4),
    Fault("C5", "all_to_all_model", "lookup entries for 2 and 4 flows per uplink swapped", _c5),
    Fault("C6", "all_to_all_model", f"top entry {C6_TOP_ENTRY} %", _c6),
    Fault("D1", "load_aware_selector", "picks the path after the lightest", _d1),
    Fault("D2", "load_aware_selector", "hash path in the other path mode", _d2),
    Fault("D3", "load_aware_selector", "adds declared + 1",
          Edit("new = (new + placed_gbps);", "new = ((new + placed_gbps) + 1);", within=ACCOUNT)),
    Fault("D4", "load_aware_selector", "placements on path 0 not counted as perfect",
          Edit("if (((old == 0) && ", "if (((i != 0) && (old == 0) && ", within=ACCOUNT)),
    Fault("D5", "load_aware_selector", "busiest scan broken (reads 0)",
          Edit("        if ((lane > hi)) begin\n", "        if ((lane < hi)) begin\n", within=CHOOSE)),
    Fault("D6", "load_aware_selector", "removal wraps below zero",
          Edit("                    err = 1;\n                    new = 0;\n",
               f"                    err = 1;\n"
               f"                    new = ((((new + {LANE_MAX}) + 1) - ending_gbps) & {LANE_MAX});\n", within=ACCOUNT)),
    Fault("E1", "striping_controller", "last stripe left out", _e1),
    Fault("E2", "striping_controller", "mean of members", _e2),
    Fault("E3", "striping_controller", "reassembly never flagged", _e3),
    Fault("E4", "striping_controller", "STRIPES gaps", _e4),
    Fault("E5", "striping_controller", "MEMBERS + STRIPES", _e5),
    Fault("F1", "collective_telemetry", "claims the local minimum without an import",
          Edit("""            else begin
                job_rate_claim <= 0;
                job_rate_gbps <= 0;
            end
""", """            else begin
                job_rate_claim <= 1;
                job_rate_gbps <= slowest_member_tracker0_min_gbps;
            end
""", within=TELEMETRY)),
    Fault("F2", "collective_telemetry", "publishes a stale import above the local minimum",
          Edit("""                if ((job_min_gbps > slowest_member_tracker0_min_gbps)) begin
                    job_rate_gbps <= slowest_member_tracker0_min_gbps;
                end
                else begin
                    job_rate_gbps <= job_min_gbps;
                end
""", "                job_rate_gbps <= job_min_gbps;\n", within=TELEMETRY)),
    Fault("F3", "collective_telemetry", "validity flag stuck at 1",
          Edit("rate_claim_valid <= job_min_valid;", "rate_claim_valid <= 1;", within=TELEMETRY)),
    Fault("F4", "collective_telemetry", "PINNED needs unchanged > samples",
          Edit("u = (slowest_unchanged * 2);", "u = (slowest_unchanged * 1);", within=TELEMETRY)),
    Fault("F5", "stall_accountant", "divides by 1 024",
          Edit("t1 = (t1 / 1000);", "t1 = (t1 / 1024);", within=STALL)),
]
FABRIC_FAULTS = {f.name: f for f in _FAULTS}
