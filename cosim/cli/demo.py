"""`prism demo`: a two-port FP32 AllReduce (4,096 elements, 4 contributors)
co-simulated under Icarus, under both accumulation policies, checked bit for
bit against the golden node model; prints the verdict, cycles and line rate,
writes a VCD per policy and a short Markdown report."""
from cosim.cli import add_int_option
from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY


def add_parser(sub):
    p = sub.add_parser("demo", help="co-simulated FP32 AllReduce with a bit-exact verdict and a report")
    p.add_argument("--backend", default="icarus", choices=("icarus", "myhdl", "batch-icarus", "batch-verilator"),
                   help="simulator (default: icarus, per-cycle co-simulation)")
    add_int_option(p, "--elements", MAX_CAPACITY, 16, MAX_CAPACITY, "vector length E", metavar="E")
    add_int_option(p, "--contributors", 4, 1, 8, "contributors, spread over both ports")
    p.add_argument("--width", type=int, default=KULISCH_WIDTH_DEFAULT, choices=KULISCH_WIDTH_CHOICES, help="KULISCH_W")
    add_int_option(p, "--seed", 1, 0)
    p.add_argument("--out", default="out/demo", help="folder for the report and waveforms (default out/demo)")
    p.add_argument("--no-vcd", action="store_true", help="do not write waveforms")


def run(args):
    from cosim.node.report import demo  # deferred: the simulators load only when the demo runs
    ok, path = demo(args.out, args.backend, args.elements, args.contributors, args.width, args.seed,
                    vcd=not args.no_vcd)
    print(f"verdict: {'PASS' if ok else 'FAIL'}; report {path}")
    return 0 if ok else 1
