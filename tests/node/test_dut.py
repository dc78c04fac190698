"""`prism regress --dut FILE.v`: the hostile regression, its coverage and scoreboard on any Verilog
with the node's ports.

The exported node passes; a copy broken by hand fails with a first-mismatch report and a replay
command that names the file; designs that do not fit the node's ports, files that do not exist
and back ends that cannot take a file are one-line errors.  The interface reader is checked on
ANSI and non-ANSI headers with parameters, as users write them."""
import os

import pytest

from cosim.cli import main as prism
from cosim.node.dut import DutError, load_dut, node_ports
from cosim.sim.verilog_interface import VerilogInterfaceError, find_top, read_module

ANSI = """
// a user's header: ANSI ports, parameters in the header, ranges written with them
module my_node #(parameter integer KULISCH_W = 320, parameter CAPACITY = 4096, localparam D = 512) (
    input  wire clk, input wire rst,
    input  wire [D-1:0] s_axis_0_tdata, input wire s_axis_0_tvalid, output wire s_axis_0_tready,
    input  wire s_axis_0_tlast,
    input  wire [511:0] s_axis_1_tdata, input wire s_axis_1_tvalid, output reg s_axis_1_tready,
    input  wire s_axis_1_tlast,
    output reg [511:0] m_axis_0_tdata, output wire m_axis_0_tvalid, input wire m_axis_0_tready,
    output wire m_axis_0_tlast,
    output logic [8*64-1:0] m_axis_1_tdata, output wire m_axis_1_tvalid, input wire m_axis_1_tready,
    output wire m_axis_1_tlast,
    input wire [5:0] counter_select, output wire [31:0] counter_value, output wire busy /* , input x */
);
  sub u0 (.a(clk));
endmodule
module sub(input a); endmodule
"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_interface_of_an_ansi_header_with_parameters(tmp_path):
    path = _write(tmp_path, "my_node.v", ANSI)
    assert find_top([path]) == (path, "my_node")        # sub is instantiated: not a top
    iface = read_module(ANSI, "my_node")
    assert iface.parameters["KULISCH_W"] == "320" and iface.parameters["CAPACITY"] == "4096"
    assert "D" not in iface.parameters                  # a localparam cannot be set from outside
    assert {n: iface.ports[n] for n in node_ports()} == node_ports()
    dut = load_dut([path])
    assert dut.width is None and dut.parameters == ("KULISCH_W", "CAPACITY") and dut.capacity == 4096
    assert dut.instance_parameters(280) == {"KULISCH_W": 280, "CAPACITY": 4096}


def test_interface_of_a_non_ansi_header():
    text = """module n(a, b, c);
    parameter W = 4;
    input [W-1:0] a; output reg [2*W-1:0] b; input c;
    endmodule"""
    iface = read_module(text, "n")
    assert iface.ports == {"a": ("input", 4), "b": ("output", 8), "c": ("input", 1)}
    assert read_module(text, "n", overrides={"W": 8}).ports["b"] == ("output", 16)
    with pytest.raises(VerilogInterfaceError, match="module m not found"):
        read_module(text, "m")


def test_designs_that_do_not_fit_the_node_are_refused_in_one_line(tmp_path):
    wrong_width = _write(tmp_path, "w.v", ANSI.replace("[5:0] counter_select", "[4:0] counter_select"))
    with pytest.raises(DutError, match="port counter_select is 5 bits wide, expected 6"):
        load_dut([wrong_width])
    missing = _write(tmp_path, "m.v", ANSI.replace("output wire busy", "output wire idle"))
    with pytest.raises(DutError, match=r"no port busy .*port\(s\) the node does not have: idle"):
        load_dut([missing])
    two_tops = _write(tmp_path, "t.v", "module a(input clk); endmodule\nmodule b(input clk); endmodule\n")
    with pytest.raises(DutError, match="give --top NAME"):
        load_dut([two_tops])


@pytest.mark.parametrize("argv, message", [
    (["--dut", "no_such_file.v"], "no_such_file.v: no such file"),
    (["--dut", "{ansi}", "--backend", "myhdl"], "--dut runs on batch-icarus or batch-verilator, not myhdl"),
    (["--dut", "{ansi}", "--top", "nope"], "--top nope: no such module"),
    (["--dut", "{ansi}", "--width", "300"], "invalid choice"),
    (["--top", "x"], "--top and --capacity describe a --dut design"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, argv, message):
    ansi = _write(tmp_path, "my_node.v", ANSI)
    argv = [a.replace("{ansi}", ansi) for a in argv]
    with pytest.raises(SystemExit) if "invalid choice" in message else _no_raise():
        code = prism(["regress", "--seeds", "1", "--out", str(tmp_path / "out"), *argv])
        assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert "Traceback" not in err[0]


class _no_raise:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.fixture(scope="module")
def exported_node(tmp_path_factory):
    out = tmp_path_factory.mktemp("export")
    assert prism(["export", "node", "-o", str(out), "--no-check"]) == 0
    return str(out / "prism_node.v")


@pytest.mark.slow      # a minute: the exported node and a broken copy, each built and run on batched back ends
def test_regress_passes_on_the_exported_node_and_fails_on_a_broken_copy(exported_node, tmp_path, capsys):
    # the exported node has no parameters: its width is read from a probe's RESULT header
    assert prism(["regress", "--seeds", "1", "--first-seed", "3", "--jobs", "1", "--dut", exported_node,
                  "--out", str(tmp_path / "good")]) == 0
    out = capsys.readouterr()
    assert "KULISCH_W 320" in out.err and "verdict: PASS" in out.out
    assert os.path.exists(tmp_path / "good" / "coverage.md")
    # broken by hand: the first Kulisch adder subtracts
    text = open(exported_node).read()
    assert text.count("    total = (a + b);") >= 1
    broken = tmp_path / "broken" / "prism_node.v"
    broken.parent.mkdir()
    broken.write_text(text.replace("    total = (a + b);", "    total = (a - b);", 1))
    assert prism(["regress", "--seeds", "1", "--first-seed", "3", "--jobs", "1", "--dut", str(broken),
                  "--out", str(tmp_path / "bad")]) == 1
    text = capsys.readouterr().out
    assert "verdict: FAIL" in text and "result-value" in text and "expected" in text and "got" in text
    assert f"--dut {broken}" in text                    # the replay command names the design
    # and the replay reproduces the first mismatch on the same file
    assert prism(["replay", "3", "--dut", str(broken), "--out", str(tmp_path / "replay")]) == 1
    assert "first mismatch:" in capsys.readouterr().out


@pytest.mark.slow      # a minute: a broken copy of the exported node built and run
def test_an_overtaking_fp32_arrival_frame_fails_the_regression(exported_node, tmp_path, capsys):
    """The node numbers frames as they start so a younger FP32_ARRIVAL frame waits for an older
    one of the other port on shared ranges.  With the numbers stuck every frame looks as old as
    every other, port 0 always goes first, and the aimed overtaking operation's sums change."""
    from cosim.node.regress import random_scenario
    seed = next(s for s in range(1, 200) if "FP32_ARRIVAL overtake" in random_scenario(s).description)
    text = open(exported_node).read()
    edit = "start_seq <= ((start_seq + 1) % 16);"
    assert text.count(edit) == 1
    broken = tmp_path / "stuck" / "prism_node.v"
    broken.parent.mkdir()
    broken.write_text(text.replace(edit, "start_seq <= start_seq;"))
    assert prism(["regress", "--seeds", "1", "--first-seed", str(seed), "--jobs", "1", "--backend",
                  "batch-icarus", "--dut", str(broken), "--out", str(tmp_path / "bad")]) == 1
    out = capsys.readouterr().out
    assert "verdict: FAIL" in out and ("result-value" in out or "result-layout" in out)


@pytest.mark.slow      # a minute: two broken copies of the exported node built and run on batched Icarus
def test_a_response_margin_one_off_either_way_fails_the_margin_case(exported_node, tmp_path):
    """The admission rule (spec.frames RESPONSE_MARGIN) one entry smaller: the node takes a COMMIT
    it must hold back, and the requests behind it overflow the response queue (a response lost).
    One entry larger: it holds back a COMMIT it must take (an rx-stall).  The aimed case of
    cosim.node.regress.add_response_margin fails each."""
    import random

    from cosim.node.dut import load_dut
    from cosim.node.node_harness import check, run_node
    from cosim.node.regress import add_response_margin
    from cosim.node.scenarios import Scenario
    from spec.frames import RESPONSE_MARGIN, RESPONSE_QUEUE_DEPTH
    text = open(exported_node).read()
    rule = f"<= ({RESPONSE_QUEUE_DEPTH} - {RESPONSE_MARGIN})"
    line = next(l for l in text.splitlines() if "room_ok" in l and rule in l)
    for margin, fill, kinds in ((RESPONSE_MARGIN - 1, False, {"response", "result-missing"}),
                                (RESPONSE_MARGIN + 1, True, {"rx-stall"})):
        broken = tmp_path / f"margin{margin}" / "prism_node.v"
        broken.parent.mkdir()
        broken.write_text(text.replace(line, line.replace(rule, f"<= ({RESPONSE_QUEUE_DEPTH} - {margin})")))
        sc = Scenario(seed=3)
        add_response_margin(sc, random.Random(7), 1, (40, 41), fill)
        run = run_node(sc, "batch-icarus", max_cycles=6000, dut=load_dut([str(broken)]))
        report = check(sc, run)
        assert not report.ok and {m.kind for m in report.mismatches} & kinds, [str(m) for m in report.mismatches[:3]]


@pytest.mark.slow      # a minute: two broken copies of the exported node built and run on batched Icarus
@pytest.mark.parametrize("port", [0, 1])
def test_a_twin_admitted_the_cycle_before_is_a_duplicate(exported_node, tmp_path, capsys, port):
    """A frame completing right after its twin (the same contributor and ranges) was admitted is
    checked against the map as registered, which misses the twin, and against the overlap the
    control kept with the last cycle's candidates (pr0_ov / pr1_ov).  With that overlap stuck at
    0 the twin is admitted twice: the aimed twins on both ports fail the run."""
    from cosim.node.regress import random_scenario
    text = open(exported_node).read()
    line = f"prism_control0_pr{port}_ov <= prism_control0_admit_control_ovc;"
    assert text.count(line) == 1
    broken = tmp_path / f"ov{port}" / "prism_node.v"
    broken.parent.mkdir()
    broken.write_text(text.replace(line, f"prism_control0_pr{port}_ov <= prism_control0_pr{port}_ov;"))
    # the twin on this port completing a cycle after the other was decided, with no receive stalls
    seeds = [s for s in range(1, 300) if f"(RX{port} 1 after RX{1 - port})" in (sc := random_scenario(s)).description
             and not any(sc.source_pause.values())][:3]
    failed = False
    for seed in seeds:
        if prism(["regress", "--seeds", "1", "--first-seed", str(seed), "--jobs", "1", "--backend",
                  "batch-icarus", "--dut", str(broken), "--out", str(tmp_path / f"bad{seed}")]) == 1:
            failed = True
            break
    out = capsys.readouterr().out
    assert failed and ("counter" in out or "result-value" in out), out[-2000:]
