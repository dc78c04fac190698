"""Formal proofs with SymbiYosys on the converted Verilog (`prism formal`).

    from cosim.formal import run_target, replay, TARGET_NAMES
    verdicts = run_target("axis_register")            # one Verdict per property
    verdicts = run_target("collective_fabric", fault="B5")   # the broken variant must fail
    replay(verdicts[0].stimulus)                       # the counterexample on Icarus and MyHDL
    verdicts = run_target("axis_register", fault="dead")      # caught: a trigger becomes unreachable

Modules: harness (MyHDL property harnesses, the FP32 adder's stand-in), targets (the registry),
sby (formal top, job files, log parsing), runner (rounds of jobs, cover jobs, verdicts,
stimulus files), replay (a counterexample, or any input vectors, on Icarus and MyHDL), report
(what `prism formal` lists and prints).  Broken variants are made with cosim/sim/faults.py: the
design's test faults (cosim/fabric/faults.py, cosim/package/faults.py) built into the converted
harness, or edits of the converted harness.
"""
from .replay import ReplayResult, StimulusError, replay, simulate
from .runner import Verdict, run_target
from .sby import FormalToolError
from .targets import TARGET_NAMES, get_target

__all__ = ["run_target", "replay", "simulate", "Verdict", "ReplayResult", "StimulusError", "FormalToolError", "TARGET_NAMES",
           "get_target"]
