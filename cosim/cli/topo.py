"""`prism topo`: ZCube vs rail-optimized fat tree report.

Writes DIR/topo_report.md with
  * counts: GPUs, switches, links, diameter -- closed-form formula, counted
    on the generated graph, and the design document's figure;
  * the 16,384-GPU fabrics (ZCube, ROFT, rail-only, dual-plane HPN-style), the
    document's switch savings (60 %, 33 %) and the testbed's link capacity (25 %);
  * minimal paths per pair (at most two for ZCube(n,2), more for k >= 3);
  * hop histograms (fraction of GPU pairs at 0..5 switches), without and with PXN;
  * ECMP loads: ring and all-to-all routed with the CRC-32 ECMP hash over
    the equal-cost shortest paths, busiest link and collective rate;
and the plots hop_histogram.png, link_load.png and ring_epochs.png.
"""
from __future__ import annotations

from cosim.cli import UsageError, add_int_option, add_output_option, output_dir

ECMP_SIZES = (16, 32, 48, 64)


def add_parser(subparsers):
    p = subparsers.add_parser("topo", help="ZCube vs rail-optimized fat tree: counts, hop histograms, ECMP loads",
                              description=__doc__.split("\n\n")[0])
    add_output_option(p, "topo_out")
    add_int_option(p, "--ecmp-n", 32, 1, 1 << 16,
                   f"ECMP comparison size: ZCube(N,2) vs ROFT of radix N, N*N GPUs; one of "
                   f"{', '.join(map(str, ECMP_SIZES))} (32 = 1,024 GPUs, ~10^6 all-to-all flows)")
    add_int_option(p, "--epochs", 16, 1, 256, "job restarts (fresh QPNs, fresh hashes) sampled for the ring rows",
                   metavar="E")
    p.add_argument("--mode", default="mod", metavar="MODE", help="ECMP member selection: mod or mulhi (default mod)")
    p.add_argument("--quick", action="store_true",
                   help="skip the largest explicit graphs (3-tier radix-128 fat tree; ROFT radix 128 counts and "
                        "the 16,384-GPU ring rows)")


def run(args) -> int:
    n = args.ecmp_n
    if n not in ECMP_SIZES:
        raise UsageError(f"--ecmp-n must be one of {', '.join(map(str, ECMP_SIZES))}, got {n}")
    epochs = args.epochs
    if args.mode not in ("mod", "mulhi"):
        raise UsageError(f"--mode must be mod or mulhi, got {args.mode!r}")
    out = output_dir(args.output)
    from cosim.topology.report import build_report  # deferred: numpy and the graphs load only when it runs
    path = build_report(out, ecmp_n=n, epochs=epochs, mode=args.mode, quick=args.quick)
    print(f"wrote {path}")
    return 0
