"""Verilog samples more than one mutation test reads."""

# MyHDL's form of a function: its result in a local register, given a default first;
# MYHDL1_add(x, z) = x + z with bit 8 set when both are negative
ADD = """\
function [8:0] MYHDL1_add;
    input [7:0] x;
    input [7:0] z;
    reg [8:0] t;
begin
    t = 9'h0;
    t = (x + z);
    if ((x[7] && z[7])) begin
        t[8] = 1'b1;
    end
    MYHDL1_add = t;
end
endfunction
"""

# MyHDL's functions (`function [N:0] MYHDLk_name` with a local result register), one per call:
# MYHDL1_add from a clocked process, MYHDL2_mix and MYHDL3_flags from a combinational process
# with an event list.  Known equivalent mutants: bit 0 of 8'h5a (the caller's mask 8'h3c drops
# it), the first value of frac_nz (read only where `special` is 0 and f is 0 anyway) and the first
# value of f (both of its bits are set after it).
FUNCTIONS = """
module fsum (input clk, input rst, input [7:0] a, input [7:0] b, output reg [8:0] q = 0, output reg [7:0] y);
""" + ADD + """function [1:0] MYHDL3_flags;
    input [7:0] d;
    input [1:0] fmt;
    reg special;
    reg frac_nz;
    reg [1:0] f;
begin
    f = 2'h0;
    special = (0 != 0);
    frac_nz = (0 != 0);
    if ((fmt == 1)) begin
        special = (d[7:6] == 3);
        frac_nz = (d[1:0] != 0);
    end
    f[0] = (special && frac_nz);
    f[1] = (special && (!frac_nz));
    MYHDL3_flags = f;
end
endfunction
function [7:0] MYHDL2_mix;
    input [7:0] x;
    reg [7:0] t;
begin
    t = 8'h0;
    t = (x ^ 8'h5a);
    MYHDL2_mix = t;
end
endfunction
always @(posedge clk) begin
    if (rst) q <= 0;
    else q <= MYHDL1_add(a, b);
end
always @(a, b) begin
    y = (MYHDL2_mix(a) & 8'h3c) | {MYHDL3_flags(a, b[1:0]), 6'h0} | (b & 8'h03);
end
endmodule
"""
