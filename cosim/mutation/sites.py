"""Mutation sites of a design's Verilog: every place a small, valid change can be made, and a
deterministic, stratified choice of them.

Kinds of mutation (each site is one mutant):

  operator    one binary operator swapped for another of the same operand and result widths
              (OPERATOR_SWAPS below), so the mutant is valid Verilog of the same sizes;
  constant    a numeric literal one more and one less (a sized literal keeps its size and base and
              wraps: `4'hf` + 1 is `4'h0`; an unsized decimal stays a 32-bit signed number, so
              `0` - 1 is `(-1)`; literals with x or z digits, real numbers and strings are left);
  condition   an `if` condition inverted (`if (c)` -> `if (!(c))`), and the condition of a `? :`
              inverted;
  stuck       a register that keeps its value: a non-blocking `x <= e;` of a clocked process
              becomes `x <= x;` (whole-signal targets only: a memory word or a part select is left).

Where: the `always` processes (with an event control: clocked or combinational) and the continuous
`assign`s of the design module, and the bodies of the functions one process calls (MyHDL writes
a function per call, `MYHDL<n>_<name>`, so its body is that process's logic: the site takes the
process's block, index and event list; a function `@*` calls is left, as `@*` does not wake on
a name the function reads, and so is one that several processes, an assignment or another
function call).  Not in `initial` blocks, declarations (a function's inputs and return value
included), tasks, loop headers (a mutated bound can loop for ever), case labels and case
expressions, event controls, the index or bounds of a select (`a[i + 1]`, `a[7:0]`, `a[i +: 8]`:
a mutated part select changes the width) and a replication's count.

Dead stores are no sites: MyHDL starts every process by setting each of its variables
(`v = 4'h0;`) and then, most often, assigns the variable again before anything reads it (on
every path: `if (rst) ... else begin v = ...; ... end`); a mutant of the first assignment would
be equivalent by construction.  A blocking assignment of a whole name is dead when every path
from it to the end of the process assigns the name whole before reading it, or reads it nowhere
while no other process, assignment or port reads it and no path of the process reads it before
assigning it whole, so no later run reads it either (in a function: no call reads it before
assigning it, and it is not the return value).  A loop reads the value only when a path through its body (or its header)
reads it before assigning it whole: every run of the body starts as the first did (MyHDL's loops
over lanes assign their variables before reading them).  A loop over a name's bits,
`for (i = 0; i < N; i = i + 1)` with N its width, whose body assigns `name[i]` unconditionally
and reads the name nowhere, assigns it whole (MyHDL's per-candidate flags: `c_go[s] = ...`).
Where the analysis cannot tell (another partial or a non-blocking write, a task call) the value
counts as read.

Every mutation records the span of the original text it replaces, in one of three forms (how
`cosim.mutation.instrument` puts it behind the run-time select):

  statement   a procedural assignment `lhs = e;` / `lhs <= e;` whole (operator, constant and
              ternary-condition mutations of its right-hand side, and stuck registers);
  condition   the condition inside `if ( ... )` (its inversion, or an operator or constant in it);
  expression  the right-hand side of a continuous assignment.

Order: by position in the text, then kind, then the change; `select` then draws from that list.
"""
import random
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, replace
from typing import List

from cosim.mutation import verilog as V

KINDS = ("operator", "constant", "condition", "stuck")

# Each operator and what it becomes (one mutant per entry).  Every swap stays within one class of
# IEEE 1364-2005's width rules (table 5-22): arithmetic and bitwise operators (result as wide as
# the widest operand), shifts (as wide as the left operand), relational, equality and logical
# operators (one bit), so a mutant never changes the size or signedness of an expression.
OPERATOR_SWAPS = {
    "+": ("-",), "-": ("+",),
    "*": ("+",), "/": ("*",), "%": ("/",),
    "&": ("|",), "|": ("&", "^"), "^": ("|",), "~^": ("^",), "^~": ("^",),
    "&&": ("||",), "||": ("&&",),
    "==": ("!=",), "!=": ("==",), "===": ("!==",), "!==": ("===",),
    "<": ("<=",), "<=": ("<",), ">": (">=",), ">=": (">",),
    "<<": (">>",), ">>": ("<<",), "<<<": (">>>",), ">>>": ("<<<",),
}
_SIGNEDNESS_FUNCTIONS = ("$signed", "$unsigned")
_DESCRIPTION_WIDTH = 160


@dataclass
class Mutation:
    id: int                       # 1-based; 0 means "no mutation"
    kind: str                     # operator | constant | condition | stuck
    line: int                     # 1-based line of the changed token in the original text
    block: str                    # sub-block instance (DesignMap), or the module's name
    original: str                 # the text replaced: the statement, the condition or the right-hand side
    mutated: str                  # what replaces it (one line)
    description: str              # one line: the change and the statement it is made in
    start: int = 0                # offsets of `original` in the original text
    end: int = 0
    form: str = "statement"       # statement | condition | expression (see the module notes)
    process: int = -1             # index of the `always` process; -1: a continuous assignment
    column: int = 0               # 1-based column of the changed token
    change: str = ""              # the change alone: "`+` -> `-`", "`4'h3` -> `4'h4`", "stuck", "inverted"
    targets: tuple = ()           # names the mutated statement (or the if's branches) assign
    sensitivity: int = -1         # offset where `prism_mutant` joins the process's event list; -1: none needed
    sensitivity_sep: str = ", "   # ", " or " or ", as the list is written
    statement_line: int = 0       # first line of the statement (or assignment) it belongs to
    module: str = ""
    function: str = ""            # the Verilog function the site is in ("" for a process or assignment)


def _one_line(text):
    if "\n" not in text and "  " not in text.strip() and "\t" not in text:
        return text.strip()                   # MyHDL's statements: one line already
    return re.sub(r"\s+", " ", text).strip()


def _short(text, width=_DESCRIPTION_WIDTH):
    text = _one_line(text)
    return text if len(text) <= width else text[:width - 3] + "..."


# ---- literals ----

_BASED = re.compile(r"^(\d[\d_]*)?\s*'([sS]?)([bBoOdDhH])\s*([0-9a-fA-F_]+)$")
_RADIX = {"b": 2, "o": 8, "d": 10, "h": 16}


def _format(value, radix, digits):
    if radix == 10:
        return str(value)
    s = {2: format(value, "b"), 8: format(value, "o"), 16: format(value, "x")}[radix]
    return s.rjust(digits, "0")


def literal_variants(text):
    """[(mutated text, change)] of a numeric literal: its value plus one and minus one, or [] when it
    cannot be changed without changing its size (x/z digits, reals, 32-bit overflow of unsized)."""
    m = _BASED.match(text)
    out = []
    if m:
        size, signed, base, digits = m.group(1), m.group(2), m.group(3).lower(), m.group(4).replace("_", "")
        radix = _RADIX[base]
        try:
            value = int(digits, radix)
        except ValueError:
            return []                                     # x, z or ? digits
        bits = int(size.replace("_", "")) if size else 32
        if bits < 1:
            return []
        prefix = (size.replace("_", "") if size else "") + "'" + signed + m.group(3)
        for delta in (1, -1):
            new = value + delta
            if size:
                new %= 1 << bits                          # a sized literal wraps within its size
            elif not 0 <= new < (1 << 32):
                continue                                  # an unsized one would change width
            if radix == 10 and signed and size and new >= 1 << (bits - 1):
                # `8'sd255` is a warning in some tools: the same bits in hexadecimal
                mutated = f"{size.replace('_', '')}'{signed}h{new:x}"
            else:
                mutated = prefix + _format(new, radix, len(digits))
            out.append(mutated)
    elif re.fullmatch(r"\d[\d_]*", text):
        value = int(text.replace("_", ""))
        for delta in (1, -1):
            new = value + delta
            if new >= 1 << 31:
                continue                                  # an unsized decimal is 32 bits, signed
            out.append(str(new) if new >= 0 else f"({new})")
    seen, result = set(), []
    for v in out:
        if v != text and v not in seen:
            seen.add(v)
            result.append((v, f"`{text}` -> `{v}`"))
    return result


# ---- sites of one expression ----

def _expression_sites(text, e):
    """[(kind, node start, node end, replacement, change, token start)] inside expression `e`, in
    text order."""
    out = []

    def visit(x):
        k = x.kind
        if k == "binary":
            visit(x.kids[0])
            swaps = OPERATOR_SWAPS.get(x.op, ())
            for new in swaps:
                # parenthesised: the new operator may bind differently from the old one
                rep = "(" + text[x.start:x.op_start] + new + text[x.op_start + len(x.op):x.end] + ")"
                out.append(("operator", x.start, x.end, rep, f"`{x.op}` -> `{new}`", x.op_start))
            visit(x.kids[1])
        elif k == "num":
            for rep, change in literal_variants(x.name):
                out.append(("constant", x.start, x.end, rep, change, x.start))
        elif k == "cond":
            c = x.kids[0]
            out.append(("condition", c.start, c.end, f"!({text[c.start:c.end]})", "condition inverted", c.start))
            for kid in x.kids:
                visit(kid)
        elif k == "select":
            visit(x.kids[0])                      # the base; never the index or the bounds
        elif k == "repl":
            visit(x.kids[1])                      # the items; never the count
        elif k == "call":
            if not x.name.startswith("$") or x.name in _SIGNEDNESS_FUNCTIONS:
                for kid in x.kids:
                    visit(kid)
        elif k in ("paren", "unary", "concat"):
            for kid in x.kids:
                visit(kid)
    visit(e)
    return out


# ---- dead stores ----
#
# What becomes of a variable's value after a statement, along every path to the end of the
# process: "read" (some path reads it first), "written" (every path assigns it whole first) or
# "neither".  Conservative where it cannot tell: a partial write, a non-blocking write, a task
# call or a timing control counts as a read.

READ, WRITTEN, NEITHER = "read", "written", "neither"


class Fate:
    def __init__(self, function_reads, widths=None):
        self.function_reads = function_reads
        self.widths = widths            # name -> its width in bits, or None (unknown)

    def reads(self, expr):
        out = V.identifiers(expr)
        if self.function_reads:
            for f in V.calls(expr):
                out = out | self.function_reads.get(f, set())
        return out

    def sequence(self, stmts, name):
        for st in stmts:
            fate = self.statement(st, name)
            if fate != NEITHER:
                return fate
        return NEITHER

    def statement(self, st, name):
        k = st.kind
        if k == "assign":
            if name in self.reads(st.rhs) or name in V.lvalue_reads(st.lhs):
                return READ
            if name in V.lvalue_base(st.lhs):
                whole = st.lhs.kind == "id" and st.op == "="
                return WRITTEN if whole else READ
            return NEITHER
        if k == "block":
            return self.sequence(st.stmts, name)
        if k == "if":
            if name in self.reads(st.cond):
                return READ
            a = self.statement(st.then, name)
            b = self.statement(st.else_, name) if st.else_ is not None else NEITHER
            if READ in (a, b):
                return READ
            return WRITTEN if a == b == WRITTEN else NEITHER
        if k == "case":
            if name in self.reads(st.cond) or any(name in self.reads(e) for labels, _ in st.items for e in labels):
                return READ
            fates = [self.statement(c, name) for _, c in st.items]
            if READ in fates:
                return READ
            has_default = any(not labels for labels, _ in st.items)
            return WRITTEN if has_default and fates and all(f == WRITTEN for f in fates) else NEITHER
        if k == "loop":                 # may run no time at all: at best "neither"
            if self.writes_every_bit(st, name):
                return WRITTEN
            header_reads, header_writes = set(), set()
            for h in st.header:
                if isinstance(h, V.Stmt):
                    header_reads |= self.reads(h.rhs) | V.lvalue_reads(h.lhs)
                    header_writes.update(V.lvalue_base(h.lhs))
                else:
                    header_reads |= self.reads(h)
            if name in header_reads or name in header_writes:
                return READ
            # each run of the body starts as the first did: if no path of it reads the name before
            # assigning it whole, no run does
            return READ if self.statement(st.body, name) == READ else NEITHER
        if k == "other" and st.end - st.start <= 1:
            return NEITHER             # a null statement
        return READ                    # a call, a timing control, a disable: be safe

    def writes_every_bit(self, loop, name):
        """MyHDL's loop over a variable's bits, `for (i = 0; i < N; i = i + 1) begin ... name[i] = ...;
        ... end` with N the name's width: every run of it assigns the name whole.  Only when the
        loop's body assigns `name[i]` unconditionally (a statement of the body itself), reads the
        name nowhere and changes neither i nor anything else of the header."""
        if loop.name != "for" or len(loop.header) != 3 or self.widths is None:
            return False
        init, cond, step = loop.header
        if not (isinstance(init, V.Stmt) and isinstance(step, V.Stmt) and init.lhs.kind == "id"):
            return False
        i = init.lhs.name
        if not (_number(init.rhs) == 0 and cond.kind == "binary" and cond.op == "<"
                and cond.kids[0].kind == "id" and cond.kids[0].name == i and _number(cond.kids[1]) == self.widths(name)
                and step.lhs.kind == "id" and step.lhs.name == i and step.rhs.kind == "binary" and step.rhs.op == "+"
                and step.rhs.kids[0].kind == "id" and step.rhs.kids[0].name == i and _number(step.rhs.kids[1]) == 1):
            return False
        body = loop.body.stmts if loop.body.kind == "block" else [loop.body]
        if not any(x.kind == "assign" and x.op == "=" and x.lhs.kind == "select" and x.lhs.op == "[]"
                   and x.lhs.kids[0].kind == "id" and x.lhs.kids[0].name == name
                   and x.lhs.kids[1].kind == "id" and x.lhs.kids[1].name == i for x in body):
            return False
        for x in loop.body.walk():
            if x.kind in ("timing", "call", "other") or i in V.statement_writes(x):
                return False
            reads = set(x.events)
            if x.cond is not None:
                reads |= self.reads(x.cond)
            for labels, _ in x.items:
                for e in labels:
                    reads |= self.reads(e)
            if x.kind == "assign":
                reads |= self.reads(x.rhs) | V.lvalue_reads(x.lhs)
                if name in V.lvalue_base(x.lhs) and not (x.lhs.kind == "select" and x.lhs.op == "[]"):
                    return False        # a part select or a concatenation: not one bit
            for h in x.header:
                reads |= (self.reads(h.rhs) | V.lvalue_reads(h.lhs)) if isinstance(h, V.Stmt) else self.reads(h)
            if name in reads:
                return False
        return True


def variable_width(module, name):
    """A variable's width from its declared range `[N-1:0]` or `[M:0]` (MyHDL's), else None."""
    d = module.declarations.get(name)
    if d is None or d.is_memory or d.signed:
        return None
    m = re.fullmatch(r"\[\s*(\d+)\s*(-\s*1\s*)?:\s*0\s*\]", d.range)
    if not m:
        return None
    return int(m.group(1)) + (0 if m.group(2) else 1)


def _number(expr):
    """The value of a plain number literal, else None."""
    if expr.kind != "num":
        return None
    lit = V.literal(expr.name)
    return None if lit is None else lit[0]


# ---- the finder ----
# ---- the finder ----

class _FunctionBody:
    """A function's body where the finder expects a process (blocking assignments only)."""
    clocked = False

    def __init__(self, body):
        self.body = body


class _ReadElsewhere:
    """How many readers other than process `me` a name has (a mapping for `dead`)."""

    def __init__(self, readers, me):
        self.readers, self.me = readers, me

    def get(self, name, default=0):
        r = self.readers.get(name)
        return default if r is None else len(r - {self.me})


class _Finder:
    def __init__(self, src, module, design_map):
        self.src, self.text, self.mod = src, src.text, module
        self.design_map = design_map
        self.sites: List[Mutation] = []
        self.function = ""
        # functions that read module names (MyHDL's read only their arguments: then none)
        self.function_reads = {f: g for f in module.functions if (g := V.function_globals(module, f))}
        self._statement_text = {}
        self.fate = Fate(self.function_reads, lambda name: variable_width(self.mod, name))
        # which processes and assignments read each name: a name read outside the process that
        # assigns it is no variable of that process
        self.read_elsewhere = None
        self.readers = {}
        for p in module.processes:
            names = V.statement_reads(p.body) | set(p.event_names)
            for f in V.statement_calls(p.body):
                names |= self.function_reads.get(f, set())
            for n in names:
                self.readers.setdefault(n, set()).add(id(p))
        for a in module.assigns:
            for n in V.identifiers(a.rhs) | V.lvalue_reads(a.lhs):
                self.readers.setdefault(n, set()).add(id(a))
        for o in module.opaque:
            for n in o.names:
                self.readers.setdefault(n, set()).add(id(o))
        for d in module.declarations.values():
            if d.direction in ("output", "inout"):
                self.readers.setdefault(d.name, set()).add("port")

    def dead(self, s, after):
        """A blocking assignment of a whole name whose value nothing can read: every path after it
        assigns the name whole before reading it, or none reads it up to the end of the process,
        no other process or assignment reads it, and no path of the process reads it before
        assigning it whole (MyHDL's variables: set at the top of every run, or of every run that
        uses them), so no later run reads what it holds."""
        if s.kind != "assign" or s.op != "=" or s.lhs.kind != "id":
            return False
        name = s.lhs.name
        fate = NEITHER
        for stmts in after:
            fate = self.fate.sequence(stmts, name)
            if fate != NEITHER:
                break
        if fate == WRITTEN:
            return True
        if fate == READ or self.read_elsewhere.get(name, 0) > 0:
            return False
        return self.fate.statement(self.process.body, name) != READ

    def block_of(self, offset):
        if self.design_map is None:
            return self.mod.name
        st = self.design_map.statement_at(self.src.line(offset))
        return st.block if st is not None else self.design_map.top

    def add(self, kind, form, span, mutated, change, token, statement, process, targets, sens, sep, block):
        text = self.text
        original = text[span[0]:span[1]]
        stmt_text = self._statement_text.get(statement)
        if stmt_text is None:
            stmt_text = self._statement_text[statement] = _short(text[statement[0]:statement[1]].rstrip(";"))
        where = f" (function {self.function})" if self.function else ""
        self.sites.append(Mutation(
            0, kind, self.src.line(token), block, original, _one_line(mutated),
            f"{change} in {stmt_text}{where}", span[0], span[1], form, process,
            token - self.src.line_start(token) + 1, change, tuple(targets), sens, sep,
            self.src.line(statement[0]), self.mod.name, self.function))

    def _process_args(self, p):
        sens, sep = -1, ", "
        if p.combinational and not p.star:
            sens = p.events[1]
            sep = " or " if re.search(r"\bor\b", self.text[p.events[0]:p.events[1]]) else ", "
        return (p.index, sens, sep, self.block_of(p.start))

    @staticmethod
    def _sites_in(p):
        return p.kind == "always" and (p.edges or p.star or p.events is not None) and not any(
            s.kind == "timing" for s in p.body.walk())      # a process that waits inside: not synthesisable logic

    def run(self):
        self.function = ""
        for p in self.mod.processes:
            if not self._sites_in(p):
                continue
            self.process = p
            self.proc_args = self._process_args(p)
            self.read_elsewhere = _ReadElsewhere(self.readers, id(p))
            self.statement(p.body, [])
        for fn, caller in self.function_callers():
            # a function called from one process only (MyHDL writes one per call): its body is
            # that process's logic, named by the process's block and made sensitive to the select
            # through the process's event list
            self.function = fn.name
            self.process = _FunctionBody(fn.body)
            self.proc_args = self._process_args(caller)
            self.read_elsewhere = {fn.name: 1}         # the return value: the caller reads it
            self.statement(fn.body, [])
        self.function = ""
        for a in self.mod.assigns:
            if a.end < 0 or self.text[a.start:a.start + 6] != "assign":
                continue                            # a net declaration's initialiser
            block = self.block_of(a.start)
            targets = V.lvalue_base(a.lhs)
            for kind, s, e, rep, change, tok in _expression_sites(self.text, a.rhs):
                mutated = self.text[a.rhs.start:s] + rep + self.text[e:a.rhs.end]
                self.add(kind, "expression", (a.rhs.start, a.rhs.end), mutated, change, tok,
                         (a.start, a.end), -1, targets, -1, ", ", block)
        self.sites.sort(key=lambda m: (m.start, m.line, m.column, KINDS.index(m.kind), m.mutated))
        return self.sites

    def function_callers(self):
        """[(Function, the process calling it)] of every function with a body that processes call
        and only one process calls (directly, not from another function or an assignment), when that
        process is clocked or lists its events (`@*` does not wake on a name a function reads)."""
        callers = {}
        for p in self.mod.processes:
            for f in V.statement_calls(p.body):
                callers.setdefault(f, []).append(p)
        elsewhere = set()
        for a in self.mod.assigns:
            elsewhere |= V.calls(a.rhs)
        for f in self.mod.functions.values():
            if f.body is not None:
                elsewhere |= V.statement_calls(f.body)
        for o in self.mod.opaque:
            elsewhere |= o.names
        out = []
        for name, fn in self.mod.functions.items():
            ps = callers.get(name, [])
            if fn.body is None or name in elsewhere or len(ps) != 1:
                continue
            p = ps[0]
            if not self._sites_in(p) or p.star or (not p.clocked and not p.combinational):
                continue
            out.append((fn, p))
        return out

    def statement(self, s, after):
        """Sites of statement `s`; `after`: the statement lists that run after it, innermost first."""
        index, sens, sep, block = self.proc_args
        text = self.text
        if s.kind == "block":
            for k, c in enumerate(s.stmts):
                self.statement(c, [s.stmts[k + 1:]] + after)
        elif s.kind == "if":
            targets = sorted(V.statement_writes(s))
            c = s.cond
            span = (c.start, c.end)
            self.add("condition", "condition", span, f"!({text[c.start:c.end]})", "condition inverted", c.start,
                     (s.start, c.end + 1), index, targets, sens, sep, block)
            for kind, a, b, rep, change, tok in _expression_sites(text, c):
                self.add(kind, "condition", span, text[c.start:a] + rep + text[b:c.end], change, tok,
                         (s.start, c.end + 1), index, targets, sens, sep, block)
            for c2 in s.children():
                self.statement(c2, after)
        elif s.kind == "case":
            for _, c2 in s.items:
                self.statement(c2, after)
        elif s.kind == "loop":
            self.statement(s.body, [[s]] + after)      # the loop again, then what follows it
        elif s.kind == "assign":
            if self.dead(s, after):
                return
            targets = V.lvalue_base(s.lhs)
            for kind, a, b, rep, change, tok in _expression_sites(text, s.rhs):
                mutated = text[s.start:a] + rep + text[b:s.end]
                self.add(kind, "statement", (s.start, s.end), mutated, change, tok, (s.start, s.end), index,
                         targets, sens, sep, block)
            if (s.op == "<=" and self.process.clocked and s.lhs.kind == "id" and "." not in s.lhs.name
                    and _one_line(text[s.rhs.start:s.rhs.end]) != s.lhs.name):
                decl = self.mod.declarations.get(s.lhs.name)
                if decl is None or not decl.is_memory:
                    mutated = text[s.start:s.rhs.start] + s.lhs.name + text[s.rhs.end:s.end]
                    self.add("stuck", "statement", (s.start, s.end), mutated, "stuck (keeps its value)",
                             s.start, (s.start, s.end), index, targets, sens, sep, block)


def find_sites(verilog_text, module=None, design_map=None) -> List[Mutation]:
    """Every mutation site of the design module (`module`, default: the text's top module).
    `design_map`: a cosim.sim.codecov.DesignMap of the same text (its file), which names the
    sub-block of every site; without one every site's block is the module's name.  Sites are
    numbered 1.. in order (select() renumbers its choice)."""
    src = V.parse(verilog_text)
    mod = src.module(module)
    sites = _Finder(src, mod, design_map).run()
    for k, m in enumerate(sites, 1):
        m.id = k
    return sites


def select(sites, n, seed) -> List[Mutation]:
    """`n` mutants drawn from `sites`, deterministic in `seed`, spread over every block: the blocks
    take turns in an order drawn from the seed, each giving its next site, until `n` are chosen or
    every block is spent; within a block the kinds take turns too (each kind's sites in an order
    drawn from the seed), so a block's share mixes operators, constants, conditions and stuck
    registers.  The chosen mutations are copies, numbered 1..n in the order returned."""
    if n < 0:
        raise ValueError(f"select: n must be >= 0, got {n}")
    rng = random.Random(seed)
    by_block = OrderedDict()
    for m in sites:
        by_block.setdefault(m.block, {}).setdefault(m.kind, []).append(m)
    queues = {}
    for block in sorted(by_block):
        kinds = by_block[block]
        order = sorted(kinds)
        rng.shuffle(order)
        lists = []
        for kind in order:
            ms = list(kinds[kind])
            rng.shuffle(ms)
            lists.append(ms)
        mixed = []
        for k in range(max(len(x) for x in lists)):
            mixed += [x[k] for x in lists if k < len(x)]
        queues[block] = mixed
    blocks = sorted(queues)
    rng.shuffle(blocks)
    chosen, turn = [], 0
    while len(chosen) < n and blocks:
        alive = []
        for b in blocks:
            if len(chosen) < n and turn < len(queues[b]):
                chosen.append(queues[b][turn])
            if turn + 1 < len(queues[b]):
                alive.append(b)
        blocks = alive
        turn += 1
    return [replace(m, id=k) for k, m in enumerate(chosen, 1)]


def count_by_block(sites):
    """{block: Counter of kinds}, blocks in order of first appearance."""
    out = OrderedDict()
    for m in sites:
        out.setdefault(m.block, Counter())[m.kind] += 1
    return out
