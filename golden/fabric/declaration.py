"""The collective declaration: what a collective library tells the fabric about itself, and
the bit-exact reference of the fabric block that consumes it (collective_declaration_table).

Seed 000 §14: "Must add, and it costs nothing -- a way for the collective library to tell
the fabric what it is doing ... these N flows belong to one collective and will all run for
the job's duration."  docs/fabric_declaration.md describes the interface; the word layout is
spec.fabric.DECL_FIELDS.

* ``CollectiveDeclaration`` -- one event, ``encode()`` / ``decode(word)``; ``start(...)``
  and ``end(job)`` build the two events a phase has.  ``problems()`` lists why a receiving
  leaf would reject the word (the same checks the hardware makes).
* ``DeclarationTableModel`` -- the leaf's table of active declarations, cycle by cycle:
  what it decides for a flow presented on its inputs (the rate to place it against,
  load-aware placement or the hash, within or beyond its job's declaration) and what it
  counts.
* ``DeclaredPlacementModel`` -- the table feeding a load-aware selector
  (golden.fabric.load_aware_selector.SelectorModel): declared_placement's reference.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from golden.fabric.load_aware_selector import INPUTS as SELECTOR_INPUTS, LANE_BITS, SelectorModel
from spec.fabric import (DECL_BITS, DECL_FIELDS, DECL_KIND_TREE, DECL_OFFSETS, DECL_OP_END, DECL_OP_START,
                         DECL_VERSION, DECL_WIDTHS)


@dataclass(frozen=True)
class CollectiveDeclaration:
    """One declaration event; field meanings in spec.fabric.DECL_FIELDS."""
    op: int
    job: int
    kind: int = 0
    participants: int = 0
    flows: int = 0
    rate_gbps: int = 0
    bytes_per_step: int = 0
    version: int = DECL_VERSION

    def encode(self) -> int:
        word = 0
        for name, bits in DECL_FIELDS:
            value = getattr(self, name)
            if not 0 <= value < (1 << bits):
                raise ValueError(f"declaration field {name}={value} does not fit in {bits} bits")
            word |= value << DECL_OFFSETS[name]
        return word

    @classmethod
    def decode(cls, word: int) -> "CollectiveDeclaration":
        if not 0 <= word < (1 << DECL_BITS):
            raise ValueError(f"a declaration word is {DECL_BITS} bits")
        return cls(**{name: (word >> DECL_OFFSETS[name]) & ((1 << bits) - 1) for name, bits in DECL_FIELDS})

    def problems(self) -> List[str]:
        """Why a leaf rejects this word (empty: accepted, table space permitting)."""
        out = []
        if self.version != DECL_VERSION:
            out.append(f"version {self.version}, not {DECL_VERSION}")
        if self.op not in (DECL_OP_START, DECL_OP_END):
            out.append(f"op {self.op} is neither START nor END")
        if self.kind > DECL_KIND_TREE:
            out.append(f"kind {self.kind} is reserved")
        if self.op == DECL_OP_START:
            if self.flows == 0:
                out.append("a phase that starts no flow")
            if self.rate_gbps == 0:
                out.append("a declared rate of 0")
            if self.participants < 2:
                out.append("fewer than 2 participants")
        return out

    @property
    def declared_load_gbps(self) -> int:
        """What the job places on the receiving leaf's uplinks: flows x rate."""
        return self.flows * self.rate_gbps

    @property
    def step_time_us(self) -> Optional[int]:
        """How long a step takes at the declared rate, floor(bytes x 8 / (rate x 1000)) us:
        what telemetry compares a measured step with."""
        return None if self.rate_gbps == 0 else self.bytes_per_step * 8 // (self.rate_gbps * 1000)


def start(job: int, kind: int, participants: int, flows: int, rate_gbps: int,
          bytes_per_step: int = 0) -> CollectiveDeclaration:
    return CollectiveDeclaration(DECL_OP_START, job, kind, participants, flows, rate_gbps, bytes_per_step)


def end(job: int) -> CollectiveDeclaration:
    return CollectiveDeclaration(DECL_OP_END, job)


TABLE_INPUTS = ("decl_valid", "decl_word", "flow_start", "flow_job", "flow_gbps")


@dataclass
class _Slot:
    job: int
    rate: int
    flows: int
    started: int = 0


class DeclarationTableModel:
    """collective_declaration_table with `jobs` slots.  A declaration or a flow start on the
    inputs takes effect at the rising edge; the decision outputs describe the flow on the
    flow inputs against the table before that edge."""

    def __init__(self, jobs: int, width: int = LANE_BITS, counter_bits: int = 32, load_bits: int = 32):
        if jobs < 1:
            raise ValueError(f"jobs must be positive, got {jobs}")
        self.jobs, self.width = jobs, width
        self.counter_max = (1 << counter_bits) - 1
        self.load_max = (1 << load_bits) - 1
        self.started_max = (1 << DECL_WIDTHS["flows"]) - 1
        self.slots: List[Optional[_Slot]] = [None] * jobs
        self.declared = self.over = self.undeclared = self.error = 0

    def _inputs(self, inp: Dict[str, int]) -> Dict[str, int]:
        unknown = set(inp) - set(TABLE_INPUTS)
        if unknown:
            raise ValueError(f"not inputs of collective_declaration_table: {sorted(unknown)}")
        return {n: int(inp.get(n, 0)) for n in TABLE_INPUTS}

    def _hit(self, job: int) -> Optional[int]:
        return next((i for i, s in enumerate(self.slots) if s is not None and s.job == job), None)

    def outputs(self, inp: Dict[str, int]) -> Dict[str, int]:
        v = self._inputs(inp)
        i = self._hit(v["flow_job"])
        over = i is not None and self.slots[i].started >= self.slots[i].flows
        within = i is not None and not over
        load = sum(s.flows * s.rate for s in self.slots if s is not None)
        return dict(place_gbps=self.slots[i].rate if within else v["flow_gbps"], place_load_aware=int(within),
                    flow_declared=int(i is not None), over_declaration=int(over),
                    jobs_active=sum(s is not None for s in self.slots), declared_load_gbps=min(self.load_max, load),
                    c_declared_flows=self.declared, c_over_declaration=self.over,
                    c_undeclared_flows=self.undeclared, decl_error=self.error)

    def clock(self, inp: Dict[str, int]) -> None:
        v = self._inputs(inp)
        if v["flow_start"]:
            i = self._hit(v["flow_job"])
            if i is None:
                self.undeclared = min(self.counter_max, self.undeclared + 1)
            elif self.slots[i].started >= self.slots[i].flows:
                self.over = min(self.counter_max, self.over + 1)
            else:
                self.declared = min(self.counter_max, self.declared + 1)
            if i is not None:
                self.slots[i].started = min(self.started_max, self.slots[i].started + 1)
        if v["decl_valid"]:
            d = CollectiveDeclaration.decode(v["decl_word"])
            i = self._hit(d.job)
            if d.problems():
                self.error = 1
            elif d.op == DECL_OP_START:
                if i is None:
                    i = next((k for k, s in enumerate(self.slots) if s is None), None)
                if i is None:
                    self.error = 1                      # the table is full
                else:
                    self.slots[i] = _Slot(d.job, d.rate_gbps, d.flows)
            elif i is None:
                self.error = 1                          # the end of a job never declared
            else:
                self.slots[i] = None

    def run(self, vectors: Sequence[Dict[str, int]]) -> List[Dict[str, int]]:
        """Outputs sampled at the edge ending each vector; a vector names the inputs that change."""
        out, cur = [], {n: 0 for n in TABLE_INPUTS}
        for vec in vectors:
            self._inputs(vec)
            cur.update(vec)
            out.append(self.outputs(cur))
            self.clock(cur)
        return out


PLACEMENT_INPUTS = TABLE_INPUTS + ("flow_hash", "flow_end", "ending_path", "ending_gbps", "load_aware_enable",
                                   "spine_load_gbps")


class DeclaredPlacementModel:
    """declared_placement: the table decides each flow's rate and whether it is placed
    load-aware (and load_aware_enable allows it); the selector places it."""

    def __init__(self, paths: int, jobs: int, width: int = LANE_BITS, path_mode: str = "mod"):
        self.table = DeclarationTableModel(jobs, width)
        self.selector = SelectorModel(paths, width, path_mode)

    def _selector_inputs(self, v: Dict[str, int], table_out: Dict[str, int]) -> Dict[str, int]:
        sel = {n: v[n] for n in SELECTOR_INPUTS if n in v}
        sel.update(declared_gbps=table_out["place_gbps"],
                   load_aware_enable=int(bool(v["load_aware_enable"]) and bool(table_out["place_load_aware"])))
        return sel

    def run(self, vectors: Sequence[Dict[str, int]]) -> List[Dict[str, int]]:
        out, cur = [], {n: 0 for n in PLACEMENT_INPUTS}
        for vec in vectors:
            unknown = set(vec) - set(PLACEMENT_INPUTS)
            if unknown:
                raise ValueError(f"not inputs of declared_placement: {sorted(unknown)}")
            cur.update(vec)
            t = self.table.outputs({n: cur[n] for n in TABLE_INPUTS})
            sel_in = self._selector_inputs(cur, t)
            s = self.selector.outputs(sel_in)
            out.append(dict(chosen_path=s["chosen_path"], path_load_gbps=s["path_load_gbps"],
                            busiest_gbps=s["busiest_gbps"], lightest_gbps=s["lightest_gbps"],
                            placed_load_aware=sel_in["load_aware_enable"], place_gbps=t["place_gbps"],
                            flow_declared=t["flow_declared"], over_declaration=t["over_declaration"],
                            spine_steered=s["spine_steered"], jobs_active=t["jobs_active"],
                            declared_load_gbps=t["declared_load_gbps"], c_flows_placed=s["c_flows_placed"],
                            c_perfect_placements=s["c_perfect_placements"],
                            c_declared_flows=t["c_declared_flows"], c_over_declaration=t["c_over_declaration"],
                            c_undeclared_flows=t["c_undeclared_flows"], decl_error=t["decl_error"],
                            accounting_error=s["accounting_error"]))
            self.table.clock({n: cur[n] for n in TABLE_INPUTS})
            self.selector.clock(sel_in)
        return out
