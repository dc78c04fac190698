"""Equivalent mutants proved, never guessed (cosim/mutation/equivalence.py), on small designs; and
every proof held against simulation: a mutant proved equivalent is never told apart by random
stimulus."""
import pytest

import randbench
from cosim.mutation import equivalence as E
from cosim.mutation.equivalence import prove_equivalent
from cosim.mutation.instrument import instrument
from cosim.mutation.sites import find_sites
from samples import FUNCTIONS

needs_yosys = pytest.mark.skipif(E.yosys_command() is None, reason="no yosys")

DESIGN = """
module acc (input clk, input rst, input [7:0] a, input en, output [7:0] q, output [7:0] r, output flag,
           output seen);
reg [7:0] total = 0;
reg [7:0] unused = 0;
reg [3:0] konst = 0;
reg [7:0] hist [0:3];
reg [1:0] wp = 0;
reg [7:0] last = 0;
reg hist_seen = 0;
integer i;
initial for (i = 0; i < 4; i = i + 1) hist[i] = 0;
assign q = total + konst;
assign r = a | 8'h00;
assign flag = last[7];
assign seen = hist_seen;
always @(posedge clk) begin
  if (rst) begin
    total <= 0;
    konst <= 0;
  end else begin
    konst <= 0;
    if (en) total <= total + a;
    unused <= unused ^ a;
  end
end
always @(posedge clk) begin
  if (en) begin
    hist[wp] <= a;
    wp <= wp + 1;
  end
  last <= hist[wp] & 8'h80;
  if (wp < 3'd5) hist_seen <= 1'b1;
end
endmodule
"""


def site(text, line_text, change, nth=0):
    """The site whose statement holds `line_text` and whose change starts with `change` (the nth
    such in text order)."""
    found = [m for m in find_sites(text) if line_text in m.description and m.change.startswith(change)]
    assert found, [m.description for m in find_sites(text) if line_text in m.description]
    return found[nth]


def test_a_value_no_one_reads_is_unobservable():
    m = site(DESIGN, "unused <= unused ^ a", "`^` -> `|`")
    v = prove_equivalent(DESIGN, None, m)
    assert v.equivalent is True and v.method == "unobservable"
    assert "reach no output" in v.detail


@needs_yosys
def test_a_real_bug_is_not_proved():
    for line, change in (("total <= total + a", "`+` -> `-`"), ("if (en)", "condition"),
                         ("last <= hist[wp] & 8'h80", "`8'h80` -> `8'h7f`")):
        v = prove_equivalent(DESIGN, None, site(DESIGN, line, change), timeout=20)
        assert v.equivalent is not True, (line, v)


@needs_yosys
def test_a_register_that_is_already_constant_stuck_is_proved_on_its_process():
    m = site(DESIGN, "konst <= 0", "stuck")
    v = prove_equivalent(DESIGN, None, m, timeout=20)
    assert v.equivalent is True and v.method == "process", v
    assert "k-induction" in v.detail


@needs_yosys
def test_a_changed_bit_no_one_looks_at_is_proved():
    m = site(DESIGN, "last <= hist[wp] & 8'h80", "`8'h80` -> `8'h81`")     # flag reads bit 7 only
    v = prove_equivalent(DESIGN, None, m, timeout=20)
    assert v.equivalent is True, v


@needs_yosys
def test_a_value_that_equals_the_original_for_every_input_is_proved_on_its_own():
    m = site(DESIGN, "assign r = a | 8'h00", "`|` -> `^`")       # a ^ 0 is a | 0
    v = prove_equivalent(DESIGN, None, m, timeout=20)
    assert v.equivalent is True and v.method == "expression", v
    bound = site(DESIGN, "if (wp < 3'd5)", "`<` -> `<=`")           # a 2-bit wp is never 5
    v = prove_equivalent(DESIGN, None, bound, timeout=20)
    assert v.equivalent is True and v.method == "expression", v



@needs_yosys
def test_a_mutant_masked_further_on_is_proved_on_a_larger_cone():
    # konst is always 0, but not a constant the propagation sees (total ^ total): the assignment
    # alone cannot be proved, the cone with the process that keeps konst at 0 can
    text = DESIGN.replace("    konst <= 0;\n    if (en)", "    konst <= total ^ total;\n    if (en)")
    m = site(text, "assign q = total + konst", "`+` -> `-`")    # total - 0 is total + 0
    v = prove_equivalent(text, None, m, timeout=30)
    assert v.equivalent is True and v.method == "cone", v
    # in the design as it is, konst is a constant (reset and kept at 0): the value alone does it
    v = prove_equivalent(DESIGN, None, site(DESIGN, "assign q = total + konst", "`+` -> `-`"), timeout=30)
    assert v.equivalent is True and v.method == "expression", v


@needs_yosys
def test_a_trace_from_power_on_makes_a_mutant_killable():
    m = site(DESIGN, "total <= total + a", "`+` -> `-`")
    v = prove_equivalent(DESIGN, None, m, timeout=30)
    assert v.equivalent is False and "trace from power-on" in v.detail, v


@needs_yosys
def test_a_trace_is_no_verdict_when_the_power_on_state_is_not_known():
    # the same bug with a register that has no initial value: a difference could come from it
    text = DESIGN.replace("reg [7:0] total = 0;", "reg [7:0] total;")
    m = site(text, "total <= total + a", "`+` -> `-`")
    assert prove_equivalent(text, None, m, timeout=30).equivalent is None


@needs_yosys
def test_what_cannot_be_cut_out_is_not_proved():
    asynchronous = """
module ar (input clk, input rst, input [3:0] a, output reg [3:0] q = 0);
reg [3:0] k = 0;
always @(posedge clk or posedge rst) begin
  if (rst) k <= 0;
  else k <= 0;
end
always @(posedge clk) q <= a + k;
endmodule
"""
    m = [x for x in find_sites(asynchronous) if x.kind == "stuck" and x.line == 6][0]     # else k <= 0
    v = prove_equivalent(asynchronous, None, m, timeout=20)
    assert v.equivalent is None and "clock edge" in v.detail


def test_time_limit_and_missing_yosys_give_no_verdict(monkeypatch):
    m = site(DESIGN, "konst <= 0", "stuck")
    monkeypatch.setattr(E, "yosys_command", lambda: None)
    v = prove_equivalent(DESIGN, None, m, timeout=10)
    assert v.equivalent is None and "no yosys" in v.detail
    monkeypatch.undo()
    v = prove_equivalent(DESIGN, None, m, timeout=0.01)
    assert v.equivalent is None and "time limit" in v.detail


@pytest.mark.slow      # 10-20 s of simulation of every proved pair; the proofs themselves stay in the default run
@needs_yosys
def test_every_proof_holds_in_simulation(tmp_path):
    """All sites of the design proved or not; the ones proved equivalent must survive random
    stimulus, the ones shown killable are (here) all killed by it."""
    sites = find_sites(DESIGN)
    verdicts = {m.id: prove_equivalent(DESIGN, None, m, timeout=20) for m in sites}
    bench = randbench.testbench(DESIGN, cycles=300)
    folder = str(tmp_path)
    with open(tmp_path / "inst.v", "w") as fh:
        fh.write(instrument(DESIGN, sites))
    base = randbench.run_icarus(folder, DESIGN, bench, name="original")
    exe = randbench.compile_design(str(tmp_path / "inst.v"), str(tmp_path / "tb.v"), str(tmp_path / "inst.vvp"))
    proved = 0
    for m in sites:
        killed = randbench.simulate(exe, [f"+prism_mutant={m.id}"]) != base
        if verdicts[m.id].equivalent is True:
            assert not killed, (m.description, verdicts[m.id])
            proved += 1
        elif verdicts[m.id].equivalent is False:
            assert killed, (m.description, verdicts[m.id])
    assert proved >= 4


# ---- constants, bits, slices (the prover's value flow and cut-out regions) ----

CONSTANT_GUARDS = """
module guarded (input clk, input [7:0] a, output reg [7:0] q = 0, output reg [7:0] r = 0, output [7:0] s);
wire one;
reg no = 0;
reg [7:0] term = 0;
assign one = 1'd1;
always @(posedge clk) begin
  if (one) q <= a + 8'd1;
  else q <= a - 8'd1;
  if (no) r <= a;
  else r <= a ^ 8'h0f;
end
always @(a) begin
  if (1'b0) term = a + 8'd3;
  else term = 0;
end
assign s = term | a;
endmodule
"""


def test_a_branch_a_constant_makes_dead_holds_only_equivalent_mutants():
    # `one` has a constant driver, `no` no driver but its initial value, `1'b0` is MyHDL's
    # `if` of a Python constant: what their dead branches compute never runs
    for line, change in (("q <= a - 8'd1", "`-` -> `+`"), ("r <= a", "stuck"), ("term = a + 8'd3", "`+` -> `-`")):
        v = prove_equivalent(CONSTANT_GUARDS, None, site(CONSTANT_GUARDS, line, change), timeout=10)
        assert v.equivalent is True and v.method == "unobservable" and "never runs" in v.detail, (line, v)
    # a mutation of what the constants rest on is not one of them: the branch comes alive
    for line, change in (("assign one = 1'd1", "`1'd1`"), ("if (1'b0)", "condition"), ("if (no)", "condition")):
        v = prove_equivalent(CONSTANT_GUARDS, None, site(CONSTANT_GUARDS, line, change), timeout=10)
        assert v.equivalent is not True, (line, v)


# MyHDL's variables: module-level regs with no initial value, each written and read by one process,
# assigned before any read in every run (so their initial value is never read)
VARIABLES = """
module vars (input clk, input [7:0] a, input [3:0] sel, input c, output reg [7:0] q = 0, output reg [7:0] r = 0,
             output reg [7:0] u = 0);
wire from_fp32;
reg [3:0] s1_neg = 0;
reg [3:0] negs;
reg neg;
reg [7:0] h;
reg [7:0] late;
integer lane1;
integer lane2;
assign from_fp32 = 1'd1;
always @(posedge clk) begin: stage1
  negs = 4'h0;
  if (from_fp32) begin
    negs = 0;
  end else begin
    for (lane1 = 0; lane1 < 4; lane1 = lane1 + 1) negs[lane1] = a[lane1];
  end
  s1_neg <= negs;
end
always @(posedge clk) begin: stage2
  q <= a;
  for (lane2 = 0; lane2 < 4; lane2 = lane2 + 1) begin
    neg = (s1_neg[lane2] != 0);
    if (neg) q <= a ^ 8'hf0;
  end
end
always @(posedge clk) begin: hits
  h = 0;
  if (c) h = h | a;
  r <= h;
  if (sel[0]) late = a;
  if (c) late = late | 8'h01;
  u <= late;
end
endmodule
"""


def test_a_variable_whose_initial_value_no_run_reads_is_a_constant():
    # negs: no initial value, assigned 0 at the top of every run and in the live branch (the other,
    # a part-select per lane, never runs); so s1_neg keeps its 0, neg is 0 for every lane (the loop
    # worked out index by index) and the inverting branch never runs
    v = prove_equivalent(VARIABLES, None, site(VARIABLES, "q <= a ^ 8'hf0", "`8'hf0`"), timeout=10)
    assert v.equivalent is True and "never runs" in v.detail, v
    # with the branch that writes the lanes alive, the constants are gone
    v = prove_equivalent(VARIABLES, None, site(VARIABLES, "if (from_fp32)", "condition"), timeout=10)
    assert v.equivalent is not True, v
    alive = VARIABLES.replace("assign from_fp32 = 1'd1;", "assign from_fp32 = sel[3];")
    v = prove_equivalent(alive, None, site(alive, "q <= a ^ 8'hf0", "`8'hf0`"), timeout=10)
    assert v.equivalent is not True, v


def test_only_a_variable_assigned_before_every_read_loses_its_initial_value():
    an = E._analysis(VARIABLES, None)
    dead = E._dead_initial_names(an)
    assert {"negs", "neg", "h"} <= dead
    assert "late" not in dead            # read when sel[0] is 0 before this run assigns it
    assert "s1_neg" not in dead and "q" not in dead       # declared values, nonblocking writes
    consts = E._constants(an).env
    assert consts.get("negs") == 0 and consts.get("s1_neg") == 0 and consts.get("neg") == 0
    assert "h" not in consts and "late" not in consts


@needs_yosys
def test_a_value_assigned_earlier_in_the_run_is_a_constant_of_the_expression():
    # h is 0 where `h | a` runs: `|` and `^` give a alike
    v = prove_equivalent(VARIABLES, None, site(VARIABLES, "h = h | a", "`|` -> `^`"), timeout=10)
    assert v.equivalent is True and v.method == "expression", v
    # late may hold the last run's value there: `late | 1` and `late ^ 1` differ
    v = prove_equivalent(VARIABLES, None, site(VARIABLES, "late = late | 8'h01", "`|` -> `^`"), timeout=10)
    assert v.equivalent is not True, v


PADDING = """
module padded (input clk, input [7:0] a, input [7:0] b, output [15:0] q, output [15:0] m, output [7:0] h);
wire [31:0] lanes;
reg [31:0] grp = 0;
reg [31:0] hold = 0;
assign lanes = {8'b0, a, 8'b0, b};
always @(posedge clk) begin
  grp <= lanes;
  hold <= grp << 4;
end
assign q = {grp[23:16], grp[7:0]};
assign m = grp[15:0] & 16'h00ff;
assign h = hold[31:24];
endmodule
"""


def test_padding_bits_no_reader_sees_are_unobservable_bit_by_bit():
    # bits 15:8 of `lanes`: `q` takes other bits, `m` masks them off, `hold` shifts them to 27:20,
    # below what `h` takes; bits 31:24 reach `h` (shifted to 35:28, of which 31:28 are kept)
    low = [m for m in find_sites(PADDING) if m.line == 6 and m.kind == "constant"]
    assert len(low) == 4
    for m in low:
        v = prove_equivalent(PADDING, None, m, timeout=10)
        high = m.column < PADDING.split("\n")[m.line - 1].index("a, 8'b0")
        if high:
            assert v.equivalent is not True, (m.description, v)
        else:
            assert v.equivalent is True and v.method == "unobservable", (m.description, v)


BIG_PROCESS = """
module big (input clk, input [10:0] sm_in, input [31:0] x, output reg [23:0] norm_q = 0, output reg [31:0] acc = 0);
reg [10:0] sm;
reg [4:0] lead;
reg [23:0] norm;
reg [31:0] t;
integer i;
integer k;
always @(posedge clk) begin
  sm = 11'h0;
  lead = 5'h0;
  norm = 24'h0;
  t = 32'h0;
  sm = sm_in;
  lead = 0;
  for (i = 0; i < 11; i = i + 1) begin
    if (sm[i]) lead = i;
  end
  norm = ($signed({1'b0, sm}) << (23 - $signed({1'b0, lead})));
  norm_q <= norm;
  t = acc;
  for (k = 0; k < 16; k = k + 1) begin
    t = ((t * x) ^ (t >> 3)) + k;
  end
  acc <= t;
end
endmodule
"""


@needs_yosys
def test_a_big_process_is_cut_down_to_the_cone_of_the_mutated_statement(monkeypatch):
    # the leading-one position is at most 10, so the shift is at least 13 and the sign bits the
    # mutant extends with never reach the 24 bits kept: equivalent, but only with the loop that
    # bounds `lead`; the 16 multiplications of the same process have nothing to do with it (SAT
    # on the whole process does not finish in minutes)
    regions = []
    prove = E._prove

    def spy(gold, gate, seconds, folder, sequential=True):
        outcome = prove(gold, gate, seconds, folder, sequential)
        regions.append((outcome[0], gold))
        return outcome
    monkeypatch.setattr(E, "_prove", spy)
    m = site(BIG_PROCESS, "norm = ($signed({1'b0, sm})", "`1'b0` -> `1'b1`")
    v = prove_equivalent(BIG_PROCESS, None, m, timeout=30)
    assert v.equivalent is True and v.method == "process" and "sliced" in v.detail, v
    outcome, gold = regions[-1]
    assert outcome == "proved" and "lead = i" in gold and "t * x" not in gold and "acc" not in gold


ROUND_ROBIN = """
module rr (input clk, input rst, input [1:0] req, output reg [1:0] grant = 0);
reg last = 0;
always @(posedge clk) begin
  if (rst) begin
    grant <= 0;
    last <= 0;
  end else begin
    grant <= 0;
    if (req[0] && req[1]) begin
      if (last) begin
        grant <= 2'b01;
        last <= 0;
      end else begin
        grant <= 2'b10;
        last <= 1;
      end
    end else if (req[0]) begin
      grant <= 2'b01;
      last <= 0;
    end else if (req[1]) begin
      grant <= 2'b10;
      last <= 1;
    end
  end
end
endmodule
"""

FIFO_MARGIN = """
module margin (input clk, input rst, input push, input pop, output ready, output reg [3:0] level = 0);
assign ready = (level <= (8 - 2));
always @(posedge clk) begin
  if (rst) level <= 0;
  else if (push && ready && !(pop && level != 0)) level <= level + 1;
  else if (pop && level != 0 && !(push && ready)) level <= level - 1;
end
endmodule
"""


@needs_yosys
def test_a_change_of_timing_alone_is_not_equivalent():
    # a round-robin pointer stuck (the same requests served in another order) and a FIFO's
    # margin one off (the same words accepted a cycle apart): a protocol may allow both, the
    # ports differ, so no proof; both regions read only the module's inputs: a trace
    for text, line, change in ((ROUND_ROBIN, "last <= 1", "stuck"), (ROUND_ROBIN, "last <= 0", "stuck"),
                               (FIFO_MARGIN, "assign ready", "`<=` -> `<`"), (FIFO_MARGIN, "assign ready", "`2` -> `1`")):
        v = prove_equivalent(text, None, site(text, line, change), timeout=20)
        assert v.equivalent is False, (line, change, v)


@needs_yosys
def test_a_mutant_inside_a_function_is_proved_with_its_caller():
    masked = [m for m in find_sites(FUNCTIONS) if m.function == "MYHDL2_mix" and m.change.startswith("`8'h5a`")]
    assert len(masked) == 2                       # bit 0 of 8'h5a: the caller's mask 8'h3c drops it
    for m in masked:
        v = prove_equivalent(FUNCTIONS, None, m, timeout=10)
        assert v.equivalent is True and v.method == "process", v
    for m in find_sites(FUNCTIONS):
        if m.function == "MYHDL1_add":
            assert prove_equivalent(FUNCTIONS, None, m, timeout=10).equivalent is False, m.description


@needs_yosys
def test_a_mutant_only_its_function_masks_is_proved_on_the_function():
    """frac_nz's first value is read only when `special` is 0 (its other path sets both): the
    value flow cannot see that, the function tier's SAT proof can; a real change is refused."""
    first = [m for m in find_sites(FUNCTIONS) if m.function == "MYHDL3_flags" and "frac_nz = (0 != 0)"
             in m.description]
    assert first
    for m in first:
        v = prove_equivalent(FUNCTIONS, None, m, timeout=10)
        assert v.equivalent is True and v.method in ("function", "process"), v
    assert any(prove_equivalent(FUNCTIONS, None, m, timeout=10).method == "function" for m in first)
    real = [m for m in find_sites(FUNCTIONS) if m.function == "MYHDL3_flags" and "(d[1:0] != 0)" in m.description]
    assert real
    for m in real:
        assert prove_equivalent(FUNCTIONS, None, m, timeout=10).equivalent is not True, m.description


# ---- the expression tier and the index of a loop around the statement ----

# MyHDL's `for i in range(1, 16)` in a process, as the node's result sender has it: the field
# after frame i of a 48-bit word, 3 bits of it; the `1'b0` on top of the word never reaches them
# while the shift is at most 42 (i <= 15), which a free 32-bit `i` could not tell
FRAMES = """
module frames (input clk, input [47:0] bits, input [4:0] limit, output reg [2:0] out = 0,
               output reg [15:0] stops = 0);
localparam FIRST = 1;
localparam LAST = 16;
reg [47:0] bf = 0;
reg [2:0] f = 0;
reg [2:0] fp = 0;
reg [15:0] stp = 0;
integer i;
always @(posedge clk) begin
  bf = bits;
  stp = 0;
  for (i=1; i<16; i=i+1) begin
    f = $signed($signed({1'b0, bf}) >>> (3 * i));
    fp = $signed($signed({1'b0, bf}) >>> ((3 * i) - 3));
    if (f != fp) stp[i] = 1;
  end
  stops <= stp;
  out <= fp;
end
endmodule
"""
FRAMES_LOOP = "for (i=1; i<16; i=i+1)"


def frames(loop=FRAMES_LOOP, width=3):
    text = FRAMES.replace(FRAMES_LOOP, loop)
    if width != 3:
        text = text.replace("reg [2:0] f", f"reg [{width - 1}:0] f").replace("output reg [2:0] out",
                                                                             f"output reg [{width - 1}:0] out")
    return text, site(text, "fp = $signed", "`1'b0` -> `1'b1`")


def expression_tier(text, m, tmp_path):
    an = E._analysis(text, None)
    s = E._Site(an, m)
    return E._loop_ranges(an, s), E._same_value(an, s, 20, str(tmp_path))


@needs_yosys
def test_the_index_of_a_constant_loop_keeps_to_its_values_in_the_expression_tier(tmp_path):
    text, m = frames()
    v = prove_equivalent(text, None, m, timeout=20)
    assert v.equivalent is True and v.method == "expression", v
    assert v.detail.endswith("for every value of what it reads, the loop index i in 1 .. 15"), v.detail
    # `<=`, the bound a localparam, the last value that still cannot reach the target (16: a shift of 45)
    for loop, last in (("for (i=1; i<=16; i=i+1)", 16), ("for (i=FIRST; i<LAST + 1; i=i+FIRST)", 16),
                       ("for (i = 1; i < 17; i = i + 1)", 16)):
        text, m = frames(loop)
        ranges, (same, detail) = expression_tier(text, m, tmp_path)
        assert same is True and detail.endswith(f"the loop index i in 1 .. {last}"), (loop, detail)
        assert (ranges["i"].low, ranges["i"].high, ranges["i"].step) == (1, last, 1)


@needs_yosys
def test_a_mutant_the_loop_index_lets_through_is_still_not_proved(tmp_path):
    # i = 17 shifts by 48: bit 48, the mutated one, becomes bit 0 of fp; a 7-bit fp takes bits
    # 42..48 at i = 15; i = 0 shifts by -3 (a shift by 2**32 - 3), the mutated sign fills fp
    for loop, width, values in (("for (i=1; i<18; i=i+1)", 3, (1, 17, 1)), ("for (i=1; i<=17; i=i+1)", 3, (1, 17, 1)),
                                ("for (i=1; i<18; i=i+2)", 3, (1, 17, 2)), (FRAMES_LOOP, 7, (1, 15, 1)),
                                ("for (i=0; i<16; i=i+1)", 3, (0, 15, 1))):
        text, m = frames(loop, width)
        ranges, (same, detail) = expression_tier(text, m, tmp_path)
        assert (ranges["i"].low, ranges["i"].high, ranges["i"].step) == values, (loop, ranges)
        assert same is False and detail == "the values differ", (loop, width, detail)
        assert prove_equivalent(text, None, m, timeout=20).method != "expression"


@needs_yosys
def test_a_loop_index_whose_values_are_not_known_exactly_stays_a_free_input(tmp_path):
    for loop in ("for (i=1; i<limit; i=i+1)",              # a bound that is not a constant
                 "for (i=1; i!=16; i=i+1)",                 # not one of the forms worked out
                 "for (i=1; i<16; i=i+limit)",              # a step that is not a constant
                 "for (i=16; i<1; i=i+1)"):                 # a body that never runs
        text, m = frames(loop)
        ranges, (same, detail) = expression_tier(text, m, tmp_path)
        assert "i" not in ranges, (loop, ranges)
        assert same is False and detail == "the values differ", (loop, detail)
    # the body assigns the index itself: its values are not the header's
    text, m = frames()
    text = text.replace("    if (f != fp) stp[i] = 1;\n", "    if (f != fp) stp[i] = 1;\n    if (bf[0]) i = i + 2;\n")
    ranges, (same, detail) = expression_tier(text, m, tmp_path)
    assert "i" not in ranges and same is False, (ranges, detail)


PARITY = """
module parity (input clk, input [2:0] a, output reg [2:0] out = 0);
reg [2:0] g = 0;
reg [2:0] acc = 0;
integer i;
always @(posedge clk) begin
  acc = 0;
  for (i = 0; i < 8; i = i + 2) begin
    g = a >> (i & 1);
    acc = acc + g;
  end
  out <= acc;
end
endmodule
"""


@needs_yosys
def test_the_step_of_a_loop_leaves_out_the_values_between(tmp_path):
    # i is even: `i & 1` is 0 and `i & 0` the same; from 1 it is odd and they differ
    m = site(PARITY, "g = a >> (i & 1)", "`1` -> `0`")
    v = prove_equivalent(PARITY, None, m, timeout=20)
    assert v.equivalent is True and v.method == "expression", v
    assert v.detail.endswith("the loop index i in 0 .. 6 step 2"), v.detail
    odd = PARITY.replace("i = 0; i < 8", "i = 1; i < 8")
    ranges, (same, detail) = expression_tier(odd, site(odd, "g = a >> (i & 1)", "`1` -> `0`"), tmp_path)
    assert (ranges["i"].low, ranges["i"].high, ranges["i"].step) == (1, 7, 2)
    assert same is False and detail == "the values differ", detail


@needs_yosys
@pytest.mark.parametrize("text", [CONSTANT_GUARDS, VARIABLES, PADDING, FUNCTIONS, FRAMES, PARITY],
                         ids=["guards", "variables", "padding", "functions", "frames", "parity"])
def test_every_proof_of_the_new_tiers_holds_in_simulation(text, tmp_path):
    sites = find_sites(text)
    verdicts = {m.id: prove_equivalent(text, None, m, timeout=10) for m in sites}
    bench = randbench.testbench(text, cycles=200)
    with open(tmp_path / "inst.v", "w") as fh:
        fh.write(instrument(text, sites))
    base = randbench.run_icarus(str(tmp_path), text, bench, name="original")
    exe = randbench.compile_design(str(tmp_path / "inst.v"), str(tmp_path / "tb.v"), str(tmp_path / "inst.vvp"))
    for m in sites:
        killed = randbench.simulate(exe, [f"+prism_mutant={m.id}"]) != base
        if verdicts[m.id].equivalent is True:
            assert not killed, (m.description, verdicts[m.id])
        elif verdicts[m.id].equivalent is False:
            assert killed, (m.description, verdicts[m.id])
    assert sum(v.equivalent is True for v in verdicts.values()) >= 2

