"""Power-on behaviour is the same under every simulator and language mode.

Under SystemVerilog rules (`iverilog -g2012`, the mode cocotb's Icarus runner uses) a
declaration initialiser is no time-0 event, so a combinational process whose inputs keep
their initial values never runs.  The node once hung on its first operation when that was
KULISCH_FIXED with an INT8 result (every code 0): the read-out's `direct` select kept its
declared 0.  The tool chain now wakes every combinational process at time 0
(cosim/verilog_post.wake_at_time0); these tests catch any block that would depend on it."""
import os
import random
import subprocess

import pytest
from myhdl import Signal, always_comb, block, intbv

from cosim.sim import toolchain
from cosim.node.node_harness import check, run_node
from cosim.node.scenarios import Operation, collective, random_elements
from cosim.sim.verilog_post import TIME0, wake_at_time0

RESULTS = {"kulisch": ("int8", "fp16", "bf16", "fp32", "exact", "auto"),
           "fp32-arrival": ("int8", "fp16", "bf16", "fp32", "auto")}
CASES = [(p, r) for p, rs in RESULTS.items() for r in rs]


# -g2012 is where a process that relies on a time-0 event goes wrong; the default run keeps it for
# every result format and leaves -g2005 (which every other node test runs) to the slow set
@pytest.mark.parametrize("backend", [pytest.param("batch-icarus", marks=pytest.mark.slow), "batch-icarus-2012"])
@pytest.mark.parametrize("policy,result", CASES)
def test_first_operation_after_power_on(backend, policy, result):
    """Each run starts from power-on; INT8 data, so an INT8 result sets every code to 0."""
    rng = random.Random(3)
    op = Operation(1, 1, policy, "int8", result, random_elements(rng, "int8", (2, 64)))
    sc = collective(op, seed=3)
    run = run_node(sc, backend, max_cycles=5000)
    report = check(sc, run)
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:5])
    assert report.results_checked == 2 and not run.busy_at_end


@block
def select_like_readout(policy, out_fmt, direct):
    """The read-out's select in miniature: its inputs keep their initial values."""
    @always_comb
    def select():
        if out_fmt == 5:                # (an if makes MyHDL write a process, not an assign)
            direct.next = 0
        else:
            direct.next = policy == 0
    return select


def _simulate(verilog, generation, tmp_path, tag):
    tb = ("module tb; reg [1:0] policy = 0; reg [2:0] out_fmt = 0; wire direct;\n"
          "select_like_readout dut(policy, out_fmt, direct);\n"
          'initial begin #10 $display("direct=%b", direct); $finish; end endmodule\n')
    src, tbf, exe = (tmp_path / f"{tag}.v", tmp_path / f"tb_{tag}.v", tmp_path / f"{tag}.vvp")
    src.write_text(verilog)
    tbf.write_text(tb)
    subprocess.run(["iverilog", generation, "-o", str(exe), str(src), str(tbf)], check=True, capture_output=True)
    return subprocess.run(["vvp", "-n", str(exe)], check=True, capture_output=True, text=True).stdout


def test_time0_wake_fixes_combinational_logic_under_systemverilog_rules(tmp_path):
    """MyHDL's raw output never computes `direct` under -g2012; with the time-0 wake it is 1 in
    both modes (the raw output is right only under -g2005)."""
    policy, out_fmt, direct = Signal(intbv(0)[2:]), Signal(intbv(0)[3:]), Signal(bool(0))
    select_like_readout(policy, out_fmt, direct).convert(hdl="Verilog", path=str(tmp_path),
                                                         initial_values=True)
    raw = (tmp_path / "select_like_readout.v").read_text()
    woken, changed = wake_at_time0(raw)
    assert changed == 1 and TIME0 in woken
    assert "direct=1" not in _simulate(raw, "-g2012", tmp_path, "raw12")      # the fault: never computed
    assert "direct=1" in _simulate(raw, "-g2005", tmp_path, "raw05")
    assert "direct=1" in _simulate(woken, "-g2012", tmp_path, "woken12")
    assert "direct=1" in _simulate(woken, "-g2005", tmp_path, "woken05")


def test_every_combinational_process_of_the_node_is_woken():
    """Static check on the converted node: no `always @(...)` without an edge lacks the trigger."""
    import re
    from cosim.node.node_harness import node_block, node_signals
    folder, name, _ = toolchain.build(node_block(), **node_signals(), KULISCH_W=320, CAPACITY=4096)
    text = open(os.path.join(folder, name + ".v")).read()
    heads = re.findall(r"^\s*always\s*@\(([^)]*)\)", text, re.M)
    comb = [h for h in heads if not re.search(r"\b(posedge|negedge)\b", h)]
    assert comb, "no combinational process found: the check would be empty"
    assert all(TIME0 in h for h in comb)


@block
def registered_output(clk, count):
    """A counter whose value is a registered top-level output, like the node's counter_value."""
    from myhdl import always

    @always(clk.posedge)
    def step():
        count.next = (count + 1) % 16
    return step


def test_registered_outputs_start_at_their_initial_value(tmp_path):
    """MyHDL declares a registered top-level output without its initial value: it is x until the
    first clock edge (cocotb read the node's counter_value as x at the first edge).  The tool chain
    gives such outputs their port's initial value, as it does every internal register."""
    from myhdl import modbv
    from cosim.sim.verilog_post import initialise_output_regs
    clk, count = Signal(bool(0)), Signal(modbv(5)[4:])
    registered_output(clk, count).convert(hdl="Verilog", path=str(tmp_path), initial_values=True)
    raw = (tmp_path / "registered_output.v").read_text()
    fixed, changed = initialise_output_regs(raw, {"count": 5})
    assert changed == 1
    tb = ("module tb; reg clk = 0; wire [3:0] count;\nregistered_output dut(clk, count);\n"
          'initial begin #1 $display("count=%b", count); #1 clk = 1; #1 $display("count=%b", count); '
          "$finish; end endmodule\n")
    for tag, text in (("raw", raw), ("fixed", fixed)):
        for gen in ("-g2005", "-g2012"):
            src, tbf, exe = tmp_path / f"{tag}.v", tmp_path / f"tb_{tag}.v", tmp_path / f"{tag}{gen}.vvp"
            src.write_text(text)
            tbf.write_text(tb)
            subprocess.run(["iverilog", gen, "-o", str(exe), str(src), str(tbf)], check=True, capture_output=True)
            out = subprocess.run(["vvp", "-n", str(exe)], check=True, capture_output=True, text=True).stdout
            if tag == "raw":
                assert "count=xxxx" in out, out          # the fault the pass removes
            else:
                assert "count=0101" in out and "count=0110" in out, out


def test_every_registered_output_of_the_node_has_its_initial_value():
    """Static check on the converted node: every top-level `reg` output has an initialiser."""
    import re
    from cosim.node.node_harness import node_block, node_signals
    folder, name, _ = toolchain.build(node_block(), **node_signals(), KULISCH_W=320, CAPACITY=4096)
    text = open(os.path.join(folder, name + ".v")).read()
    head = text[:text.index("endmodule")]
    outputs = set(re.findall(r"^output\s+(?:\[[^\]]+\]\s+)?(\w+);", head, re.M))
    regs = re.findall(r"^reg\s+(?:\[[^\]]+\]\s+)?(\w+)(\s*=\s*\d+)?;", head, re.M)
    out_regs = [(n, init) for n, init in regs if n in outputs]
    assert any(n == "counter_value" for n, _ in out_regs), "counter_value is a registered output"
    assert all(init for _, init in out_regs), [n for n, init in out_regs if not init]
