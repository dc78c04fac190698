"""What `prism formal` prints (cosim/cli/formal.py): the targets and their properties
(`--list`), the verdict table of a run, and the lines and exit status under it."""
from cosim.formal.runner import UNREACHED
from cosim.formal.targets import TARGET_NAMES, get_target


def targets_text():
    """`prism formal --list`: every target, its parameters and depth, its properties (and lemmas)
    with their triggers, and its broken variants with what each must fail."""
    L = []
    for name in TARGET_NAMES:
        t = get_target(name)
        groups = {pid for g in t.groups for pid in g.props}
        L.append(f"{name}: {t.summary}")
        L.append(f"  parameters: {t.parameters_text}; depth {t.depth}")
        for p in t.all_props():
            kind = "lemma" if p.inside else "property"
            env = " (own environment)" if p.id in groups else ""
            L.append(f"  {kind} {p.id}: {p.statement}{env}")
            if p.cover:
                L.append(f"    trigger (covered): {p.cover}")
        if t.faults:
            L.append(f"  broken variants (--fault): {', '.join(t.faults)}")
            for name, f in t.faults.items():
                how = ("mutation of the converted Verilog" if f.edits else
                       f"the design's test fault, {f.design_fault.block}" if f.design_fault else "parameters")
                must = [f"fails {', '.join(f.props)}"] if f.props else []
                if f.unreached:
                    must.append(f"leaves unreachable the triggers of {', '.join(f.unreached)}")
                L.append(f"    {name} ({how}): {f.what}; {' and '.join(must)}")
    return "\n".join(L)


def table(verdicts):
    """The verdict table: target, property, verdict, k/depth, cover (the trigger's step), seconds;
    for a broken variant also whether it was caught."""
    variant = any(v.fault for v in verdicts)
    head = ("target", "property", "verdict", "k / depth", "cover") + (("caught",) if variant else ()) + ("seconds",)
    rows = [head]
    for v in verdicts:
        kd = f"k={v.k}" if v.verdict == "proved" else (
            f"depth {v.depth}" if v.verdict == "bounded" else
            f"cycle {v.depth - 2}" if v.verdict == "failed" and v.depth is not None else "-")
        tgt = v.target + (f"[{v.fault}]" if v.fault else "")
        row = (tgt, v.prop, v.verdict, kd, v.cover_text)
        if variant:
            row += ("yes" if v.caught else "NO",)
        rows.append(row + (f"{v.seconds:.1f}",))
    n = len(head)
    widths = [max(len(r[i]) for r in rows) for i in range(n)]
    lines = []
    for j, r in enumerate(rows):
        lines.append("  ".join(c.ljust(widths[i]) if i < n - 1 else c.rjust(widths[i]) for i, c in enumerate(r)))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def summary(verdicts, fault=None):
    """The lines printed under the table -- each verdict that is not a plain proof, a broken variant
    that was not caught, a trigger never reached -- and the exit status (0: all proved and reached;
    for a broken variant, caught)."""
    L = []
    for v in verdicts:
        if v.verdict != "proved" or v.cover == UNREACHED:
            L.append(v.line())
    if fault:
        bad = [v for v in verdicts if not v.caught]
        if bad:
            L.append(f"prism formal: the broken variant {fault} was NOT caught: "
                     + ", ".join(f"{v.prop} {'holds' if v.verdict != 'failed' else 'failed'}"
                                 f"{'' if v.cover != UNREACHED else ', trigger unreached'}" for v in bad))
        return L, 1 if bad else 0
    bad = [v for v in verdicts if v.verdict in ("failed", "error")]
    vacuous = [v for v in verdicts if v.cover == UNREACHED]
    for v in vacuous:
        L.append(f"prism formal: FAIL {v.target} {v.prop}: its trigger is never reached within {v.cover_depth} "
                 "steps, so its proof may be vacuous")
    return L, 1 if bad or vacuous else 0
