"""Running a formal target: convert its harness, generate the sby jobs in a build folder,
run them in rounds (cosim/formal/sby.py) and return one Verdict per property; a failed
property's counterexample is written as a VCD and as a replayable stimulus (JSON).

Each property's trigger (the situation in which it has something to check) is covered by one
cover job per group of properties: a verdict says whether, and at which step, a run reached it.
A proof whose trigger is never reached may be vacuous (a design that never moves proves every
"nothing goes wrong" property), so an unreached cover fails the target.

A broken variant is made by block parameters (a harness variant, a policy of the design; the
design has no fault parameters), by one of the design's test faults built into the converted
harness (the fabric's and the package's, cosim/sim/faults.py), or by edits of the converted
Verilog (cosim/sim/faults.py's `Edit`) applied to the text sby reads; it is caught when each
property it names fails and each cover it names is unreachable."""
import json
import os
import shutil
from dataclasses import dataclass

from cosim.sim import toolchain
from cosim.sim.batch import module_ports
from cosim.sim.faults import apply_edits, with_fault

from cosim.formal import sby as S
from .targets import get_target

UNREACHED = -1            # Verdict.cover of a trigger that no run within the cover depth reaches


@dataclass
class Verdict:
    target: str
    prop: str
    verdict: str              # proved | bounded | failed | error
    k: int = None             # proved: induction depth
    depth: int = None         # bounded: BMC depth passed; failed: step of the failure
    seconds: float = 0.0      # sby time of the jobs that decided it
    reason: str = ""
    vcd: str = ""
    stimulus: str = ""
    fault: str = ""
    statement: str = ""
    cover: int = None         # step at which a run first reached the trigger; UNREACHED; None: no cover run
    cover_depth: int = None   # depth of the cover job
    cover_vcd: str = ""       # the run that reaches it
    caught: bool = None       # broken variant: the property failed / its cover is unreachable, as expected

    @property
    def cover_text(self):
        if self.cover is None:
            return "-"
        if self.cover == UNREACHED:
            return f"UNREACHED (depth {self.cover_depth})"
        return f"step {self.cover} (cycle {self.cover - S.RESET_STEPS})"

    def line(self):
        tag = f"{self.target}{'[' + self.fault + ']' if self.fault else ''}"
        if self.verdict == "proved":
            how = f"k-induction, k={self.k}"
        elif self.verdict == "bounded":
            how = f"BMC depth {self.depth}; {self.reason}"
        elif self.verdict == "failed":
            how = f"counterexample at cycle {self.depth - S.RESET_STEPS}: {self.vcd}"
            if self.stimulus:
                how += f", stimulus {self.stimulus}"
        else:
            how = self.reason
        text = f"{tag} {self.prop}: {self.verdict} ({how})"
        if self.cover == UNREACHED:
            text += (f"; its trigger is never reached within {self.cover_depth} steps"
                     + (" (as the broken variant must)" if self.caught else ": the property holds vacuously"))
        return text


def default_out():
    return os.path.join(toolchain.build_root(), "formal")


def harness_block(target, fault=None):
    """The target's harness block, with the broken variant's design fault if it has one."""
    return with_fault(target.block(), target.faults[fault].design_fault if fault else None)


def build_harness(target, fault=None):
    """(folder, module, ports, params) of the target's converted harness (cached by the tool chain)."""
    params = dict(target.params)
    if fault:
        params.update(target.faults[fault].params)
    folder, module, _ = toolchain.build(harness_block(target, fault), **target.signals(), **params)
    ports = module_ports(os.path.join(folder, module + ".v"), module)
    return folder, module, ports, params


def design_text(target, fault, design_v):
    """The converted harness as the formal tools read it: with the broken variant's edits, if any."""
    with open(design_v) as fh:
        text = fh.read()
    if fault and target.faults[fault].edits:
        text = apply_edits(text, target.faults[fault].edits, f"{target.name} --fault {fault}")
    return text


def _job(job_dir, text, module, ports, props, target, env_verilog, mode, depth, engine_opts, covers=()):
    if os.path.isdir(job_dir):
        shutil.rmtree(job_dir)
    os.makedirs(job_dir)
    dut = os.path.join(job_dir, f"{module}.v")
    with open(dut, "w") as fh:
        # undeclared names are errors: a lemma or trigger that misspells a signal must not
        # silently name a new, free wire
        fh.write("`default_nettype none\n" + S.with_lemmas(text, module, props, covers, target.lemma_verilog) +
                 "`default_nettype wire\n")
    top = os.path.join(job_dir, "formal_top.v")
    env = "\n".join(x for x in (target.env_verilog, env_verilog) if x)
    with open(top, "w") as fh:
        fh.write(S.formal_top(module, ports, props, target.assumes, env, target.free_reset, covers,
                              target.stable_inputs))
    sby_file = os.path.join(job_dir, "job.sby")
    with open(sby_file, "w") as fh:
        fh.write(S.sby_text(mode, depth, [dut, top], engine_opts, target.timeout))
    return sby_file


def _logs(job_dir, props):
    labels = [p.label for p in props]
    eng = os.path.join(job_dir, "run", "engine_0")
    base = S.parse_engine_log(os.path.join(eng, "logfile_basecase.txt"), labels)
    if base["status"] is None and os.path.exists(os.path.join(eng, "logfile.txt")):
        base = S.parse_engine_log(os.path.join(eng, "logfile.txt"), labels)      # bmc mode
    ind = S.parse_engine_log(os.path.join(eng, "logfile_induction.txt"), labels)
    return base, ind


def prove_group(target, props, env_verilog, out_dir, depth, mode="prove", fault="", log=None, k=None):
    """Verdicts for `props` (proved together under one environment), by rounds of sby jobs:
    round 0 is BMC to `depth` with --keep-going (every property failing within it fails,
    with its own trace); then k-induction at depth `k` (<= depth; default depth) for the
    rest, each round dropping the property whose induction step failed (bounded), until the
    induction closes for all that remain (proved)."""
    folder, module, ports, params = build_harness(target, fault or None)
    text = design_text(target, fault or None, os.path.join(folder, module + ".v"))
    by_label = {p.label: p for p in props}
    k = min(k or depth, depth)
    pending = list(props)
    verdicts, spent = {}, 0.0
    rnd = 0
    while pending:
        job_dir = os.path.join(out_dir, f"round{rnd}")
        job_mode, job_depth, opts = ("bmc", depth, "--keep-going") if rnd == 0 else ("prove", k, "--induction")
        sby_file = _job(job_dir, text, module, ports, pending, target, env_verilog, job_mode, job_depth, opts)
        if log:
            log(f"  sby {sby_file} ({'BMC' if rnd == 0 else 'k-induction'}, depth {job_depth}, "
                f"{len(pending)} properties)")
        status, seconds = S.run_sby(job_dir, sby_file, target.timeout)
        spent += seconds
        base, ind = _logs(job_dir, pending)
        if rnd == 0:
            failed = {}
            for label, step, files in base["failures"]:
                if label in by_label and label not in failed:
                    failed[label] = (step, files)
            for label, (step, files) in failed.items():
                p = by_label[label]
                vcd, yw = (os.path.join(job_dir, "run", files[x]) if files.get(x) else "" for x in ("vcd", "yw"))
                stim = ""
                if yw and os.path.exists(yw) and not p.inside:
                    stim = os.path.join(out_dir, f"{p.id}.stimulus.json")
                    write_stimulus(stim, yw, target, fault, p, step, depth)
                verdicts[p.id] = Verdict(target.name, p.id, "failed", depth=step, seconds=spent, vcd=vcd,
                                         stimulus=stim, fault=fault, statement=p.statement)
            pending = [p for p in pending if p.id not in verdicts]
            if status == "TIMEOUT" or base["status"] is None:
                reached = base["last_step"]
                for p in pending:
                    verdicts[p.id] = Verdict(
                        target.name, p.id, "bounded" if reached else "error", depth=reached, seconds=spent,
                        fault=fault, statement=p.statement,
                        reason=f"BMC stopped by the time limit ({target.timeout} s) at that depth")
                break
            if mode == "bmc":
                for p in pending:
                    verdicts[p.id] = Verdict(target.name, p.id, "bounded", depth=depth, seconds=spent, fault=fault,
                                             statement=p.statement, reason=target.bounded_reason.get(
                                                 p.id, "BMC only (no induction for this job)"))
                break
            rnd += 1
            continue
        if ind["status"] == "PASSED":
            steps = ind.get("induction_steps")
            kk = k - min(steps) if steps else k
            for p in pending:
                verdicts[p.id] = Verdict(target.name, p.id, "proved", k=kk, seconds=spent, fault=fault,
                                         statement=p.statement)
            break
        ind_failed = [l for l, _, _ in ind["failures"] if l in by_label]
        if status == "TIMEOUT" or ind["status"] != "FAILED" or not ind_failed:
            why = (f"induction stopped by the time limit ({target.timeout} s)" if status == "TIMEOUT" else
                   f"sby status {status}; see {os.path.join(job_dir, 'run', 'logfile.txt')}")
            for p in pending:
                verdicts[p.id] = Verdict(target.name, p.id, "bounded", depth=depth, seconds=spent, fault=fault,
                                         statement=p.statement, reason=why)
            break
        for label in dict.fromkeys(ind_failed):
            p = by_label[label]
            why = f"induction does not close at k={k}"
            if p.id in target.bounded_reason:
                why += ": " + target.bounded_reason[p.id]
            why += f" (counterexample to induction: {os.path.join(job_dir, 'run', 'engine_0', 'trace_induct.vcd')})"
            verdicts[p.id] = Verdict(target.name, p.id, "bounded", depth=depth, seconds=spent, fault=fault,
                                     reason=why, statement=p.statement)
        pending = [p for p in pending if p.id not in verdicts]
        rnd += 1
    return [verdicts[p.id] for p in props]


def cover_group(target, props, env_verilog, out_dir, depth, fault="", log=None):
    """{property id: (step or UNREACHED, cover trace VCD)} for the triggers of `props` (those that
    have one), from one sby cover job to `depth` under the same environment as their proof (no
    assertions: a trigger is reached by any run the environment allows).  Also the job's time."""
    covers = [p for p in props if p.cover]
    if not covers:
        return {}, 0.0
    folder, module, ports, params = build_harness(target, fault or None)
    text = design_text(target, fault or None, os.path.join(folder, module + ".v"))
    job_dir = os.path.join(out_dir, "cover")
    sby_file = _job(job_dir, text, module, ports, [], target, env_verilog, "cover", depth, "", covers=covers)
    if log:
        log(f"  sby {sby_file} (cover, depth {depth}, {len(covers)} triggers)")
    status, seconds = S.run_sby(job_dir, sby_file, target.timeout)
    res = S.parse_cover_log(os.path.join(job_dir, "run", "engine_0", "logfile.txt"), [p.cover_label for p in covers])
    found = {}
    for p in covers:
        step = res["reached"].get(p.cover_label)
        vcd = res["traces"].get(p.cover_label, {}).get("vcd", "")
        if step is None and (p.cover_label in res["unreached"] or res["status"] in ("PASSED", "FAILED")):
            found[p.id] = (UNREACHED, "")
        elif step is None:
            raise S.FormalToolError(f"cover job {job_dir} gave no answer for {p.cover_label} "
                                    f"(sby status {status})")
        else:
            found[p.id] = (step, os.path.join(job_dir, "run", vcd) if vcd else "")
    return found, seconds


def _attach_covers(verdicts, found, depth, seconds):
    for v in verdicts:
        if v.prop in found:
            v.cover, v.cover_vcd = found[v.prop]
            v.cover_depth = depth
            v.seconds += seconds


def run_target(name, depth=None, out=None, fault=None, only=None, log=None, covers=True):
    """Verdicts for every property of target `name` (or those in `only`), each with its cover
    (unless covers=False); with `fault`, the broken variant's properties by BMC (they must fail)
    and the covers it names (they must be unreachable): Verdict.caught says whether each did."""
    target = get_target(name)
    if fault and fault in target.faults:
        depth = depth or target.faults[fault].depth or target.fault_depth
    depth = depth or target.depth
    cover_depth = target.cover_depth or depth
    out = os.path.abspath(out or default_out())
    all_props = target.all_props()
    if fault:
        if fault not in target.faults:
            raise KeyError(fault)
        f = target.faults[fault]
        ids = list(dict.fromkeys(tuple(f.props) + tuple(f.unreached)))
        props = [target.prop(pid) for pid in ids]
        job = os.path.join(out, target.name, f"fault-{fault}")
        verdicts = prove_group(target, props, f.env_verilog, job, depth, mode="bmc", fault=fault, log=log)
        if f.unreached:
            cdepth = f.cover_depth or cover_depth
            found, secs = cover_group(target, [target.prop(pid) for pid in f.unreached], f.env_verilog, job, cdepth,
                                      fault=fault, log=log)
            _attach_covers(verdicts, found, cdepth, secs)
        for v in verdicts:
            v.caught = ((v.prop not in f.props or v.verdict == "failed") and
                        (v.prop not in f.unreached or v.cover == UNREACHED))
        return verdicts
    if only:
        all_props = [p for p in all_props if p.id in set(only)]
    grouped = set()
    results = []
    jobs = []
    for gi, g in enumerate(target.groups):
        ps = [p for p in all_props if p.id in g.props]     # its properties and its own lemmas
        grouped.update(g.props)
        if ps:
            jobs.append((ps, g.env_verilog, os.path.join(out, target.name, f"group{gi + 1}")))
    rest = [p for p in all_props if p.id not in grouped]
    if rest:
        jobs.append((rest, "", os.path.join(out, target.name, "main")))
    for ps, env, job in jobs:
        verdicts = prove_group(target, ps, env, job, depth, target.mode, log=log, k=target.k)
        if covers:
            found, secs = cover_group(target, ps, env, job, cover_depth, log=log)
            _attach_covers(verdicts, found, cover_depth, secs)
        results += verdicts
    order = {p.id: i for i, p in enumerate(all_props)}
    return sorted(results, key=lambda v: order[v.prop])


# ---------------------------------------------------------------------------------------------
# Counterexample -> stimulus
# ---------------------------------------------------------------------------------------------
def read_witness(path):
    """[{top-level input: value}] per formal step from a Yosys witness (.yw) file."""
    with open(path) as fh:
        data = json.load(fh)
    sigs = [s for s in data["signals"] if not s["init_only"]]
    steps = []
    for st in data["steps"]:
        bits = st["bits"][::-1]
        values, pos = {}, 0
        for s in sigs:
            w = s["width"]
            chunk = bits[pos:pos + w]
            pos += w
            if len(s["path"]) != 1:
                continue
            name = s["path"][0].lstrip("\\")
            v = 0
            for i, c in enumerate(chunk):
                if c == "1":
                    v |= 1 << (i + s["offset"])
            values[name] = values.get(name, 0) | v
        steps.append(values)
    return steps


def write_stimulus(path, yw, target, fault, prop, step, depth):
    steps = read_witness(yw)
    vectors = []
    for values in steps[S.START_STEPS:step + 1]:
        vectors.append({k: v for k, v in sorted(values.items()) if k != "clk"})
    stim = dict(format="prism-formal-stimulus/1", target=target.name, fault=fault or "", property=prop.id,
                port=prop.port, bit=prop.bit, inside=prop.inside, formal_step=step,
                cycle=step - S.RESET_STEPS, depth=depth, witness=os.path.abspath(yw),
                timing="cosim.sim.vector_batch: vector j is applied after the rising edge of sample j; "
                       "the failure shows in sample `cycle`", vectors=vectors)
    with open(path, "w") as fh:
        json.dump(stim, fh, indent=1)
