"""Every chosen mutant in one Verilog text, behind a run-time select (as mcy does it), so one Icarus
or Verilator build serves them all; and a single mutant as plain Verilog.

The design module gets a 16-bit register `prism_mutant`, set at time 0 from the plus-argument
`+prism_mutant=K` (0, no mutation, when it is absent).  Every mutation K is then present beside
the original it replaces, chosen by `prism_mutant == K`:

  a procedural assignment (form "statement") becomes one statement that picks the mutant's
  assignment or the original's:
      begin if (prism_mutant == 16'd3) x <= (x - 1); else if (prism_mutant == 16'd9) x <= x; else x <= (x + 1); end
  an `if` condition (form "condition") and a continuous assignment's right-hand side (form
  "expression") become a conditional expression:
      if ((prism_mutant == 16'd5) ? (!(c)) : (c))
      assign y = (prism_mutant == 16'd7) ? (a | b) : (a & b);

Why statements and not `x <= sel ? (mutant) : (original)`: each assignment then keeps its own
context, so Verilog's sizing and signedness rules give exactly the original's and the mutant's
values.  In one conditional expression the two right-hand sides size each other and share one
signedness: for a stuck register `x <= sel ? x : $signed(a8)` with `x` unsigned makes the whole
expression unsigned, and the original `$signed(a8)` would be zero-extended instead of
sign-extended, so mutant 0 would differ from the design.  A condition needs only its truth value,
which no extension changes, and a continuous assignment's alternatives are built to have the same
width and signedness (sites.OPERATOR_SWAPS, sites.literal_variants), so those keep the form.

Time 0: `prism_mutant` is set by a non-blocking assignment from an `initial`, as the tool chain
wakes combinational processes (`prism_time0`, cosim/sim/verilog_post.py): by then every process
waits at its event control, so a combinational process that reads `prism_mutant` (it is added to
the event list of every such process with a mutation; `@*` finds it by itself) runs again with
its value, under `iverilog -g2005`, `-g2012` and Verilator alike.  Until then a condition reading
the still unknown select takes the original's branch of a statement and the common bits of a
conditional expression: those values are recomputed when the select is set.

One difference remains, in designs that do not wake their combinational processes at time 0 (a
hand-written design under `-g2012`, where initial values are no events): a process holding a
mutation then runs once at time 0, which the original's does not, so an output the original
leaves x until its first input changes has its value at once.  The kit's converted designs wake
every combinational process at time 0 (cosim/sim/verilog_post.py), so for them the instrumented
design with select 0 is the original, time 0 included.

Line numbers: the declaration and the `initial` are written on the line that ends the module's
header, the event-list additions and every mutant on the line of what they replace, so every line
of the instrumented text is the original's line of the same number (coverage points, messages of
the simulators and `cosim.sim.codecov.DesignMap` name the original's lines).
"""
from collections import defaultdict

from cosim.mutation import verilog as V

SELECT = "prism_mutant"
SELECT_WIDTH = 16
MAX_MUTANTS = (1 << SELECT_WIDTH) - 1
PLUSARG = "prism_mutant"


def _header(extra=""):
    """The select's declaration and its time-0 assignment, on one line."""
    return (f" reg [{SELECT_WIDTH - 1}:0] {SELECT}; reg [{SELECT_WIDTH - 1}:0] {SELECT}_arg;"
            f" initial begin if (!$value$plusargs(\"{PLUSARG}=%d\", {SELECT}_arg)) {SELECT}_arg = 0;"
            f" /* verilator lint_off INITIALDLY */ {SELECT} <= {SELECT}_arg;"
            f" /* verilator lint_on INITIALDLY */ end{extra}")


def _is(k):
    return f"{SELECT} == {SELECT_WIDTH}'d{k}"


def _check(verilog_text, mutations):
    ids = [m.id for m in mutations]
    if len(set(ids)) != len(ids):
        raise ValueError("instrument: mutation ids must be unique")
    for m in mutations:
        if not 1 <= m.id <= MAX_MUTANTS:
            raise ValueError(f"instrument: mutation id {m.id} outside 1..{MAX_MUTANTS}")
        if verilog_text[m.start:m.end] != m.original:
            raise ValueError(f"instrument: mutation {m.id} (line {m.line}) does not match the text: it was found in "
                             "another version of the design")
        if "\n" in m.mutated:
            raise ValueError(f"instrument: mutation {m.id} spans lines")


def _selected(form, original, group):
    """The text that replaces `original`, with every mutation of `group` (sorted by id) behind the select."""
    if form == "statement":
        arms = " ".join(f"if ({_is(m.id)}) {m.mutated} else" for m in group)
        return f"begin {arms} {original} end"
    arms = " ".join(f"({_is(m.id)}) ? ({m.mutated}) :" for m in group)
    return f"{arms} ({original})"


def instrument(verilog_text, mutations, module=None):
    """The text with every mutation of `mutations` behind the run-time select (see the module notes).
    With `+prism_mutant=0` or none the design behaves as the original; with `+prism_mutant=K`
    exactly the mutation numbered K is active.  Lines keep their numbers."""
    mutations = list(mutations)
    _check(verilog_text, mutations)
    src = V.parse(verilog_text)
    mod = src.module(module or (mutations[0].module if mutations and mutations[0].module else None))
    if SELECT in mod.declarations:
        raise ValueError(f"instrument: module {mod.name} already declares {SELECT} (instrumented twice?)")
    groups = defaultdict(list)
    for m in mutations:
        groups[(m.start, m.end, m.form)].append(m)
    edits = []                                 # (start, end, replacement)
    for (start, end, form), group in groups.items():
        group.sort(key=lambda m: m.id)
        edits.append((start, end, _selected(form, verilog_text[start:end], group)))
    sensitivity = {}
    for m in mutations:
        if m.sensitivity >= 0:
            sensitivity[m.sensitivity] = m.sensitivity_sep
    for at, sep in sensitivity.items():
        edits.append((at, at, f"{sep}{SELECT}"))
    edits.append((mod.header_end, mod.header_end, _header()))
    edits.sort(key=lambda e: (e[0], e[1]))
    for (a0, a1, _), (b0, b1, _) in zip(edits, edits[1:]):
        if b0 < a1:
            raise ValueError(f"instrument: mutations overlap at line {src.line(b0)}")
    out, at = [], 0
    for start, end, rep in edits:
        out.append(verilog_text[at:start])
        out.append(rep)
        at = end
    out.append(verilog_text[at:])
    return "".join(out)


def apply(verilog_text, mutation):
    """The single mutant as plain Verilog: the original text with the mutation's span replaced (padded
    with the newlines it replaced, so every later line keeps its number)."""
    if verilog_text[mutation.start:mutation.end] != mutation.original:
        raise ValueError(f"apply: mutation {mutation.id} (line {mutation.line}) does not match the text")
    pad = "\n" * mutation.original.count("\n")
    return verilog_text[:mutation.start] + mutation.mutated + pad + verilog_text[mutation.end:]

