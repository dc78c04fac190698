"""The work distributor with its hardware assertion monitor beside it
(checked_work_distributor) on both back ends, its targets modelled in Python:
dispatch policies against an independent reference, outstanding bookkeeping,
and each package assertion holding on the correct design and firing on a
deliberately broken variant (a package fault, cosim/package/faults.py, co-simulated
as the faulted Verilog in place of MyHDL; or the round-robin policy)."""
import random
from fractions import Fraction

import pytest

from cosim.package.package_bench import Geometry, distributor_signals, run_distributor, verilog_backend
from hdl.package.work_distributor import POLICY_ROUND_ROBIN, POLICY_SERVICE_RATE, work_distributor

RR, SRA = POLICY_ROUND_ROBIN, POLICY_SERVICE_RATE


def faulted(backend, fault):
    """The test's back end, or the Icarus co-simulation for a faulted distributor (Verilog only)."""
    return verilog_backend(backend) if fault else backend


def reference_choice(out_work, rates, enable, start):
    """Service-rate-aware choice, written independently: exact drain times, unknown = infinite,
    ties to the first target in round-robin order from `start`."""
    n = len(rates)
    order = [(start + k) % n for k in range(n)]
    cands = [t for t in order if enable[t]]
    if not cands:
        return None
    inf = float("inf")
    drain = {t: (Fraction(out_work[t], rates[t]) if rates[t] else inf) for t in cands}
    best = min(drain[t] for t in cands)
    return next(t for t in cands if drain[t] == best)


def test_round_robin_rotates_and_keeps_disabled_target(backend):
    # The seed's wrong design: turn order only, the disabled target 2 still in the rotation.
    run = run_distributor(backend, policy=RR, jobs=[4] * 8, enable=[1, 1, 0, 1], service=[1, 1, 1, 1], depth=8)
    assert [d[1] for d in run.dispatches] == [0, 1, 2, 3, 0, 1, 2, 3]
    assert run.fired() == ["a_no_dispatch_to_disabled"]


def test_service_rate_never_dispatches_to_disabled(backend):
    run = run_distributor(backend, policy=SRA, jobs=[4] * 24, svc_rate=[10, 10, 10, 10], enable=[1, 1, 0, 1])
    assert len(run.dispatches) == 24 and all(d[1] != 2 for d in run.dispatches)
    assert len(run.retires) == 24
    assert run.fired() == []
    assert run.live == {}


@pytest.mark.parametrize("rates,enable", [([10, 5, 20, 0], [1, 1, 1, 1]),
                                          ([7, 7, 7, 7], [1, 1, 1, 1]),
                                          ([3, 0, 9, 6], [1, 1, 1, 0]),
                                          ([0, 0, 0, 0], [1, 1, 1, 1])])
def test_service_rate_choice_matches_reference(backend, rates, enable):
    rng = random.Random(sum(rates))
    jobs = [rng.randrange(1, 40) for _ in range(40)]
    run = run_distributor(backend, policy=SRA, jobs=jobs, svc_rate=rates, enable=enable,
                          service=[1, 2, 1, 3], depth=6, max_cycles=800)
    assert len(run.dispatches) == len(jobs)
    start = 0
    for cyc, tgt, slot, gen, tid, epoch, work, out_work in run.dispatches:
        assert tgt == reference_choice(out_work, rates, enable, start), (cyc, out_work)
        assert work == jobs[tid]
        start = (tgt + 1) % 4
    assert run.fired() == []


def test_outstanding_is_one_net_update_per_target(backend):
    # Fast targets: dispatch and retirement to the same target in one cycle happen often.
    # Target 0 is measured far faster than the rest, so it receives most jobs back to back.
    jobs = [1] * 60
    run = run_distributor(backend, policy=SRA, jobs=jobs, svc_rate=[50, 1, 1, 1], service=[1, 4, 4, 4], depth=2)
    disp = {}
    ret = {}
    for cyc, tgt, *_ in run.dispatches:
        disp.setdefault(cyc, []).append(tgt)
    for cyc, tgt, *_ in run.retires:
        ret.setdefault(cyc, []).append(tgt)
    both = [c for c in disp if c in ret and set(disp[c]) & set(ret[c])]
    assert both, "no cycle exercised a simultaneous dispatch and retirement on one target"
    counts = [0] * 4
    work = [0] * 4
    for cyc, got_counts, got_work in run.outstanding:
        assert got_counts == counts and got_work == work, cyc
        for t in disp.get(cyc, []):
            counts[t] += 1
            work[t] += 1
        for t in ret.get(cyc, []):
            counts[t] -= 1
            work[t] -= 1
    assert counts == [0, 0, 0, 0] and len(run.retires) == len(jobs)


def _stale_completion_script(at):
    def inject(s, tb):
        # A live job in a recycled slot (generation >= 2): its previous use is a real job.
        slot, (tid, gen) = max(tb["live"].items(), key=lambda kv: kv[1][1])
        assert gen >= 2
        s["s_cmpl_valid"].next = 1
        s["s_cmpl_slot"].next = slot
        s["s_cmpl_gen"].next = (gen - 1) % 16          # the previous use of this slot
        tb["stale"] = (slot, tid)
    return {at: inject}


@pytest.mark.parametrize("fault", ["", "no_gen_check"])
def test_stale_completion_and_retire_once(backend, fault):
    # Slots are recycled (generation >= 2) before a stale completion is injected at cycle 60.
    jobs = [3] * 48
    run = run_distributor(faulted(backend, fault), policy=SRA, fault=fault, jobs=jobs, svc_rate=[8, 8, 8, 8],
                          service=[3, 3, 3, 3], depth=4, script=_stale_completion_script(60), max_cycles=700)
    if fault:
        assert run.fired()[0] == "a_retire_once"
        assert run.first("a_retire_once") == 60
    else:
        assert run.fired() == []
        assert all(r[0] != 60 for r in run.retires)       # the stale completion retired nothing
        assert len(run.retires) == len(jobs) and run.live == {}


def _retry_script(at):
    def retry(s, tb):
        slot = sorted(tb["live"])[0]
        s["retry_valid"].next = 1
        s["retry_slot"].next = slot
        tb["retried"] = slot
    return {c: retry for c in range(at, at + 3)}


@pytest.mark.parametrize("fault", ["", "retry_as_job"])
def test_retry_resends_without_creating_a_job(backend, fault):
    jobs = [6] * 20
    run = run_distributor(faulted(backend, fault), policy=SRA, fault=fault, jobs=jobs, svc_rate=[8, 8, 8, 8],
                          service=[2, 2, 2, 2], depth=8, script=_retry_script(30), max_cycles=400)
    assert run.retries, "no retry was re-sent"
    if fault:
        assert "a_retry_creates_no_job" in run.fired()
    else:
        assert run.fired() == []
        assert len(run.dispatches) == len(jobs) == len(run.retires)
        # Outstanding did not move on a retry cycle other than by real dispatch/retire events.
        assert sorted(d[4] for d in run.dispatches) == list(range(len(jobs)))


def _epoch_script(at, epoch):
    def remap(s, tb):
        s["route_epoch"].next = epoch
    return {at: remap}


@pytest.mark.parametrize("fault", ["", "epoch_rewrite"])
def test_route_epoch_recorded_at_dispatch_and_stable(backend, fault):
    jobs = [8] * 24
    run = run_distributor(faulted(backend, fault), policy=SRA, fault=fault, jobs=jobs, svc_rate=[8, 8, 8, 8],
                          service=[2, 2, 2, 2], depth=4, script=_epoch_script(20, 5), max_cycles=600)
    epochs = [(d[0], d[5]) for d in run.dispatches]
    assert all(e == (0 if c < 20 else 5) for c, e in epochs)   # sampled from the edge after the change
    # jobs were live across the change (the check has something to watch)
    live_across = [d for d in run.dispatches if d[0] < 20 and any(r[2] == d[2] and r[0] > 21 for r in run.retires)]
    assert live_across
    if fault:
        assert run.fired() == ["a_route_epoch_stable"]
    else:
        assert run.fired() == []


@pytest.mark.parametrize("fault", ["", "tie_lowest"])
def test_ties_break_round_robin_keeping_imbalance_bounded(backend, fault):
    # No rate measured yet (all 0 = unknown, equally loaded): only the tie-break decides.
    jobs = [4] * 32
    run = run_distributor(faulted(backend, fault), policy=SRA, fault=fault, jobs=jobs, svc_rate=[0, 0, 0, 0],
                          service=[2, 2, 2, 2], depth=4, imbalance_budget=8, max_cycles=500)
    assert run.armed >= run.cycles - 2    # no rate measured, every target enabled: armed by design state
    if fault:
        assert run.fired() == ["a_bounded_imbalance"]
        assert [d[1] for d in run.dispatches[:4]] == [0, 0, 0, 0]
    else:
        assert run.fired() == []
        assert [d[1] for d in run.dispatches[:8]] == [0, 1, 2, 3, 0, 1, 2, 3]


def test_no_free_slot_no_dispatch():
    # Targets never complete: exactly N_JOB jobs are accepted, then s_axis_job_tready stays low.
    run = run_distributor("myhdl", policy=RR, jobs=[2] * 40, depth=64, hold_completions=True, max_cycles=80)
    assert run.accepted == Geometry().n_job == len(run.dispatches)
    assert sorted(d[2] for d in run.dispatches) == list(range(Geometry().n_job))


def test_rejects_impossible_parameters():
    with pytest.raises(ValueError, match="POLICY"):
        work_distributor(**distributor_signals(), POLICY=7)
    s = distributor_signals(Geometry(n_tgt=5))
    with pytest.raises(ValueError, match="too narrow"):
        work_distributor(**s)
    s = distributor_signals(Geometry(cnt_w=4))
    with pytest.raises(ValueError, match="count up to"):
        work_distributor(**s)
    s = distributor_signals()
    s["retire_work"] = s["retire_tid"]
    with pytest.raises(ValueError, match="retire_work"):
        work_distributor(**s)
