"""The cocotb verification component (cosim/cocotb_vip) and its example (examples/cocotb_node).

The example passes on the exported node and fails, naming the first wrong frame and field,
on a copy broken by hand; the scoreboard judges synthetic frames without a simulator; the
example's runner refuses bad arguments in one line.  The simulations share the compiled
node with tests/node/test_cocotb_client.py (examples/cocotb_node/run.py, kit_node).
"""
import importlib.util
import os
import subprocess
import sys

import pytest

from golden.node import protocol as P
from golden.node.node_model import NodeModel
from spec import frames as C

from cosim.cli import main as prism
from cosim.cocotb_vip import PrismScoreboard
from cosim.node.node_harness import counter_names
from cosim.node.scoreboard import Mismatch
from cosim.sim.axis import AxisFrame

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN = os.path.join(ROOT, "examples", "cocotb_node", "run.py")


def run_example(*args):
    """run.py as a user runs it: (exit status, stdout lines)."""
    r = subprocess.run([sys.executable, RUN, *args], capture_output=True, text=True, cwd=ROOT)
    lines = r.stdout.strip().splitlines()
    assert lines, f"run.py printed nothing (exit {r.returncode}): {r.stderr[-3000:]}"
    return r.returncode, lines


# ----------------------------------------------------------------------------------- simulations
def test_example_passes_on_the_exported_node(tmp_path):
    rc, lines = run_example("--out", str(tmp_path))
    assert lines[-1] == "PASS" and rc == 0, "\n".join(lines[-20:])
    assert (tmp_path / "coverage.md").exists()


@pytest.mark.slow      # a second compile of the node (the broken copy); the scoreboard unit tests show the failure kinds
def test_the_component_fails_a_broken_node_at_its_first_wrong_frame(tmp_path):
    """The node's RESULT header written with KULISCH_W = 321 instead of 320 (bit 96 flipped):
    the run fails and its first mismatch names the frame (operation 1's first RESULT frame,
    the first to leave) and the field."""
    assert prism(["export", "node", "-o", str(tmp_path / "export"), "--width", "320", "--no-check"]) == 0
    text = (tmp_path / "export" / "prism_node.v").read_text()
    sets_w = f"hdr[{C.F_KULISCH_W_END}-1:{C.F_KULISCH_W_LSB}] = 320;"       # the RESULT header's W field
    assert text.count(sets_w) == 1, f"the export no longer holds {sets_w!r} once: change the edit this test makes"
    broken = text.replace(sets_w, sets_w.replace("320", "321"))
    # without the conversion date the file (and its compiled simulation, cached by content)
    # stays the same until the design changes
    broken = "".join(line for line in broken.splitlines(keepends=True) if not line.startswith("// Date:"))
    (tmp_path / "broken.v").write_text(broken)
    rc, lines = run_example("--dut", str(tmp_path / "broken.v"), "--out", str(tmp_path / "out"))
    assert lines[-1] == "FAIL" and rc == 1, "\n".join(lines[-20:])
    first = next(line for line in lines if line.startswith("FAIL:"))
    assert "first: [TX0] result-header: RESULT op 1 offset 0" in first, first
    assert "bit 96 (field kulisch_w [104:96]) is 1, expected 0" in first, first


@pytest.mark.slow          # about 12 s of simulation: twelve random operations, resets among them
@pytest.mark.parametrize("seed", [2, 6])
def test_example_with_random_operations_and_resets(seed, tmp_path):
    rc, lines = run_example("--operations", "12", "--seed", str(seed), "--out", str(tmp_path))
    assert lines[-1] == "PASS" and rc == 0, "\n".join(lines[-20:])


@pytest.mark.slow          # the 280-bit export and its compilation
def test_example_passes_on_the_280_bit_node(tmp_path):
    rc, lines = run_example("--width", "280", "--operations", "4", "--out", str(tmp_path))
    assert lines[-1] == "PASS" and rc == 0, "\n".join(lines[-20:])


# ----------------------------------------------------------------------------------- the runner's arguments
def _runner_module():
    spec = importlib.util.spec_from_file_location("cocotb_node_run", RUN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv,message", [
    (["--width", "300"], "--width 300: KULISCH_W is 320 or 280"),
    (["--width", "wide"], "argument --width: invalid int value"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--dut", "no_such_file.v"], "--dut no_such_file.v: No such file or directory"),
    (["--top", "x"], "--top names a module of --dut"),
    (["--operations", "-1"], "--operations -1"),
])
def test_bad_arguments_give_one_line(argv, message, capsys):
    assert _runner_module().main(argv) == 2
    out, err = capsys.readouterr()
    assert not out and len(err.strip().splitlines()) == 1 and message in err, err


def test_a_design_without_the_node_s_ports_fails_naming_them(tmp_path):
    (tmp_path / "adder.v").write_text("module adder(input clk, input rst, input [7:0] a, output [7:0] y);\n"
                                      "assign y = a;\nendmodule\n")
    rc, lines = run_example("--dut", str(tmp_path / "adder.v"), "--out", str(tmp_path / "out"))
    assert lines[-1] == "FAIL" and rc == 1, "\n".join(lines)
    assert any("adder does not have the node's ports" in line and "missing s_axis_0_tdata, s_axis_0_tvalid" in line
               for line in lines), lines


# ----------------------------------------------------------------------------------- the scoreboard alone
STAGE = P.Stage(1, 1, P.POLICY_KULISCH, P.FMT_FP16, P.FMT_FP32, P.MODE_ALLREDUCE, 20, 0b11, 0b11)


def _observed_operation():
    """One operation as monitors would see it on a correct node: (inputs, outputs) as
    [(port, AxisFrame)] with beat cycles, outputs made by the golden model."""
    values = {c: tuple((0x3C00 + 17 * i + c) & 0x7BFF for i in range(STAGE.count)) for c in (0, 1)}
    requests = [(0, STAGE), (0, P.Commit(1, 1)),
                (0, P.Data(1, 1, 0, P.FMT_FP16, 0, values[0])), (1, P.Data(1, 1, 1, P.FMT_FP16, 0, values[1]))]
    model, inputs, outputs, cycle = NodeModel(), [], [], 10
    tx_free = {0: 0, 1: 0}
    for port, frame in requests:
        beats = frame.encode()
        cycles = list(range(cycle, cycle + len(beats)))
        inputs.append((port, AxisFrame(beats, cycles=cycles)))
        for out in model.receive(port, beats):
            out_beats = out.frame.encode()
            start = max(cycles[-1] + 3, tx_free[out.port])
            outputs.append((out.port, AxisFrame(out_beats, cycles=list(range(start, start + len(out_beats))))))
            tx_free[out.port] = start + len(out_beats)
        cycle = cycles[-1] + 20
    return model, inputs, outputs


def _counters(model, outputs):
    """Every counter_select value a correct node shows after the operation."""
    values = {}
    for sel, (port, name) in counter_names().items():
        if name == "results":
            values[sel] = sum(1 for _, f in outputs if P.get_field(f.beats[0], "class") == P.CLASS_RESULT)
        elif name == "responses":
            values[sel] = sum(1 for p, f in outputs if p == 0 and P.get_field(f.beats[0], "class") == P.CLASS_CONTROL)
        elif port is None:
            values[sel] = model.node_counters.get(name, 0)
        else:
            values[sel] = model.counters[port].get(name, 0)
    return values


def _judge(inputs, outputs, counters=None, resets=(), busy_changes=None):
    sb = PrismScoreboard(kulisch_w=320)
    for port, frame in inputs:
        sb.input_frame(port, frame)
    for port, frame in outputs:
        sb.output_frame(port, frame)
    for cycle in resets:
        sb.reset_at(cycle)
    return sb.check(counters=counters, busy_at_end=False, busy_changes=busy_changes)


def test_the_scoreboard_passes_what_the_model_sends():
    model, inputs, outputs = _observed_operation()
    report = _judge(inputs, outputs, _counters(model, outputs))
    assert report.ok, report.summary()
    assert (report.results_checked, report.elements_checked, report.responses_checked) == (2, 40, 2)
    assert report.summary().startswith("PASS")


def _flip(frame, beat, bit):
    beats = list(frame.beats)
    beats[beat] ^= 1 << bit
    return AxisFrame(beats, cycles=frame.cycles)


def _results(outputs):
    return [i for i, (_, f) in enumerate(outputs) if P.get_field(f.beats[0], "class") == P.CLASS_RESULT]


def test_a_flipped_bit_is_named_with_its_frame_and_field():
    model, inputs, outputs = _observed_operation()
    on_tx1 = next(i for i in _results(outputs) if outputs[i][0] == 1)
    outputs[on_tx1] = (1, _flip(outputs[on_tx1][1], 0, C.F_KULISCH_W_LSB + 2))
    report = _judge(inputs, outputs, _counters(model, outputs))
    assert not report.ok and len(report.mismatches) == 1
    first = report.first()
    assert (first.kind, first.port) == ("result-header", 1)
    assert "RESULT op 1 offset 0" in str(first) and "field kulisch_w [104:96]" in str(first)
    assert report.summary().startswith("FAIL: 1 mismatches; first: [TX1] result-header")


def test_mismatches_are_listed_earliest_first():
    """A wrong element on TX1 that left before a wrong padding bit on TX0 is the first reported,
    although the kit's scoreboard checks port 0 first."""
    model, inputs, outputs = _observed_operation()
    tx0, tx1 = (next(i for i in _results(outputs) if outputs[i][0] == p) for p in (0, 1))
    late = AxisFrame(outputs[tx0][1].beats, cycles=[c + 50 for c in outputs[tx0][1].cycles])
    outputs[tx0] = (0, _flip(late, 2, 511))                      # past element 19: padding
    outputs[tx1] = (1, _flip(outputs[tx1][1], 1, 3))              # element 0's bit 3
    report = _judge(inputs, outputs, _counters(model, outputs))
    assert [m.kind for m in report.mismatches] == ["result-value", "result-padding"]
    assert "element 0 (range 0, lane 0)" in str(report.first())


def test_counters_responses_and_protocol_errors_are_judged():
    model, inputs, outputs = _observed_operation()
    counters = _counters(model, outputs)
    counters[C.CTR_PORT_STRIDE + C.CTR_ADMITTED] += 1              # port 1's admitted DATA frames
    del counters[C.CTR_RESPONSES]
    response = next(i for i, (p, f) in enumerate(outputs) if P.get_field(f.beats[0], "class") == P.CLASS_CONTROL)
    del outputs[response]
    sb_report = _judge(inputs, outputs, counters)
    kinds = sorted(m.kind for m in sb_report.mismatches)
    assert kinds.count("counter") == 2 and "response" in kinds, sb_report.summary()
    assert any("data_accepted (port 1): expected 1, got 2" in str(m) for m in sb_report.mismatches)
    assert any("not read" in str(m) for m in sb_report.mismatches)
    sb = PrismScoreboard()
    sb.protocol_error(Mismatch("rx-stall", 0, "RX0: tready held low inside a frame", cycle=5))
    assert sb.check().first().kind == "rx-stall"


def test_busy_as_watched_is_judged_while_results_leave_and_at_each_rise():
    """busy high from two edges after the COMMIT's last beat until the last RESULT frame has
    left passes; rising an edge early, or falling while a RESULT frame leaves, fails."""
    model, inputs, outputs = _observed_operation()
    commit = next(f for _, f in inputs if P.get_field(f.beats[0], "opcode") == P.OP_COMMIT)
    end = max(f.cycles[-1] for _, f in outputs) + 1
    good = [(commit.cycles[-1] + 2, True), (end, False)]
    assert _judge(inputs, outputs, _counters(model, outputs), busy_changes=good).ok
    early = [(commit.cycles[-1] + 1, True), (end, False)]
    assert [m.kind for m in _judge(inputs, outputs, _counters(model, outputs), busy_changes=early).mismatches] \
        == ["busy-rise"]
    result = next(f for _, f in outputs if P.get_field(f.beats[0], "class") == P.CLASS_RESULT and len(f.cycles) > 2)
    dropped = [(commit.cycles[-1] + 2, True), (result.cycles[0], False)]
    assert "busy" in [m.kind for m in _judge(inputs, outputs, _counters(model, outputs), busy_changes=dropped).mismatches]


def test_a_frame_completing_at_a_reset_is_never_processed():
    """rst raised after the edge at which the COMMIT's last beat moved: the COMMIT is lost, the
    DATA that follows is dropped, and only the STAGE is answered."""
    _, inputs, outputs = _observed_operation()
    commit_cycle = inputs[1][1].cycles[-1]
    stage_ack = [o for o in outputs if o[1].cycles[-1] < commit_cycle]
    assert len(stage_ack) == 1
    assert _judge(inputs, stage_ack, resets=[commit_cycle]).ok
    report = _judge(inputs, outputs, resets=[commit_cycle])
    assert not report.ok and {m.kind for m in report.mismatches} >= {"response", "result-unexpected"}
