"""The collective fabric as a mutation target (`prism mutate fabric`): its converted Verilog,
judged by the fabric's own checks.

Those checks are the 34 conformance properties that collective_conformance_monitor evaluates on
every cycle inside the design (cosim/fabric/fabric_properties.py), the same ones the fabric's
tests and `prism formal collective_fabric` hold it to.  Seed s of the regression is the property
scenario run with FabricConfig(seed=s): its per-cycle inputs are recorded once from the MyHDL
design (the scenario reacts to the fabric's outputs, so it is the correct design's recording,
kept in the build folder) and replayed on the instrumented Verilog in batched Icarus or
Verilator, the mutant chosen by a plus-argument.  A mutant is killed when a property fires on
any cycle or is left in violations_seen, or when an output is X or Z; a run past the time limit
is a hang.  A mutant that changes outputs no property looks at survives: the score measures the
properties, not a comparison with the unmutated design.
"""
import functools
import hashlib
import json
import os
import time

from cosim.fabric.fabric_properties import (FabricConfig, collective_fabric_block, decode, fabric_params,
                                            fabric_signals, run_fabric)
from cosim.mutation.campaign import SeedVerdict, Target
from cosim.sim import toolchain
from cosim.sim.batch import SimulatorTimeout
from cosim.sim.codecov import DesignMap
from cosim.sim.vector_batch import VectorBench
from cosim.sim.vpi import ToolchainError

SIMULATORS = {"batch-icarus": ("icarus", "2012"), "batch-verilator": ("verilator", "2012")}


def _config(seed):
    return FabricConfig(seed=seed)


def recorded_inputs(seed, design_text):
    """The scenario's per-cycle inputs for `seed`, recorded from the MyHDL design once and kept
    beside the builds (keyed by the design's Verilog, so a changed design records again)."""
    key = hashlib.sha256(design_text.encode()).hexdigest()[:12]
    folder = os.path.join(toolchain.build_root(), "mutation", "fabric-inputs", key)
    path = os.path.join(folder, f"seed-{seed}.json")
    if os.path.exists(path):
        with open(path) as fh:
            return json.load(fh)
    run = run_fabric("myhdl", "", _config(seed))
    if run.fired:
        raise RuntimeError(f"fabric seed {seed}: the unmutated MyHDL design fires {sorted(run.fired)}")
    os.makedirs(folder, exist_ok=True)
    part = f"{path}.{os.getpid()}"
    with open(part, "w") as fh:
        json.dump(run.inputs, fh)
    os.replace(part, path)
    return run.inputs


def judge(outputs):
    """(kinds, message) of a replay's per-cycle outputs: the first property to fire and its cycle,
    or what violations_seen holds at the end; () when every property held."""
    for cycle, out in enumerate(outputs):
        if out["violations"]:
            return ("property",), f"property {', '.join(decode(out['violations']))} fired at cycle {cycle}"
    if outputs and outputs[-1]["violations_seen"]:
        return ("property",), f"violations_seen holds {', '.join(decode(outputs[-1]['violations_seen']))} at the end"
    return (), ""


@functools.lru_cache(maxsize=4)
def _bench(path, module, backend, cycles):
    simulator, generation = SIMULATORS[backend]
    return VectorBench.from_verilog(path, module, simulator=simulator, generation=generation,
                                    max_vectors=max(1024, cycles), outputs=("violations", "violations_seen"))


def run_mutant_seed(seed, sources, plusargs, timeout, backend="batch-icarus", original=None, module="collective_fabric"):
    """One scenario seed on the instrumented fabric in `sources`, the mutant chosen by `plusargs`."""
    with open(original) as fh:
        inputs = recorded_inputs(seed, fh.read())
    t0 = time.perf_counter()
    bench = _bench(os.path.abspath(sources[0]), module, backend, len(inputs))
    try:
        res = bench.run(inputs[1:], plusargs=plusargs, timeout=timeout)
    except SimulatorTimeout as e:
        return SeedVerdict(seed, False, ("timeout",), str(e), time.perf_counter() - t0)
    except ToolchainError as e:
        return SeedVerdict(seed, False, ("crash",), str(e).splitlines()[0][:300], time.perf_counter() - t0)
    kinds, message = judge(res.samples)
    return SeedVerdict(seed, not kinds, kinds, message, time.perf_counter() - t0)


def prepare_mutants(sources, backend="batch-icarus", module="collective_fabric"):
    """Compile the instrumented design's vector bench once, before the workers start."""
    _bench(os.path.abspath(sources[0]), module, backend, _config(1).cycles + 1)


def fabric_target(backend="batch-icarus"):
    """The fabric at the property scenario's configuration, converted by the tool chain."""
    cfg = _config(1)
    folder, module, _ = toolchain.build(collective_fabric_block(), **fabric_signals(cfg), **fabric_params(cfg))
    path = os.path.join(folder, module + ".v")
    options = dict(backend=backend, module=module)
    return Target("fabric", path, module, functools.partial(run_mutant_seed, original=path, **options),
                  functools.partial(prepare_mutants, **options), DesignMap(path),
                  f"collective_fabric (members {cfg.members}, stripes {cfg.stripes}, paths {cfg.paths})")
