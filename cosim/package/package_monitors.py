"""Verification-side companions of the package's hardware assertion monitor:

* `PropertyReference`: the six package properties written again in plain
  Python from their English statements (docs/package.md), evaluated on the
  same inputs the monitor samples.  Tests drive the monitor with random and
  adversarial inputs and require its failure outputs to equal this model's
  every cycle.  It is a model of the properties, not of the design: it keeps
  no job table of its own; it reads the table the design exposes.
* `diagnose(...)`: the §18 diagnosis path read off the package's counters: one
  degraded die (and whether its compute or something downstream of it is
  slow) versus a shared resource (HBM or D2D) starving every die.
"""
from dataclasses import dataclass, field

from hdl.package.package_assertion_monitor import ASSERTIONS


def unpack(value, count, width):
    """Split a packed vector into `count` fields of `width` bits, field 0 lowest."""
    value = int(value)
    mask = (1 << width) - 1
    return [(value >> (width * i)) & mask for i in range(count)]


@dataclass
class PropertyReference:
    """Feed `step(sample)` once per rising edge with the monitor's inputs (ints);
    it returns {assertion: failed at this edge} -- what the monitor's outputs
    show during the next cycle.  Out of reset only (reset clears the history)."""
    n_tgt: int
    n_job: int
    gen_w: int
    epoch_w: int
    owork_w: int
    rate_w: int
    stat_w: int
    budget: int
    degrade_shift: int = 2
    check_work: bool = True
    prev: dict = field(default=None)

    def reset(self):
        self.prev = None

    def degraded(self, enable, rates, valid):
        """Per target: disabled, or measured more than 1/2**shift below the fastest measured rate."""
        fastest = max([r for r, v in zip(rates, valid) if v], default=0)
        floor = fastest - (fastest >> self.degrade_shift)
        return [not e or (v and r < floor) for e, r, v in zip(enable, rates, valid)]

    def step(self, s):
        n = self.n_tgt
        live = unpack(s["job_live"], self.n_job, 1)
        gens = unpack(s["job_gen"], self.n_job, self.gen_w)
        epochs = unpack(s["job_epoch"], self.n_job, self.epoch_w)
        enable = unpack(s["tgt_enable"], n, 1)
        out = dict.fromkeys(ASSERTIONS, False)
        p = self.prev
        # an accepted job is retired at most once, and only by a completion of its own use of the slot
        if s["retire_fire"]:
            slot = s["cmpl_slot"]
            if not live[slot] or gens[slot] != s["cmpl_gen"]:
                out["a_retire_once"] = True
        if p and p["retire_fire"] and live[p["cmpl_slot"]]:
            out["a_retire_once"] = True          # the retired entry is still live: it can retire again
        # a transport retry never creates a second semantic job
        if s["retry_fire"] and s["dispatch_fire"]:
            out["a_retry_creates_no_job"] = True
        if s["dispatch_fire"] and live[s["m_job_slot"]]:
            out["a_retry_creates_no_job"] = True
        # a live job's route epoch never changes underneath it
        if p:
            for j in range(self.n_job):
                if live[j] and p["live"][j] and epochs[j] != p["epochs"][j]:
                    out["a_route_epoch_stable"] = True
        # work is never dispatched to a target that is not enabled
        if s["dispatch_fire"]:
            t = s["m_job_target"]
            if t >= n or not enable[t]:
                out["a_no_dispatch_to_disabled"] = True
        # while no target is degraded, outstanding work stays within the budget
        rates = unpack(s["svc_rate"], n, self.rate_w)
        valid = unpack(s["rate_valid"], n, 1)
        armed = not any(self.degraded(enable, rates, valid))
        work = unpack(s["outstanding_work"], n, self.owork_w)
        if armed and max(work) - min(work) > self.budget:
            out["a_bounded_imbalance"] = True
        # completed work is retired semantic work only: accepted - completed == outstanding
        if self.check_work:
            top = (1 << self.stat_w) - 1
            acc = unpack(s["accepted_work"], n, self.stat_w)
            cmp = unpack(s["completed_work"], n, self.stat_w)
            for a, c, w in zip(acc, cmp, work):
                if a != top and c != top and a - c != w:
                    out["a_work_conserved"] = True
        self.prev = {"retire_fire": s["retire_fire"], "cmpl_slot": s["cmpl_slot"], "live": live, "epochs": epochs}
        return out, armed


# --------------------------------------------------------------------------- diagnosis (§18)

@dataclass
class Diagnosis:
    kind: str             # "healthy", "degraded die", "shared resource"
    dies: list            # the degraded dies (degraded die), else []
    cause: str            # "compute" / "downstream" (degraded die), "hbm" / "d2d" (shared), "" (healthy)
    text: str


def diagnose(svc_rate, rate_valid, active_cyc, stall_cyc, hbm_sat_cyc, d2d_sat_cyc, stream_cycles,
             degrade_shift=2, stall_share=0.5):
    """Read the §18 diagnosis off the counters of one phase.

    A die is slow when its measured rate lies more than 1/2**degrade_shift below
    the fastest (the monitor's rule).  Some dies slow, the rest alike: a
    degraded participant; its stall share (stall_cyc / active_cyc) says whether
    its own compute is slow (low: busy computing) or something downstream of it
    (high: waiting on its link or memory path).  Rates alike and most dies
    stalled: a shared resource starves them all, and the arbiter's saturation
    counters name it.  Otherwise the package is compute-bound and healthy.
    """
    n = len(svc_rate)
    fastest = max([r for r, v in zip(svc_rate, rate_valid) if v], default=0)
    floor = fastest - (fastest >> degrade_shift)
    slow = [t for t in range(n) if rate_valid[t] and svc_rate[t] < floor]
    share = [stall_cyc[t] / active_cyc[t] if active_cyc[t] else 0.0 for t in range(n)]
    if slow and len(slow) < n:
        causes = ["downstream" if share[t] >= stall_share else "compute" for t in slow]
        cause = causes[0] if len(set(causes)) == 1 else "mixed"
        what = {"compute": "its own compute is slow (low stall: busy computing)",
                "downstream": "held back downstream of its compute (high stall: its link or memory path)",
                "mixed": "causes differ between the slow dies"}[cause]
        return Diagnosis("degraded die", slow, cause,
                         f"degraded participant: die(s) {', '.join(map(str, slow))} measure "
                         f"{', '.join(str(svc_rate[t]) for t in slow)} against {fastest} on the fastest; {what}")
    stalled = [t for t in range(n) if share[t] >= stall_share]
    if len(stalled) * 2 > n:
        res = "hbm" if hbm_sat_cyc >= d2d_sat_cyc else "d2d"
        busy = max(hbm_sat_cyc, d2d_sat_cyc)
        frac = busy / stream_cycles if stream_cycles else 0.0
        return Diagnosis("shared resource", [], res,
                         f"shared resource: every die's rate is alike and {len(stalled)}/{n} dies stall in "
                         f"{min(share[t] for t in stalled):.0%}+ of their active cycles; {res.upper()} was "
                         f"used up in {frac:.0%} of the streaming cycles")
    return Diagnosis("healthy", [], "", "healthy: rates alike, dies busy computing (compute-bound)")


def diagnose_run(run):
    """`diagnose` on the final counters of a `cosim.package.package_bench.PackageRun`."""
    return diagnose(run.final("svc_rate"), run.final("rate_valid"), run.final("active_cyc"),
                    run.final("stall_cyc"), run.final("hbm_sat_cyc"), run.final("d2d_sat_cyc"),
                    run.stream_cycles or run.cycles, degrade_shift=run.setup.degrade_shift)
