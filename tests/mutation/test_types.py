"""Widths, constant values and changed bits of expressions (cosim.mutation.verilog.Types), which
the prover's constants and bit-level value flow rest on: values against Icarus on random
expressions, changed bits against the values themselves."""
import random
import shutil
import subprocess

import pytest

from cosim.mutation import verilog as V

NAMES = {"a": (8, False), "b": (4, False), "c": (12, True), "d": (1, False), "e": (6, True), "g": (33, False)}
MODULE = "module m;\n" + "\n".join(f"reg {'signed ' if s else ''}[{w - 1}:0] {n};" for n, (w, s) in NAMES.items()) \
    + "\nendmodule\n"
OPS = ["+", "-", "*", "&", "|", "^", "~^", "<<", ">>", ">>>", "<<<", "<", "<=", "==", "!=", ">", ">=", "&&", "||",
       "/", "%"]


def _types():
    return V.Types(V.parse(MODULE).module(), MODULE)


def _random_expressions(seed, count):
    rng = random.Random(seed)

    def literal(sized=True):
        if sized or rng.random() < 0.8:
            w = rng.choice([1, 3, 4, 8, 16])
            return f"{w}'{'s' if rng.random() < 0.3 else ''}h{rng.getrandbits(w):x}"
        return str(rng.randint(0, 40))

    def gen(depth, sized=False):
        r = rng.random()
        if depth == 0 or r < 0.25:
            return literal(sized) if rng.random() < 0.4 else rng.choice(list(NAMES))
        if r < 0.5:
            return f"({gen(depth - 1, sized)} {rng.choice(OPS)} {gen(depth - 1, sized)})"
        if r < 0.6:
            return f"({rng.choice(['-', '~', '!', '&', '|', '^', '~|'])}{gen(depth - 1, sized)})"
        if r < 0.7:
            return f"({gen(depth - 1, True)} ? {gen(depth - 1, sized)} : {gen(depth - 1, sized)})"
        if r < 0.8:       # concatenation items must be sized: no unsized literal anywhere inside
            return "{" + ", ".join(gen(depth - 1, True) for _ in range(rng.randint(1, 3))) + "}"
        if r < 0.9:
            return f"{rng.choice(['$signed', '$unsigned'])}({gen(depth - 1, sized)})"
        n = rng.choice(list(NAMES))
        w = NAMES[n][0]
        if w > 1 and rng.random() < 0.5:
            hi = rng.randint(0, w - 1)
            return f"{n}[{hi}:{rng.randint(0, hi)}]"
        return f"{n}[{rng.randint(0, w - 1)}]"
    out = []
    while len(out) < count:
        out.append((gen(3), rng.choice([0, 1, 5, 16, 40]), {n: rng.getrandbits(w) for n, (w, _) in NAMES.items()}))
    return out


@pytest.mark.skipif(shutil.which("iverilog") is None, reason="no Icarus")
def test_values_agree_with_icarus(tmp_path):
    cases = _random_expressions(7, 250)
    lines = ["module t;"] + [f"reg {'signed ' if s else ''}[{w - 1}:0] {n};" for n, (w, s) in NAMES.items()]
    lines.append("initial begin")
    for i, (x, w, vals) in enumerate(cases):
        lines += [f"{n} = {NAMES[n][0]}'d{v};" for n, v in vals.items()]
        if w:                         # in the context of a w-bit target
            lines.append(f"begin : b{i} reg [{w - 1}:0] t; t = {x}; $display(\"%0d %0d\", {i}, t); end")
        else:                         # on its own (printed signed when the expression is)
            lines.append(f"$display(\"%0d %0d\", {i}, {x});")
    lines.append("end endmodule")
    (tmp_path / "t.v").write_text("\n".join(lines))
    subprocess.run(["iverilog", "-g2005", "-o", str(tmp_path / "t.vvp"), str(tmp_path / "t.v")], check=True)
    out = subprocess.run(["vvp", "-n", str(tmp_path / "t.vvp")], capture_output=True, text=True).stdout
    icarus = dict(line.split() for line in out.splitlines() if len(line.split()) == 2)
    T = _types()
    compared = 0
    for i, (x, w, vals) in enumerate(cases):
        e = V.parse_expression(x)
        t = T.stype(e)
        v = T.value(e, vals, w)
        if v is None or "x" in icarus.get(str(i), "x"):
            continue                  # a division by zero: no value, for either
        if w:
            v &= (1 << w) - 1
        elif t[1] and v >> (t[0] - 1) & 1:
            v -= 1 << t[0]
        assert str(v) == icarus[str(i)], (x, w, vals)
        compared += 1
    assert compared > 200


def test_changed_bits_cover_every_difference():
    T = _types()
    rng = random.Random(3)
    for x, w, vals in _random_expressions(11, 150):
        e = V.parse_expression(x)
        for _ in range(8):
            masks = {n: (1 << rng.randrange(NAMES[n][0])) if rng.random() < 0.3 else 0 for n in NAMES}
            if rng.random() < 0.5:
                masks = {n: rng.getrandbits(NAMES[n][0]) if rng.random() < 0.3 else 0 for n in NAMES}
            constant = {n: v for n, v in vals.items() if not masks[n]}
            m = T.changed(e, masks, set(), constant, w)
            for _ in range(12):
                other = {n: v ^ (rng.getrandbits(NAMES[n][0]) & masks[n]) for n, v in vals.items()}
                a, b = T.value(e, vals, w), T.value(e, other, w)
                if a is not None and b is not None:
                    assert (a ^ b) & ~m == 0, (x, w, masks)


def test_widths_signs_and_the_bits_a_node_can_change():
    T = _types()
    norm = V.parse_expression("$signed({1'b0, a}) << (23 - $signed({1'b0, b}))")
    assert T.stype(norm) == (9, True)
    assert T.value(norm, {"a": 5, "b": 3}, 24) == 5 << 20
    one = norm.kids[0].kids[0].kids[0]              # the 1'b0 of the first concatenation
    assert T.changed(norm, {}, {id(one)}, {}, 24) == ((1 << 24) - 1) ^ ((1 << 8) - 1)   # sign bits upward
    lanes = V.parse_expression("{8'b0, a, 8'b0, a}")
    assert T.changed(lanes, {}, {id(lanes.kids[2])}, {}) == 0xff00
    assert T.changed(lanes, {"a": 1}, set(), {}) == 0x10001
    assert T.changed(V.parse_expression("a & 8'h80"), {"a": 0x7f}, set(), {}) == 0
    assert T.changed(V.parse_expression("(a >> 4) & 8'h0f"), {"a": 0x0f}, set(), {}) == 0
    assert T.value(V.parse_expression("(0 != 0)"), {}) == 0
    assert T.value(V.parse_expression("a & 0"), {}) == 0           # decided by one operand
    assert T.value(V.parse_expression("d || 1'b1"), {}) == 1
