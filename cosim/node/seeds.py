"""Many regression seeds at once (`prism regress`, cosim/cli/regress.py): one seed after another,
a local process pool or a Dask distributed cluster, with progress on stderr, and Verilator's
code-coverage runs folded as the regression goes.  One seed is cosim.node.regress.run_seed."""
import contextlib
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as local_completed

from cosim.node.node_harness import batch_design, dut_design
from cosim.node.regress import run_seed
from cosim.sim import codecov
from cosim.sim.batch import code_coverage as coverage_runs
from spec.formats import KULISCH_WIDTH_CHOICES


class SchedulerError(Exception):
    """The Dask scheduler cannot be used: dask distributed missing, or the scheduler unreachable."""


def coverage_folder(out):
    """The folder of a regression's Verilator coverage runs under `out`, emptied (this run's only)."""
    folder = os.path.join(out, "code-coverage-data")
    shutil.rmtree(folder, ignore_errors=True)
    return folder


def _prepare(backend, width, variant=None, code_coverage=None, dut=None):
    """Build the simulator(s) once before fanning out (workers then find them cached); with
    code coverage, Verilator's coverage build instead of the plain one."""
    if backend.startswith("batch-"):
        simulator = backend.split("-", 1)[1]
        with coverage_runs(code_coverage) if code_coverage else contextlib.nullcontext():
            if dut is not None:
                for w in ((dut.width or width,) if dut.width or width else KULISCH_WIDTH_CHOICES):
                    dut_design(simulator, dut, w)
                return
            for w in ((width,) if width else KULISCH_WIDTH_CHOICES):
                batch_design(simulator, w, variant=variant)


FOLD_EVERY = 50     # seeds: coverage runs are folded into one file per design as the regression goes


def run_seeds(seeds, backend, width, jobs=1, scheduler=None, log_dir=None, progress=True, variant=None,
              code_coverage=None, dut=None, timeout=None):
    """code_coverage: a folder for the seeds' Verilator coverage runs (batch-verilator); dut: a
    Verilog design instead of the kit's node (cosim.node.dut.NodeDut); timeout: each seed's
    simulator wall-time limit (seconds)."""
    _prepare(backend, width, variant, code_coverage, dut)
    bar = _progress(len(seeds), progress)
    if code_coverage:
        bar = _Folding(bar, code_coverage)
    results = []
    if scheduler is not None:
        try:  # deferred, and optional: dask distributed is installed for clusters only
            from distributed import Client, as_completed
        except ImportError as e:
            raise SchedulerError("--scheduler needs dask distributed (pip install 'dask[distributed]')") from e
        try:
            client = Client(scheduler, timeout="10s") if isinstance(scheduler, str) else Client(scheduler)
        except OSError as e:
            raise SchedulerError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from e
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
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futs = [pool.submit(run_seed, s, backend, width, log_dir, None, variant, code_coverage, dut, timeout)
                    for s in seeds]
            for fut in local_completed(futs):
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
    try:  # optional: a bar on a terminal when tqdm is installed
        from tqdm import tqdm
    except ImportError:
        return _LineProgress(total)
    return tqdm(total=total, desc="seeds", unit="seed", file=sys.stderr)
