"""`prism tree --report`: one input reduced through several tree shapes, under both policies.

For each shape the report gives the tree's cycles (co-simulated trees) and, per policy, how
the root's answer compares with one flat reduction of the same contributions (golden.reduce):
KULISCH_FIXED gives one answer whatever the shape and the arrival order; FP32_ARRIVAL gives
one per shape and order, and the report counts them: distinct answers over ORDERS random
arrival orders, elements that differ from the flat FP32_ARRIVAL result, and the largest
difference in units in the last place (ULPs of FP32).
"""
import json
import os
import random

import numpy as np

from cosim.figures import save_figure
from cosim.node.tree import run_tree
from golden.node.tree import check_tree, parse_shape, reduce_tree, shape_from_json
from spec.formats import INF_FP32

SHAPES = ("1", "2", "4", "2x2", "4x2", "2x2x2", "[[[],[]],[],[[[],[]],[]]]")   # the last one unbalanced
ORDERS = 8


def _shape(spec):
    return shape_from_json(json.loads(spec)) if spec.startswith("[") else parse_shape(spec)


def _ordered(bits):
    """FP32 patterns as integers that order like the values (for ULP distances)."""
    b = bits.astype(np.int64)
    return np.where(b & 0x80000000, -(b & 0x7FFFFFFF), b)


def measure(data, in_fmt, width, impl="model", seed=0, shapes=SHAPES):
    """One row per shape: {shape, leaves, depth, cycles, kulisch_same, exact_same, arrival_answers,
    arrival_elements_differ, arrival_max_ulps} (None where the shape does not fit C)."""
    from golden.reduce import reduce
    contributions = data.shape[0]
    flat = {out: reduce("kulisch", in_fmt, out, data, impl="c", width=width) for out in ("fp32", "exact")}
    flat_arrival = reduce("fp32-arrival", in_fmt, "fp32", data, impl="c").bits
    rows = []
    for spec in shapes:
        tree = _shape(spec)
        row = {"shape": spec, "leaves": len(tree.leaves()), "depth": tree.depth()}
        try:
            check_tree(tree, contributions)
        except ValueError as e:
            row["skipped"] = str(e)
            rows.append(row)
            continue
        k_fp32 = run_tree(tree, data, "kulisch", in_fmt, "fp32", width, impl=impl, seed=seed)
        k_exact = run_tree(tree, data, "kulisch", in_fmt, "exact", width, impl=impl, seed=seed + 1)
        row["cycles"] = k_fp32.critical_cycles or None
        row["kulisch_same"] = bool(np.array_equal(k_fp32.bits, flat["fp32"].bits))
        row["exact_same"] = bool(np.array_equal(k_exact.bits, flat["exact"].bits)
                                 and np.array_equal(k_exact.wraps, flat["exact"].wraps))
        answers, differ, ulps = set(), np.zeros(data.shape[1], bool), 0
        for k in range(ORDERS):
            r = random.Random(seed * 100 + k + 1)
            bits, *_ = reduce_tree(tree, data, "fp32-arrival", in_fmt, "fp32",
                                   order=lambda node, items: r.sample(list(items), len(items)))
            answers.add(bits.tobytes())
            differ |= bits != flat_arrival
            finite = ((bits & INF_FP32) != INF_FP32) & ((flat_arrival & INF_FP32) != INF_FP32)
            if finite.any():
                ulps = max(ulps, int(np.max(np.abs(_ordered(bits[finite]) - _ordered(flat_arrival[finite])))))
        row.update(arrival_answers=len(answers), arrival_elements_differ=int(differ.sum()), arrival_max_ulps=ulps)
        rows.append(row)
    return rows


def write_tree_report(folder, data, in_fmt, width, impl="model", seed=0):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(folder, exist_ok=True)
    rows = measure(data, in_fmt, width, impl=impl, seed=seed)
    c, e = data.shape
    lines = [f"# Reduction trees: {c} contributions x {e} elements ({in_fmt}), W = {width}, impl {impl}", "",
             "KULISCH_FIXED sends EXACT partials up the tree and rounds once at the root; FP32_ARRIVAL adds "
             "in arrival order at every node and sends FP32 sums on.  'flat' is one reduction of every "
             f"contribution (`prism reduce`).  FP32_ARRIVAL is taken over {ORDERS} random arrival orders per "
             "shape (the model).", "",
             "| shape | leaves | depth | cycles (longest chain) | KULISCH fp32 = flat | KULISCH exact = flat "
             "| FP32_ARRIVAL answers | elements != flat | max ULPs from flat |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| `{r['shape']}` | {r['leaves']} | {r['depth']} | skipped: {r['skipped']} | | | | | |")
            continue
        lines.append(f"| `{r['shape']}` | {r['leaves']} | {r['depth']} | {r['cycles'] or '-'} | "
                     f"{'yes' if r['kulisch_same'] else 'NO'} | {'yes' if r['exact_same'] else 'NO'} | "
                     f"{r['arrival_answers']} | {r['arrival_elements_differ']} of {e} | {r['arrival_max_ulps']} |")
    done = [r for r in rows if "skipped" not in r]
    lines += ["", f"KULISCH_FIXED: {sum(r['kulisch_same'] and r['exact_same'] for r in done)} of {len(done)} shapes "
                  "give the flat answer bit for bit.  FP32_ARRIVAL: "
                  f"{sum(r['arrival_answers'] for r in done)} distinct answers over {len(done)} shapes.", "",
              "![FP32_ARRIVAL against KULISCH_FIXED](tree_spread.png)", ""]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    labels = [r["shape"] if len(r["shape"]) < 12 else "unbalanced" for r in done]
    ax.bar(labels, [r["arrival_elements_differ"] for r in done], color="tab:orange", label="FP32_ARRIVAL")
    ax.bar(labels, [0 if r["kulisch_same"] else e for r in done], color="tab:blue", label="KULISCH_FIXED")
    ax.set_ylabel(f"elements != flat (of {e})")
    ax.set_title("Answers that move with the tree")
    ax.legend()
    save_figure(fig, os.path.join(folder, "tree_spread.png"))
    path = os.path.join(folder, "tree_report.md")
    with open(path, "w") as fh:
        fh.write("\n".join(lines))
    with open(os.path.join(folder, "tree_report.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    return path
