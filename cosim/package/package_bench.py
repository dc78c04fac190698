"""Test benches for the accelerator package blocks, shared by the tests and
`prism package`.

* `run_package(setup, backend)`: the whole `accelerator_package` (distributor,
  estimator, dies, shared-resource arbiter, phase barrier, assertion monitor)
  for one `PackageSetup`, cycle by cycle.  Back ends: "myhdl" (the MyHDL
  design), "icarus" (converted Verilog co-simulated through MyHDL), and the
  batched runs of `cosim.package.package_batch` ("icarus-2005", "icarus-2012",
  "verilator"), which replay the same stimulus in a generated Verilog test
  bench.  Every back end returns the same per-cycle record of every output.
* `run_distributor(...)`: the work distributor with its assertion monitor
  (`checked_work_distributor`), its targets modelled in Python, so a test can
  inject stale completions, retries and epoch changes.

Timing, identical in every back end: the clock starts low with rising edges at
5, 15, 25, ...; reset is held for two rising edges and released at the falling
edge at 20; "cycle c" is the interval sampled by the rising edge at 25 + 10c.
Inputs for cycle c are driven at the falling edge before it; outputs are
sampled at its rising edge (their values during cycle c).
"""
import collections
import inspect
from dataclasses import dataclass, field, replace

from myhdl import ResetSignal, Signal, block, instance, intbv

from cosim.sim import toolchain
from cosim.sim.tbutil import clock_gen, reset_pulse
from hdl.package.accelerator_package import accelerator_package
from hdl.package.package_assertion_monitor import ASSERTIONS
from hdl.package.work_distributor import POLICY_SERVICE_RATE

FAIL_PORTS = tuple("fail_" + a[2:] for a in ASSERTIONS)
PACKAGE_BACKENDS = ("myhdl", "icarus", "myhdl+icarus", "icarus-2005", "icarus-2012", "verilator")


def unpack(value, count, width):
    """Split a packed vector into `count` fields of `width` bits, field 0 lowest."""
    value = int(value)
    mask = (1 << width) - 1
    return [(value >> (width * i)) & mask for i in range(count)]


def pack(values, width):
    out = 0
    for i, v in enumerate(values):
        if not 0 <= v < (1 << width):
            raise ValueError(f"value {v} does not fit in {width} bits")
        out |= v << (width * i)
    return out


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
    rate_w: int = 10        # estimator's svc_rate (work units per window)
    cnt_w: int = 8
    owork_w: int = 12
    stat_w: int = 24
    drate_w: int = 8        # compute / link / HBM / D2D rates, in 2**-RATE_FRAC units per cycle
    jobs_w: int = 16        # phase_jobs
    barrier_w: int = 16     # barrier_cycles
    cyc_w: int = 20         # phase_cycles, stream_cycles
    phases_w: int = 8

    @property
    def n_job(self):
        return 1 << self.slot_w

    @classmethod
    def dies(cls, n):
        """The default geometry for an n-die package."""
        if n < 2:
            raise ValueError(f"a package needs at least 2 dies, got {n}")
        return cls(n_tgt=n, tgt_w=max(1, (n - 1).bit_length()))


def _b():
    return Signal(bool(0))


def _u(w, v=0):
    return Signal(intbv(v)[w:])


def _rst():
    return ResetSignal(1, active=1, isasync=False)


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
        chk_slot=_u(g.slot_w), chk_live=_b(), chk_gen=_u(g.gen_w), chk_epoch=_u(g.epoch_w),
        job_live=_u(g.n_job), job_gen=_u(g.n_job * g.gen_w), job_epoch=_u(g.n_job * g.epoch_w))


def checked_distributor_signals(g=Geometry()):
    return dict(distributor_signals(g), **{p: _b() for p in FAIL_PORTS}, imbalance_armed=_b())


# Inputs and outputs of accelerator_package: (name, width function of the geometry).
PACKAGE_INPUTS = (
    ("s_axis_job_tdata", lambda g: g.work_w), ("s_axis_job_tid", lambda g: g.job_w),
    ("s_axis_job_tvalid", None), ("retry_valid", None), ("retry_slot", lambda g: g.slot_w),
    ("s_late_cmpl_valid", None), ("s_late_cmpl_slot", lambda g: g.slot_w), ("s_late_cmpl_gen", lambda g: g.gen_w),
    ("route_epoch", lambda g: g.epoch_w), ("tgt_enable", lambda g: g.n_tgt),
    ("die_rate", lambda g: g.n_tgt * g.drate_w), ("link_rate", lambda g: g.n_tgt * g.drate_w),
    ("hbm_rate", lambda g: g.drate_w), ("d2d_rate", lambda g: g.drate_w),
    ("phase_jobs", lambda g: g.jobs_w), ("barrier_cycles", lambda g: g.barrier_w))
PACKAGE_OUTPUTS = (
    ("s_axis_job_tready", None), ("retry_ready", None),
    ("dispatch_fire", None), ("retry_fire", None), ("m_job_target", lambda g: g.tgt_w),
    ("m_job_slot", lambda g: g.slot_w), ("m_job_gen", lambda g: g.gen_w), ("m_job_tid", lambda g: g.job_w),
    ("m_job_work", lambda g: g.work_w), ("m_job_epoch", lambda g: g.epoch_w),
    ("cmpl_valid", None), ("cmpl_slot", lambda g: g.slot_w), ("cmpl_gen", lambda g: g.gen_w),
    ("retire_fire", None), ("retire_target", lambda g: g.tgt_w), ("retire_tid", lambda g: g.job_w),
    ("outstanding", lambda g: g.n_tgt * g.cnt_w), ("outstanding_work", lambda g: g.n_tgt * g.owork_w),
    ("svc_rate", lambda g: g.n_tgt * g.rate_w), ("rate_valid", lambda g: g.n_tgt),
    ("accepted_work", lambda g: g.n_tgt * g.stat_w), ("completed_work", lambda g: g.n_tgt * g.stat_w),
    ("active_cyc", lambda g: g.n_tgt * g.stat_w), ("stall_cyc", lambda g: g.n_tgt * g.stat_w),
    ("die_busy", lambda g: g.n_tgt), ("die_stall", lambda g: g.n_tgt),
    ("hbm_sat_cyc", lambda g: g.stat_w), ("d2d_sat_cyc", lambda g: g.stat_w),
    ("accept_open", None), ("barrier_active", None), ("phase_done", None), ("phases_done", lambda g: g.phases_w),
    ("phase_cycles", lambda g: g.cyc_w), ("stream_cycles", lambda g: g.cyc_w),
    *((p, None) for p in FAIL_PORTS), ("imbalance_armed", None))
# Per-die packed outputs and the width of one die's field.
PER_DIE = {"outstanding": "cnt_w", "outstanding_work": "owork_w", "svc_rate": "rate_w", "accepted_work": "stat_w",
           "completed_work": "stat_w", "active_cyc": "stat_w", "stall_cyc": "stat_w", "rate_valid": None,
           "die_busy": None, "die_stall": None}


def package_signals(g=Geometry()):
    sigs = {"clk": _b(), "rst": _rst()}
    for name, w in PACKAGE_INPUTS + PACKAGE_OUTPUTS:
        sigs[name] = _b() if w is None else _u(w(g))
    return sigs


# --------------------------------------------------------------------------- one package run

# accelerator_package's elaboration parameters (upper case by the repository's convention) and
# their defaults, read from the block so the bench cannot drift from it; a setup names each in
# lower case and params() hands them back to the block.
PACKAGE_PARAMETERS = {name: p.default for name, p in inspect.signature(accelerator_package.func).parameters.items()
                      if name.isupper()}


@dataclass(frozen=True)
class PackageSetup:
    """Everything one package run needs; every back end replays exactly this.

    Rates are in 2**-rate_frac work units per cycle (rate_frac = 4: 8 means 0.5).
    `link_rate` None: every die's own link is unlimited (all ones).
    `events`: (cycle, input, value) applied from that cycle on; input is one of
    die_rate / link_rate / enable (per-die tuples), route_epoch, hbm_rate, d2d_rate.
    `retries`: (cycle, slot) transport retry requests, raised at that cycle and
    held until the package consumes them.  `late_completions`: (cycle, slot,
    gen) one-cycle completions from the transport.  `resets`: cycles at which
    reset is asserted for two cycles; the job source then starts the workload
    over (a job restart), so `phases` phases still complete after the last one.
    """
    die_rate: tuple
    link_rate: tuple = None
    hbm_rate: int = 255
    d2d_rate: int = 255
    enable: tuple = None
    policy: int = PACKAGE_PARAMETERS["POLICY"]
    fault: int = PACKAGE_PARAMETERS["FAULT"]
    window: int = PACKAGE_PARAMETERS["WINDOW"]
    queue_depth: int = PACKAGE_PARAMETERS["QUEUE_DEPTH"]
    rate_frac: int = PACKAGE_PARAMETERS["RATE_FRAC"]
    cross_shift: int = PACKAGE_PARAMETERS["CROSS_SHIFT"]
    imbalance_budget: int = PACKAGE_PARAMETERS["IMBALANCE_BUDGET"]
    degrade_shift: int = PACKAGE_PARAMETERS["DEGRADE_SHIFT"]
    job_work: int = 4
    phase_units: int = 1200
    phases: int = 1
    barrier_cycles: int = 0
    route_epoch: int = 0
    events: tuple = ()
    retries: tuple = ()
    late_completions: tuple = ()
    resets: tuple = ()
    max_cycles: int = 8000
    geometry: Geometry = None

    def __post_init__(self):
        g = self.geometry or Geometry.dies(len(self.die_rate))
        object.__setattr__(self, "geometry", g)
        n = g.n_tgt
        if len(self.die_rate) != n:
            raise ValueError(f"die_rate has {len(self.die_rate)} entries; the geometry has {n} dies")
        if self.job_work < 1 or self.phase_units % self.job_work:
            raise ValueError(f"phase_units={self.phase_units} is not a whole number of {self.job_work}-unit jobs")
        object.__setattr__(self, "die_rate", tuple(self.die_rate))
        links = ((1 << g.drate_w) - 1,) * n if self.link_rate is None else tuple(self.link_rate)
        object.__setattr__(self, "link_rate", links)
        object.__setattr__(self, "enable", tuple(self.enable) if self.enable is not None else (1,) * n)
        for name in ("link_rate", "enable"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} entries; the geometry has {n} dies")

    @property
    def phase_jobs(self):
        return self.phase_units // self.job_work

    @property
    def total_jobs(self):
        return self.phase_jobs * self.phases

    def with_(self, **changes):
        return replace(self, **changes)

    def params(self):
        return {name: getattr(self, name.lower()) for name in PACKAGE_PARAMETERS}

    def input_value(self, name, value):
        """The packed port value of an input given as the setup states it."""
        g = self.geometry
        if name in ("die_rate", "link_rate"):
            return pack(value, g.drate_w)
        if name in ("enable", "tgt_enable"):
            return pack(value, 1)
        return int(value)

    def initial_inputs(self):
        """Input values from time 0 (the job source, retries and late completions start idle)."""
        g = self.geometry
        return {"route_epoch": self.route_epoch, "tgt_enable": pack(self.enable, 1),
                "die_rate": pack(self.die_rate, g.drate_w), "link_rate": pack(self.link_rate, g.drate_w),
                "hbm_rate": self.hbm_rate, "d2d_rate": self.d2d_rate, "phase_jobs": self.phase_jobs,
                "barrier_cycles": self.barrier_cycles}

    def schedule(self):
        """{cycle: [(port, packed value)]} of the timed input changes."""
        out = collections.defaultdict(list)
        for cycle, name, value in self.events:
            port = "tgt_enable" if name == "enable" else name
            if port not in ("die_rate", "link_rate", "tgt_enable", "route_epoch", "hbm_rate", "d2d_rate"):
                raise ValueError(f"event on {name!r}: not a timed input")
            out[int(cycle)].append((port, self.input_value(name, value)))
        return dict(out)


@dataclass
class PackageRun:
    """Every output of every cycle of one run, and what the tests read from it."""
    setup: PackageSetup
    backend: str
    trace: dict                      # output name -> [value per cycle]
    cycles: int = 0

    def __post_init__(self):
        self.cycles = len(self.trace["dispatch_fire"])

    def per_die(self, name, cycle=-1):
        """A per-die packed output at `cycle` (default: the last recorded cycle), unpacked."""
        g = self.setup.geometry
        wname = PER_DIE[name]
        return unpack(self.trace[name][cycle], g.n_tgt, 1 if wname is None else getattr(g, wname))

    def final(self, name):
        return self.per_die(name) if name in PER_DIE else self.trace[name][-1]

    @property
    def finished(self):
        return self.trace["phases_done"][-1] >= self.setup.phases

    @property
    def phases(self):
        """[(phase_cycles, stream_cycles)] measured by the package, one per completed phase."""
        return [(self.trace["phase_cycles"][c], self.trace["stream_cycles"][c])
                for c in range(self.cycles) if self.trace["phase_done"][c]]

    @property
    def phase_cycles(self):
        """Cycles of the first phase: stream + barrier (None if it did not finish)."""
        p = self.phases
        return p[0][0] if p else None

    @property
    def stream_cycles(self):
        p = self.phases
        return p[0][1] if p else None

    def fired(self):
        """{assertion: first cycle whose sampled values violated it}, in first-fired order.
        (The monitor's outputs are registered: its failure output is 1 one cycle later.)"""
        first = {}
        for a, port in zip(ASSERTIONS, FAIL_PORTS):
            col = self.trace[port]
            for c, v in enumerate(col):
                if v:
                    first[a] = c - 1
                    break
        return dict(sorted(first.items(), key=lambda kv: kv[1]))

    def armed_cycles(self):
        return sum(self.trace["imbalance_armed"])

    def count(self, name):
        return sum(1 for v in self.trace[name] if v)

    def series(self, name, die):
        """One die's field of a per-die output, every cycle."""
        g = self.setup.geometry
        wname = PER_DIE[name]
        w = 1 if wname is None else getattr(g, wname)
        mask = (1 << w) - 1
        return [(v >> (w * die)) & mask for v in self.trace[name]]

    @property
    def throughput(self):
        """Work units per streaming cycle of the first phase."""
        return self.setup.phase_units / self.stream_cycles


def run_package(setup, backend="myhdl"):
    """Run `setup` on `backend` and return the per-cycle record (`PackageRun`)."""
    if backend in ("myhdl", "icarus", "myhdl+icarus"):
        return _run_package_myhdl(setup, backend)
    if backend in ("icarus-2005", "icarus-2012", "verilator"):
        from cosim.package.package_batch import run_package_batch
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
    factory = toolchain.select(accelerator_package, backend)

    @block
    def bench():
        dut = factory(**sigs, **setup.params())
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
    from cosim.sim.tbutil import CLOCK_PERIOD
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
    from cosim.sim import replay
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
        dut = factory(**sig, **params)

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


def run_distributor(backend, *, policy, fault=0, jobs=(), svc_rate=None, enable=None, service=None,
                    depth=4, max_cycles=600, geometry=Geometry(), script=None, imbalance_budget=1 << 11,
                    hold_completions=False):
    """Drive the work distributor and its assertion monitor; its N targets are modelled here.

    jobs: list of work units, offered back to back (id = index).
    svc_rate: static per-target rate inputs (ints; non-zero = measured); enable: per-target bits.
    service: per-target cycles per work unit of the Python target model.
    script: {cycle: callable(sigs, tb)} run at that cycle's falling edge, after
    the default drive (to inject stale completions, retries, epoch changes);
    tb["live"] maps each live slot to (tid, gen), tracked from the ports.
    hold_completions: targets never complete (to inspect the dispatch pattern).
    """
    from hdl.package.checked_work_distributor import checked_work_distributor
    g = geometry
    n = g.n_tgt
    svc_rate = list(svc_rate) if svc_rate is not None else [0] * n
    enable = list(enable) if enable is not None else [1] * n
    service = list(service) if service is not None else [1] * n
    sigs = checked_distributor_signals(g)
    res = DistributorRun(fails={a: [] for a in ASSERTIONS})
    tb = {"next": 0, "cycle": -1, "queues": [collections.deque() for _ in range(n)], "done": collections.deque(),
          "jobs": list(jobs), "svc_rate": svc_rate, "enable": enable, "live": res.live}
    factory = toolchain.select(checked_work_distributor, backend)

    @block
    def bench():
        dut = factory(**sigs, POLICY=policy, FAULT=fault, IMBALANCE_BUDGET=imbalance_budget)
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

    from golden.package import resource_graph as rg
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
    from hdl.package.accelerator_package import FAULT_RETRY_AS_WORK
    from hdl.package.work_distributor import (FAULT_EPOCH_REWRITE, FAULT_NO_GEN_CHECK, FAULT_RETRY_AS_JOB, FAULT_TIE_LOWEST,
                                      POLICY_ROUND_ROBIN)
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
        "a_retire_once": base.with_(fault=FAULT_NO_GEN_CHECK, late_completions=stale),
        "a_retry_creates_no_job": base.with_(fault=FAULT_RETRY_AS_JOB, retries=retry),
        "a_route_epoch_stable": base.with_(fault=FAULT_EPOCH_REWRITE, events=((40, "route_epoch", 3),)),
        "a_no_dispatch_to_disabled": base.with_(policy=POLICY_ROUND_ROBIN, enable=(1, 1, 0, 1),
                                                die_rate=(8, 8, 0, 8)),
        "a_bounded_imbalance": base.with_(fault=FAULT_TIE_LOWEST),
        "a_work_conserved": base.with_(fault=FAULT_RETRY_AS_WORK, retries=retry),
    }
    return {a: (st, st.with_(fault=0, policy=POLICY_SERVICE_RATE)) for a, st in cases.items()}


BROKEN_VARIANT_TEXT = {
    "a_retire_once": "FAULT_NO_GEN_CHECK: retirement ignores the generation; a stale completion of a recycled "
                     "slot (a late duplicate from the transport) arrives at cycle 40",
    "a_retry_creates_no_job": "FAULT_RETRY_AS_JOB: a transport retry allocates a new job entry; one retry of a "
                              "live job while a table slot is free",
    "a_route_epoch_stable": "FAULT_EPOCH_REWRITE: a route-epoch change is written into every live entry; the "
                            "epoch changes at cycle 40",
    "a_no_dispatch_to_disabled": "POLICY_ROUND_ROBIN (the notes' §13 design) with die 2 disabled and hung",
    "a_bounded_imbalance": "FAULT_TIE_LOWEST: the notes' §14 selection loop as written (ties to target 0)",
    "a_work_conserved": "FAULT_RETRY_AS_WORK: the package feeds the estimator transport retries as completed "
                        "work (§16); one retry",
}
