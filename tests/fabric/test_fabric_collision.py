"""The chapter's collision story in hardware (hdl.fabric.collective_fabric, RATES="paths"),
cycle by cycle, against golden.fabric.fabric_collision's prediction from the flows alone.

Ring connections are real RoCEv2 5-tuples of the 32 x 32 fabric (golden.fabric.ecmp);
ecmp_hash_unit hashes them, load_aware_selector places them, ring_link_rates gives
each its share of its uplink, the tracker follows the slowest member at every step
and ring_step_engine / ring_allreduce_model show the longer step.  Every output is
compared at every cycle of every ring step; the MyHDL block, batched Icarus (-g2005
and -g2012) and Verilator produce identical outputs at every cycle; and the 34
properties hold throughout -- while the ring runs at half or a third of line rate.
"""
import functools

import pytest

from cosim.fabric.fabric_collision import Phase, collision_config, refused_property_scenario, run_collision, unpack
from cosim.fabric.fabric_collision import one_collision as shared_one_collision
from cosim.fabric.fabric_properties import decode
from golden.fabric import fabric_collision as fc

CHUNK = 1000                  # units per link per step: 10 cycles at 100 Gb/s


@functools.lru_cache(maxsize=None)
def one_collision():
    return shared_one_collision()


N_SMALL = 8                   # ring participants in the small runs: 14 steps


def small_scenario():
    epoch, leaf, conns = one_collision()
    cfg = collision_config(8, 8, participants=N_SMALL, s_mb=1, chunk=CHUNK)
    hashed = fc.predict(conns, 8, 8, False, CHUNK, N_SMALL, 1)
    aware = fc.predict(conns, 8, 8, True, CHUNK, N_SMALL, 1)
    steps = 2 * (N_SMALL - 1)
    phases = [Phase(False, steps * hashed.step_cycles + 6), Phase(True, steps * aware.step_cycles + 6)]
    return conns, cfg, phases, (hashed, aware)


@functools.lru_cache(maxsize=None)
def small_run(simulator, generation="2012"):
    conns, cfg, phases, _ = small_scenario()
    return run_collision(conns, cfg, phases, simulator, generation)


def check_phase(samples, start, pred, steps, cycles, tracker_state):
    """Every cycle of one ring all-reduce against the prediction; returns the tracker state."""
    members = len(pred.rates)
    s = samples[start]                                  # settled, before the start edge
    assert unpack(s["link_gbps"], members) == pred.rates
    schedule = fc.ring_schedule(pred.rates, CHUNK, steps, cycles)
    wait = 0
    ticks = []
    for i, (tick, done, waiting) in enumerate(schedule, start=1):
        o = samples[start + i]
        assert (o["ring_step"], o["ring_steps_done"], o["step_wait"]) == (tick, done, wait), f"cycle {i}"
        assert o["ring_running"] == int(done < steps), f"cycle {i}"
        assert (o["collective_gbps"], o["slowest_member"], o["mean_gbps"]) == \
               (pred.collective_gbps, pred.slowest_member, pred.mean_gbps)
        assert {k: o[k] for k in ("step_time_us", "collective_time_ms", "slowdown_x100")} == \
               {k: pred.ring[k] for k in ("step_time_us", "collective_time_ms", "slowdown_x100")}
        assert o["accel_seconds_lost"] == pred.accel_seconds_lost
        assert o["violations"] == 0, decode(o["violations"])
        if tick:
            ticks.append(i)
            assert o["step_cycles"] == (pred.step_cycles if len(ticks) > 1 else o["step_cycles"])
        wait += waiting
    assert ticks == [pred.step_cycles * j for j in range(1, steps + 1)]
    # the tracker samples at every step: a pinned collision keeps the same slowest member
    prev, count = tracker_state
    expect = fc.tracker_unchanged([pred.slowest_member] * steps, prev, count)
    got = [samples[start + t + 1]["slowest_unchanged"] for t in ticks]
    assert got == expect
    return pred.slowest_member, expect[-1]


@pytest.mark.parametrize("simulator,generation", [("myhdl", ""), ("icarus", "2005"), ("icarus", "2012")])
def test_one_collision_makes_every_step_of_the_ring_longer(simulator, generation):
    conns, cfg, phases, (hashed, aware) = small_scenario()
    run = small_run(simulator, generation or "2012")
    steps = 2 * (N_SMALL - 1)
    # the flows land where golden's CRC-32 puts them: two ring links share one uplink
    for phase, pred in zip(range(2), (hashed, aware)):
        placed = run.placed_at[phase]
        assert [run.samples[i]["flow_placed"] for i in placed] == [1] * 8
        assert [run.samples[i]["chosen_path"] for i in placed] == pred.paths_of
        s = run.samples[run.starts[phase]]
        assert unpack(s["conn_path"], 8, 8) == pred.paths_of
        assert unpack(s["path_load_gbps"], 8) == pred.loads
        assert unpack(s["stripe_rates"], 8) == pred.conn_gbps
    assert hashed.busiest_flows == 2 and sorted(hashed.rates) == [50, 50] + [100] * 6
    assert hashed.step_cycles == 2 * aware.step_cycles == 20                   # every step twice as long
    assert hashed.wait_per_step == 6 * 10 and aware.wait_per_step == 0         # six healthy links wait
    assert hashed.ring["slowdown_x100"] == 200 and aware.ring["slowdown_x100"] == 100
    assert aware.rates == [100] * 8 and aware.perfect_placements == 8
    state = (0, 0)
    for phase, pred in zip(range(2), (hashed, aware)):
        state = check_phase(run.samples, run.starts[phase], pred, steps, phases[phase].run_cycles, state)
    assert run.samples[-1]["violations_seen"] == 0 and run.samples[-1]["accounting_error"] == 0
    # Section 15's diagnostic: the same member slowest at every step reads as a pinned
    # collision (PINNED caveat); no job minimum was imported, so no rate is claimed
    end_of_hashed = run.samples[run.starts[0] + phases[0].run_cycles]
    assert end_of_hashed["pinned_pct"] >= 85 and end_of_hashed["caveats"] & 0b0011 == 0b0011
    assert (end_of_hashed["job_rate_claim"], end_of_hashed["rate_claim_valid"]) == (0, 0)
    # the load-aware run took half the cycles of the hashed one, step for step
    assert run.samples[run.starts[0] + steps * 20]["ring_step"] == 1
    assert run.samples[run.starts[1] + steps * 10]["ring_step"] == 1


@pytest.mark.parametrize("simulator,generation", [("icarus", "2005"), ("icarus", "2012")])
def test_batched_collision_equals_myhdl_every_cycle(simulator, generation):
    assert small_run(simulator, generation).samples == small_run("myhdl").samples


def test_collision_under_verilator_equals_myhdl():
    assert small_run("verilator").samples == small_run("myhdl").samples


def test_seed_geometry_one_leaf_32_ring_links_on_32_uplinks():
    """Section 8's set-up: leaf 0's 32 ring flows (strided ring, epoch 0), N = 1 024,
    S = 8 000 MB, on 32 uplinks; batched Icarus, the first 12 steps of each collective."""
    conns = fc.ring_connections(0, 32, 1, 0)
    chunk = 100
    hashed = fc.predict(conns, 32, 32, False, chunk, 1024, 8000)
    aware = fc.predict(conns, 32, 32, True, chunk, 1024, 8000)
    cfg = collision_config(32, 32, participants=1024, s_mb=8000, chunk=chunk)
    steps_seen = 12
    phases = [Phase(False, steps_seen * hashed.step_cycles), Phase(True, steps_seen * aware.step_cycles)]
    run = run_collision(conns, cfg, phases, "icarus")
    k = hashed.busiest_flows
    assert k == 3 and fc.exact_slowdown(hashed) == 3 and fc.exact_slowdown(aware) == 1
    for phase, pred in ((0, hashed), (1, aware)):
        s = run.samples[run.starts[phase] + 1]
        assert unpack(s["link_gbps"], 32) == pred.rates
        assert (s["collective_gbps"], s["slowest_member"]) == (pred.collective_gbps, pred.slowest_member)
        assert {k_: s[k_] for k_ in pred.ring if k_ in s} == {k_: v for k_, v in pred.ring.items() if k_ in s}
        assert s["accel_seconds_lost"] == pred.accel_seconds_lost
        # (the first collective is still running when the second starts: the start restarts it)
        ticks = [i - run.starts[phase] for i in range(run.starts[phase] + 1, run.starts[phase] + steps_seen *
                                                      pred.step_cycles + 1) if run.samples[i]["ring_step"]]
        assert ticks == [pred.step_cycles * j for j in range(1, steps_seen + 1)]
    # the seed's figures from our blocks: 1 278 ms ideal; a k = 3 collision, integer 33 Gb/s
    assert hashed.ring["ideal_time_ms"] == 1278 and hashed.collective_gbps == 100 // 3
    assert hashed.ring["collective_time_ms"] == 8000 * 8 * 2046 // (1024 * 33) == 3875
    assert aware.ring["collective_time_ms"] == 1278 and aware.accel_seconds_lost == 0
    assert all(o["violations"] == 0 for o in run.samples)


def test_striped_ring_links_sum_their_connection_shares():
    """Remedy 1 in hardware: 8 ring links x 4 stripes = 32 connections hashed onto 8
    uplinks; each link's rate is the sum of its stripes' shares (the seed's model)."""
    epoch, leaf, _ = one_collision()
    conns = fc.ring_connections(leaf, 8, 4, epoch)
    pred = fc.predict(conns, 8, 8, False, CHUNK, N_SMALL, 1)
    cfg = collision_config(8, 8, stripes=4, participants=N_SMALL, s_mb=1, chunk=CHUNK)
    run = run_collision(conns, cfg, [Phase(False, 3 * pred.step_cycles)], "icarus")
    s = run.samples[run.starts[0] + 1]
    assert unpack(s["conn_path"], 32, 8) == pred.paths_of
    assert unpack(s["stripe_rates"], 32) == pred.conn_gbps
    assert unpack(s["link_gbps"], 8) == pred.rates
    assert pred.rates == [sum(pred.conn_gbps[4 * m:4 * m + 4]) for m in range(8)]
    assert s["collective_gbps"] == min(pred.rates) and s["violations"] == 0
    ticks = [i for i in range(len(run.samples)) if run.samples[i]["ring_step"]]
    assert [t - run.starts[0] for t in ticks] == [pred.step_cycles * j for j in (1, 2, 3)]


def test_refused_property_fails_on_the_correct_fabric():
    """Section 4: 'improving one participant can make the collective slower ... a
    load-balancing scheme that reassigns flows to even out utilisation can move a flow
    onto the busiest uplink, improving the aggregate and lengthening every step.
    Section 20's refused property is exactly this observation written as an assertion.'

    Six ring links in pairs on three uplinks run at 50 Gb/s each (aggregate 300).  A
    rebalancer moves links 4 and 5 to idle uplinks and link 2 onto uplink 0: four
    uplinks now carry traffic instead of three and the aggregate rises to 399 Gb/s, but
    uplink 0 carries three links, so the ring runs at 33 Gb/s and every step is longer.
    The 34 properties hold throughout; the refused one fails."""
    r = refused_property_scenario("icarus")
    run = r.run
    assert r.before.rates == [50] * 6 and r.after.rates == [33, 33, 33, 100, 100, 100]
    b, a = run.samples[run.starts[0] + 1], run.samples[run.starts[1] + 1]
    assert (b["mean_gbps"], b["collective_gbps"]) == (50, 50)
    assert (a["mean_gbps"], a["collective_gbps"]) == (66, 33)
    assert sum(unpack(a["link_gbps"], 6)) == 399 > sum(unpack(b["link_gbps"], 6)) == 300
    assert (r.before.step_cycles, r.after.step_cycles) == (20, 31)
    assert r.failures == [run.starts[1] + r.after.step_cycles]      # the first step after the rebalance
    assert all(o["violations"] == 0 for o in run.samples)


def test_two_leaves_the_job_minimum_is_imported_not_local():
    """Section 6's point two and Section 15: each leaf sees only its own ring links, and
    the job runs at the minimum over all of them.  Leaf A's links collide once (local
    minimum 50 Gb/s); leaf B places its links load-aware (local minimum 100).  The job's
    minimum is a small all-reduce in the control plane (here: the bench, from each
    leaf's own collective_gbps in a first pass), imported into both leaves.  Until the
    import neither leaf may claim a job rate; after it both publish 50 -- leaf B's local
    100 would overstate the job by 2x.  A stale import above a leaf's own minimum is
    clamped.  The 34 properties hold on both leaves throughout."""
    epoch, leaf, conns_a = one_collision()
    conns_b = fc.ring_connections((leaf + 1) % 32, 8, 1, epoch)
    cfg = collision_config(8, 8, participants=N_SMALL, s_mb=1, chunk=CHUNK)
    budget = 2 * (N_SMALL - 1) * 20 + 6
    phase_a, phase_b = [Phase(False, budget, end_flows=False)], [Phase(True, budget, end_flows=False)]
    # pass 1: each leaf alone, nothing imported
    first = [run_collision(c, cfg, ph, "icarus") for c, ph in ((conns_a, phase_a), (conns_b, phase_b))]
    local = [r.samples[r.starts[0] + 1]["collective_gbps"] for r in first]
    assert local == [50, 100]
    job_min = min(local)                                   # the control plane's all-reduce of the minima

    def importing(value):
        def edit(vectors, starts):
            for j in range(starts[0] + 20, len(vectors)):
                vectors[j]["job_min_valid"], vectors[j]["job_min_gbps"] = 1, value
        return edit

    second = [run_collision(c, cfg, ph, "icarus", edit=importing(job_min))
              for c, ph in ((conns_a, phase_a), (conns_b, phase_b))]
    for r, lo in zip(second, local):
        s = r.starts[0]
        before, after = r.samples[s + 19], r.samples[-1]
        assert (before["job_rate_claim"], before["rate_claim_valid"], before["caveats"] & 1) == (0, 0, 1)
        assert (after["job_rate_claim"], after["rate_claim_valid"], after["caveats"] & 1) == (1, 1, 0)
        assert after["job_rate_gbps"] == job_min <= lo == after["collective_gbps"]
        assert all(o["violations"] == 0 for o in r.samples)
    # a stale import (leaf A told 100, above its own 50) is published as A's own minimum
    stale = run_collision(conns_a, cfg, phase_a, "icarus", edit=importing(100))
    assert stale.samples[-1]["job_rate_gbps"] == 50 and all(o["violations"] == 0 for o in stale.samples)
