"""`prism replay SEED`: rerun one regression seed exactly, with its first-mismatch
report, optional waveform and a JSON-lines transaction log."""
import os

from cosim.cli import UsageError, add_int_option
from spec.formats import KULISCH_WIDTH_CHOICES
from .regress import BACKENDS, VARIANTS, add_dut_options, load_dut_args


def add_parser(sub):
    p = sub.add_parser("replay", help="rerun one regression seed exactly")
    add_int_option(p, "seed", None, 0, help="the regression seed", metavar="SEED")
    p.add_argument("--backend", default="batch-icarus", choices=BACKENDS)
    p.add_argument("--width", type=int, default=None, choices=KULISCH_WIDTH_CHOICES,
                   help="KULISCH_W (default: the seed's own, as prism regress ran it)")
    p.add_argument("--vcd", help="write a waveform of the run to this file (VCD; FST if it ends in .fst; "
                                 "batch-verilator uses a traced build of its own, compiled on first use)")
    p.add_argument("--log", help="transaction log (JSON lines) path (default: seed<SEED>.jsonl in --out)")
    p.add_argument("--out", default="out/replay", help="folder for the log (default out/replay)")
    p.add_argument("--variant", choices=VARIANTS, help="replay on a deliberately broken node variant")
    add_dut_options(p)


def run(args):
    if args.vcd and not os.path.isdir(os.path.dirname(os.path.abspath(args.vcd))):
        raise UsageError(f"--vcd: folder {os.path.dirname(args.vcd)} does not exist")
    dut = load_dut_args(args)
    # deferred: the simulators load only when a seed runs
    from cosim.node.report import first_mismatch_report, replay, waves_note
    r = replay(args.seed, args.backend, args.width, args.vcd, args.variant, dut, args.log, args.out)
    print(f"seed {args.seed}: {r.scenario.description}")
    on = f" ({dut.label})" if dut is not None else ""
    print(f"{r.run.cycles} cycles on {args.backend}{on} (KULISCH_W {r.width}); transaction log {r.log}"
          + waves_note(args.vcd, args.backend, r.waves_before))
    if r.report.ok:
        print(r.report.verdict())
        return 0
    print(first_mismatch_report(r.report))
    return 1
