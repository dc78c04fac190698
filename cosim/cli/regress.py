"""`prism regress --seeds N [--jobs J] [--scheduler ADDRESS]`: hostile random node
regressions, seeds in parallel (a local process pool, or a Dask distributed
cluster), a progress bar, a summary table, functional coverage merged over every
seed (percentage and holes; Markdown + JSON report in --out), and a replay command
per failing seed."""
import os
import sys
import time

from . import UsageError

BACKENDS = ("batch-icarus", "batch-verilator", "icarus", "myhdl")
VARIANTS = ("prism_node_fault",)


def add_parser(sub):
    p = sub.add_parser("regress", help="random node regressions over many seeds")
    p.add_argument("--seeds", type=int, required=True, help="number of seeds")
    p.add_argument("--first-seed", type=int, default=1, help="first seed (default 1)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel workers (default: all cores)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask distributed scheduler address (e.g. tcp://host:8786)")
    p.add_argument("--backend", default="batch-icarus", choices=BACKENDS, help="simulator (default batch-icarus)")
    p.add_argument("--width", type=int, default=None, choices=(320, 280),
                   help="KULISCH_W for every seed (default: each seed draws 320 or 280)")
    p.add_argument("--out", default="out/regress", help="folder for the report and coverage (default out/regress)")
    p.add_argument("--log-dir", help="write a JSON-lines transaction log per seed here")
    p.add_argument("--variant", choices=VARIANTS, help="run a deliberately broken node variant (to try the debugging path)")


def run(args):
    if args.seeds < 1:
        raise UsageError(f"--seeds must be at least 1, not {args.seeds}")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    t0 = time.perf_counter()
    results = run_seeds(seeds, args.backend, args.width, args.jobs, args.scheduler, args.log_dir,
                        variant=args.variant)
    wall = time.perf_counter() - t0
    text = summary(results, wall, args)
    print(text)
    write_report(results, text, args.out)
    return 0 if all(r.ok for r in results) else 1


def merged_coverage(results):
    from ..coverage import Coverage
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


def _prepare(backend, width, variant=None):
    """Build the simulator(s) once before fanning out (workers then find them cached)."""
    if backend.startswith("batch-"):
        from ..node_harness import batch_design
        for w in ((width,) if width else (320, 280)):
            batch_design(backend.split("-", 1)[1], w, variant=variant)


def run_seeds(seeds, backend, width, jobs=1, scheduler=None, log_dir=None, progress=True, variant=None):
    from ..regress import run_seed
    _prepare(backend, width, variant)
    bar = _progress(len(seeds), progress)
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
                                 variant=variant, pure=False)
            for fut in as_completed(futures):
                results.append(fut.result())
                bar.update(1)
    elif jobs == 1:
        for s in seeds:
            results.append(run_seed(s, backend, width, log_dir, variant=variant))
            bar.update(1)
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futs = [pool.submit(run_seed, s, backend, width, log_dir, None, variant) for s in seeds]
            for fut in as_completed(futs):
                results.append(fut.result())
                bar.update(1)
    bar.close()
    return sorted(results, key=lambda r: r.seed)


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
            variant = f" --variant {args.variant}" if args.variant else ""
            lines.append(f"    replay: prism replay {r.seed} --backend {args.backend} --width {r.kulisch_w}{variant} "
                         f"--vcd seed{r.seed}.vcd")
    lines.append(f"verdict: {'PASS' if not bad else 'FAIL'}")
    return "\n".join(lines)
