"""`prism fabric`: the collective-fabric chapter (seed 000), computed and
co-simulated, as a Markdown report with plots.

    prism fabric [-o DIR] [--flows N] [--impl auto|c|numba] [--trials N] [--seed N]
                 [--rtl-sim icarus|verilator] [--properties]

writes DIR/fabric_report.md, DIR/efficiency_vs_flows.png,
DIR/max_load_distribution.png and DIR/striping.png.  Every figure is shown
with the seed's value, ours, and what produced ours: the golden models
(golden/), our RTL blocks (hdl/, co-simulated in a batched simulator in this
run), or -- in its own column -- the seed's SystemVerilog as written.
"""
from __future__ import annotations

import os

from cosim.cli import UsageError, add_int_option, add_output_option, output_dir
from cosim.sim.vpi import ToolchainError

DEFAULT_DIR = "fabric-report"


def add_parser(subparsers):
    p = subparsers.add_parser(
        "fabric", help="ECMP / collective arithmetic report (seed figures vs computed)",
        description="Compute the collective-fabric chapter's figures (exact balls-in-bins, ring and "
                    "all-to-all times, remedies, stall accounting, a real-hash Monte Carlo) and write "
                    "a Markdown report with PNG plots.")
    add_output_option(p, DEFAULT_DIR)
    add_int_option(p, "--flows", 1_000_000, 1024, 100_000_000, "flows per real-hash Monte Carlo run")
    p.add_argument("--impl", default="auto", metavar="IMPL",
                   help="hash implementation for the Monte Carlo: auto (C if built, else numba), c, numba")
    add_int_option(p, "--trials", 20_000, 100, 10_000_000, "uniform-assignment trials for the striping Monte Carlo")
    add_int_option(p, "--seed", 1, 0, 2**63 - 1, "random seed of the uniform Monte Carlo")
    p.add_argument("--rtl-sim", default="icarus", metavar="SIM",
                   help="batched simulator for the RTL figures: icarus (default) or verilator")
    p.add_argument("--properties", action="store_true",
                   help="also run the 34 broken variants (MyHDL and batched Icarus, about a minute) and report "
                        "each property's first failing cycle")
    return p


def _bin_fn(impl):
    if impl not in ("auto", "c", "numba"):
        raise UsageError(f"--impl must be auto, c or numba, got {impl!r}")
    if impl in ("auto", "c"):
        try:  # deferred, and optional: the C kernel is built by pip install
            from golden.fabric import ecmp_c as c_ecmp
            return "C", c_ecmp.bin_flows
        except ImportError:
            if impl == "c":
                raise UsageError("the C ECMP kernel is not built (pip install -e .)") from None
    from golden.fabric import ecmp_numba  # deferred: numba takes a while to import
    return "numba", ecmp_numba.bin_flows


def run(args) -> int:
    flows, trials, seed = args.flows, args.trials, args.seed
    impl_name, bin_fn = _bin_fn(args.impl)
    rtl_sim = getattr(args, "rtl_sim", "icarus")
    if rtl_sim not in ("icarus", "verilator"):
        raise UsageError(f"--rtl-sim must be icarus or verilator, got {rtl_sim!r}")
    out = output_dir(args.output)
    from cosim.fabric.report import build_report  # deferred: numpy and the simulators load only when it runs
    try:
        report = build_report(out, flows=flows, trials=trials, seed=seed, impl_name=impl_name, bin_fn=bin_fn,
                              rtl_sim=rtl_sim, properties=bool(getattr(args, "properties", False)))
    except ToolchainError as e:
        raise UsageError(f"the RTL figures need a simulator: {str(e).splitlines()[0]}") from None
    path = os.path.join(out, "fabric_report.md")
    with open(path, "w") as f:
        f.write(report)
    print(f"wrote {path}")
    return 0
