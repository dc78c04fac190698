"""Formal proofs with SymbiYosys on the converted Verilog (`prism formal`).

    from cosim.formal import run_target, replay, TARGET_NAMES
    verdicts = run_target("axis_register")            # one Verdict per property
    verdicts = run_target("collective_fabric", fault="B5")   # the broken variant must fail
    replay(verdicts[0].stimulus)                       # the counterexample on Icarus and MyHDL

Modules: harness (MyHDL property harnesses), targets (the registry), sby (formal top,
job files, log parsing), runner (rounds of jobs, verdicts, stimulus files), replay.
"""
from .replay import ReplayResult, StimulusError, replay
from .runner import Verdict, run_target
from .sby import FormalToolError
from .targets import TARGET_NAMES, get_target

__all__ = ["run_target", "replay", "Verdict", "ReplayResult", "StimulusError", "FormalToolError", "TARGET_NAMES",
           "get_target"]
