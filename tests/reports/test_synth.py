"""`prism synth` and the node's stores as block RAM.

A store maps to block RAM when yosys infers it as a memory whose read ports are
all registered and which has at most two ports; these tests run yosys'
synth_xilinx up to its memory mapping (seconds) and check the memories it
inferred, on a memory written the wrong way (which must fail the check) and on
the node's stores.  The Markdown section of docs/hdl_sizes.md must be what the
command writes from its figures (docs/hdl_sizes_synth.json)."""
import os
import subprocess
import sys
import time

import pytest
from myhdl import ResetSignal, Signal, always, always_comb, block, intbv

from cosim.reports import synth
from spec.formats import KULISCH_WRAP_BITS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sig(width=None):
    return Signal(bool(0)) if width is None else Signal(intbv(0)[width:])


def rst_sig():
    return ResetSignal(0, active=1, isasync=False)


@block
def ram_read_without_clock(clk, we, waddr, wdata, raddr, rdata):
    """A RAM read combinationally: the way a block RAM cannot be written (rows from the address width)."""
    mem = [Signal(intbv(0)[len(wdata):]) for _ in range(1 << len(waddr))]

    @always(clk.posedge)
    def write():
        if we:
            mem[waddr].next = wdata

    @always_comb
    def read():
        rdata.next = mem[raddr]
    return write, read


@block
def ram_read_on_clock(clk, we, waddr, wdata, raddr, rdata):
    """The same RAM with a registered read (rows from the address width)."""
    mem = [Signal(intbv(0)[len(wdata):]) for _ in range(1 << len(waddr))]

    @always(clk.posedge)
    def port():
        if we:
            mem[waddr].next = wdata
        rdata.next = mem[raddr]
    return port


def ram_ports(address_bits=9):
    """512 x 32 by default: deep enough that yosys picks block RAM by itself."""
    return sig(), sig(), sig(address_bits), sig(32), sig(address_bits), sig(32)


def assert_block_ram(mems, forced):
    assert mems, "yosys inferred no memory"
    for m in mems:
        assert synth.bram_compatible(m), f"{m['name']}: read ports {m['read_ports']} " \
                                         f"(registered: {m['sync_read']}), write ports {m['write_ports']}"
        if forced:
            assert m["mapped_to"] == "block RAM", f"{m['name']} -> {m['mapped_to']}"


def test_a_ram_read_without_a_clock_fails_the_check():
    # 32 rows: asked into block RAM, a 512-row RAM read without a clock ends in 16,384 flip-flops
    # and a minute and a half of yosys; the check's verdict does not depend on the depth
    mems = synth.memory_mapping(ram_read_without_clock, *ram_ports(address_bits=5), ram_style="block")
    assert len(mems) == 1
    assert not synth.bram_compatible(mems[0])
    assert mems[0]["mapped_to"] != "block RAM"


def test_the_same_ram_with_a_registered_read_passes():
    assert_block_ram(synth.memory_mapping(ram_read_on_clock, *ram_ports()), forced=False)
    mems = synth.memory_mapping(ram_read_on_clock, *ram_ports())
    assert mems[0]["mapped_to"] == "block RAM"      # 512 x 32: yosys' own choice


@pytest.mark.slow      # 14 s of yosys; the check itself is held by the two RAMs above in the default run
def test_kulisch_lane_rams_map_to_block_ram():
    """The Kulisch lane (two port RAMs and their merge copies) at W = 280, 8 rows."""
    from hdl.node.prism_kulisch_bank import prism_kulisch_bank
    w = 280
    word = w + 3 + KULISCH_WRAP_BITS
    args = (sig(), rst_sig(), sig(2), sig(), sig(), sig(8), sig(), sig(32), sig(word), sig(), sig(8), sig(), sig(32),
            sig(word), sig(), sig(8), sig(), sig(), sig(w), sig(), sig(), sig(), sig(), sig(), sig(KULISCH_WRAP_BITS))
    mems = synth.memory_mapping(prism_kulisch_bank, *args, ROWS=8, ram_style="block")
    assert sorted(m["name"] for m in mems) == ["ram_a", "ram_am", "ram_b", "ram_bm"]
    assert_block_ram(mems, forced=True)


@pytest.mark.slow      # 9 s of yosys, as above
def test_fp32_arrival_lane_ram_maps_to_block_ram():
    from hdl.arith.fp32_arrival_lane import fp32_arrival_lane
    args = (sig(), rst_sig(), sig(), sig(), sig(4), sig(), sig(32), sig(), sig(32))
    mems = synth.memory_mapping(fp32_arrival_lane, *args, ROWS=16, ram_style="block")
    assert [m["name"] for m in mems] == ["ram"]
    assert_block_ram(mems, forced=True)


@pytest.mark.slow      # 11 s of synthesis; the Kulisch and FP32 lanes' RAMs are checked in the default run
def test_frame_banks_map_to_block_ram_by_themselves():
    cap = synth.capture_phase_blocks(320)
    func, args, kwargs, count, _ = cap["prism_ingress"]
    mems = synth.memory_mapping(func, *args, **kwargs)
    assert [m["name"] for m in mems] == ["mem"] and mems[0]["bits"] == 3 * 256 * 512
    assert_block_ram(mems, forced=False)
    assert mems[0]["mapped_to"] == "block RAM"


@pytest.mark.slow
def test_result_and_exact_stores_map_to_block_ram():
    """The result sender's four result-store banks and its exact store (yosys: several minutes)."""
    cap = synth.capture_phase_blocks(280)
    func, args, kwargs, count, _ = cap["prism_result_sender"]
    mems = synth.memory_mapping(func, *args, **kwargs)
    assert sorted(m["name"] for m in mems) == ["bank0", "bank1", "bank2", "bank3", "exact"]
    assert_block_ram(mems, forced=False)
    assert all(m["mapped_to"] == "block RAM" for m in mems)


def test_capture_finds_every_phase_block_with_its_instance_count():
    cap = synth.capture_phase_blocks(280, capacity=4096)
    counts = {k: v[3] for k, v in cap.items()}
    assert set(counts) == set(synth.block_names())
    assert counts["prism_kulisch_bank"] == 64 and counts["prism_fp32_bank"] == 16
    assert counts["prism_ingress"] == 2 and counts["prism_reader"] == 2
    # per port: lanes 0-15 (any format), 16-31 (never FP32), 32-63 (INT8 only)
    assert counts["number_decoder"] == 32 and counts["half_decoder"] == 32 and counts["int8_decoder"] == 64
    assert len(cap["prism_kulisch_bank"][1][18]) == 280          # o_state at W = 280


def test_a_composite_with_bus_ports_is_converted_with_its_sub_blocks_as_black_boxes():
    """prism_kulisch_store's sub-blocks take buses (hdl/node/prism_buses.py): each black box has a
    port per bus field, named as MyHDL names them, and the cached-only path converts the composite
    and reports missing figures without running yosys."""
    from cosim.sim.toolchain import bind_arguments, build_root, design_key
    func, args, kwargs, count, inst = synth.capture_phase_blocks(280)["prism_kulisch_store"]
    folder = os.path.join(build_root(), "synth-blackboxed", "cosim",
                          f"prism_kulisch_store-{design_key(func, bind_arguments(func, args, kwargs))}")
    try:
        synth.synth_block(func, args, kwargs, instance=inst, cached_only=True)
    except synth.SynthError as e:
        assert "no figures" in str(e)
    with open(os.path.join(folder, "blackboxes.v")) as fh:
        decls = fh.read()
    for port in ("input [63:0] group_lanes", "input [255:0] written", "output [15:0] sub_go",
                 "output [511:0] sub_sdata", "output [279:0] o_state"):
        assert port in decls
    with open(os.path.join(folder, "prism_kulisch_store.v")) as fh:
        text = fh.read()
    assert text.count("prism_kulisch_route_blackbox bb_") == 8 and text.count("prism_kulisch_bank_blackbox bb_") == 64


def test_doc_section_is_what_the_command_writes():
    doc = os.path.join(ROOT, "docs", "hdl_sizes.md")
    figures = os.path.join(ROOT, "docs", "hdl_sizes_synth.json")
    by_width, target = synth.load_figures(figures)
    assert sorted(by_width) == [280, 320]
    assert synth.doc_section(doc) == synth.report_markdown(by_width, target).strip("\n")


def test_every_phase_block_has_figures_at_both_widths():
    """The node's totals are sums over all its blocks, not lower bounds."""
    by_width, _ = synth.load_figures(os.path.join(ROOT, "docs", "hdl_sizes_synth.json"))
    for w, rows in by_width.items():
        missing = [r["block"] for r in rows if "figures" not in r]
        assert not missing, f"W {w}: no figures for {missing}"
        assert [r["block"] for r in rows] == synth.block_names()


def test_profile_is_read_from_the_summary_yosys_ends_its_log_with():
    log = ("3.4. Executing PROC pass\n...\nEnd of script. Logfile hash: 0, CPU: user 1.00s\nTime spent:\n"
           "   24%     6 calls   85.522 sec proc_mux\n   19%     1 calls   68.380 sec abc\n"
           "    0%     1 calls    0.000 sec fsm_map\n")
    assert synth.parse_profile(log) == [("proc_mux", 85.522), ("abc", 68.38), ("fsm_map", 0.0)]
    assert synth.parse_profile(log, top=1) == [("proc_mux", 85.522)]
    assert synth.parse_profile("no summary") == []


def test_a_yosys_run_past_its_time_limit_leaves_no_child_running(tmp_path, monkeypatch):
    """yosys runs abc as a child process; the time limit must end it too."""
    monkeypatch.setattr(synth, "YOSYS_TIMEOUT_S", 1)
    pid_file = tmp_path / "child.pid"
    with pytest.raises(subprocess.TimeoutExpired):
        synth._run_yosys_group(["sh", "-c", f"sleep 30 & echo $! > {pid_file}; wait"], str(tmp_path))
    child = int(pid_file.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        if open(f"/proc/{child}/stat").read().split()[2] == "Z":     # ended, not yet reaped
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"child {child} still running")


def test_doc_section_is_rewritten_in_place(tmp_path):
    path = tmp_path / "sizes.md"
    path.write_text("# sizes\n\nbefore\n")
    synth.write_doc_section(str(path), "table one")
    synth.write_doc_section(str(path), "table two")
    text = path.read_text()
    assert text.count(synth.DOC_BEGIN) == 1 and "table two" in text and "table one" not in text
    assert text.startswith("# sizes\n\nbefore\n")


@pytest.mark.parametrize("argv, message", [
    (["--width", "300"], "--width 300"),
    (["--target", "altera"], "--target altera"),
    (["no_such_block"], "unknown block"),
    (["--width", "wide"], "invalid int value"),
    (["--into-doc"], "--into-doc takes one BLOCK"),
    (["prism_egress", "--into-doc", "--no-doc"], "--into-doc takes one BLOCK"),
])
def test_bad_arguments_give_one_line(argv, message):
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "synth", *argv], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in r.stderr


def test_one_block_report():
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "synth", "prism_egress", "--no-doc"], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    header = [c.strip() for c in next(line for line in lines if line.startswith("| block |")).split("|")]
    row = [line for line in lines if line.startswith("| prism_egress | phase 7")]     # the resource row
    assert len(row) == 1
    cells = [c.strip() for c in row[0].split("|")]
    assert int(cells[header.index("FF")].replace(",", "")) > 1024   # two 512-bit output registers at least


@pytest.mark.slow      # 9 s: a synthesis of one block at both widths
def test_one_block_into_the_doc_replaces_its_rows_and_keeps_the_others(tmp_path):
    """`prism synth BLOCK --into-doc`: the block synthesised now at both widths, its rows put in place
    of the recorded ones, every other block's rows kept, and the tables rewritten from the result."""
    import json
    import shutil
    doc = tmp_path / "sizes.md"
    shutil.copy(os.path.join(ROOT, "docs", "hdl_sizes.md"), doc)
    recorded = json.load(open(os.path.join(ROOT, "docs", "hdl_sizes_synth.json")))
    for rows in recorded["widths"].values():        # a stale figure the command must replace
        next(r for r in rows if r["block"] == "prism_egress")["figures"]["resources"]["LUT"] = 1
    (tmp_path / "sizes_synth.json").write_text(json.dumps(recorded))
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "synth", "prism_egress", "--into-doc", "--doc", str(doc)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    by_width, target = synth.load_figures(str(tmp_path / "sizes_synth.json"))
    assert sorted(by_width) == [280, 320]
    for w, rows in by_width.items():
        before = {x["block"]: x for x in recorded["widths"][str(w)]}
        assert [x["block"] for x in rows] == [x["block"] for x in recorded["widths"][str(w)]]
        for row in rows:
            if row["block"] == "prism_egress":
                assert row["figures"]["resources"]["LUT"] > 1
            else:
                assert row == before[row["block"]]
    assert synth.doc_section(str(doc)) == synth.report_markdown(by_width, target).strip("\n")


@pytest.mark.slow      # 9 s: a synthesis of one block at both widths
def test_a_block_new_since_the_figures_were_recorded_joins_them_in_phase_order(tmp_path):
    """`prism synth BLOCK --into-doc` for a block the recorded figures lack (a block added to the
    node since): its rows join the others at its place in the phase order."""
    import json
    import shutil
    doc = tmp_path / "sizes.md"
    shutil.copy(os.path.join(ROOT, "docs", "hdl_sizes.md"), doc)
    recorded = json.load(open(os.path.join(ROOT, "docs", "hdl_sizes_synth.json")))
    for w in recorded["widths"]:
        recorded["widths"][w] = [r for r in recorded["widths"][w] if r["block"] != "prism_egress"]
    (tmp_path / "sizes_synth.json").write_text(json.dumps(recorded))
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "synth", "prism_egress", "--into-doc", "--doc", str(doc)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    by_width, _ = synth.load_figures(str(tmp_path / "sizes_synth.json"))
    order = synth.block_names()
    for rows in by_width.values():
        names = [x["block"] for x in rows]
        assert "prism_egress" in names and names == sorted(names, key=order.index)


def _netlist(tmp_path, cells):
    """A mapped netlist of LUT cells {name: (input bits, output bit)} behind one register (bit 2) and
    in front of another (its D is bit 99)."""
    import json
    body = {n: {"type": "LUT2", "port_directions": {"I0": "input", "I1": "input", "O": "output"},
                "connections": {"I0": [ins[0]], "I1": [ins[-1]], "O": [out]}} for n, (ins, out) in cells.items()}
    body["q"] = {"type": "FDRE", "port_directions": {"C": "input", "D": "input", "Q": "output"},
                 "connections": {"C": [1], "D": [99], "Q": [2]}}
    path = tmp_path / "net.json"
    path.write_text(json.dumps({"modules": {"top": {"ports": {}, "netnames": {}, "cells": body}}}))
    return str(path)


def test_logic_depth_counts_a_cell_that_waits_beside_its_reader(tmp_path):
    """A feeds B and C, B feeds C: while C's inputs are expanded A waits on the work stack beside B,
    which reads it too.  That is no loop: the path q -> A -> B -> C -> q is three levels."""
    from cosim.reports.synth import logic_depth
    path = _netlist(tmp_path, cells={"C": ([10, 11], 99), "A": ([2, 2], 10), "B": ([10, 10], 11)})
    assert logic_depth(path, "top")[0]["depth"] == 3.0


def test_logic_depth_cuts_a_real_loop_once(tmp_path):
    """A combinational loop (X -> Y -> X) is cut at the edge that closes it, and the depth stays finite."""
    from cosim.reports.synth import logic_depth
    path = _netlist(tmp_path, cells={"X": ([2, 21], 20), "Y": ([20, 20], 21), "Z": ([21, 21], 99)})
    assert logic_depth(path, "top")[0]["depth"] in (2.0, 3.0)


def _module(cells, ports=None):
    """A mapped module: LUT cells {name: (input bits, output bit)}, other cells given whole."""
    body = {}
    for n, c in cells.items():
        if isinstance(c, dict):
            body[n] = c
            continue
        ins, out = c
        body[n] = {"type": f"LUT{len(ins)}", "port_directions": {**{f"I{i}": "input" for i in range(len(ins))}, "O": "output"},
                   "connections": {**{f"I{i}": [b] for i, b in enumerate(ins)}, "O": [out]}}
    return {"ports": {p: {"direction": d, "bits": bits} for p, (d, bits) in (ports or {}).items()},
            "netnames": {}, "cells": body}


def _ff(d, q):
    return {"type": "FDRE", "port_directions": {"C": "input", "D": "input", "Q": "output"},
            "connections": {"C": [1], "D": [d], "Q": [q]}}


def _write(tmp_path, name, modules):
    import json
    path = tmp_path / name
    path.write_text(json.dumps({"modules": modules}))
    return str(path)


def test_a_sub_block_states_its_paths_from_its_ports(tmp_path):
    """`port_paths`: input a reaches output y through two LUTs, the register r reaches y through one,
    input b reaches a register through one; b has no path to y."""
    from cosim.reports.synth import port_paths
    sub = _module({"a1": ([10], 11), "a2": ([11, 20], 12), "b1": ([30], 31), "r": _ff(31, 20)},
                  ports={"a": ("input", [10]), "b": ("input", [30]), "y": ("output", [12])})
    paths = port_paths(_write(tmp_path, "sub.json", {"sub": sub}), "sub")
    assert paths["through"] == [["a", "y", 2.0]]
    assert paths["from_state"] == {"y": 1.0}        # r -> a2
    assert paths["to_state"] == {"b": 1.0}


def test_a_black_box_is_timed_by_its_declared_paths(tmp_path):
    """The parent: q -> LUT -> box.a, box.y -> LUT -> d.  Declared a -> y of 2 levels: the path is
    1 + 2 + 1 = 4 levels.  A path into the box's input b, which reaches only the box's registers (3
    levels inside), ends there: 1 + 3.  Without declared paths the box is the old zero-delay cell
    (every output depends on every input): 2 levels, and b's path wrongly reaches y."""
    from cosim.reports.synth import logic_depth
    box = {"type": "sub_blackbox", "port_directions": {"a": "input", "b": "input", "y": "output"},
           "connections": {"a": [40], "b": [41], "y": [42]}}
    parent = _module({"q": _ff(99, 2), "p1": ([2], 40), "p2": ([2, 2], 50), "p3": ([50], 41), "box": box,
                      "o1": ([42], 60), "d": _ff(60, 3)})
    path = _write(tmp_path, "parent.json", {"top": parent})
    declared = {"sub_blackbox": {"through": [["a", "y", 2.0]], "from_state": {"y": 1.0}, "to_state": {"b": 3.0}}}
    ends = {e["end"]: e["depth"] for e in logic_depth(path, "top", boxes=declared)}
    assert ends == {"net3": 4.0, "sub.b (inside)": 5.0, "net2": 0.0}     # d's Q is bit 3, q's bit 2
    blind = logic_depth(path, "top")
    assert max(e["depth"] for e in blind) == 3.0     # p2 -> p3 -> box (zero) -> o1: the old count


def test_declared_paths_must_name_the_box_ports(tmp_path):
    from cosim.reports.synth import SynthError, logic_depth
    box = {"type": "sub_blackbox", "port_directions": {"a": "input", "y": "output"},
           "connections": {"a": [40], "y": [42]}}
    path = _write(tmp_path, "parent.json", {"top": _module({"box": box, "o": ([42], 60), "d": _ff(60, 3)})})
    with pytest.raises(SynthError, match="port 'z'"):
        logic_depth(path, "top", boxes={"sub_blackbox": {"through": [["z", "y", 1.0]], "from_state": {}, "to_state": {}}})
