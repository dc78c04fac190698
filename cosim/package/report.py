"""The accelerator-package report (`prism package`, cosim/cli/package.py).

Computes the resource-graph tables (worked example, die-count scaling, bottleneck migration,
partitioning modes) with golden.package.resource_graph, and co-simulates the
accelerator_package design cycle by cycle (HBM and D2D arbitrated, barrier included): the same
packages, the degraded-die scenario, the slow-die / starved-die diagnosis, retries, and each
assertion's broken variant.  `build_report` computes everything the report shows;
`render_markdown` and `plot_report` write DIR/package_report.md and DIR/package_report.png.
"""
from fractions import Fraction

from cosim.figures import save_figure
from cosim.package.package_bench import (BROKEN_VARIANT_TEXT, FAULT_BASE, TIME_SCALE, broken_variants, live_slots,
                                         run_package, setup_from_graph, verilog_backend)
from cosim.package.package_monitors import diagnose_run
from golden.package import resource_graph as rg
from golden.package.resource_graph import NODES
from hdl.package.package_assertion_monitor import ASSERTIONS
from hdl.package.work_distributor import POLICY_ROUND_ROBIN, POLICY_SERVICE_RATE

# Figures the design notes state, printed beside ours (never used to compute them).
SEED = {
    "nodes": "compute 16, HBM 10, D2D 12", "service": "10 units/cycle, HBM binds", "stream": "120",
    "phase": "120 + 200 = 320", "utilisation": "about 23 %", "barrier_share": "62 %",
    "compute_x2": "320 (unchanged)", "streaming_bound": "about 1.6x",
    "scaling": {1: "barrier 40 % of the phase", 2: "1.25x, D2D binds", 4: "1.56x, HBM binds, barrier 62 %",
                8: "exactly nothing gained (compute 32, D2D 24, HBM 10)"},
    "migration": {"baseline": "HBM binds, 320", "HBM x2": "D2D binds; a fraction of the projected gain",
                  "HBM x2 + D2D x2": "(matched steps)", "HBM x2 + D2D x2 + compute x2": "(matched steps)",
                  "barrier / 2": "beats any bandwidth change", "infinite bandwidth (bound)": "-"},
    "degraded": {"round_robin": "throughput halves (about 50 %)", "service_rate": "about 12 %"},
}
NOMINAL = 8                       # die compute, 2**-4 units per simulated cycle (4 units per model cycle / 8)


# --------------------------------------------------------------------------- computation

def _graph():
    return rg.Package()


def compute_bound(base):
    """The bottleneck-migration row "HBM x2 + D2D x2": compute binds (the degraded-die package)."""
    return base.with_(hbm_rate=2 * base.hbm_rate, d2d_per_die=2 * base.d2d_per_die)


def build_report(backend="icarus-2005", degraded_die=2, factor=Fraction(1, 2), window=64, units=1200,
                 partition=("CPX", "NPS4", None)):
    """Everything the report shows.  backend=None: the model only."""
    base = _graph()
    rep = {"backend": backend, "degraded_die": degraded_die, "factor": Fraction(factor), "window": window,
           "units": units, "example": rg.evaluate(base),
           "example_compute_x2": rg.evaluate(base.with_(compute_per_die=2 * base.compute_per_die)),
           "streaming_bound": rg.streaming_bound_speedup(base), "scaling": rg.die_scaling((1, 2, 4, 8), base),
           "migration": rg.bottleneck_migration(base), "partitions": rg.partitioning_table(8),
           "partition": partition}
    rep["fluid"] = fluid_degraded(base, degraded_die, factor, units)
    if backend:
        rep["sim"] = simulate(backend, base, degraded_die, factor, window, units)
    return rep


def fluid_degraded(base, die, factor, units):
    """Fluid-model streaming cycles (model cycles) of the degraded-die phase, both packages, both policies."""
    out = {}
    for name, pkg in (("compute-bound", compute_bound(base)), ("worked example", base)):
        caps, pools = rg.package_pools(pkg)
        slow = list(caps)
        slow[die] = caps[die] * factor
        for pol in ("round_robin", "service_rate"):
            h = rg.stream_cycles(pol, caps, pools, units)
            d = rg.stream_cycles(pol, slow, pools, units)
            out[(name, pol)] = {"healthy": h, "degraded": d, "stream_loss": 1 - h / d,
                                "phase_loss": 1 - (h + pkg.barrier_cycles) / (d + pkg.barrier_cycles)}
    return out


def _binding_from_counters(r):
    """The binding node as the hardware counters show it."""
    s = r.stream_cycles or 1
    hbm, d2d = r.final("hbm_sat_cyc") / s, r.final("d2d_sat_cyc") / s
    if max(hbm, d2d) < 0.5:
        return "compute", 0.0
    return ("hbm", hbm) if hbm >= d2d else ("d2d", d2d)


def simulate(backend, base, die, factor, window, units):
    sim = {"scale": TIME_SCALE}

    def go(setup, be=backend):
        r = run_package(setup, be)
        if not r.finished and not setup.fault and setup.policy == POLICY_SERVICE_RATE:
            raise RuntimeError(f"the co-simulated phase did not finish within {setup.max_cycles} cycles")
        return r

    # the model's packages, cycle by cycle
    graph = {}
    rows = [("worked example", base, window), ("compute x2", base.with_(compute_per_die=2 * base.compute_per_die),
                                                window)]
    for row in rg.bottleneck_migration(base):
        if row["result"] is not None and row["change"] != "baseline":
            rows.append((row["change"], row["result"].package, window))
    rows += [("2 dies", base.with_(dies=2), window), ("8 dies", base.with_(dies=8), max(window, 256))]
    for name, pkg, win in rows:
        r = go(setup_from_graph(pkg, window=win))
        graph[name] = {"run": r, "package": pkg, "model": rg.evaluate(pkg), "binding": _binding_from_counters(r)}
    sim["graph"] = graph

    # the degraded die, in the compute-bound package and in the worked example's
    rates = [NOMINAL] * 4
    rates[die] = int(NOMINAL * factor)
    degraded = {}
    for name, pkg in (("compute-bound", compute_bound(base)), ("worked example", base)):
        for pol, code in (("round_robin", POLICY_ROUND_ROBIN), ("service_rate", POLICY_SERVICE_RATE)):
            setup = setup_from_graph(pkg, window=window, phase_units=units, policy=code)
            h = go(setup)
            d = go(setup.with_(die_rate=tuple(rates)))
            degraded[(name, pol)] = {"healthy": h, "degraded": d,
                                     "stream_loss": 1 - h.stream_cycles / d.stream_cycles,
                                     "phase_loss": 1 - h.phase_cycles / d.phase_cycles}
    sim["degraded"] = degraded

    # diagnosis: slow die, die behind a narrow link, shared HBM, shared D2D, healthy
    cb = setup_from_graph(compute_bound(base), window=window, phase_units=units, barrier_cycles=0)
    links = [255] * 4
    links[die] = 2
    diag = [("die %d compute at %s of nominal (compute-bound package)" % (die, factor),
             degraded[("compute-bound", "service_rate")]["degraded"]),
            ("die %d's own D2D link at half of its need (compute-bound package)" % die,
             go(cb.with_(link_rate=tuple(links)))),
            ("worked example: HBM binds", graph["worked example"]["run"]),
            ("HBM x2: D2D binds", graph["HBM x2"]["run"]),
            ("healthy compute-bound package", degraded[("compute-bound", "service_rate")]["healthy"])]
    sim["diagnosis"] = [(name, r, diagnose_run(r)) for name, r in diag]

    # retries are not work
    slow = cb.with_(die_rate=tuple(rates))
    plain = go(slow)
    retries, c = [], 30
    while len(retries) < 12 and c < plain.cycles:
        lv = live_slots(plain, c)
        if lv:
            retries.append((c, sorted(lv)[len(retries) % len(lv)]))
        c += 37
    with_retries = go(slow.with_(retries=tuple(retries)))
    # a package fault exists only as Verilog: it runs on this back end, or on the Icarus
    # co-simulation in place of MyHDL
    faulted = verilog_backend(backend)
    as_work = run_package(slow.with_(retries=tuple(retries), fault="retry_as_work"), faulted)
    sim["retries"] = {"plain": plain, "retried": with_retries, "as_work": as_work, "count": len(retries)}

    # each assertion's broken variant, on this back end and on batched Icarus
    bes = [faulted] if faulted == "icarus-2005" else [faulted, "icarus-2005"]
    variants = broken_variants(run_package(FAULT_BASE, "icarus-2005"))
    sim["faults"] = {a: {be: (run_package(bad, be), run_package(good, be)) for be in bes}
                     for a, (bad, good) in variants.items()}
    sim["fault_backends"] = bes
    return sim


# --------------------------------------------------------------------------- output

def _pct(x, digits=1):
    return f"{float(x) * 100:.{digits}f} %"


def _num(x, digits=2):
    f = float(x)
    return str(int(f)) if f == int(f) else f"{f:.{digits}f}"


def _sc(cycles, scale):
    """Simulated cycles and the same in model cycles."""
    return f"{cycles} ({_num(Fraction(cycles, scale), 1)})"


MODEL = "model (golden.package.resource_graph)"


def render_markdown(rep, png_name):
    L = []
    ex = rep["example"]
    p = ex.package
    sim = rep.get("sim")
    be = rep["backend"]
    cosim = f"co-simulated accelerator_package ({be})" if be else ""
    scale = sim["scale"] if sim else 8
    L += ["# Accelerator package report", "",
          "Every figure is either computed by the resource-graph model (`golden.package.resource_graph`, exact fractions) "
          "or measured by co-simulating the `accelerator_package` design cycle by cycle (work distributor, "
          "service-rate estimator, four compute dies, HBM and die-to-die bandwidth arbitrated every cycle, the "
          "phase barrier, the assertion monitor).  Each table says which produced each number; the *seed* column "
          "quotes the design notes and is never used to compute anything.", "",
          "**Definitions used throughout.**  *Phase cycles* = *stream cycles* + *barrier cycles*: the barrier is "
          "always included.  *Stream cycles* run from the first job offered (while the package accepts) to the "
          "last job retired.  The co-simulated package runs the model's package with every rate divided by "
          f"{scale} and the barrier multiplied by {scale} (the dispatch bus issues one job per cycle, so the "
          f"model's 16 units per cycle run as 2 per simulated cycle); co-simulated cycles are shown as measured, "
          f"with the model-cycle equivalent (÷ {scale}) in brackets.", "",
          f"![package report]({png_name})", "",
          "## 1. Worked example: the minimum sustainable service (notes §8)", "",
          f"{p.dies} dies x {_num(p.compute_per_die)} units/cycle, HBM {_num(p.hbm_rate)} units/cycle package-wide, "
          f"D2D {_num(p.d2d_per_die)} units/cycle per die with {_pct(p.cross_fraction, 0)} of the work crossing, "
          f"a {_num(p.phase_units)}-unit phase and a {_num(p.barrier_cycles)}-cycle barrier.", "",
          "| figure | seed | ours | produced by |", "|---|---|---|---|",
          f"| node rates (units/cycle) | {SEED['nodes']} | "
          + ", ".join(f"{n} {_num(ex.rates[n])}" for n in NODES if n in ex.rates) + f" | {MODEL} |",
          f"| minimum service | {SEED['service']} | {_num(ex.service)} units/cycle, {ex.binding} binds | {MODEL} |",
          f"| stream cycles | {SEED['stream']} | {_num(ex.stream_cycles)} | {MODEL} |",
          f"| phase cycles | {SEED['phase']} | {_num(ex.stream_cycles)} + {_num(p.barrier_cycles)} = "
          f"{_num(ex.phase_cycles)} | {MODEL} |",
          f"| compute utilisation | {SEED['utilisation']} | {_num(ex.compute_cycles)} / {_num(ex.phase_cycles)} = "
          f"{_pct(ex.utilisation)} | {MODEL} |",
          f"| barrier share of the phase | {SEED['barrier_share']} | {_pct(ex.barrier_share)} | {MODEL} |",
          f"| phase cycles with compute doubled | {SEED['compute_x2']} | "
          f"{_num(rep['example_compute_x2'].phase_cycles)} ({rep['example_compute_x2'].binding} binds) | {MODEL} |",
          f"| best speed-up of any streaming change | {SEED['streaming_bound']} | "
          f"{_num(rep['streaming_bound'], 3)}x | {MODEL} |"]
    if sim:
        g = sim["graph"]["worked example"]
        r, b = g["run"], g["binding"]
        c2 = sim["graph"]["compute x2"]["run"]
        L += [f"| phase cycles | {SEED['phase']} | {_sc(r.stream_cycles, scale)} + {r.phase_cycles - r.stream_cycles}"
              f" = {_sc(r.phase_cycles, scale)} | {cosim} |",
              f"| binding node | HBM | {b[0]} (HBM used up in {_pct(b[1])} of the stream cycles; "
              f"D2D in {_pct(r.final('d2d_sat_cyc') / r.stream_cycles)}) | {cosim}: arbiter saturation counters |",
              f"| barrier share of the phase | {SEED['barrier_share']} | "
              f"{_pct(Fraction(r.phase_cycles - r.stream_cycles, r.phase_cycles))} | {cosim} |",
              f"| phase cycles with compute doubled | {SEED['compute_x2']} | {_sc(c2.phase_cycles, scale)} | {cosim} |"]
    L += ["", "## 2. Die-count scaling (notes §9)", "",
          "Model: the same package with 1, 2, 4 and 8 dies.  Co-simulated: 2, 4 and 8 dies (the distributor needs "
          "at least two targets).", "",
          "| dies | seed | model: compute / HBM / D2D supports | model: binding | model: phase cycles "
          "| model: speed-up vs 1 die | model: barrier share | model: utilisation | co-sim: phase cycles "
          "| co-sim: binding (counters) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rep["scaling"]:
        r = row["result"]
        name = {2: "2 dies", 4: "worked example", 8: "8 dies"}.get(row["dies"])
        cs = "-", "-"
        if sim and name:
            g = sim["graph"][name]
            cs = _sc(g["run"].phase_cycles, scale), g["binding"][0]
        L.append(f"| {row['dies']} | {SEED['scaling'][row['dies']]} | {_num(r.rates['compute'])} / "
                 f"{_num(r.rates['hbm'])} / {_num(r.rates['d2d']) if 'd2d' in r.rates else 'none (one die)'} | "
                 f"{r.binding} | {_num(r.phase_cycles)} | {_num(row['speedup'], 4)}x | {_pct(r.barrier_share)} | "
                 f"{_pct(r.utilisation)} | {cs[0]} | {cs[1]} |")
    L += ["", "One die has no D2D node: with the notes' 50 % crossing a single die would bind on D2D (phase 600), "
          "contradicting their \"40 % of the single-die phase\" (phase 500).", "",
          "## 3. Bottleneck migration (notes §10)", "",
          "The notes' table body is not in their text, only its readings (quoted in the seed column); the rows "
          "are computed.", "",
          "| change | seed reading | model: phase cycles | model: binding | model: speed-up | co-sim: phase cycles "
          "| co-sim: binding (counters) |", "|---|---|---|---|---|---|---|"]
    for row in rep["migration"]:
        note = ""
        if row["projected"] is not None:
            note = (f" (projected {_num(row['projected'])} if HBM stayed the limit: "
                    f"{_num(rep['example'].phase_cycles / row['projected'], 4)}x)")
        key = "worked example" if row["change"] == "baseline" else row["change"]
        cs = "-", "-"
        if sim and key in sim["graph"]:
            g = sim["graph"][key]
            cs = _sc(g["run"].phase_cycles, scale), g["binding"][0]
        L.append(f"| {row['change']} | {SEED['migration'][row['change']]} | {_num(row['phase_cycles'])} | "
                 f"{row['binding']} | {_num(row['speedup'], 4)}x{note} | {cs[0]} | {cs[1]} |")
    L += [""]
    L += _degraded_section(rep, cosim, scale)
    if sim:
        L += _diagnosis_section(sim, cosim)
        L += _retry_section(sim, cosim, scale)
        L += _assertion_section(sim)
    L += _partition_section(rep)
    L += ["## Where this differs from the notes", "",
          "* **Stall counter.**  The notes count a stall cycle as \"work outstanding, nothing retiring\".  With "
          "multi-cycle jobs that count is set by the job size (a healthy die retiring a 4-unit job every 8 cycles "
          "would show 7/8), so it cannot separate a slow die from a starved one.  Here a stall cycle is one in "
          "which the die reports that something downstream of its compute held it back (a shared-resource grant "
          "below its compute rate, its own link, or a completion it could not hand over).  That is the notes' "
          "own reading of the counter (§15: high stall = waiting downstream).",
          "* **a_retire_once** also requires the completion's generation to match: the notes' property "
          "(`retire_fire |-> live`) is satisfied by a stale completion of a recycled slot, which is the bug their "
          "§12 failure lens describes.",
          "* **a_bounded_imbalance** is disabled by design state: a target disabled, or measured more than 1/4 "
          "below the fastest.  A target not yet measured is not degraded, so the check runs from the first "
          "cycle.  The budget is 24 work units: one 64-cycle window of even spreading puts a half-rate die "
          "0.25 x 64 + 4 = 20 units behind before its rate is known.",
          "* **a_work_conserved** is not in the notes: it makes §15-16's rule (completed work counts only retired "
          "semantic work) checkable in hardware.",
          "* **Rate window.**  The estimator publishes the work retired in a window of WINDOW *active* cycles (no "
          "divider); the notes' illustration divides completed work by active cycles over a 4096-cycle epoch, "
          "longer than this whole phase (§14 warns against a phase-length window).", ""]
    return "\n".join(L) + "\n"


def _degraded_section(rep, cosim, scale):
    d, f = rep["degraded_die"], rep["factor"]
    sim = rep.get("sim")
    L = ["## 4. One degraded die (notes §13, §14, §18)", "",
         f"Four dies, a {rep['units']}-unit phase in 4-unit jobs, die {d}'s compute at {f} of nominal.  Two packages: "
         "the compute-bound one (the migration row \"HBM x2 + D2D x2\", where the notes' figures apply) and the "
         "worked example's (HBM binds).  *Stream loss* = 1 - healthy stream cycles / degraded stream cycles; "
         "*phase loss* the same with the barrier included.", "",
         "| package | policy | seed | model: stream loss | model: phase loss | co-sim: stream cycles healthy -> "
         "degraded | co-sim: stream loss | co-sim: phase loss |", "|---|---|---|---|---|---|---|---|"]
    for (pkg, pol), fl in rep["fluid"].items():
        cs = "-", "-", "-"
        if sim:
            s = sim["degraded"][(pkg, pol)]
            cs = (f"{_sc(s['healthy'].stream_cycles, scale)} -> {_sc(s['degraded'].stream_cycles, scale)}",
                  _pct(s["stream_loss"], 2),
                  _pct(s["phase_loss"], 2))
        seed = SEED["degraded"][pol] if pkg == "compute-bound" else "-"
        L.append(f"| {pkg} | {pol} | {seed} | {_pct(fl['stream_loss'])} | {_pct(fl['phase_loss'])} | {cs[0]} | "
                 f"{cs[1]} | {cs[2]} |")
    L += ["", "Model = the fluid model of `golden.package.resource_graph` (`stream_cycles`: max-min fair sharing of HBM "
          "and D2D; round-robin splits by count, service-rate-aware dispatch lets every die finish together).  "
          f"Co-sim = {cosim or 'skipped'}.", ""]
    if sim:
        sr = sim["degraded"][("compute-bound", "service_rate")]
        fl = rep["fluid"][("compute-bound", "service_rate")]
        L += ["Why the co-simulated service-rate loss exceeds the model's: for the first rate window no die has a "
              "measured rate, so dispatch spreads evenly and the slow die receives a quarter of the early work; a "
              "window's rate is quantised to whole jobs; the last jobs cannot be split across dies.  Measured "
              f"{_pct(sr['stream_loss'], 2)} against {_pct(fl['stream_loss'], 2)}.", "",
              "Per-die counters at the end of the degraded phase (compute-bound package):", "",
              "| policy | die | accepted work | svc_rate (units / window) | active_cyc | stall_cyc | "
              "peak outstanding jobs | produced by |", "|---|---|---|---|---|---|---|---|"]
        for pol in ("round_robin", "service_rate"):
            r = sim["degraded"][("compute-bound", pol)]["degraded"]
            for t in range(4):
                mark = " (degraded)" if t == d else ""
                L.append(f"| {pol} | {t}{mark} | {r.final('accepted_work')[t]} | {r.final('svc_rate')[t]} | "
                         f"{r.final('active_cyc')[t]} | {r.final('stall_cyc')[t]} | {max(r.series('outstanding', t))} "
                         f"| {cosim} |")
        L += [""]
    return L


def _diagnosis_section(sim, cosim):
    L = ["## 5. Slow die or starved die: the diagnosis (notes §15, §18)", "",
         "The notes' diagnosis: a falling svc_rate with rising stall on one target is a degraded participant; a "
         "falling rate on every target is a shared-resource problem (HBM or D2D).  Stall share = stall_cyc / "
         "active_cyc per die; the arbiter's counters say which shared resource ran out.  The diagnosis is "
         "`cosim.package.package_monitors.diagnose` applied to the counters of each co-simulated phase "
         f"({cosim}).", "",
         "| scenario | svc_rate per die | stall share per die | HBM / D2D used up (share of stream cycles) "
         "| diagnosis |", "|---|---|---|---|---|"]
    for name, r, d in sim["diagnosis"]:
        share = [s / a if a else 0 for s, a in zip(r.final("stall_cyc"), r.final("active_cyc"))]
        st = r.stream_cycles
        L.append(f"| {name} | {r.final('svc_rate')} | {', '.join(f'{x:.2f}' for x in share)} | "
                 f"{_pct(r.final('hbm_sat_cyc') / st, 0)} / {_pct(r.final('d2d_sat_cyc') / st, 0)} | {d.text} |")
    L += ["", "A slow die is busy (its compute sets its pace: low stall); a die behind a narrow link, and every die "
          "under a shared bottleneck, waits (high stall).  Only the counters of all dies together tell one die "
          "from a shared resource; a throughput number alone cannot.", "",
          "Tests (tests/package/test_package_resources.py, MyHDL and batched Icarus): `test_slow_die_is_not_starved`, "
          "`test_die_behind_a_narrow_link_stalls_alone`, `test_shared_bottleneck_starves_every_die`, "
          "`test_d2d_bottleneck_is_named_d2d`, `test_healthy_compute_bound_package`.", ""]
    return L


def _retry_section(sim, cosim, scale):
    rt = sim["retries"]
    p, r, w = rt["plain"], rt["retried"], rt["as_work"]
    same = r.trace["svc_rate"] == p.trace["svc_rate"]
    diff_cycles = sum(1 for a, b in zip(w.trace["svc_rate"], p.trace["svc_rate"]) if a != b)
    fired = w.fired()
    L = ["## 6. Retries are not work (notes §16)", "",
         f"The degraded-die phase (compute-bound package, service-rate policy, no barrier) with {rt['count']} "
         "transport retries of live jobs.  A retry is re-sent on the dispatch bus ahead of new work and dropped by "
         f"the die that holds the job ({cosim}).", "",
         "| run | retries re-sent | svc_rate equal to the run without retries, every cycle | final svc_rate "
         "| completed work | stream cycles (= phase cycles: no barrier) | assertions fired |", "|---|---|---|---|---|---|---|",
         f"| no retries | 0 | (reference) | {p.final('svc_rate')} | {p.final('completed_work')} | "
         f"{_sc(p.stream_cycles, scale)} "
         f"| {', '.join(p.fired()) or 'none'} |",
         f"| with retries | {r.count('retry_fire')} | {'yes' if same else 'NO'} | {r.final('svc_rate')} | "
         f"{r.final('completed_work')} | {_sc(r.stream_cycles, scale)} | {', '.join(r.fired()) or 'none'} |",
         f"| with retries, fault retry_as_work | {w.count('retry_fire')} | no: differs in {diff_cycles} cycles | "
         f"{w.final('svc_rate')} | {w.final('completed_work')} | {_sc(w.stream_cycles, scale)} | "
         + (", ".join(f"{a} (cycle {c})" for a, c in fired.items()) or "none") + " |", "",
         "Test: tests/package/test_package_resources.py `test_retries_leave_svc_rate_unchanged` (MyHDL and batched "
         "Icarus: every cycle's svc_rate and completed work equal the run without retries; the conflation, a test "
         "fault of the converted design, fires a_work_conserved at the first retry).", ""]
    return L


def _assertion_section(sim):
    english = {
        "a_retire_once": "an accepted job is retired at most once, and only by a completion of its own use of the "
                         "slot",
        "a_retry_creates_no_job": "a transport retry never creates a second semantic job",
        "a_route_epoch_stable": "a live job's route epoch never changes underneath it (every slot)",
        "a_no_dispatch_to_disabled": "work is never dispatched to a target that is not enabled",
        "a_bounded_imbalance": "while no target is degraded, max - min outstanding work <= 24 units",
        "a_work_conserved": "accepted - completed work = outstanding work, per target (retries are not work)",
    }
    reads = {
        "a_retire_once": "retire_fire, completion slot/gen, job table live + generation",
        "a_retry_creates_no_job": "retry_fire, dispatch_fire, dispatch slot, job table live",
        "a_route_epoch_stable": "job table live + route epoch, and their previous values",
        "a_no_dispatch_to_disabled": "dispatch_fire, dispatch target, tgt_enable",
        "a_bounded_imbalance": "outstanding work; armed by tgt_enable, svc_rate, rate_valid",
        "a_work_conserved": "estimator's accepted/completed work, distributor's outstanding work",
    }
    bes = sim["fault_backends"]
    L = ["## 7. The package assertions in hardware (notes §14, §20)", "",
         "`package_assertion_monitor` sits beside the work distributor and reads only state the design keeps (no "
         "shadow job table, nothing from the test bench); each assertion is one 1-bit output.  Each broken variant "
         "below runs a 60-job phase of the compute-bound package; *fires at* is the first cycle whose values "
         "violate the property.", "",
         "| assertion | English | reads | broken variant | fires at (" + " / ".join(bes) + ") | others fired "
         "| correct design, same stimulus |", "|---|---|---|---|---|---|---|"]
    for a in ASSERTIONS:
        runs = sim["faults"][a]
        firsts = [runs[be][0].fired().get(a) for be in bes]
        others = sorted({x for be in bes for x in runs[be][0].fired() if x != a})
        good = sorted({x for be in bes for x in runs[be][1].fired()})
        L.append(f"| `{a}` | {english[a]} | {reads[a]} | {BROKEN_VARIANT_TEXT[a]} | "
                 f"{' / '.join(str(f) for f in firsts)} | {', '.join(others) or 'none'} | "
                 f"{'fires ' + ', '.join(good) if good else 'holds'} |")
    armed = [(name, r.armed_cycles(), r.cycles) for name, r, _ in sim["diagnosis"]]
    L += ["", "Coverage of the imbalance check (cycles armed / cycles run): "
          + "; ".join(f"{n}: {a}/{c}" for n, a, c in armed) + ".", "",
          "Tests: tests/package/test_package_faults.py `test_broken_variant_fires_exactly_its_assertion_on_both_back_ends"
          "[<assertion>]` (the faulted Verilog co-simulated and batched Icarus: that output alone, first at the same cycle, identical traces; "
          "the correct design holds) and `..._under_verilator[<assertion>]` (the same on Verilator, `-m slow`); "
          "tests/package/test_package_monitor.py `test_monitor_matches_the_properties_every_cycle` (the monitor alone "
          "against an independent Python statement of the six properties, random and adversarial inputs, resets "
          "mid-run, both back ends).", ""]
    return L


def _partition_section(rep):
    c, m, owners = rep["partition"]
    L = ["## 8. Partitioning modes (notes §11)", "",
         "The documented invariant: memory partitions <= compute partitions, because every memory pool must be "
         "owned by a compute partition; so NPS4 needs CPX.  Checked by `golden.package.resource_graph.check_partitioning` "
         "for an 8-die package (SPX = 1 compute partition, DPX = 2, CPX = one per die; NPS1/2/4 = 1/2/4 memory "
         "partitions).", "",
         "| compute mode | memory mode | compute partitions | memory partitions | seed | ours | owners / reason |",
         "|---|---|---|---|---|---|---|"]
    for cm, mm, cp, mp, ok, info in rep["partitions"]:
        seed = "legal" if mp <= cp else "illegal"
        if mm == "NPS4":
            seed += " (NPS4 needs CPX)"
        what = ("; ".join(f"memory {k}: compute {v}" for k, v in info.items()) if ok else info)
        L.append(f"| {cm} | {mm} | {cp} | {mp} | {seed} | {'legal' if ok else 'illegal'} | {what} |")
    L += ["", f"Requested (`--partition {c}+{m}`): legal; memory partition -> compute partitions: "
          + "; ".join(f"{k} -> {v}" for k, v in owners.items()) + ".", ""]
    return L


def plot_report(rep, path):
    import matplotlib  # deferred, as in every report: matplotlib takes half a second to import
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sim = rep.get("sim")
    ncols = 3 if sim else 1
    fig, axes = plt.subplots(1, ncols, figsize=(6 * ncols, 4.4), squeeze=False)
    ax = axes[0][0]
    rows = rep["scaling"]
    xs = [str(r["dies"]) for r in rows]
    stream = [float(r["result"].stream_cycles) for r in rows]
    barrier = [float(r["result"].package.barrier_cycles) for r in rows]
    ax.bar(xs, stream, label="stream (model)")
    ax.bar(xs, barrier, bottom=stream, label="barrier (model)")
    if sim:
        scale = sim["scale"]
        names = {2: "2 dies", 4: "worked example", 8: "8 dies"}
        pts = [(i, sim["graph"][names[r["dies"]]]["run"].phase_cycles / scale) for i, r in enumerate(rows)
               if r["dies"] in names]
        ax.plot([i for i, _ in pts], [v for _, v in pts], "k^", label=f"phase, co-simulated (÷{scale})")
    for i, r in enumerate(rows):
        ax.text(i, stream[i] + barrier[i] + 8, f"{r['result'].binding}\n{float(r['speedup']):.2f}x",
                ha="center", fontsize=8)
    ax.set_xlabel("compute dies")
    ax.set_ylabel("phase cycles (model cycles)")
    ax.set_title("Phase time by die count (binding node, speed-up)")
    ax.set_ylim(0, max(s + b for s, b in zip(stream, barrier)) * 1.3)
    ax.legend(loc="upper right", fontsize=7)
    if sim:
        ax = axes[0][1]
        d = rep["degraded_die"]
        for pol, style in (("round_robin", "-"), ("service_rate", "--")):
            r = sim["degraded"][("compute-bound", pol)]["degraded"]
            n = r.stream_cycles
            ax.plot(range(n), r.series("outstanding_work", d)[:n], style, label=f"{pol}: die {d} (degraded)")
            others = [max(r.series("outstanding_work", t)[c] for t in range(4) if t != d) for c in range(n)]
            ax.plot(range(n), others, style, alpha=0.5, label=f"{pol}: max of healthy dies")
        ax.set_xlabel("simulated cycle")
        ax.set_ylabel("outstanding work (units)")
        ax.set_title("Outstanding work per die, degraded phase (co-simulated)")
        ax.legend(fontsize=7)
        ax = axes[0][2]
        labels, width = [], 0.2
        for i, (name, r, dg) in enumerate(sim["diagnosis"]):
            share = [s / a if a else 0 for s, a in zip(r.final("stall_cyc"), r.final("active_cyc"))]
            ax.bar([i + (t - 1.5) * width for t in range(4)], share, width, color=[f"C{t}" for t in range(4)])
            labels.append(dg.kind + ("\n" + dg.cause if dg.cause else ""))
        ax.set_xticks(range(len(labels)), labels, fontsize=7)
        ax.set_ylabel("stall_cyc / active_cyc per die (dies 0..3)")
        ax.set_title("Stall share: slow die vs starved (co-simulated)")
        ax.set_ylim(0, 1.1)
    save_figure(fig, path)
