"""The fabric chapter's arithmetic: exact balls-in-bins checked by brute force
and by sampling, the numerically exact large-m method checked against the
exact one, the RTL integer models, and every seed figure reproduced or its
disagreement explained by a computed number."""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from golden.fabric import fabric_math as fm


# --- exact distribution ---------------------------------------------------------------
@pytest.mark.parametrize("m,n", [(4, 4), (5, 3), (3, 5), (6, 4), (7, 2), (1, 6), (0, 3)])
def test_exact_pmf_matches_brute_force(m, n):
    pmf = fm.max_load_pmf_exact(m, n)
    assert sum(pmf) == 1
    brute = fm.max_load_pmf_bruteforce(m, n)
    assert {k: p for k, p in enumerate(pmf) if p} == brute


def test_exact_pmf_sums_to_one_and_p_max1_is_a_permutation_count():
    pmf = fm.max_load_pmf_exact(32, 32)
    assert sum(pmf) == 1
    assert pmf[1] == Fraction(math.factorial(32), 32 ** 32)       # one flow per uplink: a permutation
    assert pmf[32] == Fraction(32, 32 ** 32)                       # all on one uplink
    assert pmf[0] == 0


def test_occupied_and_expectation_by_enumeration():
    m, n = 5, 4
    assign = list(itertools.product(range(n), repeat=m))
    occ = Fraction(sum(len(set(a)) for a in assign), len(assign))
    emax = Fraction(sum(max(a.count(b) for b in range(n)) for a in assign), len(assign))
    assert fm.occupied_expected_exact(m, n) == occ
    assert fm.expected_max_exact(m, n) == emax
    assert fm.expected_from_cdf(fm.job_max_cdf_exact(m, n, 1)) == emax


def test_job_level_maximum_by_enumeration():
    # two leaves, 3 flows on 2 uplinks each: enumerate both leaves together
    m, n = 3, 2
    leaf = list(itertools.product(range(n), repeat=m))
    vals = [max(max(a.count(b) for b in range(n)), max(c.count(b) for b in range(n))) for a in leaf for c in leaf]
    assert fm.expected_from_cdf(fm.job_max_cdf_exact(m, n, 2)) == Fraction(sum(vals), len(vals))


def test_exact_distribution_agrees_with_monte_carlo():
    rng = np.random.default_rng(2024)
    trials = 40000
    paths = rng.integers(0, 32, size=(trials, 32))
    loads = np.zeros((trials, 32), np.int64)
    np.add.at(loads, (np.repeat(np.arange(trials), 32), paths.ravel()), 1)
    mx = loads.max(axis=1)
    pmf = [float(p) for p in fm.max_load_pmf_exact(32, 32)]
    for k in (2, 3, 4, 5, 6):
        p = pmf[k]
        z = (np.mean(mx == k) - p) / math.sqrt(p * (1 - p) / trials)
        assert abs(z) < 4.5, (k, z)
    sd = fm.max_load_sd(32, 32)
    assert abs(mx.mean() - float(fm.expected_max_exact(32, 32))) < 4.5 * sd / math.sqrt(trials)


def test_poissonization_matches_exact():
    for m, n in ((64, 32), (40, 8), (30, 3)):
        exact = np.cumsum([float(p) for p in fm.max_load_pmf_exact(m, n)])
        ts = list(range(m // n, min(m, m // n + 25)))
        approx = fm.max_load_cdf_poisson(m, n, ts)
        assert np.max(np.abs(exact[ts] - approx)) < 1e-10, (m, n)


def test_large_m_distribution_is_normalised_and_ordered():
    d = fm.max_load_dist(32 * 100, 32)
    assert d.method == "poisson"
    assert abs(d.pmf.sum() - 1) < 1e-12 and np.all(np.diff(d.cdf) >= 0)
    assert 100 < d.expected() < 100 + 100 * (fm.imbalance_closed_form(100) - 1) * 1.5
    # the closed form is an upper-side approximation within 8% over the seed's range
    for lam in (1, 2, 8, 100):
        ratio = fm.imbalance_closed_form(lam) / (fm.max_load_dist(32 * lam, 32).expected() / lam)
        assert 1.0 < ratio < 1.08


def test_independent_poisson_approximation():
    # E[max of 32 iid Poisson(1)] from its own CDF, summed independently
    cdf = np.cumsum([math.exp(-1) / math.factorial(k) for k in range(40)])
    direct = float(np.sum(1 - cdf ** 32))
    assert abs(fm.expected_max_independent_poisson(1.0) - direct) < 1e-9
    assert fm.expected_max_independent_poisson(1.0) < float(fm.expected_max_exact(32, 32))


# --- RTL integer models --------------------------------------------------------------------
def test_eff_pct_lookup_buckets():
    # ours: seven buckets, 94 % above 100 flows per uplink
    assert [fm.eff_pct_lookup(f * 32, 32) for f in (1, 2, 3, 4, 5, 8, 9, 20, 21, 100, 101, 1023)] == \
        [28, 37, 46, 46, 56, 56, 67, 67, 82, 82, 94, 94]
    assert fm.eff_pct_lookup(63, 32) == 28          # integer division: 1 flow per uplink
    # the seed's SystemVerilog as written: six, so 3 200 and 32 736 flows both read 82 %
    assert [fm.seed_sv_eff_pct_lookup(f * 32, 32) for f in (1, 20, 21, 100, 101, 1023)] == [28, 67, 82, 82, 82, 82]


def test_efficiency_table_is_the_rounded_curve():
    """Every entry of the lookup is 100 lam / E[max] at its bucket's point, rounded; the
    seed's six entries are the first six."""
    assert fm.eff_pct_table_from_curve() == fm.EFF_PCT
    assert fm.EFF_PCT[:6] == fm.SEED_SV_EFF_PCT


def test_seed_sv_ring_model_integer_arithmetic():
    r = fm.seed_sv_ring_model([100] * 31 + [25])
    assert r["steps_total"] == 2046 and r["step_bytes_kb"] == 8192 * 1024 // 1024
    assert r["step_time_us"] == 8192 * 8 // 25
    assert r["collective_time_ms"] == (8192 * 8 // 25) * 2046 // 1000
    assert r["ideal_time_ms"] == (8192 * 8 // 100) * 2046 // 1000 == 1340
    assert r["slowdown_x100"] == r["collective_time_ms"] * 100 // r["ideal_time_ms"]
    assert fm.seed_sv_ring_model([0, 100])["step_time_us"] == 0xFFFFFFFF


def test_seed_sv_stall_accountant_truncates_hours_first():
    s = fm.seed_sv_stall_accountant(1279, 4503)
    assert s["lost_ms_per_collective"] == 3224
    assert s["accel_seconds_lost"] == 3224 * 1024 // 1000
    assert s["wall_hours_per_run"] == 3224 * 100000 // 3_600_000 == 89
    assert s["accel_hours_per_run"] == 89 * 1024 == 91136
    assert fm.seed_sv_stall_accountant(10, 5)["lost_ms_per_collective"] == 0


def test_seed_sv_all_to_all_model():
    a = fm.seed_sv_all_to_all_model(1024)
    assert a["flows_per_leaf_o"] == 32 * 1023 and a["flows_per_uplink"] == 1023
    assert a["efficiency_pct"] == 82 and a["egress_mb"] == 1023
    assert a["ideal_ms"] == 1023 * 8 // 100 and a["time_ms"] == (1023 * 8 // 100) * 100 // 82


# --- remedies ------------------------------------------------------------------------------------
def test_greedy_is_perfect_up_to_the_path_count():
    for m, n in ((32, 32), (33, 32), (64, 32), (100, 7), (1, 5)):
        assert fm.greedy_max_load(m, n) == -(-m // n)


def test_striping_models():
    one = fm.striping_mc(1, trials=20000, seed=3)
    assert one["slowdown_sum"] == one["slowdown_split"]          # one stripe: both models are max / 1
    assert abs(one["slowdown_sum"] - float(fm.expected_max_exact(32, 32))) < 4.5 * one["slowdown_sum_se"]
    eight = fm.striping_mc(8, trials=20000, seed=3)
    # equal byte split == E[max of 256 flows on 32 uplinks] / 8, computed exactly
    assert abs(eight["slowdown_split"] - fm.max_load_dist(256, 32).expected() / 8) < 4.5 * eight["slowdown_split_se"]
    assert 1 < eight["slowdown_sum"] < eight["slowdown_split"]


def test_flowlet_keeps_the_mean_and_shrinks_the_spread():
    f = fm.flowlet_distribution()
    assert f["mean_slowdown"] == float(fm.expected_max_exact(32, 32))
    assert abs(f["sd_flowlet"] * math.sqrt(2046) - f["sd_pinned"]) < 1e-12
    assert f["p99_pinned"] == 6 and f["mean_slowdown"] < f["p99_flowlet"] < 3.6


def test_hierarchical_and_ring_bytes():
    assert fm.ring_bytes_per_participant(1024) == Fraction(2 * 1023 * 8 * 10**9, 1024)
    assert fm.hierarchical_time_s() == Fraction(2 * 31 * 8 * 10**9 * 8, 32 * 100 * 10**9)
    assert fm.hierarchical_time_s() < fm.ring_ideal_time_s()


# --- every seed figure ------------------------------------------------------------------------------------
ROWS = fm.seed_comparison(striping_trials=8000, seed=7)


@pytest.mark.parametrize("row", ROWS, ids=[r.key for r in ROWS])
def test_seed_figure(row):
    if row.agrees:
        assert abs(row.computed - row.seed) <= row.tol * (1 + 1e-9)
        return
    # a disagreement must carry an explanation whose own number accounts for it
    assert row.kind in ("explained", "sampling", "slip", "missing"), row.key
    assert row.explanation and row.source
    if row.kind == "explained":
        assert row.alt_lo - row.tol <= row.seed <= row.alt_hi + row.tol, (row.key, row.alt_lo, row.alt_hi)
    elif row.kind == "sampling":
        # small enough to be the sampling error of a Monte Carlo of a few hundred trials or more
        assert row.trials_2sigma >= 200, (row.key, row.trials_2sigma)
        assert "trial count" in row.explanation and "1 000" not in row.explanation
    elif row.kind == "slip":
        assert abs(row.z) < 3 * row.tol, (row.key, row.z)
    else:
        assert row.z == sum(fm.SEED_SV_FLOPS.values())


def test_headline_figures_are_covered():
    keys = {r.key for r in ROWS}
    assert {"p_max1", "e_max", "eff_32", "p_34", "model_a", "a2a_eff", "actual_s", "accel_s", "stripe8_s"} <= keys
    by = {r.key: r for r in ROWS}
    assert by["p_max1"].agrees and by["p_34"].agrees            # 1.8e-13 and 87.8% hold exactly
    assert not by["e_max"].agrees and abs(by["e_max"].computed - 3.5329) < 1e-4
