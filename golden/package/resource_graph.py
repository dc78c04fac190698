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


# --------------------------------------------------------------------------- shared resources, cycle by cycle

def allocate(want, link, hbm, d2d, cross_shift, ptr):
    """One cycle of the package's shared-resource arbitration (plain ints, any fixed point).

    want[t]      service die t's compute asks for
    link[t]      die t's own D2D link, crossing units
    hbm          HBM service per cycle, work units (package-wide)
    d2d          D2D service per cycle, crossing units (package-wide)
    cross_shift  a fraction 2**-cross_shift of the work crosses; None: nothing crosses
    ptr          the die served first in the second pass; then ptr+1, ...

    A die can use cap[t] = min(want[t], link[t] << s).  First pass: each die gets
    min(cap, hbm // N, (d2d << s) // N), an equal share of every pool.  Second
    pass, in rotating order from ptr: each die takes what it still can from what
    the first pass left.  Returns (grants, hbm_cut, d2d_cut): a cut says some die
    got less than its cap and that pool is used up (it bound the package this
    cycle).  The hardware arbiter must match this bit for bit.
    """
    n = len(want)
    s = 0 if cross_shift is None else cross_shift
    crossing = cross_shift is not None
    caps = [min(w, l << s) if crossing else w for w, l in zip(want, link)]
    h, d = hbm, d2d << s
    fh, fd = h // n, d // n
    grants = [min(c, fh, fd) if crossing else min(c, fh) for c in caps]
    h -= sum(grants)
    d -= sum(grants)
    for k in range(n):
        t = (ptr + k) % n
        extra = min(caps[t] - grants[t], h, d) if crossing else min(caps[t] - grants[t], h)
        grants[t] += extra
        h -= extra
        d -= extra
    short = any(g < c for g, c in zip(grants, caps))
    return grants, short and h == 0, short and crossing and d == 0


def fair_rates(caps, pools):
    """Max-min fair rates (fluid, exact): every die gets the same rate until its own
    cap or a shared pool stops it, and what it cannot use goes to the others.

    caps: per-die ceiling (its compute, its link); pools: shared capacities every
    active die draws from one for one (HBM, D2D in work units).  Dies with a
    zero cap get 0.  The fluid limit of the arbiter (`allocate`).
    """
    caps = [Fraction(c) for c in caps]
    rates = [Fraction(0)] * len(caps)
    left = [Fraction(p) for p in pools]
    active = [i for i, c in enumerate(caps) if c > 0]
    while active:
        # the largest equal increment every active die can still take
        inc = min([caps[i] - rates[i] for i in active] + [p / len(active) for p in left])
        for i in active:
            rates[i] += inc
        left = [p - inc * len(active) for p in left]
        if any(p == 0 for p in left):
            break
        active = [i for i in active if rates[i] < caps[i]]
    return rates


def fluid_stream(shares, caps, pools):
    """Streaming time of one phase when die t must serve shares[t] units at the
    max-min fair rates of the dies still working (they change as dies finish).
    None if some die has work and a zero cap."""
    left = [Fraction(s) for s in shares]
    t = Fraction(0)
    while any(x > 0 for x in left):
        active_caps = [c if x > 0 else 0 for c, x in zip(caps, left)]
        rates = fair_rates(active_caps, pools)
        if any(x > 0 and r == 0 for x, r in zip(left, rates)):
            return None
        dt = min(x / r for x, r in zip(left, rates) if x > 0)
        t += dt
        left = [max(Fraction(0), x - r * dt) for x, r in zip(left, rates)]
    return t


def stream_cycles(policy, caps, pools, units):
    """Fluid streaming time of a phase of `units` under a dispatch policy.

    'round_robin'   an even split by count; each die works its share at the fair rates
    'service_rate'  the ideal service-rate-aware split: every die finishes together,
                    so the package streams at min(sum of caps, every pool)
    """
    units = Fraction(units)
    if policy == "round_robin":
        n = len(caps)
        return fluid_stream([units / n] * n, caps, pools)
    if policy == "service_rate":
        total = min([sum(Fraction(c) for c in caps)] + [Fraction(p) for p in pools])
        return None if total <= 0 else units / total
    raise ValueError(f"policy={policy!r}; use 'round_robin' or 'service_rate'")


def package_pools(pkg=Package()):
    """Per-die caps and shared pools of `pkg` in work units per cycle: compute per
    die; HBM; the D2D node's work-equivalent (crossing service / crossing fraction)."""
    caps = [pkg.compute_per_die] * pkg.dies
    pools = [pkg.hbm_rate]
    if pkg.dies > 1 and pkg.cross_fraction > 0:
        pools.append(pkg.dies * pkg.d2d_per_die / pkg.cross_fraction)
    return caps, pools


# --------------------------------------------------------------------------- partitioning modes (§11)

# Compute partitioning modes: how many compute partitions the package's dies form
# (one big device, two, or one per compute die), and memory modes: how many
# memory pools (NUMA nodes per socket).
COMPUTE_MODES = {"SPX": lambda dies: 1, "DPX": lambda dies: 2, "CPX": lambda dies: dies}
MEMORY_MODES = {"NPS1": 1, "NPS2": 2, "NPS4": 4}


def partitions(compute, memory, dies=8):
    """(compute partitions, memory partitions) of a mode pair; ValueError for an
    unknown mode or a compute mode the die count cannot form."""
    if compute not in COMPUTE_MODES:
        raise ValueError(f"unknown compute mode {compute!r}; choose one of {', '.join(COMPUTE_MODES)}")
    if memory not in MEMORY_MODES:
        raise ValueError(f"unknown memory mode {memory!r}; choose one of {', '.join(MEMORY_MODES)}")
    if not isinstance(dies, int) or dies < 1:
        raise ValueError(f"dies={dies!r}; a package has at least one compute die")
    cp = COMPUTE_MODES[compute](dies)
    if dies % cp:
        raise ValueError(f"{compute}: {dies} dies do not split into {cp} equal compute partitions")
    return cp, MEMORY_MODES[memory]


def check_partitioning(compute, memory, dies=8):
    """The §11 invariant: memory partitions <= compute partitions, because every
    memory pool must be owned by a compute partition (a pool nobody owns is a
    resource published with nobody responsible for it).  Returns the ownership
    map {memory partition: [compute partitions]} of a legal pair; raises
    ValueError with the reason for an illegal one (so NPS4 needs 4 or more
    compute partitions: with SPX / DPX / CPX, only CPX)."""
    cp, mp = partitions(compute, memory, dies)
    if mp > cp:
        raise ValueError(f"{compute} + {memory}: {mp} memory partitions but {cp} compute partition(s); "
                         f"memory partitions must not exceed compute partitions (a pool would have no owner)")
    if cp % mp:
        raise ValueError(f"{compute} + {memory}: {cp} compute partitions do not divide evenly over {mp} "
                         f"memory partitions")
    per = cp // mp
    return {m: list(range(m * per, (m + 1) * per)) for m in range(mp)}


def partitioning_table(dies=8):
    """[(compute mode, memory mode, compute partitions, memory partitions, legal, reason or owners)]."""
    rows = []
    for c in COMPUTE_MODES:
        for m in MEMORY_MODES:
            cp, mp = partitions(c, m, dies)
            try:
                owners = check_partitioning(c, m, dies)
                rows.append((c, m, cp, mp, True, owners))
            except ValueError as e:
                rows.append((c, m, cp, mp, False, str(e)))
    return rows
