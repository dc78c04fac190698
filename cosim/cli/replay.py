"""`prism replay SEED`: rerun one regression seed exactly, with its first-mismatch
report, optional waveform and a JSON-lines transaction log."""
import os

from cosim.cli import UsageError, add_int_option
from .regress import BACKENDS, VARIANTS, add_dut_options, load_dut_args


def add_parser(sub):
    p = sub.add_parser("replay", help="rerun one regression seed exactly")
    add_int_option(p, "seed", None, 0, help="the regression seed", metavar="SEED")
    p.add_argument("--backend", default="batch-icarus", choices=BACKENDS)
    p.add_argument("--width", type=int, default=None, choices=(320, 280),
                   help="KULISCH_W (default: the seed's own, as prism regress ran it)")
    p.add_argument("--vcd", help="write a waveform of the run to this file (VCD; FST if it ends in .fst; "
                                 "batch-verilator uses a traced build of its own, compiled on first use)")
    p.add_argument("--log", help="transaction log (JSON lines) path (default: seed<SEED>.jsonl in --out)")
    p.add_argument("--out", default="out/replay", help="folder for the log (default out/replay)")
    p.add_argument("--variant", choices=VARIANTS, help="replay on a deliberately broken node variant")
    add_dut_options(p)


def run(args):
    from cosim.node.node_harness import check, run_node
    from cosim.node.regress import random_scenario, write_transaction_log
    if args.vcd and not os.path.isdir(os.path.dirname(os.path.abspath(args.vcd))):
        raise UsageError(f"--vcd: folder {os.path.dirname(args.vcd)} does not exist")
    dut = load_dut_args(args)
    capacity = dut.capacity if dut is not None else 4096
    sc = random_scenario(args.seed, capacity=capacity)
    waves_before = os.path.getmtime(args.vcd) if args.vcd and os.path.exists(args.vcd) else None
    width = (dut.width if dut is not None else None) or args.width or sc.kulisch_w
    from cosim.sim.batch import builds_on_first_run
    with builds_on_first_run():         # only the build this run uses (the traced one for waves)
        run_ = run_node(sc, args.backend, kulisch_w=width, capacity=capacity, vcd=args.vcd, variant=args.variant,
                        dut=dut)
    report = check(sc, run_, kulisch_w=width, capacity=capacity)
    log = args.log or os.path.join(args.out, f"seed{args.seed}.jsonl")
    write_transaction_log(log, report.scoreboard, run_)
    print(f"seed {args.seed}: {sc.description}")
    on = f" ({dut.label})" if dut is not None else ""
    print(f"{run_.cycles} cycles on {args.backend}{on} (KULISCH_W {width}); transaction log {log}"
          + waves_note(args, waves_before))
    if report.ok:
        print(report.verdict())
        return 0
    print(first_mismatch_report(report))
    return 1


def waves_note(args, mtime_before=None):
    """Name the waveform only if this run wrote it; otherwise say how to get one."""
    if not args.vcd:
        return ""
    if (os.path.exists(args.vcd) and os.path.getsize(args.vcd) > 0
            and (mtime_before is None or os.path.getmtime(args.vcd) != mtime_before)):
        return f"; waves {args.vcd}"
    return (f"; no waveform was written to {args.vcd} by {args.backend}: rerun with --backend batch-icarus "
            f"(or batch-verilator) and --vcd")


def first_mismatch_report(report):
    m = report.first()
    lines = [f"FAIL: {len(report.mismatches)} mismatches", "first mismatch:", f"  {m}"]
    if m.element is not None:
        from golden.node import protocol as P
        lines.append(f"  operation {m.op_id}, element {m.element}, range {m.element // P.RANGE_ELEMS}, "
                     f"lane {m.element % P.RANGE_ELEMS}, left the node at cycle {m.cycle}")
    return "\n".join(lines)
