"""All mutants in one build (cosim/mutation/instrument.py): with no select or select 0 the
instrumented design is the original, with select K it is exactly mutant K (`apply`), under
`iverilog -g2005` and `-g2012` and Verilator, from time 0 on."""
import os
import shutil
import subprocess

import pytest

import randbench
from cosim.mutation.instrument import SELECT, apply, instrument
from cosim.mutation.sites import find_sites, select
from samples import FUNCTIONS

# A small design with every form and kind: a continuous assignment, a combinational process with
# an event list and one with @*, a clocked process with a signed right-hand side wider than its
# operands (the reason mutants are whole statements: see instrument.py), a memory.  No value is
# ever x (the simulators would show x differently).
SMALL = """
module mixed (input clk, input rst, input [7:0] a, input [7:0] b, output reg [7:0] q = 0, output [7:0] y,
              output reg [15:0] wide = 0, output [7:0] c);
reg [7:0] v;
reg signed [7:0] s;
reg [7:0] mem [0:3];
reg [1:0] wp = 0;
integer i;
initial for (i = 0; i < 4; i = i + 1) mem[i] = 0;
assign y = rst ? 8'h0 : (a & b) ^ s;
always @* begin
  v = 8'h0;
  v = a + 3;
  if (a < b) v = v - 1;
end
always @(a or b) begin
  s = $signed(a[3:0]) - 4'sd3;
end
always @(posedge clk) begin
  if (rst) q <= 0;
  else q <= q + v[3:0] + a[b[1:0] + 1];
  wide <= $signed(s);
  mem[wp] <= a;
  wp <= wp + 1;
end
assign c = mem[~wp] | 8'h01;
endmodule
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("instrument"))
    sites = find_sites(SMALL)
    bench = randbench.testbench(SMALL, cycles=120)
    return folder, sites, instrument(SMALL, sites), bench


@pytest.mark.parametrize("generation", ["-g2005", "-g2012"])
def test_select_0_is_the_original_and_select_k_is_mutant_k(small, generation):
    folder, sites, text, bench = small
    base = randbench.run_icarus(folder, SMALL, bench, generation, name="original")
    exe = randbench.compile_design(os.path.join(folder, "inst.v"), os.path.join(folder, "tb.v"),
                                   os.path.join(folder, f"inst{generation}.vvp"), generation) \
        if _write(os.path.join(folder, "inst.v"), text) else None
    assert randbench.simulate(exe) == base
    assert randbench.simulate(exe, ["+prism_mutant=0"]) == base
    differ = 0
    for m in sites:
        want = randbench.run_icarus(folder, apply(SMALL, m), bench, generation, name="mutant")
        assert randbench.simulate(exe, [f"+prism_mutant={m.id}"]) == want, m.description
        differ += want != base
    assert differ >= len(sites) - 4          # the stuck `wide` register and a few others are invisible


def _write(path, text):
    with open(path, "w") as fh:
        fh.write(text)
    return True


def _verilator_simulation(tmp_path, design, bench):
    """`design` under the random test bench `bench`, built with Verilator in tmp_path: a function
    of the simulator's plusargs that runs it and returns the bench's sample lines."""
    _write(str(tmp_path / "tb.v"), bench)
    build = subprocess.run(["verilator", "--binary", "--timing", "-Wno-fatal", "-Wno-lint", "-Wno-style",
                            "--x-initial", "fast", "-O0", "--top-module", "prism_rand_tb", "--Mdir",
                            str(tmp_path / "obj"), "-o", "sim", design, str(tmp_path / "tb.v")],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]

    def run(*plusargs):
        r = subprocess.run([str(tmp_path / "obj" / "sim"), *plusargs], capture_output=True, text=True)
        return [line for line in r.stdout.splitlines() if line and line[0].isdigit()]
    return run


def test_a_combinational_mutant_is_active_from_time_0(tmp_path):
    # no clock edge ever: the output must show the mutant's value at once, in both language modes
    design = """
module comb (input [3:0] a, output reg [3:0] y);
always @(a) begin
  y = a + 4'd1;
end
endmodule
"""
    sites = find_sites(design)
    plus = next(m for m in sites if m.change == "`+` -> `-`")
    text = instrument(design, [plus])
    assert f"always @(a, {SELECT})" in text
    bench = """
module prism_rand_tb;
reg [3:0] a = 4'd5;
wire [3:0] y;
comb dut(.a(a), .y(y));
initial begin #1 $display("%0d", y); $finish; end
endmodule
"""
    for generation in ("-g2005", "-g2012"):
        _write(str(tmp_path / "d.v"), text)
        _write(str(tmp_path / "tb.v"), bench)
        exe = randbench.compile_design(str(tmp_path / "d.v"), str(tmp_path / "tb.v"), str(tmp_path / "a.vvp"),
                                       generation)
        assert randbench.simulate(exe) == ["6"]
        assert randbench.simulate(exe, [f"+prism_mutant={plus.id}"]) == ["4"]


def test_lines_keep_their_numbers_and_the_texts_are_checked():
    sites = find_sites(SMALL)
    text = instrument(SMALL, sites)
    assert text.count("\n") == SMALL.count("\n")
    orig, inst = SMALL.split("\n"), text.split("\n")
    for m in sites:
        assert m.original.split("\n")[0] in inst[m.line - 1] or m.form != "statement"
        assert orig[m.line - 1] != inst[m.line - 1]
    for m in sites:
        assert apply(SMALL, m).count("\n") == SMALL.count("\n")
    moved = SMALL.replace("module mixed", "\nmodule mixed")
    with pytest.raises(ValueError, match="does not match"):
        instrument(moved, sites[:1])
    with pytest.raises(ValueError, match="unique"):
        instrument(SMALL, [sites[0], sites[0]])
    with pytest.raises(ValueError, match="instrumented twice"):
        instrument(text.replace("module mixed", "module mixed2"), [])


def test_select_renumbers_and_instrument_takes_a_choice():
    sites = find_sites(SMALL)
    chosen = select(sites, 5, seed=3)
    text = instrument(SMALL, chosen)
    for m in chosen:
        assert f"{SELECT} == 16'd{m.id}" in text
    assert f"16'd6" not in text


@pytest.mark.slow      # a Verilator build of the instrumented node (7-15 s); Icarus runs it in the default run
@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
def test_verilator_lints_and_builds_the_instrumented_design(tmp_path):
    sites = find_sites(SMALL)
    text = instrument(SMALL, sites)
    _write(str(tmp_path / "mixed.v"), text)
    lint = subprocess.run(["verilator", "--lint-only", "-Wno-fatal", "-Wall", "--top-module", "mixed",
                           str(tmp_path / "mixed.v")], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stderr
    messages = [line for line in lint.stderr.splitlines() if line.startswith("%")]
    assert not [line for line in messages if "prism_mutant" in line or "INITIALDLY" in line]
    bench = randbench.testbench(SMALL, cycles=60)
    base = randbench.run_icarus(str(tmp_path / "ivl"), SMALL, bench, "-g2012", name="original")
    run = _verilator_simulation(tmp_path, str(tmp_path / "mixed.v"), bench)
    assert run() == base
    assert run("+prism_mutant=0") == base
    for m in (sites[0], sites[len(sites) // 2], sites[-1]):
        want = randbench.run_icarus(str(tmp_path / "ivl"), apply(SMALL, m), bench, "-g2012", name="mutant")
        assert run(f"+prism_mutant={m.id}") == want, m.description


@pytest.mark.parametrize("generation", ["-g2005", "-g2012"])
def test_mutants_inside_functions_behind_the_select(tmp_path, generation):
    """Mutants inside MyHDL's functions, one function per call, read the module's select from the
    function."""
    sites = find_sites(FUNCTIONS)
    inside = [m for m in sites if m.function]
    assert {m.function for m in inside} == {"MYHDL1_add", "MYHDL2_mix", "MYHDL3_flags"} and len(inside) == 31
    text = instrument(FUNCTIONS, sites)
    assert f"always @(a, b, {SELECT})" in text                 # the caller of MYHDL2_mix and MYHDL3_flags wakes on it
    bench = randbench.testbench(FUNCTIONS, cycles=80)
    folder = str(tmp_path)
    base = randbench.run_icarus(folder, FUNCTIONS, bench, generation, name="original")
    _write(str(tmp_path / "inst.v"), text)
    exe = randbench.compile_design(str(tmp_path / "inst.v"), str(tmp_path / "tb.v"), str(tmp_path / "inst.vvp"),
                                   generation)
    assert randbench.simulate(exe) == base
    killed = 0
    for m in inside:
        want = randbench.run_icarus(folder, apply(FUNCTIONS, m), bench, generation, name="mutant")
        assert randbench.simulate(exe, [f"+prism_mutant={m.id}"]) == want, m.description
        killed += want != base
    assert killed == len(inside) - 9        # the equivalent ones (samples.py): 2 of 8'h5a, 5 of frac_nz, 2 of f


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
def test_verilator_lints_mutants_inside_functions(tmp_path):
    _write(str(tmp_path / "fsum.v"), instrument(FUNCTIONS, find_sites(FUNCTIONS)))
    lint = subprocess.run(["verilator", "--lint-only", "-Wno-fatal", "-Wall", "--top-module", "fsum",
                           str(tmp_path / "fsum.v")], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stderr
    assert not [line for line in lint.stderr.splitlines() if line.startswith("%") and SELECT in line]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
def test_verilator_runs_mutants_inside_functions(tmp_path):
    """A Verilator build (about 10 s) of the instrumented functions: select K is mutant K."""
    sites = find_sites(FUNCTIONS)
    _write(str(tmp_path / "fsum.v"), instrument(FUNCTIONS, sites))
    bench = randbench.testbench(FUNCTIONS, cycles=60)
    run = _verilator_simulation(tmp_path, str(tmp_path / "fsum.v"), bench)
    base = randbench.run_icarus(str(tmp_path / "ivl"), FUNCTIONS, bench, "-g2012", name="original")
    assert run() == base
    for m in (m for m in sites if m.function):
        want = randbench.run_icarus(str(tmp_path / "ivl"), apply(FUNCTIONS, m), bench, "-g2012", name="mutant")
        assert run(f"+prism_mutant={m.id}") == want, m.description
