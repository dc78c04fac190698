"""The accelerator package as a mutation target (`prism mutate package`): its converted Verilog,
judged by the package's own checks.

Those checks are the six assertions package_assertion_monitor evaluates on every cycle inside
the design (a_retire_once, a_retry_creates_no_job, a_route_epoch_stable,
a_no_dispatch_to_disabled, a_bounded_imbalance, a_work_conserved) and the run's end: every phase
of the workload completes, and without a reset every job retires exactly once.  Seed s draws a
hostile PackageSetup (`hostile_setup`): random compute, link, HBM and D2D rates, a disabled die,
two phases with a barrier, a route-epoch change and rate changes under live jobs, transport
retries and stale late completions aimed at jobs the unmutated design shows live, and resets.
The unmutated design must pass the setup (it is drawn again otherwise).  Each setup's test bench
is compiled once beside the instrumented design and run in batched Icarus with the mutant
chosen by a plus-argument.
"""
import functools
import os
import random
import time

from cosim.mutation.campaign import SeedVerdict, Target
from cosim.package.package_batch import run_package_batch
from cosim.package.package_bench import live_slots
from cosim.package.package_setup import PackageSetup, package_signals
from cosim.sim import toolchain
from cosim.sim.batch import SimulatorTimeout, design_folder
from cosim.sim.codecov import DesignMap
from cosim.sim.vpi import ToolchainError
from hdl.package.accelerator_package import accelerator_package

SIMULATOR = "icarus-2012"
MAX_CYCLES = 4000


def _draw(rng):
    dies = 4
    rates = [rng.randint(2, 16) for _ in range(dies)]
    enable = [1] * dies
    if rng.random() < 0.3:
        off = rng.randrange(dies)
        enable[off], rates[off] = 0, 0
    events = []
    if rng.random() < 0.6:
        events.append((rng.randint(20, 120), "route_epoch", rng.randint(1, 15)))
    if rng.random() < 0.5:
        changed = [r if not e else max(1, r + rng.randint(-6, 6)) for r, e in zip(rates, enable)]
        events.append((rng.randint(20, 200), "die_rate", tuple(changed)))
    resets = (rng.randint(30, 150),) if rng.random() < 0.25 else ()
    return PackageSetup(die_rate=tuple(rates), enable=tuple(enable),
                        link_rate=tuple(rng.choice((255, rng.randint(4, 40))) for _ in range(dies)),
                        hbm_rate=rng.choice((255, rng.randint(12, 80))), d2d_rate=rng.choice((255, rng.randint(8, 60))),
                        phases=rng.choice((1, 2)), barrier_cycles=rng.choice((0, rng.randint(1, 30))),
                        phase_units=rng.choice((160, 240, 320)), events=tuple(events), resets=resets,
                        max_cycles=MAX_CYCLES)


def _aim(rng, setup, run):
    """Retries and stale completions aimed at jobs the unmutated run shows live."""
    g = setup.geometry
    retries, stale = [], []
    for _ in range(rng.randint(0, 3)):
        c = rng.randint(10, max(11, run.cycles - 10))
        live = live_slots(run, c)
        if live:
            retries.append((c, rng.choice(sorted(live))))
    for _ in range(rng.randint(0, 3)):
        c = rng.randint(10, max(11, run.cycles - 10))
        live = live_slots(run, c)
        if live:
            slot = rng.choice(sorted(live))
            stale.append((c, slot, (live[slot] - rng.randint(1, 3)) % (1 << g.gen_w)))
    return setup.with_(retries=tuple(sorted(retries)), late_completions=tuple(sorted(stale)))


def judge(setup, run):
    """(kinds, message) of a run: the first assertion to fire, a workload left unfinished, or a
    job count off; () when the run passed."""
    fired = run.fired()
    if fired:
        name, cycle = next(iter(fired.items()))
        return ("property",), f"{name} fired at cycle {cycle}"
    if not run.finished:
        return ("timeout",), f"{run.trace['phases_done'][-1]} of {setup.phases} phases done after {run.cycles} cycles"
    if not setup.resets and run.count("retire_fire") != setup.total_jobs:
        return ("end-state",), f"{run.count('retire_fire')} jobs retired, the workload has {setup.total_jobs}"
    return (), ""


@functools.lru_cache(maxsize=None)
def hostile_setup(seed):
    """Seed `seed`'s setup, which the unmutated converted package passes (drawn again until it does)."""
    rng = random.Random(f"package mutation {seed}")
    for _ in range(20):
        setup = _draw(rng)
        first = run_package_batch(setup, SIMULATOR)
        if judge(setup, first)[0]:
            continue
        setup = _aim(rng, setup, first)
        if not judge(setup, run_package_batch(setup, SIMULATOR))[0]:
            return setup
    raise RuntimeError(f"package seed {seed}: no setup the unmutated design passes in 20 draws")


def run_mutant_seed(seed, sources, plusargs, timeout, module="accelerator_package"):
    """One seed's setup on the instrumented package in `sources`, the mutant chosen by `plusargs`."""
    setup = hostile_setup(seed)
    t0 = time.perf_counter()
    try:
        run = run_package_batch(setup, SIMULATOR, design=(design_folder(os.path.abspath(sources[0]), module), module),
                                plusargs=plusargs, timeout=timeout)
    except SimulatorTimeout as e:
        return SeedVerdict(seed, False, ("timeout",), str(e), time.perf_counter() - t0)
    except ToolchainError as e:
        return SeedVerdict(seed, False, ("crash",), str(e).splitlines()[0][:300], time.perf_counter() - t0)
    kinds, message = judge(setup, run)
    return SeedVerdict(seed, not kinds, kinds, message, time.perf_counter() - t0)


def package_target():
    """The package at its default parameters (POLICY_SERVICE_RATE), 4 dies."""
    setup = PackageSetup(die_rate=(8, 8, 8, 8))
    folder, module, _ = toolchain.build(accelerator_package, **package_signals(setup.geometry), **setup.params())
    path = os.path.join(folder, module + ".v")
    return Target("package", path, module, functools.partial(run_mutant_seed, module=module), None, DesignMap(path),
                  "accelerator_package (4 dies, service-rate policy)")
