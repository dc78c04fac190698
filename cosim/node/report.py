"""What the node's commands compute and print: the demo (`prism demo`), a regression's summary
and report files (`prism regress`; its seeds run in cosim.node.seeds), and one seed replayed
(`prism replay`).  The modules of cosim/cli parse the arguments and call these."""
import os
import time
from dataclasses import dataclass
from typing import Optional

from cosim.node.coverage import Coverage
from cosim.node.metrics import line_rate
from cosim.node.node_harness import check, run_node
from cosim.node.regress import random_scenario, write_transaction_log
from cosim.node.scenarios import collective, demo_operation
from cosim.sim import codecov
from cosim.sim.batch import builds_on_first_run
from golden.node import protocol as P
from spec.frames import MAX_CAPACITY, POLICY_NAMES

POLICIES = tuple(POLICY_NAMES.values())


# ---------------------------------------------------------------------------- prism demo
def demo(out, backend, elements, contributors, width, seed, vcd=True, say=print):
    """`prism demo`: the AllReduce under each policy, co-simulated on `backend` and checked; `say`
    gets two lines per policy as it finishes.  Writes `out`/report.md (and a VCD per policy with
    `vcd`); returns (all passed, the report's path)."""
    os.makedirs(out, exist_ok=True)
    rows, ok = [], True
    for policy in POLICIES:
        op = demo_operation(policy, elements=elements, contributors=contributors, seed=seed)
        sc = collective(op, seed=seed)
        waves = os.path.join(out, f"{policy}.vcd") if vcd else None
        t0 = time.perf_counter()
        result = run_node(sc, backend, kulisch_w=width, vcd=waves)
        wall = time.perf_counter() - t0
        report = check(sc, result, kulisch_w=width)
        lr = line_rate(result)
        ok &= report.ok
        rows.append((policy, report, result, lr, wall, waves))
        bpc = " ".join(f"port{p} {lr.beats_per_cycle(p):.3f}" for p in (0, 1))
        say(f"{policy:13s} {report.verdict()}")
        say(f"{'':13s} {result.cycles} cycles ({backend}, {wall:.1f} s); DATA beats/cycle {bpc} "
            f"(line rate 1.000); last DATA -> last RESULT {lr.drain_cycles} cycles"
            + (f"; waves {waves}" if waves else ""))
    path = os.path.join(out, "report.md")
    with open(path, "w") as fh:
        fh.write(demo_markdown(rows, elements, contributors, width, backend, seed))
    return ok, path


def demo_markdown(rows, elements, contributors, width, backend, seed):
    """The demo's report.md: a row per policy, then its verdict, waveform, counters, mismatches."""
    L = ["# PRISM node demo", "",
         f"Two-port FP32 AllReduce: E = {elements}, {contributors} contributors (contributor c on port c mod 2), "
         f"KULISCH_W = {width}, back end `{backend}`, seed {seed}.", "",
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


# ---------------------------------------------------------------------------- prism regress
def summary(results, wall, backend, out=None, replay_options=""):
    """The regression's summary table, merged coverage and its holes, each failing seed with the
    command that replays it (`replay_options`: the options the regression was run with that the
    replay repeats, "--variant V", "--dut FILE.v" ...), and the verdict."""
    ok = [r for r in results if r.ok]
    bad = [r for r in results if not r.ok]
    cycles = sum(r.cycles for r in results)
    lines = ["", "| seeds | passed | failed | elements checked | RESULT frames | cycles simulated | wall (s) | cycles/s |",
             "|---|---|---|---|---|---|---|---|",
             f"| {len(results)} | {len(ok)} | {len(bad)} | {sum(r.elements for r in results)} | "
             f"{sum(r.results for r in results)} | {cycles} | {wall:.1f} | {cycles / wall if wall else 0:,.0f} |"]
    cov = merged_coverage(results)
    holes = {point: bins for point, bins in cov.holes().items() if bins}
    lines += ["", cov.summary_line() + (f" (report: {os.path.join(out, 'coverage.md')})" if out else "")]
    for point, bins in holes.items():
        lines.append(f"  hole: {point}: {', '.join(bins)}")
    if bad:
        lines += ["", "Failing seeds:"]
        for r in bad:
            why = r.error or r.first_mismatch
            lines.append(f"  seed {r.seed}: {why}")
            lines.append(f"    replay: prism replay {r.seed} --backend {backend} --width {r.kulisch_w}{replay_options} "
                         f"--vcd seed{r.seed}.vcd")
    lines.append(f"verdict: {'PASS' if not bad else 'FAIL'}")
    return "\n".join(lines)


def write_report(results, text, folder):
    """report.md (the summary and the coverage table), coverage.md and coverage.json in `folder`."""
    cov = merged_coverage(results)
    os.makedirs(folder, exist_ok=True)
    cov.write(folder)
    with open(os.path.join(folder, "report.md"), "w") as fh:
        fh.write("# Regression\n" + text + "\n\n" + cov.markdown("Functional coverage (merged over the seeds)"))
    return cov


def merged_coverage(results):
    """The functional coverage of every seed, merged."""
    cov = Coverage()
    for r in results:
        if r.coverage:
            cov.merge(Coverage.from_dict(r.coverage))
    return cov


def code_coverage_report(coverage_dir, out, n_seeds):
    """Merge the seeds' coverage runs; write code-coverage.md/.json (and append the tables to
    report.md); return the summary lines to print."""
    try:
        text, lines, runs = codecov.report(coverage_dir, out)
    except Exception as e:  # noqa: BLE001 - the regression's verdict stands; say why there is no table
        return f"code coverage: no report ({e})"
    with open(os.path.join(out, "report.md"), "a") as fh:
        fh.write("\n" + text.replace("# Code coverage", "## Code coverage", 1).replace("\n## ", "\n### "))
    lines = list(lines)
    lines.append(f"code coverage of {runs} runs (report: {os.path.join(out, 'code-coverage.md')})")
    if runs < n_seeds:
        lines.append(f"  note: {n_seeds - runs} seeds left no coverage data here (a seed that failed to start, or "
                     f"Dask workers without this folder on a shared file system)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- prism replay
@dataclass
class Replay:
    """One regression seed rerun: its scenario, the run, the scoreboard's report, the KULISCH_W
    it ran with, its transaction log, and the waveform file's time before the run (None: none)."""
    scenario: object
    run: object
    report: object
    width: int
    log: str
    waves_before: Optional[float] = None


def replay(seed, backend, width=None, vcd=None, variant=None, dut=None, log=None, out="out/replay"):
    """`prism replay`: rerun regression seed `seed` exactly (on `dut`, a cosim.node.dut.NodeDut, or
    the kit's node or its `variant`), check it, and write its transaction log (`log`, default
    `out`/seed<SEED>.jsonl)."""
    capacity = dut.capacity if dut is not None else MAX_CAPACITY
    sc = random_scenario(seed, capacity=capacity)
    waves_before = os.path.getmtime(vcd) if vcd and os.path.exists(vcd) else None
    width = (dut.width if dut is not None else None) or width or sc.kulisch_w
    with builds_on_first_run():         # only the build this run uses (the traced one for waves)
        run_ = run_node(sc, backend, kulisch_w=width, capacity=capacity, vcd=vcd, variant=variant, dut=dut)
    report = check(sc, run_, kulisch_w=width, capacity=capacity)
    log = log or os.path.join(out, f"seed{seed}.jsonl")
    write_transaction_log(log, report.scoreboard, run_)
    return Replay(sc, run_, report, width, log, waves_before)


def waves_note(vcd, backend, mtime_before=None):
    """Name the waveform `vcd` only if this run wrote it; otherwise say how to get one."""
    if not vcd:
        return ""
    if (os.path.exists(vcd) and os.path.getsize(vcd) > 0
            and (mtime_before is None or os.path.getmtime(vcd) != mtime_before)):
        return f"; waves {vcd}"
    return (f"; no waveform was written to {vcd} by {backend}: rerun with --backend batch-icarus "
            f"(or batch-verilator) and --vcd")


def first_mismatch_report(report):
    """The count of mismatches and the first one, placed in its operation, range and lane."""
    m = report.first()
    lines = [f"FAIL: {len(report.mismatches)} mismatches", "first mismatch:", f"  {m}"]
    if m.element is not None:
        lines.append(f"  operation {m.op_id}, element {m.element}, range {m.element // P.RANGE_ELEMS}, "
                     f"lane {m.element % P.RANGE_ELEMS}, left the node at cycle {m.cycle}")
    return "\n".join(lines)
