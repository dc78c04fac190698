"""The collective-fabric chapter (seed 000), computed and co-simulated, as a Markdown report
with plots (`prism fabric`, cosim/cli/fabric.py).

`build_report(out, ...)` returns the text of DIR/fabric_report.md and writes
DIR/efficiency_vs_flows.png, DIR/max_load_distribution.png and DIR/striping.png.  Every figure
is shown with the seed's value, ours, and what produced ours: the golden models (golden/),
our RTL blocks (hdl/, co-simulated in a batched simulator in this run), or -- in its own
column -- the seed's SystemVerilog as written.
"""
from __future__ import annotations

import math
import os
import time
from fractions import Fraction

import numpy as np

from cosim.fabric import fabric_rtl
from cosim.fabric.fabric_collision import (ONE_COLLISION_CHUNK, SMALL_N, Phase, collision_config, one_collision,
                                           refused_property_scenario, run_collision, unpack)
from cosim.fabric.fabric_properties import PROPERTIES, REFUSED, SCENARIO_GROUPS, replay_batched, run_fabric
from cosim.figures import save_figure
from golden.fabric import ecmp
from golden.fabric import fabric_collision as fc
from golden.fabric import fabric_math as fm
from hdl.fabric import collective_pkg as pkg


def _fmt(v, digits=4):
    if isinstance(v, Fraction):
        v = float(v)
    if isinstance(v, float) and v.is_integer() and abs(v) >= 1e5:
        return f"{v:,.0f}"
    if isinstance(v, float) and (abs(v) >= 1e5 or (v != 0 and abs(v) < 1e-3)):
        return f"{v:.3e}"
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 10 else f"{v:,.{max(0, digits - len(str(int(abs(v)))))}f}"
    return str(v)


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def build_report(out, *, flows, trials, seed, impl_name, bin_fn, rtl_sim="icarus", properties=False) -> str:
    import matplotlib  # deferred, as in every report: matplotlib takes half a second to import
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t_start = time.perf_counter()
    md = []
    w = md.append

    sim_name = "batched Icarus (vvp, -g2012)" if rtl_sim == "icarus" else "Verilator"
    w("# Collective fabric (seed 000): the chapter's figures, computed and co-simulated\n")
    w(f"Fabric: {fm.LEAVES} leaves x {fm.ACC_PER_LEAF} accelerators = {fm.PARTICIPANTS} participants, "
      f"{fm.UPLINKS_PER_LEAF} uplinks per leaf at {fm.RATE_GBPS} Gb/s, gradient S = 8 GB (decimal), "
      f"{fm.STEPS_PER_RUN:,} steps per run.  Hash implementation for the Monte Carlo: {impl_name}; "
      f"{flows:,} flows per real-hash run; {trials:,} uniform striping trials (seed {seed}).  "
      f"RTL simulator: {sim_name}.\n")
    w("**What produced each number** (the *produced by* columns):\n")
    w(_table(("label", "meaning"), [
        ("exact", "golden/fabric/fabric_math.py: Python integers and fractions (e.g. a count over all 32^32 assignments)"),
        ("numerically exact", "float64 evaluation of an exact identity (Poissonized multinomial, FFT "
                              "convolution); no sampling"),
        ("Monte Carlo", "sampled; the trial count and seed are given where it is used"),
        ("RTL: <block>", f"our MyHDL block hdl/<block>.py, converted to Verilog and simulated in this run "
                         f"({sim_name}, cosim/sim/vector_batch.py) at the seed's parameters"),
        ("seed SV", "the seed's SystemVerilog as written, transcribed into integer arithmetic "
                    "(golden/fabric/fabric_math.py, seed_sv_*): not a design of ours; shown so that the seed's "
                    "RTL numbers can be told apart from ours"),
    ]))
    w("")

    # ---- seed vs computed ---------------------------------------------------------------
    rows = fm.seed_comparison(striping_trials=trials, seed=seed)
    w("## 1. Every figure the seed quotes, beside ours\n")
    w("`agree` = equal at the seed's stated precision.  Otherwise the explanation carries its own "
      "computed number: an interval, computed from the stated cause, that contains the seed's value "
      "(`explained`); the Monte Carlo size at which the deviation is two standard errors, for figures "
      "the seed may have sampled -- it never says how it obtained them (`sampling`); the count the "
      "explanation rests on (`missing`).  The seed's RTL figures are in Section 5.\n")
    table = []
    for r in rows:
        if r.agrees:
            verdict, note = "agree", ""
        else:
            verdict = r.kind
            extra = ""
            if r.kind == "explained" and r.alt_lo is not None:
                extra = (f" [explanation gives {_fmt(r.alt_lo)}]" if r.alt_lo == r.alt_hi
                         else f" [explanation gives {_fmt(r.alt_lo)}..{_fmt(r.alt_hi)}]")
            elif r.kind == "sampling":
                extra = f" [2 sigma at {r.trials_2sigma:,.0f} trials]"
            note = r.explanation + extra
        table.append((r.section, r.what, r.seed_text, _fmt(r.computed, 5), r.source, verdict, note))
    w(_table(("§", "figure", "seed", "ours", "produced by", "verdict", "explanation"), table))
    n_agree = sum(r.agrees for r in rows)
    w(f"\n{n_agree} of {len(rows)} figures agree at the seed's precision; the rest are explained above.\n")

    # ---- exact distribution ----------------------------------------------------------------
    m = n = 32
    pmf = fm.max_load_pmf_exact(m, n)
    e_max = fm.expected_max_exact(m, n)
    job_cdf = fm.job_max_cdf_exact(m, n, fm.LEAVES)
    job_pmf = [job_cdf[0]] + [job_cdf[k] - job_cdf[k - 1] for k in range(1, len(job_cdf))]
    e_job = fm.expected_from_cdf(job_cdf)
    w("## 2. The busiest of 32 uplinks carrying 32 flows (exact)\n")
    w(f"Counted over all 32^32 assignments with integer arithmetic (sum of the pmf = {sum(pmf)}).\n")
    w(_table(("k", "P(max = k), one leaf", "P(max = k), job = max over 32 leaves", "ring rate (Gb/s)"),
             [(k, f"{float(p):.6g}", f"{float(job_pmf[k]):.6g}", f"{100 / k:.1f}")
              for k, p in enumerate(pmf) if k and (p > 1e-15 or k == 1) and k <= 12]))
    w(f"\n* P(max = 1) = {float(pmf[1]):.4e} (exactly 32!/32^32); P(max in {{3, 4}}) = "
      f"{100 * float(pmf[3] + pmf[4]):.3f}%.\n"
      f"* E[max] = {float(e_max):.6f} (exact fraction with a {len(str(e_max.denominator))}-digit denominator); "
      f"efficiency 1/E[max] = {100 / float(e_max):.3f}%; expected rate E[1/max] = "
      f"{100 * float(fm.expected_inverse_max_exact(m, n)):.3f}%.  The seed's 3.52 / 28.4% is the "
      f"independent-Poisson approximation ({fm.expected_max_independent_poisson(1.0):.4f}).\n"
      f"* **The job's minimum is over all 32 leaves** (Section 6's point two): with every leaf drawing "
      f"independently, E[max over leaves] = {float(e_job):.4f}, i.e. the job runs at "
      f"{100 / float(e_job):.1f}% of line rate, not {100 / float(e_max):.1f}%.  Section 8's 4.5 s uses "
      f"the per-leaf figure; the job-level expectation is {float(fm.ring_ideal_time_s()) * float(e_job):.3f} s.\n")

    # ---- model A vs model B ----------------------------------------------------------------------
    occ = float(fm.occupied_expected_exact(m, n))
    w("## 3. Model A (independent flows) vs model B (a collective)\n")
    w(_table(("model", "aggregate of the 32-uplink group", "% of 3 200 Gb/s"),
             [("A: 100 Gb/s x non-empty uplinks", f"{100 * occ:.1f} Gb/s ({occ:.4f} non-empty)", f"{100 * occ / 32:.3f}"),
              ("B: 32 x 100 / max (expected time)", f"{3200 / float(e_max):.1f} Gb/s", f"{100 / float(e_max):.3f}"),
              ("B: expected rate 32 x 100 x E[1/max]", f"{3200 * float(fm.expected_inverse_max_exact(m, n)):.1f} Gb/s",
               f"{100 * float(fm.expected_inverse_max_exact(m, n)):.3f}")]))
    w(f"\nRatio A/B = {occ / 32 * float(e_max):.4f}.\n")

    # ---- efficiency curve and closed form -------------------------------------------------------------
    w("## 4. Efficiency vs flows per uplink; ring vs all-to-all\n")
    fpus = [1, 2, 3, 4, 6, 8, 12, 16, 20, 32, 50, 100, 200, 1023]
    # our all_to_all_model, co-simulated: an all-to-all over f + 1 participants is 32 f flows per leaf
    rtl_eff = [o["efficiency_pct"] for o in fabric_rtl.all_to_all([(pkg.COLL_ALLTOALL, f + 1) for f in fpus],
                                                                  simulator=rtl_sim)]
    curve = []
    for f, rtl in zip(fpus, rtl_eff):
        d = fm.max_load_dist(f * 32, 32)
        e = d.expected()
        curve.append((f, 100 * f / e, e / f, fm.imbalance_closed_form(f), 100 * f / fm.expected_max_independent_poisson(f),
                      rtl, fm.seed_sv_eff_pct_lookup(f * 32, 32), d.method))
    w(_table(("flows/uplink", "efficiency % (λ/E[max])", "imbalance E[max]/λ", "closed form 1+√(2 ln n/λ)",
              "closed form error %", "indep. Poisson %", "RTL: all_to_all_model efficiency_pct", "seed SV EFF_PCT",
              "method"),
             [(f, f"{e:.3f}", f"{i:.4f}", f"{c:.4f}", f"{100 * (c / i - 1):+.2f}", f"{p:.3f}", r, sv, meth)
              for f, e, i, c, p, r, sv, meth in curve]))
    w("\nThe lookup our blocks use (hdl/fabric/collective_pkg.py EFF_PCT = golden fabric_math.EFF_PCT_TABLE, kept equal "
      "by test_collective_blocks.py and equal to the rounded exact curve by test_fabric_math.py) is the seed's six "
      "entries plus a seventh, 94 % above 100 flows per uplink; the seed's six-entry table returns 82 % for "
      "everything above 20.\n")
    a2a = fm.max_load_dist(32 * 1023, 32)
    a2a_x = fm.max_load_dist(32 * 992, 32)
    w(f"\nRing all-reduce: 32 flows per leaf, 1 per uplink -> {100 / float(e_max):.2f}%.  All-to-all: "
      f"32 x 1 023 = 32 736 flows per leaf -> E[max] = {a2a.expected():.2f} on a mean of 1 023, "
      f"{100 * 1023 / a2a.expected():.2f}% (only the 31 744 that leave the leaf: {100 * 992 / a2a_x.expected():.2f}%).  "
      f"Factor between the two collectives: {1023 / a2a.expected() * float(e_max):.3f}.  "
      f"2 ln 32 = {2 * math.log(32):.3f} flows per uplink, {2 * math.log(32) * 32:.1f} per leaf.  "
      "The seed's lookup returns 82% for the all-to-all (the seed notes this); ours 94%.\n")
    w("![efficiency](efficiency_vs_flows.png)\n")

    # ---- times and the stall accountant ------------------------------------------------------------
    cost = fm.ring_cost(e_max)
    w("## 5. Ideal and actual collective times; the stall accountant: golden, our RTL, the seed's SystemVerilog\n")
    w("Golden (exact E[max], and the seed's rounded k = 3.52 for comparison):\n")
    w(_table(("quantity", "exact E[max]", "seed (k = 3.52)"),
             [(name, _fmt(getattr(cost, attr), 6), _fmt(getattr(fm.ring_cost(3.52), attr), 6)) for name, attr in (
                 ("ideal time (s)", "ideal_s"), ("actual time (s)", "actual_s"), ("lost per all-reduce (s)", "lost_s"),
                 ("idle per step (ms)", "idle_per_step_ms"), ("accelerator-seconds lost", "accel_seconds_lost"),
                 ("accelerator-hours per 100k-step run", "accel_hours_per_run"),
                 ("wall hours lost per run", "wall_hours_lost_per_run"), ("ideal run (h)", "ideal_hours_per_run"),
                 ("actual run (h)", "actual_hours_per_run"), ("ring rate (Gb/s)", "rate_gbps"),
                 ("idle Gb/s per leaf", "idle_gbps_per_leaf"), ("idle Tb/s, fabric", "idle_tbps_fabric"))]))
    w(f"\nA 32-bit accelerator-seconds total (the seed's c_accel_seconds_total) wraps after "
      f"{2 ** 32 / cost.accel_seconds_lost:,.0f} all-reduces ({2 ** 32 / 3301:,.0f} at the seed's 3 301); ours is "
      "64 bits and saturates.\n")
    _rtl_section(w, fm, fabric_rtl, pkg, rtl_sim)

    # ---- the collision story in hardware ------------------------------------------------------------
    _collision_section(w, rtl_sim)

    # ---- remedies ------------------------------------------------------------------------------------
    w("## 7. Remedies\n")
    w("### Striping (Section 12, remedy 1)\n")
    stripe_rows, curves = [], {"sum": [], "split": [], "hash_sum": []}
    stripe_set = (1, 2, 4, 8, 16, 32)
    for c in stripe_set:
        u = fm.striping_mc(c, trials=trials, seed=seed)
        h = fm.striping_hash(bin_fn, c, epochs=max(1, min(200, flows // (1024 * c))))
        ideal = float(cost.ideal_s)
        curves["sum"].append(u["slowdown_sum"])
        curves["split"].append(u["slowdown_split"])
        curves["hash_sum"].append(h["slowdown_sum"])
        stripe_rows.append((c, c * 1024, f"{ideal * u['slowdown_sum']:.3f} ± {ideal * u['slowdown_sum_se']:.3f}",
                            f"{ideal * h['slowdown_sum']:.3f} ({h['trials']} leaf-trials)",
                            f"{ideal * u['slowdown_split']:.3f}",
                            f"{ideal * fm.max_load_dist(32 * c, 32).expected() / c:.3f}"))
    w(_table(("stripes", "connections", "time s, sum of shares (seed's model, MC)", "same, CRC32 hash",
              "time s, equal byte split (MC)", "equal split, exact E[max(32c)]/c"), stripe_rows))
    w("\nThe seed's model lets a ring link's bytes follow its stripes' shares (rate = sum); with an equal "
      "split a link waits for its slowest stripe, which is exactly E[max]/c of Section 10's curve.\n")
    w("![striping](striping.png)\n")
    fl = fm.flowlet_distribution()
    w("### Flowlet switching (re-hash at every step)\n")
    w(f"Mean slowdown unchanged ({fl['mean_slowdown']:.4f}); the spread collapses from sd {fl['sd_pinned']:.3f} "
      f"(pinned: one draw for the whole job) to {fl['sd_flowlet']:.4f} (mean of 2 046 draws, exact "
      f"convolution).  99th percentile: pinned {fl['p99_pinned']:.0f}x vs flowlet {fl['p99_flowlet']:.3f}x; "
      f"99.9th: {fl['p999_pinned']:.0f}x vs {fl['p999_flowlet']:.3f}x.  P(pinned job at k >= 6, i.e. <= 16.7 Gb/s) = "
      f"{100 * fl['p_ge6_pinned']:.2f}%; P(flowlet job averages >= 4x) = {fl['p_ge4_flowlet']:.1e}.\n")
    w("### Load-aware selection, larger link groups, hierarchical reduction\n")
    g64 = fm.max_load_dist(32, 64)
    w(_table(("remedy", "busiest uplink", "ring rate Gb/s", "all-reduce time s", "note"), [
        ("none (hash, 32 uplinks)", f"{float(e_max):.4f}", f"{100 / float(e_max):.2f}", f"{cost.actual_s:.3f}", "expected"),
        ("load-aware (greedy)", fm.greedy_max_load(32, 32), "100.00", f"{float(cost.ideal_s):.3f}",
         "deterministic; a hash achieves this with P = 1.8e-13"),
        ("64 uplinks (hash)", f"{g64.expected():.4f}", f"{100 / g64.expected():.2f}",
         f"{float(cost.ideal_s) * g64.expected():.3f}",
         f"imbalance E[max]/mean = {g64.expected() / 0.5:.2f} (vs {float(e_max):.2f}); uplink-group efficiency "
         f"{100 * 0.5 / g64.expected():.1f}%"),
        ("hierarchical (stage 2 only)", 1, "100.00", f"{float(fm.hierarchical_time_s()):.4f}",
         "32-leaf ring: 2(N-1)/N = 1.9375 vs 1.998"),
    ]))
    w("\nThe seed says larger link groups 'do not survive' because the imbalance rises; that is true of "
      "the imbalance and of the uplink group's efficiency, but the ring itself gets faster "
      f"({100 / g64.expected():.1f} vs {100 / float(e_max):.1f} Gb/s) -- for twice the uplinks.\n")
    packed = ecmp.ring_flows(order="packed")
    strided = ecmp.ring_flows(order="strided")
    rnd = ecmp.ring_flows(order="random")
    w(f"Ring ordering (scheduler placement): ring links crossing the fabric per leaf: packed "
      f"{int((packed.src_leaf != packed.dst_leaf).sum()) / 32:.0f}, strided "
      f"{int((strided.src_leaf != strided.dst_leaf).sum()) / 32:.0f}, random placement "
      f"{int((rnd.src_leaf != rnd.dst_leaf).sum()) / 32:.2f} (of 32).\n")

    # ---- costs ---------------------------------------------------------------------------------------------
    w("## 8. Cost accounting\n")
    _cost_section(w, fm, fabric_rtl)
    w(f"\nTime-aware schedule: 1 024 streams x 64 bits x 2 (shadow) = {fm.schedule_flops():,} flops per port = "
      f"{fm.schedule_flops() / fm.MAC_RX_FLOPS:.3f}x the MAC datapath.  Spraying's reassembly buffer, skew x "
      f"100 Gb/s: 80 us -> {fm.spray_buffer_bits(80):.3g} bits ({fm.spray_buffer_bits(80) / fm.MAC_RX_FLOPS:.0f}x), "
      f"2.56 ms -> {fm.spray_buffer_bits(2560):.3g} bits ({fm.spray_buffer_bits(2560) / fm.MAC_RX_FLOPS:.0f}x).\n")

    # ---- real-hash Monte Carlo ---------------------------------------------------------------------------
    w("## 9. Monte Carlo with the real hash vs the exact distribution\n")
    epochs = max(1, -(-flows // fm.PARTICIPANTS))
    t0 = time.perf_counter()
    fset = fm.ring_epochs_flowset(epochs)
    mc_rows, crc_hist = [], None
    for algo in ecmp.HASHES:
        for mode in ecmp.PATH_MODES:
            r = fm.hash_montecarlo(bin_fn, algo, mode, flowset=fset)
            if algo == "crc32" and mode == "mod":
                crc_hist = r
            mc_rows.append((algo, mode, f"{r['flows']:,}", f"{r['samples']:,}", f"{r['mean_max']:.4f}",
                            f"{r['z_mean']:+.2f}", f"{100 * r['p_34']:.2f}", f"{r['chi2']:.2f}",
                            "yes" if r["chi2"] < 13.28 and abs(r["z_mean"]) < 4 else "NO"))
    rng = np.random.default_rng(seed)
    uni = rng.integers(0, 32, size=(epochs * 32, 32))
    loads = np.zeros((epochs * 32, 32), dtype=np.int64)
    np.add.at(loads, (np.repeat(np.arange(epochs * 32), 32), uni.ravel()), 1)
    umax = loads.max(axis=1)
    sd = fm.max_load_sd(32, 32)
    mc_rows.append(("uniform RNG (control)", "-", f"{epochs * 1024:,}", f"{epochs * 32:,}", f"{umax.mean():.4f}",
                    f"{(umax.mean() - float(e_max)) / (sd / math.sqrt(len(umax))):+.2f}",
                    f"{100 * np.isin(umax, (3, 4)).mean():.2f}", "-", "-"))
    w(f"{epochs} restarts (epochs) of the strided ring, each redrawing every queue-pair number and so every "
      f"UDP source port; each (epoch, leaf) is one sample of the busiest of 32 uplinks under 32 flows.  "
      f"Exact: E[max] = {float(e_max):.4f}, P(3 or 4) = {100 * float(pmf[3] + pmf[4]):.2f}%.  "
      "Consistent = chi-square over k in {<=2, 3, 4, 5, >=6} below 13.28 (p = 0.01, 4 dof) and |z| of the mean < 4.\n")
    w(_table(("hash", "path", "flows", "samples", "mean max", "z vs exact", "P(3 or 4) %", "chi2 (4 dof)", "consistent"),
             mc_rows))
    a2a_rows = []
    for algo in ecmp.HASHES:
        r = fm.all_to_all_hash(bin_fn, algo, "mod")
        a2a_rows.append((algo, f"{r['flows']:,}", f"{r['mean_max']:.2f}", f"{r['exact_e_max']:.2f}", f"{r['z_mean']:+.2f}",
                         f"{100 * r['efficiency_hash']:.2f}", f"{100 * r['efficiency_exact']:.2f}"))
    w("\nAll-to-all (every ordered pair, 1 047 552 flows), busiest uplink averaged over the 32 leaves:\n")
    w(_table(("hash", "flows", "mean busiest", "exact E[max]", "z", "efficiency (hash) %", "exact %"), a2a_rows))
    w(f"\nMonte Carlo time: {time.perf_counter() - t0:.1f} s.\n")
    w("![max-load distribution](max_load_distribution.png)\n")

    # ---- properties, the refused one, the seed's scenarios --------------------------------------------
    _properties_section(w, properties)
    _refused_section(w, rtl_sim)
    _scenarios_section(w)

    # ---- plots -------------------------------------------------------------------------------------------
    fig, ax = plt.subplots(figsize=(7, 4.2))
    fx = [c[0] for c in curve]
    ax.semilogx(fx, [c[1] for c in curve], "o-", label="exact λ/E[max]")
    ax.semilogx(fx, [100 / c[3] for c in curve], "--", label="closed form 1/(1+√(2 ln n/λ))")
    ax.semilogx(fx, [c[4] for c in curve], ":", label="independent-Poisson approx.")
    ax.step(fx, [c[5] for c in curve], where="pre", label="RTL: our all_to_all_model (co-simulated)")
    ax.step(fx, [c[6] for c in curve], where="pre", ls="--", label="seed SV: its EFF_PCT as written")
    ax.plot(fm.EFF_POINTS, fm.SEED_EFF_CURVE_PCT, "kx", label="seed")
    ax.set_xlabel("flows per uplink (32 uplinks)")
    ax.set_ylabel("efficiency (%)")
    ax.set_ylim(0, 100)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, os.path.join(out, "efficiency_vs_flows.png"))

    fig, ax = plt.subplots(figsize=(7, 4.2))
    ks = np.arange(1, 13)
    ax.bar(ks - 0.2, [float(pmf[k]) for k in ks], width=0.4, label="exact, one leaf")
    ax.bar(ks + 0.2, [float(job_pmf[k]) for k in ks], width=0.4, label="exact, job (max over 32 leaves)")
    if crc_hist is not None:
        h = np.array(crc_hist["hist"] + [0] * 20)[: len(ks) + 1]
        ax.plot(ks - 0.2, h[1:len(ks) + 1] / crc_hist["samples"], "k.", ms=10, label=f"CRC32 hash, {crc_hist['samples']:,} samples")
    ax.set_yscale("log")
    ax.set_ylim(1e-7, 1)
    ax.set_xlabel("flows on the busiest of 32 uplinks (32 flows)")
    ax.set_ylabel("probability")
    ax.legend(fontsize=8)
    save_figure(fig, os.path.join(out, "max_load_distribution.png"))

    fig, ax = plt.subplots(figsize=(7, 4.2))
    ideal = float(cost.ideal_s)
    ax.plot(stripe_set, [ideal * v for v in curves["sum"]], "o-", label="sum of shares (seed's model)")
    ax.plot(stripe_set, [ideal * v for v in curves["hash_sum"]], "k.", label="sum of shares, CRC32 hash")
    ax.plot(stripe_set, [ideal * v for v in curves["split"]], "s--", label="equal byte split")
    ax.axhline(ideal, color="grey", lw=0.8, label="ideal")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("stripes per ring link")
    ax.set_ylabel("ring all-reduce time (s)")
    ax.legend(fontsize=8)
    save_figure(fig, os.path.join(out, "striping.png"))

    w(f"\n_Report computed in {time.perf_counter() - t_start:.1f} s._\n")
    return "\n".join(md)


# ------------------------------------------------------------------------------------------
# Sections built from our RTL (co-simulated in this run)
# ------------------------------------------------------------------------------------------
def _rtl_section(w, fm, fabric_rtl, pkg, sim):
    ring = fabric_rtl.ring_model([[100] * 32, [28] + [100] * 31, [33] + [100] * 31], simulator=sim)
    stall = fabric_rtl.stall([(1279, 4503, 100_000, 100), (1279, 4503, 100_000, 40)], simulator=sim)
    a2a = fabric_rtl.all_to_all([(pkg.COLL_ALLREDUCE, 1024), (pkg.COLL_ALLTOALL, 1024)], simulator=sim)
    sv_ring = [fm.seed_sv_ring_model(links) for links in ([100] * 32, [28] + [100] * 31, [33] + [100] * 31)]
    sv_stall = fm.seed_sv_stall_accountant(1279, 4503)
    sv_a2a = fm.seed_sv_all_to_all_model(1024)
    ring_by = "RTL: ring_allreduce_model (32 links, N = 1 024, S_MB = 8 000)"
    stall_by = "RTL: stall_accountant (1 024 accelerators)"
    a2a_by = "RTL: all_to_all_model (32 acc. and 32 uplinks per leaf, S_MB = 1 024)"
    binary = ("the seed SV reads S_MB = 8 192 as binary MB (x 1 024 kB) but kB x 8 / (Gb/s) as decimal us: "
              "1.024^2 = 1.049 x too long; ours is decimal throughout (S = 8 GB = 8 000 MB)")
    trunc = "the seed SV truncates the step time, then multiplies by 2 046"
    rows = [
        ("8,17", "ideal ring all-reduce (ms)", "1.279 s", ring[0]["ideal_time_ms"], ring_by,
         sv_ring[0]["ideal_time_ms"],
         binary + "; 1 278 = floor(1 278.75), the prose rounds"),
        ("2,5", "bytes per step S/N (kB)", "S/N = 7.8125 MB", ring[0]["step_bytes_kb"], ring_by,
         sv_ring[0]["step_bytes_kb"], "binary vs decimal kB (above)"),
        ("5", "step time at 100 Gb/s (us)", "-", ring[0]["step_time_us"], ring_by, sv_ring[0]["step_time_us"],
         "binary vs decimal kB"),
        ("5,8", "all-reduce, slowest link 28 Gb/s = floor(100/3.52) (ms)", "4.503 s (k = 3.52)",
         ring[1]["collective_time_ms"], ring_by, sv_ring[1]["collective_time_ms"],
         f"integer Gb/s (28 for 28.41: +1.4 %); {trunc}; binary MB"),
        ("5,8", "slowdown_x100, slowest link 28 Gb/s", "3.52x", ring[1]["slowdown_x100"], ring_by,
         sv_ring[1]["slowdown_x100"], "ours = 100 x RATE / slowest exactly; the SV divides two truncated times"),
        ("8", "all-reduce, busiest uplink k = 3 (33 Gb/s) (ms)", "-", ring[2]["collective_time_ms"], ring_by,
         sv_ring[2]["collective_time_ms"], f"{trunc}; binary MB"),
        ("6,7", "lost per all-reduce, 1 279 -> 4 503 ms (ms)", "3.22 s", stall[0]["lost_ms_per_collective"], stall_by,
         sv_stall["lost_ms_per_collective"], ""),
        ("7", "accelerator-seconds lost per all-reduce", "3 301", stall[0]["accel_seconds_lost"], stall_by,
         sv_stall["accel_seconds_lost"], ""),
        ("8", "wall-clock hours lost per 100 000-step run", "eighty-nine", stall[0]["wall_hours_per_run"], stall_by,
         sv_stall["wall_hours_per_run"], ""),
        ("7", "accelerator-hours lost per run", "91 705", stall[0]["accel_hours_per_run"], stall_by,
         sv_stall["accel_hours_per_run"], "the seed SV truncates the wall hours (89) before x 1 024; ours floors the "
                                          "exact 91 704.9 (the prose rounds it)"),
        ("7", "slowdown_x100 (stall accountant)", "3.52x", stall[0]["slowdown_x100"], stall_by,
         sv_stall["slowdown_x100"],
         ""),
        ("5,7", "lost per all-reduce with 40 % exposed (bucketing) (ms)", "-", stall[1]["lost_ms_per_collective"],
         stall_by, "-", "the seed SV hard-wires exposed_pct = 100; ours scales the loss, not the slowdown "
                        f"({stall[1]['slowdown_x100']})"),
        ("3,9", "ring all-reduce flows per leaf", "32", a2a[0]["flows_per_leaf_o"], a2a_by, 32, ""),
        ("3,9", "all-to-all flows per leaf", "32 736", a2a[1]["flows_per_leaf_o"], a2a_by, sv_a2a["flows_per_leaf_o"],
         ""),
        ("9,10", "all-to-all efficiency_pct, 32 736 flows per leaf (%)", "93.8%", a2a[1]["efficiency_pct"], a2a_by,
         sv_a2a["efficiency_pct"],
         "the seed's six-entry EFF_PCT tops out at 82 above 20 flows per uplink (the seed says so); ours has a "
         "seventh bucket"),
        ("9", "all-to-all time, S = 1 024 MB (ms)", "-", a2a[1]["time_ms"], a2a_by, sv_a2a["time_ms"],
         "94 vs 82 % (above); ours from the exact product, the SV truncates the ideal time first"),
        ("9", "ring all-reduce efficiency bucket (%)", "28.4%", a2a[0]["efficiency_pct"], a2a_by,
         fm.seed_sv_eff_pct_lookup(32, 32), ""),
    ]
    w("\n**The RTL figures: ours (co-simulated) beside the seed's SystemVerilog as written.**  Ours come from "
      "simulating our blocks in this run; the seed SV column is the seed's own RTL arithmetic (not simulated, "
      "not ours), which is where the seed's text and its RTL part company.\n")
    w(_table(("§", "figure", "seed text", "ours", "produced by", "seed SV as written", "why ours and the seed SV differ"),
             rows))
    w("")


def _collision_section(w, sim):
    w("## 6. The collision story in hardware\n")
    w("hdl/fabric/collective_fabric.py with RATES = \"paths\": every ring link is a flow with a real RoCEv2 5-tuple "
      "(golden.fabric.ecmp's addressing plan); `ecmp_hash_unit` hashes it (CRC-32), `load_aware_selector` places it "
      "(on the hash's uplink, or on a least-loaded one), `ring_link_rates` pins it there and gives it its share "
      "of that uplink (k ring links on one uplink get floor(100/k) Gb/s each), `slowest_member_tracker` follows "
      "the slowest link at every ring step, `ring_step_engine` ends a step when the slowest link has delivered its "
      "chunk (CHUNK units of Gb/s x cycles) and `ring_allreduce_model` counts the steps and prices the collective "
      "from the same rates.  Only the flows come from outside.  The golden column is "
      "golden/fabric/fabric_collision.py's prediction from the flows alone; the tests compare every output at every "
      "cycle (tests/fabric/test_fabric_collision.py).\n")

    # one collision, 8 links on 8 uplinks
    epoch, leaf, conns = one_collision()
    hashed = fc.predict(conns, 8, 8, False, ONE_COLLISION_CHUNK, SMALL_N, 1)
    aware = fc.predict(conns, 8, 8, True, ONE_COLLISION_CHUNK, SMALL_N, 1)
    steps = 2 * (SMALL_N - 1)
    cfg = collision_config(8, 8, participants=SMALL_N, s_mb=1, chunk=ONE_COLLISION_CHUNK)
    run = run_collision(conns, cfg, [Phase(False, steps * hashed.step_cycles + 6),
                                     Phase(True, steps * aware.step_cycles + 6)], sim)
    w(f"### One collision makes the whole ring slower (8 ring links of leaf {leaf}, epoch {epoch}, on 8 uplinks; "
      f"N = {SMALL_N}: {steps} steps; CHUNK = {ONE_COLLISION_CHUNK})\n")
    rows = []
    for ph, pred in ((0, hashed), (1, aware)):
        s0 = run.starts[ph]
        ticks = [i - s0 for i in range(s0 + 1, s0 + steps * pred.step_cycles + 2) if run.samples[i]["ring_step"]]
        settled = run.samples[s0 + 1]
        done_at = next(i - s0 for i in range(s0 + 1, len(run.samples)) if not run.samples[i]["ring_running"])
        rows.append(("ECMP (CRC-32)" if ph == 0 else "load-aware",
                     " ".join(map(str, unpack(settled["conn_path"], 8, 8))),
                     " ".join(map(str, unpack(settled["link_gbps"], 8))),
                     f"{settled['collective_gbps']} (link {settled['slowest_member']})",
                     f"{ticks[0]}, {ticks[1]}, {ticks[2]} ... {ticks[-1]}",
                     f"{done_at - 1} cycles",
                     run.samples[s0 + done_at]["step_wait"],
                     "yes" if (unpack(settled["link_gbps"], 8) == pred.rates and
                               ticks == [pred.step_cycles * j for j in range(1, steps + 1)]) else "NO"))
    w(_table(("placement", "uplink of links 0..7", "link rates Gb/s", "ring rate (slowest)",
              "cycles at which steps end", "all-reduce", "link-cycles spent waiting", "= golden prediction"), rows))
    w(f"\nTwo of the eight ring links share an uplink and run at 50 Gb/s; the other six have an uplink each and "
      f"could run at 100 -- but every step waits for the slowest link, so all eight advance at 50: each of the "
      f"{steps} steps takes {hashed.step_cycles} cycles instead of {aware.step_cycles}, and the six healthy links "
      f"spend {hashed.wait_per_step} link-cycles of every step waiting.  The load-aware selector places one link "
      "per uplink and the ring runs at line rate.  All 34 properties hold throughout "
      f"(violations seen: {run.samples[-1]['violations_seen']}).\n")

    # the seed's geometry
    fig = fabric_rtl.collision(steps_seen=4, simulator=sim)
    h, a, r = fig.hashed, fig.aware, fig.run
    out = []
    for ph in (0, 1):
        s0 = r.starts[ph]
        ticks = [i - s0 for i in range(s0 + 1, len(r.samples)) if r.samples[i]["ring_step"]][:fig.steps_seen]
        out.append((r.samples[s0 + 1], ticks))

    def hist(rates):
        return ", ".join(f"{n} at {v}" for v, n in sorted(((v, rates.count(v)) for v in set(rates)), reverse=True))

    (sh, th), (sa, ta) = out
    lh, la = unpack(sh["link_gbps"], 32), unpack(sa["link_gbps"], 32)
    busiest = lambda s: max(v // 100 for v in unpack(s["path_load_gbps"], 32))
    used = lambda s: sum(1 for v in unpack(s["path_load_gbps"], 32) if v)
    w(f"### The seed's set-up: leaf 0's 32 ring links on its 32 uplinks (strided ring, epoch 0; N = 1 024, "
      f"S = 8 000 MB; CHUNK = {fig.chunk}; the first {fig.steps_seen} steps simulated)\n")
    w(_table(("quantity", "RTL, ECMP", "golden, ECMP", "RTL, load-aware", "golden, load-aware", "seed"), [
        ("ring links on the busiest uplink (k)", busiest(sh), h.busiest_flows, busiest(sa), a.busiest_flows, "3.52 expected"),
        ("uplinks carrying ring links", used(sh), len(set(h.paths_of)), used(sa), len(set(a.paths_of)), "20.4 expected"),
        ("link rates (Gb/s)", hist(lh), hist(h.rates), hist(la), hist(a.rates), "-"),
        ("ring rate = slowest link (Gb/s)", sh["collective_gbps"], h.collective_gbps, sa["collective_gbps"],
         a.collective_gbps, "28.4"),
        ("slowest link (tracker)", sh["slowest_member"], h.slowest_member, sa["slowest_member"], a.slowest_member, "-"),
        ("cycles per step (engine)", th[1] - th[0], h.step_cycles, ta[1] - ta[0], a.step_cycles, "-"),
        ("step_time_us (ring model)", sh["step_time_us"], h.ring["step_time_us"], sa["step_time_us"],
         a.ring["step_time_us"], "-"),
        ("collective_time_ms (ring model)", sh["collective_time_ms"], h.ring["collective_time_ms"],
         sa["collective_time_ms"], a.ring["collective_time_ms"], "4 503 (k = 3.52)"),
        ("slowdown_x100 (exact k)", f"{sh['slowdown_x100']} ({float(fc.exact_slowdown(h)):.0f})",
         h.ring["slowdown_x100"], f"{sa['slowdown_x100']} ({float(fc.exact_slowdown(a)):.0f})", a.ring["slowdown_x100"],
         "352"),
        ("accelerator-seconds lost per all-reduce", sh["accel_seconds_lost"], h.accel_seconds_lost,
         sa["accel_seconds_lost"], a.accel_seconds_lost, "3 301 (k = 3.52)"),
        ("placements onto an empty uplink", sh["perfect_placements"], h.perfect_placements,
         sa["perfect_placements"] - sh["perfect_placements"], a.perfect_placements, "-"),
        ("property violations", sh["violations_seen"], "-", r.samples[-1]["violations_seen"], "-", "none (Section 16)"),
    ]))
    w(f"\nThis draw has k = {h.busiest_flows}: the ring runs at floor(100/{h.busiest_flows}) = {h.collective_gbps} Gb/s "
      f"(integer Gb/s, as in the seed's blocks; exactly {float(fc.exact_slowdown(h)):.0f}x slower), and the load-aware "
      "selector removes the collision: every ring link gets an uplink of its own, deterministically.  The "
      "load-aware run's placement count includes the first run's placements (the counter is not cleared between "
      "collectives).\n")


def _cost_section(w, fm, fabric_rtl):
    ours = {b: fabric_rtl.register_bits(b) for b in fabric_rtl.register_blocks()}
    notes = {
        "stall_accountant": "64-bit saturating total (the seed's 32 bits wrap after 1.3 M all-reduces)",
        "load_aware_selector": "the seed's 512-bit path-load array plus its counters and the accounting flag",
        "collective_telemetry": "+ the remedy-effectiveness field and a fourth caveat",
        "collective_conformance_monitor": "the seed's holds no state (concurrent assertions); ours keeps the "
                                          "history of the next-cycle properties and 2 x 34 result bits",
        "ecmp_hash_unit": "not in the seed (its blocks take the hash as an input)",
        "ring_link_rates": "not in the seed (its blocks take link rates as inputs): the per-connection path, "
                           "declared rate and share",
        "ring_step_engine": "not in the seed (its ring model advances every clock): per-link progress",
    }
    rows = []
    for b, bits in ours.items():
        sv = fm.SEED_SV_FLOPS.get(b)
        rows.append((b, "-" if sv is None else sv, bits, f"{100 * bits / fm.MAC_RX_FLOPS:.2f}", notes.get(b, "")))
    sv_total = sum(fm.SEED_SV_FLOPS.values())
    seed_blocks = [b for b in ours if b in fm.SEED_SV_FLOPS]
    ours_seed8 = sum(ours[b] for b in seed_blocks)
    rows.append(("total of the seed's eight blocks", sv_total, ours_seed8, f"{100 * ours_seed8 / fm.MAC_RX_FLOPS:.2f}",
                 ""))
    w("Register bits: *seed SV* counted from the targets of the seed's always_ff blocks; *ours* counted the same "
      "way from our blocks' converted Verilog at the seed's geometry (32 ring links, 32 uplinks, 8 stripes, 16-bit "
      "rates; cosim/fabric/fabric_rtl.py; the count equals yosys' flip-flops after `proc`, tested).\n")
    w(_table(("block", "seed SV register bits", "ours", "% of a 14 166-flop MAC RX datapath (ours)", "note"), rows))
    la = ours["load_aware_selector"]
    w(f"\nThe seed's Section 19 claims load_aware_selector is 55% of its chapter's flops; its text lacks the cost "
      f"table, and counting its blocks as written gives {100 * fm.SEED_SV_FLOPS['load_aware_selector'] / sv_total:.1f}%.  "
      f"Ours: {la} bits, {100 * la / ours_seed8:.1f}% of our eight, {100 * la / fm.MAC_RX_FLOPS:.2f}% of the MAC "
      "datapath (seed: 4.1%).\n")


def _properties_section(w, run_them):
    w("## 10. The 34 properties (Section 20, groups A-F)\n")
    w("hdl/fabric/collective_conformance_monitor.py checks all 34 at every clock edge inside collective_fabric; each "
      "has a broken variant of the design (the test fault <id> of cosim/fabric/faults.py: an edit of the converted "
      "Verilog in the block that owns the property) that must fire that property and no other.  Tests: "
      "tests/fabric/test_fabric_properties.py -- `test_fault_fires_exactly_its_property[<id>]` runs the faulted "
      "Verilog in the Icarus co-simulation, then replays that run's inputs in batched Icarus (-g2012) and requires "
      "every output port, hence the first failing cycle and the failure count, to be identical at every cycle "
      "(Verilator: the same under `-m slow`); "
      "`test_correct_fabric_holds_every_property` and `test_correct_fabric_replayed_batched` (-g2005, -g2012; "
      "Verilator under `-m slow`) for the correct design.  The scenario (cosim/fabric/fabric_properties.py "
      "`run_fabric`, 260 cycles) drives rates the hardware path could never produce (zeros, a new minimum every few cycles), restarts, "
      "over-removals, hash and load-aware phases, stale and missing imports.\n")
    first = {}
    if run_them:
        for p in PROPERTIES:
            ref = run_fabric("icarus", p.id)
            rep = replay_batched(ref, p.id)
            first[p.id] = (ref.first_cycle.get(p.id), rep.first_cycle.get(p.id),
                           sorted(ref.fired) == [p.id] and rep.outputs == ref.outputs)
    head = ["id", "checked (as the monitor states it)", "the seed's statement", "broken variant",
            "its tests (tests/fabric/test_fabric_properties.py)"]
    if run_them:
        head += ["first failing cycle: Icarus co-simulation / batched", "fires alone, outputs identical"]
    rows = []
    for p in PROPERTIES:
        row = [p.id, p.statement.replace("|", "\\|"), p.seed_form.replace("|", "\\|"), f"{p.fault_block}: {p.fault}",
               f"`test_fault_fires_exactly_its_property[{p.id}]` (Icarus co-simulation, batched Icarus), "
               f"`..._verilator[{p.id}]` (slow)"]
        if run_them:
            m, i, ok = first[p.id]
            row += [f"{m} / {i}", "yes" if ok else "NO"]
        rows.append(row)
    w(_table(head, rows))
    if not run_them:
        w("\n(Run `prism fabric --properties` to run the 34 broken variants here and list their first failing "
          "cycles.)\n")
    w("\nWhere our statement differs from the seed's, the seed's is not checkable or not true of a correct design "
      "as written: A3's `member_idx` is a free variable (we check every member); B2 uses decimal kB (the seed's "
      "x 1 024 is its unit slip, Section 5); B3 and B6 take the minimum from the links themselves; B5 excludes a "
      "new start; B6 assumes no link above line rate; C4 checks the behaviour (loads change only at a flow start "
      "or end) that the seed's constant `sticky_preserved` only claims; C5's `flows_a`, `flows_b` are free "
      "variables (we compare consecutive samples); D3/D6 exclude a start and an end on one path in one cycle; "
      "D4 applies while every placement was load-aware; D6 states the clamp (`>= 0` is vacuous on an unsigned "
      "load); F1-F4 compare the telemetry's registered outputs with the inputs latched at the same snapshot.  "
      "Section 16's twelve properties are a subset: 1->A1, 2->A2, 3->A4, 4 (min != 0 -> step time > 0) is implied "
      "by B3, 5->B4, 6->B5, 7->C3, 8->C4, 9->D1, 10->F1, 11->F2, 12->F3.\n")


def _refused_section(w, sim):
    w("## 11. The refused property (Sections 3, 4, 16, 20)\n")
    w("Section 20 is titled *Properties Worth Asserting, and One Worth Refusing*; the seed's text names the "
      "refused property but does not print it.  Section 4 defines it: \"improving one participant can make the "
      "collective slower ... a load-balancing scheme that reassigns flows to even out utilisation can move a flow "
      "onto the busiest uplink, improving the aggregate and lengthening every step.  Section 20's refused "
      "property is exactly this observation written as an assertion\"; Section 3: it \"is what happens when a "
      "design forgets\" that a collective's rate is the minimum; Section 16: no property may promise a rate, "
      "\"because nothing in the fabric promises it\".  Written as an assertion:\n")
    w(f"> **{REFUSED.id}**: {REFUSED.statement}\n")
    w("It is refused because every correct design violates it.  It is not in the monitor; "
      "cosim/fabric/fabric_properties.py `refused_property_failures` evaluates it on a run's outputs at the tracker's "
      "samples, and tests/fabric/test_fabric_collision.py::test_refused_property_fails_on_the_correct_fabric shows it "
      "failing on the correct fabric while the 34 hold.  The run (co-simulated now):\n")
    r = refused_property_scenario(sim)
    b, a = r.run.samples[r.run.starts[0] + 1], r.run.samples[r.run.starts[1] + 1]
    w(_table(("", "uplinks of links 0..5", "link rates Gb/s", "aggregate Gb/s", "mean (tracker)",
              "ring rate = min (tracker)", "cycles per step"), [
        ("before: three pairs", " ".join(map(str, unpack(b["conn_path"], 6, 8))),
         " ".join(map(str, unpack(b["link_gbps"], 6))), sum(unpack(b["link_gbps"], 6)), b["mean_gbps"],
         b["collective_gbps"], r.before.step_cycles),
        ("after the rebalance", " ".join(map(str, unpack(a["conn_path"], 6, 8))),
         " ".join(map(str, unpack(a["link_gbps"], 6))), sum(unpack(a["link_gbps"], 6)), a["mean_gbps"],
         a["collective_gbps"], r.after.step_cycles),
    ]))
    viol = max(o["violations_seen"] for o in r.run.samples)
    w(f"\nThe rebalancer moved links 4 and 5 to idle uplinks and link 2 onto uplink 0: four uplinks carry traffic "
      f"instead of three, the aggregate rises by a third, and the ring slows from {r.before.collective_gbps} to "
      f"{r.after.collective_gbps} Gb/s.  The refused property fails at cycle(s) {r.failures} (the first step "
      f"after the rebalance); the 34 properties: {'none fired' if viol == 0 else 'FIRED'}.\n")


def _scenarios_section(w):
    w("## 12. The seed's verification scenarios (Section 21)\n")
    w("Section 21 announces \"Fifty-eight scenarios.  Group 2's need a chain rather than a stream, and group 6's "
      "need more than one leaf\", names groups 1-3 with their counts, and breaks off: no individual scenario is "
      "listed, and groups 4-6 (30 scenarios) are not named.  Our tests, mapped to the groups (4-6 taken in the "
      "order of the property groups D-F):\n")
    w(_table(("group", "the seed's title", "scenarios", "our tests"), SCENARIO_GROUPS))
    w("")
