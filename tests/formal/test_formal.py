"""Formal proofs (cosim/formal, `prism formal`): verdicts per property, the cover of each
property's trigger, broken variants that fail with a counterexample (or whose triggers become
unreachable), and the counterexample replayed on Icarus and MyHDL reaching the same failure
at the same cycle.

The default run proves the four fast targets (axis_register, prism_egress, prism_ingress, one
FP32 bank) with every trigger covered, shows the dead designs caught, the FP32 lanes one cycle
too slow losing an update, a bit flip on TX port 1 caught by the egress's tracked beat, an
unreached cover failing a target and a refused COMMIT not reopening an operation, and breaks one
variant of each other kind (the stream harnesses, the FP32 bank, the package monitor and its
work accounting, the fabric monitor).  The slow tests prove every target and break every broken
variant (every stream and node variant, 34 fabric faults, 5 package faults)."""
import json

import pytest

from cosim.cli import main
from cosim.formal import replay, run_target, simulate
from cosim.formal.runner import UNREACHED, read_witness
from cosim.formal.sby import (FormalToolError, Prop, START_STEPS, formal_top, parse_cover_log, parse_engine_log,
                              with_lemmas)
from cosim.formal.targets import TARGET_NAMES, get_target

STREAM_AND_NODE = ("axis_register", "prism_egress", "prism_ingress", "prism_fp32_bank", "prism_control")
FAST = ("axis_register", "prism_egress", "prism_ingress", "prism_fp32_bank")


# ---------------------------------------------------------------------------------------------
# Reading the tools' output, writing their input (no tools needed)
# ---------------------------------------------------------------------------------------------
def test_witness_bits_are_read_lsb_first_from_the_end(tmp_path):
    # Yosys witness: each step's bit string is read from its end; signals in list order,
    # each least significant bit first; init-only signals only in step 0 after the others.
    yw = dict(format="Yosys Witness Trace", signals=[
        dict(path=["\\a"], width=3, offset=0, init_only=False),
        dict(path=["\\b"], width=1, offset=0, init_only=False),
        dict(path=["\\dut", "\\r"], width=2, offset=0, init_only=True)],
        steps=[dict(bits="10" + "1" + "011"), dict(bits="0" + "110")])
    path = tmp_path / "t.yw"
    path.write_text(json.dumps(yw))
    assert read_witness(str(path)) == [dict(a=0b011, b=1), dict(a=0b110, b=0)]


def smtbmc_log(tmp_path, *messages):
    """An engine's logfile.txt as smtbmc writes it: each message after its time stamp."""
    log = tmp_path / "logfile.txt"
    log.write_text("\n".join(f"##   0:00:00  {m}" for m in messages))
    return str(log)


def test_engine_log_pairs_each_failure_with_its_own_trace(tmp_path):
    log = smtbmc_log(tmp_path, "Checking assertions in step 4..", "BMC failed!",
                     "Assert failed in prism_formal_top: prop_B",
                     "Writing trace to VCD file: engine_0/trace0.vcd",
                     "Writing trace to Yosys witness file: engine_0/trace0.yw",
                     "Checking assertions in step 6..",
                     "Assert failed in prism_formal_top: formal_top.v:9.5-9.30 (prop_A)",
                     "Writing trace to VCD file: engine_0/trace1.vcd",
                     "Writing trace to Yosys witness file: engine_0/trace1.yw",
                     "Status: failed")
    res = parse_engine_log(log, ["prop_A", "prop_B"])
    assert res["status"] == "FAILED"
    assert res["failures"] == [("prop_B", 4, dict(vcd="engine_0/trace0.vcd", yw="engine_0/trace0.yw")),
                               ("prop_A", 6, dict(vcd="engine_0/trace1.vcd", yw="engine_0/trace1.yw"))]


def test_cover_log_gives_each_trigger_its_step_or_unreached(tmp_path):
    # smtbmc in cover mode: a line per trigger reached (with the step), its traces, and at the end
    # one line per trigger never reached
    log = smtbmc_log(tmp_path, "Checking cover reachability in step 3..",
                     "Reached cover statement in step 3 at prism_formal_top: cov_a",
                     "Reached cover statement in step 3 at prism_formal_top.dut: cov_b",
                     "Writing trace to VCD file: engine_0/trace0.vcd",
                     "Checking cover reachability in step 7..",
                     "Unreached cover statement at prism_formal_top.dut: cov_c",
                     "Status: failed")
    res = parse_cover_log(log, ["cov_a", "cov_b", "cov_c"])
    assert res["reached"] == dict(cov_a=3, cov_b=3) and res["unreached"] == ["cov_c"]
    assert res["traces"]["cov_a"] == dict(vcd="engine_0/trace0.vcd") and res["status"] == "FAILED"


def test_formal_top_frees_every_input_and_starts_like_the_replay():
    ports = dict(clk=("input", 1), rst=("input", 1), a=("input", 4), k=("input", 2), y=("output", 2),
                 bad=("output", 1))
    p = Prop("p", "bad", cover="y == 2")
    text = formal_top("h", ports, [p], assumes=("y != 3",), env_verilog="assume(a != 5);", covers=[p],
                      stable=("k",))
    assert "input wire [3:0] a" in text and "wire [1:0] y;" in text
    assert "h dut(.clk(clk), .rst(rst), .a(a), .k(k), .y(y), .bad(bad));" in text
    assert "if (f_step < 2'd2) assume(rst);" in text and "if (f_step != 2'd3) assume(a == 0);" in text
    assert "prop_p: assert(!(bad));" in text and "assume(y != 3);" in text
    assert "if (f_step == 2'd3) begin\n        assume(a != 5);" in text
    # the trigger is covered once the inputs are free; a stable input is free but constant
    assert "if (f_step == 2'd3 && !rst) cov_p: cover(y == 2);" in text
    assert "if (f_step != 2'd0) assume(k == f_held_k);" in text


def test_a_trigger_or_lemma_naming_an_undeclared_signal_is_an_error():
    # yosys would take an undeclared name as a new, free wire: a lemma over it checks nothing and
    # a trigger over it is "reached" by any value
    text = "module h(clk, rst);\ninput clk;\ninput rst;\nreg [1:0] count = 0;\nendmodule\n"
    assert "cov_p: cover(count == 2)" in with_lemmas(text, "h", [], [Prop("p", "x", cover="count == 2",
                                                                               cover_inside=True)])
    with pytest.raises(FormalToolError, match="cuont"):
        with_lemmas(text, "h", [Prop("inv", None, expr="cuont == 3 && 4'd2 != count", inside=True)])
    with pytest.raises(FormalToolError, match="no port"):
        formal_top("h", dict(clk=("input", 1), rst=("input", 1)), [], covers=[Prop("p", "x", cover="count")])


def test_every_target_names_its_properties_and_broken_variants():
    assert set(TARGET_NAMES) == {"axis_register", "prism_egress", "prism_ingress", "prism_control", "prism_fp32_bank",
                                 "collective_fabric", "work_distributor", "work_accounting"}
    fabric = get_target("collective_fabric")
    assert len(fabric.props) == 34 and len(fabric.faults) == 34
    assert all(f.props == (pid,) for pid, f in fabric.faults.items())
    dist = get_target("work_distributor")
    assert sorted(p.port for p in dist.props) == sorted(
        ["fail_retire_once", "fail_retry_creates_no_job", "fail_route_epoch_stable", "fail_no_dispatch_to_disabled",
         "fail_bounded_imbalance"])
    assert {f.props[0] for f in dist.faults.values()} == {p.id for p in dist.props}
    # every target has a broken variant, and each names properties of its own target
    for name in TARGET_NAMES:
        t = get_target(name)
        assert t.faults, name
        ids = {p.id for p in t.props}
        assert all(set(f.props) <= ids and set(f.unreached) <= ids for f in t.faults.values()), name
    assert get_target("work_accounting").props[0].id == "a_work_conserved"
    # the stream and node targets: every property has a trigger to cover and a broken variant
    # that makes it fail; each stream target has a dead variant
    for name in STREAM_AND_NODE:
        t = get_target(name)
        assert all(p.cover for p in t.props), name
        failing = {pid for f in t.faults.values() for pid in f.props}
        assert {p.id for p in t.props} <= failing, (name, {p.id for p in t.props} - failing)
        assert "dead" in t.faults and t.faults["dead"].unreached, name
    assert sum(len(get_target(n).props) for n in STREAM_AND_NODE) >= 23 + 10


def test_every_mutation_applies_to_its_converted_harness():
    # an edit that no longer matches the converter's output is an error (FaultAnchorError), not a
    # variant that silently equals the correct design
    import os
    from cosim.formal.runner import build_harness, design_text
    for name in STREAM_AND_NODE:
        t = get_target(name)
        for fault, f in t.faults.items():
            if f.edits:
                folder, module, _, _ = build_harness(t, fault)
                path = os.path.join(folder, module + ".v")
                with open(path) as fh:
                    assert design_text(t, fault, path) != fh.read(), (name, fault)


# ---------------------------------------------------------------------------------------------
# Proofs with their covers, dead designs, counterexamples (the tools)
# ---------------------------------------------------------------------------------------------
# the FP32 bank's proof takes 17 s (16 lanes, a cover job to depth 18): in the slow set; its broken
# variants (lanes one cycle slow, a short reservation) fail in the default run
@pytest.mark.parametrize("target", [pytest.param(t, marks=pytest.mark.slow) if t == "prism_fp32_bank" else t
                                    for t in FAST])
def test_fast_target_is_proved_and_every_trigger_is_reached(target, tmp_path):
    verdicts = run_target(target, out=str(tmp_path))
    assert len(verdicts) == len(get_target(target).all_props())
    assert all(v.verdict == "proved" and v.k >= 1 for v in verdicts), [v.line() for v in verdicts]
    props = [v for v in verdicts if not v.prop.startswith("inv_")]
    # each property's trigger is reached by some run, after the start (so no proof is vacuous)
    assert all(v.cover is not None and v.cover >= START_STEPS for v in props), [(v.prop, v.cover) for v in props]


def _caught(target, fault, tmp_path, depth=None, myhdl=True):
    """The broken variant is caught: each property it names fails (and its counterexample replays
    at the solver's cycle, on Icarus, and on MyHDL unless it is an edit of the Verilog), each
    trigger it names is unreachable."""
    verdicts = run_target(target, fault=fault, out=str(tmp_path), depth=depth)
    f = get_target(target).faults[fault]
    assert [v.prop for v in verdicts] == list(dict.fromkeys(tuple(f.props) + tuple(f.unreached)))
    assert all(v.caught for v in verdicts), [v.line() for v in verdicts]
    for v in verdicts:
        if v.prop in f.props:
            assert v.verdict == "failed" and v.vcd.endswith(".vcd") and v.stimulus, v.line()
            r = replay(v.stimulus, myhdl=myhdl)
            assert r.first_icarus == r.expected_cycle == v.depth - 2, r.line()
            if myhdl and not f.verilog_only:
                assert r.first_myhdl == r.expected_cycle and r.samples_agree, r.line()
            assert r.reproduced
        if v.prop in f.unreached:
            assert v.cover == UNREACHED, v.line()
    return verdicts


@pytest.mark.parametrize("target", ["axis_register", "prism_egress", "prism_ingress"])
def test_a_dead_design_fails_its_liveness_and_leaves_every_trigger_unreached(target, tmp_path):
    # a design that never moves proves every "nothing goes wrong" property; its covers show that
    # nothing was checked, and the bounded liveness fails (the slice never raises tready, the
    # egress never loads a port, the ingress never takes a beat)
    verdicts = _caught(target, "dead", tmp_path)
    assert any(v.verdict == "failed" and v.prop.endswith("_live") for v in verdicts)
    assert sum(v.cover == UNREACHED for v in verdicts) >= 4


def test_an_unreached_trigger_fails_the_target(tmp_path, capsys, monkeypatch):
    # the same slice, with one property's trigger made impossible: its proof still closes, but
    # `prism formal` fails the target and says why
    from cosim.formal import targets
    build = targets._BUILDERS["axis_register"]

    def impossible():
        t = build()
        t.props[3].cover, t.props[3].cover_inside = "1'b0", False
        return t
    monkeypatch.setitem(targets._BUILDERS, "axis_register", impossible)
    assert main(["formal", "axis_register", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "UNREACHED (depth 6)" in out
    assert "FAIL axis_register no_loss: its trigger is never reached within 6 steps" in out
    assert "no_duplicate" not in out.split("prism formal: FAIL", 1)[1]


def test_fp32_lanes_one_cycle_slower_than_the_reservations_lose_an_update(tmp_path):
    # the bank with its adders abstracted proves that every read-out hands out the sum of what was
    # added; with the lanes one cycle slower than the reservation window (the bank unchanged) a value
    # added as soon as its range is free reads the row before the earlier sum is written back, and
    # the read-out misses it: the same counterexample on Icarus and on MyHDL
    verdicts = _caught("prism_fp32_bank", "slow_lanes", tmp_path)
    stim = json.loads(open(verdicts[0].stimulus).read())
    icarus, mine, _ = simulate("prism_fp32_bank", stim["vectors"], fault="slow_lanes", myhdl=True)
    assert icarus == mine
    cycle = verdicts[0].depth - 2
    # the failing cycle is a read-out (the solver may put another range's read-out just before it: the
    # bank takes a read-out offered beside groups on other banks every cycle)
    assert icarus[cycle]["o_valid"]


def test_fp32_short_reservation_lets_a_hazard_through_and_replays(tmp_path):
    failed = _caught("prism_fp32_bank", "short_reservation", tmp_path)
    latency = get_target("prism_fp32_bank").params["FP32_LATENCY"]
    assert failed[0].depth - 2 > latency      # the hazard needs the same range again FP32_LATENCY ops later


def test_egress_bit_flip_on_tx1_fails_the_tracked_beat(tmp_path):
    # bit 0 of every RESULT beat on TX port 1 inverted: the stream rules and counts still hold, the
    # tracked beat's data does not
    _caught("prism_egress", "tx1_flips_bit0", tmp_path)


def _control_frames():
    from golden.node.protocol import Abort, Commit, Data, Stage
    from spec.formats import FMT_FP32
    from spec.frames import HDR_BITS
    x, y = dict(op_id=5, generation=1), dict(op_id=6, generation=1)
    stage = Stage(policy=0, in_format=FMT_FP32, result_format=FMT_FP32, mode=0, count=16, contributors=1,
                  recipients=1, **x).encode()[0]
    data = Data(contributor=0, fmt=FMT_FP32, offset=0, values=(0,) * 16, **x).encode()
    frame = lambda p, hdr, beats=1, bank=0: {f"f{p}_valid": 1, f"f{p}_header": hdr & ((1 << HDR_BITS) - 1),
                                            f"f{p}_beats": beats, f"f{p}_bank": bank}
    none = {"f0_valid": 0, "f1_valid": 0}
    data0 = frame(0, data[0], len(data), 1)
    # after the reset: STAGE X, COMMIT Y (refused: STAGED_MISMATCH; the first frame of its cycle, the
    # slot the broken variants edit), then a DATA frame of X
    # (the control reads a frame's digest a cycle ahead, from the header its port receives)
    ahead = {"f0_next_header": data[0] & ((1 << HDR_BITS) - 1)}
    after_reset = [{**frame(0, stage), "f1_valid": 0, "resp_pop": 1},
                   {**frame(0, Commit(**y).encode()[0], bank=1), "f1_valid": 0, "resp_pop": 1, **ahead},
                   {**data0, "f1_valid": 0}, none, none]
    # STAGE X + COMMIT X (accepted), ABORT X + STAGE X, COMMIT Y (refused), a DATA frame of X
    after_abort = [{**frame(0, stage), **frame(1, Commit(**x).encode()[0]), "resp_pop": 1},
                   {**frame(0, Abort(**x).encode()[0], bank=1), **frame(1, stage, bank=1)},
                   {**frame(0, Commit(**y).encode()[0], bank=2), "f1_valid": 0, **ahead},
                   {**frame(0, data[0], len(data), 0), "f1_valid": 0}, none, none]
    return after_reset, after_abort


def test_a_refused_commit_does_not_reopen_the_operation():
    # Hand-written frames on the control block's harness (Icarus; MyHDL too for the correct block).
    # A COMMIT refused with NACK leaves the operation closed: the correct block drops the DATA frame
    # that follows (no operation), and the checker, which counts a COMMIT only when the node accepted
    # it, flags the broken variant in which the refused COMMIT opens the staged operation anyway.
    from cosim.formal.harness import CONTROL_PROPERTIES
    bit = {pid: k for k, (pid, _) in enumerate(CONTROL_PROPERTIES)}
    after_reset, after_abort = _control_frames()
    for vectors, prop in ((after_reset, "closed_after_reset"), (after_abort, "closed_after_abort")):
        good, mine, _ = simulate("prism_control", vectors, myhdl=True)
        assert good == mine
        assert all(s["prop_bad"] == 0 and s["env_ok"] for s in good)
        verdicts = [s for s in good if s["r0_valid"] and s["ev0_code"] != 0]
        assert len(verdicts) == 1 and not verdicts[0]["r0_admit"]        # the DATA frame is dropped
        fault = "nack_opens" if prop == "closed_after_reset" else "nack_reopens_aborted"
        broken, _, mutation = simulate("prism_control", vectors, fault=fault)
        assert mutation
        admitted = [c for c, s in enumerate(broken) if s["r0_valid"] and s["r0_admit"]]
        assert admitted and broken[admitted[0]]["prop_bad"] == 1 << bit[prop], broken[admitted[0]]


def test_broken_register_slice_loses_a_beat_and_the_counterexample_replays(tmp_path):
    _caught("axis_register", "no_skid", tmp_path)


def test_package_broken_variant_fails_its_assertion_and_replays(tmp_path):
    _caught("work_distributor", "no_gen_check", tmp_path, depth=8)


@pytest.mark.slow          # 11 s: the fabric's conversion and BMC (the replay path is the package's and the slice's)
def test_fabric_broken_variant_fails_its_property_and_replays(tmp_path):
    _caught("collective_fabric", "B1", tmp_path, depth=4)


@pytest.mark.parametrize("target, fault", [("prism_egress", "no_frame_lock"), ("prism_ingress", "bank_reuse"),
                                           ("work_accounting", "retry_as_work")])
def test_stream_and_accounting_broken_variants_fail_and_replay(target, fault, tmp_path):
    # egress: a response cuts into a RESULT frame on TX port 0; ingress: a frame overwrites a bank
    # that still holds one; the package: a transport retry counted as retired work breaks
    # a_work_conserved (each a few seconds of BMC)
    _caught(target, fault, tmp_path)


def test_without_its_lemmas_the_induction_does_not_close(tmp_path):
    # the correct slice never fails (proved above, so at no depth); without the lemmas that
    # tie the checker's counts to the slice's registers the induction cannot close (a long
    # stall from an unreachable state): bounded, with the reason, not proved
    alone = run_target("axis_register", out=str(tmp_path), only=["no_loss", "tracked_beat"], covers=False)
    assert [v.verdict for v in alone] == ["bounded", "bounded"]
    assert all("induction does not close" in v.reason for v in alone)


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------
def test_cli_unknown_target_is_one_line(capsys):
    assert main(["formal", "no_such_block"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown target 'no_such_block'" in err[0]


def test_cli_bad_fault_and_bad_stimulus_are_one_line(tmp_path, capsys):
    assert main(["formal", "axis_register", "--fault", "nope"]) == 2
    assert "no broken variant 'nope'" in capsys.readouterr().err
    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    assert main(["formal", "--replay", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not JSON" in err[0]


def test_cli_lists_targets(capsys):
    assert main(["formal", "--list"]) == 0
    out = capsys.readouterr().out
    for name in TARGET_NAMES:
        assert f"{name}:" in out
    assert "property F5:" in out and "broken variants (--fault): no_skid" in out
    assert "trigger (covered): m_axis_tvalid && !m_axis_tready" in out
    assert "dead (mutation of the converted Verilog)" in out


def test_cli_table_and_replay(tmp_path, capsys):
    assert main(["formal", "axis_register", "--fault", "no_skid", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "axis_register[no_skid]  no_loss" in out and "failed" in out and "caught" in out
    stim = tmp_path / "axis_register" / "fault-no_skid" / "no_loss.stimulus.json"
    assert main(["formal", "--replay", str(stim), "--vcd", str(tmp_path / "replay.vcd")]) == 0
    assert "reproduced" in capsys.readouterr().out
    assert (tmp_path / "replay.vcd").stat().st_size > 0


def test_cli_dead_variant_is_caught_and_its_replay_is_icarus_only(tmp_path, capsys):
    assert main(["formal", "axis_register", "--fault", "dead", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "UNREACHED" in out and "(as the broken variant must)" in out
    stim = tmp_path / "axis_register" / "fault-dead" / "input_live.stimulus.json"
    assert main(["formal", "--replay", str(stim)]) == 0
    assert "MyHDL not run (the variant is an edit of the converted Verilog)" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# Slow: every target, every broken variant
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("target", ["prism_control", "work_distributor", "work_accounting", "collective_fabric"])
def test_every_property_is_proved(target, tmp_path):
    verdicts = run_target(target, out=str(tmp_path))
    assert len(verdicts) == len(get_target(target).all_props())
    # what docs/formal.md states: every property and lemma of these targets is proved
    assert all(v.verdict == "proved" for v in verdicts), [v.line() for v in verdicts if v.verdict != "proved"]
    assert all(v.cover is None or v.cover >= START_STEPS for v in verdicts), [v.line() for v in verdicts]
    if target == "prism_control":
        # the BMC reaches a DATA frame admitted (a STAGE, an accepted COMMIT, then the frame), one of
        # an aborted operation, and a refused COMMIT's response
        assert all(v.cover is not None for v in verdicts if not v.prop.startswith("inv_"))


DEFAULT_VARIANTS = {("axis_register", "dead"), ("prism_egress", "dead"), ("prism_ingress", "dead"),
                    ("prism_fp32_bank", "slow_lanes"), ("prism_fp32_bank", "short_reservation"),
                    ("prism_egress", "tx1_flips_bit0"), ("axis_register", "no_skid"), ("prism_egress", "no_frame_lock"),
                    ("prism_ingress", "bank_reuse")}
NODE_VARIANTS = [(t, f) for t in STREAM_AND_NODE for f in get_target(t).faults if (t, f) not in DEFAULT_VARIANTS]
FABRIC_FAULTS = sorted(get_target("collective_fabric").faults)
PACKAGE_FAULTS = sorted(get_target("work_distributor").faults)


@pytest.mark.slow
@pytest.mark.parametrize("target, fault", NODE_VARIANTS)
def test_every_stream_and_node_broken_variant_is_caught(target, fault, tmp_path):
    # prism_control's take minutes each (yosys elaborates the 2,048-bit duplicate map)
    _caught(target, fault, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("fault", FABRIC_FAULTS)
def test_every_fabric_broken_variant_fails_formally_and_replays(fault, tmp_path):
    _caught("collective_fabric", fault, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("fault", PACKAGE_FAULTS)
def test_every_package_broken_variant_fails_formally_and_replays(fault, tmp_path):
    _caught("work_distributor", fault, tmp_path)
