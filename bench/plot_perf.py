"""docs/perf.md, docs/perf.png and README's performance table from ONE
pytest-benchmark run of the golden and ECMP suites.

    .venv/bin/python -m pytest bench/arith/test_bench_golden.py bench/fabric/test_bench_ecmp.py \\
        --benchmark-only --benchmark-json=perf.json
    python bench/peak_memory.py --json memory.json
    python bench/plot_perf.py perf.json --memory memory.json \\
        --md docs/perf.md --png docs/perf.png --readme README.md

Every figure is the minimum time per term (or flow) of one run; ratios are
taken inside that run.  Goals are checked from the same numbers.  Sections of
an existing docs/perf.md that the report does not write (the test suite's
turnaround) are kept in their place.
"""
import argparse
import json
import re
from collections import defaultdict

BASELINE = {"sum": "numpy float32 sum", "hash": "c", "bin": "c", "fp32-arrival": "c"}
GROUP_TITLES = {
    "sum-allreduce-fp32": "Exact sum, 64 x 16,384 FP32 reduced over rows (all-reduce shape)",
    "sum-sequence-fp32": "Exact sum, one sequence of 10^6 FP32 (10^6 x 1)",
    "sum-allreduce-fp16": "Exact sum, 64 x 16,384 FP16",
    "sum-allreduce-bf16": "Exact sum, 64 x 16,384 BF16",
    "sum-allreduce-int8": "Exact sum, 64 x 16,384 INT8",
    "reference": "Pure-Python reference (Python ints), 10^4 FP32",
    "fp32-arrival": "FP32_ARRIVAL fold, 64 rows",
    "hash-crc32": "CRC-32 of 10^6 flows (13-byte tuples)",
    "hash-crc16": "CRC-16/CCITT-FALSE of 10^6 flows",
    "hash-toeplitz": "Toeplitz (Microsoft RSS key) of 10^6 flows",
    "bin-crc32": "ECMP: hash + bin 10^6 flows, CRC-32, 32 paths x 32 groups",
    "bin-crc16": "ECMP: hash + bin 10^6 flows, CRC-16",
    "bin-toeplitz": "ECMP: hash + bin 10^6 flows, Toeplitz",
    "bin-reference": "ECMP: bit-serial pure-Python reference, 10^4 flows",
}
NOTES = {
    "sum-allreduce-fp32": "xsum and math.fsum have no column form: they sum the same 2^20 values as one sequence.",
    "hash-crc32": "Per-flow peers are called from Python on each 13-byte serialisation (10^5 flows); "
                  "`zlib.crc32, one 13-MB buffer` is zlib's raw rate per 13 bytes (the CRC of the concatenation).",
}


def load(path):
    with open(path) as f:
        run = json.load(f)
    groups = defaultdict(dict)
    for b in run["benchmarks"]:
        info = b.get("extra_info", {})
        if "ns_per_item" not in info:
            continue
        groups[b["group"]][info["impl"]] = info
    return run, groups


def baseline_of(group):
    return BASELINE.get(group.split("-")[0] if not group.startswith("fp32-arrival") else "fp32-arrival")


def ns(groups, group, impl):
    return groups.get(group, {}).get(impl, {}).get("ns_per_item")


def goals(groups):
    """(goal, measured, target, met) rows from one run's numbers."""
    rows = []

    def ratio(a, b):
        return None if a is None or b is None else a / b

    for shape, label in (("allreduce", "64 x 16,384"), ("sequence", "10^6 x 1")):
        g = f"sum-{shape}-fp32"
        numpy_ns, xl = ns(groups, g, "numpy float32 sum"), ns(groups, g, "xsum large")
        for impl in ("c kernel", "c reduce-exact", "c reduce-fp32"):
            rows.append((f"Kulisch {impl}, {label}: time / numpy float32 sum", ratio(ns(groups, g, impl), numpy_ns), 4.0))
            rows.append((f"Kulisch {impl}, {label}: time / xsum large", ratio(ns(groups, g, impl), xl), 0.5))
        for entry in ("kernel", "reduce-exact", "reduce-fp32"):
            rows.append((f"Kulisch {label} {entry}: numba / C", ratio(ns(groups, g, f"numba {entry}"),
                                                                      ns(groups, g, f"c {entry}")), 1.5))
        for impl in ("c", "numba"):        # the same kernel behind a Python wrapper: parity within 5 %
            rows.append((f"Kulisch {impl} {label}: reduce (exact states) / kernel entry point",
                         ratio(ns(groups, g, f"{impl} reduce-exact"), ns(groups, g, f"{impl} kernel")), 1.05))
    for fmt in ("fp16", "bf16", "int8"):
        g = f"sum-allreduce-{fmt}"
        for impl in ("c kernel", "c reduce-fp32"):
            rows.append((f"Kulisch {impl}, 64 x 16,384 {fmt.upper()}: time / numpy float32 sum of the same values",
                         ratio(ns(groups, g, impl), ns(groups, g, "numpy float32 sum")), 4.0))
        for entry in ("kernel", "reduce-fp32"):
            rows.append((f"Kulisch 64 x 16,384 {fmt.upper()} {entry}: numba / C",
                         ratio(ns(groups, g, f"numba {entry}"), ns(groups, g, f"c {entry}")), 1.5))
    for algo in ("crc32", "crc16", "toeplitz"):
        c = ns(groups, f"bin-{algo}", "c")
        rows.append((f"ECMP C, 10^6 flows {algo} hash + bin: ms (= ns per flow)", c, 2.0))
        rows.append((f"ECMP {algo} hash + bin: numba / C", ratio(ns(groups, f"bin-{algo}", "numba"), c), 1.5))
    return [(name, value, target, value is not None and value <= target) for name, value, target in rows]


BEFORE = """## Before (main when issue 16 was filed; figures from the issue, one run each)

| what | before | this run |
|---|---:|---:|
| exact Kulisch through `reduce(..., impl="c")`, 64 x 16,384 FP32, ns/term | 3.75 | {allreduce} |
| the same, one sequence of 10^6 FP32 (10^6 x 1), ns/term | 7.82 | {sequence} |
| the kernel's own long-sequence entry point, ns/term | 1.48 | {seq_kernel} |
| ECMP, 10^6 flows CRC-32 hashed and binned, C / numba, ms | 6.4 / 9.2 | {ecmp} |
| CRC-32 hash alone, C, ms | 3.6 | {hash} |
"""

HOW = """## How the kernels get there

- **Exact sums** (`ckernels/kulisch.c`, `golden/arith/kulisch_numba.py`; `docs/arithmetic.md`).  A chunk of
  up to 255 rows x 64 columns whose exponent spread allows it is summed exactly in float64: a
  first pass finds each column's largest and smallest nonzero magnitude, then 1-3 levels of
  error-free extraction against 1.5 * 2^k run element-wise across the columns (AVX-512 in C through
  `target_clones`, in numba through full-width LLVM vectors); the level sums, exact doubles, become
  the 320-bit state (or are rounded straight from a TwoSum pair).  A full block of 64 columns is
  compiled with its width a constant, so its level accumulators stay in registers (C) and its
  loops unroll whole; the bounds are a min/max of magnitude patterns (C; numba combines four
  rows in registers before each store, and two rows per level step); while a block is summed
  the next block's part of each row is prefetched (64 rows 64 KB apart are more streams than
  the hardware prefetcher follows).  One long sequence is read as
  blocks of 255 x 64 lanes the same way.  Chunks with an inf/NaN or a wider spread take the
  integer-digit path.  The data of the benchmarks (normal values times 2^-30..2^30, a spread of
  about 100 binades) needs two levels in most all-reduce chunks and three in the rest.  A column
  of one or two levels becomes its state as one 128-bit word at an offset of its own (the
  level rule bounds the two sums' bits to 105 - g binades), placed into the limbs by masks in a
  vectorised loop; three levels add one 320-bit addend per level.  FP32 results (C and numba)
  come from the hardware's float64-to-float32 conversion of the pair's high part, element-wise
  over the columns, moved one unit when that part is itself an FP32 midpoint the low part pushes
  across (sums below 2^-126 or from 2^127 up take the integer rounding); the other formats round
  the pair by integer steps in one loop per format.  Full blocks are exported and rounded with
  their level count a constant.  In numba, loops that store into or read from an array at
  an offset (i0 + i) go through a slice indexed from 0: numba checks such an index for
  wrap-around per element, and LLVM then turned the loops into scatters and gathers (the
  ECMP kernel's hash stores: hash alone 1.16 -> 0.69 ms per 10^6 flows).  The public `reduce` runs the
  kernel's own code for every shape (one column: the long-sequence kernel itself).
- **ECMP** (`ckernels/ecmp.c`, `golden/fabric/ecmp_numba.py`; `docs/fabric.md`).  64 flows at a time: 13
  byte planes, one GF2P8AFFINEQB per byte position and output byte (the hash is GF(2)-affine in the
  tuple's bytes), then four interleaved histogram copies.  CPUs without AVX-512BW + GFNI use 13
  position-table lookups per flow (`c tables` in the hash groups).

## Where the time goes (perf, this machine kind)

- **All-reduce shape, C:** before the prefetch the first pass over each 64 x 64 chunk was the one
  that brought the data in from memory (about 30 % of the kernel, mostly waiting for loads); now
  the next block arrives while the level loop (about 60 %) runs.  The per-column state export
  took 25 % on an AMD EPYC (Zen 4) host, where 512-bit integer operations take two passes: one
  addend per level and limb, 10-15 shifted pieces with carries per column; with one- and
  two-level columns as one 128-bit word placed by masks it is 16 % of a kernel 11 % faster
  (the data's three-level chunks keep the addends).  Measured and not taken: on that host the
  level loop is bound by its two add pipes, and an add written as fma(x, 1, y) (the same
  rounded value: x * 1 is exact) runs on the two multiply-add pipes beside them, 8 % off the
  kernel (0.360 -> 0.333 ns/term); numba cannot follow (LLVM folds fma(x, 1.0, y) back into an
  add), so numba / C would widen by as much.  With 64 rows per column every column pays its bounds,
  levels and export once per 64 terms; numpy's sum only adds rows into a float32 vector, one add
  per term, and is bound by the memory stream.  An exact result needs at least the bounds pass and
  two adds per term for this data's spread, which is where the factor to numpy stays.
- **All-reduce shape, numba, reduce to FP32** (the kernel's parts timed apart): about 80 % bounds,
  levels and level sums, about 20 % forming and rounding the 16,384 pairs; before the conversion
  path the rounding alone took as long as the sums (numba / C was 1.77).
- **ECMP, C:** about half the time hashing (byte planes and affine maps), about 40 % counting
  (one increment per flow; the copies take the store-to-load chains off it), the rest checking
  groups.  Hash and bin read 17 bytes per flow (addresses, ports, protocol, group): 17 MB per
  10^6 flows, about 1 ms at this machine's single-core memory bandwidth, so the kernel runs
  within about 2x of streaming its input once.
"""


def fmt_ns(x):
    return "-" if x is None else (f"{x:.3g}" if x < 100 else f"{x:,.0f}")


def markdown(run, groups, memory=None, png=None):
    mi, ci = run.get("machine_info", {}), run.get("commit_info", {})
    loads = [info["load1"] for g in groups.values() for info in g.values() if "load1" in info]
    out = ["# Performance of the golden kernels", "",
           "Generated by `bench/plot_perf.py` from one pytest-benchmark run of "
           "`bench/arith/test_bench_golden.py` and `bench/fabric/test_bench_ecmp.py` (commands in its docstring). "
           "Figures are the minimum time per term or flow over the run's rounds; every ratio is "
           "taken inside that one run.", "",
           f"Machine: {mi.get('cpu', {}).get('brand_raw', mi.get('processor', '?'))}, "
           f"{mi.get('cpu', {}).get('count', '?')} cores, Python {mi.get('python_version', '?')}; "
           f"run {run.get('datetime', '?')[:19]}"
           + (f", 1-minute load average {min(loads):.1f}-{max(loads):.1f} during the cases (the machine is shared)"
              if loads else "")
           + (f", commit {ci.get('id', '')[:10]}{' (dirty)' if ci.get('dirty') else ''}" if ci else "") + ".", ""]
    if png:
        out += [f"![ns per term and per flow, per implementation]({png})", ""]
    out += ["## Goals (issue 16)", "", "| goal | measured | target | met |", "|---|---:|---:|:-:|"]
    for name, value, target, met in goals(groups):
        out.append(f"| {name} | {'-' if value is None else f'{value:.2f}'} | <= {target:g} | {'yes' if met else 'NO'} |")
    out.append("")
    order = [g for g in GROUP_TITLES if g in groups] + sorted(g for g in groups if g not in GROUP_TITLES)
    for g in order:
        base = baseline_of(g)
        unit = next(iter(groups[g].values()))["unit"]
        out += [f"## {GROUP_TITLES.get(g, g)}", ""]
        if g in NOTES:
            out += [NOTES[g], ""]
        head = f"| implementation | ns per {unit} |" + (f" x {base} |" if base in groups[g] else "")
        out += [head, "|---|---:|" + ("---:|" if base in groups[g] else "")]
        for impl, info in sorted(groups[g].items(), key=lambda kv: kv[1]["ns_per_item"]):
            name = f"{impl} (peer)" if info.get("peer") else f"**{impl}**"
            row = f"| {name} | {fmt_ns(info['ns_per_item'])} |"
            if base in groups[g]:
                row += f" {info['ns_per_item'] / groups[g][base]['ns_per_item']:.2f} |"
            out.append(row)
        out.append("")
    def f(x):
        return fmt_ns(x)
    out += [BEFORE.format(
        allreduce=f(ns(groups, "sum-allreduce-fp32", "c reduce-fp32")),
        sequence=f(ns(groups, "sum-sequence-fp32", "c reduce-fp32")),
        seq_kernel=f(ns(groups, "sum-sequence-fp32", "c kernel")),
        ecmp=f"{f(ns(groups, 'bin-crc32', 'c'))} / {f(ns(groups, 'bin-crc32', 'numba'))}",
        hash=f(ns(groups, "hash-crc32", "c")))]
    out += [HOW]
    if memory:
        out += ["## Peak resident memory at 10^6 (`bench/peak_memory.py`)", "",
                "Each case in a fresh process; the kernel's peak is read after resetting the high-water mark "
                "just before the call, with freed heap handed back first.", "",
                "| kernel | input MiB | process RSS before the call | peak during the call | the call's own |",
                "|---|---:|---:|---:|---:|"]
        for name, r in memory.items():
            out.append(f"| {name} | {r['input_mb']} | {r['rss_before']:.1f} | {r['kernel_peak']:.1f} | "
                       f"+{r['kernel_extra']:.1f} |")
        out.append("")
    return "\n".join(out)


README_ROWS = [
    ("Kulisch exact sum, 64 x 16,384 FP32 (C / numba)", "sum-allreduce-fp32", ("c reduce-exact", "numba reduce-exact")),
    ("Kulisch exact sum, 10^6 x 1 FP32 (C / numba)", "sum-sequence-fp32", ("c reduce-exact", "numba reduce-exact")),
    ("numpy float32 sum (not exact), same shapes", None, None),
    ("xsum large superaccumulator (exact FP64), 10^6", "sum-sequence-fp32", ("xsum large",)),
    ("math.fsum, 10^6", "sum-sequence-fp32", ("math.fsum",)),
    ("ECMP CRC-32 hash + bin, 10^6 flows (C / numba)", "bin-crc32", ("c", "numba")),
    ("CRC-32 per flow from Python: zlib / fastcrc", "hash-crc32", ("zlib.crc32 per flow", "fastcrc crc32.iso_hdlc per flow")),
]


def readme_table(groups):
    lines = ["| what | ns per term or flow |", "|---|---:|"]
    for label, g, impls in README_ROWS:
        if g is None:
            vals = [ns(groups, "sum-allreduce-fp32", "numpy float32 sum"), ns(groups, "sum-sequence-fp32", "numpy float32 sum")]
        else:
            vals = [ns(groups, g, i) for i in impls]
        lines.append(f"| {label} | {' / '.join(fmt_ns(v) for v in vals)} |")
    return "\n".join(lines)


def update_readme(path, groups):
    text = open(path).read()
    block = ("<!-- perf:begin (bench/plot_perf.py writes this table) -->\n" + readme_table(groups)
             + "\n<!-- perf:end -->")
    new, n = re.subn(r"<!-- perf:begin.*?<!-- perf:end -->", block, text, flags=re.S)
    if n != 1:
        raise SystemExit(f"{path}: no <!-- perf:begin --> ... <!-- perf:end --> block to replace")
    open(path, "w").write(new)


def plot(groups, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    order = [g for g in GROUP_TITLES if g in groups and not g.endswith("reference")]
    heights = [len(groups[g]) for g in order]
    fig, axes = plt.subplots(len(order), 1, figsize=(9, 0.32 * sum(heights) + 1.1 * len(order)),
                             gridspec_kw={"height_ratios": heights})
    for ax, g in zip(axes, order):
        items = sorted(groups[g].items(), key=lambda kv: kv[1]["ns_per_item"])
        names = [k for k, _ in items]
        vals = [v["ns_per_item"] for _, v in items]
        colors = ["#b0b0b0" if v.get("peer") else "#1f6fb4" for _, v in items]
        ax.barh(range(len(items)), vals, color=colors)
        ax.set_yticks(range(len(items)), names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlim(min(vals) / 3, max(vals) * 4)
        ax.set_title(GROUP_TITLES.get(g, g), fontsize=9, loc="left")
        ax.set_xlabel(f"ns per {items[0][1]['unit']} (log; blue ours, grey peers)", fontsize=8)
        for i, v in enumerate(vals):
            ax.text(v, i, f" {fmt_ns(v)}", va="center", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def keep_written_sections(old, new):
    """`new` with the sections of `old` (a `## ` heading to the next) that the report does not
    write itself, such as the test suite's turnaround, kept in their place: before the section
    that followed them in `old` when `new` has it, else at the end."""
    def split(text):
        parts = re.split(r"(?m)^(?=## )", text)
        return parts[0], parts[1:]

    def title(part):
        return part.split("\n", 1)[0]
    _, old_parts = split(old)
    head, new_parts = split(new)
    written = {title(p) for p in new_parts}
    for i, part in enumerate(old_parts):
        if title(part) in written:
            continue
        following = next((title(p) for p in old_parts[i + 1:] if title(p) in written), None)
        at = next((k for k, p in enumerate(new_parts) if title(p) == following), len(new_parts))
        if at == len(new_parts) and new_parts:
            new_parts[-1] = new_parts[-1].rstrip("\n") + "\n\n"
        new_parts.insert(at, part.rstrip("\n") + "\n\n")
    return head + "".join(new_parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="the --benchmark-json file of one run")
    ap.add_argument("--memory", help="bench/peak_memory.py --json output")
    ap.add_argument("--md", help="write the Markdown report here")
    ap.add_argument("--png", help="write the plot here")
    ap.add_argument("--readme", help="replace the README's perf block")
    args = ap.parse_args(argv)
    run, groups = load(args.json)
    memory = json.load(open(args.memory)) if args.memory else None
    if args.png:
        plot(groups, args.png)
    if args.md:
        import os
        rel = os.path.relpath(args.png, os.path.dirname(args.md)) if args.png else None
        text = markdown(run, groups, memory, rel) + "\n"
        if os.path.exists(args.md):         # the sections written by hand stay
            text = keep_written_sections(open(args.md).read(), text)
        open(args.md, "w").write(text)
    if args.readme:
        update_readme(args.readme, groups)
    for name, value, target, met in goals(groups):
        print(f"{'ok ' if met else 'MISS'} {name}: {'-' if value is None else f'{value:.2f}'} (target <= {target:g})")


if __name__ == "__main__":
    main()
