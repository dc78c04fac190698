"""Mutation campaigns: how many deliberately broken copies of a design the regression catches.

A campaign takes a design's Verilog (the kit's converted node, fabric or package, or a user's
own RTL), chooses mutants spread over its blocks (cosim/mutation/sites.py), puts them all into
one Verilog behind a run-time select (cosim/mutation/instrument.py: one Icarus or Verilator
build serves every mutant) and runs each mutant through the design's hostile random regression
on the given seeds, in parallel (a process pool or a Dask cluster), with a wall-time limit per
simulator run (a mutant that hangs the test bench is caught as a hang) and per mutant.

A mutant is *killed* by the first seed whose verdict fails; what failed first says what caught
it (a result value, a header or padding bit, a counter, a CONTROL response, a missing or extra
frame, the end state, a hang).  Seeds run in rounds: every mutant its first few seeds, then the
survivors the next, twice as many, and so on, so the cores stay busy and most mutants cost a
seed or two.  A mutant that survives every seed is checked for equivalence
(cosim/mutation/equivalence.py): proved equivalent (it cannot change any output) it is listed
apart and left out of the kill rate; otherwise it is a survivor, reported with its Verilog line
and the MyHDL source line it came from (cosim/mutation/source_map.py).

Before any mutant runs, the instrumented design with no mutant selected runs the first seeds:
it must pass them, or the campaign stops (the regression fails on the design itself).
"""
import json
import os
import time
from collections import Counter, OrderedDict
from dataclasses import asdict, dataclass, field, replace
from typing import Dict, List, Optional

from cosim.mutation.instrument import PLUSARG, instrument
from cosim.mutation.sites import KINDS, Mutation, find_sites, select

# what caught a mutant, from the first failing check's kind (cosim/node/scoreboard.py MISMATCH_KINDS)
CATCH = OrderedDict([
    ("result value", ("result-value", "result-layout")),
    ("header or padding bits", ("result-header", "result-padding", "response-bits")),
    ("counter", ("counter",)),
    ("response", ("response",)),
    ("missing or extra frame", ("result-missing", "result-unexpected", "result-order", "malformed")),
    ("backpressure, line rate or arbitration", ("rx-stall", "line-rate", "tx-arbitration")),
    ("busy or end state", ("busy", "busy-rise", "end-state")),
    ("hang", ("timeout",)),
    ("crash", ("crash",)),
    ("property", ("property",)),
])


def catch_of(kind):
    for name, kinds in CATCH.items():
        if kind in kinds:
            return name
    return kind or "unknown"


@dataclass
class SeedVerdict:
    """One seed of one mutant: passed, or the kinds of what failed (first first) and a message."""
    seed: int
    ok: bool
    kinds: tuple = ()
    message: str = ""
    seconds: float = 0.0


@dataclass
class MutantResult:
    mutation: Mutation
    status: str = "pending"        # killed | survived | equivalent | timed out
    caught_by: str = ""
    seed: Optional[int] = None      # the first seed that failed
    message: str = ""
    seeds_run: int = 0
    seconds: float = 0.0
    equivalence: Optional[dict] = None
    source: Optional[tuple] = None  # (python file, line) the mutated statement came from

    def to_dict(self):
        d = asdict(self)
        d["mutation"] = {k: v for k, v in asdict(self.mutation).items()
                         if k in ("id", "kind", "line", "column", "block", "change", "description", "original",
                                  "mutated", "statement_line")}
        return d


class CampaignError(RuntimeError):
    """A campaign that cannot run (the regression fails on the unmutated design, no sites...)."""


@dataclass
class Target:
    """What a campaign mutates and how it judges one run.

    verilog_path/module: the design; design_map: a cosim.sim.codecov.DesignMap of it (blocks of
    lines), or None (every site in the module's name); run: a picklable callable
    run(seed, sources, plusargs, timeout) -> SeedVerdict, running the regression's seed on the
    design in `sources` (the instrumented file) with the mutant selected by `plusargs`;
    prepare(sources): compiles the instrumented design once before the workers start."""
    name: str
    verilog_path: str
    module: str
    run: object
    prepare: object = None
    design_map: object = None
    label: str = ""


@dataclass
class Campaign:
    target: Target
    mutants: List[MutantResult] = field(default_factory=list)
    seeds: List[int] = field(default_factory=list)
    sites: int = 0
    sites_by_block: Dict[str, int] = field(default_factory=dict)
    wall: float = 0.0
    build_seconds: float = 0.0
    settings: dict = field(default_factory=dict)

    # -- figures ---------------------------------------------------------------
    def counted(self):
        """Mutants in the kill rate: all but the proved equivalent."""
        return [m for m in self.mutants if m.status != "equivalent"]

    def rate(self, results):
        killed = sum(1 for m in results if m.status == "killed")
        return killed, len(results)

    def by(self, key):
        groups = OrderedDict()
        for m in sorted(self.mutants, key=lambda r: key(r)):
            groups.setdefault(key(m), []).append(m)
        return groups


def phase_blocks(verilog_path, top, sites):
    """Each site's block as the design's own blocks name it: the innermost block function of the
    design's subsystem (hdl/node for the node: prism_ingress, prism_fp32_bank, prism_round16, ...)
    whose instance holds the statement, both ports' instances of one function together; an
    arithmetic unit inside one (number_decoder, fp32_add, kulisch_lane) counts with the block
    that instantiates it.  Read from the process names MyHDL wrote (`<name>.raw.v` beside the
    design); a design without that file keeps the blocks it had."""
    from cosim.mutation.source_map import block_prefix, source_labels
    from cosim.sim.toolchain import hdl_modules
    raw = os.path.splitext(verilog_path)[0] + ".raw.v"
    modules = hdl_modules()
    if not os.path.exists(raw) or top not in modules:
        return sites
    subsystem = modules[top].rsplit(".", 1)[0] + "."
    labels = source_labels(raw, os.path.getmtime(raw))
    prefix = block_prefix()

    def block_of(name):
        inner, rest = top, name
        while True:                     # the chain of `<block><index>_` instance prefixes
            m = prefix.match(rest)
            if not m:
                return inner
            if modules.get(m.group(1), "").startswith(subsystem):
                inner = m.group(1)
            rest = rest[m.end():]
    out = []
    for m in sites:
        label = labels[m.process] if 0 <= m.process < len(labels) else None
        name = label or (m.targets[0] if m.targets else "")
        out.append(replace(m, block=block_of(name)) if name else m)
    return out


def choose(target, n, seed):
    """(design text, all sites, the n chosen mutations) of the target's design."""
    with open(target.verilog_path) as fh:
        text = fh.read()
    sites = phase_blocks(target.verilog_path, target.module, find_sites(text, target.module, target.design_map))
    if not sites:
        raise CampaignError(f"{target.label or target.name}: no mutation sites found in {target.verilog_path}")
    return text, sites, select(sites, n, seed)


def write_instrumented(text, mutations, module, folder):
    """The instrumented design as a file in `folder` (the module keeps its name); returns its path."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{module}.v")
    body = instrument(text, mutations, module)
    old = open(path).read() if os.path.exists(path) else None
    if old != body:                     # an unchanged file keeps its build
        with open(path, "w") as fh:
            fh.write(body)
    return path


def _run_chunk(run, seeds, path, mutant, timeout, deadline_seconds):
    """Seeds of one mutant until the first failure; returns the verdicts (stops early) and whether
    the mutant's own time limit ran out."""
    out, t0 = [], time.perf_counter()
    plusargs = (f"+{PLUSARG}={mutant}",)
    for s in seeds:
        if deadline_seconds is not None and time.perf_counter() - t0 > deadline_seconds:
            return out, True
        v = run(s, (path,), plusargs, timeout)
        out.append(v)
        if not v.ok:
            break
    return out, False


class _Pool:
    """Tasks on a local process pool, one process, or a Dask cluster (as prism regress runs seeds)."""

    def __init__(self, jobs=1, scheduler=None):
        self.jobs, self.scheduler, self.client, self.pool = jobs, scheduler, None, None

    def __enter__(self):
        if self.scheduler is not None:
            from distributed import Client
            self.client = Client(self.scheduler, timeout="10s") if isinstance(self.scheduler, str) else \
                Client(self.scheduler)
        elif self.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor
            self.pool = ProcessPoolExecutor(max_workers=self.jobs)
        return self

    def __exit__(self, *exc):
        if self.client is not None:
            self.client.close()
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
        return False

    def map(self, func, tasks, on_done=None):
        """[(key, args)] -> {key: result}, calling on_done(key) as each finishes."""
        results = {}
        if self.client is not None:
            from distributed import as_completed
            futs = {self.client.submit(func, *args, pure=False): key for key, args in tasks}
            for fut in as_completed(futs):
                results[futs[fut]] = fut.result()
                on_done and on_done(futs[fut])
        elif self.pool is not None:
            from concurrent.futures import as_completed
            futs = {self.pool.submit(func, *args): key for key, args in tasks}
            for fut in as_completed(futs):
                results[futs[fut]] = fut.result()
                on_done and on_done(futs[fut])
        else:
            for key, args in tasks:
                results[key] = func(*args)
                on_done and on_done(key)
        return results


EARLY_PROOF_SECONDS = 4.0


def run_campaign(target, mutants=200, seeds=(), seed=1, jobs=1, scheduler=None, timeout=60.0, mutant_timeout=None,
                 first_round=2, equivalence_timeout=60.0, build_folder=None, progress=None, equivalence=True,
                 early_proofs=6):
    """Run a campaign; returns a Campaign.  seeds: the regression seeds every surviving mutant runs;
    seed: the choice of mutants; timeout: one simulator run's wall-time limit (a hang); mutant_timeout:
    a mutant's wall-time limit over all its seeds (then "timed out", counted as not killed);
    first_round: seeds of the first round (then doubling); early_proofs: after that many seeds (the end
    of a round; 0: never), the mutants still alive get the prover's quick tiers, and the ones proved
    equivalent stop running seeds; progress: a callable(text) or None."""
    say = progress or (lambda text: None)
    t_start = time.perf_counter()
    text, sites, chosen = choose(target, mutants, seed)
    folder = build_folder or os.path.join("build", "mutation", target.name)
    path = write_instrumented(text, chosen, target.module, folder)
    camp = Campaign(target, [MutantResult(m) for m in chosen], list(seeds), len(sites),
                    dict(Counter(m.block for m in sites)),
                    settings=dict(mutants=mutants, seed=seed, seeds=len(seeds), timeout=timeout,
                                  mutant_timeout=mutant_timeout, jobs=jobs))
    say(f"{len(sites)} mutation sites in {len(camp.sites_by_block)} blocks; {len(chosen)} mutants chosen "
        f"(seed {seed}); instrumented design {path}")
    t0 = time.perf_counter()
    if target.prepare is not None:
        target.prepare((path,))
    camp.build_seconds = time.perf_counter() - t0
    say(f"build: {camp.build_seconds:.0f} s")
    seeds = list(seeds)
    if not seeds:
        raise CampaignError("no seeds to run")
    # the unmutated design must pass: otherwise every mutant would look killed
    check = seeds[:max(1, min(len(seeds), first_round * 2))]
    with _Pool(jobs, scheduler) as pool:
        base = pool.map(_run_chunk, [(s, (target.run, [s], path, 0, timeout, None)) for s in check])
        bad = [vs[0][-1] for vs in base.values() if vs[0] and not vs[0][-1].ok]
        if bad:
            raise CampaignError(f"the regression fails on the unmutated design (seed {bad[0].seed}: {bad[0].message}); "
                                f"fix that first")
        alive = {m.mutation.id: m for m in camp.mutants}
        spent = {k: 0.0 for k in alive}
        start, size = 0, first_round
        while alive and start < len(seeds):
            chunk = seeds[start:start + size]
            tasks = []
            for k in alive:
                left = None if mutant_timeout is None else max(0.0, mutant_timeout - spent[k])
                tasks.append((k, (_run_chunk, target.run, chunk, path, k, timeout, left)))
            done = [0]

            def tick(key, total=len(tasks)):
                done[0] += 1
                if done[0] == total or done[0] % max(1, total // 10) == 0:
                    say(f"seeds {start + 1}-{start + len(chunk)}: {done[0]}/{total} mutants "
                        f"({time.perf_counter() - t_start:.0f} s)")
            results = pool.map(_call, tasks, on_done=tick)
            for k, (verdicts, out_of_time) in results.items():
                m = alive[k]
                m.seeds_run += len(verdicts)
                took = sum(v.seconds for v in verdicts)
                m.seconds += took
                spent[k] += took
                failed = [v for v in verdicts if not v.ok]
                if failed:
                    v = failed[0]
                    m.status, m.seed, m.message = "killed", v.seed, v.message
                    m.caught_by = catch_of(v.kinds[0] if v.kinds else "")
                    del alive[k]
                elif out_of_time:
                    m.status, m.message = "timed out", f"its time limit ({mutant_timeout:.0f} s) ran out after " \
                                                       f"{m.seeds_run} seeds"
                    del alive[k]
            say(f"after seed {start + len(chunk)}: {len(camp.mutants) - len(alive)} decided, {len(alive)} alive")
            start += len(chunk)
            size *= 2
            if equivalence and early_proofs and alive and start == early_proofs:
                # the prover's quick tiers (what no output reads, a right-hand side equal for every
                # input) answer in a second or two; an equivalent mutant proved now does not run
                # the rest of the seeds, which is most of a campaign's time
                say(f"quick equivalence checks of {len(alive)} alive mutants ({EARLY_PROOF_SECONDS:.0f} s each)")
                proofs = pool.map(_prove, [(k, (text, target.module, m.mutation, EARLY_PROOF_SECONDS))
                                           for k, m in alive.items()])
                for k, verdict in proofs.items():
                    if verdict.get("equivalent") is True:
                        alive[k].status, alive[k].equivalence = "equivalent", verdict
                        del alive[k]
                say(f"{sum(1 for m in camp.mutants if m.status == 'equivalent')} proved equivalent, "
                    f"{len(alive)} alive")
        for m in alive.values():
            m.status = "survived"
        survivors = [m for m in camp.mutants if m.status in ("survived", "timed out")]
        if equivalence and survivors:
            say(f"equivalence checks of {len(survivors)} survivors")
            proofs = pool.map(_prove, [(m.mutation.id, (text, target.module, m.mutation, equivalence_timeout))
                                       for m in survivors])
            for m in survivors:
                verdict = proofs[m.mutation.id]
                m.equivalence = verdict
                if verdict.get("equivalent") is True:
                    m.status = "equivalent"
    _sources(target, camp)
    camp.wall = time.perf_counter() - t_start
    return camp


def _call(func, *args):
    return func(*args)


def _prove(text, module, mutation, seconds):
    from cosim.mutation.equivalence import prove_equivalent
    try:
        v = prove_equivalent(text, module, mutation, timeout=seconds)
    except Exception as e:  # noqa: BLE001 - a prover failure leaves the survivor a survivor, with the reason
        return {"equivalent": None, "method": "none", "detail": f"{type(e).__name__}: {e}", "seconds": 0.0}
    return asdict(v)


def _sources(target, camp):
    """The MyHDL source line of every survivor and equivalent mutant (best effort)."""
    from cosim.mutation.source_map import myhdl_source
    for m in camp.mutants:
        if m.status != "killed":
            try:
                found = myhdl_source(target.verilog_path, m.mutation.line)
            except Exception:  # noqa: BLE001 - a line the map cannot place is reported without a source
                found = None
            if found:
                m.source = (os.path.relpath(found[0]) if os.path.isabs(found[0]) else found[0], found[1])


# -- reports -------------------------------------------------------------------------

def _pct(k, n):
    return f"{100.0 * k / n:.1f} %" if n else "–"


def summary_rows(camp, key):
    rows = []
    for name, group in camp.by(key).items():
        counted = [m for m in group if m.status != "equivalent"]
        k, n = camp.rate(counted)
        eq = len(group) - len(counted)
        rows.append((name, len(group), eq, k, n, _pct(k, n)))
    return rows


def markdown(camp, command=""):
    t = camp.target
    counted = camp.counted()
    k, n = camp.rate(counted)
    eq = [m for m in camp.mutants if m.status == "equivalent"]
    surv = [m for m in camp.mutants if m.status in ("survived", "timed out")]
    L = [f"# Mutation testing: {t.label or t.name}", ""]
    if command:
        L += [f"`{command}`", ""]
    L += [f"{len(camp.mutants)} mutants of {camp.sites} sites (mutant choice seed {camp.settings.get('seed')}), "
          f"each run on up to {len(camp.seeds)} regression seeds ({camp.seeds[0]}..{camp.seeds[-1]}) until one fails.  "
          f"**{k} of {n} non-equivalent mutants killed: {_pct(k, n)}**; {len(eq)} proved equivalent; "
          f"{len(surv)} survived.  Wall time {camp.wall:.0f} s (build {camp.build_seconds:.0f} s), "
          f"{sum(m.seeds_run for m in camp.mutants)} mutant runs.", ""]
    for title, key in (("Per block", lambda m: m.mutation.block), ("Per kind of mutation", lambda m: m.mutation.kind)):
        L += [f"## {title}", "", "| | mutants | equivalent | killed | of | kill rate |", "|---|---:|---:|---:|---:|---:|"]
        L += [f"| {name} | {a} | {b} | {c} | {d} | {e} |" for name, a, b, c, d, e in summary_rows(camp, key)]
        L.append("")
    caught = Counter(m.caught_by for m in camp.mutants if m.status == "killed")
    L += ["## What caught them", "", "| first failing check | mutants |", "|---|---:|"]
    L += [f"| {name} | {caught[name]} |" for name in list(CATCH) + sorted(set(caught) - set(CATCH)) if caught[name]]
    seeds_needed = Counter(m.seeds_run for m in camp.mutants if m.status == "killed")
    L += ["", "Seeds a killed mutant needed: " + ", ".join(f"{s}: {c}" for s, c in sorted(seeds_needed.items())), ""]
    L += ["## Survivors", ""]
    if not surv:
        L.append("None.")
    for m in surv:
        L += _mutant_lines(t, m)
    L += ["", "## Proved equivalent (left out of the kill rate)", ""]
    if not eq:
        L.append("None.")
    for m in eq:
        L += _mutant_lines(t, m)
    L += ["", "## Killed", "", "| # | block | kind | change | line | caught by | seed | first failure |",
          "|---:|---|---|---|---:|---|---:|---|"]
    for m in camp.mutants:
        if m.status == "killed":
            mu = m.mutation
            msg = m.message.replace("|", "\\|")
            msg = msg if len(msg) <= 140 else msg[:137] + "..."
            L.append(f"| {mu.id} | {mu.block} | {mu.kind} | {mu.change.replace('|', chr(92) + '|')} | {mu.line} | "
                     f"{m.caught_by} | {m.seed} | {msg} |")
    return "\n".join(L) + "\n"


def _mutant_lines(target, m):
    mu = m.mutation
    where = f"{os.path.basename(target.verilog_path)}:{mu.line}"
    src = f"; MyHDL source {m.source[0]}:{m.source[1]}" if m.source else "; MyHDL source: not found"
    out = [f"- **#{mu.id}** {mu.block}, {mu.kind}: {mu.description} ({where}{src}); {m.status}"
           + (f" after {m.seeds_run} seeds" if m.seeds_run else "")]
    if m.equivalence:
        e = m.equivalence
        verdict = {True: "proved equivalent", False: "distinguishable (trace found)", None: "not proved"}[
            e.get("equivalent")]
        out.append(f"  - equivalence: {verdict} ({e.get('method')}, {e.get('seconds', 0):.1f} s): {e.get('detail')}")
    if m.message and m.status != "killed":
        out.append(f"  - {m.message}")
    return out


def write(camp, folder, command=""):
    """mutation.md and mutation.json in `folder`; returns the Markdown path."""
    os.makedirs(folder, exist_ok=True)
    md = os.path.join(folder, "mutation.md")
    with open(md, "w") as fh:
        fh.write(markdown(camp, command))
    counted = camp.counted()
    k, n = camp.rate(counted)
    data = {"design": camp.target.label or camp.target.name, "verilog": camp.target.verilog_path,
            "module": camp.target.module, "sites": camp.sites, "sites_by_block": camp.sites_by_block,
            "seeds": camp.seeds, "settings": camp.settings, "killed": k, "non_equivalent": n,
            "kill_rate": k / n if n else None, "wall_seconds": camp.wall, "build_seconds": camp.build_seconds,
            "per_block": summary_rows(camp, lambda m: m.mutation.block),
            "per_kind": summary_rows(camp, lambda m: m.mutation.kind),
            "mutants": [m.to_dict() for m in camp.mutants]}
    with open(os.path.join(folder, "mutation.json"), "w") as fh:
        json.dump(data, fh, indent=1)
    return md


__all__ = ["KINDS", "Campaign", "CampaignError", "MutantResult", "SeedVerdict", "Target", "run_campaign", "write",
           "markdown", "catch_of"]
