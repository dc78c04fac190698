"""The MyHDL source line of a statement of a converted design, so a mutant can be reported where
the designer wrote the code.

MyHDL converts each generator of a block into one process and names it `<instance>_<function>`:
the instance is the chain of block instances it sits in (`prism_control0`, or
`prism_arrival_banks0_prism_fp32_bank8_fp32_arrival_lane143_fp32_add143` for an adder deep in
the arrival banks: block function name, index, underscore, for each level) and the function is
the generator's name in the innermost block's source.  The tool chain drops those names from the
design, but MyHDL's output as written (`<name>.raw.v`, beside the design) keeps them, one per
`always` in the same order.  The innermost block's module (`cosim.sim.toolchain.hdl_modules()`)
holds the generator; inside it, the Python line of a statement is the one that best matches it:

  - it assigns the same name (a signal `x.next = ...`, `x.next[...] = ...`, a variable
    `x = ...`, `x[...] = ...`); the Verilog names carry the instance chain (signals) or the
    process name (variables, hoisted as `<process>_<variable>`), which are stripped first, and a
    dotted Python name (an interface's `bus.data`) matches its converted form (`bus_data`);
  - an `if`/`else if` matches a Python `if`/`elif` reading the same names;
  - then by the names, operators and integers the two share, and, among equals, the one whose
    place in the function is nearest the statement's place in the process (MyHDL keeps the
    order of statements).

A continuous assignment has no process name: its block is found from the instance chain of the
name it assigns, and every function of that block is searched.  Best effort: None when the
design has no raw file beside it, the line is in no process or assignment, or nothing matches.
"""
import functools
import os
import re

from cosim.mutation import verilog as V

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_IDENT = re.compile(r"[A-Za-z_]\w*")
_INT = re.compile(r"(?<![\w'.])(\d+)(?![\w'])")
_OPS = ("<<<", ">>>", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "&", "|", "^", "<", ">", "~", "!")
_PY_OPS = {"and": "&&", "or": "||", "not": "!"}


@functools.lru_cache(maxsize=None)
def _blocks():
    from cosim.sim.toolchain import hdl_modules
    return hdl_modules()


def block_prefix():
    names = sorted(_blocks(), key=len, reverse=True)
    return re.compile(r"^((?:%s))(\d+)_" % "|".join(map(re.escape, names)))


def split_label(label, top):
    """(instance chain, innermost block, rest) of a MyHDL name: the chain of `<block><index>_`
    prefixes, the block function of the last one (the top block when there is none), and the rest
    (a process's function name, a signal's own name)."""
    pattern = block_prefix()
    chain, block, rest = "", top, label
    while True:
        m = pattern.match(rest)
        if not m:
            break
        chain += m.group(0)
        block = m.group(1)
        rest = rest[m.end():]
    return chain, block, rest


@functools.lru_cache(maxsize=8)
def source_labels(raw_path, mtime):
    with open(raw_path) as fh:
        heads = [line for line in fh if line.startswith("always")]
    out = []
    for h in heads:
        m = re.search(r"\bbegin:\s*(\w+)", h)
        out.append(m.group(1) if m else None)
    return out


@functools.lru_cache(maxsize=64)
def _python_lines(path, mtime):
    with open(path) as fh:
        return fh.read().split("\n")


def _module_file(block):
    dotted = _blocks().get(block)
    return os.path.join(_ROOT, *dotted.split(".")) + ".py" if dotted else None


def _block_end(lines, i, indent):
    """The index after the body of the `def` at line i (indented `indent`): its lines are blank,
    comments or indented deeper."""
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent
                              or lines[j].lstrip().startswith("#")):
        j += 1
    return j


def _functions(lines):
    """{generator name: (first body line index, end index)} of every nested `def` in a file."""
    out = {}
    for i, line in enumerate(lines):
        m = re.match(r"^(\s+)def\s+(\w+)\s*\(", line)
        if not m:
            continue
        out.setdefault(m.group(2), (i + 1, _block_end(lines, i, len(m.group(1)))))
    return out


def _find_function(block, function):
    """(file, first line index, end index) of generator `function` of `block`: in the block's own
    module, else in any module of hdl/ (a generator written in a helper)."""
    candidates = [_module_file(block)] + sorted(filter(None, (_module_file(b) for b in _blocks() if b != block)))
    for path in candidates:
        if not path or not os.path.exists(path):
            continue
        lines = _python_lines(path, os.path.getmtime(path))
        span = _functions(lines).get(function)
        if span:
            return path, span[0], span[1]
    return None


def _features(text):
    """(names, operators, integers) of a statement's text."""
    code = re.sub(r"\d+'[sS]?[bBoOdDhH]\s*([0-9a-fA-F_]+)", lambda m: "", text)
    names = set(_IDENT.findall(code)) - V.KEYWORDS - set(_PY_OPS) - {"next", "if", "elif", "else", "True", "False"}
    ops = {op for op in _OPS if op in code}
    for word, op in _PY_OPS.items():
        if re.search(rf"\b{word}\b", code):
            ops.add(op)
    ints = set(_INT.findall(code))
    return names, ops, ints


def _verilog_name(name, label, top):
    """A converted name as the designer wrote it: without the process prefix (a hoisted variable)
    or the instance chain (a signal, of this instance or another one it reaches through a bus)."""
    if label and name.startswith(label + "_"):
        return name[len(label) + 1:]
    return split_label(name, top)[2]


def _best_line(lines, first, end, target, names, ops, ints, is_if, position):
    best, best_key = None, None
    span = max(1, end - first)
    for i in range(first, end):
        raw = lines[i]
        code = raw.split("#", 1)[0].strip()
        if not code or code.startswith(("def ", "@", '"""', "'''", "return")):
            continue
        flat = re.sub(r"(?<=\w)\.(?!next\b)(?=[A-Za-z_])", "_", code)      # bus.data -> bus_data
        py_names, py_ops, py_ints = _features(flat)
        score = 0
        if is_if:
            if re.match(r"(if|elif)\b", flat):
                score += 4
        elif target:
            if re.match(rf"{re.escape(target)}(\.next)?\s*(\[[^\]]*\])?\s*(\.next)?\s*=(?!=)", flat):
                score += 6
        score += 2 * len(names & py_names) + len(ops & py_ops) + len(ints & py_ints)
        if score == 0:
            continue
        key = (score, -abs((i - first) / span - position))
        if best_key is None or key > best_key:
            best, best_key = i, key
    return best


def _find_def(block, name):
    """(file, first body line index, end index) of a Python function `name` (at any depth: a
    helper MyHDL converts into a Verilog function), in the block's module first, then in hdl/."""
    candidates = [_module_file(block)] + sorted(filter(None, (_module_file(b) for b in _blocks() if b != block)))
    pattern = re.compile(rf"^(\s*)def\s+{re.escape(name)}\s*\(")
    for path in candidates:
        if not path or not os.path.exists(path):
            continue
        lines = _python_lines(path, os.path.getmtime(path))
        for i, text in enumerate(lines):
            m = pattern.match(text)
            if not m:
                continue
            return path, i + 1, _block_end(lines, i, len(m.group(1)))
    return None


def _function_source(mod, fn, labels, line_text, position):
    """The Python line of a statement inside a Verilog function MyHDL wrote for a call
    (`MYHDL<n>_<name>`): in the Python function `<name>`, looked for first in the block of the
    process that calls it."""
    name = re.sub(r"^MYHDL\d+_", "", fn.name)
    block = mod.name
    caller = next((p for p in mod.processes if p.kind == "always" and fn.name in V.statement_calls(p.body)), None)
    if caller is not None and labels is not None and caller.index < len(labels) and labels[caller.index]:
        block = split_label(labels[caller.index], mod.name)[1]
    found = _find_def(block, name)
    if found is None:
        return None
    path, first, end = found
    lines = _python_lines(path, os.path.getmtime(path))
    stmt = line_text.strip()
    if re.match(rf"{re.escape(fn.name)}\s*=(?!=)", stmt):          # the return value
        for i in range(end - 1, first - 1, -1):
            if lines[i].strip().startswith("return"):
                return _relative(path), i + 1
        return None
    is_if = bool(re.match(r"(end\s+)?(else\s+)?if\b", stmt))
    m = re.match(r"([A-Za-z_]\w*)\s*(?:\[[^=]*\])?\s*=(?!=)", stmt)
    target = m.group(1) if m and not is_if else None
    names, ops, ints = _features(stmt)
    i = _best_line(lines, first, end, target, names, ops, ints, is_if, position)
    return None if i is None else (_relative(path), i + 1)


def _relative(path):
    rel = os.path.relpath(path, _ROOT)
    return rel if not rel.startswith("..") else path


def myhdl_source(verilog_path, line):
    """(Python file, 1-based line) of the MyHDL statement the converted design's `line` came from,
    or None.  The file is relative to the project when it lies in it."""
    with open(verilog_path) as fh:
        text = fh.read()
    src = V.parse(text)
    mod = src.module()
    raw = os.path.splitext(verilog_path)[0] + ".raw.v"
    labels = source_labels(raw, os.path.getmtime(raw)) if os.path.exists(raw) else None
    offset = src.offset_of_line(line)
    if offset is None:
        return None
    line_text = text[offset:text.find("\n", offset) if text.find("\n", offset) >= 0 else len(text)]
    fn = next((f for f in mod.functions.values() if f.start <= offset < f.end), None)
    if fn is not None:
        return _function_source(mod, fn, labels, line_text, (line - src.line(fn.start)) / max(
            1, src.line(fn.end) - src.line(fn.start)))
    process = next((p for p in mod.processes if p.kind == "always" and p.start <= offset < p.end), None)
    if process is not None:
        if labels is None or process.index >= len(labels) or labels[process.index] is None:
            return None
        label = labels[process.index]
        chain, block, function = split_label(label, mod.name)
        found = _find_function(block, function)
        if found is None:
            return None
        places = [(found[0], found[1], found[2])]
        first_line = src.line(process.start)
        position = (line - first_line) / max(1, src.line(process.end) - first_line)
    else:
        assign = next((a for a in mod.assigns if a.start <= offset <= a.end), None)
        if assign is None:
            return None
        targets = V.lvalue_base(assign.lhs)
        chain, block, _ = split_label(targets[0] if targets else "", mod.name)
        if not chain:      # a top-level name (a sub-block's output): the one instance it reads
            read = {split_label(n, mod.name)[:2] for n in V.identifiers(assign.rhs)} - {("", mod.name)}
            if len(read) == 1:
                chain, block = read.pop()
        label = None
        path = _module_file(block)
        if not path or not os.path.exists(path):
            return None
        lines = _python_lines(path, os.path.getmtime(path))
        places = [(path, a, b) for a, b in _functions(lines).values()]
        position = 0.5
    stmt = line_text.strip()
    is_if = bool(re.match(r"(end\s+)?(else\s+)?if\b", stmt))
    m = re.match(r"(?:assign\s+)?([A-Za-z_]\w*)\s*(?:\[[^=]*\])?\s*<?=(?!=)", stmt)
    target = _verilog_name(m.group(1), label, mod.name) if m and not is_if else None
    names, ops, ints = _features(stmt)
    names = {_verilog_name(n, label, mod.name) for n in names}
    best = None
    for path, first, end in places:
        lines = _python_lines(path, os.path.getmtime(path))
        i = _best_line(lines, first, end, target, names, ops, ints, is_if, position)
        if i is not None:
            flat = lines[i]
            score = (target is not None and re.search(rf"\b{re.escape(target)}\b", flat) is not None)
            if best is None or score > best[2]:
                best = (path, i, score)
    if best is None:
        return None
    path = best[0]
    rel = os.path.relpath(path, _ROOT)
    return (rel if not rel.startswith("..") else path), best[1] + 1

