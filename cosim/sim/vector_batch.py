"""Batched co-simulation of any block with per-cycle input vectors.

`cosim.sim.batch` drives AXI-Stream ports; this module drives *every* input port
of a converted block from a table of per-cycle vectors and samples every
output port at every rising edge, so a block without streams (a monitor, a
fabric of combinational models) runs alone in native `vvp` or a Verilator
binary, with no per-cycle pipe to Python.

Timing is that of the per-cycle test benches (`cosim.sim.tbutil`): the clock
starts low with rising edges at 5, 15, 25, ... time units; `rst` (when the
block has one) is held active for `reset_cycles` rising edges and released at
the falling edge after them.  Cycle 0 is the first rising edge after that
release.  At the rising edge of cycle j every output is sampled (the values
the design settled to before the edge); at the falling edge after it vector j
is applied, so vector j is first seen by the rising edge of cycle j + 1.
`run(vectors)` therefore returns len(vectors) + 1 samples, sample 0 taken with
every input at its initial value (0).  `run_myhdl` applies the same protocol
to the MyHDL block itself, so the two can be compared cycle for cycle.

With `reset_cycles=0` there is no power-on reset and `rst` is an input like any
other: vector 0 is applied at time 1, before the first rising edge, vector j at
the falling edge before rising edge j, and the sample of edge j is taken with
vector j applied; `run(vectors)` returns len(vectors) samples.  That is the
form of a recorded run (cosim.sim.replay): inputs as the design saw them at
each rising edge, outputs as they were just before it.

A vector is a dict {input name: value}; an input it does not name keeps its
previous value (vectors are changes, not snapshots).  Capacity: the test bench
holds `max_vectors` vectors (a compile-time size; one compiled simulator
serves every run up to it).

    bench = VectorBench(my_block, clk=..., rst=..., a=..., y=..., PARAM=3)
    samples = bench.run([{"a": 1}, {"a": 2}])      # [{"y": ...}, {"y": ...}, {"y": ...}]

Simulators: "icarus" (`iverilog -g2005` or `-g2012`, chosen by `generation`)
and "verilator".
"""
import fcntl
import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from typing import Dict, List

from myhdl import Signal, StopSimulation, block, instance

from cosim.sim import convert
from cosim.sim.batch import (VERILATOR_OPT_TAG, design_folder, icarus_build, module_ports, run_simulator,
                             verilator_build, verilator_recipe)
from cosim.sim.myhdl_run import run_sim
from cosim.sim.tbutil import clock_gen, reset_pulse
from cosim.sim.vpi import ToolchainError

SIMULATORS = ("icarus", "verilator")
GENERATIONS = ("2005", "2012")
CLOCK = "clk"
RESET = "rst"


@dataclass
class VectorRun:
    samples: List[Dict[str, int]]    # per cycle: output name -> value
    wall_seconds: float              # the simulator process alone

    @property
    def cycles(self):
        return len(self.samples)


def _words(width):
    return (width + 31) // 32


def tb_source(module, ports, inputs, outputs, reset_cycles, max_vectors):
    """The generic test bench: vector memories of 32-bit words, one change mask per vector."""
    L = ["`timescale 1ns/10ps", "module vector_tb;", "integer cycle = 0, edges = 0, n_vectors = 0, v = 0;",
         "integer fd = 0;", "reg [8*1024-1:0] path;", "reg released = 0;"]
    has_clk = CLOCK in ports and ports[CLOCK][0] == "input"
    has_rst = RESET in ports and ports[RESET][0] == "input"
    if not has_clk:
        L.append(f"reg {CLOCK} = 0;")
    conn = []
    for name, (direction, width) in ports.items():
        rng = f"[{width - 1}:0] " if width > 1 else ""
        if direction == "input":
            L.append(f"reg {rng}{name}{' = 0' if name == CLOCK else ''};")   # others X until time 1
        else:
            L.append(f"wire {rng}{name};")
        conn.append(f".{name}({name})")
    # one change mask (a bit per input) and the inputs' words per vector
    n_in = len(inputs)
    mask_words = _words(n_in)
    data_words = sum(_words(ports[n][1]) for n in inputs)
    per_vec = mask_words + data_words
    L.append(f"reg [31:0] vec [0:{max_vectors * per_vec - 1}];")
    L.append(f"reg [{32 * mask_words - 1}:0] mask;")
    for name in inputs:
        L.append(f"reg [{32 * _words(ports[name][1]) - 1}:0] in_{name};")
    L.append("integer base, k;")
    L.append(f"{module} dut({', '.join(conn)});")
    L.append(f"always #5 {CLOCK} = ~{CLOCK};")
    # the next vector onto the inputs its mask names
    L.append("task apply_vector;")
    L.append("begin")
    L.append(f"    base = v * {per_vec};")
    for i in range(mask_words):
        L.append(f"    mask[{32 * i + 31}:{32 * i}] = vec[base + {i}];")
    off = mask_words
    for bit, name in enumerate(inputs):
        width = ports[name][1]
        nw = _words(width)
        L.append(f"    for (k = 0; k < {nw}; k = k + 1) in_{name}[k * 32 +: 32] = vec[base + {off} + k];")
        L.append(f"    if (mask[{bit}]) {name} = in_{name}[{width - 1}:0];")
        off += nw
    L.append("    v = v + 1;")
    L.append("end")
    L.append("endtask")
    # Inputs are driven at time 1, X before: every process that reads a port then sees an
    # event whatever the language mode, as a design's inputs do after power-up.  (A
    # declaration initialiser is an event at time 0 under -g2005 and none under -g2012.)
    if reset_cycles:
        drive0 = " ".join(f"{n} = {1 if (n == RESET and has_rst) else 0};"
                          for n, (d, _) in ports.items() if d == "input" and n != CLOCK)
        L.append(f"initial begin #1 {drive0} end")
    else:
        L.append("initial begin #1 released = 1; if (n_vectors > 0) apply_vector; end")
    L.append("initial begin")
    L.append('  if ($value$plusargs("vectors=%s", path)) $readmemh(path, vec);')
    L.append('  if (!$value$plusargs("n=%d", n_vectors)) n_vectors = 0;')
    L.append('  if ($value$plusargs("out=%s", path)) fd = $fopen(path, "w");')
    L.append('  if ($value$plusargs("vcd=%s", path)) begin $dumpfile(path); $dumpvars(0, vector_tb); end')
    L.append("end")
    fmt = " ".join("%h" for _ in outputs)
    args = ", ".join(outputs)
    L.append(f"always @(posedge {CLOCK}) begin")
    L.append("  edges = edges + 1;")
    L.append("  if (released) begin")
    if outputs:
        L.append(f'    $fwrite(fd, "{fmt}\\n", {args});')
    else:
        L.append('    $fwrite(fd, "-\\n");')
    L.append("    cycle = cycle + 1;")
    # with a power-on reset: a sample before the first vector and one after each; without: one per vector
    L.append(f"    if (cycle {'>' if reset_cycles else '>='} n_vectors) begin $fclose(fd); $finish; end")
    L.append("  end")
    L.append("end")
    L.append(f"always @(negedge {CLOCK}) begin")
    L.append("  if (!released) begin")
    L.append(f"    if (edges >= {reset_cycles}) begin released = 1;{f' {RESET} = 0;' if has_rst else ''} end")
    L.append("  end else if (v < n_vectors) apply_vector;")
    L.append("end")
    L.append("endmodule")
    return "\n".join(L) + "\n"


def _check_options(simulator, generation, reset_cycles, max_vectors):
    if simulator not in SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r}; choose one of {', '.join(SIMULATORS)}")
    if generation not in GENERATIONS:
        raise ValueError(f"unknown Icarus generation {generation!r}; choose one of {', '.join(GENERATIONS)}")
    if max_vectors < 1 or reset_cycles < 0:
        raise ValueError("max_vectors must be at least 1 and reset_cycles at least 0")


class VectorBench:
    """A converted block plus the generic vector test bench, compiled for one simulator."""

    def __init__(self, block_func, *args, simulator="icarus", generation="2012", reset_cycles=2,
                 max_vectors=1 << 16, outputs=None, drive_reset=False, **kwargs):
        """args/kwargs: the block's signals (for their widths) and parameters, as for
        `cosim.sim.convert.build`.  outputs: the output ports to sample (default: all).
        drive_reset: `rst` is a vector input too (after the power-on reset), so a vector
        may assert it (a replayed formal counterexample resets when the solver did).
        reset_cycles=0: no power-on reset, `rst` is a vector input (drive_reset implied)."""
        drive_reset = drive_reset or reset_cycles == 0
        _check_options(simulator, generation, reset_cycles, max_vectors)
        self.folder, self.module, self.bound = convert.build(block_func, *args, **kwargs)
        self.block_func, self.args, self.kwargs = block_func, args, kwargs
        self._setup(simulator, generation, reset_cycles, max_vectors, outputs, drive_reset)

    @classmethod
    def from_verilog(cls, path, module, simulator="icarus", generation="2012", reset_cycles=2, max_vectors=1 << 16,
                     outputs=None, drive_reset=False):
        """The same bench around a design given as a Verilog file (`module` in `path`: an exported
        or mutated design).  The file is copied into a build folder keyed by its contents; a file
        converted by MyHDL gets the kit's Icarus-only rewrite, as in cosim.sim.batch."""
        drive_reset = drive_reset or reset_cycles == 0
        _check_options(simulator, generation, reset_cycles, max_vectors)
        folder = design_folder(path, module)
        self = cls.__new__(cls)
        self.folder, self.module, self.bound = folder, module, None
        self.block_func, self.args, self.kwargs = None, (), {}
        self._setup(simulator, generation, reset_cycles, max_vectors, outputs, drive_reset)
        return self

    def _setup(self, simulator, generation, reset_cycles, max_vectors, outputs, drive_reset):
        self.simulator, self.generation = simulator, generation
        self.reset_cycles, self.max_vectors = reset_cycles, max_vectors
        self.ports = module_ports(os.path.join(self.folder, self.module + ".v"), self.module)
        self.inputs = [n for n, (d, _) in self.ports.items()
                       if d == "input" and n != CLOCK and (n != RESET or drive_reset)]
        all_out = [n for n, (d, _) in self.ports.items() if d == "output"]
        if outputs is not None:
            missing = set(outputs) - set(all_out)
            if missing:
                raise ValueError(f"{self.module} has no output(s) {sorted(missing)}")
            all_out = [n for n in all_out if n in set(outputs)]
        self.outputs = all_out
        self.widths = {n: w for n, (_, w) in self.ports.items()}
        tb = tb_source(self.module, self.ports, self.inputs, self.outputs, reset_cycles, max_vectors)
        digest = hashlib.sha256(tb.encode()).hexdigest()[:12]
        # the executable's key: the test bench, and for Verilator the flags it is built with
        built = hashlib.sha256((tb + ("" if simulator == "icarus" else verilator_recipe())).encode()).hexdigest()[:12]
        tag = f"{simulator}{generation if simulator == 'icarus' else VERILATOR_OPT_TAG}_{built}"
        self.tb_path = os.path.join(self.folder, f"vector_tb_{digest}.v")
        self.exe = os.path.join(self.folder, f"vector_{tag}" + (".vvp" if simulator == "icarus" else ""))
        with open(os.path.join(self.folder, f".lock-vector-{tag}"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)        # parallel workers may build the same bench
            if not os.path.exists(self.exe):
                self._compile(tb, tag)

    def _compile(self, tb, tag):
        with open(self.tb_path, "w") as fh:
            fh.write(tb)
        if self.simulator == "icarus":
            src = os.path.basename(convert.icarus_source(self.folder, self.module))
            icarus_build("vector_tb", [src, os.path.basename(self.tb_path)], self.exe, self.folder,
                         [f"-g{self.generation}"])
        else:
            tmp = self.exe + ".tmp"
            verilator_build("vector_tb", [self.module + ".v", os.path.basename(self.tb_path)],
                            os.path.join(self.folder, f"obj_vector_{tag}"), tmp, self.folder)
            os.replace(tmp, self.exe)

    def encode(self, vectors):
        """The memory image: per vector a change mask, then every input's words."""
        index = {n: i for i, n in enumerate(self.inputs)}
        mask_words = _words(len(self.inputs))
        lines = []
        for j, vec in enumerate(vectors):
            mask = 0
            data = []
            unknown = set(vec) - set(index)
            if unknown:
                raise ValueError(f"vector {j}: {self.module} has no input(s) {sorted(unknown)}")
            for name in self.inputs:
                width = self.widths[name]
                value = vec.get(name)
                if value is not None:
                    value = int(value)
                    if not 0 <= value < (1 << width):
                        raise ValueError(f"vector {j}: {name}={value} does not fit in {width} bits")
                    mask |= 1 << index[name]
                else:
                    value = 0
                data += [(value >> (32 * k)) & 0xFFFFFFFF for k in range(_words(width))]
            lines += [(mask >> (32 * k)) & 0xFFFFFFFF for k in range(mask_words)] + data
        return lines

    def run(self, vectors, workdir=None, vcd=None, plusargs=(), timeout=None):
        """Apply `vectors` (see the module docstring); return a VectorRun of len(vectors) + 1 samples
        (len(vectors) without a power-on reset).  plusargs: more `+name=value` arguments for the
        simulator (a mutant's select); timeout: seconds of wall time, then SimulatorTimeout."""
        vectors = list(vectors)
        if len(vectors) > self.max_vectors:
            raise ValueError(f"{len(vectors)} vectors exceed the test bench's capacity ({self.max_vectors})")
        work = workdir or os.path.join(self.folder, f"vrun-{os.getpid()}")
        os.makedirs(work, exist_ok=True)
        vec_path, out_path = os.path.join(work, "vectors.hex"), os.path.join(work, "out.txt")
        with open(vec_path, "w") as fh:
            fh.write("".join(f"{w:08x}\n" for w in self.encode(vectors)) or "0\n")
        args = [f"+vectors={vec_path}", f"+n={len(vectors)}", f"+out={out_path}"]
        if vcd:
            args.append(f"+vcd={os.path.abspath(vcd)}")
        cmd = (["vvp", "-n", self.exe] if self.simulator == "icarus" else [self.exe]) + args + list(plusargs)
        r, wall = run_simulator(cmd, work, timeout, self.simulator, remove_on_timeout=workdir is None)
        if r.returncode != 0:
            raise ToolchainError(f"{self.simulator} run failed: {(r.stderr or r.stdout).strip()[-2000:]}")
        samples = []
        with open(out_path) as fh:
            for line in fh:
                fields = line.split()
                if not self.outputs:
                    samples.append({})
                    continue
                if any(("x" in f or "z" in f) for f in fields):
                    raise ToolchainError(f"{self.module}: an output is X or Z at cycle {len(samples)}: {line.strip()}")
                samples.append({n: int(f, 16) for n, f in zip(self.outputs, fields)})
        if workdir is None:
            shutil.rmtree(work, ignore_errors=True)
        expected = len(vectors) + (1 if self.reset_cycles else 0)
        if len(samples) != expected:
            raise ToolchainError(f"{self.module}: expected {expected} samples, got {len(samples)}")
        return VectorRun(samples, wall)


def run_myhdl(block_func, vectors, *args, outputs, reset_cycles=2, **kwargs):
    """The same protocol on the MyHDL block itself (the signals passed in are used and
    driven); `outputs` names the ports to sample (MyHDL does not know port directions).
    Returns a VectorRun whose wall_seconds is the whole MyHDL simulation."""
    bound = convert.bind_arguments(block_func, args, kwargs)
    sigs = {n: v for n, v in bound.arguments.items() if convert.is_signal(v)}
    missing = [n for n in outputs if n not in sigs]
    if missing:
        raise ValueError(f"no such port(s) {missing}")
    clk = sigs.get(CLOCK, Signal(bool(0)))
    rst = sigs.get(RESET)
    vectors = list(vectors)
    samples = []

    @block
    def bench():
        dut = block_func(*bound.args, **bound.kwargs)

        @instance
        def stim():
            if rst is not None:
                yield rst.negedge
            else:
                for _ in range(reset_cycles):
                    yield clk.posedge
                yield clk.negedge
            for j in range(len(vectors) + 1):
                yield clk.posedge
                samples.append({n: int(sigs[n]) for n in outputs})
                if j == len(vectors):
                    break
                yield clk.negedge
                for n, v in vectors[j].items():
                    sigs[n].next = int(v)
            raise StopSimulation()

        parts = [dut, clock_gen(clk), stim]
        if rst is not None:
            parts.append(reset_pulse(clk, rst, cycles=reset_cycles))
        return parts

    t0 = time.perf_counter()
    run_sim(bench(), trace=True)
    return VectorRun(samples, time.perf_counter() - t0)
