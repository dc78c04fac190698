"""Shared resources in the co-simulated package: HBM and die-to-die bandwidth
arbitrated cycle by cycle, and the barrier at the phase end.

The package of the notes' worked example (4 dies x 4 units, HBM 10, D2D 1.5
per die with half the work crossing, a 1200-unit phase, a 200-cycle barrier)
is run with every rate divided by 8 (cosim.package.package_bench.setup_from_graph), so
its phase takes 8 x 320 = 2560 cycles.  The measured phases are compared with
golden.package.resource_graph (phase = stream + barrier, always).  The stall counters
tell a slow die from a shared resource starving every die; a transport retry
leaves svc_rate unchanged."""
import functools
from fractions import Fraction

import pytest

from cosim.package.package_bench import TIME_SCALE, live_slots, run_package, setup_from_graph, verilog_backend
from cosim.package.package_monitors import diagnose_run
from golden.package import resource_graph as rg

BASE = rg.Package()


@functools.lru_cache(maxsize=None)
def run(setup, backend="icarus-2005"):
    return run_package(setup, backend)


def predicted_stream(pkg):
    """The resource-graph model's streaming cycles, in simulated cycles."""
    return rg.evaluate(pkg).stream_cycles * TIME_SCALE


def check_phase(r, pkg):
    want = predicted_stream(pkg)
    assert r.finished
    assert want <= r.stream_cycles <= want * Fraction(101, 100) + 6, (r.stream_cycles, want)
    assert r.phase_cycles == r.stream_cycles + pkg.barrier_cycles * TIME_SCALE
    assert r.fired() == {}


def test_worked_example_cycle_by_cycle():
    # HBM binds at 10 units per model cycle: 120 streaming + 200 barrier = 320 model cycles.
    r = run(setup_from_graph(BASE))
    check_phase(r, BASE)
    assert rg.evaluate(BASE).phase_cycles == 320
    assert abs(r.phase_cycles / TIME_SCALE - 320) < 1
    # the arbiter says HBM was used up in (nearly) every streaming cycle, D2D never
    assert r.final("hbm_sat_cyc") >= r.stream_cycles - 8 and r.final("d2d_sat_cyc") == 0
    # the barrier is 62.5 % of the phase in the model; in the co-simulation:
    assert abs(1600 / r.phase_cycles - 0.625) < 0.002


def test_doubling_compute_changes_nothing_cycle_by_cycle():
    a = run(setup_from_graph(BASE))
    b = run(setup_from_graph(BASE.with_(compute_per_die=8)))
    assert abs(a.phase_cycles - b.phase_cycles) <= 2


@pytest.mark.parametrize("change,binding", [
    ({"hbm_rate": 20}, "d2d"),                                   # HBM x2: D2D binds
    ({"hbm_rate": 20, "d2d_per_die": 3}, "compute"),             # + D2D x2: compute binds
    ({"hbm_rate": 20, "d2d_per_die": 3, "compute_per_die": 8}, "hbm"),
    ({"barrier_cycles": 100}, "hbm"),                            # barrier / 2
])
def test_bottleneck_migration_rows(change, binding):
    pkg = BASE.with_(**change)
    assert rg.evaluate(pkg).binding == binding
    r = run(setup_from_graph(pkg))
    check_phase(r, pkg)
    hbm, d2d = r.final("hbm_sat_cyc"), r.final("d2d_sat_cyc")
    if binding == "hbm":
        assert hbm > 0.95 * r.stream_cycles and d2d == 0
    elif binding == "d2d":
        assert d2d > 0.95 * r.stream_cycles and hbm == 0
    else:
        assert hbm == d2d == 0 and r.final("stall_cyc") == [0] * 4


@pytest.mark.parametrize("dies,window", [(2, 64), (8, 256)])
def test_die_count_scaling(dies, window):
    # 2 dies: D2D binds (6 units per model cycle, 400 cycles); 8 dies: HBM still binds at 10,
    # exactly the 4-die phase: the package doubled its compute for nothing.
    pkg = BASE.with_(dies=dies)
    r = run(setup_from_graph(pkg, window=window))
    check_phase(r, pkg)
    assert rg.evaluate(pkg).binding == ("d2d" if dies == 2 else "hbm")
    four = run(setup_from_graph(BASE))
    if dies == 8:
        assert abs(r.phase_cycles - four.phase_cycles) <= 4
        assert r.armed_cycles() > 0.9 * r.phase_cycles    # rates measured alike: the check stays armed
    else:
        assert r.phase_cycles > four.phase_cycles


# --------------------------------------------------------------------------- diagnosis

COMPUTE_BOUND = BASE.with_(hbm_rate=20, d2d_per_die=3)      # HBM x2 + D2D x2


def stream_setup(pkg, **changes):
    return setup_from_graph(pkg, **{"barrier_cycles": 0, **changes})


@pytest.mark.parametrize("backend", ["myhdl", "icarus-2005"])
def test_shared_bottleneck_starves_every_die(backend):
    # The worked example: HBM binds; every die is held back downstream in nearly every
    # active cycle, and their rates are alike.
    r = run(stream_setup(BASE), backend)
    stall, active = r.final("stall_cyc"), r.final("active_cyc")
    assert all(s > 0.95 * a for s, a in zip(stall, active))
    rate = r.final("svc_rate")
    assert max(rate) - min(rate) <= 4
    d = diagnose_run(r)
    assert (d.kind, d.cause) == ("shared resource", "hbm")


def test_d2d_bottleneck_is_named_d2d():
    d = diagnose_run(run(stream_setup(BASE.with_(hbm_rate=20))))
    assert (d.kind, d.cause) == ("shared resource", "d2d")


@pytest.mark.parametrize("backend", ["myhdl", "icarus-2005"])
def test_slow_die_is_not_starved(backend):
    # Die 2's compute at half rate in the compute-bound package: its rate halves, nobody
    # stalls (it is busy computing), no shared resource runs out.
    r = run(stream_setup(COMPUTE_BOUND, die_rate=(8, 8, 4, 8)), backend)
    assert r.final("stall_cyc") == [0] * 4
    d = diagnose_run(r)
    assert (d.kind, d.dies, d.cause) == ("degraded die", [2], "compute")


@pytest.mark.parametrize("backend", ["myhdl", "icarus-2005"])
def test_die_behind_a_narrow_link_stalls_alone(backend):
    # Die 2's own D2D link trained at half of its need (§18 step 1: the link is up and
    # ACTIVE): die 2 alone stalls in nearly every active cycle; no shared resource runs out.
    r = run(stream_setup(COMPUTE_BOUND, link_rate=(255, 255, 2, 255)), backend)
    stall, active = r.final("stall_cyc"), r.final("active_cyc")
    assert stall[2] > 0.95 * active[2] and stall[0] == stall[1] == stall[3] == 0
    assert r.final("hbm_sat_cyc") == r.final("d2d_sat_cyc") == 0
    d = diagnose_run(r)
    assert (d.kind, d.dies, d.cause) == ("degraded die", [2], "downstream")


def test_healthy_compute_bound_package():
    d = diagnose_run(run(stream_setup(COMPUTE_BOUND)))
    assert d.kind == "healthy"


# --------------------------------------------------------------------------- retries

def _retries(r, first, every, count):
    """Transport retries of jobs the correct run shows live."""
    out = []
    c = first
    while len(out) < count and c < r.cycles:
        lv = live_slots(r, c)
        if lv:
            out.append((c, sorted(lv)[len(out) % len(lv)]))
        c += every
    return tuple(out)


@pytest.mark.parametrize("backend", ["myhdl", "icarus-2005"])
def test_retries_leave_svc_rate_unchanged(backend):
    # Retries are re-sent on the dispatch bus (ahead of new work) and dropped by the die that
    # already holds the job: not work.  Every cycle's svc_rate, completed work and the phase
    # time are those of the run without retries.
    setup = stream_setup(COMPUTE_BOUND, die_rate=(8, 8, 4, 8))
    plain = run(setup, backend)
    retries = _retries(plain, 30, 37, 12)
    r = run(setup.with_(retries=retries), backend)
    assert r.count("retry_fire") == len(retries) == 12
    assert r.trace["svc_rate"] == plain.trace["svc_rate"]
    assert r.trace["completed_work"] == plain.trace["completed_work"]
    assert r.stream_cycles == plain.stream_cycles and r.fired() == {}
    # The §16 conflation (retries counted as completed work, a fault of the converted Verilog, so
    # co-simulated in place of MyHDL) inflates the rate of the dies whose jobs were retried, and
    # a_work_conserved catches it at the first retry.
    bad = run(setup.with_(retries=retries, fault="retry_as_work"), verilog_backend(backend))
    assert bad.trace["svc_rate"] != plain.trace["svc_rate"]
    n = min(bad.cycles, plain.cycles)
    assert any(bad.series("svc_rate", t)[c] > plain.series("svc_rate", t)[c] for t in range(4) for c in range(n))
    assert list(bad.fired()) == ["a_work_conserved"]
    first_retry = next(c for c in range(bad.cycles) if bad.trace["retry_fire"][c])
    assert bad.fired()["a_work_conserved"] == first_retry + 1     # the counters it compares are registered


# --------------------------------------------------------------------------- the barrier

def test_barrier_accounting_from_the_trace():
    # Three phases with a 50-cycle barrier: from the dispatch and retirement outputs, each
    # phase's stream runs from its first dispatch to its last retirement, nothing is
    # dispatched during a barrier, and the next phase dispatches in the first cycle after it.
    setup = stream_setup(COMPUTE_BOUND, phase_units=160, phases=3, barrier_cycles=50)
    r = run(setup)
    t = r.trace
    assert r.finished and len(r.phases) == 3
    disp = [c for c in range(r.cycles) if t["dispatch_fire"][c]]
    ret = [c for c in range(r.cycles) if t["retire_fire"][c]]
    jobs = setup.phase_jobs
    start = None
    for k, (phase_cycles, stream_cycles) in enumerate(r.phases):
        first, last = disp[k * jobs], ret[(k + 1) * jobs - 1]
        assert stream_cycles == last - first + 1
        assert phase_cycles == stream_cycles + 50
        assert not any(t["dispatch_fire"][c] for c in range(last + 1, last + 51))
        assert all(t["barrier_active"][c] for c in range(last + 1, last + 51))
        if k + 1 < len(r.phases):
            assert disp[(k + 1) * jobs] == last + 51
        if start is not None:
            assert first == start
        start = last + 51
    # the second phase starts with every rate measured: faster than the first
    assert r.phases[1][1] <= r.phases[0][1]


def test_resets_while_streaming_in_the_barrier_and_at_a_phase_boundary():
    # A reset clears the job table, the counters, the barrier and the monitor's history; the
    # workload restarts.  Resets land mid-stream, mid-barrier and on a phase's first cycle:
    # afterwards two phases complete, nothing fires, the counters show only the restarted work,
    # and the back ends agree every cycle.
    base = stream_setup(COMPUTE_BOUND, die_rate=(8, 8, 4, 8), phase_units=160, phases=2, barrier_cycles=40,
                        max_cycles=1500)
    r1 = run(base.with_(resets=(30,)))
    in_barrier = next(c for c in range(32, r1.cycles) if r1.trace["barrier_active"][c]) + 10
    r2 = run(base.with_(resets=(30, in_barrier)))
    boundary = next(c for c in range(in_barrier + 2, r2.cycles) if r2.trace["phase_done"][c])
    setup = base.with_(resets=(30, in_barrier, boundary))
    runs = {b: run(setup, b) for b in ("myhdl", "icarus-2005", "icarus-2012")}
    r = runs["icarus-2005"]
    assert all(x.trace == r.trace for x in runs.values())
    assert r.finished and r.fired() == {}
    assert sum(r.final("accepted_work")) == sum(r.final("completed_work")) == 2 * 160
    assert r.trace["barrier_active"][in_barrier - 1] and r.trace["phase_done"][boundary]
    for c in setup.resets:
        # nothing is accepted while reset is asserted (cycles c, c + 1) ...
        assert r.trace["dispatch_fire"][c] == r.trace["dispatch_fire"][c + 1] == 0
        # ... and after each reset edge the state is cleared
        for k in (1, 2):
            assert all(r.trace[p][c + k] == 0 for p in ("outstanding_work", "accepted_work", "phases_done",
                                                          "barrier_active", "svc_rate"))
