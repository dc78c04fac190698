"""A top-level block as one Verilog file for other flows (`prism export BLOCK -o DIR`,
cosim/cli/export.py).

Writes, into DIR:
- `<top>.v`: the block converted by the project's tool chain (cosim/sim/convert.py,
  initial values on), the portable source that Verilator, synthesis and
  other simulators read (not the Icarus-only rewrite); one flat module named
  `<top>` (`prism_node` for `prism export node`);
- `README.md`: the top module, its parameters with the values it was built
  with, every port (name, direction, width, role) and the tools and language
  modes the file was checked with;
- for the node, `protocol.md`: the wire protocol a client implements.

The checks (`iverilog -g2005`, `iverilog -g2012`, `verilator --lint-only`)
run on the exported file unless `--no-check`; their outcome is cached per file
content and tool version, so exporting an unchanged design again is quick.
"""
import fcntl
import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

import myhdl

from cosim.fabric.fabric_properties import FabricConfig, fabric_signals
from cosim.node.node_harness import node_signals
from cosim.package.package_setup import distributor_signals, package_signals
from cosim.sim import toolchain
from cosim.sim.tbutil import bit as _b, sync_reset as _rst, word as _u
from cosim.sim.toolchain import block_module, build_root
from cosim.sim.vpi import ToolchainError
from hdl.common.interface import AxiStream
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ExportError(Exception):
    """The block cannot be exported as asked (one line, for the command to print)."""


# WIDTH is the one lint class Verilator reports on converted MyHDL (integer-sized
# arithmetic assigned to narrower registers, as MyHDL emits it); every other
# warning fails the check.
VERILATOR_LINT = ("verilator", "--lint-only", "-Wno-WIDTH")


@dataclass
class BlockSpec:
    """How to build one exportable block: its function, signals and options."""
    top: str                      # MyHDL block function = Verilog top module
    module: str                   # hdl.<module>
    summary: str
    signals: callable             # options -> {port name: Signal}
    options: dict = field(default_factory=dict)   # CLI option -> (parameter or geometry name, default, help)
    params: callable = None       # options -> {keyword parameter: value}
    extra_files: tuple = ()       # (project path, name in DIR)
    roles: dict = field(default_factory=dict)     # port -> role, where the docstring's is too terse


def _node_signals(opts):
    return node_signals()


def _fabric_signals(opts):
    return fabric_signals(FabricConfig(members=opts["members"], stripes=opts["stripes"], paths=opts["paths"]))


def _package_signals(opts):
    return package_signals()


def _distributor_signals(opts):
    return distributor_signals()


def _axis_register_signals(opts):
    w = opts["width"]
    return dict(clk=_b(), rst=_rst(), s_axis_tdata=_u(w), s_axis_tlast=_b(), s_axis_tvalid=_b(), s_axis_tready=_b(),
                m_axis_tdata=_u(w), m_axis_tlast=_b(), m_axis_tvalid=_b(), m_axis_tready=_b())


def _reduce_slice_signals(opts):
    cap = opts["capacity"]
    idx_w = max(1, (cap - 1).bit_length())
    rng_w = max(1, (cap // 16 - 1).bit_length())
    return dict(clk=_b(), rst=_rst(), policy=_b(), s_axis_tdata=_u(512), s_axis_tvalid=_b(), s_axis_tready=_b(),
                s_axis_index=_u(idx_w), s_axis_count=_u(7), s_axis_format=_u(2), rd_cmd_valid=_b(),
                rd_cmd_ready=_b(), rd_cmd_range=_u(rng_w), m_axis_tdata=_u(512), m_axis_tstate=_u(opts["width"]),
                m_axis_tuser=_u(20), m_axis_tlast=_b(), m_axis_tvalid=_b(), m_axis_tready=_b(), index_error=_b())


BLOCKS = {
    "node": BlockSpec(
        "prism_node", "prism_node", "PRISM SINGLE collective node (two receive, two transmit AXI4-Stream ports)",
        _node_signals,
        options={"width": ("KULISCH_W", KULISCH_WIDTH_DEFAULT, "Kulisch accumulator width: 320 or 280"),
                 "capacity": ("CAPACITY", MAX_CAPACITY, "largest element count E a STAGE may ask for "
                                                        f"(32..{MAX_CAPACITY}, a multiple of 32)")},
        params=lambda o: {"KULISCH_W": o["width"], "CAPACITY": o["capacity"]},
        extra_files=(("docs/protocol.md", "protocol.md"),),
        roles={"counter_select": "which counter `counter_value` shows (map: protocol.md, \"Counters\")",
               "counter_value": "the selected counter (32 bits, wraps), one cycle after `counter_select`",
               "busy": "an operation is open or draining (protocol.md, \"Operation lifetime\")"}),
    "collective_fabric": BlockSpec(
        "collective_fabric", "collective_fabric", "one leaf's collective blocks under the conformance monitor",
        _fabric_signals,
        options={"members": ("MEMBERS", 6, "ring members (width of member_gbps / 16)"),
                 "stripes": ("STRIPES", 3, "stripes per member (stripe_gbps is MEMBERS x STRIPES x 16 bits)"),
                 "paths": ("PATHS", 8, "uplinks (1..255)")},
        params=lambda o: {"PATHS": o["paths"], "RATES": "paths"}),
    "accelerator_package": BlockSpec(
        "accelerator_package", "accelerator_package",
        "multi-die package: work distributor with its assertion monitor, service-rate estimator, compute dies, "
        "shared HBM and die-to-die bandwidth, phase barrier",
        _package_signals),
    "work_distributor": BlockSpec(
        "work_distributor", "work_distributor", "accelerator work distributor (job table, dispatch policy)",
        _distributor_signals),
    "axis_register": BlockSpec(
        "axis_register", "axis_register", "AXI-Stream register slice (skid buffer)", _axis_register_signals,
        options={"width": ("DATA_WIDTH", 512, "tdata width in bits")}),
    "reduce_slice": BlockSpec(
        "reduce_slice", "reduce_slice", "sixteen-lane reduction slice (KULISCH_FIXED and FP32_ARRIVAL)",
        _reduce_slice_signals,
        options={"width": ("KULISCH_W", KULISCH_WIDTH_DEFAULT, "Kulisch accumulator width (m_axis_tstate): 320 or 280"),
                 "capacity": ("CAPACITY", MAX_CAPACITY, f"elements held (a multiple of 16, 16..{MAX_CAPACITY})")},
        params=lambda o: {"CAPACITY": o["capacity"]}),
}
ALIASES = {"prism_node": "node"}


def free_params(spec):
    """Keyword parameters of the block that -P may set: {name: default}."""
    func = getattr(block_module(spec.module), spec.top)
    sig = inspect.signature(getattr(func, "func", func))
    fixed = set(spec.params({k: v[1] for k, v in spec.options.items()}) if spec.params else {})
    return {n: p.default for n, p in sig.parameters.items()
            if p.default is not inspect.Parameter.empty and n not in fixed}


def list_text():
    lines = []
    for name, spec in BLOCKS.items():
        opts = "  ".join(f"--{o} (default {d})" for o, (_, d, _) in spec.options.items())
        lines.append(f"{name:22s} top module {spec.top}: {spec.summary}")
        if opts:
            lines.append(f"{'':22s} options: {opts}")
        free = free_params(spec)
        if free:
            lines.append(f"{'':22s} -P: " + ", ".join(f"{k}={v!r}" for k, v in free.items()))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Port and parameter roles, from the block's docstring ("Ports:" / "Parameters:" sections)
# ---------------------------------------------------------------------------------------------
def _section(doc, title):
    """Entries of the indented docstring sections headed `title` ("Ports:", "Ports (inputs):",
    "Ports (outputs):" ...): [(names text, description)]."""
    lines = doc.splitlines()
    heads = [i for i, l in enumerate(lines) if re.match(rf"\s*{title}\b.*:\s*$", l) or
             re.match(rf"\s*{title}\s*\(.*\)?:?\s*$", l)]
    entries = []
    for start in heads:
        entries += _one_section(lines, start)
    return entries


def _one_section(lines, start):
    # a heading may run over two lines ("Ports (widths ...;\nN_JOB = ...):")
    while not lines[start].rstrip().endswith(":") and start + 1 < len(lines):
        start += 1
    entries, indent = [], None
    for line in lines[start + 1:]:
        if not line.strip():
            if entries:
                break
            continue
        ind = len(line) - len(line.lstrip())
        if indent is None:
            indent = ind
        if ind < indent:
            break
        if ind == indent:
            m = re.match(r"(\S.*?)(?:\s{2,}(.*))?$", line.strip())
            entries.append([m.group(1), m.group(2) or ""])
        else:
            entries[-1][1] = (entries[-1][1] + " " + line.strip()).strip()
    return entries


def _name_patterns(names_text):
    """Regexes for the port names an entry's name list covers ('a_tdata/tvalid', 'P' placeholders)."""
    pats = []
    for tok in re.split(r"[,\s]+", names_text):
        tok = tok.strip()
        if not re.match(r"^[A-Za-z_][\w/]*$", tok):
            continue
        parts = tok.split("/")
        base = parts[0]
        full = [base] + [base.rsplit("_", 1)[0] + "_" + p for p in parts[1:]] if "_" in base else parts
        for n in full:
            pats.append(re.compile("^" + re.sub(r"(?<=_)P(?=_|$)", r"\\d+", n) + "$"))
    return pats


AXIS_ROLES = {"tdata": "beat data", "tvalid": "a beat is offered", "tready": "the beat can be taken",
              "tlast": "last beat of a frame"}


def _stream_role(role, n):
    m = re.match(r"^[sm]_axis_(\d+)_", n)
    if m:      # one entry for the ports of every numbered stream: name this one
        role = re.sub(r"\s*\(P = [^)]*\)", "", role)
        role = re.sub(r"\bport P\b", f"port {m.group(1)}", role)
    return role


def _roles(doc, title, names, buses=None):
    """{port: role} from the docstring section `title`.  An entry that names a stream (an AxiStream
    in `buses` {name: bus}: `s_axis`, `m_axis_P`) gives the role of each of its converted ports,
    `<bus>_<field>`: the entry's text, then the field's (the line of a subclass's docstring, else
    AXIS_ROLES or AxiStream's line).  A stream's fields alone do not say what it carries."""
    roles = {}
    buses = buses or {}
    for names_text, descr in _section(doc or "", title):
        descr = re.sub(r"^(in|out)\s*(:|$)\s*", "", descr).strip()
        pats = _name_patterns(names_text)
        parts = descr.split("; ")
        for k, pat in enumerate(pats):
            for n in names:
                if n in roles or not pat.match(n):
                    continue
                # "a, b   what a is; what b is": one part per name
                role = _stream_role(parts[k] if len(parts) == len(pats) > 1 else descr, n)
                suffix = n.rsplit("_", 1)[-1]
                if suffix in AXIS_ROLES and (len(pats) > 1 or not role):
                    role = f"{role}: {AXIS_ROLES[suffix]}" if role else AXIS_ROLES[suffix]
                elif not role and suffix in ("valid", "ready"):
                    role = f"{n.rsplit('_', 1)[0]} handshake: " + ("offered" if suffix == "valid" else "taken")
                roles[n] = role
            for bus_name, bus in buses.items():
                if not isinstance(bus, AxiStream) or not pat.match(bus_name):
                    continue
                field_roles = _bus_roles({bus_name: bus})
                for f, _ in bus.fields():
                    n = f"{bus_name}_{f}"
                    if n in roles or n not in names:
                        continue
                    role = _stream_role(parts[k] if len(parts) == len(pats) > 1 else descr, n)
                    own = field_roles.get(n) if type(bus) is not AxiStream else None
                    field = own or AXIS_ROLES.get(f) or field_roles.get(n)
                    roles[n] = f"{role}: {field}" if role and field else role or field or ""
    return roles


def _bus_roles(buses):
    """{converted port name: role} from the docstrings of the bus classes (hdl/common/interface.py):
    each field's line there, `field   what it is`."""
    roles = {}
    for bus_name, bus in buses.items():
        fields = dict(bus.fields())
        for line in (inspect.getdoc(type(bus)) or "").splitlines():
            m = re.match(r"^\s*(\w+)\s{2,}(.*)$", line)
            if m and m.group(1) in fields:
                # the table gives the direction: a leading "in:" / "out:" / "back:" is dropped
                roles[f"{bus_name}_{m.group(1)}"] = re.sub(r"^(in|out|back):\s*", "", m.group(2).strip())
    return roles


def _ports(verilog_text, top):
    """[(name, direction, width)] in declaration order, from the converted module."""
    m = re.search(rf"module\s+{top}\s*\((.*?)\);", verilog_text, re.S)
    if not m:
        raise RuntimeError(f"module {top} not found in the converted file")
    order = [p.strip() for p in m.group(1).split(",") if p.strip()]
    decl = {n: (d, int(msb) + 1 if msb else 1) for d, msb, n in
            re.findall(r"^(input|output)\s+(?:signed\s+)?(?:\[(\d+):0\]\s+)?(\w+)\s*;", verilog_text, re.M)}
    return [(n, *decl[n]) for n in order]


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------
def _tool_version(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        return None
    return (r.stdout or r.stderr).strip().splitlines()[0] if (r.stdout or r.stderr).strip() else "unknown"


CHECKS = (
    ("Icarus Verilog", "iverilog -g2005", ("iverilog", "-V"),
     lambda f, top, tmp: ["iverilog", "-g2005", "-o", os.path.join(tmp, "a.vvp"), "-s", top, f]),
    ("Icarus Verilog", "iverilog -g2012", ("iverilog", "-V"),
     lambda f, top, tmp: ["iverilog", "-g2012", "-o", os.path.join(tmp, "b.vvp"), "-s", top, f]),
    ("Verilator", " ".join(VERILATOR_LINT), ("verilator", "--version"),
     lambda f, top, tmp: [*VERILATOR_LINT, "--top-module", top, f]),
)


def _cache_dir():
    return os.path.join(build_root(), "export-checks")


CHECKS_VERSION = "2"        # 2: the tools are given an absolute path (a relative one failed every check)


def run_checks(path, top):
    """[{tool, version, mode, ok, detail}] for the file at `path`; cached per content and tool version."""
    path = os.path.abspath(path)        # the tools run in a temporary folder
    with open(path, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    versions = {c[2]: _tool_version(c[2]) for c in CHECKS}
    key = hashlib.sha256((CHECKS_VERSION + digest + top + json.dumps(sorted((" ".join(k), v or "") for k, v in versions.items())))
                         .encode()).hexdigest()[:24]
    os.makedirs(_cache_dir(), exist_ok=True)
    cached = os.path.join(_cache_dir(), key + ".json")
    with open(cached + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # parallel exports of one design check it once
        if os.path.exists(cached):
            with open(cached) as fh:
                return json.load(fh)
        results = []
        with tempfile.TemporaryDirectory() as tmp:
            for tool, mode, vcmd, cmd in CHECKS:
                version = versions[vcmd]
                if version is None:
                    results.append(dict(tool=tool, version=None, mode=mode, ok=None, detail="not installed"))
                    continue
                r = subprocess.run(cmd(path, top, tmp), capture_output=True, text=True, cwd=tmp)
                errs = [l for l in (r.stderr + r.stdout).splitlines() if re.search(r"error|%Warning", l, re.I)]
                results.append(dict(tool=tool, version=version, mode=mode, ok=r.returncode == 0,
                                    detail="" if r.returncode == 0 else (errs[0] if errs else f"exit {r.returncode}")))
        if all(c["ok"] is not None for c in results):
            with open(cached + ".tmp", "w") as fh:
                json.dump(results, fh)
            os.replace(cached + ".tmp", cached)
    return results


# ---------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------
def _readme(name, spec, opts, bound_params, ports, roles, param_roles, checks, verilog_name, extra):
    L = [f"# {spec.top}", "",
         f"{spec.summary[0].upper() + spec.summary[1:]}: Verilog converted from the PRISM kit's MyHDL source "
         f"`{block_module(spec.module).__name__.replace('.', '/')}.py` (`prism export {name}`, MyHDL {myhdl.__version__}, initial values on).", "",
         f"- File: `{verilog_name}`, one self-contained module, top module `{spec.top}`; no includes, "
         "no other modules.",
         "- Every register has an initial value in its declaration (`reg x = ...`); a flow that ignores "
         "initial values must apply the reset before use.",
         "- `timescale 1ns/10ps`.  Clock: `clk`, rising edge.  Reset: `rst`, synchronous, active high.", ""]
    for src, dst in extra:
        L.append(f"- `{dst}`: the block's specification (a copy of the kit's `{src}`).")
    if extra:
        L.append("")
    L += ["## Parameters", "",
          "Fixed at conversion (the Verilog module has no parameters; export again to change them).", "",
          "| parameter | value | meaning |", "|---|---|---|"]
    geometry = {pname: opts[o] for o, (pname, _, _) in spec.options.items() if pname not in bound_params}
    for pname, val in list(bound_params.items()) + list(geometry.items()):
        opt = next((f"`--{o}`; " for o, (pn, _, _) in spec.options.items() if pn == pname), "")
        meaning = param_roles.get(pname) or next((h for o, (pn, _, h) in spec.options.items() if pn == pname), "")
        L.append(f"| `{pname}` | {val!r} | {opt}{meaning} |")
    L += ["", "## Ports", "", "| port | direction | width | role |", "|---|---|---:|---|"]
    for pname, direction, width in ports:
        L.append(f"| `{pname}` | {direction} | {width} | {roles.get(pname) or 'see the block source'} |")
    L += ["", "## Checked with", ""]
    if checks is None:
        L.append("Not checked (exported with `--no-check`).")
    else:
        L += ["| tool | version | command | result |", "|---|---|---|---|"]
        for c in checks:
            res = "passed" if c["ok"] else ("not run: " + c["detail"] if c["ok"] is None else "FAILED: " + c["detail"])
            top_opt = f"-s {spec.top}" if c["mode"].startswith("iverilog") else f"--top-module {spec.top}"
            cmd = f"{c['mode']} ... {top_opt}" if c["mode"].startswith("iverilog") else f"{c['mode']} {top_opt}"
            L.append(f"| {c['tool']} | {c['version'] or '-'} | `{cmd} {verilog_name}` | {res} |")
        L += ["", "Compiled or linted as above on this file.  Verilator's WIDTH warnings (MyHDL sizes "
                  "intermediate arithmetic as 32-bit integers) are the only ones switched off."]
    if name == "node":
        L += ["", "Behaviour is checked by the kit's test suite, not by the compile checks above: it "
                  "co-simulates the node bit for bit against its golden model under Icarus and Verilator, and "
                  "drives this exported file with a cocotb + cocotbext-axi client written from `protocol.md` "
                  "alone, under Icarus with `-g2012` (cocotb's default)."]
    return "\n".join(L) + "\n"


def export(name, spec, opts, params, out_dir, check=True):
    """Convert and write the block; return (verilog path, readme path, checks or None).  A block
    that refuses the parameters, a tool chain that fails, a folder that cannot be written: ExportError."""
    func = getattr(block_module(spec.module), spec.top)
    signals = spec.signals(opts)
    try:
        folder, top, bound = toolchain.build(func, **signals, **params)
    except (ValueError, TypeError, myhdl.ConversionError) as e:       # parameters the block refuses
        raise ExportError(f"{name}: {str(e).strip().splitlines()[0]}")
    except ToolchainError as e:
        raise ExportError(f"{name}: the tool chain failed: {str(e).strip().splitlines()[0]}")
    with open(os.path.join(folder, f"{top}.v")) as fh:
        text = fh.read()
    # the converter names its build folder in the first line; the export names only itself
    text = re.sub(r"\A// File: .*", f"// File: {top}.v", text, count=1)
    try:
        os.makedirs(out_dir, exist_ok=True)
        vpath = os.path.join(out_dir, f"{top}.v")
        with open(vpath, "w") as fh:
            fh.write(text)
        extra = []
        for src, dst in spec.extra_files:
            shutil.copyfile(os.path.join(_ROOT, src), os.path.join(out_dir, dst))
            extra.append((src, dst))
    except OSError as e:
        raise ExportError(f"cannot write into {out_dir}: {e.strerror or e}")
    ports = _ports(text, top)
    doc = inspect.getdoc(block_module(spec.module)) or ""
    fdoc = inspect.getdoc(getattr(func, "func", func)) or ""
    names = [p[0] for p in ports]
    roles = {**_bus_roles(bound.buses), **_roles(fdoc, "Ports", names, bound.buses),
             **_roles(doc, "Ports", names, bound.buses),
             "clk": "clock; inputs are sampled and outputs change at its rising edge",
             "rst": "synchronous reset, active high", **spec.roles}
    bound_params = {k: v for k, v in bound.arguments.items() if not hasattr(v, "_nrbits")}
    pnames = list(bound_params) + [pn for pn, _, _ in spec.options.values()]
    param_roles = {**_roles(fdoc, "Parameters", pnames), **_roles(doc, "Parameters", pnames)}
    checks = run_checks(vpath, top) if check else None
    rpath = os.path.join(out_dir, "README.md")
    with open(rpath, "w") as fh:
        fh.write(_readme(name, spec, opts, bound_params, ports, roles, param_roles, checks,
                         f"{top}.v", extra))
    return vpath, rpath, checks
