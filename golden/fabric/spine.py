"""The spine side of a two-tier fabric, and the load it advertises to the leaves.

Geometry: ``spines`` spines and ``leaves`` leaves; uplink p of every leaf goes to spine p
(so a leaf's path index IS the spine's index), and spine s has one downlink toward every
leaf.  A flow from leaf a to leaf d (a != d) placed on path p loads leaf a's uplink p and
spine p's downlink toward d.  Loads are declared Gb/s, as the leaf selectors count them,
in ``width``-bit lanes that saturate.

The advertisement: spine s sends its ``leaves`` downlink loads, ``width`` bits each, in
downlink order (``advert_bits``: 32 leaves x 16 bits = 64 bytes per spine per
advertisement; a few of them a second is the seed's "a few bytes per spine per second").
A leaf keeps the latest advertisement of every spine; for a flow toward leaf d it presents
lane p = spine p's advertised load toward d (``far_hop_loads``) to its selector's
spine_load_gbps.  Between two advertisements the leaf sees the older one: placements made
since (its own included) are not in it.

``place_in_turns`` is the prediction the co-simulation is checked against: leaves place
their flows turn by turn, each leaf with its own load-aware selector
(golden.fabric.load_aware_selector.choose), and the spines advertise after every turn (or
never: the leaf-only selector, every advertisement zero).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from golden.fabric import ecmp
from golden.fabric.load_aware_selector import LANE_BITS, choose

Advertisement = Tuple[Tuple[int, ...], ...]        # [spine][destination leaf] -> Gb/s


def advert_bits(leaves: int, width: int = LANE_BITS) -> int:
    """Bits one spine sends per advertisement: one lane per downlink."""
    return leaves * width


class SpineLayer:
    """Every spine's downlink loads; `advertise()` is the snapshot the spines send."""

    def __init__(self, spines: int, leaves: int, width: int = LANE_BITS):
        if spines < 1 or leaves < 2:
            raise ValueError(f"a fabric needs at least 1 spine and 2 leaves, got {spines} and {leaves}")
        self.spines, self.leaves, self.width = spines, leaves, width
        self.lane_max = (1 << width) - 1
        self.loads = [[0] * leaves for _ in range(spines)]

    def place(self, spine: int, dst_leaf: int, gbps: int) -> None:
        self.loads[spine][dst_leaf] = min(self.lane_max, self.loads[spine][dst_leaf] + gbps)

    def remove(self, spine: int, dst_leaf: int, gbps: int) -> None:
        self.loads[spine][dst_leaf] = max(0, self.loads[spine][dst_leaf] - gbps)

    def advertise(self) -> Advertisement:
        return tuple(tuple(row) for row in self.loads)

    def max_downlink(self) -> int:
        return max(max(row) for row in self.loads)

    def busiest_downlink(self) -> Tuple[int, int]:
        """(spine, destination leaf) of the busiest downlink (lowest indices on a tie)."""
        best = self.max_downlink()
        return next((s, d) for s in range(self.spines) for d in range(self.leaves) if self.loads[s][d] == best)


def silent(spines: int, leaves: int) -> Advertisement:
    """What a leaf holds before any spine has spoken: every lane zero."""
    return tuple((0,) * leaves for _ in range(spines))


def far_hop_loads(advert: Advertisement, dst_leaf: int) -> List[int]:
    """The selector's spine_load_gbps lanes for a flow toward `dst_leaf`: lane p = spine p's
    advertised downlink load toward it."""
    return [row[dst_leaf] for row in advert]


@dataclass(frozen=True)
class Flow:
    """A flow leaving `src_leaf` toward `dst_leaf`, declaring `gbps`; `flow_hash` is its ECMP
    hash (the selector's fallback, unused by a load-aware placement)."""
    src_leaf: int
    dst_leaf: int
    gbps: int = 100
    flow_hash: int = 0


@dataclass
class TurnsOutcome:
    paths: List[List[int]]              # per turn, the path of each of its flows
    adverts: List[Advertisement]        # per turn, the advertisement its leaf placed against
    leaf_loads: List[List[int]]         # per leaf, declared load per uplink
    spine: SpineLayer                   # the spines' downlink loads at the end

    @property
    def max_downlink(self) -> int:
        return self.spine.max_downlink()

    @property
    def max_uplink(self) -> int:
        return max(max(loads) for loads in self.leaf_loads)


def place_in_turns(turns: Sequence[Tuple[int, Sequence[Flow]]], spines: int, leaves: int, advertise: bool,
                   width: int = LANE_BITS, placed_paths: Optional[Sequence[Sequence[int]]] = None,
                   load_aware: bool = True, path_mode: str = "mod") -> TurnsOutcome:
    """Leaves place flows turn by turn: turn (leaf, flows) places `flows` (all leaving `leaf`)
    one at a time with that leaf's load-aware selector, against the advertisement sent after
    the previous turn (`advertise`), or with every advertisement zero (not `advertise`).
    Not `load_aware`: every flow takes its hash's path (ECMP), whatever is advertised.

    `placed_paths`, when given, are paths some other model chose (the design, in the
    co-simulation): the spines and leaves are loaded along them instead of the predicted
    ones, and the advertisement follows -- the closed loop a co-simulated leaf sees."""
    lane_max = (1 << width) - 1
    spine = SpineLayer(spines, leaves, width)
    leaf_loads = [[0] * spines for _ in range(leaves)]
    advert = silent(spines, leaves)
    paths_out, adverts = [], []
    for t, (leaf, flows) in enumerate(turns):
        chosen = []
        adverts.append(advert)
        for k, f in enumerate(flows):
            if f.src_leaf != leaf or f.dst_leaf == leaf or not 0 <= f.dst_leaf < leaves:
                raise ValueError(f"turn {t}: flow {f} does not leave leaf {leaf} for another leaf")
            if load_aware:
                p = choose(leaf_loads[leaf], far_hop_loads(advert, f.dst_leaf))
            else:
                p = ecmp.select_path(f.flow_hash, spines, path_mode)
            if placed_paths is not None:
                p = placed_paths[t][k]
            leaf_loads[leaf][p] = min(lane_max, leaf_loads[leaf][p] + f.gbps)
            spine.place(p, f.dst_leaf, f.gbps)
            chosen.append(p)
        paths_out.append(chosen)
        if advertise:
            advert = spine.advertise()
    return TurnsOutcome(paths_out, adverts, leaf_loads, spine)


def all_to_all_turns(leaves: int, gbps: int = 100, order: str = "ascending",
                     epoch: int = 0) -> List[Tuple[int, List[Flow]]]:
    """An all-to-all with one accelerator per leaf: one flow from every leaf to every other
    leaf (golden.fabric.ecmp's RoCEv2 5-tuples of `epoch`, their CRC-32 the ECMP hash), leaf
    0's turn first.  `order` of each leaf's destinations: "ascending" (leaf 0, 1, ...: every
    leaf starts at the same end) or "rotated" (leaf a's flows toward a + 1, a + 2, ...)."""
    if order not in ("ascending", "rotated"):
        raise ValueError(f"order={order!r}; choose 'ascending' or 'rotated'")
    fs = ecmp.all_to_all_flows(leaves, 1, order="packed", epoch=epoch)
    hashes = {(int(fs.src_leaf[i]), int(fs.dst_leaf[i])): ecmp.flow_hash(fs.tuple(i)) for i in range(len(fs))}
    turns = []
    for a in range(leaves):
        if order == "ascending":
            dsts = [d for d in range(leaves) if d != a]
        else:
            dsts = [(a + k) % leaves for k in range(1, leaves)]
        turns.append((a, [Flow(a, d, gbps, hashes[a, d]) for d in dsts]))
    return turns
