"""The resource-graph model against the design notes' worked figures (each
quoted figure is recomputed here from the model, never copied from its output)."""
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden.package import resource_graph as rg

BASE = rg.Package()


def test_worked_example_four_dies():
    r = rg.evaluate(BASE)
    assert r.rates == {"compute": 16, "hbm": 10, "d2d": 12}       # steps 1-3
    assert (r.service, r.binding) == (10, "hbm")                 # step 4
    assert (r.stream_cycles, r.phase_cycles) == (120, 320)       # step 5
    assert r.compute_cycles == 75                                # step 6
    assert round(float(r.utilisation) * 100) == 23               # "about 23 %"
    assert r.utilisation == Fraction(75, 320)
    assert int(r.barrier_share * 100) == 62                      # "62 % of the phase"
    assert r.dominant == "barrier"


def test_doubling_compute_changes_nothing_when_hbm_binds():
    r = rg.evaluate(BASE.with_(compute_per_die=8))
    assert r.rates["compute"] == 32 and r.service == 10 and r.phase_cycles == 320


def test_streaming_changes_cap_at_about_1_6x():
    assert rg.streaming_bound_speedup(BASE) == Fraction(8, 5)


def test_die_count_table():
    rows = {row["dies"]: row for row in rg.die_scaling((1, 2, 4, 8))}
    assert [rows[n]["result"].phase_cycles for n in (1, 2, 4, 8)] == [500, 400, 320, 320]
    assert [rows[n]["result"].binding for n in (1, 2, 4, 8)] == ["compute", "d2d", "hbm", "hbm"]
    assert rows[2]["speedup"] == Fraction(5, 4)                                  # "1.25x, not 2x"
    assert round(float(rows[4]["speedup"]), 2) == 1.56                          # "1.56x"
    assert rows[8]["step_gain"] == 1                                             # "exactly nothing"
    assert rows[1]["result"].barrier_share == Fraction(2, 5)                     # "40 % of the single-die phase"
    r8 = rows[8]["result"]
    assert (r8.rates["compute"], r8.rates["d2d"], r8.rates["hbm"]) == (32, 24, 10)
    assert "d2d" not in rows[1]["result"].rates                                  # one die: nothing crosses


def test_single_die_with_a_d2d_node_would_contradict_the_notes():
    # If one die still paid the 50 % crossing, D2D (3/cycle) would bind and the barrier
    # would be 1/3 of the phase, not the 40 % the notes state: the node must be absent.
    r = rg.evaluate(rg.Package(dies=1))
    forced = Fraction(1200) / (Fraction(3, 2) / Fraction(1, 2)) + 200
    assert r.barrier_share == Fraction(2, 5) and Fraction(200) / forced == Fraction(1, 3)


def test_bottleneck_migration():
    rows = {row["change"]: row for row in rg.bottleneck_migration()}
    hbm2 = rows["HBM x2"]
    assert hbm2["binding"] == "d2d" and hbm2["phase_cycles"] == 300
    assert hbm2["projected"] == 260 and hbm2["phase_cycles"] > hbm2["projected"]   # a fraction of the gain
    assert rows["HBM x2 + D2D x2"]["binding"] == "compute"
    barrier = rows["barrier / 2"]
    assert barrier["phase_cycles"] == 220
    bandwidth = [r for k, r in rows.items() if k not in ("baseline", "barrier / 2")]
    assert all(barrier["phase_cycles"] < r["phase_cycles"] for r in bandwidth)   # halving it beats them all


def test_degraded_die_fluid_figures():
    full, half = Fraction(1, 2), Fraction(1, 4)
    healthy, degraded = [full] * 4, [full, full, half, full]
    assert rg.throughput_loss(degraded, healthy, 1200, "round_robin") == Fraction(1, 2)
    assert rg.throughput_loss(degraded, healthy, 1200, "service_rate") == Fraction(1, 8)
    shares = rg.split_work(1200, degraded, "service_rate")
    assert shares[2] == shares[0] / 2 and sum(shares) == 1200
    # Inside the worked example's graph HBM binds, so rate-aware dispatch loses nothing.
    graph = [Fraction(4), Fraction(4), Fraction(2), Fraction(4)]
    assert rg.throughput_loss(graph, [4] * 4, 1200, "service_rate", shared_rate=10) == 0
    assert rg.throughput_loss(graph, [4] * 4, 1200, "round_robin", shared_rate=10) == Fraction(1, 5)
    assert rg.degraded_phase([full, 0, full, full], 1200, "round_robin") is None


@pytest.mark.parametrize("kwargs,match", [({"dies": 0}, "at least one die"), ({"hbm_rate": 0}, "hbm_rate"),
                                          ({"cross_fraction": 2}, "cross_fraction"),
                                          ({"barrier_cycles": -1}, "barrier_cycles"),
                                          ({"compute_per_die": "x"}, "not a number")])
def test_rejects_impossible_packages(kwargs, match):
    with pytest.raises(ValueError, match=match):
        rg.Package(**kwargs)


rates = st.fractions(min_value=Fraction(1, 8), max_value=64, max_denominator=16)


@settings(max_examples=80, deadline=None)
@given(dies=st.integers(1, 16), c=rates, h=rates, d=rates, f=st.fractions(0, 1, max_denominator=8),
       barrier=st.integers(0, 500))
def test_model_properties(dies, c, h, d, f, barrier):
    p = rg.Package(dies=dies, compute_per_die=c, hbm_rate=h, d2d_per_die=d, cross_fraction=f, barrier_cycles=barrier)
    r = rg.evaluate(p)
    assert r.service == min(r.rates.values()) and r.rates[r.binding] == r.service
    assert 0 < r.utilisation <= 1
    assert r.phase_cycles == p.phase_units / r.service + barrier
    # Relieving any node never makes the phase slower; relieving a non-binding node changes nothing.
    for field, value in (("hbm_rate", 2 * h), ("compute_per_die", 2 * c), ("d2d_per_die", 2 * d)):
        r2 = rg.evaluate(p.with_(**{field: value}))
        assert r2.phase_cycles <= r.phase_cycles
    if r.binding != "hbm":
        assert rg.evaluate(p.with_(hbm_rate=2 * h)).phase_cycles == r.phase_cycles


# --------------------------------------------------------------------------- shared resources (fluid and per cycle)

def test_fair_rates_share_a_pool_equally_and_pass_on_what_a_die_cannot_use():
    assert rg.fair_rates([4, 4, 4, 4], [10]) == [Fraction(5, 2)] * 4
    assert rg.fair_rates([4, 4, 2, 4], [10, 12]) == [Fraction(8, 3)] * 2 + [2, Fraction(8, 3)]
    assert rg.fair_rates([4, 4, 4, 4], [40, 48]) == [4] * 4           # compute-bound: no pool binds
    assert rg.fair_rates([1, 0, 3], []) == [1, 0, 3]


def test_fluid_stream_reproduces_the_degraded_die_figures():
    # The notes' §13 and §18: four dies, 1200 units, die 2 at half rate, compute-bound.
    caps, healthy = [4, 4, 2, 4], [4] * 4
    pools = [40, 48]
    rr = 1 - rg.stream_cycles("round_robin", healthy, pools, 1200) / rg.stream_cycles("round_robin", caps, pools, 1200)
    sr = 1 - rg.stream_cycles("service_rate", healthy, pools, 1200) / rg.stream_cycles("service_rate", caps, pools,
                                                                                      1200)
    assert (rr, sr) == (Fraction(1, 2), Fraction(1, 8))
    # In the worked example's graph HBM binds: service-rate dispatch loses nothing, round-robin
    # still makes the slow die the phase clock (300 units at 2 per cycle).
    caps, pools = rg.package_pools(BASE)
    slow = [4, 4, 2, 4]
    assert rg.stream_cycles("service_rate", slow, pools, 1200) == rg.stream_cycles("service_rate", caps, pools,
                                                                                   1200) == 120
    assert rg.stream_cycles("round_robin", slow, pools, 1200) == 150
    # with dies finishing at different times the fair rates change mid-phase
    assert rg.fluid_stream([300, 300, 300, 300], [4, 4, 2, 4], [10]) == 150


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 63), min_size=2, max_size=8), st.lists(st.integers(0, 63), min_size=8, max_size=8),
       st.integers(0, 63), st.integers(0, 63), st.sampled_from([None, 0, 1, 2]), st.integers(0, 7))
def test_allocate_properties(want, link, hbm, d2d, shift, ptr):
    n = len(want)
    link = link[:n]
    grants, hcut, dcut = rg.allocate(want, link, hbm, d2d, shift, ptr % n)
    s = 0 if shift is None else shift
    caps = [w if shift is None else min(w, lk << s) for w, lk in zip(want, link)]
    assert all(0 <= g <= c for g, c in zip(grants, caps))
    assert sum(grants) <= hbm and (shift is None or sum(grants) <= d2d << s)
    short = any(g < c for g, c in zip(grants, caps))
    # a die is short only because a pool ran out: then that pool is fully granted
    assert short == (hcut or dcut)
    if hcut:
        assert sum(grants) == hbm
    if dcut:
        assert sum(grants) == d2d << s
    # every die gets at least an equal share of each pool (or all it can use)
    fair = min([hbm // n] + ([] if shift is None else [(d2d << s) // n]))
    assert all(g >= min(c, fair) for g, c in zip(grants, caps))


# --------------------------------------------------------------------------- partitioning (§11)

def test_partitioning_invariant():
    legal = {(c, m) for c, m, cp, mp, ok, _ in rg.partitioning_table(8) if ok}
    assert legal == {("SPX", "NPS1"), ("DPX", "NPS1"), ("DPX", "NPS2"), ("CPX", "NPS1"), ("CPX", "NPS2"),
                     ("CPX", "NPS4")}
    for c, m, cp, mp, ok, _ in rg.partitioning_table(8):
        assert ok == (mp <= cp)                 # memory partitions never exceed compute partitions
    # NPS4 needs CPX: the only compute mode of these with four or more partitions
    assert [c for c, m, *_, ok, _ in rg.partitioning_table(8) if m == "NPS4" and ok] == ["CPX"]
    # every memory partition has an owner, every compute partition exactly one memory partition
    owners = rg.check_partitioning("CPX", "NPS4", 8)
    assert sorted(p for ps in owners.values() for p in ps) == list(range(8)) and len(owners) == 4
    with pytest.raises(ValueError, match="must not exceed"):
        rg.check_partitioning("DPX", "NPS4", 8)
    with pytest.raises(ValueError, match="unknown memory mode"):
        rg.check_partitioning("CPX", "NPS3", 8)
    with pytest.raises(ValueError, match="do not split"):
        rg.check_partitioning("DPX", "NPS1", 3)
