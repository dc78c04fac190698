"""`prism formal [TARGET ...]`: formal proofs with SymbiYosys on the converted Verilog.

Each target's property harness is converted by the project's tool chain, proved by
k-induction (sby jobs in `--out`, default build/formal), and reported one line per
property: proved (with k), bounded (BMC depth, and why induction did not close) or failed
(with the counterexample's VCD and a stimulus file that `prism formal --replay FILE`
runs on Icarus and on MyHDL), and whether a run reaches the property's trigger (its cover,
with the step).  A target fails when a property fails or a trigger is unreached (the proof
could be vacuous).  `--fault F` proves a broken variant instead: its properties must fail
and the triggers it names must be unreachable.
"""
import os

from cosim.cli import UsageError, add_int_option


def add_parser(sub):
    p = sub.add_parser("formal", help="formal proofs (SymbiYosys, k-induction) of the blocks' properties",
                       description="Prove the targets' properties on the converted Verilog; one verdict per "
                                   "property (proved / bounded / failed), counterexamples replayable.")
    p.add_argument("targets", nargs="*", metavar="TARGET", help="targets to prove (default: all; see --list)")
    p.add_argument("--list", action="store_true", help="list the targets, their properties and broken variants")
    add_int_option(p, "--depth", None, 1, 200, "induction / BMC depth (default: each target's own)")
    p.add_argument("--out", help="folder for the sby jobs, traces and stimulus files (default build/formal)")
    p.add_argument("--fault", metavar="VARIANT",
                   help="prove a broken variant of the (single) target instead: its properties must fail")
    p.add_argument("--property", action="append", default=[], metavar="ID",
                   help="prove only this property (repeatable)")
    p.add_argument("--replay", metavar="FILE",
                   help="replay a counterexample's stimulus file on Icarus and MyHDL, and exit")
    p.add_argument("--no-cover", action="store_true",
                   help="skip the cover jobs (the proofs alone; a vacuous proof is not detected)")
    p.add_argument("--no-myhdl", action="store_true", help="with --replay: Icarus only")
    p.add_argument("--vcd", help="with --replay: write the Icarus replay's waveform here")


def _list():
    from cosim.formal.targets import TARGET_NAMES, get_target
    for name in TARGET_NAMES:
        t = get_target(name)
        groups = {pid for g in t.groups for pid in g.props}
        print(f"{name}: {t.summary}")
        print(f"  parameters: {t.parameters_text}; depth {t.depth}")
        for p in t.all_props():
            kind = "lemma" if p.inside else "property"
            env = " (own environment)" if p.id in groups else ""
            print(f"  {kind} {p.id}: {p.statement}{env}")
            if p.cover:
                print(f"    trigger (covered): {p.cover}")
        if t.faults:
            print(f"  broken variants (--fault): {', '.join(t.faults)}")
            for name, f in t.faults.items():
                how = "mutation of the converted Verilog" if f.edits else "parameters"
                must = [f"fails {', '.join(f.props)}"] if f.props else []
                if f.unreached:
                    must.append(f"leaves unreachable the triggers of {', '.join(f.unreached)}")
                print(f"    {name} ({how}): {f.what}; {' and '.join(must)}")
    return 0


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


def _replay(args):
    from cosim.formal.replay import StimulusError, replay
    try:
        res = replay(args.replay, myhdl=not args.no_myhdl, vcd=args.vcd)
    except StimulusError as e:
        raise UsageError(str(e))
    print(res.line())
    return 0 if res.reproduced else 1


def run(args):
    if args.list:
        return _list()
    if args.replay:
        if args.targets:
            raise UsageError("--replay takes no TARGET (the stimulus file names it)")
        return _replay(args)
    from cosim.formal.mutate import MutationError
    from cosim.formal.sby import FormalToolError
    from cosim.formal.targets import ALIASES, TARGET_NAMES, get_target
    from cosim.formal.runner import UNREACHED, run_target
    names = args.targets or list(TARGET_NAMES)
    for n in names:
        if ALIASES.get(n, n) not in TARGET_NAMES:
            raise UsageError(f"unknown target {n!r}; choose from {', '.join(TARGET_NAMES)} (see --list)")
    if args.fault:
        if len(names) != 1:
            raise UsageError("--fault needs exactly one TARGET")
        t = get_target(names[0])
        if args.fault not in t.faults:
            raise UsageError(f"{t.name} has no broken variant {args.fault!r}; choose from "
                             f"{', '.join(t.faults) or 'none'}")
    if args.property:
        if len(names) != 1:
            raise UsageError("--property needs exactly one TARGET")
        known = {p.id for p in get_target(names[0]).all_props()}
        bad = [p for p in args.property if p not in known]
        if bad:
            raise UsageError(f"{names[0]} has no property {bad[0]!r} (see --list)")
    out = args.out
    if out:
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as e:
            raise UsageError(f"--out {out}: {e.strerror or e}")
    verdicts = []
    for n in names:
        print(f"prism formal: {ALIASES.get(n, n)}" + (f" (broken variant {args.fault})" if args.fault else ""),
              flush=True)
        try:
            verdicts += run_target(n, depth=args.depth, out=out, fault=args.fault, only=args.property or None,
                                   log=lambda m: print(m, flush=True), covers=not args.no_cover)
        except (FormalToolError, MutationError) as e:
            raise UsageError(str(e).splitlines()[0])
    print()
    print(table(verdicts))
    print()
    for v in verdicts:
        if v.verdict != "proved" or v.cover == UNREACHED:
            print(v.line())
    if args.fault:
        bad = [v for v in verdicts if not v.caught]
        if bad:
            print(f"prism formal: the broken variant {args.fault} was NOT caught: "
                  + ", ".join(f"{v.prop} {'holds' if v.verdict != 'failed' else 'failed'}"
                              f"{'' if v.cover != UNREACHED else ', trigger unreached'}" for v in bad))
        return 1 if bad else 0
    bad = [v for v in verdicts if v.verdict in ("failed", "error")]
    vacuous = [v for v in verdicts if v.cover == UNREACHED]
    for v in vacuous:
        print(f"prism formal: FAIL {v.target} {v.prop}: its trigger is never reached within {v.cover_depth} "
              "steps, so its proof may be vacuous")
    return 1 if bad or vacuous else 0
