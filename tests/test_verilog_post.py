"""Hoisting named-block variables out of MyHDL's processes keeps behaviour and drops the fork."""
import subprocess

import random

import pytest

from cosim.verilog_post import coalesce_part_assigns, hoist_block_locals, procedural_concats

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
    from cosim.toolchain import _hdl_imports, hdl_source_digest
    assert "prism_control" in _hdl_imports("hdl/prism_node.py")
    assert "fp32_add" in _hdl_imports("hdl/fp32_arrival_lane.py")
    assert "prism_node" in _hdl_imports("hdl/prism_node_fault.py")          # relative import
    assert hdl_source_digest("hdl.axis_register") != hdl_source_digest("hdl.prism_node")
    assert hdl_source_digest("hdl.prism_node") == hdl_source_digest("hdl.prism_node")
