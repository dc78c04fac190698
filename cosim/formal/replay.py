"""Replaying a formal counterexample in simulation.

A stimulus file (written by cosim/formal/runner.py from the solver's witness) holds the
target, its broken variant, the failing property and one vector of input values per cycle.
`replay(path)` rebuilds the same converted harness, runs the vectors

* on the converted Verilog under Icarus (cosim.sim.vector_batch, batched, `-g2012`), and
* on the MyHDL blocks themselves (cosim.sim.vector_batch.run_myhdl),

and reports the first sample at which the property's failure output is high on each.  The
replay reaches the same failure when both show it first at the cycle the solver named and
the two simulations agree on every output at every cycle.
"""
import json
import os
from dataclasses import dataclass

from cosim.sim.vector_batch import VectorBench, run_myhdl

from .runner import build_harness
from .targets import get_target


class StimulusError(ValueError):
    """A stimulus file that cannot be replayed."""


@dataclass
class ReplayResult:
    target: str
    fault: str
    prop: str
    expected_cycle: int
    first_icarus: int = None
    first_myhdl: int = None
    samples_agree: bool = None
    cycles: int = 0
    vcd: str = ""
    mismatch: str = ""

    @property
    def reproduced(self):
        return (self.first_icarus == self.expected_cycle and
                (self.first_myhdl is None or self.first_myhdl == self.expected_cycle) and
                self.samples_agree is not False)

    def line(self):
        tag = f"{self.target}{'[' + self.fault + ']' if self.fault else ''} {self.prop}"
        my = "not run" if self.first_myhdl is None else f"cycle {self.first_myhdl}"
        agree = "" if self.samples_agree is None else (
            ", MyHDL and Icarus agree on every output" if self.samples_agree else f", outputs differ: {self.mismatch}")
        verdict = "reproduced" if self.reproduced else "NOT reproduced"
        return (f"{tag}: {verdict}: solver cycle {self.expected_cycle}, Icarus cycle {self.first_icarus}, "
                f"MyHDL {my}{agree} ({self.cycles} cycles)")


def load_stimulus(path):
    try:
        with open(path) as fh:
            stim = json.load(fh)
    except OSError as e:
        raise StimulusError(f"cannot read {path}: {e.strerror or e}")
    except json.JSONDecodeError as e:
        raise StimulusError(f"{path} is not JSON ({e.msg} at line {e.lineno})")
    if not isinstance(stim, dict) or stim.get("format") != "prism-formal-stimulus/1":
        raise StimulusError(f"{path} is not a prism formal stimulus file")
    return stim


def _first(samples, port, bit):
    for c, s in enumerate(samples):
        v = s[port]
        if (v >> bit) & 1 if bit is not None else v:
            return c
    return None


def replay(path, myhdl=True, vcd=None):
    """Replay a stimulus file on Icarus (and MyHDL); a ReplayResult."""
    stim = load_stimulus(path)
    try:
        target = get_target(stim["target"])
    except KeyError:
        raise StimulusError(f"{path}: unknown target {stim['target']!r}")
    fault = stim.get("fault") or None
    if fault and fault not in target.faults:
        raise StimulusError(f"{path}: target {target.name} has no broken variant {fault!r}")
    if stim.get("inside") or not stim.get("port"):
        raise StimulusError(f"{path}: {stim['property']} is a lemma over internal signals; replay its trace "
                            f"VCD instead")
    port, bit = stim["port"], stim.get("bit")
    vectors = stim["vectors"]
    _, _, _, params = build_harness(target, fault)
    block = target.block()
    res = ReplayResult(target.name, stim.get("fault", ""), stim["property"], stim["cycle"], cycles=len(vectors) + 1)
    bench = VectorBench(block, simulator="icarus", generation="2012", max_vectors=max(64, len(vectors)),
                        drive_reset=True, **target.signals(), **params)
    if vcd:
        res.vcd = os.path.abspath(vcd)
    icarus = bench.run(vectors, vcd=vcd).samples
    res.first_icarus = _first(icarus, port, bit)
    if myhdl:
        mine = run_myhdl(block, vectors, **target.signals(), **params, outputs=bench.outputs).samples
        res.first_myhdl = _first(mine, port, bit)
        res.samples_agree = mine == icarus
        if not res.samples_agree:
            c = next(i for i, (a, b) in enumerate(zip(mine, icarus)) if a != b)
            diff = sorted(k for k in icarus[c] if mine[c].get(k) != icarus[c][k])
            res.mismatch = f"cycle {c}: {', '.join(diff)}"
    return res
