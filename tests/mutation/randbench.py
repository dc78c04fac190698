"""A random-stimulus test bench for any module with a clock: every input drawn from a seeded
xorshift generator after each falling edge and once before the first rising edge (a reset input held for
the first cycles, then raised now and then), every output printed after each rising edge.  Two designs with the same ports give the
same lines exactly when they behave alike on that stimulus, so the tests compare the original,
the instrumented design under each select value and each single mutant line by line."""
import os
import re
import subprocess

from cosim.mutation import verilog as V

RESET_NAMES = ("rst", "reset", "rst_n", "reset_n")


def _width(decl, params):
    if not decl.range:
        return 1
    lo, hi = decl.range.strip()[1:-1].split(":")
    value = lambda e: eval(e, {"__builtins__": {}}, params)     # noqa: S307 - a range of numbers and parameters
    return abs(value(hi) - value(lo)) + 1


def ports(verilog_text, module=None):
    """[(name, direction, width)] of the module's ports (ranges may name parameters set to numbers)."""
    mod = V.parse(verilog_text).module(module)
    params = {}
    for start, end in mod.parameters:
        for name, number in re.findall(r"\b([A-Za-z_]\w*)\s*=\s*(\d+)\b", verilog_text[start:end]):
            params[name] = int(number)
    return [(n, mod.declarations[n].direction, _width(mod.declarations[n], params)) for n in mod.ports]


def testbench(verilog_text, module=None, cycles=200, seed=1, clock="clk"):
    mod = V.parse(verilog_text).module(module)
    plist = ports(verilog_text, module)
    # xorshift32, not $random: Verilator's $random draws other numbers than Icarus's
    L = ["`timescale 1ns/1ps", "module prism_rand_tb;", f"reg [31:0] seed = {seed or 1};", "integer cycle;",
         "function [31:0] draw; input [31:0] x; reg [31:0] y;",
         "begin y = x ^ (x << 13); y = y ^ (y >> 17); draw = y ^ (y << 5); end endfunction"]
    conn = []
    for name, direction, width in plist:
        rng = f"[{width - 1}:0] " if width > 1 else ""
        if direction == "input":
            start = 1 if name in ("rst", "reset") else 0
            L.append(f"reg {rng}{name} = {start};")
        else:
            L.append(f"wire {rng}{name};")
        conn.append(f".{name}({name})")
    L.append(f"{mod.name} dut({', '.join(conn)});")
    outs = [(n, w) for n, d, w in plist if d != "input"]
    fmt = " ".join("%h" for _ in outs)
    draws = []
    for name, direction, width in plist:
        if direction != "input" or name == clock:
            continue
        if name in RESET_NAMES:
            active = "0" if name.endswith("_n") else "1"
            draws.append("    seed = draw(seed);")
            draws.append(f"    {name} = (cycle < 2 || seed[5:0] == 0) ? 1'b{active} : ~1'b{active};")
            continue
        for k in range((width + 31) // 32):
            draws.append("    seed = draw(seed);")
            draws.append(f"    {name} = ({name} << 32) | seed;" if k else f"    {name} = seed;")
    # inputs are first drawn 1 ns after time 0, before the first rising edge: every combinational
    # process has run by then in any language mode (as a real stimulus would have it)
    L.append("initial begin")
    L.append("  cycle = 0;")
    L.append("  #1;")
    L += draws
    L.append(f"  for (cycle = 0; cycle < {cycles}; cycle = cycle + 1) begin")
    L.append(f"    #4 {clock} = 1;")
    L.append(f'    #1 $display("%0d {fmt}", cycle{"".join(", " + n for n, _ in outs)});')
    L.append(f"    #4 {clock} = 0;")
    L.append("    #1;")
    L += draws
    L.append("  end")
    L.append("  $finish;")
    L.append("end")
    L.append("endmodule")
    return "\n".join(L) + "\n"


def run_icarus(folder, design_text, bench_text, generation="-g2012", plusargs=(), name="d"):
    """Compile and run; returns the printed lines (ValueError with iverilog's message on failure)."""
    os.makedirs(folder, exist_ok=True)
    dpath, tpath, exe = (os.path.join(folder, f"{name}.v"), os.path.join(folder, "tb.v"),
                         os.path.join(folder, f"{name}{generation}.vvp"))
    with open(dpath, "w") as fh:
        fh.write(design_text)
    with open(tpath, "w") as fh:
        fh.write(bench_text)
    compile_design(dpath, tpath, exe, generation)
    return simulate(exe, plusargs)


def compile_design(design_path, bench_path, exe, generation="-g2012"):
    r = subprocess.run(["iverilog", generation, "-o", exe, "-s", "prism_rand_tb", design_path, bench_path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise ValueError(f"iverilog {generation}: {r.stderr.strip()[:2000]}")
    return exe


def simulate(exe, plusargs=()):
    r = subprocess.run(["vvp", "-n", exe, *plusargs], capture_output=True, text=True)
    if r.returncode != 0:
        raise ValueError(f"vvp: {r.stderr.strip()[:2000]}")
    return [line for line in r.stdout.splitlines() if line and line[0].isdigit()]
