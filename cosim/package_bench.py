"""Test benches for the accelerator package blocks, shared by the tests and
`prism package`.

* `run_distributor(...)`: the work distributor alone, its targets modelled in
  Python (so a test can inject stale completions, retries and epoch changes).
* `run_package(...)`: the whole `degraded_die_package` (distributor, estimator,
  die models, completion arbiter) co-simulated cycle by cycle.

Both drive inputs at the falling edge and sample at the rising edge, so the
MyHDL and Icarus back ends see identical cycles, and both feed every sampled
cycle to `PackageMonitors`.
"""
import collections
from dataclasses import dataclass, field

from myhdl import ResetSignal, Signal, block, instance, intbv

from cosim import toolchain
from cosim.package_monitors import PackageMonitors, unpack
from cosim.tbutil import clock_gen, reset_pulse


@dataclass(frozen=True)
class Geometry:
    """Widths of the package ports (all blocks take their widths from these)."""
    n_tgt: int = 4
    tgt_w: int = 2
    slot_w: int = 4         # 16-entry job table
    gen_w: int = 4
    work_w: int = 8
    job_w: int = 12
    epoch_w: int = 4
    rate_w: int = 10
    cnt_w: int = 8
    owork_w: int = 12
    stat_w: int = 24
    drate_w: int = 8        # die model rate, in 2**-RATE_FRAC units per cycle

    @property
    def n_job(self):
        return 1 << self.slot_w


def _b():
    return Signal(bool(0))


def _u(w):
    return Signal(intbv(0)[w:])


def _rst():
    return ResetSignal(0, active=1, isasync=False)


def distributor_signals(g=Geometry()):
    return dict(
        clk=_b(), rst=_rst(),
        s_axis_job_tdata=_u(g.work_w), s_axis_job_tid=_u(g.job_w), s_axis_job_tvalid=_b(), s_axis_job_tready=_b(),
        retry_valid=_b(), retry_slot=_u(g.slot_w), retry_ready=_b(),
        m_job_valid=_b(), m_job_target=_u(g.tgt_w), m_job_slot=_u(g.slot_w), m_job_gen=_u(g.gen_w),
        m_job_tid=_u(g.job_w), m_job_work=_u(g.work_w), m_job_epoch=_u(g.epoch_w), m_job_retry=_b(),
        tgt_ready=_u(g.n_tgt), s_cmpl_valid=_b(), s_cmpl_slot=_u(g.slot_w), s_cmpl_gen=_u(g.gen_w),
        route_epoch=_u(g.epoch_w), tgt_enable=_u(g.n_tgt), svc_rate=_u(g.n_tgt * g.rate_w),
        dispatch_fire=_b(), retry_fire=_b(), retire_fire=_b(), retire_target=_u(g.tgt_w),
        retire_work=_u(g.work_w), retire_tid=_u(g.job_w),
        outstanding=_u(g.n_tgt * g.cnt_w), outstanding_work=_u(g.n_tgt * g.owork_w),
        chk_slot=_u(g.slot_w), chk_live=_b(), chk_gen=_u(g.gen_w), chk_epoch=_u(g.epoch_w))


def package_signals(g=Geometry()):
    return dict(
        clk=_b(), rst=_rst(),
        s_axis_job_tdata=_u(g.work_w), s_axis_job_tid=_u(g.job_w), s_axis_job_tvalid=_b(), s_axis_job_tready=_b(),
        route_epoch=_u(g.epoch_w), tgt_enable=_u(g.n_tgt), die_rate=_u(g.n_tgt * g.drate_w),
        dispatch_fire=_b(), m_job_target=_u(g.tgt_w), m_job_slot=_u(g.slot_w), m_job_gen=_u(g.gen_w),
        m_job_tid=_u(g.job_w), m_job_work=_u(g.work_w), m_job_epoch=_u(g.epoch_w),
        cmpl_valid=_b(), cmpl_slot=_u(g.slot_w), cmpl_gen=_u(g.gen_w),
        retire_fire=_b(), retire_target=_u(g.tgt_w), retire_tid=_u(g.job_w),
        outstanding=_u(g.n_tgt * g.cnt_w), outstanding_work=_u(g.n_tgt * g.owork_w), svc_rate=_u(g.n_tgt * g.rate_w),
        accepted_work=_u(g.n_tgt * g.stat_w), completed_work=_u(g.n_tgt * g.stat_w),
        active_cyc=_u(g.n_tgt * g.stat_w), stall_cyc=_u(g.n_tgt * g.stat_w), die_busy=_u(g.n_tgt),
        chk_slot=_u(g.slot_w), chk_live=_b(), chk_gen=_u(g.gen_w), chk_epoch=_u(g.epoch_w))


def run_until_done(top, backend, state, max_cycles, chunk_cycles=64):
    """Run a test bench until `state["finished"]` (set by its sampler) or `max_cycles`.

    The bench signals completion through `state` instead of raising
    StopSimulation: the simulation is advanced in chunks and quit once, which
    ends an Icarus co-simulation cleanly.
    """
    import myhdl
    from cosim.tbutil import CLOCK_PERIOD
    path = toolchain.current_waves()
    if path and backend == "myhdl":
        import os
        top.config_sim(trace=True, directory=os.path.dirname(path),
                       filename=os.path.splitext(os.path.basename(path))[0])
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


def _idle(clk):
    while True:
        yield clk.posedge


def _mask(bits):
    return sum(1 << i for i, b in enumerate(bits) if b)


# --------------------------------------------------------------------------- whole package

@dataclass
class PackageRun:
    """What one co-simulated phase did."""
    policy: int
    die_rates: list            # per die, 2**-rate_frac units per cycle
    enable: list
    units: int                 # total work units in the phase
    jobs: int
    phase_cycles: int = None   # first offer .. last retirement, inclusive; None if it did not finish
    dispatched_work: list = None
    dispatched_jobs: list = None
    svc_rate: list = None
    stall_cyc: list = None
    active_cyc: list = None
    accepted_work: list = None
    completed_work: list = None
    peak_outstanding: list = None   # per die, max outstanding job count over the phase
    trace: list = field(default_factory=list)   # (cycle, outstanding_work per die)
    monitors: PackageMonitors = None

    @property
    def throughput(self):
        """Work units per cycle over the phase."""
        return self.units / self.phase_cycles


def run_package(backend, die_rates, *, policy, enable=None, job_work=4, units=1200, fault=0, window=64,
                queue_depth=8, rate_frac=4, nominal_rate=None, imbalance_budget=None, max_cycles=6000,
                geometry=Geometry(), on_negedge=None, trace_every=4):
    """Run one phase of `units` work (jobs of `job_work` units) through the package.

    `die_rates[t]` is die t's service rate in 2**-rate_frac units per cycle;
    `enable[t]` its bit in the scheduler's enable mask.  The bounded-imbalance
    monitor is armed while every die is enabled and at `nominal_rate` (default:
    the fastest rate).  `on_negedge(cycle, sigs)` may change inputs mid-phase.
    """
    from hdl.degraded_die_package import degraded_die_package
    g = geometry
    n = g.n_tgt
    if len(die_rates) != n:
        raise ValueError(f"die_rates has {len(die_rates)} entries; the package has {n} dies")
    enable = list(enable) if enable is not None else [1] * n
    if units % job_work:
        raise ValueError(f"units={units} is not a whole number of {job_work}-unit jobs")
    n_jobs = units // job_work
    nominal = nominal_rate if nominal_rate is not None else max(die_rates)
    budget = imbalance_budget if imbalance_budget is not None else 4 * job_work
    sigs = package_signals(g)
    mon = PackageMonitors(n, g.owork_w, budget)
    res = PackageRun(policy=policy, die_rates=list(die_rates), enable=enable, units=units, jobs=n_jobs, monitors=mon)
    state = {"next": 0, "cycle": -1, "first": None, "retired": 0, "rates": list(die_rates), "enable": enable,
             "peak": [0] * n}
    factory = toolchain.select(degraded_die_package, backend)

    def healthy():
        return all(state["enable"]) and all(r == nominal for r in state["rates"])

    @block
    def bench():
        dut = factory(**sigs, POLICY=policy, FAULT=fault, WINDOW=window, QUEUE_DEPTH=queue_depth,
                      RATE_FRAC=rate_frac)
        s = sigs

        @instance
        def drive():
            s["die_rate"].next = sum(r << (g.drate_w * t) for t, r in enumerate(die_rates))
            s["tgt_enable"].next = _mask(enable)
            while True:
                yield s["clk"].negedge
                cyc = state["cycle"] + 1
                if on_negedge is not None and not s["rst"]:
                    on_negedge(cyc, s, state)
                    s["die_rate"].next = sum(r << (g.drate_w * t) for t, r in enumerate(state["rates"]))
                    s["tgt_enable"].next = _mask(state["enable"])
                s["chk_slot"].next = cyc % g.n_job
                i = state["next"]
                if i < n_jobs and not s["rst"]:
                    s["s_axis_job_tvalid"].next = 1
                    s["s_axis_job_tdata"].next = job_work
                    s["s_axis_job_tid"].next = i % (1 << g.job_w)
                else:
                    s["s_axis_job_tvalid"].next = 0

        @instance
        def sample():
            while True:
                yield s["clk"].posedge
                if s["rst"]:
                    continue
                state["cycle"] += 1
                cyc = state["cycle"]
                v = {k: s[k].val for k in ("dispatch_fire", "m_job_target", "m_job_slot", "m_job_gen", "m_job_tid",
                                           "m_job_epoch", "m_job_work", "retire_fire", "cmpl_slot", "cmpl_gen",
                                           "tgt_enable", "outstanding_work", "chk_slot", "chk_live", "chk_epoch")}
                v["healthy"] = healthy()
                mon.sample(cyc, v)
                if s["s_axis_job_tvalid"] and state["first"] is None:
                    state["first"] = cyc
                if s["s_axis_job_tvalid"] and s["s_axis_job_tready"]:
                    state["next"] += 1
                outs = unpack(s["outstanding"].val, n, g.cnt_w)
                state["peak"] = [max(a, b) for a, b in zip(state["peak"], outs)]
                if trace_every and cyc % trace_every == 0:
                    res.trace.append((cyc, unpack(s["outstanding_work"].val, n, g.owork_w)))
                if s["retire_fire"]:
                    state["retired"] += 1
                    if state["retired"] == n_jobs:
                        res.phase_cycles = cyc - state["first"] + 1
                        break
                if cyc >= max_cycles:
                    break
            # One more edge so the counters include the last retirement.
            yield s["clk"].posedge
            res.svc_rate = unpack(s["svc_rate"].val, n, g.rate_w)
            for name in ("stall_cyc", "active_cyc", "accepted_work", "completed_work"):
                setattr(res, name, unpack(s[name].val, n, g.stat_w))
            res.peak_outstanding = state["peak"]
            state["finished"] = True
            yield _idle(s["clk"])

        return dut, clock_gen(s["clk"]), reset_pulse(s["clk"], s["rst"]), drive, sample

    run_until_done(bench(), backend, state, max_cycles + 8)
    res.dispatched_work = list(res.accepted_work)
    res.dispatched_jobs = [w // job_work for w in res.accepted_work]
    return res


# --------------------------------------------------------------------------- distributor alone

@dataclass
class DistributorRun:
    dispatches: list = field(default_factory=list)   # (cycle, target, slot, gen, tid, epoch, work, outstanding_work before)
    retires: list = field(default_factory=list)      # (cycle, target, slot, gen, tid)
    retries: list = field(default_factory=list)      # (cycle, slot)
    outstanding: list = field(default_factory=list)  # per cycle: (cycle, counts, work)
    monitors: PackageMonitors = None
    cycles: int = 0
    accepted: int = 0


def run_distributor(backend, *, policy, fault=0, jobs=(), svc_rate=None, enable=None, service=None,
                    depth=4, max_cycles=600, geometry=Geometry(), script=None, imbalance_budget=1 << 30,
                    healthy=False, hold_completions=False):
    """Drive the work distributor alone; its N targets are modelled here.

    jobs: list of work units, offered back to back (id = index).
    svc_rate: static per-target rate inputs (ints); enable: per-target bits.
    service: per-target cycles per work unit of the Python target model.
    script: {cycle: callable(sigs, tb)} run at that cycle's falling edge, after
    the default drive (to inject stale completions, retries, epoch changes).
    hold_completions: targets never complete (to inspect the dispatch pattern).
    """
    from hdl.work_distributor import work_distributor
    g = geometry
    n = g.n_tgt
    svc_rate = list(svc_rate) if svc_rate is not None else [0] * n
    enable = list(enable) if enable is not None else [1] * n
    service = list(service) if service is not None else [1] * n
    sigs = distributor_signals(g)
    mon = PackageMonitors(n, g.owork_w, imbalance_budget)
    res = DistributorRun(monitors=mon)
    tb = {"next": 0, "cycle": -1, "queues": [collections.deque() for _ in range(n)], "done": collections.deque(),
          "override_cmpl": None, "jobs": list(jobs), "svc_rate": svc_rate, "enable": enable, "live": {},
          "mon": mon}
    factory = toolchain.select(work_distributor, backend)

    @block
    def bench():
        dut = factory(**sigs, POLICY=policy, FAULT=fault)
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
                    tb["override_cmpl"] = None
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
                v = {k: s[k].val for k in ("dispatch_fire", "retry_fire", "m_job_target", "m_job_slot", "m_job_gen",
                                           "m_job_tid", "m_job_epoch", "m_job_work", "tgt_enable",
                                           "outstanding_work", "chk_slot", "chk_live", "chk_epoch")}
                v["retire_fire"] = s["retire_fire"].val
                v["cmpl_slot"] = s["s_cmpl_slot"].val
                v["cmpl_gen"] = s["s_cmpl_gen"].val
                v["healthy"] = healthy
                mon.sample(cyc, v)
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
                    res.retires.append((cyc, int(s["retire_target"].val), int(s["s_cmpl_slot"].val),
                                        int(s["s_cmpl_gen"].val), int(s["retire_tid"].val)))
                if s["retry_fire"]:
                    res.retries.append((cyc, int(s["m_job_slot"].val)))
                if s["m_job_valid"] and (int(s["tgt_ready"].val) >> int(s["m_job_target"].val)) & 1:
                    t = int(s["m_job_target"].val)
                    rec = (cyc, t, int(s["m_job_slot"].val), int(s["m_job_gen"].val), int(s["m_job_tid"].val),
                           int(s["m_job_epoch"].val), int(s["m_job_work"].val), work)
                    if not s["m_job_retry"]:
                        res.dispatches.append(rec)
                        tb["queues"][t].append([rec[2], rec[3], rec[6] * service[t]])
                        tb["live"][rec[2]] = rec[3]
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
                    tb["finished"] = True
                    yield _idle(s["clk"])

        def script_pending(cyc):
            return bool(script) and any(c > cyc for c in script)

        return dut, clock_gen(s["clk"]), reset_pulse(s["clk"], s["rst"]), drive, sample

    run_until_done(bench(), backend, tb, max_cycles + 8)
    return res
