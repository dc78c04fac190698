"""Replaying a formal counterexample in simulation.

A stimulus file (written by cosim/formal/runner.py from the solver's witness) holds the
target, its broken variant, the failing property and one vector of input values per cycle.
`replay(path)` rebuilds the same converted harness, runs the vectors

* on the converted Verilog under Icarus (cosim.sim.vector_batch, batched, `-g2012`), and
* on the MyHDL blocks themselves (cosim.sim.vector_batch.run_myhdl),

and reports the first sample at which the property's failure output is high on each.  The
replay reaches the same failure when both show it first at the cycle the solver named and
the two simulations agree on every output at every cycle.

A broken variant that exists only as Verilog (a design fault built into the converted harness,
or edits of it: cosim/sim/faults.py) is replayed on that Verilog under Icarus, and MyHDL is not
run.
"""
import hashlib
import json
import os
from dataclasses import dataclass

from cosim.sim.batch import icarus_build
from cosim.sim.vector_batch import VectorBench, run_myhdl, tb_source

from .runner import build_harness, design_text, harness_block
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

    mutation: bool = False    # an edit of the converted Verilog: Icarus only

    def line(self):
        tag = f"{self.target}{'[' + self.fault + ']' if self.fault else ''} {self.prop}"
        my = ("not run (the variant is an edit of the converted Verilog)" if self.mutation else
              "not run" if self.first_myhdl is None else f"cycle {self.first_myhdl}")
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


def _mutated_executable(bench, target, fault):
    """Compile the edited harness with the bench's vector test bench; the executable's path."""
    folder = bench.folder
    text = design_text(target, fault, os.path.join(folder, bench.module + ".v"))
    tb = tb_source(bench.module, bench.ports, bench.inputs, bench.outputs, bench.reset_cycles, bench.max_vectors)
    key = hashlib.sha256((text + tb).encode()).hexdigest()[:12]
    mdir = os.path.join(folder, f"mutant-{fault}-{key}")
    exe = os.path.join(mdir, "vector.vvp")
    if os.path.exists(exe):
        return exe
    os.makedirs(mdir, exist_ok=True)
    with open(os.path.join(mdir, bench.module + ".v"), "w") as fh:
        fh.write(text)
    with open(os.path.join(mdir, "vector_tb.v"), "w") as fh:
        fh.write(tb)
    icarus_build("vector_tb", [bench.module + ".v", "vector_tb.v"], exe, mdir, [f"-g{bench.generation}"])
    return exe


def simulate(target, vectors, fault=None, myhdl=False, vcd=None):
    """Run input vectors (one {input: value} per cycle, after the power-on reset) on the target's
    converted harness under Icarus (the broken variant's, edited if it is a mutation) and, with
    myhdl=True and a variant that is not a mutation, on the MyHDL blocks.  Returns (Icarus samples,
    MyHDL samples or None, mutation?): one {output: value} per cycle, len(vectors) + 1 of them."""
    if isinstance(target, str):
        target = get_target(target)
    _, _, _, params = build_harness(target, fault)
    bench = VectorBench(harness_block(target, fault), simulator="icarus", generation="2012",
                        max_vectors=max(64, len(vectors)), drive_reset=True, **target.signals(), **params)
    mutation = bool(fault and target.faults[fault].verilog_only)
    if fault and target.faults[fault].edits:
        bench.exe = _mutated_executable(bench, target, fault)
    icarus = bench.run(vectors, vcd=vcd).samples
    mine = None
    if myhdl and not mutation:
        mine = run_myhdl(target.block(), vectors, **target.signals(), **params, outputs=bench.outputs).samples
    return icarus, mine, mutation


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
    res = ReplayResult(target.name, stim.get("fault", ""), stim["property"], stim["cycle"], cycles=len(vectors) + 1)
    if vcd:
        res.vcd = os.path.abspath(vcd)
    icarus, mine, res.mutation = simulate(target, vectors, fault, myhdl=myhdl, vcd=vcd)
    res.first_icarus = _first(icarus, port, bit)
    if mine is not None:
        res.first_myhdl = _first(mine, port, bit)
        res.samples_agree = mine == icarus
        if not res.samples_agree:
            c = next(i for i, (a, b) in enumerate(zip(mine, icarus)) if a != b)
            diff = sorted(k for k in icarus[c] if mine[c].get(k) != icarus[c][k])
            res.mismatch = f"cycle {c}: {', '.join(diff)}"
    return res
