"""Batched co-simulation: the converted block under native `vvp` (or Verilator)
with a generated, file-driven Verilog test bench.

Per-cycle co-simulation through MyHDL's VPI pipe costs the same per cycle
whatever the design (docs/perf.md, "Tool-chain settings, measured").  Here
Python writes the whole stimulus up front (input beats, per-frame start delays,
and per-cycle pause patterns for every source and sink) as `$readmemh` files,
the simulator runs alone, and every output beat comes back with its cycle
number through `$fwrite`.  The test bench follows
exactly the timing of `cosim.sim.axis` (drive at the falling edge, sample at the
rising edge, one pause draw per stream per cycle, reset held for the first
`reset_cycles` rising edges), so on the same stimulus it gives the same
frames at the same cycles as the per-cycle co-simulation.

The test bench does not depend on the stimulus size (capacities are
compile-time maxima, actual counts come as plus-arguments), so one compiled
simulator serves every run of a design.
"""
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from itertools import islice
from typing import Dict, List

from cosim.sim import convert
from cosim.sim.axis import AxisFrame
from cosim.sim.verilog_post import drop_zero_memory_init, merge_clocked_processes, procedural_concats
from cosim.sim.vpi import ToolchainError, require_tool

MAX_BEATS = 1 << 16       # per input stream
MAX_FRAMES = 1 << 12      # per input stream
MAX_CYCLES = 1 << 20      # pause patterns (one bit per cycle, 32 cycles per memory word)
PAUSE_WORDS = MAX_CYCLES // 32
SIMULATORS = ("icarus", "icarus-2012", "verilator")
# Icarus language generation per simulator name: IEEE 1364-2005 (Icarus's default), or
# IEEE 1800-2012, the mode cocotb's Icarus runner uses (no time-0 events from initialisers)
ICARUS_GENERATIONS = {"icarus": "-g2005", "icarus-2012": "-g2012"}
# Verilator: X values resolved for speed (every design register has an initial value; the test
# bench compares pause bits with ===, which treats an unloaded word as "no pause" either way),
# and the generated C++ built at -O2 rather than Verilator's default -Os, which keeps its
# wide-word helpers out of line.  PRISM_VERILATOR_OPT chooses another C++ optimisation level:
# -O0 builds in far less CPU time and runs slower, the better trade for short runs (the test
# suite's; the figures of this and the settings below: docs/perf.md, "Tool-chain settings,
# measured"); a build at another level is kept beside the -O2 one, not in its place.
VERILATOR_OPT_LEVELS = ("-O0", "-O1", "-O2", "-O3", "-Os")
VERILATOR_OPT = os.environ.get("PRISM_VERILATOR_OPT", "-O2")
if VERILATOR_OPT not in VERILATOR_OPT_LEVELS:
    raise ValueError(f"PRISM_VERILATOR_OPT={VERILATOR_OPT!r}; choose one of {', '.join(VERILATOR_OPT_LEVELS)}")
# At -O0 most of the C++ compiler's time goes into reading the model's header once per output
# file, so files are split at 100,000 statements instead of Verilator's 20,000; at -O2 the larger
# files cost more than they save, so the default split stays there (figures: docs/perf.md).
VERILATOR_SPLIT = ("--output-split", "100000") if VERILATOR_OPT == "-O0" else ()
# At -O0 Verilator also leaves wide operations (the node's Kulisch words) as calls of its
# run-time helpers instead of writing them out word by word: less C++, a shorter build and a
# slower run, still the better trade for the suite's short runs (figures: docs/perf.md).  Both
# forms compute the same bits; -O2 builds keep the expanded form, the faster one to run.
VERILATOR_EXPAND = ("-fno-expand",) if VERILATOR_OPT == "-O0" else ()
_VERILATOR_COMMON = ("--timing", "-O3", "--x-assign", "fast", "--x-initial", "fast",
                     "--default-language", "1364-2005", "-Wno-fatal", "-Wno-lint", "-Wno-style")
# Verilator writes the C++ (`--cc --exe`; `--main`: its own main(), which runs the test bench
# to its $finish) and `verilator_build` compiles it with make: VERILATOR_FLAGS are Verilator's
# options, VERILATOR_MAKE the C++ levels (OPT_SLOW: the once-run constructors and initial code).
VERILATOR_FLAGS = ("--cc", "--exe", "--main", *_VERILATOR_COMMON, *VERILATOR_SPLIT, *VERILATOR_EXPAND)
VERILATOR_MAKE = (f"OPT_FAST={VERILATOR_OPT}", f"OPT_GLOBAL={VERILATOR_OPT}") + (
    ("OPT_SLOW=-O0",) if VERILATOR_OPT == "-O0" else ())     # GCC's default: Verilator's for OPT_SLOW
# suffix of a build's file names at a C++ level other than the default
VERILATOR_OPT_TAG = "" if VERILATOR_OPT == "-O2" else "_" + VERILATOR_OPT[1:]

# Verilator build variants, each compiled on first use into its own executable (own object
# folder and stamp, so none of them invalidates the others):
#   plain      the default (VERILATOR_FLAGS)
#   trace      waveforms: the test bench's $dumpfile/$dumpvars write the file named by +vcd=
#              (Verilator ignores them without tracing); wide buses traced whole
#   trace-fst  the same as FST (a waveform path ending in .fst)
#   coverage   line/branch and toggle coverage, written at the end of every run (cosim.sim.codecov);
#              a main of our own, as Verilator's generated one writes no coverage data; the
#              generated C++ compiled at -O0 (the node's is large), the run-time library at -O2
#              (it registers and writes the coverage points; figures: docs/perf.md)
VERILATOR_TRACE_FLAGS = ("--trace", "--trace-max-width", "1024")
VERILATOR_VARIANTS = {
    "plain": VERILATOR_FLAGS,
    "trace": VERILATOR_FLAGS + VERILATOR_TRACE_FLAGS,
    "trace-fst": VERILATOR_FLAGS + ("--trace-fst", "--trace-max-width", "1024"),
    "coverage": ("--cc", "--exe") + _VERILATOR_COMMON
                + ("--coverage-line", "--coverage-toggle", "--coverage-max-width", "1024"),
}
VERILATOR_VARIANT_MAKE = {"plain": VERILATOR_MAKE, "trace": VERILATOR_MAKE, "trace-fst": VERILATOR_MAKE,
                          "coverage": ("OPT_FAST=-O0", "OPT_GLOBAL=-O2", "OPT_SLOW=-O0")}
# Every C++ file of a model starts by reading the model's header.  Verilator 5.006's makefile
# has no precompiled header, so verilator_build adds one per C++ level in use: the model's
# headers (`prism_pch_fast.h`, and `prism_pch_slow.h` for the once-run code when its level
# differs) compiled once beside them (`.gch`, written under another name and moved in) and
# forced first into the model's files (what it saves: docs/perf.md).  A model small enough for
# one C++ file (Verilator's `__ALL.cpp`) reads its header once and gets none.
VERILATOR_PCH = ("prism_pch_fast.h", "prism_pch_slow.h")
_PCH_MAKEFILE = """# generated by cosim.sim.batch: Verilator's makefile, the model's headers precompiled
include {prefix}.mk
ifeq ($(VM_PARALLEL_BUILDS),1)
prism_pch_%.h.gch: prism_pch_%.h $(wildcard {prefix}*.h)
\t$(CXX) $(CXXFLAGS) $(CPPFLAGS) $(PRISM_PCH_OPT) -MF $@.d -x c++-header -o $@.tmp $<
\tmv $@.tmp $@
prism_pch_fast.h.gch: PRISM_PCH_OPT = $(OPT_FAST)
prism_pch_slow.h.gch: PRISM_PCH_OPT = $(OPT_SLOW)
ifeq ($(strip $(OPT_SLOW)),$(strip $(OPT_FAST)))
PRISM_SLOW_PCH := prism_pch_fast.h
else
PRISM_SLOW_PCH := prism_pch_slow.h
endif
$(VK_FAST_OBJS): prism_pch_fast.h.gch
$(VK_FAST_OBJS): private CPPFLAGS += -include prism_pch_fast.h -Winvalid-pch
$(VK_SLOW_OBJS): $(PRISM_SLOW_PCH).gch
$(VK_SLOW_OBJS): private CPPFLAGS += -include $(PRISM_SLOW_PCH) -Winvalid-pch
endif
prism-runtime-objects:
	@echo '$(VK_GLOBAL_OBJS)'
	@echo '$(CXX) $(CXXFLAGS) $(CPPFLAGS) $(OPT_GLOBAL)'
"""
# Every model links Verilator's run-time library (verilated.o, verilated_threads.o, ...), and
# its makefile compiles it anew in each model's folder.
# verilator_build keeps the objects in one folder per compile command (the command names the
# flags, defines and include folders; Verilator's version, its headers), copies them into a new
# model's folder before make, which then takes them as built, and stores the ones it compiled.
RUNTIME_CACHE = "verilator-runtime"


def verilator_recipe(variant="plain"):
    """Everything besides its sources that shapes a Verilator build of `variant` (Verilator's
    options, the C++ levels, the makefile around Verilator's): part of every cached build's key,
    so a build made with other flags is never reused."""
    return " ".join(VERILATOR_VARIANTS[variant] + VERILATOR_VARIANT_MAKE[variant]) + "\n" + _PCH_MAKEFILE


@functools.lru_cache(maxsize=None)
def _verilator_version():
    return subprocess.run(["verilator", "--version"], capture_output=True, text=True).stdout.strip()


def _runtime_cache(mdir, make_args):
    """(folder of the run-time objects this model's build compiles, their file names)."""
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", mdir, "-f", "prism_pch.mk", *make_args,
                        "prism-runtime-objects"],
                       capture_output=True, text=True)
    lines = r.stdout.splitlines()
    if r.returncode != 0 or len(lines) != 2:
        return None, []
    key = hashlib.sha256(f"{_verilator_version()}\n{lines[1]}".encode()).hexdigest()[:16]
    return os.path.join(convert.build_root(), RUNTIME_CACHE, key), lines[0].split()


def icarus_build(top, sources, exe, cwd, flags=()):
    """Compile `sources` (top module `top`) with iverilog into `exe`, through a temporary file
    so that a reader never finds half an executable.  Raises ToolchainError with the tool's
    message if it fails."""
    require_tool("iverilog")
    tmp = exe + ".tmp"
    r = subprocess.run(["iverilog", *flags, "-o", tmp, "-s", top, *sources], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(tmp):
        raise ToolchainError(f"iverilog failed for {top} in {cwd}: {(r.stderr or r.stdout).strip()[-2000:]}")
    os.replace(tmp, exe)


def verilator_build(top, sources, mdir, exe, cwd, variant="plain"):
    """Verilate `sources` (top module `top`) into `mdir` and compile the executable `exe` with
    the variant's flags and C++ levels (VERILATOR_VARIANTS, VERILATOR_VARIANT_MAKE), the model's
    headers precompiled.  Returns make's output; raises ToolchainError with the tool's message
    if either step fails."""
    require_tool("verilator")
    prefix = "V" + top
    if os.path.exists(exe):
        os.remove(exe)

    def run(cmd):
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        if r.returncode != 0:
            raise ToolchainError(f"{cmd[0]} failed for {top}: {(r.stderr or r.stdout).strip()[-2000:]}")
        return r.stdout + r.stderr
    run(["verilator", *VERILATOR_VARIANTS[variant], "--top-module", top, "--Mdir", mdir, "-o", exe, *sources])
    for header in VERILATOR_PCH:
        with open(os.path.join(mdir, header), "w") as fh:
            fh.write(f'#include "verilated.h"\n#include "{prefix}__Syms.h"\n')
    with open(os.path.join(mdir, "prism_pch.mk"), "w") as fh:
        fh.write(_PCH_MAKEFILE.format(prefix=prefix))
    make_args = VERILATOR_VARIANT_MAKE[variant]
    cache, runtime = _runtime_cache(mdir, make_args)
    for name in runtime:                # copied now: newer than the makefile Verilator just wrote
        if os.path.exists(os.path.join(cache, name)):
            shutil.copyfile(os.path.join(cache, name), os.path.join(mdir, name))
    log = run(["make", "-C", mdir, "-f", "prism_pch.mk", "-j", str(os.cpu_count() or 2), *make_args])
    if not os.path.exists(exe):
        raise ToolchainError(f"the Verilator build of {top} wrote no {exe}")
    for name in runtime:
        if not os.path.exists(os.path.join(cache, name)):
            os.makedirs(cache, exist_ok=True)
            part = os.path.join(cache, f"{name}.{os.getpid()}.tmp")    # whole or absent for other workers
            shutil.copyfile(os.path.join(mdir, name), part)
            os.replace(part, os.path.join(cache, name))
    return log


COVERAGE_FILE = "coverage.dat"
# what Verilator compiles: the design without its zero-initialisation loops (every flag set
# above keeps --x-initial fast, whose constructor zeroes every variable); change the version
# when that rewrite changes, so earlier builds are not reused
VERILATOR_SOURCE = "design minus zero-init loops, v1"
assert all("--x-initial" in f and f[f.index("--x-initial") + 1] == "fast" for f in VERILATOR_VARIANTS.values())


def _owner():
    """A name for this process and thread's own temporary files and run folders (two threads of
    one process may build or run designs that share a build folder)."""
    return f"{os.getpid()}-{threading.get_ident()}"


def _icarus_form(folder, name, text):
    """The file Icarus compiles for a design file given as Verilog: MyHDL's output gets the
    kit's Icarus-only rewrite (measured on the exported node: see docs/perf.md), anything else
    is compiled as written.  Returns its name in `folder`."""
    if "Generated by MyHDL" not in text[:400]:
        return name
    out = os.path.splitext(name)[0] + "_icarus.v"
    if not os.path.exists(os.path.join(folder, out)):
        part = os.path.join(folder, f".{out}.{_owner()}")
        with open(part, "w") as fh:
            for rewrite in (procedural_concats, merge_clocked_processes):
                text = rewrite(text)
                text = text[0] if isinstance(text, tuple) else text
            fh.write(text)
        os.replace(part, os.path.join(folder, out))
    return out


_PAUSE_TEXTS = {}          # (pause pattern key, cycles) -> the pause file's text (BatchDesign._pause_file)


def design_folder(path, module):
    """A build folder holding the Verilog file `path` as `<module>.v` (keyed by its contents:
    a changed file gets a new folder) and `<module>_icarus.v`, the form Icarus compiles
    (`_icarus_form`); for designs given as a file (exported, mutated) run by the kit's
    benches.  Returns the folder."""
    with open(path) as fh:
        text = fh.read()
    key = hashlib.sha256((module + "\n" + text).encode()).hexdigest()[:16]
    folder = os.path.join(convert.build_root(), "dut", f"{module}-{key}")
    os.makedirs(folder, exist_ok=True)
    name = module + ".v"
    if not os.path.exists(os.path.join(folder, name)):
        part = os.path.join(folder, f".{name}.{_owner()}")
        with open(part, "w") as fh:
            fh.write(text)
        os.replace(part, os.path.join(folder, name))
    icarus = convert.icarus_source(folder, module)
    if _icarus_form(folder, name, text) == name and not os.path.exists(icarus):
        part = f"{icarus}.{_owner()}"
        shutil.copyfile(os.path.join(folder, name), part)      # not MyHDL's: compiled as written
        os.replace(part, icarus)
    return folder


def verilator_source(folder, module):
    """The path (relative to `folder`) of `module`'s Verilog as Verilator builds it, rewritten
    from `<module>.v`; same file name and line numbers, so coverage points name the design's lines."""
    name = os.path.join("verilator_src", f"{module}.v")
    os.makedirs(os.path.join(folder, "verilator_src"), exist_ok=True)
    with open(os.path.join(folder, module + ".v")) as fh:
        text, _ = drop_zero_memory_init(fh.read())
    with open(os.path.join(folder, name), "w") as fh:
        fh.write(text)
    return name
# the coverage build's main: Verilator's --main of this version ends without writing coverage
_COVERAGE_MAIN = """// generated by cosim.sim.batch: main() of the coverage build (writes the coverage data at the end)
#include <cstring>
#include <memory>
#include "verilated.h"
#include "verilated_cov.h"
#include "Vbatch_tb.h"

int main(int argc, char** argv) {
    const std::unique_ptr<VerilatedContext> contextp{new VerilatedContext};
    contextp->commandArgs(argc, argv);
    const std::unique_ptr<Vbatch_tb> topp{new Vbatch_tb{contextp.get()}};
    while (!contextp->gotFinish()) {
        topp->eval();
        if (!topp->eventsPending()) break;
        contextp->time(topp->nextTimeSlot());
    }
    topp->final();
    const char* arg = contextp->commandArgsPlusMatch("coverage_file=");
    contextp->coveragep()->write(arg[0] ? arg + std::strlen("+coverage_file=") : "%s");
    return 0;
}
""" % COVERAGE_FILE
# only the design is measured: the test bench's own code and its stimulus memories are left out
_COVERAGE_CONFIG = '`verilator_config\ncoverage_off -file "*batch_tb_*"\n'
_MEMORY_DECL = re.compile(r"^\s*(?:reg|wire)\b[^;\n]*\b\w+\s*\[[^\]]*\]\s*;")
_VARIABLE_DECL = re.compile(r"^(?:reg|integer)\b[^=;]*;")      # no initial value


def coverage_config(verilog_path):
    """Verilator configuration of the coverage build.  Left out: the test bench; from toggle
    coverage, the design's memories (unpacked arrays: their bits are stored data) and the
    variables of its processes (declared just above each process, where cosim.sim.verilog_post
    hoists them: temporaries within a clock cycle, not state or wires).  Toggle coverage then
    counts the bits of the design's signals (counting the process variables too would make the
    node's coverage build about three times larger: docs/perf.md)."""
    with open(verilog_path) as fh:
        lines = fh.read().split("\n")
    off = [n for n, text in enumerate(lines, 1) if _MEMORY_DECL.match(text)]
    for n, text in enumerate(lines, 1):
        if text.startswith("always"):
            k = n - 1                    # 1-based number of the line above
            while k >= 1 and _VARIABLE_DECL.match(lines[k - 1]):
                off.append(k)
                k -= 1
    ranges = []
    for n in sorted(set(off)):
        if ranges and ranges[-1][1] == n - 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    name = os.path.basename(verilog_path)
    return _COVERAGE_CONFIG + "".join(f'coverage_off -file "*{name}" -lines {a}' + (f"-{b}" if b > a else "") + "\n"
                                      for a, b in ranges)


_coverage_dir = None
_build_on_construction = True


@contextlib.contextmanager
def builds_on_first_run():
    """Within this context a new BatchDesign compiles nothing until a run needs it (a replay
    asking for a waveform then builds only Verilator's traced variant, not the plain one too)."""
    global _build_on_construction
    old, _build_on_construction = _build_on_construction, False
    try:
        yield
    finally:
        _build_on_construction = old


@contextlib.contextmanager
def code_coverage(folder):
    """Within this context, Verilator designs are built with coverage (cosim.sim.codecov) and every
    run writes its coverage data as a new file in `folder` (None: no coverage)."""
    global _coverage_dir
    old, _coverage_dir = _coverage_dir, (os.path.abspath(folder) if folder else None)
    if _coverage_dir:
        os.makedirs(_coverage_dir, exist_ok=True)
    try:
        yield _coverage_dir
    finally:
        _coverage_dir = old


def waves_format(path):
    """'fst' for a path ending in .fst, else 'vcd'."""
    return "fst" if str(path).lower().endswith(".fst") else "vcd"


# module ports only: MyHDL writes them at column 0, a Verilog function's inputs indented
_PORT_RE = re.compile(r"^(input|output)\s+(?:signed\s+)?(?:\[(\d+):0\]\s+)?(\w+)\s*;", re.M)


@dataclass
class BatchResult:
    frames: Dict[str, List[AxisFrame]]
    cycles: int
    wall_seconds: float            # simulator process only (not stimulus writing / parsing)
    beats_out: int = 0
    log: str = ""
    input_beats: Dict[str, list] = field(default_factory=dict)   # (cycle, tlast) per accepted input beat; None: abort
    counters: Dict[int, int] = field(default_factory=dict)            # counter_select -> value (sweep)
    busy_at_end: bool = False      # the design's `busy` output when the run ended
    resets: List[int] = field(default_factory=list)                 # cycles at which mid-run resets rose
    cut_frames: Dict[str, List[AxisFrame]] = field(default_factory=dict)   # output frames a reset cut short
    busy_changes: List[tuple] = field(default_factory=list)   # (cycle, value): `busy` as sampled, at each change
    # (cycle, "i K" | "o K" | "busy 0"): input K's tready, output K's tvalid or busy high at an edge
    # right after one with rst high (a design that keeps its links quiet through a reset has none)
    reset_live: List[tuple] = field(default_factory=list)

    @property
    def cycles_per_second(self):
        return self.cycles / self.wall_seconds if self.wall_seconds else float("inf")


@dataclass
class StreamStimulus:
    frames: List[AxisFrame] = field(default_factory=list)
    pause: object = None           # iterable of bools, one per cycle (None: never pause)


def module_ports(verilog_path, module):
    text = open(verilog_path).read()
    m = re.search(rf"module\s+{module}\s*\((.*?)\);(.*?)endmodule", text, re.S)
    if not m:
        raise ToolchainError(f"module {module} not found in {verilog_path}")
    ports = {}
    for direction, msb, name in _PORT_RE.findall(m.group(2)):
        ports[name] = (direction, int(msb) + 1 if msb else 1)
    return ports


def _stream_prefixes(ports, kind):
    pre = "s_axis" if kind == "in" else "m_axis"
    return sorted(p[: -len("_tdata")] for p in ports if p.startswith(pre) and p.endswith("_tdata"))


def _beat_words(width):
    """32-bit memory words per input beat ({tlast, tdata}, word 0 = bits 31:0).  The beats are
    loaded as 32-bit words because $readmemh of one wide word per beat costs time quadratic in
    the width in Verilator (it shifts the whole word for every digit)."""
    return (width + 1 + 31) // 32


def _tb_source(module, ports, ins, outs, reset_cycles, counter_sweep=None, instance_parameters=None):
    """The batched test bench around `module`; instance_parameters: {name: value} set on the
    instance (`module #(.NAME(value)) dut(...)`) for a design whose Verilog has parameters."""
    if "clk" not in ports:
        raise ToolchainError(f"{module}: the batched test bench needs a clock input named clk")
    L = ["`timescale 1ns/10ps", "module batch_tb;", "integer cycle = 0;", "integer fd = 0;",
         "integer max_cycles, idle_stop, busy_stop, idle = 0, quiet = 0;", "integer reset_n = 0, reset_i = 0, reset_hold = 2, reset_left = 0, reset_wait = -1, resets_done = 0;",
         "reg [31:0] reset_at [0:63];", "reg [31:0] reset_when [0:63];", "reg capture = 1;", "reg busy_seen = 0;", "reg rst_seen = 0;", "reg [31:0] pause_word;", "integer word_i;", "reg [8*1024-1:0] path;"]
    conn = []
    for name, (direction, width) in ports.items():
        rng = f"[{width - 1}:0] " if width > 1 else ""
        if direction == "input":
            L.append(f"reg {rng}{name} = {1 if name == 'rst' else 0};")  # reset starts active
        else:
            L.append(f"wire {rng}{name};")
        conn.append(f".{name}({name})")
    for k, p in enumerate(ins):
        w = ports[f"{p}_tdata"][1]
        nw = _beat_words(w)
        L += [f"reg [31:0] in{k}_words [0:{MAX_BEATS * nw - 1}];", f"reg [{32 * nw - 1}:0] in{k}_beat;",
              f"reg [31:0] in{k}_delay [0:{MAX_FRAMES - 1}];",
              f"reg [31:0] in{k}_after [0:{MAX_FRAMES - 1}];",
              f"reg [31:0] in{k}_pause [0:{PAUSE_WORDS - 1}];", f"integer in{k}_b = 0, in{k}_f = 0, in{k}_nf = 0, in{k}_wait = 0;",
              f"reg in{k}_busy = 0;", f"reg in{k}_paused;", f"integer in{k}_fs = 0;"]
    for k, p in enumerate(outs):
        L += [f"reg [31:0] out{k}_pause [0:{PAUSE_WORDS - 1}];", f"integer out{k}_nb = 0;"]
    sweep = bool(counter_sweep) and "counter_select" in ports and "counter_value" in ports
    if sweep:
        selects, hold = counter_sweep
        L += [f"reg [31:0] sweep_sel [0:{len(selects) - 1}];", "integer sweep_i = 0, sweep_hold = 0;",
              "reg sweep_on = 0, do_sweep = 0;"]
    overrides = ", ".join(f".{k}({v})" for k, v in sorted((instance_parameters or {}).items()))
    L.append(f"{module} {f'#({overrides}) ' if overrides else ''}dut({', '.join(conn)});")
    L.append("always #5 clk = ~clk;")
    L.append("initial begin")
    L.append('  if (!$value$plusargs("max_cycles=%d", max_cycles)) max_cycles = 100000;')
    L.append('  if (!$value$plusargs("idle_stop=%d", idle_stop)) idle_stop = 0;')
    L.append('  if (!$value$plusargs("busy_stop=%d", busy_stop)) busy_stop = 0;')
    L.append('  if ($test$plusargs("nocapture")) capture = 0;')
    L.append('  if ($value$plusargs("out=%s", path)) fd = $fopen(path, "w");')
    for k in range(len(ins)):
        L.append(f'  if ($value$plusargs("in{k}_beats=%s", path)) $readmemh(path, in{k}_words);')
        L.append(f'  if ($value$plusargs("in{k}_delay=%s", path)) $readmemh(path, in{k}_delay);')
        L.append(f'  if ($value$plusargs("in{k}_after=%s", path)) $readmemh(path, in{k}_after);')
        L.append(f'  if ($value$plusargs("in{k}_pause=%s", path)) $readmemh(path, in{k}_pause);')
        L.append(f'  if (!$value$plusargs("in{k}_frames=%d", in{k}_nf)) in{k}_nf = 0;')
    for k in range(len(outs)):
        L.append(f'  if ($value$plusargs("out{k}_pause=%s", path)) $readmemh(path, out{k}_pause);')
    L.append('  if ($value$plusargs("vcd=%s", path)) begin $dumpfile(path); $dumpvars(0, batch_tb); end')
    L.append('  if (!$value$plusargs("reset_hold=%d", reset_hold)) reset_hold = 2;')
    L.append('  if ($value$plusargs("resets=%s", path)) $readmemh(path, reset_at);')
    L.append('  if ($value$plusargs("reset_when=%s", path)) $readmemh(path, reset_when);')
    L.append('  if (!$value$plusargs("reset_n=%d", reset_n)) reset_n = 0;')
    if sweep:
        L.append('  if ($test$plusargs("sweep")) do_sweep = 1;')
        L += [f"  sweep_sel[{i}] = {sel};" for i, sel in enumerate(selects)]
    L.append("end")
    # rising edge: count the cycle, take handshakes, log output beats
    L.append("always @(posedge clk) begin")
    if sweep:
        # after the run: hold each counter_select for `hold` rising edges, then log the value
        L.append("  if (sweep_on) begin")
        L.append("    sweep_hold = sweep_hold + 1;")
        L.append(f"    if (sweep_hold == {hold}) begin")
        L.append('      $fwrite(fd, "c %0d %0d\\n", sweep_sel[sweep_i], counter_value);')
        L.append("      sweep_i = sweep_i + 1; sweep_hold = 0;")
        L.append(f"      if (sweep_i == {len(selects)}) begin $fclose(fd); $finish; end")
        L.append("    end")
        L.append("  end else begin")
    L.append("  cycle = cycle + 1;")
    live = " && !rst" if "rst" in ports else ""      # no beat moves while the links are reset
    if "rst" in ports:
        # at every edge after one with rst high (E + 1 ... L + 1): what the design still offers
        # on its links, and its busy; the caller judges it (docs/protocol.md: the node's tready,
        # tvalid and busy are low there)
        quiet_checks = [(f"{p}_tready", f"i {k}") for k, p in enumerate(ins)]
        quiet_checks += [(f"{p}_tvalid", f"o {k}") for k, p in enumerate(outs)]
        if "busy" in ports and ports["busy"][0] == "output":
            quiet_checks.append(("busy", "busy 0"))
        L.append("  if (capture && rst_seen) begin")
        for sig, what in quiet_checks:
            L.append(f'    if ({sig} === 1\'b1) $fwrite(fd, "q %0d {what}\\n", cycle);')
        L.append("  end")
        L.append("  rst_seen = rst;")
    for k, p in enumerate(ins):
        L.append(f"  if ({p}_tvalid && {p}_tready{live}) begin")
        L.append(f'    if (capture) $fwrite(fd, "i {k} %0d %0d\\n", cycle, {p}_tlast);')
        L.append(f"    if ({p}_tlast) begin in{k}_busy = 0; in{k}_f = in{k}_f + 1; end")
        L.append(f"    in{k}_b = in{k}_b + 1;")
        L.append("  end")
    if "busy" in ports and ports["busy"][0] == "output":
        # every change of `busy`, as sampled at this edge (the value a beat taken at it sees)
        L.append('  if (capture && busy !== busy_seen) begin busy_seen = busy; $fwrite(fd, "b %0d %0d\\n", cycle, busy); end')
    act = []
    for k, p in enumerate(outs):
        hs = f"{p}_tvalid && {p}_tready{live}"
        act.append(f"({hs})")
        L.append(f'  if (capture && ({hs})) $fwrite(fd, "{k} %0d %0d %h\\n", cycle, {p}_tlast, {p}_tdata);')
        L.append(f"  if ({hs}) out{k}_nb = out{k}_nb + 1;")
    done = " && ".join([f"in{k}_f >= in{k}_nf" for k in range(len(ins))] or ["1"])
    moving = " || ".join(act or ["0"])
    # quiet: every input sent and no output beat.  A run ends after `idle_stop` quiet cycles
    # with the design not busy and no output valid, or after `busy_stop` quiet cycles whatever
    # it says (a design waiting for input that will never come: the caller checks `busy` on the
    # end line)
    has_busy = "busy" in ports and ports["busy"][0] == "output"
    L.append(f"  if (({done}) && !({moving})) quiet = quiet + 1; else quiet = 0;")
    # a frame held at an output (valid, sink stalled) is not idle: a sink stall must not end a run
    pending = " || ".join(f"{p}_tvalid" for p in outs) or "0"
    L.append(f"  if (quiet > 0 && !{'busy' if has_busy else '0'} && !({pending})) idle = idle + 1; else idle = 0;")
    L.append("  if (cycle >= max_cycles || (idle_stop > 0 && idle >= idle_stop) || (busy_stop > 0 && quiet >= busy_stop)) begin")
    L.append(f'    if (fd) $fwrite(fd, "end %0d %0d\\n", cycle, {"busy" if has_busy else "0"});')
    if sweep:
        L.append("    if (do_sweep) sweep_on = 1; else begin $fclose(fd); $finish; end")
    else:
        L.append("    $fclose(fd); $finish;")
    L.append("  end")
    if sweep:
        L.append("  end")
    L.append("end")
    # falling edge: release reset, draw pauses, drive sources and sink readies
    L.append("always @(negedge clk) begin")
    if sweep:
        L.append("  if (sweep_on) counter_select = sweep_sel[sweep_i];")
    if "rst" in ports:
        # initial reset, then mid-run resets (cosim.sim.batch.ResetEvent): each is raised when its
        # condition holds (a cycle reached, or an input stream's frames finished / an output
        # stream's beats received, then a delay), held `reset_hold` cycles; sources drop the
        # frame in flight, and frames may wait for a number of resets to be over
        L.append("  if (reset_left > 0) reset_left = reset_left - 1;")
        L.append(f"  if (cycle >= {reset_cycles} && reset_left == 0 && rst) begin")
        L.append("    rst = 0;")
        L.append("    if (reset_i > 0) resets_done = resets_done + 1;")
        L.append("  end")
        L.append("  if (!rst && reset_i < reset_n && reset_wait < 0) begin")
        conds = ["(reset_when[reset_i][31:24] == 0 && cycle >= reset_at[reset_i])"]
        conds += [f"(reset_when[reset_i][31:24] == {1 + k} && in{k}_f >= reset_when[reset_i][23:0])"
                  for k in range(len(ins))]
        conds += [f"(reset_when[reset_i][31:24] == {RESET_OUT_KIND + k} && out{k}_nb >= reset_when[reset_i][23:0])"
                  for k in range(len(outs))]
        L.append(f"    if ({' || '.join(conds)}) reset_wait = (reset_when[reset_i][31:24] == 0) ? 0 : reset_at[reset_i];")
        L.append("  end")
        L.append("  if (reset_wait > 0) reset_wait = reset_wait - 1;")
        L.append("  else if (reset_wait == 0) begin")
        L.append("    rst = 1; reset_left = reset_hold; reset_i = reset_i + 1; reset_wait = -1;")
        L.append('    if (capture) $fwrite(fd, "r %0d\\n", cycle);')
        for k in range(len(ins)):
            L.append(f"    if (in{k}_busy && in{k}_b > in{k}_fs) begin")
            w = ports[ins[k] + "_tdata"][1]
            L.append(f"      while (!in{k}_words[in{k}_b * {_beat_words(w)} + {w // 32}][{w % 32}]) in{k}_b = in{k}_b + 1;")
            L.append(f"      in{k}_b = in{k}_b + 1; in{k}_f = in{k}_f + 1; in{k}_busy = 0;")
            L.append(f'      if (capture) $fwrite(fd, "a {k}\\n");')
            L.append("    end")
        L.append("  end")
    for k, p in enumerate(ins):
        L.append(f"  pause_word = in{k}_pause[(cycle - 1) >> 5];")
        L.append(f"  in{k}_paused = (cycle >= 1 && cycle - 1 < {MAX_CYCLES}) ? (pause_word[(cycle - 1) & 31] === 1'b1) : 1'b0;")
        # AxisFrame.after: word {stream + 1 (8 bits), frames (24 bits)}; 0 = no condition
        after = f"in{k}_after[in{k}_f]"
        may = " || ".join([f"{after}[31:24] == 0",
                           f"({after}[31:24] == {AFTER_RESET_CODE} && resets_done >= {after}[23:0])"]
                          + [f"({after}[31:24] == {j + 1} && in{j}_f >= {after}[23:0])" for j in range(len(ins))])
        L.append(f"  if (!in{k}_busy && in{k}_f < in{k}_nf && ({may})) begin in{k}_busy = 1; in{k}_fs = in{k}_b; "
                 f"in{k}_wait = in{k}_delay[in{k}_f]; end")
        L.append(f"  if (in{k}_wait > 0) begin in{k}_wait = in{k}_wait - 1; {p}_tvalid = 0; end")
        L.append(f"  else if (in{k}_busy && !in{k}_paused{live}) begin")
        w = ports[f"{p}_tdata"][1]
        nw = _beat_words(w)
        L.append(f"    for (word_i = 0; word_i < {nw}; word_i = word_i + 1) "
                 f"in{k}_beat[word_i * 32 +: 32] = in{k}_words[in{k}_b * {nw} + word_i];")
        L.append(f"    {{{p}_tlast, {p}_tdata}} = in{k}_beat[{w}:0];")
        L.append(f"    {p}_tvalid = 1;")
        L.append("  end")
        L.append(f"  else {p}_tvalid = 0;")
    for k, p in enumerate(outs):
        L.append(f"  pause_word = out{k}_pause[(cycle - 1) >> 5];")
        L.append(f"  {p}_tready = !((cycle >= 1 && cycle - 1 < {MAX_CYCLES}) ? (pause_word[(cycle - 1) & 31] === 1'b1) : 1'b0);")
    L.append("end")
    L.append("endmodule")
    return "\n".join(L) + "\n"


class SimulatorTimeout(ToolchainError):
    """A simulator run stopped at its wall-time limit (a design that hangs the test bench)."""


def run_simulator(cmd, work, timeout, simulator, remove_on_timeout=False):
    """Run a compiled simulation in `work` under a wall-time limit (None: none); returns the
    completed process and its wall time, or raises SimulatorTimeout (removing `work` first if
    asked: a run's own folder)."""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        if remove_on_timeout:
            shutil.rmtree(work, ignore_errors=True)
        raise SimulatorTimeout(f"{simulator} run stopped after {timeout:.0f} s of wall time") from e
    return r, time.perf_counter() - t0


RESET_STREAM = "reset"     # AxisFrame.after = ("reset", n): wait until n mid-run resets are over
# The test bench's condition words are {code (8 bits), count (24 bits)}: a frame's `after` codes a
# stream as its index + 1 and a wait for resets as AFTER_RESET_CODE; a reset event codes an input
# stream as 1 + K and an output stream as RESET_OUT_KIND + K (a tree of nodes has dozens of streams)
AFTER_RESET_CODE = 255
RESET_OUT_KIND = 128


@dataclass(frozen=True)
class ResetEvent:
    """A mid-run reset, raised when its condition first holds (after the previous one is over):
        source "cycle"   at cycle `delay` (an absolute cycle; `count` unused)
        source "in K"    `delay` cycles after input stream K (index) has finished `count` frames
        source "out K"   `delay` cycles after output stream K has transferred `count` beats
    Conditions on stream progress reach the same phase of a design whatever the backpressure."""
    source: str = "cycle"
    count: int = 0
    delay: int = 0

    def word(self, n_inputs, n_outputs):
        """{kind (8 bits), count (24 bits)}: kind 0 a cycle, 1 + K input stream K, RESET_OUT_KIND + K
        output stream K."""
        if self.source == "cycle":
            kind = 0
        else:
            side, _, k = self.source.partition(" ")
            k = int(k)
            if side == "in" and 0 <= k < min(n_inputs, RESET_OUT_KIND - 1):
                kind = 1 + k
            elif side == "out" and 0 <= k < min(n_outputs, 256 - RESET_OUT_KIND):
                kind = RESET_OUT_KIND + k
            else:
                raise ValueError(f"reset source {self.source!r}: 'cycle', 'in K' (K < {n_inputs}) or 'out K' "
                                 f"(K < {n_outputs})")
        if not (0 <= self.count < (1 << 24) and 0 <= self.delay < (1 << 31)):
            raise ValueError(f"reset event {self}: count < 2^24, 0 <= delay < 2^31")
        return (kind << 24) | self.count


def _after_word(after, n_inputs):
    """{stream + 1 (8 bits), frames (24 bits)}, or {AFTER_RESET_CODE, resets} ("reset", n)."""
    stream, count = after
    if stream == RESET_STREAM:
        if not 0 <= count < (1 << 24):
            raise ValueError(f"frame condition after={after!r}: count < 2^24")
        return (AFTER_RESET_CODE << 24) | count
    if not (0 <= stream < min(n_inputs, AFTER_RESET_CODE - 1) and 0 <= count < (1 << 24)):
        raise ValueError(f"frame condition after={after!r}: stream must be 0..{n_inputs - 1}, count < 2^24")
    return ((stream + 1) << 24) | count


class BatchDesign:
    """A converted block plus its generated test bench, compiled for one simulator.

    Under Verilator a design has build variants (VERILATOR_VARIANTS): the plain one, a traced
    one for runs that ask for a waveform, and a coverage one inside `code_coverage(...)`.  The
    variant in effect is compiled here; the others when a run first needs them."""

    def __init__(self, block_func, *args, simulator="icarus", reset_cycles=2, counter_sweep=None, **kwargs):
        """counter_sweep: (list of counter_select values, hold cycles) read after every run
        that asks for it, for designs with counter_select / counter_value ports."""
        if simulator not in SIMULATORS:
            raise ValueError(f"unknown simulator {simulator!r}; choose one of {', '.join(SIMULATORS)}")
        folder, module, bound = convert.build(block_func, *args, **kwargs)
        parameters = {k: v for k, v in bound.arguments.items() if not convert.is_signal(v)}
        ports = module_ports(os.path.join(folder, module + ".v"), module)
        self._setup(folder, module, ports, parameters, simulator, reset_cycles, counter_sweep)

    @classmethod
    def from_verilog(cls, sources, top, ports, simulator="icarus", reset_cycles=2, counter_sweep=None,
                     instance_parameters=None, label=None, icarus_sources=None):
        """A design given as Verilog files (a user's RTL, an exported or mutated design) instead
        of a MyHDL block.  `ports`: {name: (direction, width)} of `top`, as the caller checked
        them (cosim.sim.verilog_interface); `instance_parameters`: {name: value} set on the
        instance.  The files are copied into a build folder keyed by their contents, so a
        changed file is compiled again and an unchanged one is not.  A file converted by MyHDL
        gets the same Icarus-only rewrite as the kit's own builds (cosim/sim/verilog_post.py:
        wide concatenations by words, one process per clock edge); Verilator and the reports
        read the files as given.  `icarus_sources`: the same design already in the form Icarus
        should compile (the kit's own `<name>_icarus.v` builds), used instead of that rewrite."""
        if simulator not in SIMULATORS:
            raise ValueError(f"unknown simulator {simulator!r}; choose one of {', '.join(SIMULATORS)}")
        given_icarus = list(icarus_sources or ())
        texts = []
        for path in list(sources) + given_icarus:
            with open(path) as fh:
                texts.append((os.path.basename(path), fh.read()))
        names = [n for n, _ in texts]
        if len(set(names)) != len(names):
            raise ValueError(f"two design files share a name: {', '.join(sorted(names))}")
        key = hashlib.sha256(json.dumps([texts, top, sorted((instance_parameters or {}).items())]).encode())
        folder = os.path.join(convert.build_root(), "dut", f"{label or top}-{key.hexdigest()[:16]}")
        os.makedirs(folder, exist_ok=True)
        icarus_files, verilog_files = [], []
        for name, text in texts:
            if not os.path.exists(os.path.join(folder, name)):
                part = os.path.join(folder, f".{name}.{_owner()}")
                with open(part, "w") as fh:
                    fh.write(text)
                os.replace(part, os.path.join(folder, name))
            if len(verilog_files) < len(sources):
                verilog_files.append(name)
                if not given_icarus:
                    icarus_files.append(_icarus_form(folder, name, text))
            else:
                icarus_files.append(name)
        self = cls.__new__(cls)
        self._setup(folder, top, dict(ports), dict(instance_parameters or {}), simulator, reset_cycles, counter_sweep,
                    instance_parameters=instance_parameters, files=(icarus_files, verilog_files))
        return self

    def _setup(self, folder, module, ports, parameters, simulator, reset_cycles, counter_sweep,
               instance_parameters=None, files=None):
        self.folder, self.module, self.parameters, self.simulator = folder, module, parameters, simulator
        self.ports = ports
        self.inputs = _stream_prefixes(self.ports, "in")
        self.outputs = _stream_prefixes(self.ports, "out")
        self.widths = {p: self.ports[f"{p}_tdata"][1] for p in self.inputs + self.outputs}
        self.reset_cycles = reset_cycles
        self._tb = _tb_source(self.module, self.ports, self.inputs, self.outputs, reset_cycles, counter_sweep,
                              instance_parameters)
        self.tb_path = os.path.join(self.folder, f"batch_tb_r{reset_cycles}.v")
        # (Icarus's files, Verilator's files) relative to the folder; None: the kit's own build
        self._files = files
        self.verilog_path = os.path.join(self.folder, files[1][0] if files else self.module + ".v")
        self._exes = {}
        if _build_on_construction:
            self.executable("coverage" if _coverage_dir and simulator == "verilator" else "plain")

    def executable(self, variant="plain"):
        """The compiled simulator of a build variant (Verilator: VERILATOR_VARIANTS; Icarus has
        only 'plain', whose VCD and FST output need no special build), compiled if needed."""
        if variant in self._exes:
            return self._exes[variant]
        if self.simulator in ICARUS_GENERATIONS and variant != "plain" or variant not in VERILATOR_VARIANTS:
            raise ValueError(f"no {variant!r} build for {self.simulator}")
        tag = f"{self.simulator}_r{self.reset_cycles}" + ("" if variant == "plain" else f"_{variant}")
        if self.simulator == "verilator" and variant != "coverage":      # coverage has its own levels
            tag += VERILATOR_OPT_TAG
        exe = os.path.join(self.folder, f"batch_{tag}" + (".vvp" if self.simulator in ICARUS_GENERATIONS else ""))
        # parallel workers may compile the same design: one at a time, the others reuse it
        with open(os.path.join(self.folder, f".lock-{tag}"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            # the executable is reused only if built from this test bench with these flags (the
            # test bench file is shared by both simulators, so its text alone does not say that)
            stamp_path = os.path.join(self.folder, f".built-{tag}")
            if self.simulator == "verilator":
                flags = verilator_recipe(variant)
                if variant == "coverage":
                    flags += "\n" + _COVERAGE_MAIN + coverage_config(self.verilog_path)
            else:
                flags = "iverilog " + ICARUS_GENERATIONS[self.simulator]
            if self.simulator == "verilator":
                flags += "\n" + VERILATOR_SOURCE
            if self._files:         # a design given as files: which of them each simulator reads
                flags += "\n" + repr(self._files)
            stamp = hashlib.sha256((flags + "\n" + self._tb).encode()).hexdigest()
            if not (os.path.exists(exe) and os.path.exists(stamp_path) and open(stamp_path).read() == stamp):
                self._compile(self._tb, self.simulator, tag, exe, variant)
                with open(stamp_path, "w") as fh:
                    fh.write(stamp)
        self._exes[variant] = exe
        return exe

    def _compile(self, tb, simulator, tag, exe, variant="plain"):
        with open(self.tb_path, "w") as fh:
            fh.write(tb)
        tb_file = os.path.basename(self.tb_path)
        if simulator in ICARUS_GENERATIONS:
            design = self._files[0] if self._files else [os.path.basename(convert.icarus_source(self.folder,
                                                                                                  self.module))]
            icarus_build("batch_tb", [*design, tb_file], exe, self.folder, [ICARUS_GENERATIONS[simulator]])
            return
        if self._files:
            src = [verilator_source(self.folder, os.path.splitext(name)[0]) for name in self._files[1]] + [tb_file]
        else:
            src = [verilator_source(self.folder, self.module), tb_file]
        mdir = os.path.join(self.folder, f"obj_{tag}")
        if variant != "plain":      # no stale sources of an earlier build (the node's are 300+ MB)
            shutil.rmtree(mdir, ignore_errors=True)
        if variant == "coverage":
            for name, text in (("batch_cov_main.cpp", _COVERAGE_MAIN),
                               ("batch_cov.vlt", coverage_config(self.verilog_path))):
                with open(os.path.join(self.folder, name), "w") as fh:
                    fh.write(text)
            src = ["batch_cov.vlt"] + src + ["batch_cov_main.cpp"]
        verilator_build("batch_tb", src, mdir, exe, self.folder, variant)

    def run(self, stimulus, sink_pause=None, max_cycles=100000, idle_stop=200, capture=True, workdir=None, vcd=None,
            sweep_counters=False, resets=(), reset_hold=2, busy_stop=0, code_coverage=None, plusargs=(),
            timeout=None):
        """stimulus: {input prefix: StreamStimulus}; sink_pause: {output prefix: iterable of bools}.
        The run ends at `max_cycles`, after `idle_stop` quiet cycles (all input sent, no output
        beat) with `busy` and every output's valid low, or after `busy_stop` quiet cycles
        (0: never) with `busy` high.
        vcd: write a waveform of the whole test bench there (FST if the name ends in .fst; under
        Verilator the traced build).  code_coverage: a file for the run's coverage data
        (Verilator only; default inside `code_coverage(folder)`: a new file in that folder).
        plusargs: more `+name=value` arguments for the design (a mutant's select, say).
        timeout: seconds of wall time after which the simulator is stopped (SimulatorTimeout)."""
        sink_pause = sink_pause or {}
        unknown = (set(stimulus) - set(self.inputs)) | (set(sink_pause) - set(self.outputs))
        if unknown:
            raise ValueError(f"no such stream(s) {sorted(unknown)}; inputs {self.inputs}, outputs {self.outputs}")
        if code_coverage is None and _coverage_dir and self.simulator == "verilator":
            code_coverage = os.path.join(self._coverage_folder(_coverage_dir), f"run-{os.getpid()}-{time.time_ns()}.dat")
        if code_coverage and self.simulator != "verilator":
            raise ValueError(f"code coverage needs the Verilator build, not {self.simulator}")
        if code_coverage and vcd:
            raise ValueError("one run gives either code coverage or a waveform, not both: rerun it for the waveform")
        if code_coverage:
            exe = self.executable("coverage")
        elif vcd and self.simulator == "verilator":
            exe = self.executable("trace-fst" if waves_format(vcd) == "fst" else "trace")
        else:
            exe = self.executable("plain")
        work = workdir or os.path.join(self.folder, f"run-{_owner()}")
        os.makedirs(work, exist_ok=True)
        args = [f"+max_cycles={max_cycles}", f"+idle_stop={idle_stop}", f"+busy_stop={busy_stop}",
                f"+out={os.path.join(work, 'out.txt')}"]
        npause = min(max_cycles, MAX_CYCLES)
        for k, p in enumerate(self.inputs):
            st = stimulus.get(p, StreamStimulus())
            w = self.widths[p]
            beats, delays, afters = [], [], []
            for f in st.frames:
                delays.append(f.delay)
                afters.append(0 if f.after is None else _after_word(f.after, len(self.inputs)))
                for j, b in enumerate(f.beats):
                    beats.append(((1 if j == len(f.beats) - 1 else 0) << w) | b)
            if len(beats) > MAX_BEATS or len(delays) > MAX_FRAMES:
                raise ValueError(f"stream {p}: {len(beats)} beats / {len(delays)} frames exceed the test bench "
                                 f"capacity ({MAX_BEATS} / {MAX_FRAMES})")
            nw = _beat_words(w)
            words = [(b >> (32 * i)) & 0xFFFFFFFF for b in beats for i in range(nw)]
            for kind, vals, digits in (("beats", words, 8), ("delay", delays, 8), ("after", afters, 8)):
                path = os.path.join(work, f"in{k}_{kind}.hex")
                with open(path, "w") as fh:
                    fh.write("".join(f"{v:0{digits}x}\n" for v in vals) or "0\n")
                args.append(f"+in{k}_{kind}={path}")
            args.append(f"+in{k}_frames={len(st.frames)}")
            args.append(f"+in{k}_pause={self._pause_file(work, f'in{k}', st.pause, npause)}")
        for k, p in enumerate(self.outputs):
            args.append(f"+out{k}_pause={self._pause_file(work, f'out{k}', sink_pause.get(p), npause)}")
        if not capture:
            args.append("+nocapture")
        if sweep_counters:
            args.append("+sweep")
        if resets:
            if len(resets) > 64:
                raise ValueError(f"{len(resets)} resets: the test bench holds 64")
            events = [r if isinstance(r, ResetEvent) else ResetEvent("cycle", 0, int(r)) for r in resets]
            if all(e.source == "cycle" for e in events):
                events.sort(key=lambda e: e.delay)
            for kind, vals in (("resets", [e.delay for e in events]),
                               ("reset_when", [e.word(len(self.inputs), len(self.outputs)) for e in events])):
                path = os.path.join(work, f"{kind}.hex")
                with open(path, "w") as fh:
                    fh.write("".join(f"{v:08x}\n" for v in vals))
                args.append(f"+{kind}={path}")
            args += [f"+reset_n={len(events)}", f"+reset_hold={reset_hold}"]
        if vcd:
            args.append(f"+vcd={os.path.abspath(vcd)}")
        if code_coverage:      # written under a temporary name: a reader never sees half a file
            args.append(f"+coverage_file={os.path.abspath(code_coverage)}.part")
        if self.simulator in ICARUS_GENERATIONS:
            cmd = ["vvp", "-n", exe] + (["-fst"] if vcd and waves_format(vcd) == "fst" else []) + args
        else:
            cmd = [exe] + args
        cmd += list(plusargs)
        r, wall = run_simulator(cmd, work, timeout, self.simulator, remove_on_timeout=workdir is None)
        if r.returncode != 0:
            raise ToolchainError(f"{self.simulator} run failed: {(r.stderr or r.stdout).strip()[-2000:]}")
        if code_coverage:
            os.replace(os.path.abspath(code_coverage) + ".part", os.path.abspath(code_coverage))
        result = self._parse(os.path.join(work, "out.txt"), wall, r.stdout)
        if workdir is None:
            shutil.rmtree(work, ignore_errors=True)
        return result

    def _coverage_folder(self, root):
        """This design's folder under a code_coverage(...) folder, with what cosim.sim.codecov needs
        to read its runs (the design's Verilog, its module and parameters)."""
        folder = os.path.join(root, f"{os.path.basename(self.folder)}-r{self.reset_cycles}")
        info = os.path.join(folder, "design.json")
        if not os.path.exists(info):
            os.makedirs(folder, exist_ok=True)
            with open(info + f".{os.getpid()}", "w") as fh:
                json.dump({"module": self.module, "verilog": self.verilog_path,
                           "parameters": {k: v for k, v in self.parameters.items() if isinstance(v, (int, str, float))}},
                          fh, indent=1)
            os.replace(info + f".{os.getpid()}", info)
        return folder

    @staticmethod
    def _pause_file(work, tag, pause, n):
        """One bit per cycle, 32 cycles per word (bit i of word w: cycle 32 w + i), so the
        test bench's pause memories stay small and quick to load and clear.  A fresh keyed
        pattern (cosim.sim.axis.PausePattern) is written from the text of its last use: a
        campaign runs the same seed's patterns on many mutants."""
        path = os.path.join(work, f"{tag}_pause.hex")
        key = (getattr(pause, "key", None), n) if getattr(pause, "fresh", False) else None
        text = _PAUSE_TEXTS.get(key) if key is not None else None
        if text is None:
            if key is not None and key[0][0] == 0.0 and len(key[0]) == 3:
                text = "00000000\n" * ((n + 31) // 32) or "0\n"         # never paused (and no stall window)
            else:
                bits = "" if pause is None else "".join("1" if x else "0" for x in islice(iter(pause), n))
                words = [int(bits[w:w + 32][::-1], 2) for w in range(0, len(bits), 32)]      # cycle 32 w: bit 0
                text = "".join(f"{v:08x}\n" for v in words) or "0\n"
            if key is not None:
                if len(_PAUSE_TEXTS) >= 64:
                    _PAUSE_TEXTS.pop(next(iter(_PAUSE_TEXTS)))
                _PAUSE_TEXTS[key] = text
        with open(path, "w") as fh:
            fh.write(text)
        return path

    def _parse(self, path, wall, log):
        frames = {p: [] for p in self.outputs}
        partial = {p: ([], []) for p in self.outputs}
        in_beats = {p: [] for p in self.inputs}
        counters = {}
        resets, cut, busy_changes, reset_live = [], {p: [] for p in self.outputs}, [], []
        cycles, beats, busy = 0, 0, False
        if os.path.exists(path):
            with open(path) as fh:
                for line in fh:
                    parts = line.split()
                    tag = parts[0]
                    if tag == "end":
                        cycles = int(parts[1])
                        busy = len(parts) > 2 and parts[2] == "1"
                    elif tag == "i":
                        in_beats[self.inputs[int(parts[1])]].append((int(parts[2]), parts[3] == "1"))
                    elif tag == "a":
                        in_beats[self.inputs[int(parts[1])]].append(None)     # frame aborted by a reset
                    elif tag == "c":
                        counters[int(parts[1])] = int(parts[2])
                    elif tag == "b":
                        busy_changes.append((int(parts[1]), parts[2] == "1"))
                    elif tag == "q":
                        reset_live.append((int(parts[1]), " ".join(parts[2:])))
                    elif tag == "r":
                        resets.append(int(parts[1]))
                        for p in self.outputs:        # a reset cuts the frames being sent
                            data, cyc = partial[p]
                            if data:
                                cut[p].append(AxisFrame(data, None, cyc))
                            partial[p] = ([], [])
                    else:
                        p = self.outputs[int(tag)]
                        data, cyc = partial[p]
                        data.append(int(parts[3], 16))
                        cyc.append(int(parts[1]))
                        beats += 1
                        if parts[2] == "1":
                            frames[p].append(AxisFrame(data, None, cyc))
                            partial[p] = ([], [])
        return BatchResult(frames, cycles, wall, beats, log, in_beats, counters, busy, resets, cut, busy_changes,
                           reset_live)

    def input_frame_cycles(self, stimulus, result):
        """Per input stream: the beat cycles of each frame sent in full (None for a frame
        a reset cut short), in stimulus order."""
        out = {}
        for p in self.inputs:
            frames, current = [], []
            for ev in result.input_beats.get(p, []):
                if ev is None:
                    frames.append(None)
                    current = []
                    continue
                current.append(ev[0])
                if ev[1]:
                    frames.append(current)
                    current = []
            out[p] = frames
        return out
