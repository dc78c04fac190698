"""The degraded-die scenario, co-simulated cycle by cycle on both back ends, in
the compute-bound package (the bottleneck-migration row "HBM x2 + D2D x2":
HBM and die-to-die bandwidth are arbitrated but ample): four dies, a 1200-unit
phase, die 2 at half rate.  Round-robin loses about half the streaming
throughput, service-rate-aware dispatch about an eighth (the fluid model of
golden.package.resource_graph predicts 50 % and 12.5 %); the counters point at die 2
and say its compute is slow, not starved; the hardware assertions hold."""
import functools
from fractions import Fraction

import pytest

from cosim.package.package_bench import TIME_SCALE, run_package, setup_from_graph
from cosim.package.package_monitors import diagnose_run
from golden.package import resource_graph as rg
from hdl.package.work_distributor import POLICY_ROUND_ROBIN, POLICY_SERVICE_RATE

GRAPH = rg.Package(hbm_rate=20, d2d_per_die=3)          # HBM x2 + D2D x2: compute binds
NOMINAL, HALF = 8, 4                                      # 8/16 = 0.5 units per simulated cycle
HEALTHY = (NOMINAL,) * 4
DEGRADED = (NOMINAL, NOMINAL, HALF, NOMINAL)
POLICIES = {"round_robin": POLICY_ROUND_ROBIN, "service_rate": POLICY_SERVICE_RATE}
STREAM = setup_from_graph(GRAPH, barrier_cycles=0)        # the streaming part only


@functools.lru_cache(maxsize=None)
def phase(backend, policy, rates, barrier=0):
    return run_package(STREAM.with_(policy=POLICIES[policy], die_rate=rates, barrier_cycles=barrier), backend)


def fluid(policy, rates):
    caps = [Fraction(r, 16) for r in rates]
    _, pools = rg.package_pools(GRAPH)
    return rg.stream_cycles(policy, caps, [p / TIME_SCALE for p in pools], 1200)


def loss(backend, policy):
    return 1 - phase(backend, policy, HEALTHY).stream_cycles / phase(backend, policy, DEGRADED).stream_cycles


@pytest.mark.parametrize("backend", ["myhdl", "icarus-2005"])
@pytest.mark.parametrize("policy", ["round_robin", "service_rate"])
def test_healthy_phase_runs_at_the_compute_rate(backend, policy):
    run = phase(backend, policy, HEALTHY)
    ideal = fluid(policy, HEALTHY)
    assert ideal == 600
    assert ideal <= run.stream_cycles <= ideal + 8        # a few cycles of fill and drain
    assert run.final("accepted_work") == [300] * 4 == run.final("completed_work")
    assert run.fired() == {} and run.armed_cycles() >= run.stream_cycles - 1


@pytest.mark.parametrize("backend", ["myhdl", "icarus-2005"])
def test_round_robin_loses_half(backend):
    run = phase(backend, "round_robin", DEGRADED)
    assert fluid("round_robin", DEGRADED) == 1200
    assert abs(loss(backend, "round_robin") - Fraction(1, 2)) < 0.01
    # Work was split by count: every die got 300 units, die 2 needed twice as long.
    assert run.final("accepted_work") == [300] * 4
    assert run.fired() == {}
    # The signature: die 2's outstanding count is the largest, its active time twice the others'.
    peak = [max(run.series("outstanding", t)) for t in range(4)]
    assert max(range(4), key=lambda t: peak[t]) == 2
    active = run.final("active_cyc")
    assert 1.7 < active[2] / max(active[t] for t in (0, 1, 3)) < 2.1


@pytest.mark.parametrize("backend", ["myhdl", "icarus-2005"])
def test_service_rate_aware_loses_about_an_eighth(backend):
    run = phase(backend, "service_rate", DEGRADED)
    fl = 1 - fluid("service_rate", HEALTHY) / fluid("service_rate", DEGRADED)
    assert fl == Fraction(1, 8)
    got = loss(backend, "service_rate")
    # The fluid 12.5 % plus a first rate window of even spreading and whole-job granularity.
    assert fl <= got < fl + 0.025
    assert got < loss(backend, "round_robin") / 3
    # Die 2 receives roughly half a healthy die's work; everyone finishes together.
    acc = run.final("accepted_work")
    assert 0.4 < acc[2] / (sum(acc[t] for t in (0, 1, 3)) / 3) < 0.6
    active = run.final("active_cyc")
    assert max(active) - min(active) < 0.1 * max(active)
    assert run.fired() == {}


@pytest.mark.parametrize("policy", ["round_robin", "service_rate"])
def test_counters_say_die_2_is_slow_not_starved(policy):
    run = phase("icarus-2005", policy, DEGRADED)
    rate, stall, active = run.final("svc_rate"), run.final("stall_cyc"), run.final("active_cyc")
    # svc_rate lowest (about half); and nobody stalls: HBM and D2D are ample, die 2 is busy computing.
    assert min(range(4), key=lambda t: rate[t]) == 2 and rate[2] * 2 <= max(rate) + 4
    assert stall == [0, 0, 0, 0] and min(active) > 0
    assert run.final("hbm_sat_cyc") == run.final("d2d_sat_cyc") == 0
    d = diagnose_run(run)
    assert (d.kind, d.dies, d.cause) == ("degraded die", [2], "compute")


def test_phase_loss_with_the_barrier():
    # The whole phase includes the 1600-cycle barrier (200 of the model's cycles): the same
    # degradation costs less of the phase than of its streaming part.
    for policy in POLICIES:
        h = phase("icarus-2005", policy, HEALTHY, 1600)
        d = phase("icarus-2005", policy, DEGRADED, 1600)
        assert h.phase_cycles == h.stream_cycles + 1600 and d.phase_cycles == d.stream_cycles + 1600
        assert h.stream_cycles == phase("icarus-2005", policy, HEALTHY).stream_cycles
        phase_loss = 1 - h.phase_cycles / d.phase_cycles
        fl = 1 - (fluid(policy, HEALTHY) + 1600) / (fluid(policy, DEGRADED) + 1600)
        assert abs(phase_loss - fl) < 0.015
        assert phase_loss < loss("icarus-2005", policy)


def test_back_ends_agree_cycle_for_cycle():
    # Every output, every cycle, with retries, a late completion, an epoch change and a
    # mid-phase rate change in the stimulus, and a second phase after a barrier.
    setup = STREAM.with_(die_rate=DEGRADED, phase_units=240, phases=2, barrier_cycles=40,
                         events=((100, "route_epoch", 3), (150, "die_rate", HEALTHY)),
                         retries=((60, 2), (120, 5)), late_completions=((70, 1, 1),))
    runs = {b: run_package(setup, b) for b in ("myhdl", "icarus", "icarus-2005", "icarus-2012")}
    ref = runs["myhdl"]
    assert ref.finished and len(ref.phases) == 2 and ref.count("retry_fire") == 2
    for b, r in runs.items():
        assert r.trace == ref.trace, b


def test_verilator_agrees_cycle_for_cycle():
    setup = STREAM.with_(die_rate=DEGRADED, phase_units=240, phases=2, barrier_cycles=40,
                         events=((100, "route_epoch", 3),), retries=((60, 2),))
    assert run_package(setup, "verilator").trace == run_package(setup, "icarus-2012").trace


def test_disabled_die_gets_no_work_under_service_rate(backend):
    run = run_package(STREAM.with_(die_rate=(NOMINAL, NOMINAL, 0, NOMINAL), enable=(1, 1, 0, 1)), backend)
    assert run.final("accepted_work")[2] == 0 and sum(run.final("accepted_work")) == 1200
    assert run.fired() == {} and run.armed_cycles() == 0     # a disabled die: imbalance is correct
    assert 800 <= run.stream_cycles <= 808                    # three dies at 0.5 units per cycle


def test_mid_phase_degradation_is_absorbed():
    # Die 2 drops to half rate 200 cycles into the phase; the estimator sees it within
    # about a window and the service-rate policy shifts work away.
    ev = ((200, "die_rate", DEGRADED),)
    sr = run_package(STREAM.with_(events=ev), "icarus-2005")
    rr = run_package(STREAM.with_(events=ev, policy=POLICY_ROUND_ROBIN), "icarus-2005")
    rate = sr.final("svc_rate")
    assert rate[2] * 2 <= max(rate) + 4
    acc = sr.final("accepted_work")
    assert acc[2] < min(acc[t] for t in (0, 1, 3))
    assert sr.stream_cycles < rr.stream_cycles
    assert sr.fired() == {} and rr.fired() == {}
    # armed until the estimator published die 2's lower rate, then disarmed: design state
    armed = sr.trace["imbalance_armed"]
    first_off = next(c for c in range(200, sr.cycles) if not armed[c])
    assert 200 < first_off < 200 + 3 * sr.setup.window
