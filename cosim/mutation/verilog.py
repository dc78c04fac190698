"""A small Verilog-2005 reader for mutation testing: tokens with their offsets, one module's items,
its processes' statements and their expressions, each with the span of text it came from.

Mutation needs less than a full front end and more than regular expressions: it must find every
operator, literal and condition of a process, know exactly which characters of the original text
each covers (a mutant is the original with one span replaced), and know what a statement assigns
and reads (the equivalence prover follows values through the design).  The converted designs of
this kit are MyHDL's Verilog (one flat module, one statement per line); the reader also takes the
Verilog-2005 a person writes: ANSI ports, `always @*`, several statements on a line, `assign`
lists, module instances (kept as opaque items that read and drive every name they connect).

What it does not take: `generate` regions and `specify` blocks are kept as opaque items (their
names count as read and driven), macros are not expanded (a `` `NAME `` is an identifier), and
SystemVerilog beyond what MyHDL writes is not parsed.

Every node carries `start` and `end`, offsets into the text (end exclusive), so
`text[node.start:node.end]` is the node's source.
"""
import bisect
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, List, Optional

_TOKEN = re.compile(r"""
  (?P<ws>\s+)
| (?P<comment>//[^\n]*|/\*.*?\*/)
| (?P<attr>\(\*(?!\s*\))(?:[^*]|\*(?!\)))*\*\))
| (?P<directive>`[A-Za-z_]\w*)
| (?P<string>"(?:\\.|[^"\\\n])*")
| (?P<number>(?:\d[\d_]*\s*)?'[sS]?[bBoOdDhH]\s*[0-9a-fA-FxXzZ?_]+
            |\d[\d_]*\.\d[\d_]*(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+|\d[\d_]*)
| (?P<sysid>\$[A-Za-z_][\w$]*)
| (?P<id>[A-Za-z_][\w$]*|\\\S+)
| (?P<op><<<|>>>|===|!==|==|!=|<=|>=|&&|\|\||\*\*|<<|>>|~&|~\||~\^|\^~|\+:|-:|->|[-+*/%&|^~!<>=?:;,.()\[\]{}@\#'])
""", re.X | re.S)

# directives whose whole line is theirs (the rest of the line is not code of the module)
_LINE_DIRECTIVES = {"`timescale", "`define", "`include", "`default_nettype", "`resetall", "`celldefine",
                    "`endcelldefine", "`undef", "`ifdef", "`ifndef", "`elsif", "`else", "`endif", "`line",
                    "`pragma", "`unconnected_drive", "`nounconnected_drive"}

# binary operators by precedence (higher binds tighter), IEEE 1364-2005 table 5-4
BINARY_PRECEDENCE = {
    "**": 12,
    "*": 11, "/": 11, "%": 11,
    "+": 10, "-": 10,
    "<<": 9, ">>": 9, "<<<": 9, ">>>": 9,
    "<": 8, "<=": 8, ">": 8, ">=": 8,
    "==": 7, "!=": 7, "===": 7, "!==": 7,
    "&": 6,
    "^": 5, "^~": 5, "~^": 5,
    "|": 4,
    "&&": 3,
    "||": 2,
}
UNARY_OPERATORS = {"+", "-", "!", "~", "&", "~&", "|", "~|", "^", "~^", "^~"}
DECLARATION_KEYWORDS = {"input", "output", "inout", "reg", "wire", "integer", "real", "realtime", "time",
                        "parameter", "localparam", "genvar", "supply0", "supply1", "tri", "tri0", "tri1",
                        "triand", "trior", "trireg", "wand", "wor", "event", "logic", "bit", "defparam",
                        "specparam", "signed", "unsigned"}
NET_KINDS = {"wire", "supply0", "supply1", "tri", "tri0", "tri1", "triand", "trior", "trireg", "wand", "wor"}
KEYWORDS = DECLARATION_KEYWORDS | {
    "module", "endmodule", "macromodule", "always", "initial", "assign", "begin", "end", "if", "else", "case",
    "casez", "casex", "endcase", "default", "for", "while", "repeat", "forever", "function", "endfunction",
    "task", "endtask", "fork", "join", "posedge", "negedge", "or", "disable", "wait", "generate",
    "endgenerate", "specify", "endspecify", "automatic", "deassign", "force", "release"}


class VerilogSyntaxError(ValueError):
    """The text is not Verilog this reader understands; says where."""


class Token:
    __slots__ = ("kind", "text", "start")

    def __init__(self, kind, text, start):
        self.kind, self.text, self.start = kind, text, start

    @property
    def end(self):
        return self.start + len(self.text)

    def __repr__(self):
        return f"Token({self.kind}, {self.text!r}, {self.start})"


def tokenize(text):
    """The tokens of `text` (comments, attributes and line directives dropped)."""
    out = []
    append = out.append
    pos, n = 0, len(text)
    match = _TOKEN.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            raise VerilogSyntaxError(f"unexpected character {text[pos]!r} at line {text.count(chr(10), 0, pos) + 1}")
        kind = m.lastgroup
        end = m.end()
        if kind == "directive":
            word = m.group()
            if word in _LINE_DIRECTIVES:
                nl = text.find("\n", end)
                end = n if nl < 0 else nl
            else:
                append(Token("id", word, pos))            # a macro: kept as a name, not expanded
        elif kind not in ("ws", "comment", "attr"):
            append(Token(kind, m.group(), pos))
        pos = end
    return out


# ---- expressions ----

class Expr:
    """kind: num, str, id, call (name, args; system calls have a $ name), paren (kids[0]),
    unary (op, kids[0]), binary (op, kids[0], kids[1]), cond (kids: condition, then, else),
    concat (kids), repl (kids[0] the count, kids[1] a concat), select (kids[0] the base, kids[1:]
    the index or bounds; op: "[]", ":", "+:" or "-:")."""
    __slots__ = ("kind", "start", "end", "op", "op_start", "kids", "name", "typ")

    def __init__(self, kind, start, end, kids=(), op=None, op_start=-1, name=None):
        self.kind, self.start, self.end, self.kids = kind, start, end, list(kids)
        self.op, self.op_start, self.name = op, op_start, name
        self.typ = None                   # (width, signed) once Types has worked it out; False: unknown

    def walk(self):
        yield self
        for k in self.kids:
            yield from k.walk()

    def __repr__(self):
        return f"Expr({self.kind}, {self.op or self.name or ''}, {self.start}:{self.end})"


def identifiers(expr):
    """Names an expression reads (the base names of selects, hierarchical names whole)."""
    return {e.name for e in expr.walk() if e.kind == "id"}


def calls(expr):
    return {e.name for e in expr.walk() if e.kind == "call" and not e.name.startswith("$")}


def lvalue_base(expr):
    """The names an assignment target writes: the base of a select, every part of a concatenation."""
    if expr.kind == "id":
        return [expr.name]
    if expr.kind == "select":
        return lvalue_base(expr.kids[0])
    if expr.kind in ("concat", "paren"):
        return [n for k in expr.kids for n in lvalue_base(k)]
    return []


def lvalue_reads(expr):
    """Names an assignment target reads (its index expressions)."""
    if expr.kind == "select":
        return lvalue_reads(expr.kids[0]) | set().union(*(identifiers(k) for k in expr.kids[1:]))
    if expr.kind in ("concat", "paren"):
        return set().union(set(), *(lvalue_reads(k) for k in expr.kids))
    return set()


# ---- statements and module items ----

@dataclass
class Stmt:
    """kind: block (stmts; label), if (cond, then, else_), case (cond: the case expression; items:
    [(labels, stmt)], a default item with no labels), loop (header: the for/while/repeat
    expressions and assignments; body), assign (lhs, op "=" or "<=", rhs), timing (a statement
    under an event or delay control: body), call (task or system task: args), other (disable,
    null, event trigger, procedural continuous assignment)."""
    kind: str
    start: int
    end: int
    cond: Optional[Expr] = None
    then: Optional["Stmt"] = None
    else_: Optional["Stmt"] = None
    stmts: List["Stmt"] = field(default_factory=list)
    items: list = field(default_factory=list)
    lhs: Optional[Expr] = None
    op: str = ""
    rhs: Optional[Expr] = None
    body: Optional["Stmt"] = None
    header: list = field(default_factory=list)
    args: List[Expr] = field(default_factory=list)
    label: str = ""
    name: str = ""
    case_kind: str = ""
    locals: set = field(default_factory=set)     # names a block declares
    events: set = field(default_factory=set)     # names a timing control waits on (kind timing)

    def children(self):
        """Statements directly inside this one."""
        if self.kind == "block":
            return list(self.stmts)
        if self.kind == "if":
            return [s for s in (self.then, self.else_) if s is not None]
        if self.kind == "case":
            return [s for _, s in self.items if s is not None]
        if self.kind in ("loop", "timing"):
            return [self.body] if self.body is not None else []
        return []

    def walk(self):
        yield self
        for c in self.children():
            yield from c.walk()


@dataclass
class Declaration:
    name: str
    kinds: List[str]              # every keyword that declared it: ["output", "reg"], ["wire"], ...
    range: str = ""               # "[7:0]" as written (the last one seen), "" for one bit
    signed: bool = False
    dims: str = ""                # unpacked dimensions ("[0:767]"): a memory
    init: str = ""                # initial value as written, "" for none
    spans: List[tuple] = field(default_factory=list)   # (start, end) of each declaring statement

    @property
    def is_memory(self):
        return bool(self.dims)

    @property
    def direction(self):
        for k in ("input", "output", "inout"):
            if k in self.kinds:
                return k
        return ""


@dataclass
class Process:
    """An `always` or `initial` with its event control (`events`: the text span inside `@( )`,
    None for `@*` or no control; `star`: `@*` / `@(*)`; `edges`: the list has posedge/negedge)."""
    kind: str
    start: int
    end: int
    body: Stmt
    index: int                    # among the module's `always` processes (-1 for `initial`)
    events: Optional[tuple] = None
    event_names: List[str] = field(default_factory=list)
    star: bool = False
    edges: bool = False

    @property
    def clocked(self):
        return self.kind == "always" and self.edges

    @property
    def combinational(self):
        return self.kind == "always" and not self.edges and (self.star or self.events is not None)


@dataclass
class ContinuousAssign:
    start: int                    # the `assign` keyword (shared by every target of one statement)
    end: int
    lhs: Expr
    rhs: Expr


@dataclass
class Opaque:
    """An item the reader keeps whole (a module instance, generate region, task, specify block):
    every name in it counts as read and driven."""
    kind: str
    start: int
    end: int
    names: set


@dataclass
class Function:
    name: str
    start: int
    end: int
    body: Optional[Stmt]
    locals: set                   # its inputs and local variables (everything else is the module's)
    range: str = ""               # the return value's range as written ("[7:0]"), "" for one bit
    signed: bool = False
    kind: str = ""                # "integer" or "real" for such a return type, else ""
    inputs: List[str] = field(default_factory=list)                   # in order (declared in the body)
    declarations: Dict[str, "Declaration"] = field(default_factory=dict)   # its inputs and variables
    header_end: int = -1          # offset just after the `;` that ends the header


@dataclass
class Module:
    name: str
    start: int
    end: int
    header_end: int               # offset just after the `;` that ends the module's header
    ports: List[str]
    declarations: Dict[str, Declaration]
    processes: List[Process]
    assigns: List[ContinuousAssign]
    functions: Dict[str, Function]
    opaque: List[Opaque]
    parameters: List[tuple]       # (start, end) of each parameter/localparam declaration
    parameter_names: set = field(default_factory=set)


class Source:
    """A parsed Verilog text: its modules, and line numbers of offsets."""

    def __init__(self, text):
        self.text = text
        self._newlines = [m.start() for m in re.finditer("\n", text)]
        self.tokens = tokenize(text)
        self.modules: Dict[str, Module] = {}
        self.instantiated = set()        # module names some module instantiates
        p = _Parser(self)
        p.parse_file()
        self.tokens = None               # only the parser needs them (most of the memory: ~1M for the node)

    def line(self, offset):
        """1-based line of a text offset."""
        return bisect.bisect_right(self._newlines, offset - 1) + 1

    def offset_of_line(self, line):
        """Offset of the first character of 1-based `line`, or None past the end."""
        if line < 1 or line - 2 >= len(self._newlines):
            return None
        return 0 if line == 1 else self._newlines[line - 2] + 1

    def line_start(self, offset):
        """Offset of the first character of the line holding `offset`."""
        k = bisect.bisect_right(self._newlines, offset - 1)
        return self._newlines[k - 1] + 1 if k else 0

    def module(self, name=None):
        """The module called `name`; without a name the design's top: the only module, or the one no
        other module instantiates (the first such)."""
        if name is not None:
            if name not in self.modules:
                raise KeyError(f"no module {name!r} in the text (modules: {', '.join(self.modules) or 'none'})")
            return self.modules[name]
        if not self.modules:
            raise KeyError("no module in the text")
        tops = [m for m in self.modules.values() if m.name not in self.instantiated]
        return (tops or list(self.modules.values()))[0]


# parsed texts kept, the last used of each size class: a large design (the node: 12 MB, several
# seconds to read) is not pushed out by the small ones read in between
_CACHE_SLOTS = {"large": 2, "small": 8}
LARGE_TEXT = 1 << 20
_caches = {size: OrderedDict() for size in _CACHE_SLOTS}


def parse(text):
    """The parsed text, cached by content (see _CACHE_SLOTS)."""
    size = "large" if len(text) >= LARGE_TEXT else "small"
    cache = _caches[size]
    key = (len(text), hash(text))
    src = cache.get(key)
    if src is None or src.text != text:
        src = Source(text)
        cache[key] = src
        while len(cache) > _CACHE_SLOTS[size]:
            cache.popitem(last=False)
    cache.move_to_end(key)
    return src


class _Fragment:
    """A piece of Verilog on its own (an expression, a statement), for the parser."""

    def __init__(self, text):
        self.text, self.tokens = text, tokenize(text)

    def line(self, offset):
        return self.text.count("\n", 0, offset) + 1


def _parse_whole(text, rule, what):
    """`rule` of a parser over `text` (offsets into `text`), which must use up all of it."""
    p = _Parser(_Fragment(text))
    node = rule(p)
    if p.peek() is not None:
        raise p.error(f"text after the {what}")
    return node


def parse_expression(text):
    """The expression `text` holds (offsets into `text`)."""
    return _parse_whole(text, _Parser.expr, "expression")


def parse_statement(text):
    """The statement `text` holds (offsets into `text`)."""
    return _parse_whole(text, _Parser.stmt, "statement")


class _Parser:
    def __init__(self, source):
        self.src = source
        self.text = source.text
        self.toks = source.tokens
        self.i = 0

    # -- token helpers --
    def peek(self, k=0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at(self, text):
        t = self.peek()
        return t is not None and t.text == text and t.kind in ("op", "id")

    def next(self):
        t = self.peek()
        if t is None:
            raise VerilogSyntaxError("unexpected end of text")
        self.i += 1
        return t

    def expect(self, text):
        t = self.next()
        if t.text != text:
            raise self.error(f"expected {text!r}, found {t.text!r}", t)
        return t

    def error(self, msg, tok=None):
        tok = tok or self.peek()
        where = f"line {self.src.line(tok.start)}" if tok else "end of text"
        return VerilogSyntaxError(f"{msg} ({where})")

    def last_end(self):
        return self.toks[self.i - 1].end

    def skip_to(self, *texts, depth_tokens=True):
        """Skip to the first of `texts` at bracket depth 0 (consumed); returns the names seen."""
        depth, names = 0, set()
        while True:
            t = self.next()
            if t.kind == "id" and t.text not in KEYWORDS:
                names.add(t.text)
            if t.text in ("(", "[", "{") and t.kind == "op":
                depth += 1
            elif t.text in (")", "]", "}") and t.kind == "op":
                depth -= 1
            elif depth <= 0 and t.text in texts:
                return names

    # -- file and module --
    def parse_file(self):
        while self.peek() is not None:
            t = self.next()
            if t.kind == "id" and t.text in ("module", "macromodule"):
                self.parse_module(t)

    def parse_module(self, kw):
        name = self.next().text
        ports, decls, params = [], {}, []
        if self.at("#"):                          # parameter port list
            self.next()
            start = self.expect("(").start
            self.i -= 1
            first = self.i
            self._balanced()
            params.append((start, self.last_end()))
            toks = self.toks[first:self.i]
            pnames = {t.text for t, nxt in zip(toks, toks[1:]) if t.kind == "id" and nxt.text == "="}
        if self.at("("):
            self.next()
            self._port_list(ports, decls)
        self.expect(";")
        header_end = self.last_end()
        mod = Module(name, kw.start, -1, header_end, ports, decls, [], [], {}, [], params)
        if params:
            mod.parameter_names |= pnames
        self.mod = mod
        while True:
            t = self.peek()
            if t is None:
                raise self.error(f"module {name} has no endmodule")
            w = t.text
            if t.kind == "id" and w == "endmodule":
                self.next()
                break
            if t.kind == "id" and w in ("always", "initial"):
                self.parse_process()
            elif t.kind == "id" and w == "assign":
                self.parse_assign()
            elif t.kind == "id" and w == "function":
                self.parse_function()
            elif t.kind == "id" and w in ("task", "generate", "specify"):
                start = self.next().start
                close = {"task": "endtask", "generate": "endgenerate", "specify": "endspecify"}[w]
                names = self.skip_to(close)
                mod.opaque.append(Opaque(w, start, self.last_end(), names))
            elif t.kind == "id" and w in DECLARATION_KEYWORDS:
                self.parse_declaration(decls)
            elif t.text == ";":
                self.next()
            else:                                      # a module instance (or something kept whole)
                start = t.start
                if t.kind == "id":
                    self.src.instantiated.add(w)
                names = self.skip_to(";")
                names.discard(w)
                mod.opaque.append(Opaque("instance", start, self.last_end(), names))
        mod.end = self.last_end()
        self.src.modules[name] = mod

    def _balanced(self):
        """Skip a bracketed group starting at the current token."""
        depth = 0
        while True:
            t = self.next()
            if t.kind == "op" and t.text in "([{":
                depth += 1
            elif t.kind == "op" and t.text in ")]}":
                depth -= 1
                if depth == 0:
                    return

    def _port_list(self, ports, decls):
        """Non-ANSI (names only) or ANSI (directions and types) port list, up to its `)`."""
        direction, kinds, rng, signed = None, [], "", False
        while not self.at(")"):
            t = self.next()
            if t.text == ",":
                continue
            if t.kind == "id" and t.text in ("input", "output", "inout"):
                direction, kinds, rng, signed = t.text, [t.text], "", False
                continue
            if t.kind == "id" and t.text in ("reg", "wire", "logic", "integer", "signed", "unsigned") and direction:
                if t.text == "signed":
                    signed = True
                elif t.text != "unsigned":
                    kinds.append(t.text)
                continue
            if t.text == "[":
                s = t.start
                self.i -= 1
                self._balanced()
                rng = self.text[s:self.last_end()]
                continue
            if t.kind == "id":
                ports.append(t.text)
                if direction:
                    d = decls.setdefault(t.text, Declaration(t.text, []))
                    d.kinds += [k for k in kinds if k not in d.kinds]
                    d.range, d.signed = rng or d.range, signed or d.signed
                    d.spans.append((t.start, t.end))
                    if self.at("="):                   # output reg x = 0
                        self.next()
                        e = self.expr()
                        d.init = self.text[e.start:e.end]
                continue
            raise self.error(f"unexpected {t.text!r} in the port list", t)
        self.next()

    def parse_declaration(self, decls):
        start = self.peek().start
        kinds, rng, signed = [], "", False
        if self.at("parameter") or self.at("localparam") or self.at("defparam") or self.at("specparam") \
                or self.at("genvar"):
            first = self.i
            self.skip_to(";")
            self.mod.parameters.append((start, self.last_end()))
            toks = self.toks[first:self.i]
            for t, nxt in zip(toks, toks[1:]):
                if t.kind == "id" and (nxt.text in ("=", ";", ",") and nxt.kind == "op"):
                    self.mod.parameter_names.add(t.text)
            return
        while True:
            t = self.peek()
            if t.kind == "id" and t.text in DECLARATION_KEYWORDS:
                self.next()
                if t.text == "signed":
                    signed = True
                elif t.text != "unsigned":
                    kinds.append(t.text)
            elif t.text == "[":
                s = t.start
                self._balanced()
                rng = self.text[s:self.last_end()]
            elif t.text == "#":                          # a net delay
                self.next()
                if self.at("("):
                    self._balanced()
                else:
                    self.next()
            elif t.text == "(":                          # drive strength
                self._balanced()
            else:
                break
        names = []
        while True:
            t = self.next()
            if t.kind != "id":
                raise self.error(f"expected a name in a declaration, found {t.text!r}", t)
            d = decls.setdefault(t.text, Declaration(t.text, []))
            d.kinds += [k for k in kinds if k not in d.kinds]
            d.range, d.signed = rng or d.range, signed or d.signed
            dims = ""
            while self.at("["):
                s = self.peek().start
                self._balanced()
                dims += self.text[s:self.last_end()]
            d.dims = dims or d.dims
            if self.at("="):
                self.next()
                e = self.expr()
                d.init = self.text[e.start:e.end]
                if kinds and kinds[-1] in NET_KINDS:     # `wire w = expr;`: a continuous assignment
                    self.mod.assigns.append(ContinuousAssign(start, e.end, Expr("id", t.start, t.end, name=t.text),
                                                             e))
            names.append(d)
            if self.at(","):
                self.next()
                continue
            self.expect(";")
            break
        for d in names:
            d.spans.append((start, self.last_end()))

    def parse_process(self):
        kw = self.next()
        index = -1
        if kw.text == "always":
            index = sum(1 for p in self.mod.processes if p.kind == "always")
        events, names, star, edges = None, [], False, False
        if kw.text == "always" and self.at("@"):
            self.next()
            if self.at("*"):
                self.next()
                star = True
            else:
                lp = self.expect("(")
                if self.at("*") and self.peek(1) is not None and self.peek(1).text == ")":
                    self.next()
                    self.next()
                    star = True
                else:
                    s = self.i
                    self.i -= 1
                    self._balanced()
                    events = (lp.end, self.toks[self.i - 1].start)
                    for t in self.toks[s:self.i - 1]:
                        if t.kind == "id" and t.text in ("posedge", "negedge"):
                            edges = True
                        elif t.kind == "id" and t.text != "or":
                            names.append(t.text)
        body = self.stmt()
        self.mod.processes.append(Process(kw.text, kw.start, body.end, body, index, events, names, star, edges))

    def parse_assign(self):
        kw = self.next()
        if self.at("("):                               # drive strength
            self._balanced()
        if self.at("#"):
            self.next()
            if self.at("("):
                self._balanced()
            else:
                self.next()
        while True:
            lhs = self.lvalue()
            self.expect("=")
            rhs = self.expr()
            self.mod.assigns.append(ContinuousAssign(kw.start, -1, lhs, rhs))
            if self.at(","):
                self.next()
                continue
            self.expect(";")
            break
        for a in self.mod.assigns:
            if a.end == -1:
                a.end = self.last_end()

    def parse_function(self):
        kw = self.next()
        local = set()
        name = None
        rng, signed, kind, ansi = "", False, "", False
        while True:                                  # header: [automatic] [signed] [range] name [(ports)] ;
            t = self.next()
            if t.text == "[":
                self.i -= 1
                s = t.start
                self._balanced()
                if name is None:
                    rng = self.text[s:self.last_end()]
            elif t.text == "(":
                self.i -= 1
                local |= self._balanced_names()
                ansi = True
            elif t.text == ";":
                break
            elif t.kind == "id" and t.text == "signed" and name is None:
                signed = True
            elif t.kind == "id" and t.text in ("integer", "real", "realtime", "time") and name is None:
                kind = t.text
            elif t.kind == "id" and t.text not in KEYWORDS:
                name = name or t.text
        header_end = self.last_end()
        local.add(name)
        decls = {}
        while self.peek().kind == "id" and self.peek().text in DECLARATION_KEYWORDS:
            d = {}
            self.parse_declaration(d)
            local |= set(d)
            decls.update(d)
        body = self.stmt() if not self.at("endfunction") else None
        self.expect("endfunction")
        if body is not None:
            for s in body.walk():
                if s.kind == "block":
                    local |= s.locals
        inputs = [] if ansi else [n for n, d in decls.items() if "input" in d.kinds]
        self.mod.functions[name] = Function(name, kw.start, self.last_end(), body, local, rng, signed, kind, inputs,
                                            decls, header_end)

    def _balanced_names(self):
        s = self.i
        self._balanced()
        return {t.text for t in self.toks[s:self.i] if t.kind == "id" and t.text not in KEYWORDS}

    # -- statements --
    def stmt(self):
        t = self.peek()
        if t is None:
            raise self.error("unexpected end of text in a statement")
        w = t.text
        if t.kind == "id":
            if w == "begin" or w == "fork":
                return self.block()
            if w == "if":
                return self.if_stmt()
            if w in ("case", "casez", "casex"):
                return self.case_stmt()
            if w in ("for", "while", "repeat", "forever"):
                return self.loop()
            if w == "wait":
                self.next()
                self.expect("(")
                c = self.expr()
                self.expect(")")
                body = self.stmt()
                return Stmt("timing", t.start, body.end, cond=c, body=body, events=identifiers(c))
            if w in ("disable", "assign", "deassign", "force", "release"):
                self.skip_to(";")
                return Stmt("other", t.start, self.last_end())
        if t.kind == "op":
            if w == ";":
                self.next()
                return Stmt("other", t.start, t.end)
            if w in ("@", "#"):
                events = self.timing_control()
                body = self.stmt()
                return Stmt("timing", t.start, body.end, body=body, events=events)
            if w == "->":
                self.skip_to(";")
                return Stmt("other", t.start, self.last_end())
        if t.kind == "sysid":
            self.next()
            args = self.call_args() if self.at("(") else []
            self.expect(";")
            return Stmt("call", t.start, self.last_end(), args=args, name=w)
        lhs = self.lvalue()
        nt = self.peek()
        if nt is not None and nt.text in ("=", "<="):
            self.next()
            if self.at("#") or self.at("@"):           # intra-assignment timing control
                self.timing_control()
            rhs = self.expr()
            self.expect(";")
            return Stmt("assign", t.start, self.last_end(), lhs=lhs, op=nt.text, rhs=rhs)
        if lhs.kind == "id":                            # a task call
            args = self.call_args() if self.at("(") else []
            self.expect(";")
            return Stmt("call", t.start, self.last_end(), args=args, name=lhs.name)
        if lhs.kind == "call":
            self.expect(";")
            return Stmt("call", t.start, self.last_end(), args=lhs.kids, name=lhs.name)
        raise self.error(f"cannot read the statement at {self.text[t.start:t.start + 40]!r}", t)

    def timing_control(self):
        """Skip an event or delay control; returns the names it waits on."""
        t = self.next()
        first = self.i
        if t.text == "@" and self.at("*"):
            self.next()
        elif self.at("("):
            self._balanced()
        else:
            self.next()
        return {x.text for x in self.toks[first:self.i] if x.kind == "id" and x.text not in KEYWORDS}

    def block(self):
        b = self.next()
        close = "end" if b.text == "begin" else None
        label = ""
        if self.at(":"):
            self.next()
            label = self.next().text
        stmts, local = [], set()
        while True:
            t = self.peek()
            if t is None:
                raise self.error("a block has no end", b)
            if t.kind == "id" and (t.text == close or (close is None and t.text in ("join", "join_any",
                                                                                    "join_none"))):
                self.next()
                break
            if t.kind == "id" and t.text in DECLARATION_KEYWORDS:
                d = {}
                self.parse_declaration(d)
                local |= set(d)
                continue
            stmts.append(self.stmt())
        return Stmt("block", b.start, self.last_end(), stmts=stmts, label=label, locals=local)

    def if_stmt(self):
        t = self.next()
        self.expect("(")
        c = self.expr()
        self.expect(")")
        then = self.stmt()
        else_ = None
        if self.at("else"):
            self.next()
            else_ = self.stmt()
        return Stmt("if", t.start, (else_ or then).end, cond=c, then=then, else_=else_)

    def case_stmt(self):
        t = self.next()
        self.expect("(")
        c = self.expr()
        self.expect(")")
        items = []
        while not self.at("endcase"):
            if self.at("default"):
                self.next()
                if self.at(":"):
                    self.next()
                items.append(([], self.stmt()))
                continue
            labels = [self.expr()]
            while self.at(","):
                self.next()
                labels.append(self.expr())
            self.expect(":")
            items.append((labels, self.stmt()))
        self.next()
        return Stmt("case", t.start, self.last_end(), cond=c, items=items, case_kind=t.text)

    def loop(self):
        t = self.next()
        header = []
        if t.text == "for":
            self.expect("(")
            header.append(self.assignment_in_header())
            self.expect(";")
            header.append(self.expr())
            self.expect(";")
            header.append(self.assignment_in_header())
            self.expect(")")
        elif t.text in ("while", "repeat"):
            self.expect("(")
            header.append(self.expr())
            self.expect(")")
        body = self.stmt()
        return Stmt("loop", t.start, body.end, header=header, body=body, name=t.text)

    def assignment_in_header(self):
        start = self.peek().start
        lhs = self.lvalue()
        self.expect("=")
        rhs = self.expr()
        return Stmt("assign", start, rhs.end, lhs=lhs, op="=", rhs=rhs)

    # -- expressions --
    def lvalue(self):
        t = self.peek()
        if t.text == "{":
            return self.primary()
        if t.kind != "id":
            raise self.error(f"expected an assignment target, found {t.text!r}", t)
        return self.primary()

    def call_args(self):
        self.expect("(")
        args = []
        while not self.at(")"):
            if self.at(","):                            # an empty argument
                self.next()
                continue
            args.append(self.expr())
            if self.at(","):
                self.next()
        self.next()
        return args

    def expr(self, minp=1):
        left = self.unary()
        while True:
            t = self.peek()
            if t is None or t.kind != "op":
                return left
            op = t.text
            if op == "?":
                if minp > 1:
                    return left
                self.next()
                a = self.expr(1)
                self.expect(":")
                b = self.expr(1)
                left = Expr("cond", left.start, b.end, [left, a, b], op="?", op_start=t.start)
                continue
            p = BINARY_PRECEDENCE.get(op)
            if p is None or p < minp:
                return left
            self.next()
            right = self.expr(p if op == "**" else p + 1)
            left = Expr("binary", left.start, right.end, [left, right], op=op, op_start=t.start)

    def unary(self):
        t = self.peek()
        if t is not None and t.kind == "op" and t.text in UNARY_OPERATORS:
            self.next()
            operand = self.unary()
            return Expr("unary", t.start, operand.end, [operand], op=t.text, op_start=t.start)
        return self.primary()

    def primary(self):
        t = self.next()
        k, w = t.kind, t.text
        if k == "number":
            return Expr("num", t.start, t.end, name=w)
        if k == "string":
            return Expr("str", t.start, t.end, name=w)
        if k == "sysid":
            args = self.call_args() if self.at("(") else []
            return Expr("call", t.start, self.last_end(), args, name=w)
        if k == "op" and w == "(":
            inner = self.expr()
            if self.at(":"):                             # a min:typ:max expression: keep the typical
                self.next()
                inner = self.expr()
                self.expect(":")
                self.expr()
            self.expect(")")
            return Expr("paren", t.start, self.last_end(), [inner])
        if k == "op" and w == "{":
            first = self.expr()
            if self.at("{"):                             # replication {n{...}}
                inner = self.primary()
                self.expect("}")
                return self.selects(Expr("repl", t.start, self.last_end(), [first, inner]))
            items = [first]
            while self.at(","):
                self.next()
                items.append(self.expr())
            self.expect("}")
            return self.selects(Expr("concat", t.start, self.last_end(), items))
        if k == "id" and w not in KEYWORDS:
            name, end = w, t.end
            while self.at(".") and self.peek(1) is not None and self.peek(1).kind == "id":
                self.next()
                name += "." + self.next().text
                end = self.last_end()
            if self.at("("):
                args = self.call_args()
                return Expr("call", t.start, self.last_end(), args, name=name)
            return self.selects(Expr("id", t.start, end, name=name))
        raise self.error(f"unexpected {w!r} in an expression", t)

    def selects(self, base):
        while self.at("["):
            self.next()
            a = self.expr()
            op, kids = "[]", [base, a]
            if self.peek().text in (":", "+:", "-:"):
                op = self.next().text
                kids.append(self.expr())
            self.expect("]")
            base = Expr("select", base.start, self.last_end(), kids, op=op)
        return base


# ---- what statements read and write ----

def statement_reads(stmt):
    """Names one statement reads, nested statements included (conditions, right-hand sides,
    indices of targets, task arguments, loop headers, names a timing control waits on)."""
    out = set()
    for s in stmt.walk():
        out |= s.events                        # a name a timing control waits on
        if s.cond is not None:
            out |= identifiers(s.cond)
        for labels, _ in s.items:
            for e in labels:
                out |= identifiers(e)
        if s.kind == "assign":
            out |= identifiers(s.rhs) | lvalue_reads(s.lhs)
        for e in s.args:
            out |= identifiers(e)
        for h in s.header:
            out |= statement_reads(h) if isinstance(h, Stmt) else identifiers(h)
    return out


def statement_writes(stmt):
    out = set()
    for s in stmt.walk():
        if s.kind == "assign":
            out.update(lvalue_base(s.lhs))
        for h in s.header:
            if isinstance(h, Stmt):
                out.update(lvalue_base(h.lhs))
    return out


def statement_calls(stmt):
    out = set()
    for s in stmt.walk():
        exprs = [s.cond, s.rhs, s.lhs] + list(s.args) + [e for labels, _ in s.items for e in labels]
        exprs += [x for h in s.header for x in ((h.lhs, h.rhs) if isinstance(h, Stmt) else (h,))]
        for e in exprs:
            if e is not None:
                out |= calls(e)
    return out


def function_globals(module, name, _seen=None):
    """Module names a function reads (beyond its inputs and locals), through the functions it calls."""
    f = module.functions.get(name)
    if f is None or f.body is None:
        return set()
    seen = _seen if _seen is not None else set()
    if name in seen:
        return set()
    seen.add(name)
    out = (statement_reads(f.body) | statement_writes(f.body)) - f.locals - set(module.functions)
    for c in statement_calls(f.body):
        out |= function_globals(module, c, seen)
    return out


# ---- widths, constant values and changed bits of expressions ----
#
# IEEE 1364-2005 5.4 and 5.5: an expression's width is the largest of its context-determined
# operands and of the context (the target of an assignment), its signedness is signed only when
# every context-determined operand is; operands are extended to that width (sign-extended when
# the expression is signed) before the operation.  Self-determined: concatenation items, the
# right operand of a shift or power, the operands of comparisons (sized to each other), logical
# and reduction operators, conditions, indices, function arguments.
#
# Values are two-state (x and z unknown: no value) and unsigned-represented (an int below 2**w).
# A *mask* is a set of bit positions as an int.

_LITERAL = re.compile(r"^(\d[\d_]*)?\s*'([sS]?)([bBoOdDhH])\s*([0-9a-fA-FxXzZ?_]+)$")
_LITERAL_RADIX = {"b": 2, "o": 8, "d": 10, "h": 16}
_ARITH = {"+", "-", "*", "/", "%", "&", "|", "^", "~^", "^~"}
_SHIFTS = {"<<", ">>", "<<<", ">>>", "**"}
_COMPARE = {"<", "<=", ">", ">=", "==", "!=", "===", "!=="}
_LOGICAL = {"&&", "||"}
_REDUCE = {"&", "~&", "|", "~|", "^", "~^", "^~"}


def full(w):
    return (1 << w) - 1 if w > 0 else 0


def replicate(value, width, count):
    """`{count{value}}` of a width-bit value."""
    out = 0
    for _ in range(count):
        out = (out << width) | value
    return out


def literal(text):
    """(value or None for x/z digits, width, signed) of a numeric literal, or None (a real)."""
    m = _LITERAL.match(text)
    if m:
        size, signed, base, digits = m.group(1), bool(m.group(2)), m.group(3).lower(), m.group(4).replace("_", "")
        radix = _LITERAL_RADIX[base]
        try:
            value = int(digits, radix)
        except ValueError:
            value = None
        if size:
            w = int(size.replace("_", ""))
            if w < 1:
                return None
        else:
            w = 32
            if value is not None:
                w = max(32, value.bit_length())
        return (value & full(w) if value is not None else None), w, signed
    if re.fullmatch(r"\d[\d_]*", text):
        value = int(text.replace("_", ""))
        return value & full(32), 32, True
    return None


def extend_to(v, w, signed, W):
    """A w-bit value (or mask) extended to W bits: sign-extended when `signed`."""
    if signed and W > w and w > 0 and (v >> (w - 1)) & 1:
        return v | (full(W) ^ full(w))
    return v


def _from_lowest(m, W):
    """Every bit from the lowest bit of `m` up: what a carry can reach."""
    if not m:
        return 0
    low = (m & -m).bit_length() - 1
    return full(W) ^ full(low)


def to_signed(v, w):
    return v - (1 << w) if w > 0 and (v >> (w - 1)) & 1 else v


class NameType:
    __slots__ = ("width", "signed", "msb", "lsb", "memory", "words")

    def __init__(self, width, signed, msb, lsb, memory=False, words=None):
        self.width, self.signed, self.msb, self.lsb = width, signed, msb, lsb
        self.memory, self.words = memory, words

    def offset(self, index):
        """Bit position of a declared index, or None when out of range."""
        lo, hi = min(self.msb, self.lsb), max(self.msb, self.lsb)
        if not lo <= index <= hi:
            return None
        return index - self.lsb if self.msb >= self.lsb else self.lsb - index


class Types:
    """Widths, constant values and changed bits of one module's expressions (see the notes above).

    `value(e, env)` is the value of `e` when every name it reads has a value in `env` (name ->
    unsigned value in the name's own width), else None; `changed(e, masks, leaves)` the bits of
    `e`'s value that can differ when the bits `masks[name]` of names may differ and the nodes in
    `leaves` (ids of Expr objects) may take any value.  Both take the width of the context.
    Anything the rules do not cover gives None (a value) or every bit (a mask)."""

    def __init__(self, module, text):
        self.mod, self.text = module, text
        self.params = {}                  # name -> (value, width, signed)
        self._names = {}
        self._ranges = {}
        self._parameters()

    # -- names --
    def _parameters(self):
        for start, end in self.mod.parameters:
            seg = self.text[start:end].strip()
            if seg.startswith("#"):
                seg = seg[seg.index("(") + 1:seg.rindex(")")]
            seg = seg.rstrip(";")
            kind, rng, signed = "", "", False
            for part in re.split(r",(?![^()\[\]{}]*[)\]}])", seg):
                m = re.match(r"\s*(?:(parameter|localparam)\s+)?((?:(?:integer|signed|unsigned|real)\s+)*)"
                             r"(\[[^\]]*\]\s*)?([A-Za-z_]\w*)\s*=\s*(.+?)\s*$", part, re.S)
                if not m:
                    continue
                if m.group(1) or m.group(2) or m.group(3):
                    kind, rng, signed = m.group(2) or "", (m.group(3) or "").strip(), "signed" in (m.group(2) or "")
                try:
                    e = parse_expression(m.group(5))
                except VerilogSyntaxError:
                    continue
                t = self._fragment_type(e)
                v = self.value(e, {}) if t else None
                if v is None or "real" in kind:
                    continue
                w, s = t
                if "integer" in kind:
                    w, s = 32, True
                elif rng:
                    b = self.range_bounds(rng)
                    if b is None:
                        continue
                    w = abs(b[0] - b[1]) + 1
                    s = signed
                self.params[m.group(4)] = (v & full(w), w, s)

    def _fragment_type(self, e):
        try:
            return self.stype(e)
        except Exception:  # noqa: BLE001 - a parameter this reader cannot size
            return None

    def range_bounds(self, rng):
        """(msb, lsb) of a range as written ("[W-1:0]"), or None."""
        got = self._ranges.get(rng, False)
        if got is not False:
            return got
        out = None
        inner = rng.strip()
        if inner.startswith("[") and inner.endswith("]"):
            parts = re.split(r":(?![^()\[\]{}]*[)\]}])", inner[1:-1])
            if len(parts) == 2:
                try:
                    a, b = (parse_expression(p) for p in parts)
                    va, vb = self.const_int(a), self.const_int(b)
                    if va is not None and vb is not None:
                        out = (va, vb)
                except VerilogSyntaxError:
                    out = None
        self._ranges[rng] = out
        return out

    def const_int(self, e, function=None):
        """A constant expression's value as a (signed) Python int, or None."""
        t = self.stype(e, function)
        if t is None:
            return None
        v = self.value(e, {}, function=function)
        if v is None:
            return None
        return to_signed(v, t[0]) if t[1] else v

    def _declared(self, d):
        kinds = d.kinds
        if "real" in kinds or "realtime" in kinds or "event" in kinds:
            return None
        if "integer" in kinds:
            w, s, msb, lsb = 32, True, 31, 0
        elif "time" in kinds:
            w, s, msb, lsb = 64, False, 63, 0
        elif d.range:
            b = self.range_bounds(d.range)
            if b is None:
                return None
            msb, lsb = b
            w, s = abs(msb - lsb) + 1, d.signed
        else:
            w, s, msb, lsb = 1, d.signed, 0, 0
        if d.dims:
            words = self.range_bounds(d.dims) if d.dims.count("[") == 1 else None
            return NameType(w, s, msb, lsb, True, words)
        return NameType(w, s, msb, lsb)

    def name_type(self, name, function=None):
        """NameType of a name (in `function`'s scope when given), or None."""
        key = (function.name if function is not None else None, name)
        got = self._names.get(key, False)
        if got is not False:
            return got
        out = None
        if function is not None and name in function.declarations:
            out = self._declared(function.declarations[name])
        elif function is not None and name == function.name:
            d = Declaration(name, [function.kind] if function.kind else ["reg"], function.range, function.signed)
            out = self._declared(d)
        elif name in self.params:
            _, w, s = self.params[name]
            out = NameType(w, s, w - 1, 0)
        elif name in self.mod.declarations:
            out = self._declared(self.mod.declarations[name])
        self._names[key] = out
        return out

    # -- self-determined types --
    def stype(self, e, function=None):
        """(width, signed) of `e` on its own, or None."""
        t = e.typ
        if t is None:
            t = self._stype(e, function) or False
            e.typ = t
        return t or None

    def _stype(self, e, f):
        k = e.kind
        if k == "num":
            lit = literal(e.name)
            return None if lit is None else (lit[1], lit[2])
        if k == "str":
            return (8 * max(1, len(e.name) - 2), False)
        if k == "id":
            nt = self.name_type(e.name, f)
            return None if nt is None or nt.memory else (nt.width, nt.signed)
        if k == "paren":
            return self.stype(e.kids[0], f)
        if k == "unary":
            if e.op in ("+", "-", "~"):
                return self.stype(e.kids[0], f)
            return (1, False) if self.stype(e.kids[0], f) else None
        if k == "binary":
            a, b = self.stype(e.kids[0], f), self.stype(e.kids[1], f)
            if a is None or b is None:
                return None
            if e.op in _ARITH:
                return (max(a[0], b[0]), a[1] and b[1])
            if e.op in _SHIFTS:
                return a
            return (1, False)
        if k == "cond":
            c, a, b = (self.stype(x, f) for x in e.kids)
            if c is None or a is None or b is None:
                return None
            return (max(a[0], b[0]), a[1] and b[1])
        if k == "concat":
            ws = [self.stype(x, f) for x in e.kids]
            if any(w is None for w in ws):
                return None
            return (sum(w[0] for w in ws), False)
        if k == "repl":
            n = self.const_int(e.kids[0], f)
            inner = self.stype(e.kids[1], f)
            if n is None or inner is None or n < 0:
                return None
            return (n * inner[0], False) if n else None
        if k == "select":
            sel = self._select(e, f)
            return None if sel is None else (sel[1], False) if not sel[3] else (sel[1], sel[2])
        if k == "call":
            if e.name in ("$signed", "$unsigned"):
                a = self.stype(e.kids[0], f) if e.kids else None
                return None if a is None else (a[0], e.name == "$signed")
            if e.name in ("$clog2", "$bits"):
                return (32, True)
            fn = self.mod.functions.get(e.name)
            if fn is None:
                return None
            nt = self.name_type(fn.name, fn)
            return None if nt is None else (nt.width, nt.signed)
        return None

    def _select(self, e, f):
        """(base NameType or None, width, signed, is_word, base kind) of a select: a bit or part of a
        name or of a memory word, or a memory word (is_word: its type is the word's)."""
        base = e.kids[0]
        if base.kind == "id":
            nt = self.name_type(base.name, f)
            if nt is None:
                return None
            if nt.memory:
                if e.op != "[]":
                    return None
                return (nt, nt.width, nt.signed, True, "word")
            bt = nt
        elif base.kind == "select" and base.kids[0].kind == "id":
            inner = self._select(base, f)
            if inner is None or inner[4] != "word":
                return None
            bt = inner[0]
        else:
            return None
        if e.op == "[]":
            return (bt, 1, False, False, "bit")
        if e.op == ":":
            a, b = self.const_int(e.kids[1], f), self.const_int(e.kids[2], f)
            if a is None or b is None:
                return None
            return (bt, abs(a - b) + 1, False, False, "part")
        w = self.const_int(e.kids[2], f)
        if w is None or w < 1:
            return None
        return (bt, w, False, False, "part")

    def _bits_of_select(self, e, f, env):
        """(low bit position, width) the select takes from its base, or None (an index not constant
        or out of range)."""
        sel = self._select(e, f)
        if sel is None or sel[3]:
            return None
        bt, w = sel[0], sel[1]
        if e.op == "[]":
            i = self._index(e.kids[1], f, env)
            off = bt.offset(i) if i is not None else None
            return None if off is None else (off, 1)
        if e.op == ":":
            a, b = self.const_int(e.kids[1], f), self.const_int(e.kids[2], f)
            oa, ob = bt.offset(a), bt.offset(b)
            return None if oa is None or ob is None else (min(oa, ob), w)
        i = self._index(e.kids[1], f, env)
        if i is None:
            return None
        lo_i, hi_i = (i, i + w - 1) if e.op == "+:" else (i - w + 1, i)
        oa, ob = bt.offset(lo_i), bt.offset(hi_i)
        return None if oa is None or ob is None else (min(oa, ob), w)

    def _index(self, e, f, env):
        t = self.stype(e, f)
        if t is None:
            return None
        v = self.value(e, env, function=f)
        if v is None:
            return None
        return to_signed(v, t[0]) if t[1] else v

    # -- values --
    def value(self, e, env, width=0, function=None):
        """The value of `e` in a context of `width` bits (its own width at least), or None."""
        t = self.stype(e, function)
        if t is None:
            return None
        try:
            return self._v(e, max(width, t[0]), t[1], env, function)
        except (RecursionError, ValueError, OverflowError, MemoryError):
            return None

    def truth(self, e, env, function=None):
        """True / False of a condition, or None."""
        v = self.value(e, env, function=function)
        return None if v is None else v != 0

    def _leaf_value(self, name, env, f):
        if name in env:
            return env[name]
        p = self.params.get(name)
        if p is not None and not (f is not None and name in f.declarations):
            return p[0]
        return None

    def _v(self, e, W, S, env, f):
        k = e.kind
        if k == "num":
            lit = literal(e.name)
            if lit is None or lit[0] is None:
                return None
            return extend_to(lit[0], lit[1], S, W)
        if k == "id":
            t = self.stype(e, f)
            v = self._leaf_value(e.name, env, f)
            return None if v is None or t is None else extend_to(v & full(t[0]), t[0], S, W)
        if k == "paren":
            return self._v(e.kids[0], W, S, env, f)
        if k == "unary":
            op, kid = e.op, e.kids[0]
            if op in ("+", "-", "~"):
                x = self._v(kid, W, S, env, f)
                if x is None:
                    return None
                return x if op == "+" else (-x) & full(W) if op == "-" else (~x) & full(W)
            t = self.stype(kid, f)
            x = self._v(kid, t[0], t[1], env, f)
            if x is None:
                return None
            w = t[0]
            if op == "!":
                r = int(x == 0)
            elif op in ("&", "~&"):
                r = int(x == full(w)) ^ (op == "~&")
            elif op in ("|", "~|"):
                r = int(x != 0) ^ (op == "~|")
            else:
                r = (bin(x).count("1") & 1) ^ (op in ("~^", "^~"))
            return r
        if k == "binary":
            op, l, r = e.op, e.kids[0], e.kids[1]
            if op in _ARITH:
                a = self._v(l, W, S, env, f)
                b = self._v(r, W, S, env, f)
                if a is None or b is None:           # a few results that one operand decides
                    known = a if a is not None else b
                    if known is not None:
                        if op == "&" and known == 0 or op == "*" and known == 0:
                            return 0
                        if op == "|" and known == full(W):
                            return full(W)
                    return None
                if op == "+":
                    return (a + b) & full(W)
                if op == "-":
                    return (a - b) & full(W)
                if op == "*":
                    return (a * b) & full(W)
                if op in ("/", "%"):
                    if b == 0:
                        return None
                    if S:
                        sa, sb = to_signed(a, W), to_signed(b, W)
                        q = abs(sa) // abs(sb) * (1 if (sa < 0) == (sb < 0) else -1)
                        return (q if op == "/" else sa - q * sb) & full(W)
                    return (a // b if op == "/" else a % b) & full(W)
                if op == "&":
                    return a & b
                if op == "|":
                    return a | b
                if op == "^":
                    return a ^ b
                return (~(a ^ b)) & full(W)
            if op in _SHIFTS:
                a = self._v(l, W, S, env, f)
                t = self.stype(r, f)
                b = self._v(r, t[0], t[1], env, f)
                if a is None or b is None:
                    return 0 if a == 0 else None
                if op == "**":
                    if t[1] and to_signed(b, t[0]) < 0:
                        return None
                    return pow(a, b, 1 << W) if W > 0 else 0
                if b >= W + 64:
                    b = W + 64
                if op in ("<<", "<<<"):
                    return (a << b) & full(W)
                if op == ">>>" and S:
                    return (to_signed(a, W) >> b) & full(W)
                return a >> b
            if op in _COMPARE:
                ta, tb = self.stype(l, f), self.stype(r, f)
                w, s = max(ta[0], tb[0]), ta[1] and tb[1]
                a, b = self._v(l, w, s, env, f), self._v(r, w, s, env, f)
                if a is None or b is None:
                    return None
                if s:
                    a, b = to_signed(a, w), to_signed(b, w)
                return int({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b,
                            "===": a == b, "!==": a != b}[op])
            if op in _LOGICAL:
                ta, tb = self.stype(l, f), self.stype(r, f)
                a, b = self._v(l, ta[0], ta[1], env, f), self._v(r, tb[0], tb[1], env, f)
                if op == "&&":
                    if a == 0 or b == 0:
                        return 0
                    return None if a is None or b is None else 1
                if (a is not None and a != 0) or (b is not None and b != 0):
                    return 1
                return None if a is None or b is None else 0
            return None
        if k == "cond":
            c, a, b = e.kids
            tc = self.stype(c, f)
            cv = self._v(c, tc[0], tc[1], env, f)
            if cv is None:
                va, vb = self._v(a, W, S, env, f), self._v(b, W, S, env, f)
                return va if va is not None and va == vb else None
            return self._v(a if cv else b, W, S, env, f)
        if k == "concat":
            out = 0
            for x in e.kids:
                t = self.stype(x, f)
                v = self._v(x, t[0], t[1], env, f)
                if v is None:
                    return None
                out = (out << t[0]) | v
            return out
        if k == "repl":
            n = self.const_int(e.kids[0], f)
            t = self.stype(e.kids[1], f)
            v = self._v(e.kids[1], t[0], t[1], env, f)
            if v is None or n is None:
                return None
            return replicate(v, t[0], n)
        if k == "select":
            sel = self._select(e, f)
            if sel is None or sel[3]:
                return None
            base = e.kids[0]
            if base.kind != "id":
                return None
            bv = self._leaf_value(base.name, env, f)
            bits = self._bits_of_select(e, f, env)
            if bv is None or bits is None:
                return None
            return (bv >> bits[0]) & full(bits[1])
        if k == "call":
            if e.name in ("$signed", "$unsigned") and e.kids:
                t = self.stype(e.kids[0], f)
                v = self._v(e.kids[0], t[0], t[1], env, f)
                return None if v is None else extend_to(v, t[0], S, W)
            return None
        return None

    # -- changed bits --
    def changed(self, e, masks, leaves, env, width=0, function=None):
        """Mask of the bits of `e`'s value (in a context of `width` bits) that can differ when the bits
        `masks[name]` of each name and any value of the nodes whose ids are in `leaves` may differ
        (`leaves` a set, or a dict: id -> the bits of that node's own value that may differ, None
        for every bit)."""
        t = self.stype(e, function)
        if t is None:
            return full(max(width, 1)) if self._touched(e, masks, leaves) else 0
        W = max(width, t[0])
        try:
            return self._c(e, W, t[1], masks, leaves, env, function)
        except (RecursionError, ValueError, OverflowError, MemoryError):
            return full(W) if self._touched(e, masks, leaves) else 0

    def _touched(self, e, masks, leaves):
        for x in e.walk():
            if id(x) in leaves or (x.kind == "id" and masks.get(x.name)):
                return True
            if x.kind == "call" and x.name in self.mod.functions:
                for g in function_globals(self.mod, x.name):
                    if masks.get(g):
                        return True
        return False

    def _self_sized(self, e):
        k = e.kind
        return (k in ("num", "id", "str", "concat", "repl", "select", "call")
                or (k == "unary" and e.op not in ("+", "-", "~"))
                or (k == "binary" and (e.op in _COMPARE or e.op in _LOGICAL)))

    def _c(self, e, W, S, masks, leaves, env, f):
        if id(e) in leaves:
            bits = leaves[id(e)] if isinstance(leaves, dict) else None
            if self._self_sized(e):
                t = self.stype(e, f)
                return extend_to(full(t[0]) if bits is None else bits & full(t[0]), t[0], S and t[1], W)
            return full(W)
        k = e.kind
        if k == "num" or k == "str":
            return 0
        if k == "id":
            m = masks.get(e.name)
            if not m:
                return 0
            t = self.stype(e, f)
            return extend_to(m & full(t[0]), t[0], S, W)
        if k == "paren":
            return self._c(e.kids[0], W, S, masks, leaves, env, f)
        if k == "unary":
            op, kid = e.op, e.kids[0]
            if op in ("+", "~"):
                return self._c(kid, W, S, masks, leaves, env, f)
            if op == "-":
                return _from_lowest(self._c(kid, W, S, masks, leaves, env, f), W)
            t = self.stype(kid, f)
            return 1 if self._c(kid, t[0], t[1], masks, leaves, env, f) else 0
        if k == "binary":
            op, l, r = e.op, e.kids[0], e.kids[1]
            if op in _ARITH:
                ml = self._c(l, W, S, masks, leaves, env, f)
                mr = self._c(r, W, S, masks, leaves, env, f)
                if not ml and not mr:
                    return 0
                if op in ("&", "|"):
                    vl, vr = self._v(l, W, S, env, f), self._v(r, W, S, env, f)
                    if op == "&":
                        ol = vl if vl is not None else full(W)
                        orr = vr if vr is not None else full(W)
                    else:
                        ol = (~vl) & full(W) if vl is not None else full(W)
                        orr = (~vr) & full(W) if vr is not None else full(W)
                    return (ml & orr) | (mr & ol)
                if op in ("^", "~^", "^~"):
                    return ml | mr
                if op in ("+", "-", "*"):
                    return _from_lowest(ml | mr, W)
                return full(W)
            if op in _SHIFTS:
                t = self.stype(r, f)
                mr = self._c(r, t[0], t[1], masks, leaves, env, f)
                ml = self._c(l, W, S, masks, leaves, env, f)
                if mr:
                    return full(W) if (ml or self._v(l, W, S, env, f) != 0) else 0
                if not ml:
                    return 0
                if op == "**":
                    return full(W)
                b = self._v(r, t[0], t[1], env, f)
                if b is not None:
                    b = min(b, W + 1)
                    if op in ("<<", "<<<"):
                        return (ml << b) & full(W)
                    out = ml >> b
                    if op == ">>>" and S and (ml >> (W - 1)) & 1:
                        out |= full(W) ^ (full(W) >> b)
                    return out
                if op in ("<<", "<<<"):
                    return _from_lowest(ml, W)
                if op == ">>>" and S and (ml >> (W - 1)) & 1:
                    return full(W)
                return full(ml.bit_length())
            if op in _COMPARE:
                ta, tb = self.stype(l, f), self.stype(r, f)
                w, s = max(ta[0], tb[0]), ta[1] and tb[1]
                return 1 if (self._c(l, w, s, masks, leaves, env, f) or self._c(r, w, s, masks, leaves, env, f)) else 0
            if op in _LOGICAL:
                ta, tb = self.stype(l, f), self.stype(r, f)
                ml = self._c(l, ta[0], ta[1], masks, leaves, env, f)
                mr = self._c(r, tb[0], tb[1], masks, leaves, env, f)
                if not ml and not mr:
                    return 0
                # an operand that does not change and decides the result alone
                vl = None if ml else self._v(l, ta[0], ta[1], env, f)
                vr = None if mr else self._v(r, tb[0], tb[1], env, f)
                decided = 0 if op == "&&" else 1
                if (vl is not None and (vl != 0) == decided) or (vr is not None and (vr != 0) == decided):
                    return 0
                return 1
            return full(W)
        if k == "cond":
            c, a, b = e.kids
            tc = self.stype(c, f)
            mc = self._c(c, tc[0], tc[1], masks, leaves, env, f)
            if not mc:
                cv = self._v(c, tc[0], tc[1], env, f)
                if cv is not None:
                    return self._c(a if cv else b, W, S, masks, leaves, env, f)
            ma = self._c(a, W, S, masks, leaves, env, f)
            mb = self._c(b, W, S, masks, leaves, env, f)
            if mc:
                va, vb = self._v(a, W, S, env, f), self._v(b, W, S, env, f)
                if va is not None and vb is not None:
                    return (va ^ vb) | ma | mb
                return full(W)
            return ma | mb
        if k == "concat":
            out = 0
            for x in e.kids:
                t = self.stype(x, f)
                out = (out << t[0]) | (self._c(x, t[0], t[1], masks, leaves, env, f) & full(t[0]))
            return out
        if k == "repl":
            n = self.const_int(e.kids[0], f)
            t = self.stype(e.kids[1], f)
            m = self._c(e.kids[1], t[0], t[1], masks, leaves, env, f) & full(t[0])
            return replicate(m, t[0], n)
        if k == "select":
            sel = self._select(e, f)
            w = sel[1]
            for x in e.kids[1:]:
                tx = self.stype(x, f)
                if tx is None or self._c(x, tx[0], tx[1], masks, leaves, env, f):
                    return extend_to(full(w), w, S and sel[2], W)
            base = e.kids[0]
            if sel[3]:                                    # a memory word: the memory's mask
                m = masks.get(base.name, 0) & full(w)
                return extend_to(m, w, S and sel[2], W)
            if base.kind == "id":
                m = masks.get(base.name, 0)
            else:                                         # a part of a memory word
                bsel = self._select(base, f)
                m = self._c(base, bsel[1], bsel[2], masks, leaves, env, f)
            if not m:
                return 0
            bits = self._bits_of_select(e, f, env)
            if bits is None:
                return full(w)
            return (m >> bits[0]) & full(bits[1])
        if k == "call":
            if e.name in ("$signed", "$unsigned") and e.kids:
                t = self.stype(e.kids[0], f)
                m = self._c(e.kids[0], t[0], t[1], masks, leaves, env, f) & full(t[0])
                return extend_to(m, t[0], S, W)
            t = self.stype(e, f)
            if self._touched(e, masks, leaves):
                return extend_to(full(t[0]), t[0], S and t[1], W)
            return 0
        return full(W) if self._touched(e, masks, leaves) else 0
