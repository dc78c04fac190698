"""FPGA synthesis of the node's phase blocks with yosys: LUTs, flip-flops, block RAMs, DSPs, logic depth.

`prism synth [BLOCK] [--width 280|320] [--target xilinx|generic]` (cosim/cli/synth.py).

How the figures are made
------------------------
* The node is elaborated once (MyHDL, no simulation) with every phase block's
  function wrapped, so each phase block is captured with the very signals and
  parameters the node gives it (`capture_phase_blocks`).  Each captured block
  is converted alone by the co-simulation tool chain (`cosim.sim.toolchain.build`,
  cached build folders) and synthesised alone.
* Blocks the node instantiates many times (64 Kulisch lanes, 16 FP32 banks, ...)
  are synthesised once and counted that many times; the node's figure is the
  sum over its blocks.  The whole node in one yosys run takes too long for a
  test run (hundreds of 320-bit adders and 256 FP32 adders), so it is not
  synthesised in one piece.  The node's own glue (a few multiplexers and one
  4-bit counter) is the row `prism_node`: the node synthesised with every phase
  block a black box, which also gives the paths that cross from block to
  block (below).  The composite
  blocks (`prism_kulisch_store`, `prism_arrival_banks`, `prism_readout`) are
  synthesised with their repeated sub-blocks replaced by black boxes, which
  gives their own logic; the sub-blocks are rows of their own.
* yosys (`synth_xilinx -family xcup`, UltraScale+) maps memories with its
  memory library: a memory becomes RAMB36E2/RAMB18E2 only if every read port is
  registered and it has at most two ports.  The mapping of every memory is
  read from yosys' log (`memory_libmap`) and reported; `--target generic` runs
  `synth` (no RAM library, every memory bit a flip-flop) for comparison.
* Logic depth: the longest register-to-register (or port) path of the mapped
  netlist, counted in LUT levels (LUT1..LUT6, MUXF7/8/9 count as part of the
  LUT level before them; each CARRY4 of a carry chain counts as a quarter of a
  level, the way a carry chain of 16 bits costs about one LUT delay).  Computed from yosys'
  JSON netlist per end point, so the deepest path into each register (each
  pipeline stage) is known.  A composite's black boxes are timed the way a
  macro's timing model times it: each sub-block, synthesised alone, states its
  paths as seen from its ports (`port_paths`: input port -> output port,
  registers -> output port, input port -> registers, in levels), and the
  composite's paths run through each box along those paths only, their levels
  added, ending inside the box where an input reaches only its registers.

Every yosys run is `nice`d, one at a time (a lock file), and its wall time and
peak memory are recorded beside its figures (in the block's build folder:
`synth_<target>.json`, reused while the converted design is unchanged), with the
passes yosys spent most time in (`yosys -d` ends the log with the time of every pass).
"""
import contextlib
import fcntl
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

from cosim.sim.vpi import ToolchainError, require_tool
from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY

TARGETS = ("xilinx", "generic")

# U280 capacity: the XCU280 is the Virtex UltraScale+ HBM XCVU37P: 162,960 CLBs of 8 LUTs and 16
# flip-flops, 2,016 36 Kb block RAMs, 960 UltraRAMs, 9,024 DSP48E2 (AMD's Virtex UltraScale+ product table).
U280 = {"LUT": 1_303_680, "FF": 2_607_360, "RAMB36": 2_016, "URAM": 960, "DSP": 9_024}
# Seed 003's own FPGA figures for the result store.
SEED_RESULT_STORE_BYTES = 16 * 1024
SEED_RESULT_STORE_RAMB36 = 8

# Phase blocks: (module, function) captured from the node, in phase order, and how many the node holds.
PHASE_BLOCKS = (
    ("prism_ingress", "phase 1: classification, frame banks"),
    ("prism_control", "phases 1-2: CONTROL, validation, admission"),
    ("prism_counters", "counters"),
    ("prism_reader", "phase 3: NumberGroup reader"),
    ("prism_kulisch_store", "phase 4: KULISCH_FIXED store (own logic)"),
    ("prism_kulisch_route", "phase 4: Kulisch sub-store routing"),
    ("prism_exact_operand", "phase 4: EXACT partial to a Kulisch word"),
    ("prism_kulisch_bank", "phase 4: Kulisch lane (2 port RAMs + merge)"),
    ("prism_arrival_banks", "phase 4: FP32_ARRIVAL admission (own logic)"),
    ("number_decoder", "phase 4: FP32_ARRIVAL decoder (lanes 0-15)"),
    ("half_decoder", "phase 4: FP32_ARRIVAL INT8/FP16/BF16 decoder (lanes 16-31)"),
    ("int8_decoder", "phase 4: FP32_ARRIVAL INT8 decoder (lanes 32-63)"),
    ("prism_fp32_bank", "phase 4: FP32 bank (16 lanes)"),
    ("prism_completion", "phase 5: completion counts"),
    ("prism_readout", "phase 5: read-out (own logic)"),
    ("prism_round16", "phase 5: 16-lane rounder"),
    ("auto_classifier", "phase 5: AUTO classifier"),
    ("prism_result_sender", "phase 6: result sender, result + exact stores"),
    ("prism_egress", "phase 7: egress"),
    ("prism_node", "the node's glue; paths across blocks (every block a timed black box)"),
)
# sub-blocks replaced by black boxes when their parent composite is synthesised
_BLACKBOXED = {"prism_kulisch_store": ("prism_kulisch_route", "prism_exact_operand", "prism_kulisch_bank"),
               "prism_arrival_banks": ("number_decoder", "half_decoder", "int8_decoder", "prism_fp32_bank"),
               "prism_readout": ("prism_round16", "auto_classifier")}
# the node itself, with every phase block a black box timed by its declared paths: the paths that
# cross from block to block (through the node's own glue), which no block's figures hold
NODE_TOP = "prism_node"
_TOP_BLOCKS = ("prism_ingress", "prism_control", "prism_counters", "prism_reader", "prism_kulisch_store",
               "prism_arrival_banks", "prism_completion", "prism_readout", "prism_result_sender", "prism_egress")
_BLACKBOXED[NODE_TOP] = _TOP_BLOCKS
COMPOSITES = tuple(_BLACKBOXED)     # blocks synthesised with their sub-blocks as black boxes
_SUB_BLOCKS = frozenset(s for subs in _BLACKBOXED.values() for s in subs)
_PARENT_MODULE = {"prism_ingress": "prism_node", "prism_control": "prism_node", "prism_counters": "prism_node",
                  "prism_reader": "prism_node", "prism_kulisch_store": "prism_node",
                  "prism_arrival_banks": "prism_node", "prism_completion": "prism_node",
                  "prism_readout": "prism_node", "prism_result_sender": "prism_node", "prism_egress": "prism_node",
                  "prism_kulisch_route": "prism_kulisch_store", "prism_kulisch_bank": "prism_kulisch_store",
                  "prism_exact_operand": "prism_kulisch_store",
                  "number_decoder": "prism_arrival_banks", "half_decoder": "prism_arrival_banks",
                  "int8_decoder": "prism_arrival_banks",
                  "prism_fp32_bank": "prism_arrival_banks",
                  "prism_round16": "prism_readout", "auto_classifier": "prism_readout"}


class SynthError(ToolchainError):
    """yosys failed or a block is unknown."""


# ---------------------------------------------------------------------------
# capture: the phase blocks as the node instantiates them
# ---------------------------------------------------------------------------
def _node_ports():
    from myhdl import ResetSignal, Signal, intbv

    from hdl.common.interface import AxiStream

    def b():
        return Signal(bool(0))

    def u(w):
        return Signal(intbv(0)[w:])
    # clk, rst, s_axis_0, s_axis_1, m_axis_0, m_axis_1, counter_select, counter_value, busy
    return [b(), ResetSignal(0, active=1, isasync=False), *(AxiStream(512) for _ in range(4)), u(6), u(32), b()]


def capture_phase_blocks(width=KULISCH_WIDTH_DEFAULT, capacity=MAX_CAPACITY):
    """{block name: (block function, args, kwargs, instances, first instance)} from one elaboration of the node:
    its instance tree is walked and each block's first instance is kept (every instance of a block
    has the same parameters and port widths)."""
    from hdl.node.prism_node import prism_node

    from cosim.sim.myhdl_sources import fresh_block_names
    fresh_block_names()
    ports, params = tuple(_node_ports()), {"KULISCH_W": width, "CAPACITY": capacity}
    top = prism_node(*ports, **params)
    captured = {NODE_TOP: [_decorated(prism_node), ports, params, 1, top]}

    def walk(inst):
        for sub in getattr(inst, "subs", ()):
            func = getattr(sub, "func", None)
            if func is None or not hasattr(sub, "args"):
                continue            # a process, not a block
            name = func.__name__
            if name in _PARENT_MODULE:
                args, kwargs = _ports_first(func, sub.args, sub.kwargs)
                entry = captured.setdefault(name, [_decorated(func), args, kwargs, 0, sub])
                entry[3] += 1
            walk(sub)
    walk(top)
    return {k: tuple(v) for k, v in captured.items()}


def _ports_first(func, args, kwargs):
    """(ports, parameters): a block's arguments as the node gives them (by keyword or by position),
    its ports (signals and buses: the arguments without a default) positionally in signature order,
    its parameters by keyword."""
    import inspect
    sig = inspect.signature(getattr(func, "func", func))
    bound = sig.bind(*args, **kwargs)
    ports, params = [], {}
    for name, p in sig.parameters.items():
        if name in bound.arguments:
            if p.default is inspect.Parameter.empty:
                ports.append(bound.arguments[name])
            else:
                params[name] = bound.arguments[name]
    return tuple(ports), params


def _decorated(func):
    import importlib
    return getattr(importlib.import_module(func.__module__), func.__name__)


def _driven_signals(inst):
    """ids of the signals the processes under a block instance drive."""
    out = set()
    todo = [inst]
    while todo:
        x = todo.pop()
        subs = getattr(x, "subs", None)
        if subs is not None:
            todo.extend(subs)
            continue
        for n in getattr(x, "outputs", ()):
            obj = x.symdict.get(n) if hasattr(x, "symdict") else None
            if obj is not None:
                out.add(id(obj))
    return out


def _first_instance(top, name):
    todo = [top]
    while todo:
        x = todo.pop(0)
        for sub in getattr(x, "subs", ()):
            if getattr(getattr(sub, "func", None), "__name__", None) == name and hasattr(sub, "args"):
                return sub
            todo.append(sub)
    return None


_STUB_COUNTER = [0]


def _make_stub(name, sub_inst):
    """A MyHDL block with `name`'s signature whose Verilog is an instance of module `<name>_blackbox`;
    returns (stub block, Verilog declaration of the black-box module)."""
    import inspect

    from myhdl import always, block
    from myhdl._Signal import _Signal
    plain = sub_inst.func
    params = inspect.signature(plain).parameters
    bound = inspect.signature(plain).bind(*sub_inst.args, **sub_inst.kwargs)
    bound.apply_defaults()
    driven = _driven_signals(sub_inst)
    ports, decl, unpack = [], [], []
    for pname, v in bound.arguments.items():
        # a bus (an interface: an object holding signals) is one port per field, `<bus>_<field>`,
        # as MyHDL names them
        fields = [(pname, v)] if isinstance(v, _Signal) else \
            [(f"{pname}_{f}", s) for f, s in vars(v).items() if isinstance(s, _Signal)] if hasattr(v, "__dict__") else []
        for port, sig in fields:
            if port != pname:
                unpack.append(f"    {port} = {pname}.{port[len(pname) + 1:]}\n")
            w = len(sig) if len(sig) else 1
            out = id(sig) in driven
            ports.append((port, out))
            decl.append(f"    {'output' if out else 'input'} [{w - 1}:0] {port}")
    sig_text = ", ".join(str(p) for p in params.values())
    outs = [p for p, o in ports if o]
    ins = [p for p, o in ports if not o]
    src = (f"def {name}({sig_text}):\n"
           f"    inst_id = _next_id()\n"
           + "".join(unpack)
           + "".join(f"    {p}.driven = 'wire'\n" for p in outs)
           + "".join(f"    {p}.read = True\n" for p in ins)
           + f"    @_always({ins[0]}.posedge)\n"
           f"    def never():\n"
           f"        pass\n"
           f"    return never\n")

    def next_id():
        _STUB_COUNTER[0] += 1
        return _STUB_COUNTER[0]
    import importlib.util

    from cosim.sim.toolchain import build_root
    stub_dir = os.path.join(build_root(), "synth-blackboxed", "stubs")
    os.makedirs(stub_dir, exist_ok=True)
    path = os.path.join(stub_dir, f"{name}_blackbox_stub.py")     # MyHDL reads a block's source file
    with open(path + ".tmp", "w") as fh:
        fh.write(src)
    os.replace(path + ".tmp", path)
    spec = importlib.util.spec_from_file_location(f"_prism_blackbox_{name}", path)
    module = importlib.util.module_from_spec(spec)
    module._next_id, module._always = next_id, always
    spec.loader.exec_module(module)
    stub = block(getattr(module, name))
    stub.verilog_code = (f"{name}_blackbox bb_{name}_$inst_id (\n"
                         + ",\n".join(f"    .{p}(${p})" for p, _ in ports) + "\n);\n")
    declaration = (f"(* blackbox *)\nmodule {name}_blackbox (\n" + ",\n".join(decl) + "\n);\nendmodule\n")
    return stub, declaration


@contextlib.contextmanager
def _blackboxes(parent, parent_inst):
    """While the parent composite is elaborated and converted, its repeated sub-blocks are MyHDL
    user-defined Verilog: instances of empty modules that yosys keeps as black boxes.  Yields the
    black-box declarations (Verilog text) to read before the design."""
    from cosim.sim.toolchain import block_module
    mod = block_module(parent)
    saved, decls = [], []
    for sub in _BLACKBOXED.get(parent, ()):
        stub, decl = _make_stub(sub, _first_instance(parent_inst, sub))
        saved.append((sub, getattr(mod, sub)))
        setattr(mod, sub, stub)
        decls.append(decl)
    old_env = os.environ.get("PRISM_BUILD_DIR")
    from cosim.sim.toolchain import build_root
    os.environ["PRISM_BUILD_DIR"] = os.path.join(build_root(), "synth-blackboxed")
    try:
        yield "\n".join(decls)
    finally:
        for sub, orig in saved:
            setattr(mod, sub, orig)
        if old_env is None:
            del os.environ["PRISM_BUILD_DIR"]
        else:
            os.environ["PRISM_BUILD_DIR"] = old_env


# ---------------------------------------------------------------------------
# yosys
# ---------------------------------------------------------------------------
YOSYS_TIMEOUT_S = int(os.environ.get("PRISM_SYNTH_TIMEOUT", "1800"))
YOSYS_MEMORY_MIB = int(os.environ.get("PRISM_SYNTH_MEMORY_MIB", "8192"))


def _nice():
    """yosys runs at niceness 10 (not more when the caller is niced already)."""
    step = 10 - os.nice(0)
    return ["nice", "-n", str(step)] if step > 0 else []


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (YOSYS_MEMORY_MIB << 20, YOSYS_MEMORY_MIB << 20))


def _run_yosys_group(cmd, folder):
    """Run yosys in its own process group; on the time limit the whole group is killed, since
    yosys' abc runs as a child process that would otherwise outlive it and keep a core busy."""
    import signal
    p = subprocess.Popen(cmd, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=_limit_memory, start_new_session=True)
    try:
        out, err = p.communicate(timeout=YOSYS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def _lock_path():
    from cosim.sim.toolchain import build_root
    os.makedirs(os.path.join(build_root(), "synth"), exist_ok=True)
    return os.path.join(build_root(), "synth", ".yosys.lock")


# synth_xilinx's "coarse" step without `share` (yosys' SAT-based resource sharing): on the result
# sender it did not finish (docs/perf.md, "Tool-chain settings, measured"); nothing here shares
# well anyway
_COARSE_NO_SHARE = ("techmap -map +/cmp2lut.v -map +/cmp2lcu.v -D LUT_WIDTH=6; alumacc; opt; memory -nomap; "
                    "opt_clean")


# Blocks whose LUT mapping uses `abc -fast` (no &fraig, dc2, dch, mfs2 before and after `if`): on
# prism_control (a 2,048-bit duplicate map cut by shifted range masks) the default abc script did
# not finish (docs/perf.md).  Its LUT count is then a somewhat larger figure than the default
# script would give (see docs/hdl_sizes.md for the measured cost).
ABC_FAST = ("prism_control",)
# synth_xilinx's map_luts step for UltraScale+ (yosys 0.23, `help synth_xilinx`) with `abc -fast`
_MAP_LUTS_FAST = ["opt_expr -mux_undef -noclkinv", "abc -fast -luts 2:2,3,6:5,10,20", "clean",
                  "techmap -map +/xilinx/ff_map.v", "xilinx_srl -fixed -minlen 3",
                  "techmap -map +/xilinx/lut_map.v -map +/xilinx/cells_map.v -D LUT_WIDTH=6",
                  "xilinx_dffopt", "opt_lut_ins -tech xilinx"]


def flow(name, target="xilinx"):
    """How a block's LUTs are mapped: 'abc -fast' or 'default'."""
    return "abc -fast" if target == "xilinx" and name in ABC_FAST else "default"


def _synth_steps(name, target, stop=None):
    """yosys commands up to memory mapping (the memories are listed there), then from it to `stop`."""
    if target == "xilinx":
        base = f"synth_xilinx -family xcup -top {name} -flatten -noiopad"
        head = [f"{base} -run :coarse", _COARSE_NO_SHARE]
        if flow(name) == "abc -fast" and stop is None:
            tail = [f"{base} -run map_memory:map_luts", *_MAP_LUTS_FAST, f"{base} -run finalize:"]
        else:
            tail = [f"{base} -run map_memory:{stop or ''}"]
    else:
        base = f"synth -top {name} -flatten -noshare"
        head = [f"{base} -run :fine"]
        tail = [f"{base} -run fine:{stop or ''}"]
    return head, tail


def _yosys_script(folder, name, target):
    head, tail = _synth_steps(name, target)
    return "\n".join([
        "read_verilog -lib blackboxes.v" if os.path.exists(os.path.join(folder, "blackboxes.v")) else "",
        f"read_verilog {name}.v",
        *head,
        # the memories yosys inferred, with their ports, before they are mapped
        "tee -q -o synth_memories.txt dump t:$mem_v2",
        *tail,
        "" if target == "xilinx" else "abc -lut 6; opt_clean",
        "tee -q -o synth_stat.txt stat",
        "write_json synth_netlist.json",
    ]) + "\n"


def run_yosys(folder, name, target):
    """Run yosys (niced, alone) in the build folder; returns (log text, seconds, peak MiB)."""
    require_tool("yosys")
    script = os.path.join(folder, f"synth_{target}.ys")
    with open(script, "w") as fh:
        fh.write(_yosys_script(folder, name, target))
    log = os.path.join(folder, f"synth_{target}.log")
    with open(_lock_path(), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)    # never two yosys runs at once
        t0 = time.monotonic()
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        try:
            # -d: yosys ends its log with the time each pass took (kept in the figures: `profile`)
            r = _run_yosys_group([*_nice(), "yosys", "-q", "-d", "-l", log, "-s", script], folder)
        except subprocess.TimeoutExpired:
            raise SynthError(f"yosys took longer than {YOSYS_TIMEOUT_S} s on {name} (PRISM_SYNTH_TIMEOUT)")
        seconds = time.monotonic() - t0
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if r.returncode != 0:
        raise SynthError(f"yosys failed on {folder}/{name}.v: {(r.stderr or r.stdout).strip()[-500:]}")
    with open(log) as fh:
        text = fh.read()
    # ru_maxrss of children is the largest child so far: exact when this run is the largest
    return text, seconds, max(peak, before) / 1024.0


# ---------------------------------------------------------------------------
# reading yosys' output
# ---------------------------------------------------------------------------
def parse_stat(text):
    """{cell type: count} of the top module in yosys `stat` output."""
    types, seen = {}, False
    for line in text.splitlines():
        if re.match(r"\s*Number of cells:", line):
            types, seen = {}, True
            continue
        m = re.match(r"\s+(\S+)\s+(\d+)\s*$", line)
        if m and seen:
            types[m.group(1)] = int(m.group(2))
    if not seen:
        raise SynthError("no 'Number of cells' line in yosys' statistics")
    return types


def parse_memories(dump_text):
    """The memories yosys inferred (before mapping), from `dump t:$mem_v2`: [{name, width, depth,
    bits, read_ports, write_ports, sync_read}]; sync_read: every read port is registered."""
    mems = []
    cur = None
    for line in dump_text.splitlines():
        line = line.strip()
        m = re.match(r"cell \$mem_v2 (\S+)", line)
        if m:
            cur = {"cell": m.group(1), "params": {}}
            mems.append(cur)
            continue
        m = re.match(r"parameter \\(\w+) (.*)$", line)
        if m and cur is not None:
            key, val = m.group(1), m.group(2)
            if key == "INIT":
                continue
            if key == "MEMID":
                cur["params"][key] = val.strip('"').lstrip("\\")
            else:
                mv = re.match(r"(\d+)'([01xz]+)$", val)
                cur["params"][key] = int(mv.group(2).replace("x", "0").replace("z", "0"), 2) if mv else \
                    int(val) if re.fullmatch(r"-?\d+", val) else val
    out = []
    for mem in mems:
        p = mem["params"]
        rd = int(p.get("RD_PORTS", 0))
        rd_clk = int(p.get("RD_CLK_ENABLE", 0))
        out.append({"name": p.get("MEMID", mem["cell"]), "width": int(p["WIDTH"]), "depth": int(p["SIZE"]),
                    "bits": int(p["WIDTH"]) * int(p["SIZE"]), "read_ports": rd,
                    "write_ports": int(p.get("WR_PORTS", 0)),
                    "sync_read": rd > 0 and rd_clk == (1 << rd) - 1})
    return out


def parse_memory_mapping(log_text):
    """{memory name: yosys mapping} from memory_libmap's log ('block RAM', 'LUT RAM'); memories it
    does not name are converted to flip-flops and logic."""
    out = {}
    for m in re.finditer(r"mapping memory (\S+) via (\S+)", log_text):
        name = m.group(1).split(".", 1)[-1]
        cell = m.group(2)
        out[name] = "block RAM" if "BLOCKRAM" in cell else "UltraRAM" if "HUGERAM" in cell else \
            "LUT RAM" if "LUTRAM" in cell else cell
    return out


def parse_profile(log_text, top=6):
    """The passes yosys spent most time in, from the summary `yosys -d` ends its log with:
    [(pass, seconds)], longest first.  abc's time is the wall time of its sub-process."""
    tail = log_text.rsplit("Time spent:", 1)
    if len(tail) < 2:
        return []
    out = [(m.group(2), float(m.group(1)))
           for m in re.finditer(r"^\s*\d+%\s+\d+ calls?\s+([\d.]+) sec (\S+)", tail[1], re.M)]
    return sorted(out, key=lambda p: -p[1])[:top]


_SEQ = re.compile(r"^(FD[CPRS]E|LD[CP]E|RAMB\d+E\d|URAM288|DSP48E\d|SRLC?\d+E|\$_(S?DFF|DFFE|SDFFC?E|ALDFF|DFFSR|DLATCH)\w*_|"
                  r"\$_SR_\w+_|BUFG\w*)$")
_LUTRAM = re.compile(r"^RAM\d+(M\d*|X1[SD]|S\d*)$")
_OUT_PORTS = {"O", "O5", "O6", "CO", "Q", "Y", "P", "PCOUT", "ACOUT", "BCOUT", "CARRYCASCOUT", "MULTSIGNOUT",
              "DOA", "DOB", "DOC", "DOD", "DOE", "DOF", "DOG", "DOH", "SPO", "DPO"}


def _weight(ctype):
    """LUT levels a combinational cell adds to a path."""
    if re.match(r"^(LUT\d|\$lut|RAM\d+[MX]\w*|RAM\d+X1[SD]|RAM\d+M\d*)$", ctype):
        return 1.0
    if ctype.startswith("CARRY"):
        return 0.25         # a CARRY4 carries 4 bits, about a quarter of a LUT level
    return 0.0              # MUXF7/8/9 (part of a wide LUT), INV, buffers


class _Node:
    """A combinational node of the depth graph: a mapped cell, or one output port of a black box.
    `in_w`: levels an input bit adds before the node (a black box's path from that input); `base`:
    the levels of a path that starts inside the node (a black box's registers, a LUT RAM's contents)."""
    __slots__ = ("ctype", "ins", "outs", "weight", "in_w", "base", "label")

    def __init__(self, ctype, ins, outs, weight, in_w=None, base=None, label=""):
        self.ctype, self.ins, self.outs, self.weight = ctype, ins, outs, weight
        self.in_w, self.base, self.label = in_w, base, label


def _levels(d):
    """(LUTs, CARRY4s) of a depth in levels (a black box's path reports only its length)."""
    luts = int(d)
    return luts, round((d - luts) / 0.25)


class _DepthGraph:
    """The mapped netlist of one module as a graph of combinational nodes between start points
    (register outputs, input ports, a black box's or LUT RAM's inside) and end points (register
    inputs, output ports, a LUT RAM's write, a black box's registers)."""

    def __init__(self, netlist_json, top, boxes=None):
        with open(netlist_json) as fh:
            mod = json.load(fh)["modules"][top]
        names = {}
        for nname, nd in mod["netnames"].items():
            hidden = nd.get("hide_name", 0)
            for i, b in enumerate(nd["bits"]):
                if isinstance(b, int) and (b not in names or (not hidden and names[b][2])):
                    names[b] = (nname, i, hidden)
        self.names = names
        self.nodes, self.driver, self.ends = {}, {}, []      # ends: (name, bits, kind, levels added)
        self.ports = {p: (d["direction"], [b for b in d["bits"] if isinstance(b, int)])
                      for p, d in mod.get("ports", {}).items()}
        boxes = boxes or {}
        for cname, c in mod["cells"].items():
            ctype = c["type"]
            dirs = c.get("port_directions", {})

            def direction(port):
                return dirs.get(port, "output" if port in _OUT_PORTS else "input")
            conns = {p: [b for b in bits if isinstance(b, int)] for p, bits in c["connections"].items()}
            ins = [b for p, bits in conns.items() if direction(p) != "output" for b in bits]
            outs = [b for p, bits in conns.items() if direction(p) == "output" for b in bits]
            if ctype in boxes:
                self._add_box(cname, ctype, conns, direction, boxes[ctype])
            elif _LUTRAM.match(ctype):
                # LUT RAM: the read is combinational from the address; data and write enable are captured at
                # the clock edge (an end point, like a register's D)
                addr = [b for p, bits in conns.items() if direction(p) != "output"
                        and re.match(r"^(ADDR|A\d|DPRA)", p) for b in bits]
                capt = [b for p, bits in conns.items() if direction(p) != "output"
                        and not re.match(r"^(ADDR|A\d|DPRA)", p) for b in bits]
                self.ends.append((cname.split(".", 1)[0].lstrip("\\") + " (LUT RAM write)", capt, ctype, 0.0))
                self._add(cname, _Node(ctype, addr, outs, _weight(ctype), base=0.0, label=""))
            elif _SEQ.match(ctype):
                q = next((bits[0] for p, bits in conns.items() if direction(p) == "output" and bits), None)
                self.ends.append((self.bitname(q) if q is not None else cname, ins, ctype, 0.0))
            else:
                self._add(cname, _Node(ctype, ins, outs, _weight(ctype)))
        for pname, (direction_, bits) in self.ports.items():
            if direction_ == "output":
                self.ends.append((pname, bits, "port", 0.0))

    def bitname(self, b):
        if not isinstance(b, int):
            return b or ""
        n = self.names.get(b)
        return n[0] if n else f"net{b}"

    def _add(self, cname, node):
        self.nodes[cname] = node
        for b in node.outs:
            self.driver[b] = cname

    def _add_box(self, cname, ctype, conns, direction, paths):
        """A black box with its declared paths (`port_paths` of the sub-block synthesised alone): one node
        per output port, fed by the input ports with a path to it; its inputs' paths into its registers
        are end points."""
        sub = ctype[:-len("_blackbox")] if ctype.endswith("_blackbox") else ctype
        known = set(conns)
        for p in {p for p, _, _ in paths["through"]} | set(paths["from_state"]) | set(paths["to_state"]):
            if p not in known:
                raise SynthError(f"black box {ctype}: its declared paths name port {p!r}, which it does not have")
        for op, bits in conns.items():
            if direction(op) != "output" or not bits:
                continue
            in_w = {}
            for ip, op_, d in paths["through"]:
                if op_ == op:
                    for b in conns[ip]:
                        in_w[b] = max(d, in_w.get(b, d))
            base = paths["from_state"].get(op)
            self._add(f"{cname}/{op}", _Node(ctype, list(in_w), bits, 0.0, in_w=in_w, base=base,
                                            label=f"{sub}.{op} (inside)"))
        for ip, d in paths["to_state"].items():
            self.ends.append((f"{sub}.{ip} (inside)", conns[ip], "box", d))

    def arrivals(self, source=None, inside=True):
        """Arrival (levels, LUTs, CARRY4s, start) of every node's outputs.  `source`: the start bits of
        the paths counted (default: every start point); `inside`: count paths that start inside a node
        (a black box's registers, a LUT RAM's contents)."""
        arrival = {}
        nodes, driver = self.nodes, self.driver

        def start_of(b):
            return (0.0, 0, 0, b) if source is None or b in source else None

        for cname in nodes:
            # depth first, without recursion: a node is expanded once (its unfinished inputs pushed above
            # it) and finished when it is back on top.  The expanded, unfinished nodes are exactly the
            # nodes on the current path, so an input among them closes a combinational loop: that edge
            # alone is cut.  (A node merely waiting on the stack as another's pending input is not on the
            # path: counting it as a loop cut paths through it short.)
            stack, on_path = [cname], set()
            while stack:
                cn = stack[-1]
                if cn in arrival:
                    stack.pop()
                    continue
                node = nodes[cn]
                if cn not in on_path:
                    on_path.add(cn)
                    pending = [driver[b] for b in node.ins if b in driver and driver[b] not in arrival
                               and driver[b] not in on_path]
                    if pending:
                        stack.extend(pending)
                        continue
                best = None
                if inside and node.base is not None:
                    luts, carries = _levels(node.base)
                    best = (node.base, luts, carries, node.label)
                for b in node.ins:
                    if b in driver:
                        a = arrival.get(driver[b])       # (absent: an edge that closes a loop)
                    else:
                        a = start_of(b)
                    if a is None:
                        continue
                    if node.in_w:
                        d = node.in_w[b]
                        luts, carries = _levels(d)
                        a = (a[0] + d, a[1] + luts, a[2] + carries, a[3])
                    if best is None or a[0] > best[0]:
                        best = a
                if best is None and source is None:
                    best = (0.0, 0, 0, node.ins[0] if node.ins else None)      # constants, or a cut loop
                if best is not None:
                    w = node.weight
                    best = (best[0] + w, best[1] + (1 if w == 1.0 else 0), best[2] + (1 if w == 0.25 else 0),
                            best[3])
                arrival[cn] = best
                on_path.discard(cn)
                stack.pop()
        return arrival

    def bit_arrival(self, arrival, b, source=None):
        if b in self.driver:
            return arrival.get(self.driver[b])
        return (0.0, 0, 0, b) if source is None or b in source else None


def logic_depth(netlist_json, top, boxes=None):
    """Longest combinational path of the mapped netlist, per end point (register or output).
    `boxes`: {black-box cell type: its declared paths (`port_paths`)}; a black box without declared
    paths is a zero-delay cell whose every output depends on every input.
    Returns [{end, depth, luts, carries, start}], deepest first, one entry per end signal name."""
    g = _DepthGraph(netlist_json, top, boxes)
    arrival = g.arrivals()
    per_end = {}
    for ename, ins, ctype, extra in g.ends:
        best = (0.0, 0, 0, None)
        for b in ins:
            a = g.bit_arrival(arrival, b)
            if a is not None and a[0] + extra > best[0]:
                luts, carries = _levels(extra)
                best = (a[0] + extra, a[1] + luts, a[2] + carries, a[3])
        if ename not in per_end or best[0] > per_end[ename]["depth"]:
            per_end[ename] = {"end": ename, "depth": best[0], "luts": best[1], "carries": best[2],
                              "start": g.bitname(best[3]) if best[3] is not None else "", "kind": ctype}
    return sorted(per_end.values(), key=lambda e: -e["depth"])


def port_paths(netlist_json, top, boxes=None):
    """A block's combinational paths as seen from its ports, for its parent to time it as a black box:
    {"through": [[input port, output port, levels]], "from_state": {output port: levels from its
    registers}, "to_state": {input port: levels to its registers}}.  `boxes`: its own black boxes'
    declared paths (a composite's registers include those inside its boxes)."""
    g = _DepthGraph(netlist_json, top, boxes)
    outs = {p: bits for p, (d, bits) in g.ports.items() if d == "output"}
    ins = {p: bits for p, (d, bits) in g.ports.items() if d == "input"}

    def deepest(arrival, bits, source):
        ds = [a[0] for a in (g.bit_arrival(arrival, b, source) for b in bits) if a is not None]
        return max(ds) if ds else None
    state_ends = [(bits, extra) for _, bits, kind, extra in g.ends if kind != "port"]
    through, to_state = [], {}
    for ip, bits in sorted(ins.items()):
        source = set(bits)
        arrival = g.arrivals(source=source, inside=False)
        for op, obits in sorted(outs.items()):
            d = deepest(arrival, obits, source)
            if d is not None:
                through.append([ip, op, d])
        ds = [d + extra for ebits, extra in state_ends
              for d in [deepest(arrival, ebits, source)] if d is not None]
        if ds:
            to_state[ip] = max(ds)
    port_bits = {b for bits in ins.values() for b in bits}
    read = [b for n in g.nodes.values() for b in n.ins] + [b for _, bits, _, _ in g.ends for b in bits]
    starts = {b for b in read if b not in g.driver and b not in port_bits}
    arrival = g.arrivals(source=starts, inside=True)
    from_state = {}
    for op, obits in sorted(outs.items()):
        d = deepest(arrival, obits, starts)
        if d is not None:
            from_state[op] = d
    return {"through": through, "from_state": from_state, "to_state": to_state}


# ---------------------------------------------------------------------------
# one block
# ---------------------------------------------------------------------------
RESULT_VERSION = "4"          # 4: depths by logic_depth with only path edges cut
MEMCHECK_VERSION = "3"


def _unwrap_name(block_func):
    return getattr(block_func, "func", block_func).__name__     # bump when the figures' shape changes


# LUTs a LUT-RAM cell occupies (UltraScale+ CLB: RAM64M8 and RAM32M16 take all 8 LUTs of a SLICEM)
_LUTRAM_LUTS = {"RAM32M16": 8, "RAM64M8": 8, "RAM32M": 4, "RAM64M": 4, "RAM32X1D": 2, "RAM64X1D": 2,
                "RAM128X1D": 4, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM256X1D": 8,
                "RAM512X1S": 8}


def lutram_luts(types):
    """LUTs used as memory: LUT RAM cells (by their LUT count) and shift registers (SRL16E/SRLC32E,
    one LUT each: a delay line without reset or enable), as the device's "LUT as Memory" counts them."""
    return (sum(n * _LUTRAM_LUTS.get(t, 1) for t, n in types.items() if re.match(r"^RAM\d+[MX]", t))
            + sum(n for t, n in types.items() if t.startswith("SRL")))


def _resources(types, target):
    lut = sum(n for t, n in types.items() if re.match(r"^LUT\d$", t) or t == "$lut")
    lutram = sum(n for t, n in types.items() if re.match(r"^RAM\d+[MX]", t))
    ff = sum(n for t, n in types.items() if re.match(r"^FD[CPRS]E$", t) or re.match(r"^\$_(S?DFF|DFFE|SDFFC?E|ALDFF|DFFSR)", t))
    srl = sum(n for t, n in types.items() if t.startswith("SRL"))
    return {"LUT": lut, "LUTRAM_cells": lutram, "SRL": srl, "FF": ff,
            "RAMB36": types.get("RAMB36E2", 0), "RAMB18": types.get("RAMB18E2", 0),
            "URAM": types.get("URAM288", 0), "DSP": types.get("DSP48E2", 0),
            "CARRY": sum(n for t, n in types.items() if t.startswith("CARRY"))}


def collect(folder, name, target, log, seconds, peak_mib, boxes=None):
    """The figures of a finished yosys run, from the files it left in the build folder.  `boxes`: the
    declared paths of a composite's black boxes.  A sub-block's figures carry its paths as seen from
    its ports (`port_paths`); a composite keeps its netlist (compressed) so that its depth can be
    counted again when a sub-block's paths change."""
    with open(os.path.join(folder, "synth_stat.txt")) as fh:
        types = parse_stat(fh.read())
    with open(os.path.join(folder, "synth_memories.txt")) as fh:
        memories = parse_memories(fh.read())
    mapping = parse_memory_mapping(log)
    for mem in memories:
        mem["mapped_to"] = mapping.get(mem["name"], "flip-flops")
    netlist = os.path.join(folder, "synth_netlist.json")
    depth = logic_depth(netlist, name, boxes)
    res = {"version": RESULT_VERSION, "block": name, "target": target, "folder": os.path.basename(folder),
           "cell_types": types, "resources": _resources(types, target), "memories": memories,
           "depth": depth[:12], "seconds": round(seconds, 1), "peak_mib": round(peak_mib),
           "profile": [[p, round(t, 1)] for p, t in parse_profile(log)], "flow": flow(name, target)}
    if name in _SUB_BLOCKS:
        res["port_paths"] = port_paths(netlist, name, boxes)
    if name in _BLACKBOXED:
        res["box_paths"] = boxes
        with open(netlist, "rb") as src, gzip.open(netlist + ".gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
    os.remove(netlist)       # large; the figures are kept
    return res


def _box_paths(name, instance, target, cached_only, recorded=None):
    """{black-box cell type: declared paths} of a composite's sub-blocks, each from the sub-block
    synthesised alone (as the node instantiates it), or taken from `recorded` ({sub-block: paths},
    figures recorded earlier) where it holds them."""
    boxes = {}
    for sub in _BLACKBOXED[name]:
        if recorded and sub in recorded:
            boxes[f"{sub}_blackbox"] = recorded[sub]
            continue
        inst = _first_instance(instance, sub)
        args, kwargs = _ports_first(inst.func, inst.args, inst.kwargs)
        fig = synth_block(_decorated(inst.func), args, kwargs, target, instance=inst, cached_only=cached_only,
                          recorded_paths=recorded)
        boxes[f"{sub}_blackbox"] = fig["port_paths"]
    return boxes


def _current(res, name, target):
    return (res.get("version") == RESULT_VERSION and res.get("flow", "default") == flow(name, target)
            and (name not in _SUB_BLOCKS or "port_paths" in res)
            and (name not in _BLACKBOXED or "box_paths" in res))


def synth_block(block_func, args, kwargs, target="xilinx", instance=None, cached_only=False, recorded_paths=None):
    """Convert (cached) and synthesise one block; returns its figures (cached beside the design).
    `instance`: the block's elaborated instance, for a composite whose repeated sub-blocks become
    black boxes (_BLACKBOXED)."""
    from cosim.sim.toolchain import build
    if target not in TARGETS:
        raise SynthError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    name = _unwrap_name(block_func)
    boxes = None
    if name in _BLACKBOXED:
        from cosim.sim.toolchain import bind_arguments, build_root, design_key
        with _blackboxes(name, instance) as decls:
            folder = os.path.join(build_root(), "cosim",
                                  f"{name}-{design_key(block_func, bind_arguments(block_func, args, kwargs))}")
            try:
                build(block_func, *args, **kwargs)
            except ToolchainError:
                # iverilog cannot compile the black boxes' instances; the converted design is what yosys reads
                if not os.path.exists(os.path.join(folder, f"{name}.v")):
                    raise
        with open(os.path.join(folder, "blackboxes.v"), "w") as fh:
            fh.write(decls)
        boxes = _box_paths(name, instance, target, cached_only, recorded_paths)
    else:
        folder, name, _ = build(block_func, *args, **kwargs)
    cached = os.path.join(folder, f"synth_{target}.json")
    if os.path.exists(cached):
        with open(cached) as fh:
            res = json.load(fh)
        if _current(res, name, target):
            if res.get("box_paths", boxes) == boxes:
                return res
            # a sub-block's paths changed: the composite's depth is counted again from its kept netlist
            kept = os.path.join(folder, "synth_netlist.json.gz")
            if os.path.exists(kept):
                with gzip.open(kept) as src, tempfile.NamedTemporaryFile("wb", suffix=".json") as dst:
                    shutil.copyfileobj(src, dst)
                    dst.flush()
                    res["depth"] = logic_depth(dst.name, name, boxes)[:12]
                res["box_paths"] = boxes
                _save(cached, res)
                return res
    if cached_only:
        raise SynthError("no figures: yosys did not finish it in the runs these figures come from")
    log, seconds, peak_mib = run_yosys(folder, name, target)
    res = collect(folder, name, target, log, seconds, peak_mib, boxes)
    _save(cached, res)
    return res


def _save(path, res):
    with open(path + ".tmp", "w") as fh:
        json.dump(res, fh, indent=1)
    os.replace(path + ".tmp", path)


# ---------------------------------------------------------------------------
# the node's report
# ---------------------------------------------------------------------------
def block_names():
    return [b for b, _ in PHASE_BLOCKS]


def synth_node(width=KULISCH_WIDTH_DEFAULT, target="xilinx", blocks=None, progress=None, cached_only=False,
               recorded_paths=None):
    """Synthesise the node's phase blocks: [{block, role, instances, figures}] in phase order.
    `recorded_paths`: {sub-block: declared paths} to time a composite's black boxes by, instead of
    synthesising its sub-blocks (`recorded_port_paths`)."""
    if width not in KULISCH_WIDTH_CHOICES:
        raise SynthError(f"--width {width}: the node is built with 320 or 280")
    names = block_names() if not blocks else list(blocks)
    unknown = [n for n in names if n not in dict(PHASE_BLOCKS)]
    if unknown:
        raise SynthError(f"unknown block {unknown[0]!r}; blocks: {', '.join(block_names())}")
    cap = capture_phase_blocks(width)
    rows = []
    # the quick blocks first, so a slow one (time limit) costs only its own row
    for n in sorted(names, key=lambda b: _SYNTH_ORDER.index(b) if b in _SYNTH_ORDER else len(_SYNTH_ORDER)):
        func, args, kwargs, count, inst = cap[n]
        if progress:
            progress(f"synthesising {n} (W {width}, {target}) ...")
        try:
            fig = synth_block(func, args, kwargs, target, instance=inst, cached_only=cached_only,
                              recorded_paths=recorded_paths)
        except SynthError as e:
            # one block that does not finish (time or memory limit) leaves a row saying so
            if progress:
                progress(f"  {n}: {e}")
            rows.append({"block": n, "role": dict(PHASE_BLOCKS)[n], "instances": count, "error": str(e)[:200]})
            continue
        if progress:
            progress(f"  {n}: {fig['seconds']} s, {fig['peak_mib']} MiB")
        row = {"block": n, "role": dict(PHASE_BLOCKS)[n], "instances": count, "figures": fig}
        if target == "xilinx" and fig["memories"] and n not in _BLACKBOXED:
            # the same block with every memory asked into block RAM (ram_style "block"); the FP32 bank
            # through one of its 16 lanes (the bank's other logic makes yosys slow)
            try:
                if all(m["mapped_to"] == "block RAM" for m in fig["memories"]):
                    mems = fig["memories"]
                    cells = {"RAMB36": fig["resources"]["RAMB36"], "RAMB18": fig["resources"]["RAMB18"]}
                elif n == "prism_fp32_bank":
                    lane = _first_instance(inst, "fp32_arrival_lane")
                    mems = memory_mapping(_decorated(lane.func), *lane.args, ram_style="block",
                                          cached_only=cached_only, **lane.kwargs)
                    lanes = sum(1 for s in inst.subs if getattr(getattr(s, "func", None), "__name__", "")
                                == "fp32_arrival_lane")
                    cells = {k: v * lanes for k, v in memory_mapping.last_cells.items() if k != "failed"}
                else:
                    mems = memory_mapping(func, *args, ram_style="block", cached_only=cached_only, **kwargs)
                    cells = memory_mapping.last_cells
                if cells is not None:
                    row["forced_block"] = {"memories": mems, "cells": cells}
            except SynthError:
                pass
        rows.append(row)
    order = block_names()
    return sorted(rows, key=lambda r: order.index(r["block"]))


_SYNTH_ORDER = ("prism_egress", "prism_counters", "prism_kulisch_route", "prism_exact_operand", "number_decoder",
                "half_decoder", "int8_decoder",
                "auto_classifier",
                "prism_kulisch_bank", "prism_ingress", "prism_fp32_bank", "prism_completion", "prism_reader",
                "prism_round16", "prism_readout", "prism_kulisch_store", "prism_arrival_banks", "prism_control",
                "prism_result_sender", NODE_TOP)
_COLS = ("LUT", "FF", "RAMB36", "RAMB18", "DSP")


def totals(rows):
    t = {c: 0 for c in _COLS + ("LUTRAM_cells", "URAM", "LUTRAM")}
    for r in rows:
        if "figures" in r:
            for c in t:
                t[c] += r["instances"] * r["figures"]["resources"].get(c, 0)
            t["LUTRAM"] += r["instances"] * lutram_luts(r["figures"]["cell_types"])
    return t


def ramb36_equivalent(res):
    return res["RAMB36"] + res["RAMB18"] / 2


def _fmt(n):
    return f"{n:,}"


def resource_table(rows):
    """Resources per block, its deepest path, and the clock and line rate that path allows
    (cosim/reports/timing.py: the delay model); the node's clock is its slowest block's."""
    from cosim.reports.timing import fmax_mhz, port_gbps
    out = ["| block | role | × | LUT | LUT RAM + SRL (LUTs) | FF | RAMB36 | RAMB18 | DSP | deepest path (LUT levels) | "
           "est. Fmax (MHz) | Gb/s per port | yosys s / MiB |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    slowest = None
    for r in rows:
        if "figures" not in r:
            out.append(f"| {r['block']} | {r['role']} | {r['instances']} | not synthesised: {r['error']} | | | | | | | | | |")
            continue
        f = r["figures"]
        res = f["resources"]
        d = f["depth"][0] if f["depth"] else {"depth": 0, "end": ""}
        mhz = fmax_mhz(d["depth"])
        if slowest is None or d["depth"] > slowest[1]:
            slowest = (r["block"], d["depth"])
        out.append(f"| {r['block']} | {r['role']} | {r['instances']} | {_fmt(res['LUT'])} | "
                   f"{_fmt(lutram_luts(f['cell_types']))} | {_fmt(res['FF'])} | "
                   f"{res['RAMB36']} | {res['RAMB18']} | {res['DSP']} | {d['depth']:g} (`{d['end']}`) | "
                   f"{mhz:.0f} | {port_gbps(mhz):.0f} | {f['seconds']:g} / {f['peak_mib']} |")
    t = totals(rows)
    clock = (f"**{fmax_mhz(slowest[1]):.0f}** ({slowest[0]}) | **{port_gbps(fmax_mhz(slowest[1])):.0f}** |"
             if slowest else " | |")
    out.append(f"| **node (sum of blocks × instances)** | | | **{_fmt(t['LUT'])}** | **{_fmt(t['LUTRAM'])}** | "
               f"**{_fmt(t['FF'])}** | "
               f"**{t['RAMB36']}** | **{t['RAMB18']}** | **{t['DSP']}** | | {clock} |")
    return "\n".join(out)


def device_table(by_width):
    """The node's use at each width beside the U280's capacity."""
    head = "| resource | U280 (XCU280) | " + " | ".join(f"node, W = {w}" for w in by_width) + " |"
    out = [head, "|---|---:|" + "---:|" * len(by_width)]
    tots = {w: totals(rows) for w, rows in by_width.items()}
    for label, key in (("LUT (logic)", "LUT"), ("LUT as memory (LUT RAM, SRL)", "LUTRAM"), ("LUT, both", "LUTALL"),
                       ("FF", "FF"), ("RAMB36 (RAMB18 / 2 added)", "RAMB36"), ("URAM", "URAM"),
                       ("DSP", "DSP")):
        cells = []
        for w in by_width:
            v = ramb36_equivalent(tots[w]) if key == "RAMB36" else \
                tots[w]["LUT"] + tots[w]["LUTRAM"] if key == "LUTALL" else tots[w][key]
            cap = U280["LUT"] if key in ("LUTRAM", "LUTALL") else U280[key]
            cells.append(f"{v:,.1f} ({100.0 * v / cap:.1f} %)" if key == "RAMB36"
                         else f"{_fmt(v)} ({100.0 * v / cap:.1f} %)")
        cap = U280["LUT"] if key in ("LUTRAM", "LUTALL") else U280[key]
        out.append(f"| {label} | {_fmt(cap)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def storage_table(rows):
    """Where each storage bit goes: every memory yosys inferred, its shape, ports and mapping."""
    out = ["| block | memory | × | width × depth | bits (all instances) | KiB | read ports (registered) | "
           "write ports | mapped to |",
           "|---|---|---:|---|---:|---:|---|---:|---|"]
    total = 0
    for r in rows:
        for m in r.get("figures", {}).get("memories", []):
            bits = m["bits"] * r["instances"]
            total += bits
            out.append(f"| {r['block']} | `{m['name']}` | {r['instances']} | {m['width']} × {m['depth']} | "
                       f"{_fmt(bits)} | {bits / 8192:.1f} | {m['read_ports']} "
                       f"({'yes' if m['sync_read'] else 'no'}) | {m['write_ports']} | {m['mapped_to']} |")
    out.append(f"| **all** | | | | **{_fmt(total)}** | **{total / 8192:.1f}** | | | |")
    return "\n".join(out)


def forced_table(rows):
    """Every memory asked into block RAM (yosys attribute ram_style = "block"): where it goes, and the
    block RAMs that costs."""
    out = ["| block | × | memories | mapped to, with ram_style = block | RAMB36 | RAMB18 | RAMB36-equivalent, all instances |",
           "|---|---:|---|---|---:|---:|---:|"]
    total = 0.0
    for r in rows:
        fb = r.get("forced_block")
        if not fb:
            continue
        c = fb["cells"]
        eq = r["instances"] * (c["RAMB36"] + c["RAMB18"] / 2)
        total += eq
        names = ", ".join(f"`{m['name']}`" for m in fb["memories"])
        where = ", ".join(sorted({m["mapped_to"] for m in fb["memories"]}))
        out.append(f"| {r['block']} | {r['instances']} | {names} | {where} | {c['RAMB36']} | {c['RAMB18']} | "
                   f"{eq:,.1f} |")
    out.append(f"| **node** | | | | | | **{total:,.1f}** ({100 * total / U280['RAMB36']:.1f} % of the U280) |")
    return "\n".join(out)


def depth_table(rows, per_block=3):
    """The deepest end points (pipeline registers) of each block, in LUT levels."""
    out = ["| block | end point (register or port) | LUT levels | LUTs | CARRY4 | from |",
           "|---|---|---:|---:|---:|---|"]
    for r in rows:
        for d in r.get("figures", {}).get("depth", [])[:per_block]:
            out.append(f"| {r['block']} | `{d['end']}` | {d['depth']:g} | {d['luts']} | {d['carries']} | "
                       f"`{d['start']}` |")
    return "\n".join(out)


def profile_table(rows, passes=3):
    """Where yosys spent each block's run: its wall time, peak memory and longest passes (`yosys -d`)."""
    out = ["| block | yosys wall s | peak MiB | longest passes (s) |", "|---|---:|---:|---|"]
    for r in rows:
        f = r.get("figures")
        if not f:
            continue
        top = ", ".join(f"{p} {t:g}" for p, t in f.get("profile", [])[:passes]) or "-"
        out.append(f"| {r['block']} | {f['seconds']:g} | {f['peak_mib']} | {top} |")
    return "\n".join(out)


DOC_BEGIN = "<!-- synth:begin (prism synth writes this section) -->"
DOC_END = "<!-- synth:end -->"


def _yosys_version():
    try:
        r = subprocess.run(["yosys", "-V"], capture_output=True, text=True)
        return r.stdout.strip().split(" (")[0]
    except OSError:
        return "yosys"


def report_markdown(by_width, target="xilinx", whole_node=True):
    """The tables for each width (resources, storage, depth), and against the U280 and the seed."""
    out = []
    for w, rows in by_width.items():
        out += [f"### KULISCH_W = {w}: resources per phase block ({'synth_xilinx -family xcup' if target == 'xilinx' else 'generic synth + abc -lut 6'}, {_yosys_version()})", "",
                resource_table(rows), ""]
    if whole_node and target == "xilinx" and by_width:
        out += ["### The node against the U280 and the seed", "", device_table(by_width), ""]
        missing = sorted({r["block"] for rows in by_width.values() for r in rows if "figures" not in r})
        if missing:
            out += [f"Not in these sums (no figures: yosys did not finish within this run's time): "
                    f"{', '.join(f'`{m}`' for m in missing)}; the node's totals are lower bounds.", ""]
        w0 = max(by_width)
        rows = by_width[w0]
        sender = [r for r in rows if r["block"] == "prism_result_sender" and "figures" in r]
        if sender:
            mems = (sender[0].get("forced_block") or {}).get("memories") or sender[0]["figures"]["memories"]
            store = [m for m in mems if m["name"].startswith("bank")]
            bits = sum(m["bits"] for m in store)
            where = ", ".join(sorted({m["mapped_to"] for m in store})) or "-"
            shape = f"{len(store)} banks of {store[0]['width']} x {store[0]['depth']}" if store else "-"
            if any("RAMB36" in m for m in store):
                cells = f"{sum(m['RAMB36'] for m in store)} RAMB36 + {sum(m['RAMB18'] for m in store)} RAMB18 ({where})"
            else:
                # yosys mapped every memory of the block by itself: its cells are counted per block only
                res = sender[0]["figures"]["resources"]
                cells = (f"{where}; the whole block, exact store included: {res['RAMB36']} RAMB36 + "
                         f"{res['RAMB18']} RAMB18")
            out += ["| result store | seed 003 | this node (from synthesis) |", "|---|---:|---:|",
                    f"| capacity | {SEED_RESULT_STORE_BYTES // 1024} KiB (4,096 FP32) | {bits / 8192:g} KiB ({shape}) |",
                    f"| block RAMs | {SEED_RESULT_STORE_RAMB36} RAMB36 (512-bit x 256 words as 64-bit banks) | "
                    f"{cells} |", ""]
    if by_width:
        w0 = max(by_width)
        out += [f"### Where the storage bits go (KULISCH_W = {w0}, every memory yosys inferred)", "",
                storage_table(by_width[w0]), ""]
        if any(r.get("forced_block") for r in by_width[w0]):
            out += [f"### Every memory asked into block RAM (KULISCH_W = {w0})", "", forced_table(by_width[w0]), ""]
        out += [
                f"### Logic depth per block (KULISCH_W = {w0}): the deepest end points", "",
                depth_table(by_width[w0]), ""]
        if any(r.get("figures", {}).get("profile") for r in by_width[w0]):
            out += [f"### Where yosys spends its time (KULISCH_W = {w0})", "", profile_table(by_width[w0]), ""]
    return "\n".join(out)


def write_doc_section(path, text):
    """Replace the text between the synth markers of `path` (appended when there are none)."""
    with open(path) as fh:
        doc = fh.read()
    block = f"{DOC_BEGIN}\n{text.rstrip()}\n{DOC_END}"
    if DOC_BEGIN in doc and DOC_END in doc:
        head, rest = doc.split(DOC_BEGIN, 1)
        _, tail = rest.split(DOC_END, 1)
        doc = head + block + tail
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    with open(path + ".tmp", "w") as fh:
        fh.write(doc)
    os.replace(path + ".tmp", path)


def save_figures(path, by_width, target):
    with open(path + ".tmp", "w") as fh:
        json.dump({"target": target, "yosys": _yosys_version(),
                   "widths": {str(w): rows for w, rows in by_width.items()}}, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(path + ".tmp", path)


def recorded_port_paths(path, width):
    """{sub-block: declared paths} from recorded figures (`save_figures`) at one width."""
    by_width, _ = load_figures(path)
    return {r["block"]: r["figures"]["port_paths"] for r in by_width.get(width, ())
            if "port_paths" in r.get("figures", {})}


def load_figures(path):
    with open(path) as fh:
        data = json.load(fh)
    return {w: data["widths"][str(w)] for w in sorted((int(k) for k in data["widths"]), reverse=True)}, data["target"]


def doc_section(path):
    """The text between the synth markers of a Markdown file (None when absent)."""
    with open(path) as fh:
        doc = fh.read()
    if DOC_BEGIN not in doc or DOC_END not in doc:
        return None
    return doc.split(DOC_BEGIN, 1)[1].split(DOC_END, 1)[0].strip("\n")


# ---------------------------------------------------------------------------
# quick memory check: how yosys maps a block's memories, without the rest of synthesis
# ---------------------------------------------------------------------------
def memory_mapping(block_func, *args, ram_style=None, cached_only=False, **kwargs):
    """Convert the block and run synth_xilinx up to its memory mapping: the memories yosys inferred,
    each with `mapped_to` ('block RAM', 'LUT RAM', 'flip-flops'). Seconds, not minutes.
    ram_style='block' asks yosys for block RAM for every memory (it falls back to LUT RAM or
    flip-flops for a memory a block RAM cannot hold)."""
    from cosim.sim.toolchain import build
    folder, name, _ = build(block_func, *args, **kwargs)
    require_tool("yosys")
    tag = f"_{ram_style}" if ram_style else ""
    cached = os.path.join(folder, f"synth_memcheck{tag}.json")
    if os.path.exists(cached):
        with open(cached) as fh:
            data = json.load(fh)
        if data.get("version") == MEMCHECK_VERSION:
            memory_mapping.last_cells = data["cells"]
            return data["memories"]
    if cached_only:
        raise SynthError("no memory check from an earlier run")
    script = os.path.join(folder, f"synth_memcheck{tag}.ys")
    with open(script, "w") as fh:
        head, tail = _synth_steps(name, "xilinx", stop="map_ffram")
        fh.write("\n".join([f"read_verilog {name}.v", *head, "tee -q -o synth_memcheck.txt dump t:$mem_v2",
                            f"setattr -set ram_style \"{ram_style}\" t:$mem_v2" if ram_style else "",
                            *tail, f"tee -q -o synth_memcheck{tag}_stat.txt stat",
                            f"tee -q -o synth_memcheck{tag}_ramb36.txt select -list t:RAMB36E2",
                            f"tee -q -o synth_memcheck{tag}_ramb18.txt select -list t:RAMB18E2"]) + "\n")
    log = os.path.join(folder, f"synth_memcheck{tag}.log")
    with open(_lock_path(), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            r = _run_yosys_group([*_nice(), "yosys", "-q", "-l", log, "-s", script], folder)
        except subprocess.TimeoutExpired:
            raise SynthError(f"yosys took longer than {YOSYS_TIMEOUT_S} s on {name} (PRISM_SYNTH_TIMEOUT)")
    if r.returncode != 0 and ram_style and "no valid mapping found for memory" in (r.stderr or r.stdout):
        # a memory that cannot be a block RAM when asked to be one (unregistered read, too many ports)
        with open(os.path.join(folder, "synth_memcheck.txt")) as fh:
            mems = parse_memories(fh.read())
        for m in mems:
            m["mapped_to"] = "block RAM" if bram_compatible(m) else "no block RAM possible"
            m["RAMB36"] = m["RAMB18"] = 0
        memory_mapping.last_cells = {"RAMB36": 0, "RAMB18": 0, "LUTRAM_cells": 0, "failed": True}
        return mems
    if r.returncode != 0:
        raise SynthError(f"yosys failed on {folder}/{name}.v: {(r.stderr or r.stdout).strip()[-500:]}")
    with open(os.path.join(folder, "synth_memcheck.txt")) as fh:
        mems = parse_memories(fh.read())
    with open(log) as fh:
        mapping = parse_memory_mapping(fh.read())
    for m in mems:
        m["mapped_to"] = mapping.get(m["name"], "flip-flops")
    with open(os.path.join(folder, f"synth_memcheck{tag}_stat.txt")) as fh:
        types = parse_stat(fh.read())
    # block RAM cells are named <memory>.<i>.<j> by yosys' memory mapping: count them per memory
    for m in mems:
        m["RAMB36"] = m["RAMB18"] = 0
    by_name = {m["name"]: m for m in mems}
    for kind in ("RAMB36", "RAMB18"):
        with open(os.path.join(folder, f"synth_memcheck{tag}_{kind.lower()}.txt")) as fh:
            for line in fh:
                cname = line.strip().split("/", 1)[-1].lstrip("\\")
                mem = by_name.get(cname.split(".", 1)[0])
                if mem is not None:
                    mem[kind] += 1
    memory_mapping.last_cells = {"RAMB36": types.get("RAMB36E2", 0), "RAMB18": types.get("RAMB18E2", 0),
                                 "LUTRAM_cells": sum(n for t, n in types.items() if re.match(r"^RAM\d+[MX]", t))}
    with open(cached + ".tmp", "w") as fh:
        json.dump({"version": MEMCHECK_VERSION, "memories": mems, "cells": memory_mapping.last_cells}, fh)
    os.replace(cached + ".tmp", cached)
    return mems


def bram_compatible(mem):
    """A memory a block RAM can hold as written: every read port registered, at most two ports."""
    return mem["sync_read"] and mem["read_ports"] + mem["write_ports"] <= 2


if __name__ == "__main__":
    sys.exit(0)
