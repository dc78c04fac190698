"""`prism fabric`: the collective-fabric chapter's arithmetic, computed, as a
Markdown report with plots.

    prism fabric [-o DIR] [--flows N] [--impl auto|c|numba] [--trials N] [--seed N]

writes DIR/fabric_report.md, DIR/efficiency_vs_flows.png,
DIR/max_load_distribution.png and DIR/striping.png.
"""
from __future__ import annotations

import os
import time

from cosim.cli import UsageError

DEFAULT_DIR = "fabric-report"


def add_parser(subparsers):
    p = subparsers.add_parser(
        "fabric", help="ECMP / collective arithmetic report (seed figures vs computed)",
        description="Compute the collective-fabric chapter's figures (exact balls-in-bins, ring and "
                    "all-to-all times, remedies, stall accounting, a real-hash Monte Carlo) and write "
                    "a Markdown report with PNG plots.")
    p.add_argument("-o", "--output", default=DEFAULT_DIR, metavar="DIR",
                   help=f"output directory (created if missing; default {DEFAULT_DIR})")
    p.add_argument("--flows", default="1000000", metavar="N",
                   help="flows per real-hash Monte Carlo run (1024..100000000; default 1000000)")
    p.add_argument("--impl", default="auto", metavar="IMPL",
                   help="hash implementation for the Monte Carlo: auto (C if built, else numba), c, numba")
    p.add_argument("--trials", default="20000", metavar="N",
                   help="uniform-assignment trials for the striping Monte Carlo (100..10000000; default 20000)")
    p.add_argument("--seed", default="1", metavar="N", help="random seed of the uniform Monte Carlo (default 1)")
    return p


def _int_arg(name, text, lo, hi):
    try:
        v = int(str(text).replace("_", ""))
    except ValueError:
        raise UsageError(f"--{name} must be an integer, got {text!r}") from None
    if not lo <= v <= hi:
        raise UsageError(f"--{name} must be in {lo}..{hi}, got {v}")
    return v


def _bin_fn(impl):
    if impl not in ("auto", "c", "numba"):
        raise UsageError(f"--impl must be auto, c or numba, got {impl!r}")
    if impl in ("auto", "c"):
        try:
            from ckernels import ecmp as c_ecmp
            return "C", c_ecmp.bin_flows
        except ImportError:
            if impl == "c":
                raise UsageError("the C ECMP kernel is not built (pip install -e .)") from None
    from golden import ecmp_numba
    return "numba", ecmp_numba.bin_flows


def run(args) -> int:
    flows = _int_arg("flows", args.flows, 1024, 100_000_000)
    trials = _int_arg("trials", args.trials, 100, 10_000_000)
    seed = _int_arg("seed", args.seed, 0, 2**63 - 1)
    impl_name, bin_fn = _bin_fn(args.impl)
    out = args.output
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"output path {out!r} exists and is not a directory")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create output directory {out!r}: {e.strerror}") from None
    report = build_report(out, flows=flows, trials=trials, seed=seed, impl_name=impl_name, bin_fn=bin_fn)
    path = os.path.join(out, "fabric_report.md")
    with open(path, "w") as f:
        f.write(report)
    print(f"wrote {path}")
    return 0


# ------------------------------------------------------------------------------------------
def _fmt(v, digits=4):
    from fractions import Fraction
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


def build_report(out, *, flows, trials, seed, impl_name, bin_fn) -> str:
    import math

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from golden import ecmp
    from golden import fabric_math as fm

    t_start = time.perf_counter()
    md = []
    w = md.append
    w("# Collective fabric: the chapter's arithmetic, computed\n")
    w(f"Fabric: {fm.LEAVES} leaves x {fm.ACC_PER_LEAF} accelerators = {fm.PARTICIPANTS} participants, "
      f"{fm.UPLINKS_PER_LEAF} uplinks per leaf at {fm.RATE_GBPS} Gb/s, gradient S = 8 GB (decimal), "
      f"{fm.STEPS_PER_RUN:,} steps per run.  Hash implementation for the Monte Carlo: {impl_name}; "
      f"{flows:,} flows per real-hash run; {trials:,} uniform striping trials (seed {seed}).\n")
    w("Methods: *exact* = Python integers/fractions; *numerically exact* = float64 evaluation of an "
      "exact identity (Poissonized multinomial, FFT convolution), no sampling; *MC* = Monte Carlo, "
      "used only where no closed form exists and for the real-hash experiment.\n")

    # ---- seed vs computed ---------------------------------------------------------------
    rows = fm.seed_comparison(striping_trials=trials, seed=seed)
    w("## 1. Every figure the seed quotes, beside the computed value\n")
    w("`agree` = equal at the seed's stated precision.  Otherwise the last column explains the "
      "difference with its own computed number (an interval that contains the seed's value, a "
      "Monte Carlo z-score, or the count the explanation rests on).\n")
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
            elif r.kind == "noise":
                extra = f" [z = {r.z:+.2f} at 1 000 trials]"
            note = r.explanation + extra
        table.append((r.section, r.what, r.seed_text, _fmt(r.computed, 5), verdict, note))
    w(_table(("§", "figure", "seed", "computed", "verdict", "explanation"), table))
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
    curve = []
    for f in fpus:
        d = fm.max_load_dist(f * 32, 32)
        e = d.expected()
        curve.append((f, 100 * f / e, e / f, fm.imbalance_closed_form(f), 100 * f / fm.expected_max_independent_poisson(f),
                      fm.eff_pct_lookup(f * 32, 32), d.method))
    w(_table(("flows/uplink", "efficiency % (λ/E[max])", "imbalance E[max]/λ", "closed form 1+√(2 ln n/λ)",
              "closed form error %", "indep. Poisson %", "RTL EFF_PCT", "method"),
             [(f, f"{e:.3f}", f"{i:.4f}", f"{c:.4f}", f"{100 * (c / i - 1):+.2f}", f"{p:.3f}", l, meth)
              for f, e, i, c, p, l, meth in curve]))
    a2a = fm.max_load_dist(32 * 1023, 32)
    a2a_x = fm.max_load_dist(32 * 992, 32)
    w(f"\nRing all-reduce: 32 flows per leaf, 1 per uplink -> {100 / float(e_max):.2f}%.  All-to-all: "
      f"32 x 1 023 = 32 736 flows per leaf -> E[max] = {a2a.expected():.2f} on a mean of 1 023, "
      f"{100 * 1023 / a2a.expected():.2f}% (only the 31 744 that leave the leaf: {100 * 992 / a2a_x.expected():.2f}%).  "
      f"Factor between the two collectives: {1023 / a2a.expected() * float(e_max):.3f}.  "
      f"2 ln 32 = {2 * math.log(32):.3f} flows per uplink, {2 * math.log(32) * 32:.1f} per leaf.  "
      "The RTL lookup's top bucket returns 82% for the all-to-all (the seed notes this).\n")
    w("![efficiency](efficiency_vs_flows.png)\n")

    # ---- times and the stall accountant ------------------------------------------------------------
    cost = fm.ring_cost(e_max)
    w("## 5. Ideal and actual collective times; the stall accountant\n")
    w(_table(("quantity", "exact E[max]", "seed (k = 3.52)"),
             [(name, _fmt(getattr(cost, attr), 6), _fmt(getattr(fm.ring_cost(3.52), attr), 6)) for name, attr in (
                 ("ideal time (s)", "ideal_s"), ("actual time (s)", "actual_s"), ("lost per all-reduce (s)", "lost_s"),
                 ("idle per step (ms)", "idle_per_step_ms"), ("accelerator-seconds lost", "accel_seconds_lost"),
                 ("accelerator-hours per 100k-step run", "accel_hours_per_run"),
                 ("wall hours lost per run", "wall_hours_lost_per_run"), ("ideal run (h)", "ideal_hours_per_run"),
                 ("actual run (h)", "actual_hours_per_run"), ("ring rate (Gb/s)", "rate_gbps"),
                 ("idle Gb/s per leaf", "idle_gbps_per_leaf"), ("idle Tb/s, fabric", "idle_tbps_fabric"))]))
    rtl_ring = fm.ring_model_rtl([100] * 32)
    rtl_slow = fm.ring_model_rtl([28] + [100] * 31)
    rtl_sa = fm.stall_accountant_rtl(1279, 4503)
    rtl_a2a = fm.all_to_all_model_rtl()
    w("\n**The RTL's integer arithmetic** (what the blocks compute, bit for bit):\n")
    w(f"* ring_allreduce_model, S_MB = 8192: step_bytes_kb = {rtl_ring['step_bytes_kb']}, step {rtl_ring['step_time_us']} us "
      f"at 100 Gb/s, ideal_time_ms = {rtl_ring['ideal_time_ms']} -- not 1 279: the RTL reads S_MB as binary "
      f"megabytes (x 1 024 kB) but divides kB x 8 by Gb/s as if kB were 1 000 bytes, so its ideal is "
      f"1.024^2 = {1.024 ** 2:.4f}x the prose's.  With the slowest link at 28 Gb/s: step {rtl_slow['step_time_us']} us, "
      f"collective {rtl_slow['collective_time_ms']} ms, slowdown_x100 = {rtl_slow['slowdown_x100']}.\n")
    w(f"* stall_accountant(ideal 1 279 ms, actual 4 503 ms): lost {rtl_sa['lost_ms_per_collective']} ms, "
      f"accel_seconds_lost = {rtl_sa['accel_seconds_lost']}, wall_hours_per_run = {rtl_sa['wall_hours_per_run']}, "
      f"accel_hours_per_run = {rtl_sa['accel_hours_per_run']} -- the RTL truncates the wall hours before "
      f"multiplying by 1 024, so it reports {91705 - rtl_sa['accel_hours_per_run']} fewer accelerator-hours than "
      "the prose's 91 705.\n")
    w(f"* all_to_all_model(S_MB = 1 024): egress {rtl_a2a['egress_mb']} MB, ideal {rtl_a2a['ideal_ms']} ms, "
      f"efficiency_pct {rtl_a2a['efficiency_pct']} -> time {rtl_a2a['time_ms']} ms, slowdown_x100 "
      f"{rtl_a2a['slowdown_x100']}; with the true {100 * 1023 / a2a.expected():.1f}% the time would be "
      f"{rtl_a2a['ideal_ms'] / (1023 / a2a.expected()):.1f} ms.\n")
    w(f"* A 32-bit c_accel_seconds_total wraps after {2 ** 32 / cost.accel_seconds_lost:,.0f} all-reduces "
      f"({2 ** 32 / 3301:,.0f} at the seed's 3 301).\n")

    # ---- remedies ------------------------------------------------------------------------------------
    w("## 6. Remedies\n")
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
    w("## 7. Cost accounting\n")
    w(_table(("block", "register bits (from the RTL as written)", "% of a 14 166-flop MAC RX datapath"),
             [(b, f, f"{100 * f / fm.MAC_RX_FLOPS:.2f}") for b, f in fm.RTL_FLOPS.items()]
             + [("total", sum(fm.RTL_FLOPS.values()), f"{100 * sum(fm.RTL_FLOPS.values()) / fm.MAC_RX_FLOPS:.2f}")]))
    w(f"\nTime-aware schedule: 1 024 streams x 64 bits x 2 (shadow) = {fm.schedule_flops():,} flops per port = "
      f"{fm.schedule_flops() / fm.MAC_RX_FLOPS:.3f}x the MAC datapath.  Spraying's reassembly buffer, skew x "
      f"100 Gb/s: 80 us -> {fm.spray_buffer_bits(80):.3g} bits ({fm.spray_buffer_bits(80) / fm.MAC_RX_FLOPS:.0f}x), "
      f"2.56 ms -> {fm.spray_buffer_bits(2560):.3g} bits ({fm.spray_buffer_bits(2560) / fm.MAC_RX_FLOPS:.0f}x).\n")

    # ---- real-hash Monte Carlo ---------------------------------------------------------------------------
    w("## 8. Monte Carlo with the real hash vs the exact distribution\n")
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

    # ---- plots -------------------------------------------------------------------------------------------
    fig, ax = plt.subplots(figsize=(7, 4.2))
    fx = [c[0] for c in curve]
    ax.semilogx(fx, [c[1] for c in curve], "o-", label="exact λ/E[max]")
    ax.semilogx(fx, [100 / c[3] for c in curve], "--", label="closed form 1/(1+√(2 ln n/λ))")
    ax.semilogx(fx, [c[4] for c in curve], ":", label="independent-Poisson approx.")
    ax.step(fx, [c[5] for c in curve], where="post", label="RTL EFF_PCT lookup")
    ax.plot([1, 2, 4, 8, 20, 100, 1023], [28.4, 37.0, 46.2, 55.9, 67.2, 82.4, 93.8], "kx", label="seed")
    ax.set_xlabel("flows per uplink (32 uplinks)")
    ax.set_ylabel("efficiency (%)")
    ax.set_ylim(0, 100)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "efficiency_vs_flows.png"), dpi=110)
    plt.close(fig)

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
    fig.tight_layout()
    fig.savefig(os.path.join(out, "max_load_distribution.png"), dpi=110)
    plt.close(fig)

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
    fig.tight_layout()
    fig.savefig(os.path.join(out, "striping.png"), dpi=110)
    plt.close(fig)

    w(f"\n_Report computed in {time.perf_counter() - t_start:.1f} s._\n")
    return "\n".join(md)
