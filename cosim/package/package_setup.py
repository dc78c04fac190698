"""One run of the accelerator package, described: its port geometry and signals, the setup
every back end replays (`PackageSetup`) and the per-cycle record every back end returns
(`PackageRun`).

The MyHDL test bench (cosim.package.package_bench) and the batched one
(cosim.package.package_batch) both build on this module, and it imports neither.
"""
import collections
import inspect
from dataclasses import dataclass, replace

from myhdl import ResetSignal, Signal, intbv

from cosim.package.faults import PACKAGE_FAULTS
from cosim.sim.faults import with_fault
from hdl.package.accelerator_package import accelerator_package
from hdl.package.package_assertion_monitor import ASSERTIONS

FAIL_PORTS = tuple("fail_" + a[2:] for a in ASSERTIONS)


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
    `fault`: the name of a package fault (cosim/package/faults.py) to run the broken
    design instead of the correct one ("": none); it exists only as Verilog.
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
    fault: str = ""
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
        if self.fault and self.fault not in PACKAGE_FAULTS:
            raise ValueError(f"fault={self.fault!r}; choose one of {', '.join(PACKAGE_FAULTS)}")
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

    def block(self):
        """accelerator_package, with this setup's fault if it has one."""
        return with_fault(accelerator_package, PACKAGE_FAULTS[self.fault] if self.fault else None)

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
