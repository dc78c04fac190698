"""`prism regress --seeds N [--jobs J] [--scheduler ADDRESS]`: hostile random node
regressions, seeds in parallel (a local process pool, or a Dask distributed
cluster), a progress bar, a summary table, functional coverage merged over every
seed (percentage and holes; Markdown + JSON report in --out), and a replay command
per failing seed."""
import os
import sys
import time

from cosim.cli import UsageError, add_int_option
from cosim.sim.vpi import ToolchainError, require_tool
from spec.formats import KULISCH_WIDTH_CHOICES
from spec.frames import MAX_CAPACITY

BACKENDS = ("batch-icarus", "batch-verilator", "icarus", "myhdl")
# the default regression: about five minutes of batched Icarus on 2 cores (docs/verification.md)
DEFAULT_SEEDS = 200
VARIANTS = ("prism_node_fault",)


def add_parser(sub):
    p = sub.add_parser("regress", help="random node regressions over many seeds")
    add_int_option(p, "--seeds", DEFAULT_SEEDS, 1, help="number of seeds")
    add_int_option(p, "--first-seed", 1, 0, help="first seed")
    add_int_option(p, "--jobs", os.cpu_count() or 1, 1, help="parallel workers (default: all cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask distributed scheduler address (e.g. tcp://host:8786)")
    p.add_argument("--backend", default="batch-icarus", choices=BACKENDS, help="simulator (default batch-icarus)")
    p.add_argument("--width", type=int, default=None, choices=KULISCH_WIDTH_CHOICES,
                   help="KULISCH_W for every seed (default: each seed draws 320 or 280)")
    p.add_argument("--out", default="out/regress", help="folder for the report and coverage (default out/regress)")
    p.add_argument("--log-dir", help="write a JSON-lines transaction log per seed here")
    p.add_argument("--variant", choices=VARIANTS, help="run a deliberately broken node variant (to try the debugging path)")
    add_dut_options(p)
    p.add_argument("--code-coverage", action="store_true",
                   help="Verilator line, branch and toggle coverage of the node per block, merged over the seeds "
                        "(batch-verilator only; its own build): OUT/code-coverage.md and .json")


def add_dut_options(p):
    """--dut / --top / --capacity: the regression on a Verilog design instead of the kit's node."""
    p.add_argument("--dut", action="append", metavar="FILE.v",
                   help="run on this Verilog instead of the kit's node (repeat for a design in several files): any "
                        "module with the ports `prism export node` writes (docs/verification.md, \"Your own RTL\"); "
                        "batched back ends only")
    p.add_argument("--top", metavar="NAME", help="with --dut: the top module (default: the one module no other "
                                                 "instantiates)")
    add_int_option(p, "--capacity", None, 1, help="with --dut: the design's CAPACITY (default: its parameter's "
                                                 f"default, else {MAX_CAPACITY})")


def load_dut_args(args):
    """The NodeDut named by --dut/--top/--width/--capacity, its width found if it is fixed (None
    without --dut); a bad file or design is a one-line UsageError."""
    if not getattr(args, "dut", None):
        if getattr(args, "top", None) or getattr(args, "capacity", None):
            raise UsageError("--top and --capacity describe a --dut design: give --dut FILE.v")
        return None
    # deferred: only --dut needs the simulators
    from cosim.node.dut import DutError, load_dut
    from cosim.node.dut_probe import resolve_width
    if not args.backend.startswith("batch-"):
        raise UsageError(f"--dut runs on batch-icarus or batch-verilator, not {args.backend}")
    if getattr(args, "variant", None):
        raise UsageError("--variant chooses a variant of the kit's node; with --dut the design is yours")
    try:
        dut = load_dut(args.dut, args.top, args.width, args.capacity)
        return resolve_width(dut, args.backend)
    except DutError as e:
        raise UsageError(str(e)) from e


def run(args):
    dut = load_dut_args(args)
    if dut is not None:
        print(f"design under test: {dut.label}, KULISCH_W "
              f"{dut.width or 'per seed (a parameter)'}, CAPACITY {dut.capacity}", file=sys.stderr)
    code_coverage = getattr(args, "code_coverage", False)
    if code_coverage:
        if args.backend != "batch-verilator":
            raise UsageError(f"--code-coverage measures Verilator's coverage build: use --backend batch-verilator, "
                             f"not {args.backend}")
        try:
            require_tool("verilator_coverage")
        except ToolchainError as e:
            raise UsageError(str(e)) from e
    # deferred: the simulators load only when a regression runs
    from cosim.node.report import code_coverage_report, summary, write_report
    from cosim.node.seeds import SchedulerError, coverage_folder, run_seeds
    coverage_dir = coverage_folder(args.out) if code_coverage else None      # this regression's runs only
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    t0 = time.perf_counter()
    try:
        results = run_seeds(seeds, args.backend, args.width, args.jobs, args.scheduler, args.log_dir,
                            variant=args.variant, code_coverage=coverage_dir, dut=dut)
    except SchedulerError as e:
        raise UsageError(str(e)) from e
    wall = time.perf_counter() - t0
    text = summary(results, wall, args.backend, args.out, replay_options(args))
    print(text)
    write_report(results, text, args.out)
    if coverage_dir:
        print(code_coverage_report(coverage_dir, args.out, len(seeds)))
    return 0 if all(r.ok for r in results) else 1


def replay_options(args):
    """The options of this regression that a failing seed's `prism replay` command repeats."""
    variant = f" --variant {args.variant}" if getattr(args, "variant", None) else ""
    dut = "".join(f" --dut {f}" for f in (getattr(args, "dut", None) or ()))
    dut += f" --top {args.top}" if dut and getattr(args, "top", None) else ""
    dut += f" --capacity {args.capacity}" if dut and getattr(args, "capacity", None) else ""
    return variant + dut
