"""The node as a mutation target: its converted Verilog (or a user's), judged by the hostile regression.

`node_target` gives cosim.mutation.campaign what it needs: the design's Verilog and block map,
a function that runs one regression seed on a mutant (cosim.node.regress.run_seed on the
instrumented file as a `--dut` design, the mutant chosen by a plus-argument) and one that
compiles the instrumented design before the workers start.
"""
import functools
import os

from cosim.mutation.campaign import SeedVerdict, Target
from cosim.node.dut import NodeDut
from cosim.node.node_harness import dut_design, node_block, node_signals
from cosim.node.regress import remember_scenarios, run_seed
from cosim.sim import toolchain
from cosim.sim.codecov import DesignMap
from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY


def run_mutant_seed(seed, sources, plusargs, timeout, backend="batch-verilator", width=KULISCH_WIDTH_DEFAULT,
                    capacity=MAX_CAPACITY, top="prism_node", parameters=()):
    """One regression seed on the design in `sources` with `plusargs` (the mutant's select)."""
    remember_scenarios(256)      # a worker runs the same seeds for mutant after mutant
    dut = NodeDut(tuple(os.path.abspath(s) for s in sources), top, width, capacity, tuple(parameters),
                  tuple(plusargs))
    r = run_seed(seed, backend, kulisch_w=width, dut=dut, timeout=timeout)
    return SeedVerdict(seed, r.ok, tuple(r.kinds), r.error or r.first_mismatch or "", r.wall)


def prepare_mutants(sources, backend="batch-verilator", width=KULISCH_WIDTH_DEFAULT,
                    capacity=MAX_CAPACITY, top="prism_node", parameters=()):
    """Compile the instrumented design once (per width when KULISCH_W is a parameter)."""
    dut = NodeDut(tuple(os.path.abspath(s) for s in sources), top, width, capacity, tuple(parameters))
    for w in ((width,) if width else KULISCH_WIDTH_CHOICES):
        dut_design(backend.split("-", 1)[1], dut, w)


def node_target(width=KULISCH_WIDTH_DEFAULT, backend="batch-verilator", dut=None):
    """The kit's node at KULISCH_W `width` (converted by the tool chain), or `dut` (a
    cosim.node.dut.NodeDut: a user's Verilog, whose first file is mutated)."""
    if dut is None:
        folder, module, _ = toolchain.build(node_block(), **node_signals(), KULISCH_W=width, CAPACITY=MAX_CAPACITY)
        path, top, capacity, params, label = (os.path.join(folder, module + ".v"), module, MAX_CAPACITY, (),
                                              f"prism_node (KULISCH_W {width})")
    else:
        path, top, capacity, params = dut.sources[0], dut.top, dut.capacity, dut.parameters
        width = dut.width
        label = f"{dut.label}" + (f" (KULISCH_W {width})" if width else "")
        if len(dut.sources) > 1:
            raise ValueError("mutation testing of a design in several files mutates one file: give the file that "
                             "holds the top module alone")
    options = dict(backend=backend, width=width, capacity=capacity, top=top, parameters=tuple(params))
    return Target("node" if dut is None else f"dut-{top}", path, top,
                  functools.partial(run_mutant_seed, **options), functools.partial(prepare_mutants, **options),
                  DesignMap(path), label)
