"""Verilator code coverage summarised per block (cosim/sim/codecov.py): a small two-lane design
whose second lane is never driven, so which lines and bits must be hit is known from the
stimulus alone; the full node under `slow`."""
import json
import os
import random
import subprocess
import sys

import pytest
from myhdl import ResetSignal, Signal, always_comb, block, intbv

from cosim.sim import codecov, toolchain
from cosim.sim.axis import AxisFrame
from cosim.sim.batch import BatchDesign, StreamStimulus, code_coverage
from hdl.common.axis_register import axis_register
from hdl.common.interface import AxiStream

WIDTH = 8


@block
def two_lanes(clk, rst,
              s_axis_a_tdata, s_axis_a_tlast, s_axis_a_tvalid, s_axis_a_tready,
              m_axis_a_tdata, m_axis_a_tlast, m_axis_a_tvalid, m_axis_a_tready,
              s_axis_b_tdata, s_axis_b_tlast, s_axis_b_tvalid, s_axis_b_tready,
              m_axis_b_tdata, m_axis_b_tlast, m_axis_b_tvalid, m_axis_b_tready, any_out):
    """Two register slices side by side (instances axis_register0 and axis_register1) and one
    process of the top level's own."""
    ports = locals()
    lane_a = axis_register(clk, rst, AxiStream.from_ports("s_axis_a", ports), AxiStream.from_ports("m_axis_a", ports))
    lane_b = axis_register(clk, rst, AxiStream.from_ports("s_axis_b", ports), AxiStream.from_ports("m_axis_b", ports))

    @always_comb
    def either():
        any_out.next = m_axis_a_tvalid or m_axis_b_tvalid

    return lane_a, lane_b, either


def lane_signals():
    b = lambda: Signal(bool(0))
    sig = {"clk": b(), "rst": ResetSignal(1, active=1, isasync=False), "any_out": b()}
    for lane in "ab":
        for d in "sm":
            sig[f"{d}_axis_{lane}_tdata"] = Signal(intbv(0)[WIDTH:])
            for n in ("tlast", "tvalid", "tready"):
                sig[f"{d}_axis_{lane}_{n}"] = b()
    return sig


def stimulus(seed=1):
    rng = random.Random(seed)
    frames = [AxisFrame([rng.getrandbits(WIDTH) for _ in range(rng.randint(1, 6))]) for _ in range(12)]
    return {"s_axis_a": StreamStimulus(frames)}


def line_of(verilog, text):
    """The 1-based line of the converted Verilog holding `text` (exactly one)."""
    hits = [n for n, line in enumerate(open(verilog).read().split("\n"), 1) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def test_design_map_names_sub_blocks_and_top_level():
    folder, module, _ = toolchain.build(two_lanes, **lane_signals())
    verilog = os.path.join(folder, module + ".v")
    dm = codecov.DesignMap(verilog)
    assert dm.order == ["axis_register0", "axis_register1", "two_lanes (top level)"]
    for lane, inst in (("a", "axis_register0"), ("b", "axis_register1")):
        assert dm.statement_at(line_of(verilog, f"{inst}_skid_data <= s_axis_{lane}_tdata")).block == inst
        # a port driven by the sub-block under the top level's name
        assert dm.block_of_signal(f"m_axis_{lane}_tvalid") == inst
        assert dm.block_of_signal(f"m_axis_{lane}_tdata[3]") == inst
        assert dm.block_of_signal(f"{inst}_skid_valid") == inst
    assert dm.statement_at(line_of(verilog, "any_out = (m_axis_a_tvalid || m_axis_b_tvalid)")).block == dm.top
    assert dm.block_of_signal("any_out") == dm.top


def test_design_map_reads_the_layout_the_tool_chain_writes(tmp_path):
    """A one-line `initial` with a trailing comment (the power-on wake), declarations after
    it, a hoisted process variable, a process driving a port under its top-level name."""
    verilog = tmp_path / "top.v"
    verilog.write_text("\n".join([
        "module top (", "    clk,", "    q", ");", "",
        "reg prism_time0;  // changes once at time 0: wakes the combinational processes",
        "initial prism_time0 <= 1'b0;  // non-blocking: every process waits at its event control by then",
        "input clk;", "output [3:0] q;", "reg [3:0] q;", "reg [3:0] ring0_count = 0;", "wire ring0_wrap;",
        "", "reg [3:0] ring0_step_next;", "always @(posedge clk) begin",
        "    ring0_step_next = ring0_count + 1;", "    ring0_count <= ring0_step_next;", "    q <= ring0_count;",
        "end", "", "assign ring0_wrap = (ring0_count == 15);", "", "endmodule", ""]))
    dm = codecov.DesignMap(str(verilog), blocks=["ring"])
    assert dm.order == ["ring0", "top (top level)"]
    assert dm.statement_at(17).block == "ring0"              # by the names it assigns
    # with MyHDL's output as written beside it, the process's own name decides: one that drives
    # only top-level names still belongs to its instance
    text = verilog.read_text().replace("    ring0_step_next = ring0_count + 1;\n    ring0_count <= ring0_step_next;\n",
                                       "    q <= ring0_count + 1;\n    q <= ring0_count + 2;\n")
    verilog.write_text(text)
    assert codecov.DesignMap(str(verilog), blocks=["ring"]).statement_at(17).block == "top (top level)"
    (tmp_path / "top.raw.v").write_text(text.replace("always @(posedge clk) begin", "always @(posedge clk) begin: ring0_step"))
    dm = codecov.DesignMap(str(verilog), blocks=["ring"])
    assert dm.statement_at(7).kind == "initial" and dm.statement_at(7).last == 7
    assert dm.statement_at(17).block == "ring0" and dm.statement_at(21).block == "ring0"
    assert dm.block_of_signal("q[2]") == "ring0"              # driven by ring0's process
    assert dm.block_of_signal("clk") == dm.block_of_signal("prism_time0") == dm.top
    assert dm.block_of_signal("ring0_wrap") == "ring0"


def test_blocks_are_listed_in_the_order_the_source_calls_them(tmp_path):
    verilog = tmp_path / "top.v"
    verilog.write_text("\n".join([
        "module top (", "    clk", ");", "input clk;", "reg sink1_x = 0;", "reg sink0_x = 0;", "reg source0_x = 0;",
        "always @(posedge clk) begin", "    sink1_x <= source0_x;", "end",
        "always @(posedge clk) begin", "    sink0_x <= source0_x;", "end",
        "always @(posedge clk) begin", "    source0_x <= !source0_x;", "end", "endmodule", ""]))
    source = tmp_path / "top.py"
    source.write_text('"""The top: sink (x) and source (y), in the docstring\'s order."""\n'
                      "def top(clk):\n    # sink(...) later\n    a = source(clk)\n"
                      "    b = [sink(clk) for _ in range(2)]\n    return a, b\n")
    dm = codecov.DesignMap(str(verilog), blocks=["sink", "source"])
    assert dm.order == ["sink1", "sink0", "source0", "top (top level)"]      # the Verilog's order
    assert dm.phase_order(str(source)) == ["source0", "sink0", "sink1", "top (top level)"]


# session scope: the longest-first order interleaves modules, and a module-scoped fixture
# is torn down whenever the next test comes from another module (the Verilator build is made once)
@pytest.fixture(scope="session")
def lanes_design():
    return BatchDesign(two_lanes, **lane_signals(), simulator="verilator")


def _run(design, folder, sink_pause):
    with code_coverage(folder):
        res = design.run(stimulus(), sink_pause={"m_axis_a": sink_pause})
    runs = [f for _, (_, fs) in codecov.runs_by_design(folder).items() for f in fs]
    assert len(runs) == 1
    return res, runs[0]


def test_coverage_follows_the_stimulus_per_block(lanes_design, tmp_path):
    design = lanes_design
    rng = random.Random(7)
    stalls = [rng.random() < 0.5 for _ in range(400)]
    res, run_file = _run(design, tmp_path / "stalled", stalls)
    assert sum(len(f) for f in res.frames["m_axis_a"]) == sum(len(f) for f in stimulus()["s_axis_a"].frames)
    dm = codecov.DesignMap(design.verilog_path)
    rows = {r.block: r for r in codecov.summarise(codecov.read_points(run_file), dm)}
    a, b = rows["axis_register0"], rows["axis_register1"]
    parks = {lane: line_of(design.verilog_path, f"{inst}_skid_data <= s_axis_{lane}_tdata")
             for lane, inst in (("a", "axis_register0"), ("b", "axis_register1"))}
    takes = {lane: line_of(design.verilog_path, f"m_axis_{lane}_tdata <= s_axis_{lane}_tdata") for lane in "ab"}
    # lane a took beats and, with its sink stalling, parked some in its skid buffer; lane b never saw a beat
    assert parks["a"] not in a.lines_never_run and takes["a"] not in a.lines_never_run
    assert parks["b"] in b.lines_never_run and takes["b"] in b.lines_never_run
    assert a.lines_hit == a.lines > 0
    assert 0 < b.lines_hit < b.lines and b.lines == a.lines       # the same code; reset and idle arms only
    assert b.processes_never_run == 0                             # clocked: entered on every edge
    assert (a.processes, a.processes_partly_run, b.processes_partly_run) == (1, 0, 1)
    # random 8-bit data over 40-odd beats moves every data bit of lane a; lane b's data never moves
    points = codecov.read_points(run_file)
    toggles = {p.comment: p.count for p in points if p.kind == "toggle"}
    for bit in range(WIDTH):
        assert toggles[f"m_axis_a_tdata[{bit}]"] >= codecov.TOGGLED
        assert toggles[f"m_axis_b_tdata[{bit}]"] == 0
        assert toggles[f"axis_register1_skid_data[{bit}]"] == 0
    assert b.toggles_hit < b.toggles and a.toggles_hit > b.toggles_hit
    assert rows["total"].lines == a.lines + b.lines               # the top level has no clocked code
    assert toggles["any_out"] >= codecov.TOGGLED and toggles["s_axis_b_tvalid"] == 0
    top = rows["two_lanes (top level)"]                            # its process and the design's inputs
    assert 0 < top.toggles_hit < top.toggles

    # without stalls nothing is parked; merged with the first run, the counts add up
    free_res, free_file = _run(design, tmp_path / "free", None)
    free = {r.block: r for r in codecov.summarise(codecov.read_points(free_file), dm)}
    assert parks["a"] in free["axis_register0"].lines_never_run
    merged = codecov.merge([run_file, free_file], str(tmp_path / "merged.dat"))
    counts = {}
    for path in (run_file, free_file, merged):
        counts[path] = {(p.kind, p.line, p.comment): p.count for p in codecov.read_points(path)}
    assert counts[merged] == {k: counts[run_file][k] + counts[free_file].get(k, 0) for k in counts[run_file]}
    clock_edges = [c for (kind, line, comment), c in counts[free_file].items() if kind == "toggle" and comment == "clk"]
    assert clock_edges and clock_edges[0] >= 2 * (free_res.cycles - 1)   # both edges of every cycle


@pytest.mark.slow      # 8 s; the per-block figures themselves are checked above
def test_report_folds_runs_into_one_table_per_design(lanes_design, tmp_path):
    folder = tmp_path / "runs"
    for pause in (None, [True, False] * 100):
        with code_coverage(folder):
            lanes_design.run(stimulus(), sink_pause={"m_axis_a": pause})
    text, summary, runs = codecov.report(str(folder), str(tmp_path / "out"))
    assert runs == 2
    assert "| axis_register0 |" in text and "| axis_register1 |" in text and "2 runs merged" in text
    assert len(summary) == 1 and summary[0].startswith("code coverage two_lanes")
    data = json.load(open(tmp_path / "out" / "code-coverage.json"))
    assert data[0]["runs"] == 2 and [b["block"] for b in data[0]["blocks"]][-1] == "total"
    assert not [f for f in os.listdir(os.path.dirname(data[0]["data"])) if f.startswith("run-")]


def test_coverage_needs_verilator(tmp_path):
    design = BatchDesign(two_lanes, **lane_signals(), simulator="icarus")
    with pytest.raises(ValueError, match="Verilator"):
        design.run(stimulus(), code_coverage=str(tmp_path / "x.dat"))


def test_regress_code_coverage_is_verilator_only(tmp_path):
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "regress", "--seeds", "1", "--backend", "batch-icarus",
                        "--code-coverage", "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "--code-coverage" in r.stderr and "batch-verilator" in r.stderr


@pytest.mark.slow
def test_node_code_coverage_per_phase_block(tmp_path):
    """A few regression seeds on the node's coverage build: every phase block is measured and run."""
    out = tmp_path / "regress"
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "regress", "--seeds", "4", "--backend", "batch-verilator",
                        "--width", "320", "--jobs", "1", "--code-coverage", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stdout + r.stderr        # coverage is reported whatever the verdict
    assert "code coverage prism_node" in r.stdout
    data = json.load(open(out / "code-coverage.json"))
    assert len(data) == 1 and data[0]["runs"] == 4
    rows = {b["block"]: b for b in data[0]["blocks"]}
    phases = ["prism_ingress0", "prism_ingress1", "prism_control0", "prism_reader0", "prism_reader1",
              "prism_completion0", "prism_readout0", "prism_result_sender0", "prism_egress0", "prism_counters0"]
    for name in phases:
        assert 0 < rows[name]["lines_hit"] <= rows[name]["lines"], name
        assert 0 < rows[name]["toggles_hit"] < rows[name]["toggles"], name
    assert "| prism_control0 |" in open(out / "code-coverage.md").read()


def test_coverage_build_counts_toggles_of_signals_only(tmp_path):
    from cosim.sim.batch import coverage_config
    verilog = tmp_path / "blk.v"
    verilog.write_text("module blk(clk);\ninput clk;\nreg [7:0] count = 0;\nreg [511:0] ram [0:768-1];\n"
                       "wire [3:0] x;\nreg [43:0] queue [0:16-1];\nreg [7:0] out;\n\n"
                       "reg [4-1:0] step_a;\ninteger step_i;\nreg step_b;\nalways @(posedge clk) begin\n"
                       "    step_a = count;\nend\nendmodule\n")
    config = coverage_config(str(verilog)).splitlines()
    assert config[0] == "`verilator_config" and '"*batch_tb_*"' in config[1]
    # the two memories and the three process variables (lines 9-11); not the signals or the port
    assert config[2:] == ['coverage_off -file "*blk.v" -lines 4', 'coverage_off -file "*blk.v" -lines 6',
                          'coverage_off -file "*blk.v" -lines 9-11']
