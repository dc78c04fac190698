"""Test benches for the accelerator package blocks, shared by the tests and
`prism package`.

* `run_package(setup, backend)`: the whole `accelerator_package` (distributor,
  estimator, dies, shared-resource arbiter, phase barrier, assertion monitor)
  for one `PackageSetup`, cycle by cycle.  Back ends: "myhdl" (the MyHDL
  design), "icarus" (converted Verilog co-simulated through MyHDL), and the
  batched runs of `cosim.package.package_batch` ("icarus-2005", "icarus-2012",
  "verilator"), which replay the same stimulus in a generated Verilog test
  bench.  Every back end returns the same per-cycle record of every output.
  A setup with a package fault (cosim/package/faults.py) runs the faulted
  Verilog: on every back end but the two that run MyHDL ("myhdl",
  "myhdl+icarus"; `verilog_backend` names the one to use instead).
* `run_distributor(...)`: the work distributor with its assertion monitor
  (`checked_work_distributor`, cosim/package/), its targets modelled in Python,
  so a test can inject stale completions, retries and epoch changes.

Timing, identical in every back end: the clock starts low with rising edges at
5, 15, 25, ...; reset is held for two rising edges and released at the falling
edge at 20; "cycle c" is the interval sampled by the rising edge at 25 + 10c.
Inputs for cycle c are driven at the falling edge before it; outputs are
sampled at its rising edge (their values during cycle c).
"""
import collections
from dataclasses import dataclass, field

from myhdl import Signal, block, instance, intbv

from cosim.package.package_batch import run_package_batch
# the run's description, shared with the batched bench (and imported from here by the tests)
from cosim.package.package_setup import (FAIL_PORTS, PACKAGE_INPUTS, PACKAGE_OUTPUTS, PER_DIE,  # noqa: F401
                                         Geometry, PackageRun, PackageSetup, checked_distributor_signals,
                                         distributor_signals, pack, package_signals, unpack)
from cosim.package.checked_work_distributor import checked_work_distributor
from cosim.package.faults import PACKAGE_FAULTS
from cosim.sim import replay, toolchain
from cosim.sim.faults import with_fault
from cosim.sim.tbutil import CLOCK_PERIOD, clock_gen, reset_pulse
from golden.package import resource_graph as rg
from hdl.common.wiring import bundle
from hdl.package.package_assertion_monitor import ASSERTIONS
from hdl.package.work_distributor import POLICY_ROUND_ROBIN, POLICY_SERVICE_RATE

PACKAGE_BACKENDS = ("myhdl", "icarus", "myhdl+icarus", "icarus-2005", "icarus-2012", "verilator")
# the back ends that run the MyHDL blocks, where a package fault does not exist
MYHDL_BACKENDS = ("myhdl", "myhdl+icarus")


def verilog_backend(backend):
    """`backend`, or the per-cycle Icarus co-simulation in place of one that runs MyHDL: the back
    end a faulted package runs on."""
    return "icarus" if backend in MYHDL_BACKENDS else backend


def run_package(setup, backend="myhdl"):
    """Run `setup` on `backend` and return the per-cycle record (`PackageRun`)."""
    if backend in ("myhdl", "icarus", "myhdl+icarus"):
        return _run_package_myhdl(setup, backend)
    if backend in ("icarus-2005", "icarus-2012", "verilator"):
        return run_package_batch(setup, backend)
    raise ValueError(f"unknown back end {backend!r}; choose one of {', '.join(PACKAGE_BACKENDS)}")


class _Stimulus:
    """The per-cycle input drive of a setup (the batched test bench implements the same)."""

    def __init__(self, setup):
        self.setup = setup
        self.events = setup.schedule()
        self.retries = sorted(setup.retries)
        self.lates = sorted(setup.late_completions)
        self.next_job = 0
        self.ri = 0
        self.li = 0
        self.reset_cycles = {c + k for c in setup.resets for k in (0, 1)}

    def in_reset(self, c):
        return c in self.reset_cycles

    def drive(self, c, s):
        """Set the inputs for cycle c (at the falling edge before it)."""
        st = self.setup
        s["rst"].next = self.in_reset(c)
        if self.in_reset(c):
            self.next_job = 0
        for port, value in self.events.get(c, ()):
            s[port].next = value
        if self.next_job < st.total_jobs:
            s["s_axis_job_tvalid"].next = 1
            s["s_axis_job_tdata"].next = st.job_work
            s["s_axis_job_tid"].next = self.next_job % (1 << st.geometry.job_w)
        else:
            s["s_axis_job_tvalid"].next = 0
        if self.ri < len(self.retries) and c >= self.retries[self.ri][0]:
            s["retry_valid"].next = 1
            s["retry_slot"].next = self.retries[self.ri][1]
        else:
            s["retry_valid"].next = 0
        while self.li < len(self.lates) and self.lates[self.li][0] < c:
            self.li += 1            # two late completions in one cycle: the later ones are dropped
        if self.li < len(self.lates) and self.lates[self.li][0] == c:
            _, slot, gen = self.lates[self.li]
            s["s_late_cmpl_valid"].next = 1
            s["s_late_cmpl_slot"].next = slot
            s["s_late_cmpl_gen"].next = gen
            self.li += 1
        else:
            s["s_late_cmpl_valid"].next = 0

    def sampled(self, s):
        """Handshakes at the rising edge."""
        if s["s_axis_job_tvalid"] and s["s_axis_job_tready"]:
            self.next_job += 1
        if s["retry_valid"] and s["retry_ready"]:
            self.ri += 1


def _run_package_myhdl(setup, backend):
    g = setup.geometry
    sigs = package_signals(g)
    for name, value in setup.initial_inputs().items():
        sigs[name] = Signal(intbv(value)[len(sigs[name]):])
    trace = {name: [] for name, _ in PACKAGE_OUTPUTS}
    stim = _Stimulus(setup)
    state = {}
    factory = toolchain.select(setup.block(), backend)

    @block
    def bench():
        dut = factory(**bundle(setup.block(), sigs), **setup.params())
        s = sigs

        @instance
        def run():
            yield s["clk"].negedge          # t = 10, reset still held
            yield s["clk"].negedge          # t = 20: release reset, drive cycle 0
            c = 0
            while True:
                stim.drive(c, s)
                yield s["clk"].posedge
                for name in trace:
                    trace[name].append(int(s[name].val))
                stim.sampled(s)
                c += 1
                if trace["phases_done"][-1] >= setup.phases or c >= setup.max_cycles:
                    break
                yield s["clk"].negedge
            state["finished"] = True
            while True:
                yield s["clk"].posedge

        return dut, clock_gen(s["clk"]), run

    run_until_done(bench(), backend, state, setup.max_cycles + 8)
    return PackageRun(setup, backend, trace)


def run_until_done(top, backend, state, max_cycles, chunk_cycles=64):
    """Run a test bench until `state["finished"]` (set by its sampler) or `max_cycles`.

    The bench signals completion through `state` instead of raising
    StopSimulation: the simulation is advanced in chunks and quit once, which
    ends an Icarus co-simulation cleanly.
    """
    import myhdl
    path = toolchain.current_waves()
    if path and backend == "myhdl":
        import os
        top.config_sim(trace=True, directory=os.path.dirname(path),
                       filename=os.path.splitext(os.path.basename(path))[0])

    def simulate():
        try:
            spent = 0
            while not state.get("finished") and spent < max_cycles + 2 * chunk_cycles:
                top.run_sim(duration=chunk_cycles * CLOCK_PERIOD, quiet=1)
                spent += chunk_cycles
        finally:
            top.quit_sim()
            if path and backend == "myhdl":
                myhdl.traceSignals.directory = None
                myhdl.traceSignals.filename = None
    if backend == replay.BACKEND:
        replay.simulate_and_check(simulate, vcd=path)
    else:
        simulate()


def run_vectors(block_func, sig, params, backend, stim, apply, sample, reset_cycles=0, sample_after=False):
    """One stimulus vector per cycle into block_func(**sig, **params): apply(vector) at a falling
    edge, sample() just after the next rising edge; returns the samples.  reset_cycles: falling
    edges with sig["rst"] held (as created) before the first vector; sample_after: one more
    sample a cycle after the last vector."""
    got, state = [], {}
    factory = toolchain.select(block_func, backend)
    clk = sig["clk"]

    @block
    def bench():
        dut = factory(**bundle(block_func, sig), **params)

        @instance
        def run():
            yield clk.negedge
            if reset_cycles:
                for _ in range(reset_cycles - 1):
                    yield clk.negedge
                sig["rst"].next = 0
            for vector in stim:
                apply(vector)
                yield clk.posedge
                got.append(sample())
                yield clk.negedge
            if sample_after:
                yield clk.posedge
                got.append(sample())
            state["finished"] = True
            yield _idle(clk)

        return dut, clock_gen(clk), run

    run_until_done(bench(), backend, state, len(stim) + 8)
    return got


def _idle(clk):
    while True:
        yield clk.posedge


def _mask(bits):
    return sum(1 << i for i, b in enumerate(bits) if b)


# --------------------------------------------------------------------------- distributor alone

@dataclass
class DistributorRun:
    dispatches: list = field(default_factory=list)   # (cycle, target, slot, gen, tid, epoch, work, outstanding_work before)
    retires: list = field(default_factory=list)      # (cycle, target, slot, gen, tid)
    retries: list = field(default_factory=list)      # (cycle, slot)
    outstanding: list = field(default_factory=list)  # per cycle: (cycle, counts, work)
    fails: dict = field(default_factory=dict)        # assertion -> [cycles its failure output was 1]
    armed: int = 0                                   # cycles a_bounded_imbalance was armed
    live: dict = field(default_factory=dict)         # slot -> (tid, gen) of live jobs, from the dispatch/retire ports
    cycles: int = 0
    accepted: int = 0

    def fired(self):
        """Assertions whose failure output was ever 1, in first-fired order."""
        return [a for a, _ in sorted(((a, c[0]) for a, c in self.fails.items() if c), key=lambda kv: kv[1])]

    def first(self, assertion):
        return self.fails[assertion][0] if self.fails.get(assertion) else None


def run_distributor(backend, *, policy, fault="", jobs=(), svc_rate=None, enable=None, service=None,
                    depth=4, max_cycles=600, geometry=Geometry(), script=None, imbalance_budget=1 << 11,
                    hold_completions=False):
    """Drive the work distributor and its assertion monitor; its N targets are modelled here.

    fault: a package fault of the distributor (cosim/package/faults.py), "" for none; it runs on
    a Verilog back end only.
    jobs: list of work units, offered back to back (id = index).
    svc_rate: static per-target rate inputs (ints; non-zero = measured); enable: per-target bits.
    service: per-target cycles per work unit of the Python target model.
    script: {cycle: callable(sigs, tb)} run at that cycle's falling edge, after
    the default drive (to inject stale completions, retries, epoch changes);
    tb["live"] maps each live slot to (tid, gen), tracked from the ports.
    hold_completions: targets never complete (to inspect the dispatch pattern).
    """
    g = geometry
    n = g.n_tgt
    svc_rate = list(svc_rate) if svc_rate is not None else [0] * n
    enable = list(enable) if enable is not None else [1] * n
    service = list(service) if service is not None else [1] * n
    sigs = checked_distributor_signals(g)
    res = DistributorRun(fails={a: [] for a in ASSERTIONS})
    tb = {"next": 0, "cycle": -1, "queues": [collections.deque() for _ in range(n)], "done": collections.deque(),
          "jobs": list(jobs), "svc_rate": svc_rate, "enable": enable, "live": res.live}
    factory = toolchain.select(with_fault(checked_work_distributor, PACKAGE_FAULTS[fault] if fault else None), backend)

    @block
    def bench():
        dut = factory(**bundle(checked_work_distributor, sigs), POLICY=policy, IMBALANCE_BUDGET=imbalance_budget)
        s = sigs

        @instance
        def drive():
            while True:
                s["svc_rate"].next = sum(r << (g.rate_w * t) for t, r in enumerate(tb["svc_rate"]))
                s["tgt_enable"].next = _mask(tb["enable"])
                yield s["clk"].negedge
                cyc = tb["cycle"] + 1
                s["chk_slot"].next = cyc % g.n_job
                i = tb["next"]
                if i < len(tb["jobs"]) and not s["rst"]:
                    s["s_axis_job_tvalid"].next = 1
                    s["s_axis_job_tdata"].next = tb["jobs"][i]
                    s["s_axis_job_tid"].next = i
                else:
                    s["s_axis_job_tvalid"].next = 0
                s["tgt_ready"].next = _mask(len(q) < depth for q in tb["queues"])
                s["retry_valid"].next = 0
                if tb["done"] and not hold_completions:
                    slot, gen = tb["done"][0]
                    s["s_cmpl_valid"].next = 1
                    s["s_cmpl_slot"].next = slot
                    s["s_cmpl_gen"].next = gen
                else:
                    s["s_cmpl_valid"].next = 0
                if script and cyc in script and not s["rst"]:
                    script[cyc](s, tb)
                s["svc_rate"].next = sum(r << (g.rate_w * t) for t, r in enumerate(tb["svc_rate"]))
                s["tgt_enable"].next = _mask(tb["enable"])

        @instance
        def sample():
            while True:
                yield s["clk"].posedge
                if s["rst"]:
                    continue
                tb["cycle"] += 1
                cyc = tb["cycle"]
                # The monitor's outputs are registered: a 1 now reports the previous edge.
                for a, port in zip(ASSERTIONS, FAIL_PORTS):
                    if s[port]:
                        res.fails[a].append(cyc - 1)
                res.armed += bool(s["imbalance_armed"])
                counts = unpack(s["outstanding"].val, n, g.cnt_w)
                work = unpack(s["outstanding_work"].val, n, g.owork_w)
                res.outstanding.append((cyc, counts, work))
                if s["s_axis_job_tvalid"] and s["s_axis_job_tready"]:
                    tb["next"] += 1
                    res.accepted += 1
                if s["s_cmpl_valid"]:
                    pair = (int(s["s_cmpl_slot"].val), int(s["s_cmpl_gen"].val))
                    if tb["done"] and tb["done"][0] == pair:
                        tb["done"].popleft()
                if s["retire_fire"]:
                    slot = int(s["s_cmpl_slot"].val)
                    res.retires.append((cyc, int(s["retire_target"].val), slot,
                                        int(s["s_cmpl_gen"].val), int(s["retire_tid"].val)))
                    res.live.pop(slot, None)
                if s["retry_fire"]:
                    res.retries.append((cyc, int(s["m_job_slot"].val)))
                if s["m_job_valid"] and (int(s["tgt_ready"].val) >> int(s["m_job_target"].val)) & 1:
                    t = int(s["m_job_target"].val)
                    rec = (cyc, t, int(s["m_job_slot"].val), int(s["m_job_gen"].val), int(s["m_job_tid"].val),
                           int(s["m_job_epoch"].val), int(s["m_job_work"].val), work)
                    if not s["m_job_retry"]:
                        res.dispatches.append(rec)
                        tb["queues"][t].append([rec[2], rec[3], rec[6] * service[t]])
                        res.live[rec[2]] = (rec[4], rec[3])
                # Python targets: serve each head job one unit of time per cycle.
                for q in tb["queues"]:
                    if q and not hold_completions:
                        q[0][2] -= 1
                        if q[0][2] <= 0:
                            slot, gen, _ = q.popleft()
                            tb["done"].append((slot, gen))
                if cyc >= max_cycles or (tb["next"] >= len(tb["jobs"]) and not any(tb["queues"])
                                         and not tb["done"] and cyc > 4 and not script_pending(cyc)):
                    res.cycles = cyc
                    # one more edge: the monitor reports this cycle's checks in the next one
                    yield s["clk"].posedge
                    for a, port in zip(ASSERTIONS, FAIL_PORTS):
                        if s[port]:
                            res.fails[a].append(cyc)
                    tb["finished"] = True
                    yield _idle(s["clk"])

        def script_pending(cyc):
            return bool(script) and any(c > cyc for c in script)

        return dut, clock_gen(s["clk"]), reset_pulse(s["clk"], s["rst"]), drive, sample

    run_until_done(bench(), backend, tb, max_cycles + 8)
    return res


# --------------------------------------------------------------------------- setups from the resource graph

TIME_SCALE = 8      # simulated cycles per cycle of the resource-graph model (see setup_from_graph)


def setup_from_graph(pkg=None, scale=TIME_SCALE, rate_frac=4, job_work=4, **changes):
    """The `PackageSetup` that co-simulates resource-graph package `pkg` with time
    dilated by `scale`: every rate divided by `scale`, the barrier multiplied by
    it, so a phase takes `scale` times the model's cycles.  (The dispatch bus
    issues one job per cycle and the estimator needs several jobs per window, so
    the model's 16 work units per cycle are run as 2 per simulated cycle.)

    compute_per_die -> die_rate, hbm_rate -> hbm_rate, dies x d2d_per_die ->
    d2d_rate (the package's crossing service), cross_fraction = 2**-s ->
    CROSS_SHIFT s; every die's own link unlimited.  Rates must come out whole in
    2**-rate_frac units.  `changes` override any PackageSetup field."""
    from fractions import Fraction

    pkg = pkg or rg.Package()
    unit = Fraction(1 << rate_frac, scale)

    def whole(x, what):
        v = Fraction(x) * unit
        if v.denominator != 1:
            raise ValueError(f"{what} = {x} is not a whole number of 2**-{rate_frac} units at 1/{scale} rate")
        return int(v)
    if pkg.cross_fraction == 0:
        shift = None
    else:
        s = (1 / Fraction(pkg.cross_fraction)).numerator.bit_length() - 1
        if Fraction(1, 1 << s) != pkg.cross_fraction:
            raise ValueError(f"cross_fraction {pkg.cross_fraction} is not a power of two")
        shift = s
    if Fraction(pkg.barrier_cycles * scale).denominator != 1 or pkg.phase_units % job_work:
        raise ValueError("the barrier and the phase must be whole cycles / whole jobs")
    fields = dict(die_rate=(whole(pkg.compute_per_die, "compute_per_die"),) * pkg.dies,
                  hbm_rate=whole(pkg.hbm_rate, "hbm_rate"), d2d_rate=whole(pkg.dies * pkg.d2d_per_die, "d2d"),
                  cross_shift=shift, rate_frac=rate_frac, job_work=job_work, phase_units=int(pkg.phase_units),
                  barrier_cycles=int(pkg.barrier_cycles * scale))
    fields.update(changes)
    return PackageSetup(**fields)


def live_slots(run, cycle):
    """{slot: generation} of the jobs live during `cycle`, replayed from the run's
    dispatch and retirement outputs (to aim retries and stale completions)."""
    live = {}
    t = run.trace
    for c in range(min(cycle, run.cycles)):
        if t["retire_fire"][c]:
            live.pop(t["cmpl_slot"][c], None)
        if t["dispatch_fire"][c]:
            live[t["m_job_slot"][c]] = t["m_job_gen"][c]
    return live


FAULT_BASE = PackageSetup(die_rate=(8, 8, 8, 8), hbm_rate=40, d2d_rate=24, phase_units=240, max_cycles=250)


def broken_variants(correct_run, base=FAULT_BASE):
    """{assertion: (broken setup, the same stimulus on the correct design)}: one
    deliberately broken package per assertion, with the stimulus that exposes it.
    `correct_run` is `base` run on the correct design; the stale completion and
    the retries are aimed at jobs it shows live at that cycle."""
    ok = correct_run
    lv = live_slots(ok, 40)
    slot = max(lv, key=lambda s: lv[s])           # a recycled slot: its previous use was a real job
    if lv[slot] < 2:
        raise ValueError("no recycled slot is live at cycle 40 of the correct run")
    stale = ((40, slot, (lv[slot] - 1) % (1 << base.geometry.gen_w)),)
    # a retry needs a live job and, to show the allocation bug, a free table slot
    rc = next(c for c in range(40, ok.cycles) if 0 < len(live_slots(ok, c)) < base.geometry.n_job)
    retry = ((rc, min(live_slots(ok, rc))),)
    cases = {
        "a_retire_once": base.with_(fault="no_gen_check", late_completions=stale),
        "a_retry_creates_no_job": base.with_(fault="retry_as_job", retries=retry),
        "a_route_epoch_stable": base.with_(fault="epoch_rewrite", events=((40, "route_epoch", 3),)),
        "a_no_dispatch_to_disabled": base.with_(policy=POLICY_ROUND_ROBIN, enable=(1, 1, 0, 1),
                                                die_rate=(8, 8, 0, 8)),
        "a_bounded_imbalance": base.with_(fault="tie_lowest"),
        "a_work_conserved": base.with_(fault="retry_as_work", retries=retry),
    }
    return {a: (st, st.with_(fault="", policy=POLICY_SERVICE_RATE)) for a, st in cases.items()}


BROKEN_VARIANT_TEXT = {
    "a_retire_once": "fault no_gen_check: retirement ignores the generation; a stale completion of a recycled "
                     "slot (a late duplicate from the transport) arrives at cycle 40",
    "a_retry_creates_no_job": "fault retry_as_job: a transport retry allocates a new job entry; one retry of a "
                              "live job while a table slot is free",
    "a_route_epoch_stable": "fault epoch_rewrite: a route-epoch change is written into every live entry; the "
                            "epoch changes at cycle 40",
    "a_no_dispatch_to_disabled": "POLICY_ROUND_ROBIN (the notes' §13 design) with die 2 disabled and hung",
    "a_bounded_imbalance": "fault tie_lowest: the notes' §14 selection loop as written (ties to target 0)",
    "a_work_conserved": "fault retry_as_work: the package feeds the estimator transport retries as completed "
                        "work (§16); one retry",
}
