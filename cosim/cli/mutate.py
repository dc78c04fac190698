"""`prism mutate [DESIGN]`: mutation testing of the regression.  Mutants of the design's Verilog
(operator swaps, constants off by one, inverted conditions, registers stuck at their old value),
spread over its blocks, each run through the design's hostile regression until a seed fails;
kill rates per block and per kind of mutation, what caught each mutant, every survivor with its
Verilog and MyHDL source lines, equivalent mutants proved so and listed apart; Markdown and JSON
in --out (docs/verification.md, "Mutation testing")."""
import os
import sys

from cosim.cli import UsageError, add_int_option, output_dir
from cosim.cli.regress import DEFAULT_SEEDS, add_dut_options, load_dut_args
from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT

DESIGNS = ("node", "fabric", "package")
BACKENDS = ("batch-verilator", "batch-icarus")
OTHER_DESIGN_SEEDS = 16      # fabric and package: their scenario, one configuration, 16 random seeds
DEFAULT_BACKEND = {"node": "batch-verilator", "fabric": "batch-icarus", "package": "batch-icarus"}


def add_parser(sub):
    p = sub.add_parser("mutate", help="mutation testing: how many injected bugs the regression catches",
                       description=__doc__)
    p.add_argument("design", nargs="?", default="node", choices=DESIGNS,
                   help="the design to mutate (default node): the node judged by the hostile regression, the "
                        "fabric by its 34 conformance properties, the package by its six assertions")
    add_int_option(p, "--mutants", 200, 1, 65535, help="mutants to draw, spread over the blocks")
    add_int_option(p, "--seeds", None, 1, help=f"regression seeds each surviving mutant runs (default: the node "
                                                 f"{DEFAULT_SEEDS}, prism regress's default; the fabric and the "
                                                 f"package {OTHER_DESIGN_SEEDS})")
    add_int_option(p, "--first-seed", 1, 0, help="first regression seed")
    add_int_option(p, "--mutant-seed", 1, 0, help="seed of the choice of mutants")
    p.add_argument("--backend", default=None, choices=BACKENDS,
                   help="simulator: one build serves every mutant (default batch-verilator for the node, "
                        "batch-icarus for the fabric and the package; the package runs on Icarus only)")
    add_int_option(p, "--jobs", os.cpu_count() or 1, 1, help="parallel workers (default: all cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask distributed scheduler address")
    add_int_option(p, "--timeout", 120, 1, help="seconds one simulator run may take before it counts as a hang")
    add_int_option(p, "--mutant-timeout", 900, 1, help="seconds one mutant may take over all its seeds")
    add_int_option(p, "--equivalence-timeout", 90, 1, help="seconds to prove one survivor equivalent")
    p.add_argument("--no-equivalence", action="store_true", help="do not try to prove survivors equivalent")
    p.add_argument("--width", type=int, default=None, choices=KULISCH_WIDTH_CHOICES,
                   help="node: KULISCH_W of the build to mutate (default 320); with --dut the design's own")
    add_dut_options(p)
    p.add_argument("--list", action="store_true", help="list the mutation sites per block and kind, and stop")
    p.add_argument("--out", default="out/mutate", help="folder for mutation.md and mutation.json (default out/mutate)")


def _target(args):
    # deferred here and below: a design's mutation target loads its simulators only when it runs
    from cosim.node.mutants import node_target
    backend = args.backend or DEFAULT_BACKEND[args.design]
    if args.design != "node":
        given = [o for o, v in (("--dut", args.dut), ("--top", args.top), ("--capacity", args.capacity),
                                ("--width", args.width)) if v]
        if given:
            raise UsageError(f"{given[0]} applies to the node only, not to the {args.design}")
        if args.design == "fabric":
            from cosim.fabric.fabric_mutants import fabric_target
            return fabric_target(backend)
        if backend != "batch-icarus":
            raise UsageError("the package runs on batch-icarus only (each seed's test bench is compiled with it)")
        from cosim.package.package_mutants import package_target
        return package_target()
    args.backend = backend
    if args.dut:
        dut = load_dut_args(args)
        return node_target(backend=args.backend, dut=dut)
    if args.top or args.capacity:
        raise UsageError("--top and --capacity describe a --dut design: give --dut FILE.v")
    return node_target(args.width or KULISCH_WIDTH_DEFAULT, args.backend)


def run(args):
    # deferred: the campaign's simulators and solvers load only when it runs
    from cosim.mutation.campaign import CampaignError, phase_blocks, run_campaign, summary_rows, write
    from cosim.mutation.sites import count_by_block, find_sites
    target = _target(args)
    if args.list:
        with open(target.verilog_path) as fh:
            sites = phase_blocks(target.verilog_path, target.module,
                                 find_sites(fh.read(), target.module, target.design_map))
        print(f"{len(sites)} mutation sites in {target.label}")
        for block, kinds in count_by_block(sites).items():
            print(f"  {block}: {sum(kinds.values())} ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})")
        return 0
    folder = output_dir(args.out)
    if args.seeds is None:
        args.seeds = DEFAULT_SEEDS if args.design == "node" else OTHER_DESIGN_SEEDS
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))

    def say(text):
        print(text, file=sys.stderr, flush=True)
    try:
        camp = run_campaign(target, mutants=args.mutants, seeds=seeds, seed=args.mutant_seed, jobs=args.jobs,
                            scheduler=args.scheduler, timeout=args.timeout, mutant_timeout=args.mutant_timeout,
                            equivalence_timeout=args.equivalence_timeout, equivalence=not args.no_equivalence,
                            build_folder=os.path.join("build", "mutation", target.name + f"-s{args.mutant_seed}"),
                            progress=say)
    except CampaignError as e:
        raise UsageError(str(e)) from e
    command = "prism mutate " + " ".join(sys.argv[2:]) if sys.argv[1:2] == ["mutate"] else ""
    md = write(camp, folder, command)
    counted = camp.counted()
    killed, total = camp.rate(counted)
    print(f"{target.label}: {killed} of {total} non-equivalent mutants killed "
          f"({100.0 * killed / total if total else 0:.1f} %), "
          f"{sum(1 for m in camp.mutants if m.status == 'equivalent')} proved equivalent, "
          f"{sum(1 for m in camp.mutants if m.status in ('survived', 'timed out'))} survived; "
          f"{camp.wall:.0f} s; report {md}")
    for name, n, eq, k, of, pct in summary_rows(camp, lambda m: m.mutation.block):
        print(f"  {name}: {k}/{of} ({pct})" + (f", {eq} equivalent" if eq else ""))
    return 0
