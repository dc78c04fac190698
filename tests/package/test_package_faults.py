"""Each package assertion fires on its broken variant, in the whole co-simulated
package, in the Icarus co-simulation and in batched Icarus: exactly its own
failure output, first at the same cycle on both back ends (under `-m slow` also
on Verilator); the correct design under the same stimulus fires nothing.  A
broken variant is a package fault (cosim/package/faults.py, an edit of the
converted Verilog: MyHDL never runs it) or the round-robin policy.  They are
the notes' own failure lenses: a completion without its generation check
(a stale completion retires a recycled slot's new job), a retry that
allocates, a route epoch rewritten under live jobs, round-robin keeping a
disabled die in the rotation, the illustrative selection loop that breaks ties
to target 0, and a package that feeds the service-rate estimator transport
retries as completed work."""
import functools

import pytest

from cosim.package.package_bench import FAULT_BASE, broken_variants, live_slots, run_package
from hdl.package.package_assertion_monitor import ASSERTIONS
from hdl.package.work_distributor import POLICY_ROUND_ROBIN

# A compute-bound package (HBM and D2D ample), a 60-job phase.
BASE = FAULT_BASE


@functools.lru_cache(maxsize=None)
def run(setup, backend="icarus-2005"):
    return run_package(setup, backend)


@functools.lru_cache(maxsize=None)
def variants():
    return broken_variants(run(BASE))


def test_every_assertion_has_a_broken_variant():
    assert sorted(variants()) == sorted(ASSERTIONS)


@pytest.mark.parametrize("assertion", ASSERTIONS)
def test_broken_variant_fires_exactly_its_assertion_on_both_back_ends(assertion):
    bad, good = variants()[assertion]
    firsts = {}
    for backend in ("icarus", "icarus-2005"):
        r = run(bad, backend)
        fired = r.fired()
        assert list(fired) == [assertion], (backend, fired)
        firsts[backend] = fired[assertion]
    assert firsts["icarus"] == firsts["icarus-2005"]
    assert run(bad, "icarus").trace == run(bad, "icarus-2005").trace
    ok = run(good)
    assert ok.fired() == {} and ok.finished
    if all(good.enable):
        assert ok.armed_cycles() > ok.stream_cycles // 2  # the imbalance check ran most of the phase
    else:
        assert ok.armed_cycles() == 0                     # a disabled die: imbalance is correct


@pytest.mark.slow
@pytest.mark.parametrize("assertion", ASSERTIONS)
def test_broken_variant_fires_exactly_its_assertion_under_verilator(assertion):
    # The third back end (one Verilator build per broken package): the same single
    # failure output, first at the same cycle, and every output equal to batched Icarus.
    bad, _ = variants()[assertion]
    ver, ref = run(bad, "verilator"), run(bad, "icarus-2005")
    assert list(ver.fired()) == [assertion]
    assert ver.fired() == ref.fired() and ver.trace == ref.trace


def test_stale_completion_releases_the_barrier_early():
    # The notes' failure lens: without the generation check a late completion retires the
    # slot's new job; the package then believes work finished that a die still holds.  Aimed
    # at the phase's last live job, it completes the phase count: the barrier starts (and
    # the phase ends) while that die is still computing.
    # Round-robin with die 2 at half rate, so the phase's last job is die 2's and lingers.
    setup = BASE.with_(policy=POLICY_ROUND_ROBIN, die_rate=(8, 8, 4, 8))
    ok = run(setup)
    last = max(c for c in range(ok.cycles) if ok.trace["retire_fire"][c])
    (slot, gen), = live_slots(ok, last).items()
    c = last - 6                                      # the job is live, two thirds through its service
    assert live_slots(ok, c)[slot] == gen >= 2
    stale = ((c, slot, (gen - 1) % 16),)
    for fault, early in (("no_gen_check", True), ("", False)):
        r = run(setup.with_(fault=fault, late_completions=stale))
        end = next(c for c in range(r.cycles) if r.trace["phase_done"][c])
        assert (r.trace["die_busy"][end] != 0) == early
        assert (r.stream_cycles < ok.stream_cycles - 4) == early
        assert list(r.fired()) == (["a_retire_once"] if early else [])


def test_retry_allocating_a_job_never_finishes_the_phase():
    # The second semantic job (the retried job's id again) is sent as a retry, which the die
    # drops: it never retires, and it took the place of a real job of the phase.
    bad, good = variants()["a_retry_creates_no_job"]
    assert run(good).finished and not run(bad).finished
    r = run(bad)
    tids = [r.trace["m_job_tid"][c] for c in range(r.cycles) if r.trace["dispatch_fire"][c]]
    assert len(tids) == BASE.phase_jobs and len(set(tids)) == BASE.phase_jobs - 1


def test_round_robin_dispatches_to_the_disabled_die_and_hangs():
    # The notes' BUG 3: the disabled (hung) die stays in the rotation; the phase never ends.
    bad, good = variants()["a_no_dispatch_to_disabled"]
    assert not run(bad).finished
    ok = run(good)
    assert ok.finished and ok.final("accepted_work")[2] == 0
