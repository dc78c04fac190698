"""A test bench run on the MyHDL simulator, and the waveform every back end writes on request.

`waves(path)` asks for a VCD file at `path` within its context; `run_sim` traces a MyHDL run
into it, and the other back ends (cosim.sim.toolchain, cosim.sim.batch) read the request with
`current_waves()`.
"""
import contextlib
import os

import myhdl

from cosim.sim.myhdl_registries import release_dropped_designs

_waves_path = None


@contextlib.contextmanager
def waves(path):
    """Within this context, simulations write a VCD file at `path` (None: no waves)."""
    global _waves_path
    old, _waves_path = _waves_path, (os.path.abspath(path) if path else None)
    if _waves_path:
        os.makedirs(os.path.dirname(_waves_path), exist_ok=True)
    try:
        yield _waves_path
    finally:
        _waves_path = old


def current_waves():
    return _waves_path


def run_sim(top, duration=None, trace=False):
    """Run a test-bench @block instance to completion (or `duration`) on the MyHDL simulator;
    with `trace` and a waves path set, traced into that VCD."""
    release_dropped_designs()  # MyHDL's simulation walks every live signal at its start and end
    trace = bool(trace and _waves_path)
    if trace:
        top.config_sim(trace=True, directory=os.path.dirname(_waves_path),
                       filename=os.path.splitext(os.path.basename(_waves_path))[0])
    try:
        top.run_sim(duration=duration, quiet=1)
    finally:
        # a StopSimulation has already finalized the run (and closed the co-simulation pipes)
        if top.sim is not None and not top.sim._finished:
            top.quit_sim()
        if trace:
            myhdl.traceSignals.directory = None
            myhdl.traceSignals.filename = None
