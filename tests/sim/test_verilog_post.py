"""Hoisting named-block variables out of MyHDL's processes keeps behaviour and drops the fork."""
import os
import random
import re
import subprocess

import pytest

from cosim.sim.verilog_post import (coalesce_part_assigns, hoist_block_locals, merge_clocked_processes,
                                    procedural_concats)

# MyHDL's layout: named processes with their variables declared inside; `total` shadows a
# module signal of the same name, `i` is a loop variable, and one block is a `disable` target.
SOURCE = """module t;
reg clk = 0;
reg [7:0] total = 8'd5;
reg [7:0] a = 0;
reg [7:0] out1 = 0;
reg [7:0] out2 = 0;
reg [7:0] out3 = 0;

always @(posedge clk) begin: t_first
    reg [8-1:0] total;
    integer i;
    total = 8'h0;
    for (i=0; i<3; i=i+1) begin
        total = total + a + i;
    end
    out1 <= total;
end


always @(posedge clk) begin: t_second
    reg [8-1:0] acc;
    acc = total + 1;
    out2 <= acc;
end


always @(posedge clk) begin: t_loop
    integer k;
    out3 <= 0;
    for (k=0; k<8; k=k+1) begin
        if (k == a[2:0]) disable t_loop;
        out3 <= k;
    end
end

initial begin
    repeat (6) begin
        #5 clk = 1; #5 clk = 0;
        $display("%0d %0d %0d", out1, out2, out3);
        a = a + 3;
    end
    $finish;
end
endmodule
"""


def simulate(tmp_path, text, tag):
    src = tmp_path / f"{tag}.v"
    src.write_text(text)
    exe = tmp_path / f"{tag}.vvp"
    subprocess.run(["iverilog", "-o", str(exe), str(src)], check=True, capture_output=True)
    return subprocess.run(["vvp", "-n", str(exe)], check=True, capture_output=True, text=True).stdout


def shared_behaves_the_same(tmp_path, src):
    """The Icarus build's form of src (processes sharing their variables): the same outputs as src."""
    shared = hoist_block_locals(src, share=True)
    assert simulate(tmp_path, shared, "shared") == simulate(tmp_path, src, "original")
    return shared


def test_hoisted_source_behaves_the_same(tmp_path):
    hoisted = hoist_block_locals(SOURCE)
    assert simulate(tmp_path, hoisted, "hoisted") == simulate(tmp_path, SOURCE, "original")


def test_declarations_leave_the_blocks_and_labels_go_unless_disabled():
    hoisted = hoist_block_locals(SOURCE)
    assert "begin: t_first" not in hoisted and "begin: t_second" not in hoisted
    assert "begin: t_loop" in hoisted                     # `disable t_loop` still needs its name
    assert "reg [8-1:0] t_first_total;" in hoisted and "integer t_first_i;" in hoisted
    assert "reg [7:0] total = 8'd5;" in hoisted            # the module signal is untouched
    # inside t_second `total` is the module signal (no local of that name there)
    assert "t_second_acc = total + 1;" in hoisted


def test_shared_variables_behave_the_same(tmp_path):
    """The Icarus build's processes share their variables by type and position: the same
    outputs on every edge, the module signal `total` still untouched, the `disable` target kept."""
    shared = shared_behaves_the_same(tmp_path, SOURCE)
    # t_first's `total` and t_second's `acc` are the first 8-bit variable of each: one register
    assert "Vshared_r8_0 = total + 1;" in shared and "Vshared_r8_0 = 8'h0;" in shared
    assert shared.count("reg [8-1:0] Vshared_r8_0;") == 1
    assert "integer Vshared_i_0;" in shared and "for (Vshared_i_0=0;" in shared   # t_first's i, t_loop's k
    assert "begin: t_loop" in shared and "reg [7:0] total = 8'd5;" in shared


# Sources whose variables the Icarus build must keep apart: (source lines, what its shared form holds)
SHARING = [
    # A variable may carry a value across a timing control, so a process with one (an event
    # control, a delay, a wait) is never given shared registers.
    pytest.param([
        "module t;",
        "reg clk = 0;",
        "reg [7:0] a = 8'd3;",
        "reg [7:0] q = 0;",
        "always @(posedge clk) begin: other",
        "    reg [8-1:0] x;",
        "    x = a + 1;",
        "    q <= x;",
        "end",
        "initial begin: waits",
        "    reg [8-1:0] x;",
        "    x = 8'd7;",
        "    @(posedge clk);",
        "    $display(\"%0d\", x);",
        "end",
        "always @(a) begin: waits_too",
        "    reg [8-1:0] y;",
        "    y = a;",
        "    #1 $display(\"%0d %0d\", y, q);",
        "end",
        "initial begin #5 clk = 1; #5 clk = 0; #5 clk = 1; a = 9; #5 $finish; end",
        "endmodule", ""], ["waits_x = 8'd7;", "waits_too_y = a;", "Vshared_r8_0 = a + 1;"],
        id="a-process-that-waits-keeps-its-own-variables"),
    # MyHDL writes a one-bit intbv as `reg [1-1:0]` (a node of CAPACITY 256 has such bit maps,
    # indexed by a bit select) and a bool as `reg`: sharing one register between them would make
    # the bit select one of a scalar, which Icarus refuses.
    pytest.param([
        "module t;",
        "reg clk = 0;",
        "reg [0:0] sel = 0;",
        "reg a = 1;",
        "reg q = 0;",
        "reg [0:0] m = 0;",
        "always @(posedge clk) begin: flag",
        "    reg f;",
        "    f = !a;",
        "    q <= f;",
        "end",
        "always @(posedge clk) begin: bits",
        "    reg [1-1:0] map;",
        "    map = m;",
        "    map[sel[1-1:0]] = a;",
        "    m <= map;",
        "end",
        "initial begin repeat (3) begin #5 clk = 1; #5 clk = 0; $display(\"%0d %0d\", q, m); a = !a; end",
        "    $finish; end",
        "endmodule", ""], ["reg Vshared_r1_0;", "reg [1-1:0] Vshared_r1v_0;"],
        id="a-one-bit-vector-never-shares-a-scalar"),
]


@pytest.mark.parametrize("lines, wanted", SHARING)
def test_shared_variables_keep_apart_what_must_not_share(tmp_path, lines, wanted):
    shared = shared_behaves_the_same(tmp_path, "\n".join(lines))
    assert [w for w in wanted if w not in shared] == []


def test_clocked_processes_merge_into_one_per_edge_list(tmp_path):
    """The Icarus build runs the bodies of all processes on the same edges as one process:
    the same outputs on every edge; a `disable` target keeps its block and its name."""
    text, merged = merge_clocked_processes(hoist_block_locals(SOURCE, share=True))
    assert merged == 3
    assert text.count("always @(posedge clk) begin") == 1
    assert "    begin: t_loop" in text and "disable t_loop;" in text
    assert simulate(tmp_path, text, "merged") == simulate(tmp_path, SOURCE, "original")


def test_a_clocked_process_that_waits_is_not_merged(tmp_path):
    src = SOURCE.replace("    out2 <= acc;\n", "    out2 <= acc;\n    #1 out2 <= acc + 1;\n")
    text, merged = merge_clocked_processes(hoist_block_locals(src, share=True))
    assert merged == 2 and text.count("always @(posedge clk) begin") == 2
    assert simulate(tmp_path, text, "merged") == simulate(tmp_path, src, "original")


# MyHDL's layout for ConcatSignals: one assign per part, MSB part first, unsized binary
# constants.  `fixed` has only sources that never change after their declaration (its value
# must still be right from time 0); `gap` leaves bit 4 undriven and `odd` has a part whose
# width cannot be told, so both must stay as they are.
CONCAT_SOURCE = """module c;
reg clk = 0;
reg [7:0] a = 8'd0;
reg [3:0] b = 4'd0;
reg flag = 1'b0;
reg [3:0] k = 4'd9;
wire [15:0] w;
wire [7:0] fixed;
wire [7:0] gap;
wire [7:0] odd;
wire [15:0] copy;
assign w[16-1:12] = b;
assign w[12-1:11] = flag;
assign w[11-1:8] = 'b101;
assign w[8-1:0] = a;
assign fixed[8-1:4] = k;
assign fixed[4-1:0] = 'b0110;
assign gap[8-1:5] = a[3-1:0];
assign gap[4-1:0] = b;
assign odd[8-1:4] = a + 1;
assign odd[4-1:0] = b;
assign copy[16-1:8] = w[16-1:8];
assign copy[8-1:0] = w[8-1:0];
initial begin
    #1 $display("t0 %h %h %h", w, fixed, copy);
    repeat (40) begin
        #5 clk = 1;
        a = $random; b = $random; flag = $random;
        #0 $display("%h %h %h %h %h", w, fixed, gap, odd, copy);
        #5 clk = 0;
        $display("%h %h %h %h %h", w, fixed, gap, odd, copy);
    end
    $finish;
end
endmodule
"""


def test_part_assigns_become_one_concatenation_per_wire():
    text = coalesce_part_assigns(CONCAT_SOURCE)
    assert "assign w = {b, flag, 3'b101, a};" in text
    assert "assign fixed = {k, 4'b0110};" in text
    assert "assign copy = {w[16-1:8], w[8-1:0]};" in text
    # a gap, or a part whose width is unknown: left alone
    assert "assign gap[8-1:5] = a[3-1:0];" in text and "assign odd[8-1:4] = a + 1;" in text
    assert "assign w[" not in text and "assign fixed[" not in text


def test_icarus_form_makes_processes_of_non_constant_concatenations_only():
    text = procedural_concats(coalesce_part_assigns(CONCAT_SOURCE))
    assert "always begin w = {b, flag, 3'b101, a}; @(b or flag or a); end" in text
    assert "reg [15:0] w;" in text and "wire [15:0] w;" not in text
    assert "always begin fixed = {k, 4'b0110}; @(k); end" in text
    assert "always begin copy = {w[16-1:8], w[8-1:0]}; @(w); end" in text


def test_joined_and_procedural_forms_simulate_the_same_from_time_0(tmp_path):
    original = simulate(tmp_path, CONCAT_SOURCE, "parts")
    joined = simulate(tmp_path, coalesce_part_assigns(CONCAT_SOURCE), "joined")
    procedural = simulate(tmp_path, procedural_concats(coalesce_part_assigns(CONCAT_SOURCE)), "procedural")
    assert original.startswith("t0 0500 96 0500")        # every value known at time 0
    assert "x" not in original.lower()
    assert joined == original and procedural == original
    assert len(set(original.split("\n"))) > 20           # the inputs did move


def test_build_key_follows_the_block_and_what_it_imports_only():
    """Editing one block must not invalidate the builds of unrelated ones (the node takes minutes
    to convert), but must invalidate every block that imports it."""
    from cosim.sim.convert import _ROOT, _imported_files, hdl_modules, hdl_source_digest
    index = {n: os.path.join(_ROOT, *d.split(".")) + ".py" for n, d in hdl_modules().items()}

    def imports(path):
        return {os.path.basename(f)[:-3] for f in _imported_files(os.path.join(_ROOT, path), index)}
    assert "prism_control" in imports("hdl/node/prism_node.py")
    assert "fp32_add" in imports("hdl/arith/fp32_arrival_lane.py")
    assert "prism_node" in imports("cosim/node/prism_node_fault.py")      # a test-only variant outside hdl/
    assert hdl_source_digest("hdl.common.axis_register") != hdl_source_digest("hdl.node.prism_node")
    assert hdl_source_digest("hdl.node.prism_node") == hdl_source_digest("hdl.node.prism_node")
    # the variant's own source counts: editing it rebuilds it
    assert hdl_source_digest("cosim.node.prism_node_fault") != hdl_source_digest("hdl.node.prism_node")


def _node_build():
    from cosim.sim import toolchain
    from cosim.node.node_harness import node_block, node_signals
    return toolchain.build(node_block(), **node_signals(), KULISCH_W=320, CAPACITY=4096)


def test_every_rewrite_pass_fires_on_the_node():
    """If MyHDL's output changed shape, a regular-expression pass would silently stop firing and
    simulation would get slower (or, for the time-0 wake, wrong under -g2012): each pass must
    change the node's Verilog, and MyHDL's own output is kept beside the rewritten file."""
    import os
    from cosim.sim import toolchain
    folder, name, _ = _node_build()
    passes = toolchain.rewrite_passes(folder, name)
    assert set(passes) == {"hoist_block_locals", "share_process_variables", "coalesce_part_assigns",
                           "function_returns", "wake_at_time0", "initialise_output_regs", "procedural_concats",
                           "merge_clocked_processes"}
    assert all(n > 0 for n in passes.values()), passes
    raw = open(os.path.join(folder, f"{name}.raw.v")).read()
    assert raw != open(os.path.join(folder, f"{name}.v")).read()
    assert "prism_time0" not in raw
    # Icarus compiles in time quadratic in one scope's names: its source keeps a few hundred
    # shared process variables where Verilator's keeps one register per process variable
    icarus = open(toolchain.icarus_source(folder, name)).read()
    shared = set(re.findall(r"\bVshared_\w+", icarus))
    assert 0 < len(shared) < 400, len(shared)
    assert not re.search(r"\bVshared_", open(os.path.join(folder, f"{name}.v")).read())


@pytest.mark.slow      # a second whole-node build (MyHDL's output as written): 21 s cold; each pass has its own tests above
def test_raw_and_rewritten_node_give_the_same_frames_on_the_same_cycles():
    """One hostile regression scenario (resets, aborts, malformed frames, backpressure) on the
    node built from MyHDL's output as written and from the rewritten Verilog, under Icarus
    -g2005 (where the raw output's combinational logic also runs at time 0)."""
    from cosim.sim import toolchain
    from cosim.node.node_harness import run_node
    from cosim.node.regress import random_scenario
    sc = random_scenario(11)
    runs = {}
    for label, ctx in (("rewritten", None), ("raw", toolchain.raw_verilog())):
        if ctx is None:
            runs[label] = run_node(sc, "batch-icarus", kulisch_w=320, max_cycles=60000)
        else:
            with ctx:
                runs[label] = run_node(sc, "batch-icarus", kulisch_w=320, max_cycles=60000)
    a, b = runs["rewritten"], runs["raw"]
    assert sum(len(a.tx[p]) for p in (0, 1)) > 0
    for p in (0, 1):
        assert [(f.beats, f.cycles) for f in a.tx[p]] == [(f.beats, f.cycles) for f in b.tx[p]], p
        assert [f.cycles for f in a.rx[p]] == [f.cycles for f in b.rx[p]], p
    assert a.counters == b.counters and a.resets == b.resets


def test_hoisting_leaves_sized_literals_alone():
    """A process variable named like a literal's digits (`b1`, `hff`) is renamed in the body
    but not inside `1'b1` or `8'hff` (found on a formal harness whose variable was `b1`)."""
    src = "\n".join([
        "module t(input clk, output reg [7:0] q);",
        "always @(posedge clk) begin: P",
        "    reg b1;",
        "    reg [7:0] hff;",
        "    b1 = 1'b1;",
        "    hff = 8'hff;",
        "    q <= (b1 ? hff : 8'h0);",
        "end",
        "endmodule", ""])
    out = hoist_block_locals(src)
    assert "P_b1 = 1'b1;" in out and "P_hff = 8'hff;" in out
    assert "q <= (P_b1 ? P_hff : 8'h0);" in out


def myhdl_memory_init(name, value):
    """What MyHDL writes (initial_values=True) for a 16 x 8-bit memory `name` filled with `value`."""
    i = f"INITIALIZE_{name.upper()}_i"
    return (f"reg [7:0] {name} [0:16-1];\n\n"
            f"integer {i};\n"
            f"initial begin\n"
            f"    for({i}=0; {i}<16; {i}={i}+1) begin\n"
            f"        {name}[{i}] = {value};\n"
            f"    end\n"
            f"end\n")


MEMORY_INIT = myhdl_memory_init("zeros", 0) + "\n" + myhdl_memory_init("fives", 5)


def test_verilator_source_drops_only_zero_memory_loops_and_keeps_line_numbers():
    from cosim.sim.verilog_post import drop_zero_memory_init
    out, n = drop_zero_memory_init(MEMORY_INIT)
    assert n == 1
    assert out.count("\n") == MEMORY_INIT.count("\n")
    assert "INITIALIZE_ZEROS_i" not in out and "fives[INITIALIZE_FIVES_i] = 5;" in out
    lines_in, lines_out = MEMORY_INIT.split("\n"), out.split("\n")
    assert lines_out.index("reg [7:0] fives [0:16-1];") == lines_in.index("reg [7:0] fives [0:16-1];")


def test_every_memory_of_the_node_is_zeroed_by_a_loop_verilator_may_drop():
    """The node's memories all start at 0, so its Verilator source has no time-0 loop left
    (the loops were 365,000 lines of C++ in one function)."""
    from cosim.sim.batch import verilator_source
    from cosim.sim.verilog_post import drop_zero_memory_init
    folder, name, _ = _node_build()
    with open(f"{folder}/{name}.v") as fh:
        text = fh.read()
    out, n = drop_zero_memory_init(text)
    assert n > 500 and "INITIALIZE_" not in out
    with open(f"{folder}/{verilator_source(folder, name)}") as fh:
        assert fh.read() == out


def test_function_returns_drops_only_a_final_disable():
    from cosim.sim.verilog_post import function_returns
    src = "\n".join(["function [7:0] f;", "    input [7:0] a;", "begin: F_RETURN", "    if (a) begin",
                     "        f = 1;", "        disable F_RETURN;", "    end", "    f = a;", "    disable F_RETURN;",
                     "end", "endfunction", "function [7:0] g;", "    input [7:0] a;", "begin: G_RETURN",
                     "    g = a;", "    disable G_RETURN;", "end", "endfunction"])
    out, n = function_returns(src)
    assert n == 2
    assert "disable G_RETURN" not in out and "begin: G_RETURN" not in out
    assert out.count("disable F_RETURN;") == 1 and "begin: F_RETURN" in out     # an early return stays
