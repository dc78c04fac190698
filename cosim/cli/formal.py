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


def _replay(args):
    from cosim.formal.replay import StimulusError, replay  # deferred: loads the targets (see run)
    try:
        res = replay(args.replay, myhdl=not args.no_myhdl, vcd=args.vcd)
    except StimulusError as e:
        raise UsageError(str(e))
    print(res.line())
    return 0 if res.reproduced else 1


def run(args):
    # deferred: the targets, their harnesses and the runner load only when the command runs
    from cosim.formal.report import summary, table, targets_text
    from cosim.formal.runner import run_target
    from cosim.formal.sby import FormalToolError
    from cosim.formal.targets import ALIASES, TARGET_NAMES, get_target
    from cosim.sim.faults import FaultAnchorError
    if args.list:
        print(targets_text())
        return 0
    if args.replay:
        if args.targets:
            raise UsageError("--replay takes no TARGET (the stimulus file names it)")
        return _replay(args)
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
        except (FormalToolError, FaultAnchorError) as e:
            raise UsageError(str(e).splitlines()[0])
    print()
    print(table(verdicts))
    print()
    lines, status = summary(verdicts, args.fault)
    for line in lines:
        print(line)
    return status
