"""The degraded-die scenario, co-simulated cycle by cycle on both back ends:
four dies, a 1200-unit phase, die 2 at half rate.  Round-robin loses about half
the throughput; service-rate-aware dispatch loses about an eighth; the per-die
counters point at die 2; the package assertions hold throughout."""
import functools

import pytest

from cosim.package_bench import run_package
from golden import resource_graph as rg
from hdl.work_distributor import FAULT_TIE_LOWEST, POLICY_ROUND_ROBIN, POLICY_SERVICE_RATE

NOMINAL, HALF = 8, 4                  # die model rate: 8/16 = 0.5 units per cycle
HEALTHY = (NOMINAL,) * 4
DEGRADED = (NOMINAL, NOMINAL, HALF, NOMINAL)
POLICIES = {"round_robin": POLICY_ROUND_ROBIN, "service_rate": POLICY_SERVICE_RATE}


@functools.lru_cache(maxsize=None)
def phase(backend, policy, rates):
    return run_package(backend, list(rates), policy=POLICIES[policy], nominal_rate=NOMINAL)


def loss(backend, policy):
    return 1 - phase(backend, policy, HEALTHY).phase_cycles / phase(backend, policy, DEGRADED).phase_cycles


def fluid_loss(policy):
    return float(rg.throughput_loss([r / 16 for r in DEGRADED], [r / 16 for r in HEALTHY], 1200, policy))


@pytest.mark.parametrize("policy", ["round_robin", "service_rate"])
def test_healthy_phase_runs_at_package_rate(backend, policy):
    run = phase(backend, policy, HEALTHY)
    assert run.phase_cycles is not None
    ideal = 1200 / (4 * NOMINAL / 16)                   # 600 cycles of pure service
    assert ideal <= run.phase_cycles <= ideal * 1.02     # a few cycles of fill and drain
    assert run.accepted_work == [300] * 4 == run.completed_work
    assert run.monitors.violations == [] and run.monitors.unretired() == []
    assert run.monitors.counts["imbalance_checks"] > 500   # the imbalance monitor was armed all phase


def test_round_robin_loses_half(backend):
    run = phase(backend, "round_robin", DEGRADED)
    assert fluid_loss("round_robin") == 0.5
    assert abs(loss(backend, "round_robin") - 0.5) < 0.01
    # Work was split by count: every die got 300 units, die 2 needed twice as long.
    assert run.accepted_work == [300] * 4
    assert run.monitors.violations == []
    # The signature: die 2's outstanding count is the largest, its active time twice the others'.
    assert max(range(4), key=lambda t: run.peak_outstanding[t]) == 2
    others = [run.active_cyc[t] for t in (0, 1, 3)]
    assert 1.7 < run.active_cyc[2] / max(others) < 2.1


def test_service_rate_aware_loses_about_an_eighth(backend):
    run = phase(backend, "service_rate", DEGRADED)
    fl = fluid_loss("service_rate")
    assert fl == 0.125
    got = loss(backend, "service_rate")
    # The fluid model's 12.5 % plus a first rate window of round-robin and whole-job granularity.
    assert fl <= got < fl + 0.025
    assert got < loss(backend, "round_robin") / 3
    # Die 2 receives roughly half a healthy die's work; everyone finishes together.
    healthy_share = sum(run.accepted_work[t] for t in (0, 1, 3)) / 3
    assert 0.4 < run.accepted_work[2] / healthy_share < 0.6
    assert max(run.active_cyc) - min(run.active_cyc) < 0.1 * max(run.active_cyc)
    assert run.monitors.violations == [] and run.monitors.unretired() == []


@pytest.mark.parametrize("policy", ["round_robin", "service_rate"])
def test_counters_identify_the_degraded_die(backend, policy):
    run = phase(backend, policy, DEGRADED)
    # svc_rate lowest (about half), stall share of active time highest: a degraded participant.
    assert min(range(4), key=lambda t: run.svc_rate[t]) == 2
    assert run.svc_rate[2] * 2 <= max(run.svc_rate) + 4
    stall_share = [run.stall_cyc[t] / run.active_cyc[t] for t in range(4)]
    assert max(range(4), key=lambda t: stall_share[t]) == 2
    assert max(range(4), key=lambda t: run.stall_cyc[t]) == 2
    # Healthy dies measure alike: this is one die, not a shared resource.
    healthy = [run.svc_rate[t] for t in (0, 1, 3)]
    assert max(healthy) - min(healthy) <= 4


def test_backends_agree_cycle_for_cycle():
    for policy in POLICIES:
        a, b = phase("myhdl", policy, DEGRADED), phase("icarus", policy, DEGRADED)
        assert a.phase_cycles == b.phase_cycles
        assert (a.accepted_work, a.svc_rate, a.stall_cyc, a.active_cyc) == \
               (b.accepted_work, b.svc_rate, b.stall_cyc, b.active_cyc)
        assert a.trace == b.trace


def test_disabled_die_gets_no_work_under_service_rate(backend):
    run = run_package(backend, [NOMINAL, NOMINAL, 0, NOMINAL], enable=[1, 1, 0, 1], policy=POLICY_SERVICE_RATE,
                      nominal_rate=NOMINAL)
    assert run.accepted_work[2] == 0 and sum(run.accepted_work) == 1200
    assert run.monitors.violations == []
    ideal = 1200 / (3 * NOMINAL / 16)
    assert ideal <= run.phase_cycles <= ideal * 1.03


def test_round_robin_dispatches_to_a_disabled_die(backend):
    # The seed's BUG 3: the disabled (hung) die stays in the rotation; the phase never ends.
    run = run_package(backend, [NOMINAL, NOMINAL, 0, NOMINAL], enable=[1, 1, 0, 1], policy=POLICY_ROUND_ROBIN,
                      nominal_rate=NOMINAL, max_cycles=300)
    assert run.phase_cycles is None
    assert "a_no_dispatch_to_disabled" in run.monitors.fired()


def test_tie_to_lowest_breaks_bounded_imbalance():
    # The illustrative selection loop as written (ties to target 0) on a healthy package:
    # until rates are measured every die ties, and die 0 takes everything.
    run = run_package("icarus", list(HEALTHY), policy=POLICY_SERVICE_RATE, fault=FAULT_TIE_LOWEST,
                      nominal_rate=NOMINAL, max_cycles=400)
    assert "a_bounded_imbalance" in run.monitors.fired()
    ok = phase("icarus", "service_rate", HEALTHY)
    assert ok.monitors.max_imbalance <= ok.monitors.imbalance_budget


def test_mid_phase_degradation_is_absorbed():
    # Die 2 drops to half rate 200 cycles into the phase; the estimator sees it within
    # about a window and the service-rate policy shifts work away.
    def degrade(cycle, sigs, state):
        if cycle == 200:
            state["rates"][2] = HALF
    run = run_package("icarus", list(HEALTHY), policy=POLICY_SERVICE_RATE, nominal_rate=NOMINAL,
                      on_negedge=degrade)
    rr = run_package("icarus", list(HEALTHY), policy=POLICY_ROUND_ROBIN, nominal_rate=NOMINAL, on_negedge=degrade)
    assert run.svc_rate[2] * 2 <= max(run.svc_rate) + 4
    assert run.accepted_work[2] < min(run.accepted_work[t] for t in (0, 1, 3))
    assert run.phase_cycles < rr.phase_cycles
    assert run.monitors.violations == []
