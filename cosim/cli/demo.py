"""`prism demo`: a two-port FP32 AllReduce (4,096 elements, 4 contributors)
co-simulated under Icarus, under both accumulation policies, checked bit for
bit against the golden node model; prints the verdict, cycles and line rate,
writes a VCD per policy and a short Markdown report."""
import os
import time

from cosim.cli import add_int_option

POLICIES = ("kulisch", "fp32-arrival")


def add_parser(sub):
    p = sub.add_parser("demo", help="co-simulated FP32 AllReduce with a bit-exact verdict and a report")
    p.add_argument("--backend", default="icarus", choices=("icarus", "myhdl", "batch-icarus", "batch-verilator"),
                   help="simulator (default: icarus, per-cycle co-simulation)")
    add_int_option(p, "--elements", 4096, 16, 4096, "vector length E", metavar="E")
    add_int_option(p, "--contributors", 4, 1, 8, "contributors, spread over both ports")
    p.add_argument("--width", type=int, default=320, choices=(320, 280), help="KULISCH_W")
    add_int_option(p, "--seed", 1, 0)
    p.add_argument("--out", default="out/demo", help="folder for the report and waveforms (default out/demo)")
    p.add_argument("--no-vcd", action="store_true", help="do not write waveforms")


def run(args):
    from golden.node import protocol as P
    from cosim.node.metrics import line_rate
    from cosim.node.node_harness import check, run_node
    from cosim.node.scenarios import collective, demo_operation

    os.makedirs(args.out, exist_ok=True)
    rows, ok = [], True
    for policy in POLICIES:
        op = demo_operation(policy, elements=args.elements, contributors=args.contributors, seed=args.seed)
        sc = collective(op, seed=args.seed)
        vcd = None if args.no_vcd else os.path.join(args.out, f"{policy}.vcd")
        t0 = time.perf_counter()
        result = run_node(sc, args.backend, kulisch_w=args.width, vcd=vcd)
        wall = time.perf_counter() - t0
        report = check(sc, result, kulisch_w=args.width)
        lr = line_rate(result)
        ok &= report.ok
        rows.append((policy, report, result, lr, wall, vcd))
        bpc = " ".join(f"port{p} {lr.beats_per_cycle(p):.3f}" for p in (0, 1))
        print(f"{policy:13s} {report.verdict()}")
        print(f"{'':13s} {result.cycles} cycles ({args.backend}, {wall:.1f} s); DATA beats/cycle {bpc} "
              f"(line rate 1.000); last DATA -> last RESULT {lr.drain_cycles} cycles"
              + (f"; waves {vcd}" if vcd else ""))
    path = os.path.join(args.out, "report.md")
    with open(path, "w") as fh:
        fh.write(_report(args, rows))
    print(f"verdict: {'PASS' if ok else 'FAIL'}; report {path}")
    return 0 if ok else 1


def _report(args, rows):
    from golden.node import protocol as P
    L = ["# PRISM node demo", "",
         f"Two-port FP32 AllReduce: E = {args.elements}, {args.contributors} contributors (contributor c on port c mod 2), "
         f"KULISCH_W = {args.width}, back end `{args.backend}`, seed {args.seed}.", "",
         "| policy | verdict | elements checked | cycles | DATA beats/cycle port 0 | port 1 | last DATA → last RESULT (cycles) | wall (s) |",
         "|---|---|---|---|---|---|---|---|"]
    for policy, rep, res, lr, wall, vcd in rows:
        L.append(f"| {policy} | {'PASS' if rep.ok else 'FAIL'} | {rep.elements_checked} | {res.cycles} | "
                 f"{lr.beats_per_cycle(0):.3f} | {lr.beats_per_cycle(1):.3f} | {lr.drain_cycles} | {wall:.1f} |")
    L.append("")
    for policy, rep, res, lr, wall, vcd in rows:
        L.append(f"## {policy}")
        L.append("")
        L.append(f"- {rep.verdict()}")
        if vcd:
            L.append(f"- waveform: `{os.path.basename(vcd)}`")
        counters = ", ".join(f"{name}{'' if port is None else f'[{port}]'} = {v}"
                             for (port, name), v in sorted(res.counters.items(), key=lambda kv: str(kv[0])) if v)
        L.append(f"- counters: {counters}")
        for m in rep.mismatches[:10]:
            L.append(f"- mismatch: {m}")
        L.append("")
    return "\n".join(L) + "\n"
