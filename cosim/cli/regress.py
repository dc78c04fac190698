"""`prism regress --seeds N [--jobs J] [--scheduler ADDRESS]`: hostile random node
regressions, seeds in parallel (a local process pool, or a Dask distributed
cluster), a progress bar, a summary table, functional coverage merged over every
seed (percentage and holes; Markdown + JSON report in --out), and a replay command
per failing seed."""
import os
import sys
import time

from cosim.cli import UsageError, add_int_option

BACKENDS = ("batch-icarus", "batch-verilator", "icarus", "myhdl")
# the default regression: about five minutes of batched Icarus on 2 cores (docs/verification.md)
DEFAULT_SEEDS = 200
VARIANTS = ("prism_node_fault",)


def add_parser(sub):
    p = sub.add_parser("regress", help="random node regressions over many seeds")
    add_int_option(p, "--seeds", DEFAULT_SEEDS, 1, help="number of seeds")
    add_int_option(p, "--first-seed", 1, 0, help="first seed")
    add_int_option(p, "--jobs", os.cpu_count() or 1, 1, help="parallel workers (default: all cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask distributed scheduler address (e.g. tcp://host:8786)")
    p.add_argument("--backend", default="batch-icarus", choices=BACKENDS, help="simulator (default batch-icarus)")
    p.add_argument("--width", type=int, default=None, choices=(320, 280),
                   help="KULISCH_W for every seed (default: each seed draws 320 or 280)")
    p.add_argument("--out", default="out/regress", help="folder for the report and coverage (default out/regress)")
    p.add_argument("--log-dir", help="write a JSON-lines transaction log per seed here")
    p.add_argument("--variant", choices=VARIANTS, help="run a deliberately broken node variant (to try the debugging path)")
    add_dut_options(p)
    p.add_argument("--code-coverage", action="store_true",
                   help="Verilator line, branch and toggle coverage of the node per block, merged over the seeds "
                        "(batch-verilator only; its own build): OUT/code-coverage.md and .json")


def add_dut_options(p):
    """--dut / --top / --capacity: the regression on a Verilog design instead of the kit's node."""
    p.add_argument("--dut", action="append", metavar="FILE.v",
                   help="run on this Verilog instead of the kit's node (repeat for a design in several files): any "
                        "module with the ports `prism export node` writes (docs/verification.md, \"Your own RTL\"); "
                        "batched back ends only")
    p.add_argument("--top", metavar="NAME", help="with --dut: the top module (default: the one module no other "
                                                 "instantiates)")
    add_int_option(p, "--capacity", None, 1, help="with --dut: the design's CAPACITY (default: its parameter's "
                                                 "default, else 4096)")


def load_dut_args(args):
    """The NodeDut named by --dut/--top/--width/--capacity, its width found if it is fixed (None
    without --dut); a bad file or design is a one-line UsageError."""
    if not getattr(args, "dut", None):
        if getattr(args, "top", None) or getattr(args, "capacity", None):
            raise UsageError("--top and --capacity describe a --dut design: give --dut FILE.v")
        return None
    from cosim.node.dut import DutError, load_dut, resolve_width
    if not args.backend.startswith("batch-"):
        raise UsageError(f"--dut runs on batch-icarus or batch-verilator, not {args.backend}")
    if getattr(args, "variant", None):
        raise UsageError("--variant chooses a variant of the kit's node; with --dut the design is yours")
    try:
        dut = load_dut(args.dut, args.top, args.width, args.capacity)
        return resolve_width(dut, args.backend)
    except DutError as e:
        raise UsageError(str(e)) from e


def run(args):
    dut = load_dut_args(args)
    if dut is not None:
        print(f"design under test: {dut.label}, KULISCH_W "
              f"{dut.width or 'per seed (a parameter)'}, CAPACITY {dut.capacity}", file=sys.stderr)
    coverage_dir = None
    if getattr(args, "code_coverage", False):
        if args.backend != "batch-verilator":
            raise UsageError(f"--code-coverage measures Verilator's coverage build: use --backend batch-verilator, "
                             f"not {args.backend}")
        from cosim.sim.vpi import ToolchainError, require_tool
        try:
            require_tool("verilator_coverage")
        except ToolchainError as e:
            raise UsageError(str(e)) from e
        coverage_dir = os.path.join(args.out, "code-coverage-data")
        import shutil
        shutil.rmtree(coverage_dir, ignore_errors=True)      # this regression's runs only
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    t0 = time.perf_counter()
    results = run_seeds(seeds, args.backend, args.width, args.jobs, args.scheduler, args.log_dir,
                        variant=args.variant, code_coverage=coverage_dir, dut=dut)
    wall = time.perf_counter() - t0
    text = summary(results, wall, args)
    print(text)
    write_report(results, text, args.out)
    if coverage_dir:
        print(code_coverage_report(coverage_dir, args.out, len(seeds)))
    return 0 if all(r.ok for r in results) else 1


def code_coverage_report(coverage_dir, out, n_seeds):
    """Merge the seeds' coverage runs; write code-coverage.md/.json (and append the tables to
    report.md); return the summary lines to print."""
    from cosim.sim import codecov
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


def merged_coverage(results):
    from cosim.node.coverage import Coverage
    cov = Coverage()
    for r in results:
        if r.coverage:
            cov.merge(Coverage.from_dict(r.coverage))
    return cov


def write_report(results, text, folder):
    """report.md (the summary and the coverage table), coverage.md and coverage.json in `folder`."""
    cov = merged_coverage(results)
    os.makedirs(folder, exist_ok=True)
    cov.write(folder)
    with open(os.path.join(folder, "report.md"), "w") as fh:
        fh.write("# Regression\n" + text + "\n\n" + cov.markdown("Functional coverage (merged over the seeds)"))
    return cov


def _prepare(backend, width, variant=None, code_coverage=None, dut=None):
    """Build the simulator(s) once before fanning out (workers then find them cached); with
    code coverage, Verilator's coverage build instead of the plain one."""
    if backend.startswith("batch-"):
        import contextlib
        from cosim.sim.batch import code_coverage as coverage_runs
        from cosim.node.node_harness import batch_design, dut_design
        simulator = backend.split("-", 1)[1]
        with coverage_runs(code_coverage) if code_coverage else contextlib.nullcontext():
            if dut is not None:
                for w in ((dut.width or width,) if dut.width or width else (320, 280)):
                    dut_design(simulator, dut, w)
                return
            for w in ((width,) if width else (320, 280)):
                batch_design(simulator, w, variant=variant)


FOLD_EVERY = 50     # seeds: coverage runs are folded into one file per design as the regression goes


def run_seeds(seeds, backend, width, jobs=1, scheduler=None, log_dir=None, progress=True, variant=None,
              code_coverage=None, dut=None, timeout=None):
    """code_coverage: a folder for the seeds' Verilator coverage runs (batch-verilator); dut: a
    Verilog design instead of the kit's node (cosim.node.dut.NodeDut); timeout: each seed's
    simulator wall-time limit (seconds)."""
    from cosim.node.regress import run_seed
    _prepare(backend, width, variant, code_coverage, dut)
    bar = _progress(len(seeds), progress)
    if code_coverage:
        bar = _Folding(bar, code_coverage)
    results = []
    if scheduler is not None:
        try:
            from distributed import Client, as_completed
        except ImportError as e:
            raise UsageError("--scheduler needs dask distributed (pip install 'dask[distributed]')") from e
        try:
            client = Client(scheduler, timeout="10s") if isinstance(scheduler, str) else Client(scheduler)
        except OSError as e:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from e
        with client:
            futures = client.map(run_seed, seeds, backend=backend, kulisch_w=width, log_dir=log_dir,
                                 variant=variant, code_coverage=code_coverage, dut=dut, timeout=timeout, pure=False)
            for fut in as_completed(futures):
                results.append(fut.result())
                bar.update(1)
    elif jobs == 1:
        for s in seeds:
            results.append(run_seed(s, backend, width, log_dir, variant=variant, code_coverage=code_coverage,
                                    dut=dut, timeout=timeout))
            bar.update(1)
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futs = [pool.submit(run_seed, s, backend, width, log_dir, None, variant, code_coverage, dut, timeout)
                    for s in seeds]
            for fut in as_completed(futs):
                results.append(fut.result())
                bar.update(1)
    bar.close()
    return sorted(results, key=lambda r: r.seed)


class _Folding:
    """Progress that also folds the finished coverage runs every FOLD_EVERY seeds (a run of the
    node's coverage build leaves a few MB of counts)."""

    def __init__(self, bar, folder):
        self.bar, self.folder, self.done = bar, folder, 0

    def update(self, n):
        self.bar.update(n)
        self.done += n
        if self.done % FOLD_EVERY == 0:
            from cosim.sim import codecov
            codecov.fold(self.folder)

    def close(self):
        self.bar.close()


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


class _LineProgress:
    """Progress for a log file or CI: one line per tenth of the seeds (a bar would rewrite itself
    into the log on every update)."""

    def __init__(self, total):
        self.total, self.done, self.t0, self.next_mark = total, 0, time.perf_counter(), 1

    def update(self, n):
        self.done += n
        if self.done * 10 >= self.next_mark * self.total or self.done == self.total:
            while self.done * 10 >= self.next_mark * self.total:
                self.next_mark += 1
            print(f"seeds {self.done}/{self.total} ({time.perf_counter() - self.t0:.0f} s)", file=sys.stderr,
                  flush=True)

    def close(self):
        pass


def _progress(total, enabled):
    if not enabled:
        return _NoBar()
    if not sys.stderr.isatty():
        return _LineProgress(total)
    try:
        from tqdm import tqdm
    except ImportError:
        return _LineProgress(total)
    return tqdm(total=total, desc="seeds", unit="seed", file=sys.stderr)


def summary(results, wall, args):
    ok = [r for r in results if r.ok]
    bad = [r for r in results if not r.ok]
    cycles = sum(r.cycles for r in results)
    lines = ["", "| seeds | passed | failed | elements checked | RESULT frames | cycles simulated | wall (s) | cycles/s |",
             "|---|---|---|---|---|---|---|---|",
             f"| {len(results)} | {len(ok)} | {len(bad)} | {sum(r.elements for r in results)} | "
             f"{sum(r.results for r in results)} | {cycles} | {wall:.1f} | {cycles / wall if wall else 0:,.0f} |"]
    cov = merged_coverage(results)
    holes = {point: bins for point, bins in cov.holes().items() if bins}
    lines += ["", cov.summary_line() + (f" (report: {os.path.join(args.out, 'coverage.md')})"
                                        if getattr(args, "out", None) else "")]
    for point, bins in holes.items():
        lines.append(f"  hole: {point}: {', '.join(bins)}")
    if bad:
        lines += ["", "Failing seeds:"]
        for r in bad:
            why = r.error or r.first_mismatch
            lines.append(f"  seed {r.seed}: {why}")
            variant = f" --variant {args.variant}" if getattr(args, "variant", None) else ""
            dut = "".join(f" --dut {f}" for f in (getattr(args, "dut", None) or ()))
            dut += f" --top {args.top}" if dut and getattr(args, "top", None) else ""
            dut += f" --capacity {args.capacity}" if dut and getattr(args, "capacity", None) else ""
            lines.append(f"    replay: prism replay {r.seed} --backend {args.backend} --width {r.kulisch_w}{variant}{dut} "
                         f"--vcd seed{r.seed}.vcd")
    lines.append(f"verdict: {'PASS' if not bad else 'FAIL'}")
    return "\n".join(lines)
