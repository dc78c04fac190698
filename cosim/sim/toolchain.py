"""MyHDL block -> Verilog -> Icarus, run under MyHDL's `Cosimulation`; and the back end a test asks for.

`cosim_factory(block_func)` returns a function with the same name and signature
as the MyHDL block.  Called with the caller's signals, it

1. converts the block (with fresh copies of those signals, so the caller's are
   left untouched) into a build folder per parameter set,
   `build/cosim/<block>-<key>/`, where the key hashes the HDL sources, the
   non-signal parameters, the port types and widths and the MyHDL version: a
   changed source or parameter gives a new folder, an unchanged one is reused;
2. compiles it with `iverilog` (once per folder);
3. returns a `Cosimulation` that runs `vvp` with `myhdl.vpi`, connected to the
   caller's signals by port name.

Steps 1 and 2 are `build`, which lives one layer down in cosim.sim.convert with the rest of
the conversion (the batched simulators and the replay build through it, and it imports none of
them); its public names are re-exported here.  `select` and `run` choose among the back ends:
the MyHDL block, its Icarus co-simulation, and the MyHDL run replayed on the converted Verilog
(cosim.sim.replay).

A waveform is written when one is requested with `waves(path)` (both back ends: `run()` traces
the MyHDL simulation (cosim.sim.myhdl_run), and the Icarus test bench dumps the converted
design's own signals through a `+vcd=` plus-argument).
"""
import functools
import inspect
import os

from myhdl import Cosimulation

from cosim.sim import replay
# re-exported: this module stays the one entry to the tool chain for tests and the verification library
from cosim.sim.convert import (GC_YOUNGEST_THRESHOLD, TOOLCHAIN_VERSION, bind_arguments, block_function,  # noqa: F401
                               block_module, build, build_root, collect_less_often, design_key, hdl_modules,
                               hdl_source_digest, icarus_source, is_signal, raw_verilog, rewrite_passes, rewriting,
                               unwrap_block)
from cosim.sim.faults import FaultNotInMyHDL, fault_of, with_fault  # noqa: F401 (with_fault re-exported)
from cosim.sim.myhdl_run import current_waves, run_sim, waves  # noqa: F401
from cosim.sim.vpi import ToolchainError, require_vpi  # noqa: F401 (ToolchainError re-exported)


def cosimulate(block_func, *args, **kwargs):
    """A `Cosimulation` of the converted block, wired to the caller's signals."""
    vpi = require_vpi()
    folder, name, bound = build(block_func, *args, **kwargs)
    ports = {k: v for k, v in bound.arguments.items() if is_signal(v)}
    cmd = f"vvp -n -M {os.path.dirname(vpi)} -m myhdl {os.path.join(folder, name + '.vvp')}"
    path = current_waves()
    if path:
        cmd += f" +vcd={path}"
    return Cosimulation(cmd, **ports)


def cosim_factory(block_func):
    """A function with the block's name and signature that returns its Icarus co-simulation."""
    plain = unwrap_block(block_func)

    @functools.wraps(plain)
    def factory(*args, **kwargs):
        return cosimulate(block_func, *args, **kwargs)

    factory.__signature__ = inspect.signature(plain)
    factory.hdl_block = block_func
    return factory


BACKENDS = ("myhdl", "icarus", "myhdl+icarus")
# the two back ends that run a test bench cycle by cycle: the MyHDL block, and its Verilog under
# Icarus co-simulation (the agreement tests hold them to each other)
PER_CYCLE_BACKENDS = ("myhdl", "icarus")


def select(block_func, backend):
    """The block itself (backend 'myhdl'), its co-simulation factory ('icarus'), or the block
    with a recorder whose run `run()` replays on the converted Verilog ('myhdl+icarus',
    cosim/sim/replay.py).  A block with a test-only fault (cosim/sim/faults.py) exists only as
    Verilog: 'icarus' alone runs it cycle by cycle."""
    fault = fault_of(block_func)
    if fault is not None and backend in ("myhdl", "myhdl+icarus"):
        raise FaultNotInMyHDL(f"{block_func!r}: fault {fault.name} exists only in the converted Verilog; "
                              f"back end {backend!r} runs the MyHDL block (use 'icarus')")
    if backend == "myhdl":
        return block_func
    if backend == "icarus":
        return cosim_factory(block_func)
    if backend == "myhdl+icarus":
        return replay.recording_factory(block_func)
    raise ValueError(f"unknown back end {backend!r}; choose one of {', '.join(BACKENDS)}")


def run(top, duration=None, backend="myhdl"):
    """Run a test-bench @block instance to completion (or `duration`).

    With a waves path set and backend 'myhdl', the MyHDL simulation is traced
    into that VCD; with 'icarus' the co-simulated design writes it, with
    'myhdl+icarus' the Verilog's replay of the recorded run.  On 'myhdl+icarus'
    it returns the number of rising edges replayed and compared.
    """
    if backend == "myhdl+icarus":
        return replay.simulate_and_check(lambda: run_sim(top, duration), vcd=current_waves())
    run_sim(top, duration, trace=backend == "myhdl")
