"""The Python code takes protocol and fabric numbers from spec/ by their names, as the C kernels take
them from prism_spec.h (tests/spec/test_spec_cheader.py): no module of hdl/, golden/ or cosim/
defines a name of spec again or imports it under another name, and none writes a protocol constant
as a literal.  The tests themselves are not scanned: they derive the values again on purpose."""
import functools
import io
import os
import tokenize

from spec import fabric as SB
from spec import formats as SF
from spec import frames as S

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCANNED = ("hdl", "golden", "cosim")

SPEC_NAMES = {name: module.__name__ for module in (SF, S, SB) for name in vars(module)
              if name.isupper() and not name.startswith("_")}

# Any source: a canonical NaN or infinity of a float format, or the Kulisch LSB shift (2^-149 as 149).
FLOAT_SPECIALS = sorted({table[c] for table in (SF.CANONICAL_NAN, SF.POS_INF, SF.NEG_INF) for c in SF.FLOAT_LAYOUT})
EVERYWHERE = {**{v: f"canonical special 0x{v:X}" for v in FLOAT_SPECIALS},
              SF.KULISCH_LSB_SHIFT: "the Kulisch LSB shift (KULISCH_LSB_SHIFT)"}
# Sources of the node and its arithmetic also: the accumulator widths, the node's capacity and the
# request header's width.  In the fabric, the package, the topologies, the simulation core and the
# shared blocks these are ordinary numbers (a 320-unit phase, 4,096 GPUs, a 4,096-vector bench).
NODE = {**{w: f"the Kulisch width {w} (KULISCH_WIDTHS)" for w in SF.KULISCH_WIDTHS},
        SF.KULISCH_MIN_WIDTH: "the narrowest Kulisch width (KULISCH_MIN_WIDTH)",
        S.MAX_CAPACITY: "the node's capacity (MAX_CAPACITY)",
        S.HDR_BITS: "the request header's width (HDR_BITS)"}
OTHER_SUBSYSTEMS = {"fabric", "package", "topology", "sim", "common", "mutation"}

# Literals a file may still hold while other work has it open: (file, what) -> how many.  The counts
# may only go down (none is left: every module uses spec's names).
PENDING = {}


@functools.lru_cache(maxsize=None)
def _sources():
    """((path relative to the root, its tokens), ...) of every scanned module, tokenized once."""
    out = []
    for top in SCANNED:
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(folder, f)
                    with open(path) as fh:
                        out.append((os.path.relpath(path, ROOT).replace(os.sep, "/"), _tokens(fh.read())))
    return tuple(out)


def _tokens(text):
    return tuple(t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                 if t.type in (tokenize.NAME, tokenize.NUMBER, tokenize.OP, tokenize.NEWLINE))


def is_node_source(rel):
    """A file of the node or its arithmetic: not in a folder of another subsystem or of shared code."""
    return not set(rel.split("/")[:-1]) & OTHER_SUBSYSTEMS


def protocol_literals(tokens, node):
    """(line, what) for every protocol constant written as a number among `tokens` (Python's own
    tokens: strings, docstrings and comments are not code)."""
    table = {**EVERYWHERE, **(NODE if node else {})}
    found = []
    for tok in tokens:
        if tok.type != tokenize.NUMBER:
            continue
        try:
            value = int(tok.string.replace("_", ""), 0)
        except ValueError:                       # a float or an imaginary literal
            continue
        if value in table:
            found.append((tok.start[0], table[value]))
    return found


def _statements(tokens):
    """The simple statements of `tokens`, each as ((token, bracket depth), ...)."""
    line, depth = [], 0
    for tok in tokens:
        if tok.type == tokenize.NEWLINE or (tok.string == ";" and depth == 0):
            if line:
                yield line
            line = []
            continue
        if tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        line.append((tok, depth))
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
    if line:
        yield line


def redefinitions(tokens):
    """(line, name, how) for every name of spec a module binds again (an assignment or augmented
    assignment target, a def, a class, a `for`, `with` or `:=` target) or imports under another name.
    A subscript or attribute target (`hdr[F_COUNT_END:F_COUNT_LSB] = ...`, `self.X = ...`) and a
    keyword argument bind nothing."""
    found = []

    def spec_name(k, stmt):
        tok = stmt[k][0]
        return tok.type == tokenize.NAME and tok.string in SPEC_NAMES and not (
            k and stmt[k - 1][0].string == ".")

    for stmt in _statements(tokens):
        words = [t.string for t, _ in stmt]
        if words[0] in ("import", "from"):
            for k, (tok, _) in enumerate(stmt):
                if tok.string == "as" and k + 1 < len(stmt):
                    name, alias = words[k - 1], words[k + 1]
                    if name in SPEC_NAMES and alias != name:
                        found.append((tok.start[0], name, f"imported as {alias}"))
                    elif alias in SPEC_NAMES and alias != name:
                        found.append((tok.start[0], alias, f"bound to {name}"))
            continue
        top = [k for k, (tok, d) in enumerate(stmt) if d == 0 and tok.type == tokenize.OP and
               (tok.string == "=" or (tok.string.endswith("=") and tok.string not in ("==", "!=", "<=", ">=")))]
        if top:                                  # everything left of the last top-level `=` is a target
            colon = next((k for k in range(top[-1]) if stmt[k][1] == 0 and words[k] == ":"), top[-1])
            for k in range(min(top[-1], colon)):
                if stmt[k][1] == 0 and spec_name(k, stmt) and (k + 1 >= len(stmt) or words[k + 1] != "["):
                    found.append((stmt[k][0].start[0], words[k], "defined again"))
        for k, word in enumerate(words):
            if word in ("def", "class") and k + 1 < len(stmt) and spec_name(k + 1, stmt):
                found.append((stmt[k][0].start[0], words[k + 1], "defined again"))
            elif word == ":=" and k and spec_name(k - 1, stmt):
                found.append((stmt[k][0].start[0], words[k - 1], "defined again"))
            elif word == "for":
                j = k + 1
                while j < len(stmt) and words[j] != "in":
                    if spec_name(j, stmt):
                        found.append((stmt[j][0].start[0], words[j], "defined again"))
                    j += 1
            elif word == "as" and k + 1 < len(stmt) and spec_name(k + 1, stmt):
                found.append((stmt[k][0].start[0], words[k + 1], "defined again"))
    return found


def test_no_module_defines_a_spec_name_again():
    found = {rel: r for rel, tokens in _sources() if (r := redefinitions(tokens))}
    assert not found, f"take these from spec/ under their own names: {found}"


def test_no_module_writes_a_protocol_literal():
    counts, where = {}, {}
    for rel, tokens in _sources():
        for line, what in protocol_literals(tokens, is_node_source(rel)):
            counts[rel, what] = counts.get((rel, what), 0) + 1
            where.setdefault((rel, what), []).append(line)
    over = {f"{rel}:{where[rel, what]}": what for (rel, what), n in counts.items() if n > PENDING.get((rel, what), 0)}
    assert not over, f"use spec's names (spec/formats.py, spec/frames.py, spec/fabric.py): {over}"


def test_the_scans_find_them():
    src = '''"""0x7FC00000 and 149 in a docstring are fine"""
# 320 bits in a comment are fine
NAN = 0x7fc00000
shift = x << 149
w, cap = 320, 4_096
y = 1149 + 0x7FC000001 + 149.0
'''
    assert protocol_literals(_tokens(src), node=False) == [(3, "canonical special 0x7FC00000"),
                                                           (4, "the Kulisch LSB shift (KULISCH_LSB_SHIFT)")]
    assert [what for _, what in protocol_literals(_tokens(src), node=True)][2:] == [
        "the Kulisch width 320 (KULISCH_WIDTHS)", "the node's capacity (MAX_CAPACITY)"]
    src = '''from spec.formats import NAN_FP32 as CANONICAL_NAN, FMT_INT8
from spec.frames import CTR_RANGES as RANGES
HDR_BITS = 96
LEAVES, other = 32, 1
for UPLINKS_PER_LEAF in range(3):
    pass
def EFF_PCT():
    pass
hdr[F_COUNT_END:F_COUNT_LSB] = 0
x: int = MAX_CAPACITY; MAX_CAPACITY: int = 1
f(CAPACITY=MAX_CAPACITY, HDR_BITS=1); self.HDR_BITS = 2; BEAT_BITS[0] = 1
'''
    assert redefinitions(_tokens(src)) == [
        (1, "NAN_FP32", "imported as CANONICAL_NAN"), (2, "CTR_RANGES", "imported as RANGES"),
        (3, "HDR_BITS", "defined again"), (4, "LEAVES", "defined again"), (5, "UPLINKS_PER_LEAF", "defined again"),
        (7, "EFF_PCT", "defined again"), (10, "MAX_CAPACITY", "defined again")]
    assert is_node_source("hdl/node/prism_node.py") and is_node_source("cosim/cli/demo.py")
    assert not is_node_source("cosim/package/package_mutants.py") and not is_node_source("cosim/sim/replay.py")
