"""Simulation monitors for the accelerator work distributor: the package
assertions, checked every cycle from top-level ports only, so they behave the
same on the MyHDL and Icarus back ends.

Each assertion keeps the English statement first:

a_retire_once            an accepted job is retired at most once, and only by a
                         completion naming its own generation (a stale completion
                         from an earlier use of the slot must not retire it)
a_retry_creates_no_job   a transport retry never creates a second semantic job:
                         no allocation in a retry cycle, no allocation into a
                         live slot, no second live job with the same id
a_route_epoch_stable     a live job's route epoch never changes underneath it:
                         the entry (read through the job table's debug port)
                         keeps the epoch it was dispatched under
a_no_dispatch_to_disabled  work is never dispatched to a target that is not enabled
a_bounded_imbalance      while every target is enabled and healthy, max - min of
                         the per-target outstanding work stays within the budget

A monitor shadows the job table from dispatch events (it is a simulation
monitor, not a formal property, so a shadow is cheap).  Violations are
recorded, not raised, so a test can assert on exactly which property fired.
"""
from dataclasses import dataclass, field

ASSERTIONS = ("a_retire_once", "a_retry_creates_no_job", "a_route_epoch_stable",
              "a_no_dispatch_to_disabled", "a_bounded_imbalance")


def unpack(value, count, width):
    """Split a packed vector into `count` fields of `width` bits, field 0 lowest."""
    value = int(value)
    mask = (1 << width) - 1
    return [(value >> (width * i)) & mask for i in range(count)]


@dataclass
class Violation:
    cycle: int
    name: str
    message: str

    def __str__(self):
        return f"cycle {self.cycle}: {self.name}: {self.message}"


@dataclass
class _Job:
    tid: int
    gen: int
    target: int
    epoch: int
    work: int


@dataclass
class PackageMonitors:
    """Feed `sample(cycle, s)` with the values sampled at each rising edge.

    `s` maps port names to ints/bools: dispatch_fire, retry_fire (optional),
    m_job_target, m_job_slot, m_job_gen, m_job_tid, m_job_epoch, m_job_work,
    retire_fire, cmpl_slot, cmpl_gen, tgt_enable, outstanding_work,
    chk_slot, chk_live, chk_epoch, and 'healthy' (bool: every target enabled
    and serving at its nominal rate; a_bounded_imbalance is disabled otherwise,
    because imbalance is then the correct behaviour).
    """
    n_tgt: int
    owork_w: int
    imbalance_budget: int
    violations: list = field(default_factory=list)
    live: dict = field(default_factory=dict)          # slot -> _Job
    retired_tids: set = field(default_factory=set)
    counts: dict = field(default_factory=lambda: {"dispatch": 0, "retire": 0, "retry": 0, "epoch_checks": 0,
                                                   "imbalance_checks": 0})
    max_imbalance: int = 0

    def _fail(self, cycle, name, message):
        self.violations.append(Violation(cycle, name, message))

    def fired(self):
        """Names of the assertions that fired, in first-fired order."""
        seen = []
        for v in self.violations:
            if v.name not in seen:
                seen.append(v.name)
        return seen

    def sample(self, cycle, s):
        enable = int(s["tgt_enable"])
        retry = bool(s.get("retry_fire", False))
        if retry:
            self.counts["retry"] += 1
        # Retirement first: it reads the entry as it was before this edge.
        if s["retire_fire"]:
            self.counts["retire"] += 1
            slot, gen = int(s["cmpl_slot"]), int(s["cmpl_gen"])
            job = self.live.get(slot)
            if job is None:
                self._fail(cycle, "a_retire_once", f"slot {slot} retired but holds no live job")
            elif job.gen != gen:
                self._fail(cycle, "a_retire_once",
                           f"slot {slot} (job {job.tid}, generation {job.gen}) retired by a completion "
                           f"of generation {gen}")
            elif job.tid in self.retired_tids:
                self._fail(cycle, "a_retire_once", f"job {job.tid} retired twice")
            if job is not None:
                self.retired_tids.add(job.tid)
                del self.live[slot]
        if s["dispatch_fire"]:
            self.counts["dispatch"] += 1
            slot, tgt = int(s["m_job_slot"]), int(s["m_job_target"])
            job = _Job(int(s["m_job_tid"]), int(s["m_job_gen"]), tgt, int(s["m_job_epoch"]), int(s["m_job_work"]))
            if tgt >= self.n_tgt or not (enable >> tgt) & 1:
                self._fail(cycle, "a_no_dispatch_to_disabled", f"job {job.tid} dispatched to disabled target {tgt}")
            if retry:
                self._fail(cycle, "a_retry_creates_no_job", f"transport retry of slot {slot} allocated a job")
            elif slot in self.live:
                self._fail(cycle, "a_retry_creates_no_job", f"job {job.tid} allocated into live slot {slot}")
            if any(j.tid == job.tid for j in self.live.values()):
                self._fail(cycle, "a_retry_creates_no_job", f"second live job with id {job.tid}")
            self.live[slot] = job
            self.retired_tids.discard(job.tid)
        # Route epoch of the entry under the debug port versus its dispatch epoch.
        if "chk_slot" in s:
            slot = int(s["chk_slot"])
            job = self.live.get(slot)
            if job is not None and s["chk_live"] and not (s["dispatch_fire"] and int(s["m_job_slot"]) == slot):
                self.counts["epoch_checks"] += 1
                if int(s["chk_epoch"]) != job.epoch:
                    self._fail(cycle, "a_route_epoch_stable",
                               f"live job {job.tid} in slot {slot}: epoch {int(s['chk_epoch'])}, "
                               f"dispatched under {job.epoch}")
        if s.get("healthy", False) and "outstanding_work" in s:
            work = unpack(s["outstanding_work"], self.n_tgt, self.owork_w)
            spread = max(work) - min(work)
            self.counts["imbalance_checks"] += 1
            self.max_imbalance = max(self.max_imbalance, spread)
            if spread > self.imbalance_budget:
                self._fail(cycle, "a_bounded_imbalance",
                           f"outstanding work {work}: spread {spread} > budget {self.imbalance_budget}")

    def unretired(self):
        """Ids of accepted jobs not (yet) retired: empty at the end of a drained phase."""
        return sorted(j.tid for j in self.live.values())
