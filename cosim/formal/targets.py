"""The formal targets: which harness, at which parameters, which properties, which
environment, and which broken variants must make which property fail.

Parameters are small on purpose: a proof is about every input sequence, so the data
widths and table sizes only need to be large enough for every case the control logic
distinguishes (each target says why its sizes are enough).
"""
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

from cosim.sim.tbutil import bit as _b, sync_reset as _rst, word as _u
from spec.frames import (BAD_LENGTH, FIELDS, HDR_BITS, OP_ABORT, OP_ACK, OP_COMMIT, OP_NACK, RESPONSE_BITS,
                         STAGED_MISMATCH)

from cosim.sim import faults as design_faults
from cosim.sim.faults import Edit
from .sby import Prop
from cosim.fabric.fabric_properties import PROPERTIES, FabricConfig, fabric_params, fabric_signals
from cosim.fabric.faults import FABRIC_FAULTS
from cosim.formal import harness as h
from cosim.formal.harness import CE, CONTROL_DEPTH
from cosim.package.faults import PACKAGE_FAULTS
from cosim.package.package_setup import Geometry, checked_distributor_signals
from hdl.node.prism_buses import BEAT_COUNT_BITS
from hdl.package.work_distributor import POLICY_ROUND_ROBIN


def _field_bits(first, last=None, lsb=0):
    """The Verilog part select [msb:lsb] of header field `first` (through the adjacent field `last`)
    from the protocol's field table, in a word whose header starts at bit `lsb`."""
    lo, width = FIELDS[first]
    hi = FIELDS[last][0] + FIELDS[last][1] if last else lo + width
    return f"[{lsb + hi - 1}:{lsb + lo}]"


def _lemma_props(lemmas):
    """Lemmas ((id, bad condition over internal names, statement), ...) as properties."""
    return [Prop(i, None, None, s, expr=e, inside=True) for i, e, s in lemmas]


def _bit_props(table, triggers=None):
    """The properties of a harness table ((id, statement), ...): bit k of its prop_bad port each.
    triggers: {id: (Verilog condition, names internal signals?)}, each property's trigger (covered)."""
    triggers = triggers or {}
    props = []
    for k, (pid, text) in enumerate(table):
        cover, inside = triggers.get(pid, (None, False))
        props.append(Prop(pid, "prop_bad", k, text, cover=cover, cover_inside=inside))
    return props


@dataclass
class Fault:
    """A broken variant: block parameters, a test-only fault of the design built into the
    converted harness (`design_fault`, cosim/sim/faults.py) and/or edits of the converted
    harness's Verilog that sby reads (`edits`), the properties that must fail, the properties
    whose trigger (cover) must become unreachable (a dead design: nothing moves, so the safety
    properties hold vacuously), extra environment for its job (Verilog statements, optional)."""
    params: dict
    props: Tuple[str, ...]
    what: str = ""
    env_verilog: str = ""
    depth: int = None        # BMC depth (default: the target's fault_depth)
    edits: Tuple[Edit, ...] = ()
    unreached: Tuple[str, ...] = ()
    cover_depth: int = None  # depth of the cover job that shows them unreachable (default: the target's)
    design_fault: design_faults.Fault = None

    @property
    def verilog_only(self):
        """The variant exists only as Verilog (MyHDL runs the correct design)."""
        return bool(self.edits or self.design_fault)


def _design_fault(fault, props, **kw):
    """A broken variant made by one of the design's test faults (cosim/<subsystem>/faults.py)."""
    return Fault({}, tuple(props), fault.bug, design_fault=fault, **kw)


def _mutant(edits, props, what, unreached=(), depth=None, env_verilog=""):
    """A broken variant made by edits of the converted harness alone (no design parameter)."""
    if isinstance(edits, Edit):
        edits = (edits,)
    return Fault({}, tuple(props), what, env_verilog=env_verilog, depth=depth, edits=tuple(edits),
                 unreached=tuple(unreached))


@dataclass
class Group:
    """Properties proved together under one environment (assumptions), with lemmas that
    hold only under it: (id, bad condition over internal names, statement)."""
    props: Tuple[str, ...]
    env_verilog: str = ""
    note: str = ""
    lemmas: Tuple[Tuple[str, str, str], ...] = ()

    def lemma_props(self):
        return _lemma_props(self.lemmas)


@dataclass
class Target:
    name: str
    summary: str
    block: Callable                      # () -> MyHDL block function (the harness)
    signals: Callable                    # () -> {port: Signal}
    props: List[Prop]
    params: dict = field(default_factory=dict)
    parameters_text: str = ""            # the small parameters, for the table and the note
    assumes: Tuple[str, ...] = ()        # expressions over the harness ports, assumed high
    env_verilog: str = ""                # more assumptions (Verilog statements in an always @*)
    lemmas: Tuple[Tuple[str, str, str], ...] = ()   # (id, bad condition over internal names, statement)
    groups: Tuple[Group, ...] = ()       # properties that need their own environment
    depth: int = 20                      # BMC depth
    k: int = None                        # induction depth (default: depth)
    fault_depth: int = 12                # BMC depth for the broken variants
    mode: str = "prove"
    free_reset: bool = True
    timeout: int = 600
    faults: Dict[str, Fault] = field(default_factory=dict)
    bounded_reason: Dict[str, str] = field(default_factory=dict)
    cover_depth: int = None              # depth of the cover job (default: depth)
    stable_inputs: Tuple[str, ...] = ()  # free inputs held constant from the first step (a checker's choice)
    lemma_verilog: str = ""              # helper Verilog the lemmas read (sby.with_lemmas)

    def all_props(self):
        return list(self.props) + _lemma_props(self.lemmas) + [p for g in self.groups for p in g.lemma_props()]

    def prop(self, pid):
        for p in self.all_props():
            if p.id == pid:
                return p
        raise KeyError(pid)


# ---------------------------------------------------------------------------------------------
# axis_register
# ---------------------------------------------------------------------------------------------
def _axis_register_target():
    width = 4

    def signals():
        return dict(clk=_b(), rst=_rst(), s_axis_tdata=_u(width), s_axis_tlast=_b(), s_axis_tvalid=_b(),
                    m_axis_tready=_b(), track=_b(), s_axis_tready=_b(), m_axis_tdata=_u(width),
                    m_axis_tlast=_b(), m_axis_tvalid=_b(), prop_bad=_u(len(h.AXIS_REGISTER_PROPERTIES)),
                    env_ok=_b())

    # Triggers: the situation in which each property has something to check.
    triggers = {
        "m_tvalid_held": ("m_axis_tvalid && !m_axis_tready", False),
        "m_tdata_held": ("m_axis_tvalid && !m_axis_tready && s_axis_tvalid && s_axis_tready", False),
        "no_duplicate": ("m_axis_tvalid && m_axis_tready && held_beats == 1", True),
        "no_loss": ("held_beats == 2 && s_axis_tvalid", True),
        "tracked_beat": ("tracking && ahead == 0 && m_axis_tvalid && m_axis_tready", True),
        "input_live": ("out_free && s_axis_tvalid", True),
        "output_live": ("held_beats != 0 && !m_axis_tready", True),
    }
    props = _bit_props(h.AXIS_REGISTER_PROPERTIES, triggers)
    # Lemmas over the slice's own state tie the checker's counters to it, so the induction
    # closes: without them a k-step stall from an unreachable state breaks it for every k.
    r = "axis_register0_"
    lemmas = (
        ("inv_occupancy", f"held_beats != {r}out_valid + {r}skid_valid",
         "the count of beats inside equals the slice's full registers (output + skid)"),
        ("inv_skid_behind_output", f"{r}skid_valid && !{r}out_valid",
         "the skid buffer is full only behind a full output register"),
        ("inv_tracked_position", f"tracking && !(ahead < held_beats)",
         "the tracked beat is inside the slice"),
        ("inv_tracked_output", f"tracking && ahead == 0 && !(m_axis_tdata == tr_data && m_axis_tlast == tr_last)",
         "a tracked beat with none ahead sits in the output register"),
        ("inv_tracked_skid", f"tracking && ahead == 1 && !({r}skid_data == tr_data && {r}skid_last == tr_last)",
         "a tracked beat with one ahead sits in the skid buffer"),
    )
    stall = f"(({r}out_valid && (!m_axis_tready)))"
    faults = {
        "no_skid": Fault(dict(VARIANT="no_skid"), ("no_loss", "tracked_beat"),
                         "test-only broken slice: a beat arriving while the output waits is dropped "
                         "instead of parked in the skid buffer"),
        # mutations of the converted slice (cosim/sim/faults.py edits)
        "dead": _mutant(Edit(f"{r}running <= 1;", f"{r}running <= 0;"), ("input_live",),
                        "dead slice: `running` never rises, so tready stays low and no beat ever enters (every "
                        "stream rule then holds vacuously)",
                        unreached=("m_tvalid_held", "m_tdata_held", "no_duplicate", "no_loss", "tracked_beat",
                                   "output_live")),
        "drops_waiting": _mutant(Edit(f"assign m_axis_tvalid = {r}out_valid;",
                                      f"assign m_axis_tvalid = ({r}out_valid && (!{r}skid_valid));"),
                                 ("m_tvalid_held", "output_live"),
                                 "tvalid is withdrawn while the skid buffer is full: a waiting beat disappears"),
        "overwrites_waiting": _mutant(Edit(f"if {stall} begin", f"if (({r}out_valid && (!m_axis_tready) && "
                                                                  "(!s_axis_tvalid))) begin"),
                                      ("m_tdata_held",),
                                      "a new beat replaces the waiting output beat instead of entering the skid "
                                      "buffer"),
        "repeats_beat": _mutant(Edit(rf"else begin\n(\s*){r}out_valid <= 0;", rf"else begin\n\1{r}out_valid <= 1;",
                                     regex=True), ("no_duplicate",),
                                "the output register is not emptied when its beat is taken: the beat leaves again"),
        "flips_data": _mutant(Edit("m_axis_tdata <= s_axis_tdata;", "m_axis_tdata <= (s_axis_tdata ^ 1);"),
                              ("tracked_beat",),
                              "bit 0 of a beat loaded straight into the output register is inverted"),
    }
    return Target(
        name="axis_register", summary="AXI-Stream register slice: stream rules on its output, no beat lost "
                                      "or duplicated, bounded liveness", block=lambda: h.axis_register_harness,
        signals=signals, props=props, parameters_text=f"DATA_WIDTH={width} (the slice never looks at the data)",
        assumes=("env_ok",), lemmas=lemmas, depth=6, k=2, faults=faults)


# ---------------------------------------------------------------------------------------------
# prism_egress
# ---------------------------------------------------------------------------------------------
def _egress_target():
    width, resp_w = 4, 3
    top = width - 1

    def signals():
        return dict(clk=_b(), rst=_rst(), resp_valid=_b(), resp_data=_u(resp_w), res_valid=_b(),
                    res_data=_u(width), res_last=_b(), res_mask=_u(2), m_axis_0_tready=_b(), m_axis_1_tready=_b(),
                    track=_b(), resp_pop=_b(), res_ready=_b(), m_axis_0_tdata=_u(width), m_axis_0_tvalid=_b(),
                    m_axis_0_tlast=_b(), m_axis_1_tdata=_u(width), m_axis_1_tvalid=_b(), m_axis_1_tlast=_b(),
                    sent_response=_b(), sent_result0=_b(), sent_result1=_b(),
                    prop_bad=_u(len(h.EGRESS_PROPERTIES)), env_ok=_b())

    e = "prism_egress0_"
    triggers = {
        "tx0_tvalid_held": ("m_axis_0_tvalid && !m_axis_0_tready", False),
        "tx0_tdata_held": ("m_axis_0_tvalid && !m_axis_0_tready && (resp_valid || (res_valid && res_mask[0]))", False),
        "tx1_tvalid_held": ("m_axis_1_tvalid && !m_axis_1_tready", False),
        "tx1_tdata_held": ("m_axis_1_tvalid && !m_axis_1_tready && res_valid && res_mask[1]", False),
        "response_only_tx0": ("m_axis_1_tvalid && m_axis_1_tready && resp_valid", False),
        "whole_frames_tx0": ("in_frame0 && m_axis_0_tvalid && m_axis_0_tready && resp_valid", True),
        "result_beats_tx0": ("result_diff0 == -1", True),
        "result_beats_tx1": ("result_diff1 == -1", True),
        "tracked_result_tx0": ("egress_tracked_port0_pending && egress_tracked_port0_ahead == 0 && port0_fire && "
                               "port0_result && tr_mask == 3", True),
        "tracked_result_tx1": ("egress_tracked_port1_pending && egress_tracked_port1_ahead == 0 && port1_fire && "
                               "tr_mask == 3", True),
        "result_live": ("stuck_res_prev && res_valid", True),
        "response_live": ("stuck_resp_prev && resp_valid", True),
    }
    props = _bit_props(h.EGRESS_PROPERTIES, triggers)
    held = f"(waiting_res && held_res == {{tr_mask, tr_last, tr_data}})"
    lemmas = [
        ("inv_valid_registers", f"m_axis_0_tvalid != {e}out0_valid || m_axis_1_tvalid != {e}out1_valid",
         "the port valids are the output registers"),
        ("inv_result_tag", f"{e}out0_valid && ({e}result0 != m_axis_0_tdata[{top}])",
         "port 0's register holds a RESULT beat exactly when its beat carries the RESULT tag"),
        ("inv_tx1_results_only", f"{e}out1_valid && !m_axis_1_tdata[{top}]",
         "port 1's register only ever holds RESULT beats"),
        ("inv_frame_open", f"in_frame0 && {e}out0_valid && !{e}result0",
         "inside a RESULT frame port 0's register holds RESULT beats only"),
        ("inv_frame_locked", f"in_frame0 && !({e}locked0 || ({e}out0_valid && m_axis_0_tlast))",
         "inside a RESULT frame port 0 stays locked until the frame's last beat is loaded"),
        ("inv_open_frame_locks", f"{e}out0_valid && {e}result0 && !m_axis_0_tlast && !{e}locked0",
         "a RESULT beat without TLAST in port 0's register keeps port 0 locked to its frame"),
        ("inv_lock_in_frame", f"{e}locked0 && !(in_frame0 || ({e}out0_valid && {e}result0 && !m_axis_0_tlast))",
         "port 0 is locked only inside a RESULT frame: its first beat has left, or waits in the register"),
        ("inv_lock_not_last", f"{e}locked0 && {e}out0_valid && {e}result0 && m_axis_0_tlast",
         "loading a frame's last beat ends the lock"),
        ("inv_taken_tx0", f"{e}taken0 && !(waiting_res && held_res[{width + 1}])",
         "a beat loaded early into port 0 is the sender's waiting beat, masked for port 0"),
        ("inv_taken_tx1", f"{e}taken1 && !(waiting_res && held_res[{width + 2}])",
         "the same for port 1"),
        ("inv_count_tx0", f"result_diff0 != $signed({{2'b0, {e}out0_valid && {e}result0}}) - "
                          f"$signed({{2'b0, {e}taken0}})",
         "accepted - sent RESULT beats of port 0 = (a RESULT beat waits in its register) - (beat loaded early)"),
        ("inv_count_tx1", f"result_diff1 != $signed({{2'b0, {e}out1_valid}}) - $signed({{2'b0, {e}taken1}})",
         "the same for port 1"),
    ]
    for p, res in ((0, f"{e}result0"), (1, f"m_axis_{1}_tdata[{top}]")):
        reg = f"({e}out{p}_valid && {res})"
        pending, ahead = f"egress_tracked_port{p}_pending", f"egress_tracked_port{p}_ahead"
        lemmas += [
            (f"inv_tracked{p}_ahead", f"{pending} && {ahead} > 1",
             f"at most one RESULT beat is in front of the tracked beat on port {p}"),
            (f"inv_tracked{p}_behind", f"{pending} && {ahead} == 1 && !({reg} && !{e}taken{p} && {held})",
             f"with one in front, that beat waits in port {p}'s register and the tracked one at the sender"),
            (f"inv_tracked{p}_place", f"{pending} && {ahead} == 0 && !(({reg} && m_axis_{p}_tdata == tr_data && "
                                      f"m_axis_{p}_tlast == tr_last) || (!{reg} && !{e}taken{p} && {held}))",
             f"with none in front, the tracked beat is in port {p}'s register, or still at the sender (not loaded, "
             "the register holding no RESULT beat)"),
            (f"inv_tracked{p}_masked", f"{pending} && !tr_mask[{p}]",
             f"the tracked beat is followed on port {p} only if it is masked for it"),
        ]
    free0 = f"{e}arbitrate_free0 = ((!{e}out0_valid) || m_axis_0_tready);"
    free1 = f"{e}arbitrate_free1 = ((!{e}out1_valid) || m_axis_1_tready);"
    rr = f"{e}arbitrate_res_wins = ({e}last_grant == 0);"
    every = tuple(pid for pid, _ in h.EGRESS_PROPERTIES)
    faults = {
        # mutations of the converted egress (cosim/sim/faults.py edits)
        "no_frame_lock": _mutant(Edit(f"{e}arbitrate_res_wins = 1'b0;\n    if ({e}locked0) begin",
                                      f"{e}arbitrate_res_wins = 1'b0;\n    if (1'b0) begin"), ("whole_frames_tx0",),
                                 "port 0 forgets that it is inside a RESULT frame (its lock never wins the "
                                 "arbitration), so a response may cut into it"),
        "dead": _mutant((Edit(free0, f"{e}arbitrate_free0 = 1'b0;"), Edit(free1, f"{e}arbitrate_free1 = 1'b0;")),
                        ("result_live", "response_live"),
                        "dead egress: no port register is ever free, so nothing is loaded, offered or taken (every "
                        "stream rule then holds vacuously)",
                        unreached=tuple(p for p in every if p not in ("result_live", "response_live"))),
        "tx0_drops_waiting": _mutant(Edit("else if (m_axis_0_tready) begin", "else begin"), ("tx0_tvalid_held",),
                                     "port 0's register empties after one cycle whether or not its beat was taken"),
        "tx1_drops_waiting": _mutant(Edit("else if (m_axis_1_tready) begin", "else begin"), ("tx1_tvalid_held",),
                                     "the same on port 1"),
        "tx0_overwrites": _mutant(Edit(free0, f"{e}arbitrate_free0 = 1'b1;"), ("tx0_tdata_held",),
                                  "port 0's register counts as free while its beat waits: the next beat replaces it"),
        "tx1_overwrites": _mutant(Edit(free1, f"{e}arbitrate_free1 = 1'b1;"), ("tx1_tdata_held",),
                                  "the same on port 1"),
        "tx1_sends_response": _mutant(Edit("m_axis_1_tdata <= res_data;", "m_axis_1_tdata <= resp_data;"),
                                      ("response_only_tx0",),
                                      "port 1 loads the response queue's head instead of the RESULT beat"),
        "tx0_loads_twice": _mutant(Edit(f"{e}taken0 <= 1;", f"{e}taken0 <= 0;"), ("result_beats_tx0",),
                                   "port 0 forgets that it loaded the waiting beat early, and loads it again"),
        "tx1_loads_twice": _mutant(Edit(f"{e}taken1 <= 1;", f"{e}taken1 <= 0;"), ("result_beats_tx1",),
                                   "the same on port 1"),
        "tx0_flips_bit0": _mutant(Edit("m_axis_0_tdata <= res_data;", "m_axis_0_tdata <= (res_data ^ 1);"),
                                  ("tracked_result_tx0",), "bit 0 of every RESULT beat on TX port 0 is inverted"),
        "tx1_flips_bit0": _mutant(Edit("m_axis_1_tdata <= res_data;", "m_axis_1_tdata <= (res_data ^ 1);"),
                                  ("tracked_result_tx1",), "bit 0 of every RESULT beat on TX port 1 is inverted"),
        "responses_first": _mutant(Edit(rr, f"{e}arbitrate_res_wins = 1'b0;"), ("result_live",),
                                   "between frames a waiting response always wins port 0: RESULT beats starve"),
        "results_first": _mutant(Edit(rr, f"{e}arbitrate_res_wins = 1'b1;"), ("response_live",),
                                 "between frames a waiting RESULT beat always wins port 0: responses starve"),
    }
    return Target(
        name="prism_egress", summary="the node's egress: stream rules on both TX ports, whole frames, "
                                     "CONTROL responses only on TX port 0, every RESULT beat leaves each port of its "
                                     "mask once with its data, bounded liveness",
        block=lambda: h.prism_egress_harness, signals=signals, props=props,
        parameters_text=f"beat {width} bits, response header {resp_w} bits (the top bit tags RESULT beats; the "
                        "tracked beat's data is checked on every bit)",
        assumes=("env_ok",), lemmas=tuple(lemmas), depth=8, k=2, faults=faults)


# ---------------------------------------------------------------------------------------------
# collective_fabric
# ---------------------------------------------------------------------------------------------
FABRIC_SMALL = dict(members=3, stripes=2, paths=2, participants=4, s_mb=8, a2a_s_mb=8, acc_per_leaf=2)


def fabric_config():
    return FabricConfig(**FABRIC_SMALL)


def _fabric_target():
    cfg = fabric_config()
    props = [Prop(p.id, "violations", p.bit, p.statement) for p in PROPERTIES]
    params = fabric_params(cfg)
    # Deeper BMC for the variants whose fault needs a history: B4 and B5 a whole collective (start,
    # 2 (N - 1) steps, one more cycle); C4 and D1 more than PATHS placements (two cycles each through
    # the hash unit); D5 every path loaded.  MEMBERS x STRIPES != MEMBERS + STRIPES, so E5's fault shows.
    long_faults = {"B4": 14, "B5": 14, "C4": 12, "D1": 12, "D5": 12}
    faults = {p.id: _design_fault(FABRIC_FAULTS[p.id], (p.id,), depth=long_faults.get(p.id)) for p in PROPERTIES}
    steps = 2 * (cfg.participants - 1)
    placed = "load_aware_selector0_c_flows_placed"
    loaded = " + ".join(f"(path_load_gbps[{16 * i + 15}:{16 * i}] != 0)" for i in range(cfg.paths))
    # B4 and B5 are about the ring model's step counter; stated on the counter itself (not
    # one cycle late, through the monitor's registered verdict) they close the induction.
    lemmas = (("inv_ring_steps", f"ring_steps_done > {steps}",
               f"the ring model never counts past 2 (N - 1) = {steps} steps"),
              ("inv_ring_running", f"ring_running && ring_steps_done >= {steps}",
               "a running collective has steps left"),
              # D4: while at most PATHS flows were ever placed, an empty path is left for each
              # (loads grow only by placements), so every load-aware placement is perfect.
              ("inv_loaded_paths", f"{placed} <= {cfg.paths} && ({loaded}) > {placed}",
               "no more paths carry load than flows were placed (while at most PATHS were)"),
              ("inv_perfect_so_far", f"collective_conformance_monitor0_all_load_aware && {placed} <= {cfg.paths} "
                                     f"&& perfect_placements != {placed}",
               "while every placement was load-aware and at most PATHS were made, all were perfect"))
    return Target(
        name="collective_fabric", summary="one leaf's collective blocks: the conformance monitor's 34 properties "
                                          "(groups A-F) asserted low",
        block=lambda: __import__("hdl.fabric.collective_fabric", fromlist=["collective_fabric"]).collective_fabric,
        signals=lambda: fabric_signals(cfg), props=props, params=params,
        parameters_text=(f"MEMBERS={cfg.members}, STRIPES={cfg.stripes}, PATHS={cfg.paths}, "
                         f"PARTICIPANTS={cfg.participants}, S_MB={cfg.s_mb}, A2A_S_MB={cfg.a2a_s_mb}, "
                         f"ACC_PER_LEAF={cfg.acc_per_leaf}, RATES=bench (rates 16 bits, counters 32)"),
        lemmas=lemmas, depth=6, k=2, fault_depth=8, faults=faults)


# ---------------------------------------------------------------------------------------------
# checked_work_distributor (the package assertions)
# ---------------------------------------------------------------------------------------------
DISTRIBUTOR_ASSERTIONS = ("a_retire_once", "a_retry_creates_no_job", "a_route_epoch_stable",
                          "a_no_dispatch_to_disabled", "a_bounded_imbalance")
DISTRIBUTOR_WORK = 8


def distributor_geometry():
    return Geometry(n_tgt=2, tgt_w=1, slot_w=2, gen_w=2, work_w=4, job_w=2, epoch_w=2, rate_w=4, cnt_w=3,
                    owork_w=6)


def _distributor_target():
    g = distributor_geometry()
    texts = {
        "a_retire_once": "a job is retired at most once, only by a completion of its own use of the slot",
        "a_retry_creates_no_job": "a transport retry never creates a second job (no allocation over a live one)",
        "a_route_epoch_stable": "a live job's route epoch never changes underneath it (every slot)",
        "a_no_dispatch_to_disabled": "work is never dispatched to a target that is not enabled",
        "a_bounded_imbalance": "while no target is degraded, max - min outstanding work <= IMBALANCE_BUDGET (16)",
    }
    props = [Prop(a, "fail_" + a[2:], None, texts[a]) for a in DISTRIBUTOR_ASSERTIONS]
    w = g.owork_w
    # The imbalance is a property of the dispatcher in an environment that drains the targets
    # evenly; with completions free (a die that never finishes) no dispatcher can keep it.
    balanced = f"""
if (s_axis_job_tvalid) assume(s_axis_job_tdata == {DISTRIBUTOR_WORK});
assume(tgt_enable == 2'b11);
assume(svc_rate[3:0] == svc_rate[7:4]);
if (s_cmpl_valid) assume(retire_target == 0 ? outstanding_work[{w - 1}:0] >= outstanding_work[{2 * w - 1}:{w}]
                                             : outstanding_work[{2 * w - 1}:{w}] >= outstanding_work[{w - 1}:0]);
"""
    # Under that environment: every live job carries WORK units, each target's outstanding work
    # is WORK x its live jobs, and the round-robin pointer names a target at most one job
    # ahead of the other (ties and unmeasured rates go round-robin; the pointer moves past
    # the target just used).
    d = "work_distributor0_"
    W8 = DISTRIBUTOR_WORK
    live_on = lambda t: " + ".join(f"({d}tbl_live[{j}] && {d}tbl_tgt[{j}] == {t})" for j in range(g.n_job))
    balance_lemmas = tuple(
        [(f"inv_job{j}_work", f"{d}tbl_live[{j}] && {d}tbl_work[{j}] != {W8}",
          f"job slot {j}, when live, holds a {W8}-unit job") for j in range(g.n_job)] +
        [(f"inv_target{t}_work", f"{d}out_work[{t}] != {W8} * ({live_on(t)})",
          f"target {t}'s outstanding work is {W8} units per live job on it") for t in range(2)] +
        [("inv_round_robin_0", f"{d}rr_ptr == 0 && {d}out_work[0] > {d}out_work[1] + {W8}",
          "the round-robin pointer names target 0 only while it is at most one job ahead"),
         ("inv_round_robin_1", f"{d}rr_ptr == 1 && {d}out_work[1] > {d}out_work[0] + {W8}",
          "the same for target 1")])
    return Target(
        name="work_distributor", summary="checked_work_distributor: the package assertion monitor's fail_* outputs "
                                         "asserted low", block=lambda: __import__(
            "cosim.package.checked_work_distributor", fromlist=["checked_work_distributor"]).checked_work_distributor,
        signals=lambda: checked_distributor_signals(g), props=props,
        params=dict(IMBALANCE_BUDGET=16, DEGRADE_SHIFT=2),
        parameters_text=(f"N_TGT={g.n_tgt}, N_JOB={g.n_job} (SLOT_W={g.slot_w}), GEN_W={g.gen_w}, "
                         f"WORK_W={g.work_w}, EPOCH_W={g.epoch_w}, RATE_W={g.rate_w}, OWORK_W={g.owork_w}, "
                         "POLICY_SERVICE_RATE, IMBALANCE_BUDGET=16"),
        groups=(Group(("a_bounded_imbalance",) + tuple(i for i, _, _ in balance_lemmas), balanced,
                      lemmas=balance_lemmas,
                      note=
                      f"environment: both targets enabled, equal service rates, every job {DISTRIBUTOR_WORK} "
                      "work units, a completion only from the more loaded target (targets drain evenly)"),),
        depth=12,
        faults={
            "no_gen_check": _design_fault(PACKAGE_FAULTS["no_gen_check"], ("a_retire_once",)),
            "retry_as_job": _design_fault(PACKAGE_FAULTS["retry_as_job"], ("a_retry_creates_no_job",)),
            "epoch_rewrite": _design_fault(PACKAGE_FAULTS["epoch_rewrite"], ("a_route_epoch_stable",)),
            "round_robin": Fault(dict(POLICY=POLICY_ROUND_ROBIN), ("a_no_dispatch_to_disabled",),
                                 "POLICY_ROUND_ROBIN: a disabled target stays in the rotation"),
            "tie_lowest": _design_fault(PACKAGE_FAULTS["tie_lowest"], ("a_bounded_imbalance",), env_verilog=balanced),
        })


# ---------------------------------------------------------------------------------------------
# prism_ingress
# ---------------------------------------------------------------------------------------------
def _ingress_target():
    width = hdr = HDR_BITS       # the narrowest the block accepts (the header's fields)

    def signals():
        return dict(clk=_b(), rst=_rst(), s_axis_tdata=_u(width), s_axis_tvalid=_b(), s_axis_tlast=_b(),
                    room_ok=_b(), res_valid=_b(), res_admit=_b(), res_bank=_u(2), rd_release=_b(), mem_raddr=_u(10),
                    mem_raddr_hold=_u(10), mem_advance=_b(),
                    s_axis_tready=_b(), frm_valid=_b(), frm_header=_u(hdr), frm_beats=_u(9), frm_too_long=_b(),
                    frm_bank=_u(2), unsupported=_b(), in_frame=_b(), rd_avail=_b(), rd_bank=_u(2),
                    rd_header=_u(hdr), rd_next_avail=_b(), rd_next_bank=_u(2), rd_next_header=_u(hdr),
                    mem_rdata=_u(width), prop_bad=_u(len(h.INGRESS_PROPERTIES)), env_ok=_b())

    triggers = {
        "frame_once": ("expect_frm && expect_beats >= 2", True),
        "frame_beats": ("frm_valid && expect_beats >= 3", True),
        "bank_free": ("frm_valid && pend_n + adm_n == 2", True),
        "reader_queue": ("rd_release && adm_n == 2", True),
        "beat_live": ("must_take && !frame_open && pend_n + adm_n == 2", True),
    }
    props = _bit_props(h.INGRESS_PROPERTIES, triggers)
    # Lemmas: the checker's frame tracking and bank queues equal the ingress's own state
    # (frame_open, draining, beat_count, in_use, queue); with them the induction closes.
    r = "prism_ingress0_"

    def member(fifo, b):
        q, n = f"bank_fifo{fifo}_q", f"bank_fifo{fifo}_n"
        return " || ".join(f"({n} >= {i + 1} && {q}[{2 * i + 1}:{2 * i}] == {b})" for i in range(3))

    def distinct(fifo):
        q, n = f"bank_fifo{fifo}_q", f"bank_fifo{fifo}_n"
        e = [f"{q}[{2 * i + 1}:{2 * i}]" for i in range(3)]
        return (f"({n} >= 1 && {e[0]} == 3) || ({n} >= 2 && ({e[1]} == 3 || {e[0]} == {e[1]})) || "
                f"({n} >= 3 && ({e[2]} == 3 || {e[0]} == {e[2]} || {e[1]} == {e[2]}))")

    def clean(fifo):
        q, n = f"bank_fifo{fifo}_q", f"bank_fifo{fifo}_n"
        return f"({n} <= 2 && {q}[5:4] != 0) || ({n} <= 1 && {q}[3:2] != 0) || ({n} == 0 && {q}[1:0] != 0)"

    lemmas = [
        ("inv_frame_open", f"frame_open != {r}frame_open", "the checker's open frame is the ingress's"),
        ("inv_frame_class", f"frame_open && stored == {r}draining", "an open frame is stored exactly when it "
                                                                     "is not being drained"),
        ("inv_frame_count", f"frame_open && count != {r}beat_count", "the beats counted so far agree"),
        ("inv_write_bank", f"{r}wr_bank == 3", "the bank being filled is one of the three"),
        ("inv_reader_queue", f"bank_fifo1_n != {r}q_count || "
                             + " || ".join(f"({r}q_count >= {i + 1} && bank_fifo1_q[{2 * i + 1}:{2 * i}] != "
                                           f"{r}queue[{2 * i + 1}:{2 * i}])" for i in range(3)),
         "the ingress's reader queue is the admitted banks in admission order (its entries above q_count "
         "are never read, and not reset)"),
        ("inv_pending_clean", clean(0), "the pending queue holds zeros above its count"),
        ("inv_admitted_clean", clean(1), "the admitted queue holds zeros above its count"),
        ("inv_pending_distinct", distinct(0), "frames waiting for a verdict are in distinct banks"),
        ("inv_admitted_distinct", distinct(1), "admitted frames are in distinct banks"),
        ("inv_frame_bank", f"frm_valid && {r}wr_bank != (frm_bank == 2 ? 0 : frm_bank + 1)",
         "a completed frame's bank is the one before the bank to fill next"),
        ("inv_fill_bank", f"{r}wr_bank != fill_bank", "the bank to fill is the checker's (stored frames mod 3)"),
        ("inv_running", f"{r}running != up", "the ingress runs from its second cycle out of reset"),
    ]
    for b in range(3):
        used = f"{r}in_use[{b}]"
        lemmas += [
            (f"inv_bank{b}_filling", f"frame_open && stored && {r}wr_bank == {b} && ({used} || {member(0, b)} || "
                                     f"{member(1, b)} || (frm_valid && frm_bank == {b}))",
             f"bank {b} is free and in no queue while a stored frame is open in it"),
            (f"inv_bank{b}_one_queue", f"({member(1, b)}) && ({member(0, b)} || (frm_valid && frm_bank == {b}))",
             f"bank {b} is not admitted while it waits for a verdict"),
            (f"inv_bank{b}_in_use", f"{used} != ({member(0, b)} || {member(1, b)} || (frm_valid && frm_bank == {b}))",
             f"bank {b} is in use exactly while its frame waits for a verdict (in the pending queue, or completing "
             f"now) or is admitted (in the reader queue)"),
        ]
    return Target(
        name="prism_ingress", summary="the node's receive side: one verdict request per stored frame, every beat "
                                      "counted, a bank never holds two frames, the reader sees each admitted "
                                      "frame once, in order",
        block=lambda: h.prism_ingress_harness, signals=signals, props=props,
        parameters_text=f"tdata {width} bits, header {hdr} bits, 3 banks of 256 payload beats (fixed by the "
                        "protocol), frm_beats 9 bits",
        assumes=("env_ok",), lemmas=tuple(lemmas), depth=10, k=4, timeout=900,
        # mutations of the converted ingress (cosim/sim/faults.py edits)
        faults={"bank_reuse": _mutant(Edit(f"{r}ready = ((!{r}in_use[{r}wr_bank]) && room_ok);",
                                           f"{r}ready = room_ok;"), ("bank_free",),
                                      "a header beat is taken whatever the state of the bank to fill, so a frame "
                                      "overwrites a bank that still holds one"),
                "dead": _mutant(Edit(f"{r}running <= 1;", f"{r}running <= 0;"), ("beat_live",),
                                "dead ingress: `running` never rises, so tready stays low and no frame ever arrives "
                                "(every frame and bank property then holds vacuously)",
                                unreached=("frame_once", "frame_beats", "bank_free", "reader_queue")),
                "no_unsupported": _mutant(Edit("unsupported <= 1;", "unsupported <= 0;"), ("frame_once",),
                                          "an unsupported frame is drained without its `unsupported` pulse"),
                "count_stuck": _mutant(Edit(f"{r}track_frames_count = ({r}track_frames_count + 1);",
                                            f"{r}track_frames_count = {r}track_frames_count;"), ("frame_beats",),
                                       "beats after a frame's header are not counted"),
                "queue_at_head": _mutant(Edit(f"({r}track_frames_v << (2 * {r}track_frames_qc))",
                                              f"({r}track_frames_v << 0)"), ("reader_queue",),
                                         "an admitted bank is merged into the reader queue's head instead of "
                                         "appended"),
                "needless_stall": _mutant(Edit(f"((!{r}in_use[{r}wr_bank]) && room_ok)",
                                               f"((!{r}in_use[{r}wr_bank]) && room_ok && ({r}q_count == 0))"),
                                          ("beat_live",),
                                          "a stored frame's header waits until the reader queue is empty, though "
                                          "its bank is free"),
                })


# ---------------------------------------------------------------------------------------------
# prism_fp32_bank (the node's FP32_ARRIVAL banks)
# ---------------------------------------------------------------------------------------------
FP32_BANK_SMALL = dict(BANK=5, BANKS=16, ROWS=2, FP32_LATENCY=4)


def _fp32_bank_target():
    p = FP32_BANK_SMALL
    L = p["FP32_LATENCY"]
    W = h.STANDIN_WIDTH
    row_w = max(1, (p["ROWS"] - 1).bit_length())

    def signals():
        return dict(clk=_b(), rst=_rst(), clear=_b(), p0_take=_b(), p0_row=_u(8), p0_lanes=_u(64), p0_value=_u(32),
                    p1_take=_b(), p1_row=_u(8), p1_lanes=_u(64), p1_value=_u(32), rd_take=_b(), rd_row=_u(8),
                    trk_row=_u(row_w), trk_lane=_u(4), reserved=_u(1 << (9 - p['BANKS'].bit_length())), o_valid=_b(),
                    o_data=_u(512), prop_bad=_u(len(h.FP32_BANK_PROPERTIES)), env_ok=_b())

    triggers = {
        # a group offered for a range whose sum is still in the adder (the bank must hold it back)
        "no_raw_hazard": ("in0 && busy0", True),
        # a group for one range while the bank's other range was taken the cycle before (it enters)
        "reservations_exact": ("in0 && !busy0 && seen[8] && seen[7:0] != r0", True),
        # a read-out of the tracked element hands out a sum of two values or more
        "sums_exact": ("read_line[2] && many_pipe[2]", True),
    }
    props = _bit_props(h.FP32_BANK_PROPERTIES, triggers)
    lane = "prism_fp32_bank0_fp32_arrival_lane{}_"
    line_old = f"exp_line[{W * (L + 2) - 1}:{W * (L + 1)}]"
    row_sum = " || ".join(
        f"(trk_lane == {i} && (({lane.format(i)}filled[trk_row] ? {lane.format(i)}ram[trk_row][{W - 1}:0] : "
        f"{W}'d0) != {line_old}))" for i in range(16))
    bank = "prism_fp32_bank0_"

    def in_flight(i):
        """Lane i's operations on the tracked row differ from the checker's, stage by stage: the bank's
        operation register (taken at the last edge), the lane's operand stage, the adder's L stages."""
        ln, ad = lane.format(i), lane.format(i) + f"fp32_add_standin{i}_int_add_standin{i}_"
        add_row, read_row = "{1'b0, trk_row}", "{1'b1, trk_row}"
        at = [(f"({bank}op_lanes[{i}] && {bank}op_row == trk_row && !{bank}op_read)",
               f"({bank}op_lanes[{i}] && {bank}op_row == trk_row && {bank}op_read)"),
              (f"({ln}a_valid && {ln}a_tag == {add_row})", f"({ln}a_valid && {ln}a_tag == {read_row})")]
        at += [(f"({ad}valids[{j}] && {ad}tags[{2 * j + 1}:{2 * j}] == {add_row})",
                f"({ad}valids[{j}] && {ad}tags[{2 * j + 1}:{2 * j}] == {read_row})") for j in range(L)]
        return " || ".join(f"{a} != add_line[{d}] || {r} != read_line[{d}]" for d, (a, r) in enumerate(at))

    pipeline = " || ".join(f"(trk_lane == {i} && ({in_flight(i)}))" for i in range(16))
    op = lambda d: f"(add_line[{d}] || read_line[{d}])"
    in_seen = " || ".join(f"({op(d)} && !(seen[{9 * d + 8}] && seen[{9 * d + 7}:{9 * d}] == trk_range))"
                          for d in range(L))
    spaced = " || ".join(f"({op(d1)} && {op(d2)})" for d1 in range(L + 2) for d2 in range(d1 + 1, min(d1 + L, L + 1) + 1))
    line = lambda j: f"exp_line[{W * j + W - 1}:{W * j}]"
    lo = lambda sig: f"{sig}[{W - 1}:0]"
    # the checker's own bookkeeping: its sums change only with an operation on the element, a read-out
    # empties it, and each read-out in flight carries the sum before it
    chain = [f"(!{op(0)} && exp_sum != {line(0)})", f"(read_line[0] && exp_sum != {W}'d0)"]
    chain += [f"(!{op(j + 1)} && {line(j)} != {line(j + 1)})" for j in range(L + 1)]
    chain += [f"(read_line[{j + 1}] && {line(j)} != {W}'d0)" for j in range(L + 1)]
    chain += [f"(read_line[{j}] && exp_pipe[{W * j + W - 1}:{W * j}] != {line(j)})" for j in range(3)]
    chain += [f"(read_line[{j}] && !rd_pipe[{j}])" for j in range(3)]
    chain += [f"({op(d)} && since_op > {d})" for d in range(L + 2)]

    def values(i):
        """Lane i's values for the tracked row, stage by stage, are the checker's sums."""
        ln, ad = lane.format(i), lane.format(i) + f"fp32_add_standin{i}_int_add_standin{i}_"
        v = [f"(add_line[0] && {bank}op_values[{32 * i + W - 1}:{32 * i}] != exp_sum - {line(0)})",
             f"(add_line[1] && {lo(ln + 'a_sum')} + {lo(ln + 'a_value')} != {line(0)})",
             f"(read_line[1] && ({ln}a_filled ? {lo(ln + 'a_sum')} : {W}'d0) != {line(1)})",
             # the lanes hand out a read-out together (lane 0's rd_valid is o_valid, the sums are o_data)
             f"(read_line[2] && !(o_valid && o_data[{32 * i + W - 1}:{32 * i}] == {line(2)}))"]
        v += [f"(add_line[{j + 2}] && {ad}sums[{W * j + W - 1}:{W * j}] != {line(j + 1)})" for j in range(L)]
        return " || ".join(v)

    values_bad = " || ".join(f"(trk_lane == {i} && ({values(i)}))" for i in range(16))
    l0 = lane.format(0)
    read_pipe = (f"rd_pipe[0] != ({bank}op_lanes[0] && {bank}op_read) || "
                 f"rd_pipe[1] != ({l0}a_valid && {l0}a_tag[1]) || rd_pipe[2] != o_valid")
    nr = 1 << (8 - (p["BANKS"].bit_length() - 1))          # the bank's reservation bitmap: one bit per row
    bb = p["BANKS"].bit_length() - 1

    def bitmap_bad(bits, entries):
        return " || ".join(
            f"({bank}{bits}[{x}] != (" + " || ".join(
                f"({bank}hist_old[{9 * i + 8}] && {bank}hist_old[{9 * i + bb - 1}:{9 * i}] == {p['BANK']} && "
                f"{bank}hist_old[{9 * i + 7}:{9 * i + bb}] == {x})" for i in range(entries)) + "))"
            for x in range(nr))

    def source_bad(s, rows, hot, lanes=None):
        bad = [f"({bank}{s} && ({bank}{hot} != ({nr}'d1 << {bank}{rows}) || {bank}{rows} >= {p['ROWS']}))",
               f"(!{bank}{s} && ({bank}{hot} != 0 || {bank}{rows} != 0))"]
        if lanes:
            bad += [f"({bank}{lanes}[0] != {bank}{s})", f"(!{bank}{s} && {bank}{lanes} != 0)"]
        return " || ".join(bad)

    lemmas = (("inv_history", "seen != prism_fp32_bank0_hist",
               f"the checker's last {L} operations are the bank's reservation history"),
              ("inv_reservation_bitmap", bitmap_bad("resv_old", L - 1),
               f"the registered bitmap holds exactly the rows of the {L - 1} operations before the newest"),
              ("inv_operation_sources",
               " || ".join([source_bad("s0", "rows0", "hot0", "lanes0"), source_bad("s1", "rows1", "hot1", "lanes1"),
                            source_bad("sr", "rows_rd", "hot_rd"), f"({bank}s0 && {bank}s1)"]),
               "each source's operation registers agree (taken: its row, one-hot, and its lanes; not taken: "
               "all 0), and the two ports' groups never took the bank at one edge"),
              ("inv_tracked_pipeline", pipeline,
               f"the tracked lane's operations on the tracked row, at each of its {L + 2} pipeline stages, are "
               "the checker's adds to the tracked element and read-outs of its range taken that many edges ago"),
              ("inv_tracked_seen", in_seen,
               "an operation on the tracked element is in the checker's history of the bank's operations"),
              ("inv_tracked_spaced", spaced,
               f"two operations on the tracked row are more than {L} edges apart (the reservations)"),
              ("inv_tracked_chain", " || ".join(chain),
               "the checker's sums change only with an operation on the tracked element, a read-out empties it, "
               "and a read-out in flight carries the sum it must hand out"),
              ("inv_tracked_values", values_bad,
               "at each pipeline stage the tracked lane's operand, partial sum or read-out value for the tracked "
               "row is the checker's sum after that operation"),
              ("inv_read_pipeline", read_pipe,
               "the checker's read-outs in flight are the bank's and lane 0's (o_valid is lane 0's rd_valid)"),
              ("inv_tracked_row", row_sum,
               f"the tracked lane's row holds (empty: 0) the tracked sum as of {L + 2} edges ago: the lanes write "
               f"an operation back {L + 2} edges after the bank takes it"))
    faults = {
        # a mutation of the converted bank (a cosim/sim/faults.py edit): the registered bitmap of the
        # operations before the newest looks back one operation short
        "short_reservation": _mutant(Edit(f"{bank}history_i<({L} - 2);", f"{bank}history_i<({L} - 3);"),
                                     ("no_raw_hazard",),
                                     "a range stays reserved for one operation fewer than the adder's latency"),
        "slow_lanes": Fault(dict(LANE_EXTRA=1), ("sums_exact",),
                            "the lanes' adders one cycle slower than the bank's reservation window (FP32_LATENCY "
                            "+ 1): a value added as soon as the reservation ends reads the row before the earlier "
                            "sum is written back, and that update is lost", depth=18),
        # mutations of the converted bank (cosim/sim/faults.py edits)
        "dead": _mutant(Edit(f"assign reserved = {bank}resv;", "assign reserved = {16{1'b1}};"),
                        ("reservations_exact",),
                        "dead bank: no range is ever free, so nothing enters and nothing is read out (the hazard and "
                        "sum properties then hold vacuously)", unreached=("no_raw_hazard", "sums_exact")),
        "no_bypass": _mutant(Edit(r"\(\((prism_fp32_bank0_fp32_arrival_lane\d+)_add_valid && \(\1_issue_and_track_tag"
                                  r"\[1-1:0\] == prism_fp32_bank0_op_row\)\)\)",
                                  r"((\1_add_valid && 1'b0))", count=16, regex=True),
                             ("sums_exact",),
                             "the lanes' write-back bypass is gone: an operation entering as the row's earlier sum "
                             "leaves the adder reads the stale row (the reservations alone are one cycle short)",
                             depth=18),
    }
    return Target(
        name="prism_fp32_bank", summary="one FP32_ARRIVAL bank of the node with its 16 lanes (adders abstracted): "
                                        "reservations prevent a read-after-write hazard and stall nothing else, "
                                        "and every read-out hands out the sum of what was added",
        block=lambda: h.prism_fp32_bank_harness, signals=signals, props=props, params=dict(p),
        parameters_text=(f"BANK={p['BANK']} of BANKS={p['BANKS']}, ROWS={p['ROWS']} (ranges {p['BANK']} and "
                         f"{p['BANK'] + p['BANKS']}), FP32_LATENCY={L}; 16 lanes, each fp32_add replaced by a "
                         f"{W}-bit integer adder of the same latency; every element of a group carries one free "
                         "32-bit value; one tracked element (row, lane) chosen by the solver"),
        assumes=("env_ok",), lemmas=lemmas, depth=8, k=2, fault_depth=10, cover_depth=18,
        stable_inputs=("trk_row", "trk_lane"), faults=faults)


# ---------------------------------------------------------------------------------------------
# prism_control (validation, admission, STAGE/COMMIT/ABORT)
# ---------------------------------------------------------------------------------------------
CONTROL_CAPACITY = 32
CONTROL_RESPONSES = 6       # responses queued or still to be queued, at most (the queue holds 16): see the note


def _control_target():
    hdr = HDR_BITS

    def signals():
        s = dict(clk=_b(), rst=_rst())
        for p in (0, 1):
            s.update({f"f{p}_valid": _b(), f"f{p}_header": _u(hdr), f"f{p}_beats": _u(9), f"f{p}_too_long": _b(),
                      f"f{p}_bank": _u(2)})
        for p in (0, 1):
            s[f"f{p}_next_header"] = _u(hdr)
        s.update(resp_pop=_b(), op_finished=_b(), dp_idle=_b(), ord_pop=_b())
        for p in (0, 1):
            s.update({f"r{p}_valid": _b(), f"r{p}_admit": _b(), f"r{p}_bank": _u(2)})
        for p in (0, 1):
            s.update({f"ev{p}_valid": _b(), f"ev{p}_code": _u(4)})
        s.update(resp_valid=_b(), resp_data=_u(RESPONSE_BITS), room_ok=_b(), clear=_b(), act_policy=_u(2),
                 act_in_fmt=_u(2), act_exact_in=_b(), act_out_fmt=_u(3), act_count=_u(13), act_contributors=_u(8), act_expected=_u(4),
                 act_recipients=_u(2), act_op_id=_u(8), act_generation=_u(16), act_busy=_b(), ord_valid=_b(),
                 ord_port=_b(), prop_bad=_u(len(h.CONTROL_PROPERTIES)), env_ok=_b())
        return s

    triggers = {
        "verdict_order": ("r0_valid && r1_valid", False),
        # a DATA frame admitted: a STAGE, an accepted COMMIT and a DATA frame were processed
        "verdict_kind": ("(r0_valid && r0_admit) || (r1_valid && r1_admit)", False),
        "closed_after_reset": ("data_closed", True),
        "closed_after_abort": ("data_aborted", True),
        # a refused COMMIT's response at the head of the queue
        "response_order": (f"resp_valid && rq_commit_now[0] && resp_data{_field_bits('opcode')} == 4'd{OP_NACK}", True),
        "verdict_live": ("n_wait >= 2 && !held", True),
    }
    props = _bit_props(h.CONTROL_PROPERTIES, triggers)
    lemmas = _control_lemmas()
    c = "prism_control0_"
    # The queued responses that are accepted COMMITs', as the lemmas read them: which entries are
    # COMMITs' comes from the checker's mirror (the entry lemmas tie it to the block's queue), their
    # ACK from the block's queue itself.
    # (the ACK bits read slot by slot, at constant indices, then rotated into queue order: position
    # i is slot resp_rp + i)
    acks = ", ".join(f"({c}resp_mem[{j}]{_field_bits('opcode')} == 4'd{OP_ACK})" for j in reversed(range(h.RQ)))
    fold = f"""
wire [{h.RQ - 1}:0] q_ack_slots = {{{acks}}};
wire [{2 * h.RQ - 1}:0] q_ack_twice = {{q_ack_slots, q_ack_slots}} >> {c}resp_rp;
wire [{h.RQ - 1}:0] q_ackc = q_ack_twice[{h.RQ - 1}:0] & rq_commit_now;
"""
    lemmas = list(lemmas) + [
        ("inv_closed", f"res_closed && q_ackc == 0 && {c}op_open",
         "no operation is open while no COMMIT was accepted since the reset (among the responses resolved so "
         "far and those still queued)"),
        ("inv_aborted", f"cur_aborted && {c}op_open && {c}act_word{_field_bits('op_id', 'generation')} == cur_ids && "
                        "(cur_cand & q_ackc) == 0",
         "after the last ABORT (resolved or queued), an operation of its op_id/generation is open only if a COMMIT "
         "of those ids queued after it was accepted"),
        ("inv_pending_reset", "sus_r_now && ((mask_r_now & q_ackc) == 0 || (mask_r_now & ~rq_commit_now) != 0)",
         "a DATA frame admitted while the COMMITs ahead of it were unresolved: one of them was accepted"),
        ("inv_pending_abort", "sus_a_now && ((mask_a_now & q_ackc) == 0 || (mask_a_now & ~rq_commit_now) != 0)",
         "the same for one admitted after an ABORT of its op_id/generation: a COMMIT of those ids after the ABORT "
         "was accepted"),
    ]
    a = "prism_control0_admit_control_"
    # the first frame's ids in its response, as MyHDL writes them
    ids = f"{a}f_hdr[{FIELDS['generation'][0] + FIELDS['generation'][1]}-1:{FIELDS['op_id'][0]}]"
    ids_field = f"{ids}, 4'h8"
    # the first frame's activation, as the walk forms it; the broken variants activate on the first
    # frame's CONTROL reason as well (a refused COMMIT's mismatch is STAGED_MISMATCH), so that the
    # checks formed a cycle ahead follow the operation they open
    f_activate = f"{a}f_activate = ({a}f_commit_ok && (!{a}is_busy));"
    nack_activates = f"{a}f_activate = (({a}f_commit_ok && (!{a}is_busy)) || ({a}f_reason == {STAGED_MISMATCH}));"
    return Target(
        name="prism_control", summary="the node's validation, admission and STAGE/COMMIT/ABORT: one verdict per "
                                      "frame in processing order, nothing admitted after a reset or for an "
                                      "aborted operation",
        block=lambda: h.prism_control_harness, signals=signals, props=props,
        params=dict(CAPACITY=CONTROL_CAPACITY, RESPONSES=CONTROL_RESPONSES),
        parameters_text=f"CAPACITY={CONTROL_CAPACITY}, header {hdr} bits (the fields it reads), frm_beats 9 bits; "
                        f"at most {CONTROL_RESPONSES} responses queued or pending (environment); "
                        "response queue 16, hold queue 8, duplicate map 8 x 256 ranges (fixed)",
        assumes=("env_ok",), lemmas=tuple(lemmas), lemma_verilog=fold, depth=6, k=1, fault_depth=7, cover_depth=8,
        timeout=3600,
        faults={
            # mutations of the converted block (cosim/sim/faults.py edits)
            "abort_keeps_open": _mutant((Edit(f"{a}s_abort_o = ({a}s_control && {a}s_is_abort && {a}ids_active_1);",
                                              f"{a}s_abort_o = 1'b0;"),
                                         Edit(f"{a}is_open = {a}s_act_c;",
                                              f"{a}is_open = ({a}s_act_c || {a}f_abort);")),
                                        ("closed_after_abort",),
                                        "an ABORT is acknowledged and starts the drain but leaves the operation "
                                        "open, so its DATA frames are still admitted"),
            "dead": _mutant((Edit(f"{a}first_valid = 1'b1;", f"{a}first_valid = 1'b0;", count=3),
                             Edit(f"{a}second_valid = 1'b1;", f"{a}second_valid = 1'b0;", count=4)), ("verdict_live",),
                            "dead block: no frame is ever processed (no verdict, no response, no operation; every "
                            "safety property then holds vacuously)",
                            unreached=("verdict_order", "verdict_kind", "closed_after_reset", "closed_after_abort",
                                       "response_order")),
            "wrong_bank": _mutant(Edit(rf"r0_bank <= ({a}[fs]_bank);", r"r0_bank <= (\1 ^ 1);", regex=True, count=2),
                                  ("verdict_order",),
                                  "port 0's verdicts name the wrong bank"),
            # (the DATA rules' code, in the converted data_rules of each operation the rules read)
            "admit_as_drop": _mutant(Edit("    code = 1;", "    code = 0;", count=2), ("verdict_kind",),
                                     "an admitted DATA frame's counter event says CONTROL"),
            "nack_opens": _mutant(Edit(f_activate, nack_activates),
                                  ("closed_after_reset",),
                                  "a COMMIT refused for a mismatched op_id/generation (NACK) as the first frame of "
                                  "its cycle still opens the staged operation: DATA frames are admitted though no "
                                  "COMMIT was accepted",
                                  depth=8),     # STAGE, the refused COMMIT alone, then the DATA frame
            "nack_reopens_aborted": _mutant(Edit(f_activate, nack_activates),
                                            ("closed_after_abort",),
                                            "the same refused COMMIT, after an ABORT: the aborted operation, staged "
                                            "again, admits DATA frames though no COMMIT was accepted since the ABORT",
                                            depth=8),
            "response_wrong_ids": _mutant(Edit(ids_field, f"({ids} ^ {h.ID_BITS}'h1), 4'h8"), ("response_order",),
                                          "a response carries an op_id one off its request's"),
            "commit_held_idle": _mutant((Edit(f"{a}f_held = ({a}f_commit_ok && {a}is_busy);",
                                              f"{a}f_held = {a}f_commit_ok;"),
                                         Edit(f"{a}f_activate = ({a}f_commit_ok && (!{a}is_busy));",
                                              f"{a}f_activate = 1'b0;")),
                                        ("verdict_live",),
                                        "a COMMIT that passes its checks is held even while the datapath is idle"),
        })


def _control_lemmas():
    """The checker's waiting frames are the control block's hold queue (after this cycle's verdicts),
    field by field; its view of COMMITs and ABORTs bounds the operation state."""
    # a held frame in prism_control's hold queue: {port, bank[1:0], too_long, beats, header[HDR_BITS-1:0]}
    beats_lsb = HDR_BITS
    bank_lsb = beats_lsb + BEAT_COUNT_BITS + 1
    port_bit = bank_lsb + 2
    c = "prism_control0_"
    lemmas = [
        ("inv_waiting_bounds", "n_wait > 6 || n_wait0 > 3 || n_wait0 > n_wait || n_wait - n_wait0 > 3",
         "at most three frames per port wait for a verdict"),
        ("inv_waiting_port0", "n_wait0 != " + " + ".join(f"(n_wait > {i} && !waiting[{CE * i}])"
                                                         for i in range(CONTROL_DEPTH)),
         "the checker's count of port 0's waiting frames is right"),
        ("inv_hold_count", f"{c}hold_count + n_ans != n_wait",
         "the frames held for later are the waiting frames this cycle's verdicts do not answer"),
    ]
    for i in range(CONTROL_DEPTH):
        cases = []
        for j in range(3):
            if i + j >= CONTROL_DEPTH:
                continue
            m = f"{c}hold_mem[{i}]"      # the queue shifts: entry i is slot i
            b = CE * (i + j)
            w = lambda hi, lo: f"waiting[{b + hi}:{b + lo}]"
            differ = (f"{m}[{port_bit}] != waiting[{b}] || {m}[{bank_lsb + 1}:{bank_lsb}] != {w(2, 1)} || "
                      f"{m}{_field_bits('class', 'opcode')} != {w(10, 3)} || "
                      f"({m}[{beats_lsb + BEAT_COUNT_BITS - 1}:{beats_lsb}] == {BEAT_COUNT_BITS}'d1) != "
                      f"waiting[{b + 11}] || {m}{_field_bits('op_id', 'generation')} != {w(CE - 1, 12)}")
            cases.append(f"(n_ans == {j} && ({differ}))")
        lemmas.append((f"inv_hold_entry{i}", f"{c}hold_count > {i} && ({' || '.join(cases)})",
                       f"held frame {i} is the checker's waiting frame behind this cycle's verdicts (port, bank, "
                       "class, opcode, one beat, op_id/generation)"))
    lemmas += [
        ("inv_response_count", f"{c}resp_count != n_rq_now || {c}resp_count > {h.RQ} || "
                               f"{c}resp_wp != {c}resp_rp + {c}resp_count[3:0]",
         "the checker's mirror holds as many responses as the block's queue (at most 16, from its read pointer "
         "to its write pointer)"),
        ("inv_response_clean", "(rq_commit_now >> n_rq_now) != 0 || (rq_abort_now >> n_rq_now) != 0 || "
                               "(rq_commit_now & rq_abort_now) != 0 || (!sus_r_now && mask_r_now != 0) || "
                               "(!sus_a_now && mask_a_now != 0) || (cur_cand & ~rq_commit_now) != 0 || "
                               "(!cur_aborted && cur_cand != 0)",
         "the mirror holds zeros above its count; no entry is both a COMMIT's and an ABORT's; the masks name "
         "queued COMMITs only"),
    ]
    # slot by slot (the block's queue at a constant index; the mirror's entry at that slot's
    # position behind the read pointer), which the solver follows far more easily than the
    # queue's positions read through the moving pointer
    rq_op = _field_bits("request_opcode")
    for j in range(h.RQ):
        m = f"{c}resp_mem[{j}]"
        pos = f"((4'd{j} - {c}resp_rp) & 4'hf)"
        lemmas.append((f"inv_response_slot{j}",
                       f"{pos} < {c}resp_count && ((({m}{rq_op} == 4'd{OP_COMMIT}) != rq_commit_now[{pos}]) || "
                       f"(({m}{rq_op} == 4'd{OP_ABORT} && {m}{_field_bits('reason')} != 8'd{BAD_LENGTH}) != "
                       f"rq_abort_now[{pos}]) || "
                       f"{m}{_field_bits('op_id', 'generation')} != rq_ids_now[{h.ID_BITS} * {pos} +: {h.ID_BITS}])",
                       f"response queue slot {j}, when it holds a response, holds the mirror's entry at its position "
                       "(a COMMIT's, a one-beat ABORT's, its op_id/generation)"))
    return tuple(lemmas)


# ---------------------------------------------------------------------------------------------
# work_accounting (the package assertion a_work_conserved)
# ---------------------------------------------------------------------------------------------
ACCOUNTING_STAT_W = 6       # the estimator's saturating counters (> WORK_W)


def _accounting_target():
    g = distributor_geometry()
    sw = ACCOUNTING_STAT_W

    def signals():
        n, u = g.n_tgt, _u
        return dict(clk=_b(), rst=_rst(), s_axis_job_tdata=u(g.work_w), s_axis_job_tid=u(g.job_w),
                    s_axis_job_tvalid=_b(), retry_valid=_b(), retry_slot=u(g.slot_w), tgt_ready=u(n),
                    s_cmpl_valid=_b(), s_cmpl_slot=u(g.slot_w), s_cmpl_gen=u(g.gen_w), route_epoch=u(g.epoch_w),
                    tgt_enable=u(n), tgt_stall=u(n), s_axis_job_tready=_b(), retry_ready=_b(), m_job_valid=_b(),
                    m_job_target=u(g.tgt_w), m_job_slot=u(g.slot_w), m_job_gen=u(g.gen_w), m_job_tid=u(g.job_w),
                    m_job_work=u(g.work_w), m_job_epoch=u(g.epoch_w), m_job_retry=_b(), dispatch_fire=_b(),
                    retry_fire=_b(), retire_fire=_b(), retire_target=u(g.tgt_w), retire_work=u(g.work_w),
                    retire_tid=u(g.job_w), outstanding=u(n * g.cnt_w), outstanding_work=u(n * g.owork_w),
                    svc_rate=u(n * g.rate_w), rate_valid=u(n), accepted_work=u(n * sw), completed_work=u(n * sw),
                    fail_work_conserved=_b())

    props = [Prop("a_work_conserved", "fail_work_conserved", None,
                  "per target, accepted - completed work (the estimator's counters) = the distributor's outstanding "
                  "work, while neither counter saturates")]
    d = "work_distributor0_"
    on = lambda t: " + ".join(f"(({d}tbl_live[{j}] && {d}tbl_tgt[{j}] == {t}) ? {d}tbl_work[{j}] : 0)"
                              for j in range(g.n_job))
    lemmas = tuple((f"inv_target{t}_work", f"{d}out_work[{t}] != {on(t)}",
                    f"target {t}'s outstanding work is the work of the live jobs on it") for t in range(g.n_tgt))
    return Target(
        name="work_accounting", summary="the package's work accounting (distributor, service-rate estimator, "
                                        "assertion monitor): a_work_conserved asserted low",
        block=lambda: h.work_accounting_harness, signals=signals, props=props, params=dict(WINDOW=4),
        parameters_text=(f"N_TGT={g.n_tgt}, N_JOB={g.n_job}, GEN_W={g.gen_w}, WORK_W={g.work_w}, OWORK_W={g.owork_w}, "
                         f"estimator counters {sw} bits (saturation reachable), WINDOW=4, rates fed back to "
                         "POLICY_SERVICE_RATE; completions free"),
        lemmas=lemmas, depth=6, k=2, fault_depth=8,
        faults={"retry_as_work": _design_fault(PACKAGE_FAULTS["retry_as_work"], ("a_work_conserved",))})


_BUILDERS = {"axis_register": _axis_register_target, "prism_egress": _egress_target,
             "prism_ingress": _ingress_target, "prism_control": _control_target,
             "prism_fp32_bank": _fp32_bank_target, "collective_fabric": _fabric_target,
             "work_distributor": _distributor_target, "work_accounting": _accounting_target}
ALIASES = {"checked_work_distributor": "work_distributor", "egress": "prism_egress", "fabric": "collective_fabric",
           "ingress": "prism_ingress", "control": "prism_control", "fp32_bank": "prism_fp32_bank",
           "accelerator_package": "work_accounting", "a_work_conserved": "work_accounting"}
TARGET_NAMES = tuple(_BUILDERS)


def get_target(name):
    """The Target called `name` (or an alias); KeyError with the known names otherwise."""
    key = ALIASES.get(name, name)
    if key not in _BUILDERS:
        raise KeyError(name)
    return _BUILDERS[key]()
