"""Resource-graph model of a multi-die accelerator package (exact, with fractions).

A phase streams `phase_units` of work through every node on its path and ends
in a barrier.  Each node sustains a service rate in work units per cycle:

    compute   dies x compute_per_die
    hbm       hbm_rate, package-wide (does not grow with die count)
    d2d       dies x d2d_per_die crossing units per cycle; with a fraction f of
              the work crossing a die boundary it supports R = crossing / f.
              A single die has no boundary to cross: the node is absent.
    barrier   a fixed latency of barrier_cycles per phase (not a rate)

The package sustains the minimum of the rate nodes (the *binding* node), so

    phase_cycles = phase_units / min(rates) + barrier_cycles
    compute utilisation = (phase_units / compute rate) / phase_cycles

Everything is a `Fraction`: figures are exact, and rounding happens only when
printing.  Defaults are the illustrative package of the design notes: 4 units
per die per cycle, HBM 10 units/cycle, D2D 1.5 units/cycle per die with half
the work crossing, a 1200-unit phase and a 200-cycle barrier.
"""
from dataclasses import dataclass, replace
from fractions import Fraction

NODES = ("compute", "hbm", "d2d")


def _frac(x, name):
    try:
        v = Fraction(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={x!r} is not a number") from None
    return v


@dataclass(frozen=True)
class Package:
    dies: int = 4
    compute_per_die: Fraction = Fraction(4)
    hbm_rate: Fraction = Fraction(10)
    d2d_per_die: Fraction = Fraction(3, 2)
    cross_fraction: Fraction = Fraction(1, 2)
    phase_units: Fraction = Fraction(1200)
    barrier_cycles: Fraction = Fraction(200)

    def __post_init__(self):
        if not isinstance(self.dies, int) or self.dies < 1:
            raise ValueError(f"dies={self.dies!r}; a package has at least one die")
        for name in ("compute_per_die", "hbm_rate", "d2d_per_die", "phase_units"):
            v = _frac(getattr(self, name), name)
            if v <= 0:
                raise ValueError(f"{name}={v} must be > 0")
            object.__setattr__(self, name, v)
        for name in ("cross_fraction", "barrier_cycles"):
            v = _frac(getattr(self, name), name)
            if v < 0:
                raise ValueError(f"{name}={v} must be >= 0")
            object.__setattr__(self, name, v)
        if self.cross_fraction > 1:
            raise ValueError(f"cross_fraction={self.cross_fraction} must be <= 1")

    def with_(self, **changes):
        return replace(self, **changes)


@dataclass(frozen=True)
class GraphResult:
    package: Package
    rates: dict                 # node -> sustainable units/cycle (absent node: not present)
    service: Fraction           # min over the rate nodes
    binding: str                # the node that sets it (first of NODES on a tie)
    stream_cycles: Fraction     # phase_units / service
    phase_cycles: Fraction      # stream + barrier
    compute_cycles: Fraction    # what compute alone would need
    utilisation: Fraction       # compute_cycles / phase_cycles
    barrier_share: Fraction     # barrier / phase

    @property
    def dominant(self):
        """What most of the phase time is: the barrier or the binding stream node."""
        return "barrier" if self.package.barrier_cycles > self.stream_cycles else self.binding


def evaluate(pkg=Package()):
    """Node rates, binding node, phase time and utilisation of one phase."""
    rates = {"compute": pkg.dies * pkg.compute_per_die, "hbm": pkg.hbm_rate}
    if pkg.dies > 1 and pkg.cross_fraction > 0:
        rates["d2d"] = pkg.dies * pkg.d2d_per_die / pkg.cross_fraction
    service = min(rates.values())
    binding = next(n for n in NODES if n in rates and rates[n] == service)
    stream = pkg.phase_units / service
    phase = stream + pkg.barrier_cycles
    compute = pkg.phase_units / rates["compute"]
    return GraphResult(pkg, rates, service, binding, stream, phase, compute, compute / phase,
                       pkg.barrier_cycles / phase)


def die_scaling(dies=(1, 2, 4, 8), base=Package()):
    """One row per die count: result, speed-up over the first row, gain over the previous row."""
    rows = []
    first = prev = None
    for n in dies:
        r = evaluate(base.with_(dies=n))
        first = first or r
        rows.append({"dies": n, "result": r, "speedup": first.phase_cycles / r.phase_cycles,
                     "step_gain": (prev.phase_cycles / r.phase_cycles) if prev else Fraction(1)})
        prev = r
    return rows


def bottleneck_migration(base=Package()):
    """Relieve the binding node in matched steps, plus the barrier alternative.

    Rows: baseline; HBM doubled (the single-resource roadmap: what it promised
    if HBM stayed the only limit, and what it delivers once D2D binds); HBM and
    D2D doubled; then the barrier halved on the baseline.  Each row reports the
    phase time, the binding node and the speed-up over the baseline.
    """
    b = evaluate(base)
    steps = [
        ("baseline", base),
        ("HBM x2", base.with_(hbm_rate=2 * base.hbm_rate)),
        ("HBM x2 + D2D x2", base.with_(hbm_rate=2 * base.hbm_rate, d2d_per_die=2 * base.d2d_per_die)),
        ("HBM x2 + D2D x2 + compute x2", base.with_(hbm_rate=2 * base.hbm_rate, d2d_per_die=2 * base.d2d_per_die,
                                                   compute_per_die=2 * base.compute_per_die)),
        ("barrier / 2", base.with_(barrier_cycles=base.barrier_cycles / 2)),
        ("infinite bandwidth (bound)", None),
    ]
    rows = []
    for label, pkg in steps:
        if pkg is None:
            phase = base.barrier_cycles + base.phase_units / (base.dies * base.compute_per_die)
            rows.append({"change": label, "result": None, "phase_cycles": phase, "binding": "compute + barrier",
                         "speedup": b.phase_cycles / phase, "projected": None})
            continue
        r = evaluate(pkg)
        projected = None
        if label == "HBM x2":
            # The single-resource projection: the stream time if HBM stayed the limit.
            projected = base.barrier_cycles + base.phase_units / pkg.hbm_rate
        rows.append({"change": label, "result": r, "phase_cycles": r.phase_cycles, "binding": r.binding,
                     "speedup": b.phase_cycles / r.phase_cycles, "projected": projected})
    return rows


def streaming_bound_speedup(pkg=Package()):
    """Best speed-up any change to the streaming part can give: phase / barrier."""
    r = evaluate(pkg)
    if pkg.barrier_cycles == 0:
        return None
    return r.phase_cycles / pkg.barrier_cycles


# --------------------------------------------------------------------------- degraded participant

def split_work(units, rates, policy):
    """Work per die: 'round_robin' splits by count, 'service_rate' in proportion to rate."""
    n = len(rates)
    units = Fraction(units)
    if policy == "round_robin":
        return [units / n] * n
    if policy == "service_rate":
        live = [Fraction(r) for r in rates]
        total = sum(live)
        if total <= 0:
            raise ValueError("no die has a non-zero service rate")
        return [units * r / total for r in live]
    raise ValueError(f"policy={policy!r}; use 'round_robin' or 'service_rate'")


def degraded_phase(rates, units=1200, policy="service_rate", shared_rate=None):
    """Fluid-model streaming time of one phase with per-die rates `rates`.

    Every die must finish its share (barrier semantics: the slowest sets the
    phase).  `shared_rate` optionally caps the package-wide rate (HBM/D2D):
    the phase can never stream faster than units / shared_rate.
    """
    shares = split_work(units, rates, policy)
    times = []
    for w, r in zip(shares, rates):
        r = Fraction(r)
        if w == 0:
            times.append(Fraction(0))
        elif r <= 0:
            return None          # work sent to a die that never finishes
        else:
            times.append(w / r)
    t = max(times)
    if shared_rate is not None:
        t = max(t, Fraction(units) / Fraction(shared_rate))
    return t


def throughput_loss(rates, healthy_rates, units=1200, policy="service_rate", shared_rate=None):
    """1 - throughput(rates) / throughput(healthy_rates), same policy, fluid model."""
    t = degraded_phase(rates, units, policy, shared_rate)
    t0 = degraded_phase(healthy_rates, units, policy, shared_rate)
    if t is None:
        return Fraction(1)
    return 1 - t0 / t
