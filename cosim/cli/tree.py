"""`prism tree`: reduce a C x E array through a tree of PRISM nodes.

The contributors (rows of IN.npy, as `prism reduce` takes them) are dealt round-robin over the
tree's leaves; inner nodes take their children's results as DATA (EXACT partials under
KULISCH_FIXED, FP32 sums under FP32_ARRIVAL); the root sends the result.  --impl model runs the
naive reference (golden/node/tree.py); icarus and verilator co-simulate every node
(cosim/node/tree.py).  Under KULISCH_FIXED the result is, bit for bit, `prism reduce` on the same
IN; under FP32_ARRIVAL it moves with the shape and the arrival order, which --report measures.

Files as `prism reduce` writes them: OUT.npy, and beside it <stem>.flags.npy and (exact)
<stem>.wraps.npy where the result carries them (the model always; a co-simulated tree with
EXACT results), <stem>.formats.npy for AUTO.
"""
import hashlib
import json
import time

from cosim.cli import UsageError, add_int_option
from cosim.cli.reduce import reduction_files, save_array, side_file
from spec.formats import INPUT_FORMAT_CODES, KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY, POLICY_NAMES


def add_parser(subparsers):
    p = subparsers.add_parser(
        "tree", help="reduce a C x E array through a tree of nodes (model or co-simulated)",
        description="Deal the rows of IN.npy over the leaves of a tree of PRISM nodes, merge up to the "
                    "root and save the root's result bits to OUT.npy.")
    shape = p.add_mutually_exclusive_group()
    shape.add_argument("--shape", metavar="SPEC", help="fan-in per level from the root down: 2, 2x2, 4x2, 2x2x2")
    shape.add_argument("--shape-json", metavar="JSON",
                       help="a nested list: a node is the list of its children, a leaf [] (e.g. [[[],[]],[]])")
    p.add_argument("--policy", choices=tuple(POLICY_NAMES.values()))
    p.add_argument("--in-format", choices=tuple(INPUT_FORMAT_CODES))
    p.add_argument("--out-format", choices=("exact", "fp32", "bf16", "fp16", "int8", "auto"))
    p.add_argument("--width", type=int, default=KULISCH_WIDTH_DEFAULT, choices=KULISCH_WIDTH_CHOICES,
                   help=f"Kulisch width of every node (default {KULISCH_WIDTH_DEFAULT})")
    p.add_argument("--impl", default="model", choices=("model", "icarus", "verilator"),
                   help="the naive reference, or every node co-simulated (default: model)")
    p.add_argument("--wired", action="store_true",
                   help="co-simulate the tree as one wired design (nodes, links and frame multiplexers in one "
                        "simulation, hdl/node/prism_tree.py) instead of node by node; KULISCH_FIXED, "
                        "--impl icarus or verilator")
    add_int_option(p, "--seed", 0, 0, help="arrival orders, ports and stalls of the links (model: 0 keeps rows "
                                           "and children in order)")
    p.add_argument("--report", metavar="DIR",
                   help="also write DIR/tree_report.md and a plot: shapes, cycles, and FP32_ARRIVAL's spread "
                        "against KULISCH_FIXED's single answer")
    add_int_option(p, "--regress", None, 1, help="instead: N random trees (shapes, depths, fan-in, formats, "
                                                  "hostile links and nodes) from seed --seed (default 1) on, "
                                                  "co-simulated (--impl), a report in -o DIR")
    add_int_option(p, "--jobs", 1, 1, help="--regress: seeds run in this many processes")
    p.add_argument("input", metavar="IN.npy", nargs="?")
    p.add_argument("-o", "--output", metavar="OUT.npy", help="the result (with --regress: the report's folder)")
    return p


def parse_tree(args):
    from golden.node.tree import parse_shape, shape_from_json
    try:
        if args.shape is not None:
            return parse_shape(args.shape)
        try:
            obj = json.loads(args.shape_json)
        except json.JSONDecodeError as e:
            raise ValueError(f"--shape-json is not JSON: {e.msg} at character {e.pos}") from None
        return shape_from_json(obj)
    except ValueError as e:
        raise UsageError(str(e)) from None


def run(args):
    import numpy as np

    from cosim.node.tree import TreeMismatch, run_tree

    if args.regress:
        return run_regression(args)
    missing = [name for name, value in (("--shape or --shape-json", args.shape or args.shape_json),
                                        ("--policy", args.policy), ("--in-format", args.in_format),
                                        ("--out-format", args.out_format), ("IN.npy", args.input),
                                        ("-o OUT.npy", args.output)) if not value]
    if missing:
        raise UsageError(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} required (or --regress N)")
    out_path, data = reduction_files(args)
    tree = parse_tree(args)
    rows, cols = data.shape
    if not 1 <= cols <= MAX_CAPACITY:
        raise UsageError(f"{args.input}: E = {cols} elements; a node takes 1..{MAX_CAPACITY}")
    if args.wired and args.impl == "model":
        raise UsageError("--wired co-simulates the wired tree: add --impl icarus or --impl verilator")
    if args.wired and args.policy != "kulisch":
        raise UsageError("--wired judges KULISCH_FIXED trees (an FP32_ARRIVAL tree's answer depends on arrival "
                         "orders inside it): run it without --wired")
    t0 = time.perf_counter()
    try:
        if args.wired:
            from cosim.node.tree_top import run_tree_top
            wired = run_tree_top(tree, data, args.policy, args.in_format, args.out_format, args.width, args.impl,
                                 seed=args.seed)
            result = wired.tree
            result.critical_cycles = wired.cycles
        else:
            result = run_tree(tree, data, args.policy, args.in_format, args.out_format, args.width, args.impl,
                              seed=args.seed)
    except TreeMismatch as e:
        print(f"prism tree: FAIL: {e}")
        return 1
    except ValueError as e:
        raise UsageError(str(e).splitlines()[0]) from None
    elapsed = time.perf_counter() - t0

    bits = np.ascontiguousarray(result.bits)
    save_array(out_path, bits)
    side = []
    for tag, arr, dtype in (("flags", result.flags, np.uint8), ("wraps", result.wraps, np.int64),
                            ("formats", result.auto_formats, np.uint8)):
        if arr is None or (tag == "flags" and args.policy != "kulisch") or \
                (tag == "wraps" and args.out_format != "exact"):
            continue
        save_array(side_file(out_path, tag), np.ascontiguousarray(arr, dtype))
        side.append(tag)
    digest = hashlib.sha256(bits.tobytes()).hexdigest()[:16]
    width = f" W={args.width}" if args.policy == "kulisch" else ""
    leaves = len(tree.leaves())
    cycles = (f" {result.critical_cycles} cycles" + (" wired" if args.wired else " on the longest chain")
              if result.critical_cycles else "")
    print(f"tree {json.dumps(tree.describe(), separators=(',', ':'))} ({leaves} leaves, depth {tree.depth()}) "
          f"{args.policy}{width} {args.in_format}->{args.out_format} impl={args.impl} C×E={rows}x{cols} "
          f"{elapsed:.3f}s{cycles} sha256={digest} -> {out_path}" + (f" (+{','.join(side)})" if side else ""))
    # against one flat reduction of the same rows (`prism reduce`): KULISCH_FIXED must give its bits,
    # FP32_ARRIVAL moves with the shape and the order
    from golden.reduce import reduce
    flat = reduce(args.policy, args.in_format, args.out_format, data, impl="c", width=args.width)
    differ = np.any(bits.reshape(cols, -1) != np.asarray(flat.bits).reshape(cols, -1), axis=1)
    print(f"flat reduction (prism reduce): {'the same bits' if not differ.any() else f'{int(differ.sum())} of {cols} elements differ'}")
    if args.policy == "kulisch" and differ.any():
        print("prism tree: FAIL: KULISCH_FIXED through a tree must give the flat bits")
        return 1
    if args.report:
        from cosim.node.tree_report import write_tree_report
        path = write_tree_report(args.report, data, args.in_format, args.width, impl=args.impl, seed=args.seed)
        print(f"report: {path}")
    return 0


def run_regression(args):
    """`prism tree --regress N`: N random trees from seed --seed (default 1) on --impl (icarus or verilator)."""
    import sys
    from collections import Counter
    from concurrent.futures import ProcessPoolExecutor

    from cosim.cli import output_dir
    from cosim.node.tree import TREE_POINTS, run_tree_seed
    from cosim.node.tree_top import WIRED_NOT_APPLICABLE, run_tree_top_seed
    if args.impl == "model":
        raise UsageError("--regress co-simulates its trees: add --impl icarus or --impl verilator")
    run_seed = run_tree_top_seed if args.wired else run_tree_seed
    folder = output_dir(args.output or "out/tree-regress")
    first = args.seed or 1
    seeds = list(range(first, first + args.regress))
    t0 = time.perf_counter()
    results = []
    if args.jobs == 1:
        for s in seeds:
            results.append(run_seed(s, args.impl))
            print(f"\r{len(results)}/{len(seeds)} trees", end="", file=sys.stderr, flush=True)
    else:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for r in pool.map(run_seed, seeds, [args.impl] * len(seeds)):
                results.append(r)
                print(f"\r{len(results)}/{len(seeds)} trees", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    elapsed = time.perf_counter() - t0
    failed = [r for r in results if not r.ok]
    hits = Counter((p, b) for r in results for p, b in r.bins.items())
    apart = WIRED_NOT_APPLICABLE if args.wired else {}
    points = [(p, b) for p, bins in TREE_POINTS.items() for b in bins if (p, b) not in apart]
    total = len(points)
    hit = sum(1 for p, b in points if hits[p, b])
    lines = [f"# {'Wired tree' if args.wired else 'Tree'} regression: seeds {first}..{seeds[-1]} on {args.impl}", "",
             f"{len(seeds) - len(failed)} of {len(seeds)} trees pass ({sum(r.nodes for r in results)} node runs, "
             f"{elapsed:.0f} s); coverage {hit}/{total} bins"
             + (f" ({len(apart)} more do not apply, listed below)" if apart else "") + ".", "",
             "| cover point | bin | trees |", "|---|---|---|"]
    lines += [f"| {p} | {b} | {hits[p, b]} |" for p, b in points]
    if apart:
        lines += ["", "Bins the wired regression cannot reach by design:", ""]
        lines += [f"- {p}: {b} ({why})" for (p, b), why in apart.items()]
    if failed:
        lines += ["", "## Failures", ""] + [f"- {r.description}: {r.error}" for r in failed]
    path = f"{folder}/tree_regress.md"
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"tree regress: {len(seeds) - len(failed)}/{len(seeds)} pass, coverage {hit}/{total} bins, "
          f"{elapsed:.0f} s -> {path}")
    for r in failed[:5]:
        print(f"  FAIL {r.description}: {r.error}")
    return 1 if failed else 0
