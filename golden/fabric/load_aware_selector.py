"""load_aware_selector's bit-exact reference, and the path-cost rule it shares with the
spine advertisement (golden.fabric.spine).

Two levels, both plain Python integers, sharing no code with hdl/:

* ``choose(leaf_loads, spine_loads)`` -- the rule alone: the path a load-aware
  placement picks.  A path has two hops, the leaf's uplink p (load ``leaf_loads[p]``,
  the leaf's own declared Gb/s) and spine p's downlink toward the flow's destination
  leaf (``spine_loads[p]``, as the spine last advertised it).  A flow's rate is set by
  the busier hop, so the cost of path p is the pair

      (max(leaf_p, spine_p),  leaf_p + spine_p)

  compared lexicographically -- the bottleneck first, the total load second -- and the
  lowest index wins a tie.  The sum is W + 1 bits, so nothing saturates in the
  comparison.  With every spine lane 0 the cost is (leaf_p, leaf_p): the lowest-index
  least-loaded uplink, the selector's behaviour before the advertisement existed.
* ``SelectorModel`` -- the block cycle by cycle: ``outputs(inputs)`` is what the
  combinational outputs show before a rising edge, ``clock(inputs)`` the registers'
  update at it.  Inputs are a dict of the block's input ports (missing ones are 0).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from golden.fabric import ecmp

LANE_BITS = 16


def path_cost(leaf_load: int, spine_load: int):
    """A path's cost: (its bottleneck hop's load, the load of both hops)."""
    return max(leaf_load, spine_load), leaf_load + spine_load


def choose(leaf_loads: Sequence[int], spine_loads: Optional[Sequence[int]] = None) -> int:
    """The path a load-aware placement picks: lowest (bottleneck, total), lowest index on a tie."""
    if spine_loads is None:
        spine_loads = [0] * len(leaf_loads)
    if len(spine_loads) != len(leaf_loads):
        raise ValueError(f"{len(spine_loads)} spine lanes for {len(leaf_loads)} paths")
    return min(range(len(leaf_loads)), key=lambda p: (path_cost(leaf_loads[p], spine_loads[p]), p))


INPUTS = ("flow_start", "flow_hash", "declared_gbps", "flow_end", "ending_path", "ending_gbps",
          "load_aware_enable", "spine_load_gbps")


def pack(lanes: Sequence[int], width: int = LANE_BITS) -> int:
    return sum(v << (width * i) for i, v in enumerate(lanes))


def unpack(word: int, n: int, width: int = LANE_BITS) -> List[int]:
    return [(word >> (width * i)) & ((1 << width) - 1) for i in range(n)]


class SelectorModel:
    """load_aware_selector at `paths` paths of `width`-bit lanes (its documented behaviour,
    fault-free): the registers are the path loads, the two counters and the sticky
    accounting flag; everything else is combinational."""

    def __init__(self, paths: int, width: int = LANE_BITS, path_mode: str = "mod", ratio_bits: int = 16,
                 counter_bits: int = 32):
        if paths < 1:
            raise ValueError(f"paths must be positive, got {paths}")
        self.paths, self.width, self.path_mode = paths, width, path_mode
        self.lane_max = (1 << width) - 1
        self.ratio_max = (1 << ratio_bits) - 1
        self.counter_max = (1 << counter_bits) - 1
        self.loads = [0] * paths
        self.placed = self.perfect = self.error = 0

    def _inputs(self, inp: Dict[str, int]) -> Dict[str, int]:
        unknown = set(inp) - set(INPUTS)
        if unknown:
            raise ValueError(f"not inputs of load_aware_selector: {sorted(unknown)}")
        return {n: int(inp.get(n, 0)) for n in INPUTS}

    def choice(self, inp: Dict[str, int]) -> int:
        v = self._inputs(inp)
        if v["load_aware_enable"]:
            return choose(self.loads, unpack(v["spine_load_gbps"], self.paths, self.width))
        return ecmp.select_path(v["flow_hash"], self.paths, self.path_mode)

    def outputs(self, inp: Dict[str, int]) -> Dict[str, int]:
        v = self._inputs(inp)
        lo, hi = min(self.loads), max(self.loads)
        pick = self.choice(v)
        leaf_only = self.loads.index(lo)
        return dict(chosen_path=pick, path_load_gbps=pack(self.loads, self.width), busiest_gbps=hi,
                    lightest_gbps=lo,
                    imbalance_x10=self.ratio_max if lo == 0 else min(self.ratio_max, hi * 10 // lo),
                    choice_was_hash=1 - v["load_aware_enable"], c_flows_placed=self.placed,
                    c_perfect_placements=self.perfect, sticky_preserved=1, accounting_error=self.error,
                    spine_steered=int(bool(v["load_aware_enable"]) and pick != leaf_only))

    def clock(self, inp: Dict[str, int]) -> None:
        v = self._inputs(inp)
        new = list(self.loads)
        if v["flow_start"]:
            p = self.choice(v)
            if self.loads[p] == 0:
                self.perfect = min(self.counter_max, self.perfect + 1)
            total = new[p] + v["declared_gbps"]
            if total > self.lane_max:
                self.error = 1
            new[p] = min(self.lane_max, total)
            self.placed = min(self.counter_max, self.placed + 1)
        if v["flow_end"]:
            p = v["ending_path"]
            if p >= self.paths:
                self.error = 1
            elif new[p] >= v["ending_gbps"]:
                new[p] -= v["ending_gbps"]
            else:
                new[p], self.error = 0, 1
        self.loads = new

    def run(self, vectors: Sequence[Dict[str, int]]) -> List[Dict[str, int]]:
        """For each vector, held for one cycle: the outputs sampled at the rising edge that ends
        it, then that edge's update.  A vector names the inputs that change; the others keep
        their previous value (0 at first) -- the tests' drive() protocol."""
        out, cur = [], {n: 0 for n in INPUTS}
        for v in vectors:
            self._inputs(v)                       # rejects a name that is not an input
            cur.update(v)
            out.append(self.outputs(cur))
            self.clock(cur)
        return out
