"""Figures from a node run: DATA beats per cycle per port, drain latency."""
from dataclasses import dataclass
from typing import Dict, Optional

from golden.node import protocol as P


@dataclass
class LineRate:
    data_beats: Dict[int, int]
    data_cycles: Dict[int, int]          # first to last accepted DATA beat, inclusive
    last_data_cycle: Optional[int]
    last_result_cycle: Optional[int]

    def beats_per_cycle(self, port):
        c = self.data_cycles.get(port, 0)
        return self.data_beats[port] / c if c else 0.0

    @property
    def drain_cycles(self):
        """Cycles from the last DATA beat accepted to the last RESULT beat sent."""
        if self.last_data_cycle is None or self.last_result_cycle is None:
            return None
        return self.last_result_cycle - self.last_data_cycle


def line_rate(run):
    beats, spans, last_data = {}, {}, None
    for p, frames in run.rx.items():
        cyc = [c for f in frames if P.get_field(f.beats[0], "class") == P.CLASS_DATA for c in (f.cycles or [])]
        beats[p] = len(cyc)
        spans[p] = (max(cyc) - min(cyc) + 1) if cyc else 0
        if cyc:
            last_data = max(last_data or 0, max(cyc))
    last_result = None
    for frames in run.tx.values():
        for f in frames:
            if P.get_field(f.beats[0], "class") == P.CLASS_RESULT and f.cycles:
                last_result = max(last_result or 0, f.cycles[-1])
    return LineRate(beats, spans, last_data, last_result)
