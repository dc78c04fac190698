"""Hoisting named-block variables out of MyHDL's processes keeps behaviour and drops the fork."""
import subprocess

from cosim.verilog_post import hoist_block_locals

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
