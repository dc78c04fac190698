"""The chapter's collision story, predicted from the flows alone: which uplink
each ring connection is pinned to, the rate that leaves it, and how long every
ring step takes -- "one collision makes the whole ring slower".

This is the reference for the fabric's "paths" mode (docs/fabric_hdl.md): it
states the documented rules in plain Python integers and fractions and shares
no code with the design.

* Placement, one flow at a time in arrival order: ECMP = the flow's CRC-32
  hash reduced to a path (`golden.fabric.ecmp.ecmp_path`); load-aware = the
  lowest-index path with the least declared load (Gb/s) at that moment
  (`golden.fabric.load_aware_selector.choose`, which also weighs a spine's
  advertised load when one is given).
* Share of a connection on path p: floor(declared x RATE / max(load_p, RATE)),
  load_p = the declared rates pinned to p (the line rate split in proportion
  to the declared rates once the path is oversubscribed; k connections that
  each declare the line rate get floor(RATE / k)).
* A ring member (link) = its stripes; its rate is the sum of their shares
  (saturating at the lane's all-ones).  The collective's rate is the minimum.
* Steps: each link moves CHUNK units (Gb/s x cycles) per step; a link at r
  needs ceil(CHUNK / r) cycles; a step lasts T = ceil(CHUNK / min r) cycles,
  and every faster link waits T - ceil(CHUNK / r) cycles of it.
* Ring model figures (decimal units, as documented for ring_allreduce_model):
  step kB = floor(S_MB x 1000 / N), step time us = floor(step kB x 8 / min),
  collective ms = floor(S_MB x 8 x 2(N-1) / (N x min)), ideal ms the same at
  RATE, slowdown x100 = floor(100 x RATE / min); accelerator-seconds lost =
  floor(lost ms x N / 1000).

`predict(...)` gives all of it; `ring_schedule(...)` the per-cycle view the
design must reproduce; `exact_slowdown` the rational slowdown (busiest
uplink's k) without the integer-Gb/s rounding.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Dict, List, Optional, Sequence, Tuple

from golden.fabric import ecmp
from golden.fabric.load_aware_selector import LANE_BITS, choose
from spec.fabric import RATE_GBPS


@dataclass(frozen=True)
class Connection:
    """One ring connection: member (ring link) `member`, stripe `stripe`, its 5-tuple
    and its declared rate (Gb/s).  Its index in the design is member * stripes + stripe."""
    member: int
    stripe: int
    flow: ecmp.FlowTuple
    declared_gbps: int = RATE_GBPS


def ring_connections(leaf: int = 0, members: int = 32, stripes: int = 1, epoch: int = 0,
                     order: str = "strided") -> List[Connection]:
    """The first `members` ring links leaving `leaf` in the 32 x 32 fabric (ranks in
    ascending order), each as `stripes` RoCEv2 connections of `epoch`."""
    fs = ecmp.ring_flows(stripes=stripes, order=order, epoch=epoch)
    rows = [i for i in range(len(fs)) if int(fs.src_leaf[i]) == leaf and int(fs.dst_leaf[i]) != leaf]
    ranks = sorted({int(fs.src_rank[i]) for i in rows})[:members]
    if len(ranks) < members:
        raise ValueError(f"leaf {leaf} has only {len(ranks)} ring links crossing the fabric")
    by_rank = {r: m for m, r in enumerate(ranks)}
    conns = [Connection(by_rank[int(fs.src_rank[i])], int(fs.stripe[i]), fs.tuple(i))
             for i in rows if int(fs.src_rank[i]) in by_rank]
    return sorted(conns, key=lambda c: (c.member, c.stripe))


def hash_path(flow: ecmp.FlowTuple, paths: int, mode: str = "mod") -> int:
    return ecmp.ecmp_path(flow, paths, "crc32", mode)


def place(conns: Sequence[Connection], paths: int, load_aware: bool, mode: str = "mod",
          loads: Optional[List[int]] = None,
          spine_loads: Optional[Sequence[int]] = None) -> Tuple[List[int], List[int]]:
    """Place `conns` in order; returns (path of each connection, final declared load per path).
    `loads` is the load already on the paths (default: empty).  `spine_loads`: the spines'
    advertised downlink load toward the connections' destination leaf, per path (default: none
    heard); a leaf's ring connections all go to the same leaf, so one advertisement serves all.
    Load-aware placement is golden.fabric.load_aware_selector.choose (the selector's rule)."""
    loads = list(loads) if loads is not None else [0] * paths
    lane_max = (1 << LANE_BITS) - 1
    chosen = []
    for c in conns:
        if load_aware:
            p = choose(loads, spine_loads)
        else:
            p = hash_path(c.flow, paths, mode)
        loads[p] = min(lane_max, loads[p] + c.declared_gbps)
        chosen.append(p)
    return chosen, loads


def shares(conns: Sequence[Connection], chosen: Sequence[int], loads: Sequence[int],
           rate: int = RATE_GBPS) -> List[int]:
    return [c.declared_gbps * rate // max(loads[p], rate) for c, p in zip(conns, chosen)]


def member_rates(conns: Sequence[Connection], conn_shares: Sequence[int], members: int) -> List[int]:
    lane_max = (1 << LANE_BITS) - 1
    out = [0] * members
    for c, s in zip(conns, conn_shares):
        out[c.member] += s
    return [min(v, lane_max) for v in out]


def cycles_for(chunk: int, rate: int) -> Optional[int]:
    return None if rate == 0 else -(-chunk // rate)


@dataclass
class Prediction:
    paths_of: List[int]               # per connection, in the order given
    loads: List[int]                  # declared Gb/s per path
    conn_gbps: List[int]              # per connection
    rates: List[int]                  # per member
    collective_gbps: int              # min over members
    slowest_member: int               # lowest index at the minimum
    mean_gbps: int                    # floor(sum / members)
    busiest_flows: int                # connections on the busiest path
    step_cycles: Optional[int]        # T
    wait_per_step: Optional[int]      # link-cycles waiting per step
    ring: Dict[str, int] = field(default_factory=dict)   # ring model figures
    accel_seconds_lost: int = 0
    perfect_placements: int = 0
    exact_rates: List[Fraction] = field(default_factory=list)   # per member, no rounding


def ring_figures(slowest: int, participants: int, s_mb: int, rate: int = RATE_GBPS) -> Dict[str, int]:
    n = participants
    steps = 2 * (n - 1)
    step_kb = s_mb * 1000 // n
    ideal_ms = s_mb * 8 * steps // (n * rate)
    if slowest == 0:
        return dict(steps_total=steps, step_bytes_kb=step_kb, ideal_time_ms=ideal_ms, step_time_us=(1 << 32) - 1,
                    collective_time_ms=(1 << 32) - 1, slowdown_x100=(1 << 16) - 1)
    return dict(steps_total=steps, step_bytes_kb=step_kb, ideal_time_ms=ideal_ms,
                step_time_us=step_kb * 8 // slowest,
                collective_time_ms=s_mb * 8 * steps // (n * slowest),
                slowdown_x100=min((1 << 16) - 1, 100 * rate // slowest))


def predict(conns: Sequence[Connection], members: int, paths: int, load_aware: bool, chunk: int,
            participants: int, s_mb: int, mode: str = "mod", rate: int = RATE_GBPS) -> Prediction:
    chosen, loads = place(conns, paths, load_aware, mode)
    conn_s = shares(conns, chosen, loads, rate)
    rates = member_rates(conns, conn_s, members)
    lo = min(rates)
    slowest = rates.index(lo)
    counts = [chosen.count(p) for p in range(paths)]
    t = cycles_for(chunk, lo)
    wait = None if t is None else sum(t - cycles_for(chunk, r) for r in rates)
    ring = ring_figures(lo, participants, s_mb, rate)
    lost = max(0, ring["collective_time_ms"] - ring["ideal_time_ms"])
    perfect, seen = 0, [0] * paths
    for c, p in zip(conns, chosen):
        perfect += seen[p] == 0
        seen[p] += c.declared_gbps
    exact = [Fraction(0)] * members
    for c, p in zip(conns, chosen):
        exact[c.member] += Fraction(c.declared_gbps * rate, max(loads[p], rate))
    return Prediction(chosen, loads, conn_s, rates, lo, slowest, sum(rates) // members, max(counts), t, wait,
                      ring, lost * participants // 1000, perfect, exact)


def exact_slowdown(pred: Prediction, rate: int = RATE_GBPS) -> Fraction:
    """The ring's slowdown without integer Gb/s: line rate over the exact minimum member
    rate (for line-rate ring connections, the busiest uplink's connection count k)."""
    return Fraction(rate) / min(pred.exact_rates)


def ring_schedule(rates: Sequence[int], chunk: int, steps: int, cycles: int) -> List[Tuple[int, int, int]]:
    """Per running cycle i = 1 .. cycles after a start: (step ends in this cycle,
    steps completed before it, links waiting in it), with constant `rates`."""
    t = cycles_for(chunk, min(rates))
    need = [cycles_for(chunk, r) for r in rates]
    out, done = [], 0
    for i in range(1, cycles + 1):
        if done >= steps or t is None:
            out.append((0, done, 0))
            continue
        q = (i - 1) % t + 1                       # cycle within the step
        waiting = sum(1 for n in need if n is not None and n < q)
        tick = int(q == t)
        out.append((tick, done, waiting))
        done += tick
    return out


def tracker_unchanged(slowest_seq: Sequence[int], prev: int = 0, count: int = 0) -> List[int]:
    """slowest_member_tracker's c_slowest_unchanged after each sample, for the slowest
    index seen at each sample (reset state: prev = 0, count = 0)."""
    out = []
    for s in slowest_seq:
        count = count + 1 if s == prev else 0
        prev = s
        out.append(count)
    return out
