"""A MyHDL block converted to Verilog and compiled: its build folder.

`build(block_func, *signals, **parameters)` converts the block (with fresh copies of the
caller's signals, so theirs are left untouched) into a build folder per parameter set,
`build/cosim/<block>-<key>/`, where the key hashes the HDL sources, the non-signal
parameters, the port types and widths and the MyHDL version: a changed source or parameter
gives a new folder, an unchanged one is reused.  The folder keeps MyHDL's output as written
(`<name>.raw.v`), the rewritten design (`<name>.v`, cosim/sim/verilog_post.py), Icarus' form
of it and a test bench compiled with `iverilog` (once per folder).  A block with a test-only fault
(cosim/sim/faults.py: `with_fault(block, fault)`) is the correct block's conversion with the
fault's edits applied to MyHDL's output, in a folder of its own (`<block>-<key>-fault-<name>/`).

The layer under every back end: the batched simulators (cosim.sim.batch, cosim.sim.vector_batch),
the replay of a MyHDL run (cosim.sim.replay) and the back-end choice (cosim.sim.toolchain, which
re-exports these names) all build through it, and it imports none of them.
"""
import collections
import contextlib
import copy
import fcntl
import functools
import gc
import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import warnings

import myhdl
from myhdl import ResetSignal, Signal

from cosim.sim.faults import correct_block, fault_of
from cosim.sim.verilog_post import (coalesce_part_assigns, function_returns, hoist_block_locals, initialise_output_regs,
                                    merge_clocked_processes, procedural_concats, wake_at_time0)
from cosim.sim.vpi import ToolchainError, require_tool
from cosim.sim.myhdl_registries import forget_unused_memories, release_dropped_designs
from cosim.sim.myhdl_sources import fresh_block_names
from hdl.common.interface import Interface
from hdl.common.wiring import bundle, flat_ports

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_HDL_DIR = os.path.join(_ROOT, "hdl")
_SPEC_DIR = os.path.join(_ROOT, "spec")
TOOLCHAIN_VERSION = "11"  # bump when the generated files change shape


# Python collects its youngest generation of objects every 700 net allocations.  Elaborating
# and converting a design allocates millions of objects and keeps most of them, so those
# collections, and the full ones they lead to, walk an ever larger heap: converting the node
# made 3,504 collections, 3.4 s of its 18.3 s of CPU.  Every 20,000 allocations: 121, 1.5 s.
GC_YOUNGEST_THRESHOLD = 20000


def collect_less_often():
    """Raise the youngest generation's collection threshold to GC_YOUNGEST_THRESHOLD (never
    lower it); a process-wide setting, made by the `prism` command and the test suite."""
    youngest, middle, oldest = gc.get_threshold()
    if 0 < youngest < GC_YOUNGEST_THRESHOLD:
        gc.set_threshold(GC_YOUNGEST_THRESHOLD, middle, oldest)


def build_root():
    """Folder for converted/compiled designs: $PRISM_BUILD_DIR or <project>/build."""
    env = os.environ.get("PRISM_BUILD_DIR")
    if env:
        return env
    return os.path.join(os.path.dirname(_HDL_DIR), "build")


def unwrap_block(block_func):
    """The plain Python function behind a MyHDL @block."""
    return getattr(block_func, "func", block_func)


def is_signal(v):
    """True for a MyHDL signal (a port), False for a parameter."""
    return isinstance(v, myhdl._Signal._Signal)


def _port_descr(s):
    v = s._init
    if isinstance(v, bool) or s._nrbits == 0:
        return ("bool", type(s).__name__)
    return (type(v).__name__, len(v), v.min, v.max, type(s).__name__)


def _fresh(s):
    """An unconnected copy of signal `s` (same type, width and initial value)."""
    init = copy.copy(s._init)
    if isinstance(s, ResetSignal):
        return ResetSignal(init, active=s.active, isasync=s.isasync)
    return Signal(init)


def _fresh_argument(v):
    """A signal, or a bus (an object whose attributes are signals: hdl/common/interface.py), with
    unconnected copies of its signals; anything else as it is.  A bus captured from a larger design
    keeps what that design's elaboration marked on its signals (driven, read), and MyHDL would
    take a field another block drives for an output of this one."""
    if is_signal(v):
        return _fresh(v)
    fields = getattr(v, "__dict__", None)
    if fields and not isinstance(v, type) and all(is_signal(s) for s in fields.values()):
        bus = copy.copy(v)
        for name, s in fields.items():
            object.__setattr__(bus, name, _fresh(s))
        return bus
    return v


def hdl_modules():
    """{module name: dotted path} of every design module (hdl/<subsystem>/<name>.py; names are unique)."""
    out = {}
    for root, _, files in os.walk(_HDL_DIR):
        for f in files:
            if f.endswith(".py") and not f.startswith("_"):
                rel = os.path.relpath(os.path.join(root, f[:-3]), _ROOT)
                out[f[:-3]] = rel.replace(os.sep, ".")
    return out


def block_module(name):
    """The module of the block named `name` (its factory has the module's name): hdl first, then
    the test-only variants of the verification library (cosim/<subsystem>/)."""
    import importlib
    dotted = hdl_modules().get(name)
    if dotted is None:
        for sub in ("node", "fabric", "package", "arith"):
            if os.path.exists(os.path.join(_ROOT, "cosim", sub, name + ".py")):
                dotted = f"cosim.{sub}.{name}"
                break
    if dotted is None:
        raise KeyError(f"no block named {name!r} in hdl/ or in the verification library")
    return importlib.import_module(dotted)


def block_function(name):
    """The block factory `name` of the module `name`."""
    return getattr(block_module(name), name)


_IMPORT_RE = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\s+([\w, ()]+)|import\s+([\w.]+))", re.M)


def _imported_files(path, index):
    """Source files of the design modules one source file imports (any import form; module names
    are unique, so the last component of a dotted name identifies the module)."""
    with open(path) as fh:
        text = fh.read()
    out = set()
    for frm, names, imp in _IMPORT_RE.findall(text):
        cands = [(frm or imp).split(".")[-1]]
        if frm:                                   # `from hdl.arith import number_decoder`
            cands += [n.strip().split(" ")[0] for n in names.strip("()").split(",")]
        out.update(index[c] for c in cands if c in index)
    return out


@functools.lru_cache(maxsize=None)
def _sources_digest(path, mtime_key):
    """Digest of one source file and of every design module it imports, transitively."""
    index = {name: os.path.join(_ROOT, *dotted.split(".")) + ".py" for name, dotted in hdl_modules().items()}
    seen, todo = set(), [path]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        todo.extend(_imported_files(f, index) - seen)
    h = hashlib.sha256()
    for f in sorted(seen | _spec_files()):
        with open(f, "rb") as fh:
            h.update(os.path.relpath(f, _ROOT).encode() + fh.read())
    return h.hexdigest()


def _spec_files():
    """The shared constants (spec/): every design may read them, so every design's digest holds them."""
    return {os.path.join(_SPEC_DIR, f) for f in os.listdir(_SPEC_DIR) if f.endswith(".py")}


def _mtimes():
    return tuple(sorted((os.path.join(r, f), os.path.getmtime(os.path.join(r, f)))
                        for top in (_HDL_DIR, _SPEC_DIR, os.path.join(_ROOT, "cosim"))
                        for r, _, fs in os.walk(top) for f in fs if f.endswith(".py")))


def hdl_source_digest(module=None):
    """Digest of the HDL a block is built from: its module (a dotted name: `hdl.node.prism_node`,
    or a test-only variant in cosim/) and the design modules it imports, so editing one block
    does not invalidate the builds of unrelated ones; every hdl source when `module` is None."""
    mt = _mtimes()
    if module is None:
        return _sources_digest_all(mt)
    path = os.path.join(_ROOT, *module.split(".")) + ".py"
    if not os.path.exists(path):
        return _sources_digest_all(mt)
    return _sources_digest(path, mt)


@functools.lru_cache(maxsize=None)
def _sources_digest_all(mtime_key):
    h = hashlib.sha256()
    for root, _, files in sorted(os.walk(_HDL_DIR)):
        for f in sorted(files):
            if f.endswith(".py"):
                with open(os.path.join(root, f), "rb") as fh:
                    h.update(os.path.relpath(os.path.join(root, f), _ROOT).encode() + fh.read())
    for f in sorted(_spec_files()):
        with open(f, "rb") as fh:
            h.update(os.path.relpath(f, _ROOT).encode() + fh.read())
    return h.hexdigest()


class BoundPorts:
    """A block's arguments bound to its parameters: `args` and `kwargs` as the block takes them
    (buses whole), `arguments` {name: value} with each bus's fields under the names of the
    converted ports, `<bus>_<field>` (what a test bench drives and samples), `buses` {name: bus}."""

    def __init__(self, bound):
        self.signature = bound.signature
        self.args, self.kwargs = bound.args, bound.kwargs
        self.arguments = flat_ports(bound.arguments)
        self.buses = {n: v for n, v in bound.arguments.items() if isinstance(v, Interface)}


def bind_arguments(block_func, args, kwargs):
    """The block's arguments bound to its parameters by name, defaults applied (a BoundPorts).
    A bus may be given whole or as its fields' converted names (a test bench's flat ports)."""
    sig = inspect.signature(unwrap_block(block_func))
    bound = sig.bind(*args, **bundle(block_func, kwargs))
    bound.apply_defaults()
    return BoundPorts(bound)


def design_key(block_func, bound):
    parts = [TOOLCHAIN_VERSION, myhdl.__version__, hdl_source_digest(unwrap_block(block_func).__module__),
             unwrap_block(block_func).__module__,
             unwrap_block(block_func).__name__]
    src = inspect.getsourcefile(unwrap_block(block_func))
    if src and not os.path.abspath(src).startswith(_HDL_DIR + os.sep):
        with open(src, "rb") as fh:          # a block defined outside hdl/ (a test-only variant)
            parts.append(hashlib.sha256(fh.read()).hexdigest())
    for name, v in bound.arguments.items():
        parts.append(f"{name}={_port_descr(v) if is_signal(v) else repr(v)}")
    fault = fault_of(block_func)
    if fault is not None:                     # a test-only fault: the edits it makes at these arguments
        parts.append(f"fault={fault.name} {fault.edits_for(bound.arguments)!r}")
    return hashlib.sha256("\n".join(map(str, parts)).encode()).hexdigest()[:16]


_VCD_HOOK = """
initial begin : prism_waves
    reg [8*1024-1:0] prism_vcd_file;
    if ($value$plusargs("vcd=%s", prism_vcd_file)) begin
        $dumpfile(prism_vcd_file);
        $dumpvars(0, {tb});
    end
end
"""


def icarus_source(folder, name):
    """The design as Icarus compiles it: `<name>.v` with wide concatenations as processes
    (cosim/sim/verilog_post.py); `<name>.v` itself is what Verilator and other tools read."""
    return os.path.join(folder, f"{name}_icarus.v")


_rewrite = True


@contextlib.contextmanager
def raw_verilog():
    """Within this context, designs are built from MyHDL's output as written, without the
    rewrite passes of cosim/sim/verilog_post.py (in their own build folders).  For checking that the
    passes change no behaviour; use Icarus -g2005 (the time-0 wake is one of the passes)."""
    global _rewrite
    old, _rewrite = _rewrite, False
    try:
        yield
    finally:
        _rewrite = old


def _rewritten_build(block_func, args, kwargs):
    """The folder of build(...) with the rewrite passes on, also inside `raw_verilog()`."""
    global _rewrite
    old, _rewrite = _rewrite, True
    try:
        return build(block_func, *args, **kwargs)[0]
    finally:
        _rewrite = old


def rewriting():
    """False inside `raw_verilog()`."""
    return _rewrite


_external = ()


@contextlib.contextmanager
def external_modules(paths):
    """Within this context, designs are built with the modules of these Verilog files available:
    a block whose Verilog instantiates a module converted on its own (MyHDL user code, e.g. the
    node inside a wired tree) is compiled against them, in a build folder of its own."""
    global _external
    old, _external = _external, tuple(os.path.abspath(p) for p in paths)
    try:
        yield
    finally:
        _external = old


def _changed_lines(before, after):
    """How many lines one rewrite pass added or removed (0: it did not fire)."""
    if before == after:
        return 0
    a, b = collections.Counter(before.split("\n")), collections.Counter(after.split("\n"))
    return sum((a - b).values()) + sum((b - a).values())


def rewrite_passes(folder, name):
    """{pass name: lines changed} recorded when the design in `folder` was built."""
    with open(os.path.join(folder, f"{name}.passes.json")) as fh:
        return json.load(fh)


def build(block_func, *args, **kwargs):
    """Convert and compile the block for these arguments; return (folder, module name, bound args).
    The folder keeps MyHDL's output as written (`<name>.raw.v`; with a fault's edits for a faulted
    block), the rewritten design (`<name>.v`, what Verilator and other tools read), Icarus' form of
    it and the lines each pass changed."""
    bound = bind_arguments(block_func, args, kwargs)
    name = unwrap_block(block_func).__name__
    fault = fault_of(block_func)
    folder = os.path.join(build_root(), "cosim", f"{name}-{design_key(block_func, bound)}"
                          + (f"-fault-{fault.name}" if fault else "") + ("" if _rewrite else "-raw")
                          + (f"-ext{hashlib.sha256(repr(_external).encode()).hexdigest()[:12]}" if _external else ""))
    vvp = os.path.join(folder, f"{name}.vvp")
    if os.path.exists(vvp):
        return folder, name, bound
    require_tool("iverilog")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel workers may ask for the same design
        if os.path.exists(vvp):
            return folder, name, bound
        design_v = os.path.join(folder, f"{name}.v")
        tb = os.path.join(folder, f"tb_{name}.v")
        if not _rewrite:
            # MyHDL's output as written is kept beside the rewritten design (`<name>.raw.v`):
            # the same conversion, made once
            converted = _rewritten_build(block_func, args, kwargs)
            shutil.copyfile(os.path.join(converted, f"{name}.raw.v"), design_v)
            shutil.copyfile(os.path.join(converted, f"tb_{name}.v"), tb)
        elif fault is not None:
            # a test-only fault edits MyHDL's output of the correct design (converted once, in its
            # own folder), so every pass and every back end sees the faulted text
            converted = _rewritten_build(correct_block(block_func), args, kwargs)
            with open(os.path.join(converted, f"{name}.raw.v")) as fh:
                text = fault.apply(fh.read(), bound.arguments)
            with open(design_v, "w") as fh:
                fh.write(text)
            shutil.copyfile(os.path.join(converted, f"tb_{name}.v"), tb)
        else:
            fresh = [_fresh_argument(v) for v in bound.args]
            fresh_kw = {k: _fresh_argument(v) for k, v in bound.kwargs.items()}
            fresh_block_names()  # names depend on the design alone, not on what was elaborated before
            forget_unused_memories()  # earlier designs' memories no longer pin them (cosim/sim/myhdl_registries.py)
            inst = block_func(*fresh, **fresh_kw)
            with warnings.catch_warnings():
                # unread / undriven internal signals are routine in composed blocks
                warnings.simplefilter("ignore", myhdl.ToVerilogWarning)
                inst.convert(hdl="Verilog", path=folder, name=name, initial_values=True, testbench=True)
            del inst
            release_dropped_designs()  # later simulations in this process walk every live signal
            with open(tb) as fh:
                text = fh.read()
            head, _, _ = text.rpartition("endmodule")
            with open(tb, "w") as fh:
                fh.write(head + _VCD_HOOK.format(tb=f"tb_{name}") + "\nendmodule\n")
        with open(design_v) as fh:
            raw = fh.read()
        with open(os.path.join(folder, f"{name}.raw.v"), "w") as fh:
            fh.write(raw)
        passes = {}

        def apply(pass_name, func, text, *extra):
            out = func(text, *extra)
            out = out[0] if isinstance(out, tuple) else out
            passes[pass_name] = _changed_lines(text, out)
            return out
        outputs = {k: int(v._init) for k, v in bound.arguments.items() if is_signal(v)}

        def rewrite(text, share):
            # Icarus forks into every named block (up to 3x slower) and resolves a wire with several
            # part drivers bit by bit: hoist the locals, join each ConcatSignal's parts (both simulators).
            # The Icarus build shares the processes' variables (its compile time is quadratic in the
            # names of one scope; cosim/sim/verilog_post.py has the figures).
            text = apply("share_process_variables" if share else "hoist_block_locals",
                         lambda t: hoist_block_locals(t, share=share), text)
            text = apply("coalesce_part_assigns", coalesce_part_assigns, text)
            # a Verilog function's final `disable` (MyHDL's return) is a no-op Yosys cannot parse
            text = apply("function_returns", function_returns, text)
            # combinational processes run once at power-on in every simulator and language mode
            text = apply("wake_at_time0", wake_at_time0, text)
            # registered outputs power up at their initial value, like every internal register
            return apply("initialise_output_regs", initialise_output_regs, text, outputs)
        text = rewrite(raw, share=False) if _rewrite else raw
        with open(design_v, "w") as fh:
            fh.write(text)
        icarus_text = text
        if _rewrite:
            # wide concatenations copied by words, not bits; one process per clock edge (Icarus only)
            icarus_text = apply("procedural_concats", procedural_concats, rewrite(raw, share=True))
            icarus_text = apply("merge_clocked_processes", merge_clocked_processes, icarus_text)
        with open(icarus_source(folder, name), "w") as fh:
            fh.write(icarus_text)
        with open(os.path.join(folder, f"{name}.passes.json"), "w") as fh:
            json.dump(passes, fh, indent=1)
        r = subprocess.run(["iverilog", "-o", vvp + ".tmp", "-s", f"tb_{name}", os.path.basename(icarus_source(folder, name)),
                            f"tb_{name}.v", *_external],
                           cwd=folder, capture_output=True, text=True)
        if r.returncode != 0:
            raise ToolchainError(f"iverilog could not compile {folder}/{name}.v:\n{r.stderr.strip()}")
        os.replace(vvp + ".tmp", vvp)
    return folder, name, bound
