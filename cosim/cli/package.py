"""`prism package`: the accelerator-package report.

Computes the resource-graph tables (worked example, die-count scaling,
bottleneck migration, partitioning modes) with golden.package.resource_graph, and
co-simulates the accelerator_package design cycle by cycle (HBM and D2D
arbitrated, barrier included): the same packages, the degraded-die scenario,
the slow-die / starved-die diagnosis, retries, and each assertion's broken
variant.  Writes DIR/package_report.md and DIR/package_report.png.
"""
import os
from fractions import Fraction

from cosim.cli import UsageError, add_int_option, add_output_option, output_dir

BACKENDS = ("icarus-2005", "icarus-2012", "verilator", "icarus", "myhdl")


def add_parser(subparsers):
    p = subparsers.add_parser("package", help="accelerator-package report: resource graph + co-simulated package",
                              description=__doc__)
    add_output_option(p, "package-report")
    p.add_argument("--backend", default="icarus-2005", metavar="{" + ",".join(BACKENDS) + "}",
                   help="simulator for the co-simulated package (default: icarus-2005, batched)")
    add_int_option(p, "--degraded-die", 2, 0, 3, "die that degrades")
    p.add_argument("--degraded-factor", default="1/2", metavar="F",
                   help="its compute rate as a fraction of nominal, 0 < F <= 1 (default 1/2)")
    add_int_option(p, "--window", 64, 2, 1 << 16, "service-rate window in active cycles", metavar="CYC")
    add_int_option(p, "--phase-units", 1200, 16, 100_000,
                   "work units in the degraded-die phase, a multiple of 16 (4-unit jobs on 4 dies)")
    p.add_argument("--partition", default="CPX+NPS4", metavar="COMPUTE+MEMORY",
                   help="partitioning modes to check against the §11 invariant (default CPX+NPS4)")
    p.add_argument("--no-sim", action="store_true", help="model tables only; skip the co-simulation")
    return p


def _parse_fraction(text, name):
    try:
        v = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise UsageError(f"{name} must be a number or fraction like 1/2, got {text!r}") from None
    if not 0 < v <= 1:
        raise UsageError(f"{name}={text} must satisfy 0 < F <= 1")
    return v


def _parse_partition(text):
    from golden.package import resource_graph as rg  # deferred: numpy loads only when the command runs
    parts = text.split("+")
    if len(parts) != 2:
        raise UsageError(f"--partition must look like CPX+NPS4, got {text!r}")
    try:
        return parts[0], parts[1], rg.check_partitioning(parts[0], parts[1], 8)
    except ValueError as e:
        raise UsageError(f"--partition {text}: {e}") from None


def run(args):
    backend = args.backend
    if backend not in BACKENDS:
        raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    die = args.degraded_die
    factor = _parse_fraction(args.degraded_factor, "--degraded-factor")
    window, units = args.window, args.phase_units
    if units % 16:
        raise UsageError(f"--phase-units={units} must be a multiple of 16 (4-unit jobs over 4 dies)")
    # deferred: the simulators and the model load only when the report runs
    from cosim.package.report import NOMINAL, build_report, plot_report, render_markdown
    if (NOMINAL * factor).denominator != 1:
        raise UsageError(f"--degraded-factor {args.degraded_factor}: the die's rate is {NOMINAL}/16 units per "
                         f"cycle, so F * {NOMINAL} must be a whole number")
    partition = _parse_partition(args.partition)
    out = output_dir(args.output)
    report = build_report(backend=None if args.no_sim else backend, degraded_die=die, factor=factor,
                          window=window, units=units, partition=partition)
    md_path = os.path.join(out, "package_report.md")
    png_path = os.path.join(out, "package_report.png")
    plot_report(report, png_path)
    with open(md_path, "w") as fh:
        fh.write(render_markdown(report, os.path.basename(png_path)))
    print(f"wrote {md_path} and {png_path}")
    return 0
