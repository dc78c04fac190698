"""Mutation sites (cosim/mutation/sites.py) on small hand-written snippets: every kind, what is
left alone, and the stratified choice."""
from collections import Counter

import pytest

from cosim.mutation import sites as S
from cosim.mutation import verilog as V
from cosim.mutation.sites import Mutation, find_sites, literal_variants, select
from samples import ADD


def module(body, ports="input clk, input rst, input [7:0] a, input [7:0] b, output reg [7:0] q"):
    return f"module m ({ports});\n{body}\nendmodule\n"


def by_kind(sites, kind):
    return [m for m in sites if m.kind == kind]


def test_every_operator_of_the_table_is_swapped_within_its_width_class():
    exprs = ["a + b", "a - b", "a * b", "a / b", "a % b", "a & b", "a | b", "a ^ b", "a ~^ b", "a && b", "a || b",
             "a == b", "a != b", "a === b", "a !== b", "a < b", "a <= b", "a > b", "a >= b", "a << b", "a >> b",
             "a <<< b", "a >>> b"]
    text = module("\n".join(f"always @(posedge clk) q <= {e};" for e in exprs))
    ops = by_kind(find_sites(text), "operator")
    got = Counter(m.change for m in ops)
    for op, swaps in S.OPERATOR_SWAPS.items():
        for new in swaps:
            if op == "^~":
                continue                       # written `~^` above
            assert got[f"`{op}` -> `{new}`"] == 1, (op, new)
    m = next(m for m in ops if m.change == "`|` -> `^`")
    assert m.original == "q <= a | b;" and m.mutated == "q <= (a ^ b);" and m.form == "statement"
    assert m.description == "`|` -> `^` in q <= a | b"


def test_a_swapped_operator_keeps_the_grouping_of_the_original():
    text = module("always @(posedge clk) q <= a ^ b & 8'h0f;")
    m = next(m for m in find_sites(text) if m.change == "`&` -> `|`")
    assert m.mutated == "q <= a ^ (b | 8'h0f);"      # not `a ^ b | 8'h0f`, which groups differently


@pytest.mark.parametrize("literal, expected", [
    ("4'hf", ["4'h0", "4'he"]),                # sized: wraps within its size, keeps base and digits
    ("8'b00000000", ["8'b00000001", "8'b11111111"]),
    ("8'd0", ["8'd1", "8'd255"]),
    ("1'b0", ["1'b1"]),                        # both directions give the same bit: one mutant
    ("8'sd127", ["8'sh80", "8'sd126"]),        # a signed decimal past its range is written in hex
    ("'h3", ["'h4", "'h2"]),                   # unsized based: 32 bits, unsigned
    ("'h0", ["'h1"]),                          # ... 0 - 1 would change its width
    ("0", ["1", "(-1)"]),                      # unsized decimal: 32-bit signed
    ("2147483647", ["2147483646"]),            # + 1 leaves 32 bits
    ("4'bx01z", []), ("8'hzz", []), ("1.5", []),
])
def test_literal_variants(literal, expected):
    assert [v for v, _ in literal_variants(literal)] == expected


def test_constants_in_selects_sizes_replication_counts_and_case_labels_are_left():
    text = module("""
always @(posedge clk) begin
  q <= {2{a[3:0]}} + b[a + 1] + a[2 +: 3];
  case (a)
    8'd3: q <= 8'd7;
    default: q <= 0;
  endcase
end""")
    consts = by_kind(find_sites(text), "constant")
    changed = sorted({m.change.split(" -> ")[0] for m in consts})
    assert changed == ["`0`", "`8'd7`"]
    ops = by_kind(find_sites(text), "operator")
    assert all("a + 1" not in m.change and m.line != 0 for m in ops)
    assert sorted(m.change for m in ops) == ["`+` -> `-`", "`+` -> `-`"]     # the two outer additions


def test_conditions_of_if_and_of_the_conditional_operator():
    text = module("""
always @* begin
  if (a < b) q = rst ? 8'h0 : a;
  else q = b;
end""")
    conds = by_kind(find_sites(text), "condition")
    assert [(m.form, m.original, m.mutated) for m in conds] == [
        ("condition", "a < b", "!(a < b)"),
        ("statement", "q = rst ? 8'h0 : a;", "q = !(rst) ? 8'h0 : a;")]
    inside = [m for m in find_sites(text) if m.form == "condition" and m.kind == "operator"]
    assert [m.mutated for m in inside] == ["(a <= b)"]       # an operator of the condition: form condition
    assert conds[0].targets == ("q",)


def test_stuck_registers_are_non_blocking_whole_targets_of_clocked_processes():
    text = module("""
reg [7:0] mem [0:3];
reg [7:0] v;
always @(posedge clk) begin
  q <= a;
  q[0] <= b[0];
  mem[a[1:0]] <= b;
  v = a;
end
always @* v = b;""")
    stuck = by_kind(find_sites(text), "stuck")
    assert [(m.original, m.mutated) for m in stuck] == [("q <= a;", "q <= q;")]


def test_initial_blocks_functions_declarations_loop_headers_and_event_lists_have_no_sites():
    text = module("""
wire [7:0] w = a + 1;
integer i;
reg [7:0] acc;
function [7:0] f; input [7:0] x; f = x + 1; endfunction
initial begin q = 0 + 1; end
always @(a or b) begin
  acc = 0;
  for (i = 0; i < 4; i = i + 1) acc = acc + a;
end""")
    sites = find_sites(text)
    assert {m.original for m in sites} == {"acc = 0;", "acc = acc + a;"}
    assert all(m.sensitivity > 0 and m.sensitivity_sep == " or " for m in sites)


# A process's first stores: (its module body, a store that is no site, dead, or None, a store that
# is one, its value read), each case with why.
STORES = [
    # v is assigned again before anything reads it; w's first value is kept when b[0] is low
    pytest.param("""
reg [3:0] v;
reg [3:0] w;
always @(posedge clk) begin
  v = 4'h0;
  w = 4'h0;
  v = a[3:0];
  if (b[0]) w = 4'h5;
  q <= {v, w};
end""", "v = 4'h0;", "w = 4'h0;", id="read-before-overwritten"),
    # MyHDL's pattern: variables set at the top, the reset branch leaves them, the other sets them:
    # three is overwritten on one path and never read on the other; kept is read on the second path
    pytest.param("""
reg [3:0] three;
reg [3:0] kept;
always @(posedge clk) begin
  three = 4'h0;
  kept = 4'h0;
  if (rst) begin
    q <= 0;
  end
  else begin
    three = 4'h3;
    q <= {three, kept};
  end
end""", "three = 4'h0;", "kept = 4'h0;", id="every-path-overwrites"),
    # a variable another process reads is never dead
    pytest.param("""
reg [3:0] v;
always @(posedge clk) begin
  v = 4'h1;
  if (rst) q <= 0;
end
always @(posedge clk) if (!rst) q <= v;""", None, "v = 4'h1;", id="read-by-another-process"),
    # MyHDL's variables set at the top of a process and then again inside a loop that reads them
    # only after that: mag's first value is never read, whichever way the loop goes; acc is read in
    # the loop before it is assigned
    pytest.param("""
reg [7:0] mag;
reg [7:0] acc;
integer i;
always @(posedge clk) begin
  mag = 8'h0;
  acc = 8'h0;
  if (rst) q <= 0;
  else begin
    for (i = 0; i < 4; i = i + 1) begin
      mag = a >> i;
      acc = acc + mag;
    end
    q <= acc;
  end
end""", "mag = 8'h0;", "acc = 8'h0;", id="loop-overwrites"),
    # MyHDL's per-candidate flags: a loop over a variable's bits assigns every bit (go's first value
    # is never read); the others keep theirs: part's loop stops a bit short, some writes a bit only
    # under a condition, run reads the bits below (a running or)
    pytest.param("""
reg [4-1:0] go;
reg [4-1:0] part;
reg [4-1:0] some;
reg [4-1:0] run;
integer s;
always @(posedge clk) begin
  go = 4'h0;
  part = 4'h0;
  some = 4'h0;
  run = 4'h0;
  for (s = 0; s < 4; s = s + 1) begin
    go[s] = a[s] && b[s];
    if (a[s]) some[s] = 1'b1;
    run[s] = a[s] | (s != 0 && run[s - 1]);
  end
  for (s = 0; s < 3; s = s + 1) begin
    part[s] = a[s];
  end
  q <= {go, part} ^ {some, run};
end""", "go = 4'h0;", ("part = 4'h0;", "some = 4'h0;", "run = 4'h0;"), id="loop-over-every-bit"),
]


@pytest.mark.parametrize("body, dead, kept", STORES)
def test_a_dead_store_is_no_site_a_store_whose_value_is_read_is(body, dead, kept):
    originals = {m.original for m in find_sites(module(body))}
    assert dead is None or dead not in originals
    assert {kept} <= originals if isinstance(kept, str) else set(kept) <= originals


def test_verilog_2005_as_a_person_writes_it():
    text = """
// a hand-written counter with an ANSI header
module counter #(parameter W = 8) (
    input wire clk, input wire rst_n,
    input wire en, output reg [W-1:0] count, output wire wrap
);
    assign wrap = (count == {W{1'b1}}) && en;
    always @(posedge clk) begin if (!rst_n) count <= {W{1'b0}}; else if (en) count <= count + 1'b1; end
endmodule
"""
    sites = find_sites(text)
    assert {m.block for m in sites} == {"counter"}
    kinds = Counter(m.kind for m in sites)
    assert kinds == {"operator": 3, "constant": 3, "condition": 2, "stuck": 2}    # 1'b1, 1'b0 in replications, 1'b1
    lines = {m.line for m in sites}
    assert lines == {7, 8}
    assign = next(m for m in sites if m.form == "expression")
    assert assign.original == "(count == {W{1'b1}}) && en" and assign.process == -1


def test_sites_are_numbered_in_text_order_and_found_the_same_way_twice():
    text = module("always @(posedge clk) begin q <= a + b; if (rst) q <= 0; end")
    first, second = find_sites(text), find_sites(text)
    assert [m.id for m in first] == list(range(1, len(first) + 1))
    assert first == second
    assert [m.start for m in first] == sorted(m.start for m in first)


def _fake_sites():
    out = []
    for block, n in (("big", 60), ("mid", 12), ("small", 3)):
        for k in range(n):
            out.append(Mutation(0, S.KINDS[k % 4], k + 1, block, "x", "y", f"{block} {k}", start=k))
    return out


def test_select_is_deterministic_stratified_and_numbered():
    sites = _fake_sites()
    a, b = select(sites, 20, seed=5), select(sites, 20, seed=5)
    assert a == b
    assert [m.id for m in a] == list(range(1, 21))
    per_block = Counter(m.block for m in a)
    assert per_block["small"] == 3                             # a block with fewer sites gives all it has
    assert abs(per_block["big"] - per_block["mid"]) <= 1        # the others share the rest evenly
    big = [m.kind for m in a if m.block == "big"]
    assert len(set(big[:4])) == 4                               # kinds mixed within a block
    assert select(sites, 20, seed=6) != a
    assert len(select(sites, 500, seed=1)) == len(sites)
    assert sites[0].id == 0                                     # the originals are not renumbered


FUNCTION_MODULE = """
module f (input clk, input [7:0] a, input [7:0] b, output reg [8:0] q = 0, output reg [7:0] y, output reg [7:0] z,
          output [7:0] w, output reg [7:0] v = 0);
""" + ADD + """function [7:0] star_only;
    input [7:0] x;
begin
    star_only = x + 8'd1;
end
endfunction
function [7:0] shared;
    input [7:0] x;
begin
    shared = x ^ 8'h0f;
end
endfunction
function [7:0] in_assign;
    input [7:0] x;
begin
    in_assign = x - 8'd2;
end
endfunction
always @(posedge clk) q <= MYHDL1_add(a, b);
always @* y = star_only(a);
always @(a) z = shared(a);
always @(posedge clk) v <= shared(b);
assign w = in_assign(b);
endmodule
"""


def test_sites_inside_a_function_one_process_calls():
    sites = find_sites(FUNCTION_MODULE)
    inside = [m for m in sites if m.function]
    assert {m.function for m in inside} == {"MYHDL1_add"}
    # not `t = 9'h0` (a dead store), not the declarations; the `if` and the assignments
    assert sorted({m.original for m in inside}) == ["(x[7] && z[7])", "t = (x + z);", "t[8] = 1'b1;"]
    assert {m.kind for m in inside} == {"operator", "constant", "condition"}     # no stuck register
    caller = next(p for p in V.parse(FUNCTION_MODULE).module().processes if "MYHDL1_add" in V.statement_calls(p.body))
    assert all(m.process == caller.index and m.sensitivity == -1 for m in inside)     # clocked: no list
    assert all("(function MYHDL1_add)" in m.description for m in inside)
    # a function `@*` calls (it would not wake on the select), one two processes call, one an
    # assignment calls: no sites
    others = (FUNCTION_MODULE.index("function [7:0] star_only"), FUNCTION_MODULE.index("always @(posedge clk) q"))
    assert not any(others[0] <= m.start < others[1] for m in sites)


def test_a_function_site_of_a_combinational_caller_wakes_it_through_its_event_list():
    text = FUNCTION_MODULE.replace("always @(posedge clk) q <= MYHDL1_add(a, b);",
                                   "always @(a, b) q = MYHDL1_add(a, b);")
    inside = [m for m in find_sites(text) if m.function]
    events = text.index("always @(a, b) q") + len("always @(a, b")
    assert inside and all(m.sensitivity == events for m in inside)


def test_a_store_no_later_run_can_read_is_dead_though_not_every_run_assigns_it():
    # MyHDL's variables of a pipeline stage, set at the top of the stage's `if (valid)`: a run
    # that skips the stage neither reads nor sets them, so what one run leaves no run reads
    text = module("""
reg [3:0] t;
always @(posedge clk) begin
  if (b[0]) begin
    t = 4'h0;
    if (b[1]) begin
      t = a[3:0];
      q <= {4'h0, t};
    end
  end
end""")
    assert "t = 4'h0;" not in {m.original for m in find_sites(text)}
    read_next_run = text.replace("  if (b[0]) begin\n    t = 4'h0;", "  q <= {4'h0, t};\n  if (b[0]) begin\n    t = 4'h0;")
    assert "t = 4'h0;" in {m.original for m in find_sites(read_next_run)}
