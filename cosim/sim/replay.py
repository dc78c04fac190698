"""The `myhdl+icarus` back end: the MyHDL block runs the test, then its converted
Verilog replays the recorded run in batched Icarus and every output is compared
on every cycle.

Per-cycle co-simulation pipes each cycle between Python and `vvp` (about 0.6 ms a
cycle whatever the design), and a test bench run on both back ends pays for the
whole test twice.  Here the test runs once, on the MyHDL block, with a recorder
beside it: at each rising edge of `clk` it keeps every port's value, inputs as
the design sees them at that edge and outputs as they were just before it.
When the simulation ends, `check_recordings()` feeds the inputs to the converted
Verilog (cosim.sim.vector_batch without a power-on reset: vector j is applied
before rising edge j, `rst` is an input like any other) under `iverilog -g2012`
and compares the outputs, edge by edge.

Why this checks no less than running the test bench against the Verilog: the test
bench's inputs at an edge depend only on the outputs before it.  If the Verilog's
outputs equal the MyHDL block's at every edge on the recorded inputs, a test bench
driving the Verilog would have produced those same inputs and seen those same
outputs, so every assertion the test made on the MyHDL run holds for the Verilog
too.  And every output is compared on every cycle, not only what the test reads.

A block needs a `clk` port (a clocked design; its processes run on its rising
edge) and a synchronous reset.  The first difference raises `ReplayMismatch`
naming the cycle, the ports that differ, both values and the inputs of that cycle,
and keeps the vectors and a VCD of the Verilog's run for a look in a wave viewer.
"""
import functools
import inspect
import os

from myhdl import always, block

from cosim.sim.convert import bind_arguments, is_signal, unwrap_block
from cosim.sim.vector_batch import VectorBench
from cosim.sim.vpi import ToolchainError

BACKEND = "myhdl+icarus"
CLOCK = "clk"
RESET = "rst"
GENERATION = "2012"      # the language mode cocotb's Icarus runner uses (no time-0 events)

_pending = []            # recordings made by factories since the last check


class ReplayMismatch(AssertionError):
    """The converted Verilog's outputs differ from the MyHDL block's on the recorded run."""


class Recording:
    """One block instance's run: per rising edge, the value of every port."""

    def __init__(self, block_func, bound):
        self.block_func = block_func
        self.bound = bound
        self.ports = {n: v for n, v in bound.arguments.items() if is_signal(v)}
        self.names = list(self.ports)
        self.edges = []            # per rising edge: a tuple of ints in `names` order

    def vectors(self, inputs):
        """Per edge the inputs that changed (every input on edge 0)."""
        index = [self.names.index(n) for n in inputs]
        out, last = [], None
        for values in self.edges:
            now = tuple(values[i] for i in index)
            out.append({n: v for n, v, old in zip(inputs, now, last or (None,) * len(now)) if v != old})
            last = now
        return out


def recording_factory(block_func):
    """A function with the block's name and signature that instantiates the MyHDL block
    with a recorder of its ports; the recording is checked by `check_recordings()`."""
    plain = unwrap_block(block_func)

    @functools.wraps(plain)
    def recorded(*args, **kwargs):
        bound = bind_arguments(block_func, args, kwargs)
        clk = bound.arguments.get(CLOCK)
        if not is_signal(clk):
            raise ValueError(f"{plain.__name__}: the {BACKEND} back end records at the rising edges of a "
                             f"'{CLOCK}' port, and this block has none; run it on 'myhdl' and 'icarus'")
        rst = bound.arguments.get(RESET)
        if is_signal(rst) and getattr(rst, "isasync", False):
            raise ValueError(f"{plain.__name__}: an asynchronous reset acts between clock edges, which a "
                             f"per-edge recording does not see; run it on 'myhdl' and 'icarus'")
        recording = Recording(block_func, bound)
        signals = [recording.ports[n] for n in recording.names]
        design = block_func(*bound.args, **bound.kwargs)

        @always(clk.posedge)
        def record():
            # current values: at the edge, before any register of the design takes its next value
            recording.edges.append(tuple(int(s) for s in signals))

        _pending.append(recording)
        return design, record

    recorded.__signature__ = inspect.signature(plain)
    factory = block(recorded)           # MyHDL wants a block made inside a block to come from a @block
    factory.hdl_block = block_func
    return factory


def discard_recordings():
    _pending.clear()


def simulate_and_check(simulate, vcd=None):
    """Run `simulate()` (the MyHDL simulation of a test bench whose blocks came from
    `recording_factory`), then replay what it recorded; a simulation that raises leaves no
    recording behind.  Returns the number of rising edges compared."""
    try:
        simulate()
    except BaseException:
        discard_recordings()
        raise
    return check_recordings(vcd=vcd)


def _capacity(n):
    """Vector capacity of the compiled test bench: a power of two from 4,096, so a few
    compiled benches serve every run length."""
    cap = 4096
    while cap < n:
        cap *= 2
    return cap


def check_recordings(vcd=None):
    """Replay every recording made since the last check on the converted Verilog;
    raise ReplayMismatch at the first difference.  Returns the number of edges checked."""
    recordings, _pending[:] = list(_pending), []
    checked = 0
    for recording in recordings:
        if not recording.edges:
            continue
        bound = recording.bound
        bench = VectorBench(recording.block_func, *bound.args, simulator="icarus", generation=GENERATION,
                            reset_cycles=0, max_vectors=_capacity(len(recording.edges)), **bound.kwargs)
        missing = [n for n in bench.inputs + bench.outputs if n not in recording.ports]
        if missing:
            raise ToolchainError(f"{bench.module}: Verilog ports {missing} are not signals of the block")
        vectors = recording.vectors(bench.inputs)
        run = bench.run(vectors, vcd=vcd)
        index = {n: recording.names.index(n) for n in bench.outputs}
        for edge, (values, sample) in enumerate(zip(recording.edges, run.samples)):
            wrong = [n for n in bench.outputs if sample[n] != values[index[n]]]
            if wrong:
                raise ReplayMismatch(_report(bench, recording, vectors, edge, wrong, sample))
        checked += len(recording.edges)
    return checked


def _report(bench, recording, vectors, edge, wrong, sample):
    """The first difference, with the recorded run kept (vectors and a VCD of the Verilog)."""
    values = recording.edges[edge]
    keep = os.path.join(bench.folder, f"replay-mismatch-{os.getpid()}")
    os.makedirs(keep, exist_ok=True)
    vcd = os.path.join(keep, "verilog.vcd")
    try:
        bench.run(vectors, workdir=keep, vcd=vcd)
    except Exception:            # the report matters more than the waves
        vcd = None
    lines = [f"{bench.module}: the converted Verilog (iverilog -g{GENERATION}) differs from the MyHDL block "
             f"at rising edge {edge} of {len(recording.edges)}:"]
    for n in wrong:
        lines.append(f"  {n}: MyHDL {values[recording.names.index(n)]:#x}, Verilog {sample[n]:#x}")
    ins = ", ".join(f"{n}={values[recording.names.index(n)]:#x}" for n in bench.inputs)
    lines.append(f"  inputs at that edge: {ins}")
    lines.append(f"  recorded vectors: {keep}/vectors.hex" + (f"; Verilog waves: {vcd}" if vcd else ""))
    return "\n".join(lines)
