"""The interface of a Verilog module written by anyone: its ports (ANSI or not) and parameters.

The kit's own designs come from MyHDL and are read with a simple pattern (cosim.sim.batch.
module_ports); a user's RTL may use ANSI port lists, `wire`/`reg`/`logic` types, parameter
port lists and ranges written with parameters.  This reader understands enough of
Verilog-2005 (and the common SystemVerilog forms of a port list) to find a module's ports,
their directions and widths, and its overridable parameters, without elaborating the design:
a range it cannot evaluate (a function call, a macro) leaves that port's width unknown, which
the caller checks against the interface it expects.
"""
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List


class VerilogInterfaceError(ValueError):
    """A module that cannot be found or read; the message is one line for the user."""


@dataclass
class ModuleInterface:
    name: str
    ports: Dict[str, tuple] = field(default_factory=dict)       # name -> (direction, width or None)
    parameters: Dict[str, str] = field(default_factory=dict)    # overridable: name -> default (text)
    path: str = ""


_DIRECTIONS = ("input", "output", "inout")
_TYPES = {"wire", "reg", "logic", "signed", "unsigned", "var", "tri", "bit", "integer"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def strip_comments(text):
    """Verilog text without // and /* */ comments (strings kept), newlines kept (line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _balanced(text, start):
    """Index just past the parenthesis that closes the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise VerilogInterfaceError("unbalanced parentheses in a module header")


def _split_top(text, sep=","):
    """Split at `sep` outside parentheses, brackets and braces."""
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _number(token):
    """A Verilog integer literal (12, 'd12, 8'hff, 32'sd5) as an int, or None."""
    token = token.replace("_", "")
    m = re.fullmatch(r"(?:\d+)?'[sS]?([dDhHbBoO])([0-9a-fA-F]+)", token)
    if m:
        return int(m.group(2), {"d": 10, "h": 16, "b": 2, "o": 8}[m.group(1).lower()])
    return int(token) if token.isdigit() else None


def evaluate(expr, values):
    """The value of a constant expression of integers, parameters, + - * / % ( ) << >> and
    $clog2; None when it uses anything else."""
    expr = expr.strip()
    tokens = re.findall(r"\$clog2|\d*'[sS]?[dDhHbBoO][0-9a-fA-F_]+|\d[\d_]*|[A-Za-z_]\w*|<<|>>|[-+*/%()]|\S", expr)
    out = []
    for t in tokens:
        if t == "$clog2":
            out.append("_clog2")
        elif _number(t) is not None:
            out.append(str(_number(t)))
        elif _IDENT.fullmatch(t):
            if t not in values or values[t] is None:
                return None
            out.append(f"({values[t]})")
        elif t in ("+", "-", "*", "%", "(", ")", "<<", ">>"):
            out.append(t)
        elif t == "/":
            out.append("//")
        else:
            return None
    try:
        v = eval("".join(out), {"__builtins__": {}}, {"_clog2": lambda x: max(0, (x - 1).bit_length())})
    except Exception:  # noqa: BLE001 - anything not a plain constant expression is "unknown"
        return None
    return v if isinstance(v, int) else None


def _range_width(rng, values):
    """Bits of a packed range `[msb:lsb]` (None if it does not evaluate); 1 without a range."""
    if not rng:
        return 1
    m = re.fullmatch(r"\[(.*):(.*)\]", rng.strip(), re.S)
    if not m:
        return None
    hi, lo = evaluate(m.group(1), values), evaluate(m.group(2), values)
    return None if hi is None or lo is None else abs(hi - lo) + 1


def _declaration(decl, values):
    """(direction or None, range text, names) of `input wire [7:0] a, b` (or of a name alone)."""
    words = decl.split()
    direction = words[0] if words and words[0] in _DIRECTIONS else None
    rest = decl[len(words[0]):] if direction else decl
    m = re.match(r"\s*((?:(?:%s)\b\s*)*)(\[[^\]]*\])?\s*(.*)$" % "|".join(sorted(_TYPES)), rest, re.S)
    rng, names = (m.group(2), m.group(3)) if m else (None, rest)
    names = [re.sub(r"\s*=.*$", "", n).strip() for n in _split_top(names)]
    return direction, rng, [n for n in names if _IDENT.fullmatch(n)]


def _parameters(text, values):
    """Parameters declared in `text` (a parameter port list or a module body): the overridable
    ones (`parameter`) as name -> default; every one's value, `localparam` too, into `values`
    (ranges may use either)."""
    found = {}
    for m in re.finditer(r"\b(parameter|localparam)\b(.*?)(?=;|\bparameter\b|\blocalparam\b|$)", text, re.S):
        body = re.sub(r"^\s*(?:integer|real|signed|unsigned|int|\[[^\]]*\])\s*", "", m.group(2))
        for part in _split_top(body):
            name, eq, default = part.partition("=")
            name = name.split()[-1] if name.split() else ""
            if eq and _IDENT.fullmatch(name):
                if m.group(1) == "parameter":
                    found[name] = default.strip()
                values.setdefault(name, evaluate(default, values))
    return found


def modules_in(text):
    """Names of the modules defined in a Verilog text (comments removed), in order."""
    return re.findall(r"\bmodule\s+([A-Za-z_]\w*)", strip_comments(text))


def read_module(text, name, overrides=None, path=""):
    """The ports and parameters of module `name` in `text`.  `overrides` ({parameter: value})
    are used to evaluate ranges written with parameters."""
    src = strip_comments(text)
    m = re.search(r"\bmodule\s+%s\b" % re.escape(name), src)
    if not m:
        raise VerilogInterfaceError(f"module {name} not found" + (f" in {path}" if path else ""))
    i = m.end()
    while src[i].isspace():
        i += 1
    values = {}
    header_params = {}
    if src[i] == "#":
        j = src.index("(", i)
        k = _balanced(src, j)
        header_params = _parameters(src[j + 1:k - 1], values)
        i = k
        while src[i].isspace():
            i += 1
    port_list = ""
    if src[i] == "(":
        k = _balanced(src, i)
        port_list = src[i + 1:k - 1]
        i = k
    end = src.find("endmodule", i)
    body = src[i:end if end >= 0 else len(src)]
    body_params = {} if header_params else _parameters(body, values)
    for k, v in (overrides or {}).items():
        values[k] = v
    ports, order = {}, []
    items = _split_top(port_list)
    if any(it.split()[0] in _DIRECTIONS for it in items if it.split()):
        direction, rng = None, None
        for it in items:
            d, r, names = _declaration(it, values)
            if d:
                direction, rng = d, r
            elif r is not None:
                rng = r
            for n in names:
                ports[n] = (direction, _range_width(rng, values))
    else:
        order = [it.strip() for it in items if _IDENT.fullmatch(it.strip())]
        for stmt in _split_top(body, ";"):
            words = stmt.split()
            if words and words[0] in _DIRECTIONS:
                d, r, names = _declaration(stmt, values)
                for n in names:
                    ports[n] = (d, _range_width(r, values))
        missing = [n for n in order if n not in ports]
        if missing:
            raise VerilogInterfaceError(f"module {name}: no direction declared for port(s) {', '.join(missing)}")
        ports = {n: ports[n] for n in order}
    return ModuleInterface(name, ports, {**header_params, **body_params}, path)


def find_top(paths, top=None):
    """(path, module name) of the top module among the files: `top` if given, else the one
    module that no other instantiates."""
    defined = {}
    texts = {}
    for p in paths:
        if not os.path.isfile(p):
            raise VerilogInterfaceError(f"{p}: no such file")
        with open(p, errors="replace") as fh:
            texts[p] = strip_comments(fh.read())
        for name in modules_in(texts[p]):
            defined.setdefault(name, p)
    if not defined:
        raise VerilogInterfaceError(f"no module in {', '.join(paths)}")
    if top is not None:
        if top not in defined:
            raise VerilogInterfaceError(f"--top {top}: no such module in {', '.join(paths)} "
                                        f"(modules: {', '.join(sorted(defined))})")
        return defined[top], top
    used = set()
    for text in texts.values():
        for name in defined:
            if re.search(r"^\s*%s\s+(?:#\s*\(|[A-Za-z_]\w*\s*\()" % re.escape(name), text, re.M):
                used.add(name)
    roots = [n for n in defined if n not in used]
    if len(roots) != 1:
        raise VerilogInterfaceError(f"cannot tell the top module among {', '.join(sorted(roots or defined))}: "
                                    f"give --top NAME")
    return defined[roots[0]], roots[0]


def check_ports(interface: ModuleInterface, expected: Dict[str, tuple]) -> List[str]:
    """Differences between a module's ports and the ones expected ({name: (direction, width)}):
    missing ports, wrong directions, widths that evaluate to another value; [] when it fits.
    Extra ports are not an error here (the caller decides)."""
    problems = []
    for name, (direction, width) in expected.items():
        got = interface.ports.get(name)
        if got is None:
            problems.append(f"no port {name} ({direction}, {width} bit{'s' if width > 1 else ''})")
            continue
        if got[0] != direction:
            problems.append(f"port {name} is an {got[0]}, expected an {direction}")
        if got[1] is not None and got[1] != width:
            problems.append(f"port {name} is {got[1]} bits wide, expected {width}")
    return problems
