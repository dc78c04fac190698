"""The formal targets: which harness, at which parameters, which properties, which
environment, and which broken variants must make which property fail.

Parameters are small on purpose: a proof is about every input sequence, so the data
widths and table sizes only need to be large enough for every case the control logic
distinguishes (each target says why its sizes are enough).
"""
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

from cosim.sim.tbutil import bit as _b, sync_reset as _rst, word as _u

from .sby import Prop


def _lemma_props(lemmas):
    """Lemmas ((id, bad condition over internal names, statement), ...) as properties."""
    return [Prop(i, None, None, s, expr=e, inside=True) for i, e, s in lemmas]


def _bit_props(table):
    """The properties of a harness table ((id, statement), ...): bit k of its prop_bad port each."""
    return [Prop(pid, "prop_bad", k, text) for k, (pid, text) in enumerate(table)]


@dataclass
class Fault:
    """A broken variant: block parameters that break it, the properties that must fail,
    extra environment for its job (Verilog statements, optional)."""
    params: dict
    props: Tuple[str, ...]
    what: str = ""
    env_verilog: str = ""
    depth: int = None        # BMC depth (default: the target's fault_depth)


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
    from cosim.formal import harness as h
    width = 4

    def signals():
        return dict(clk=_b(), rst=_rst(), s_axis_tdata=_u(width), s_axis_tlast=_b(), s_axis_tvalid=_b(),
                    m_axis_tready=_b(), track=_b(), s_axis_tready=_b(), m_axis_tdata=_u(width),
                    m_axis_tlast=_b(), m_axis_tvalid=_b(), prop_bad=_u(len(h.AXIS_REGISTER_PROPERTIES)),
                    env_ok=_b())

    props = _bit_props(h.AXIS_REGISTER_PROPERTIES)
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
    return Target(
        name="axis_register", summary="AXI-Stream register slice: stream rules on its output, no beat lost "
                                      "or duplicated", block=lambda: h.axis_register_harness,
        signals=signals, props=props, parameters_text=f"DATA_WIDTH={width} (the slice never looks at the data)",
        assumes=("env_ok",), lemmas=lemmas, depth=6, k=2,
        faults={"no_skid": Fault(dict(VARIANT="no_skid"), ("no_loss", "tracked_beat"),
                                 "test-only broken slice: a beat arriving while the output waits is dropped "
                                 "instead of parked in the skid buffer")})


# ---------------------------------------------------------------------------------------------
# prism_egress
# ---------------------------------------------------------------------------------------------
def _egress_fault(name):
    from hdl.node.prism_egress import FAULTS
    return FAULTS[name]


def _ingress_fault(name):
    from hdl.node.prism_ingress import FAULTS
    return FAULTS[name]


def _egress_target():
    from cosim.formal import harness as h
    width, resp_w = 4, 3

    def signals():
        return dict(clk=_b(), rst=_rst(), resp_valid=_b(), resp_data=_u(resp_w), res_valid=_b(),
                    res_data=_u(width), res_last=_b(), res_mask=_u(2), m_axis_0_tready=_b(), m_axis_1_tready=_b(),
                    resp_pop=_b(), res_ready=_b(), m_axis_0_tdata=_u(width), m_axis_0_tvalid=_b(),
                    m_axis_0_tlast=_b(), m_axis_1_tdata=_u(width), m_axis_1_tvalid=_b(), m_axis_1_tlast=_b(),
                    sent_response=_b(), sent_result0=_b(), sent_result1=_b(),
                    prop_bad=_u(len(h.EGRESS_PROPERTIES)), env_ok=_b())

    props = _bit_props(h.EGRESS_PROPERTIES)
    e = "prism_egress0_"
    lemmas = (
        ("inv_valid_registers", f"m_axis_0_tvalid != {e}out0_valid || m_axis_1_tvalid != {e}out1_valid",
         "the port valids are the output registers"),
        ("inv_result_tag", f"{e}out0_valid && ({e}result0 != m_axis_0_tdata[{width - 1}])",
         "port 0's register holds a RESULT beat exactly when its beat carries the RESULT tag"),
        ("inv_tx1_results_only", f"{e}out1_valid && !m_axis_1_tdata[{width - 1}]",
         "port 1's register only ever holds RESULT beats"),
        ("inv_frame_open", f"in_frame0 && {e}out0_valid && !{e}result0",
         "inside a RESULT frame port 0's register holds RESULT beats only"),
        ("inv_frame_locked", f"in_frame0 && !({e}locked0 || ({e}out0_valid && m_axis_0_tlast))",
         "inside a RESULT frame port 0 stays locked until the frame's last beat is loaded"),
        ("inv_open_frame_locks", f"{e}out0_valid && {e}result0 && !m_axis_0_tlast && !{e}locked0",
         "a RESULT beat without TLAST in port 0's register keeps port 0 locked to its frame"),
        ("inv_taken_tx0", f"{e}taken0 && !(waiting_res && held_res[{width + 1}])",
         "a beat loaded early into port 0 is the sender's waiting beat, masked for port 0"),
        ("inv_taken_tx1", f"{e}taken1 && !(waiting_res && held_res[{width + 2}])",
         "the same for port 1"),
        ("inv_count_tx0", f"egress_result_count0_diff != $signed({{2'b0, {e}out0_valid && {e}result0}}) - "
                          f"$signed({{2'b0, {e}taken0}})",
         "accepted - sent RESULT beats of port 0 = (a RESULT beat waits in its register) - (beat loaded early)"),
        ("inv_count_tx1", f"egress_result_count1_diff != $signed({{2'b0, {e}out1_valid}}) - "
                          f"$signed({{2'b0, {e}taken1}})",
         "the same for port 1"),
    )
    return Target(
        name="prism_egress", summary="the node's egress: stream rules on both TX ports, whole frames, "
                                     "CONTROL responses only on TX port 0, no RESULT beat lost or duplicated",
        block=lambda: h.prism_egress_harness, signals=signals, props=props,
        parameters_text=f"beat {width} bits, response header {resp_w} bits (the egress moves data without "
                        "looking at it; the top bit tags RESULT beats)",
        assumes=("env_ok",), lemmas=lemmas, depth=8, k=2,
        faults={"no_frame_lock": Fault(dict(FAULT=_egress_fault("no_frame_lock")), ("whole_frames_tx0",),
                                       "test-only FAULT_NO_FRAME_LOCK: port 0 forgets that it is inside a RESULT "
                                       "frame, so a response may cut into it")})


# ---------------------------------------------------------------------------------------------
# collective_fabric
# ---------------------------------------------------------------------------------------------
FABRIC_SMALL = dict(members=3, stripes=2, paths=2, participants=4, s_mb=8, a2a_s_mb=8, acc_per_leaf=2)


def fabric_config():
    from cosim.fabric.fabric_properties import FabricConfig
    return FabricConfig(**FABRIC_SMALL)


def _fabric_target():
    from cosim.fabric.fabric_properties import PROPERTIES, fabric_params, fabric_signals

    cfg = fabric_config()
    props = [Prop(p.id, "violations", p.bit, p.statement) for p in PROPERTIES]
    params = fabric_params(cfg, "")
    # Deeper BMC for the variants whose fault needs a history: B4 and B5 a whole collective (start,
    # 2 (N - 1) steps, one more cycle); C4 and D1 more than PATHS placements (two cycles each through
    # the hash unit); D5 every path loaded.  MEMBERS x STRIPES != MEMBERS + STRIPES, so E5's fault shows.
    long_faults = {"B4": 14, "B5": 14, "C4": 12, "D1": 12, "D5": 12}
    faults = {p.id: Fault(dict(FAULT=p.id), (p.id,), p.fault, depth=long_faults.get(p.id)) for p in PROPERTIES}
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
    from cosim.package.package_bench import Geometry
    return Geometry(n_tgt=2, tgt_w=1, slot_w=2, gen_w=2, work_w=4, job_w=2, epoch_w=2, rate_w=4, cnt_w=3,
                    owork_w=6)


def _distributor_target():
    from cosim.package.package_bench import checked_distributor_signals
    from hdl.package.work_distributor import (FAULT_EPOCH_REWRITE, FAULT_NO_GEN_CHECK, FAULT_RETRY_AS_JOB,
                                      FAULT_TIE_LOWEST, POLICY_ROUND_ROBIN)
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
            "hdl.package.checked_work_distributor", fromlist=["checked_work_distributor"]).checked_work_distributor,
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
            "no_gen_check": Fault(dict(FAULT=FAULT_NO_GEN_CHECK), ("a_retire_once",),
                                  "FAULT_NO_GEN_CHECK: retirement ignores the generation"),
            "retry_as_job": Fault(dict(FAULT=FAULT_RETRY_AS_JOB), ("a_retry_creates_no_job",),
                                  "FAULT_RETRY_AS_JOB: a transport retry allocates a new job entry"),
            "epoch_rewrite": Fault(dict(FAULT=FAULT_EPOCH_REWRITE), ("a_route_epoch_stable",),
                                   "FAULT_EPOCH_REWRITE: a route-epoch change is written into every live entry"),
            "round_robin": Fault(dict(POLICY=POLICY_ROUND_ROBIN), ("a_no_dispatch_to_disabled",),
                                 "POLICY_ROUND_ROBIN: a disabled target stays in the rotation"),
            "tie_lowest": Fault(dict(FAULT=FAULT_TIE_LOWEST), ("a_bounded_imbalance",),
                                "FAULT_TIE_LOWEST: service-rate ties go to the lowest index", env_verilog=balanced),
        })


# ---------------------------------------------------------------------------------------------
# prism_ingress
# ---------------------------------------------------------------------------------------------
def _ingress_target():
    from cosim.formal import harness as h
    width, hdr = 96, 96          # the narrowest the block accepts (the header's fields)

    def signals():
        return dict(clk=_b(), rst=_rst(), s_axis_tdata=_u(width), s_axis_tvalid=_b(), s_axis_tlast=_b(),
                    room_ok=_b(), res_valid=_b(), res_admit=_b(), res_bank=_u(2), rd_release=_b(), mem_raddr=_u(10),
                    s_axis_tready=_b(), frm_valid=_b(), frm_header=_u(hdr), frm_beats=_u(9), frm_too_long=_b(),
                    frm_bank=_u(2), unsupported=_b(), in_frame=_b(), rd_avail=_b(), rd_bank=_u(2),
                    rd_header=_u(hdr), rd_next_avail=_b(), rd_next_bank=_u(2), rd_next_header=_u(hdr),
                    mem_rdata=_u(width), prop_bad=_u(len(h.INGRESS_PROPERTIES)), env_ok=_b())

    props = _bit_props(h.INGRESS_PROPERTIES)
    # Lemmas: the checker's frame tracking and bank queues equal the ingress's own state
    # (frame_open, draining, beat_count, bank_states, queue); with them the induction closes.
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
        ("inv_reader_queue", f"bank_fifo1_q != {r}queue || bank_fifo1_n != {r}q_count",
         "the ingress's reader queue is the admitted banks in admission order"),
        ("inv_pending_clean", clean(0), "the pending queue holds zeros above its count"),
        ("inv_admitted_clean", clean(1), "the admitted queue holds zeros above its count"),
        ("inv_pending_distinct", distinct(0), "frames waiting for a verdict are in distinct banks"),
        ("inv_admitted_distinct", distinct(1), "admitted frames are in distinct banks"),
        ("inv_frame_bank", f"frm_valid && {r}wr_bank != (frm_bank == 2 ? 0 : frm_bank + 1)",
         "a completed frame's bank is the one before the bank to fill next"),
    ]
    for b in range(3):
        st = f"{r}bank_states[{2 * b + 1}:{2 * b}]"
        lemmas += [
            (f"inv_bank{b}_filling", f"({st} == 1) != (frame_open && stored && {r}wr_bank == {b})",
             f"bank {b} is filling exactly while a stored frame is open in it"),
            (f"inv_bank{b}_pending", f"({st} == 2) != ({member(0, b)} || (frm_valid && frm_bank == {b}))",
             f"bank {b} waits for a verdict exactly while its frame is in the pending queue (or completes now)"),
            (f"inv_bank{b}_admitted", f"({st} == 3) != ({member(1, b)})",
             f"bank {b} is admitted exactly while it is in the reader queue"),
        ]
    return Target(
        name="prism_ingress", summary="the node's receive side: one verdict request per stored frame, every beat "
                                      "counted, a bank never holds two frames, the reader sees each admitted "
                                      "frame once, in order",
        block=lambda: h.prism_ingress_harness, signals=signals, props=props,
        parameters_text=f"tdata {width} bits, header {hdr} bits, 3 banks of 256 payload beats (fixed by the "
                        "protocol), frm_beats 9 bits",
        assumes=("env_ok",), lemmas=tuple(lemmas), depth=10, k=4, timeout=900,
        faults={"bank_reuse": Fault(dict(FAULT=_ingress_fault("bank_reuse")), ("bank_free",),
                                    "test-only FAULT_BANK_REUSE: a header beat is taken whatever the state of the "
                                    "bank to fill, so a frame overwrites a bank that still holds one")})


# ---------------------------------------------------------------------------------------------
# prism_fp32_bank (the node's FP32_ARRIVAL banks)
# ---------------------------------------------------------------------------------------------
FP32_BANK_SMALL = dict(BANK=5, BANKS=16, ROWS=2, FP32_LATENCY=4)


def _fp32_bank_target():
    from cosim.formal import harness as h
    from hdl.node.prism_fp32_bank import FAULTS
    p = FP32_BANK_SMALL
    L = p["FP32_LATENCY"]

    def signals():
        return dict(clk=_b(), rst=_rst(), clear=_b(), p0_take=_b(), p0_row=_u(8), p0_lanes=_u(64), p0_value=_u(32),
                    p1_take=_b(), p1_row=_u(8), p1_lanes=_u(64), p1_value=_u(32), rd_take=_b(), rd_row=_u(8),
                    p0_free=_b(), p1_free=_b(), rd_free=_b(), o_valid=_b(), o_data=_u(512),
                    prop_bad=_u(len(h.FP32_BANK_PROPERTIES)), env_ok=_b())

    props = _bit_props(h.FP32_BANK_PROPERTIES)
    lemmas = (("inv_history", "seen != prism_fp32_bank0_hist",
               f"the checker's last {L} operations are the bank's reservation history"),)
    return Target(
        name="prism_fp32_bank", summary="one FP32_ARRIVAL bank of the node with its 16 lanes: reservations "
                                        "prevent a read-after-write hazard, and stall nothing else",
        block=lambda: h.prism_fp32_bank_harness, signals=signals, props=props, params=dict(p),
        parameters_text=(f"BANK={p['BANK']} of BANKS={p['BANKS']}, ROWS={p['ROWS']} (ranges {p['BANK']} and "
                         f"{p['BANK'] + p['BANKS']}), FP32_LATENCY={L}; 16 lanes with their fp32_add; every "
                         "element of a group carries one free 32-bit value"),
        assumes=("env_ok",), lemmas=lemmas, depth=8, k=2, fault_depth=10,
        faults={"short_reservation": Fault(dict(FAULT=FAULTS["short_reservation"]), ("no_raw_hazard",),
                                           "test-only FAULT_SHORT_RESERVATION: a range stays reserved for one "
                                           "operation fewer than the adder's latency")})


# ---------------------------------------------------------------------------------------------
# prism_control (validation, admission, STAGE/COMMIT/ABORT)
# ---------------------------------------------------------------------------------------------
CONTROL_CAPACITY = 32


def _control_target():
    from cosim.formal import harness as h
    from hdl.node.prism_control import FAULTS
    hdr = 96

    def signals():
        s = dict(clk=_b(), rst=_rst())
        for p in (0, 1):
            s.update({f"f{p}_valid": _b(), f"f{p}_header": _u(hdr), f"f{p}_beats": _u(9), f"f{p}_too_long": _b(),
                      f"f{p}_bank": _u(2)})
        s.update(resp_pop=_b(), op_finished=_b(), dp_idle=_b(), ord_pop=_b())
        for p in (0, 1):
            s.update({f"r{p}_valid": _b(), f"r{p}_admit": _b(), f"r{p}_bank": _u(2)})
        for p in (0, 1):
            s.update({f"ev{p}_valid": _b(), f"ev{p}_code": _u(4)})
        s.update(resp_valid=_b(), resp_data=_u(44), room_ok=_b(), clear=_b(), act_policy=_u(2), act_in_fmt=_u(2),
                 act_out_fmt=_u(3), act_count=_u(13), act_contributors=_u(8), act_expected=_u(4),
                 act_recipients=_u(2), act_op_id=_u(8), act_generation=_u(16), act_busy=_b(), ord_valid=_b(),
                 ord_port=_b(), prop_bad=_u(len(h.CONTROL_PROPERTIES)), env_ok=_b())
        return s

    props = _bit_props(h.CONTROL_PROPERTIES)
    lemmas = _control_lemmas()
    return Target(
        name="prism_control", summary="the node's validation, admission and STAGE/COMMIT/ABORT: one verdict per "
                                      "frame in processing order, nothing admitted after a reset or for an "
                                      "aborted operation",
        block=lambda: h.prism_control_harness, signals=signals, props=props, params=dict(CAPACITY=CONTROL_CAPACITY),
        parameters_text=f"CAPACITY={CONTROL_CAPACITY}, header {hdr} bits (the fields it reads), frm_beats 9 bits; "
                        "response queue 16, hold queue 8, duplicate map 8 x 256 ranges (fixed)",
        assumes=("env_ok",), lemmas=lemmas, depth=3, k=2, fault_depth=6, timeout=1500,
        faults={"abort_keeps_open": Fault(dict(FAULT=FAULTS["abort_keeps_open"]), ("closed_after_abort",),
                                          "test-only FAULT_ABORT_KEEPS_OPEN: an ABORT is acknowledged but leaves the "
                                          "operation open")})


def _control_lemmas():
    """The checker's waiting frames are the control block's hold queue (after this cycle's verdicts),
    field by field; its view of COMMITs and ABORTs bounds the operation state."""
    from .harness import CE, CONTROL_DEPTH
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
            m = f"{c}hold_mem[{c}hold_rp + 3'd{i}]"
            b = CE * (i + j)
            w = lambda hi, lo: f"waiting[{b + hi}:{b + lo}]"
            differ = (f"{m}[108] != waiting[{b}] || {m}[107:106] != {w(2, 1)} || {m}[7:0] != {w(10, 3)} || "
                      f"({m}[104:96] == 9'd1) != waiting[{b + 11}] || {m}[31:8] != {w(35, 12)}")
            cases.append(f"(n_ans == {j} && ({differ}))")
        lemmas.append((f"inv_hold_entry{i}", f"{c}hold_count > {i} && ({' || '.join(cases)})",
                       f"held frame {i} is the checker's waiting frame behind this cycle's verdicts (port, bank, "
                       "class, opcode, one beat, op_id/generation)"))
    lemmas += [
        ("inv_closed", f"closed_after && {c}op_open",
         "no operation is open while no COMMIT was processed since the reset"),
        ("inv_aborted", f"aborted_after && {c}op_open && {c}act_word[31:8] == aborted_ids_after",
         "an operation with the op_id/generation of an ABORT processed since the last COMMIT is not open"),
    ]
    return tuple(lemmas)


# ---------------------------------------------------------------------------------------------
# work_accounting (the package assertion a_work_conserved)
# ---------------------------------------------------------------------------------------------
ACCOUNTING_STAT_W = 6       # the estimator's saturating counters (> WORK_W)


def _accounting_target():
    from cosim.formal import harness as h
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
        faults={"retry_as_work": Fault(dict(VARIANT="retry_as_work"), ("a_work_conserved",),
                                       "FAULT_RETRY_AS_WORK (accelerator_package's variant): the estimator counts a "
                                       "transport retry as retired work")})


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
