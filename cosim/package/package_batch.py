"""Batched runs of `accelerator_package`: the converted design under native
Icarus (as Verilog-2005 or as SystemVerilog-2012) or Verilator, driven by a
generated Verilog test bench that replays one `PackageSetup` exactly as the
MyHDL test bench does (see `cosim.package.package_bench` for the timing), and writes
every output of every cycle to a file.  The result is the same `PackageRun`
record, so back ends compare cycle for cycle.

The test bench gives every configuration input its value in its declaration
(no event at time 0): a design whose combinational logic relied on being
evaluated at time 0 would differ between the two Icarus language modes, or
from MyHDL.  Each distinct test bench is compiled once and cached beside the
converted design.
"""
import fcntl
import hashlib
import os
import shutil

from cosim.package.package_setup import PACKAGE_INPUTS, PACKAGE_OUTPUTS, PackageRun, package_signals
from cosim.sim import toolchain
from cosim.sim.batch import icarus_build, run_simulator, verilator_build, verilator_recipe
from cosim.sim.vpi import ToolchainError

ICARUS_MODES = {"icarus-2005": "-g2005", "icarus-2012": "-g2012"}


def _width(w, g):
    return 1 if w is None else w(g)


def _decl(name, width, value=None, kind="reg"):
    rng = f"[{width - 1}:0] " if width > 1 else ""
    init = f" = {width}'h{value:x}" if value is not None else ""
    return f"{kind} {rng}{name}{init};"


def tb_source(setup, module):
    """The Verilog test bench replaying `setup` (module name `pkg_tb`)."""
    g = setup.geometry
    init = setup.initial_inputs()
    L = ["`timescale 1ns/10ps", "module pkg_tb;", "reg clk = 0;", "always #5 clk = ~clk;", "reg rst = 1;"]
    for name, w in PACKAGE_INPUTS:
        L.append(_decl(name, _width(w, g), init.get(name, 0)))
    for name, w in PACKAGE_OUTPUTS:
        L.append(_decl(name, _width(w, g), kind="wire"))
    nr, nl = len(setup.retries), len(setup.late_completions)
    L += ["integer fd = 0;", "integer nneg = 0;", "integer c = 0;", "integer next_job = 0;", "integer ri = 0;",
          "integer li = 0;", "reg [8*1024-1:0] path;",
          f"reg [31:0] retry_cyc [0:{max(nr, 1) - 1}];", f"reg [31:0] retry_sl [0:{max(nr, 1) - 1}];",
          f"reg [31:0] late_cyc [0:{max(nl, 1) - 1}];", f"reg [31:0] late_sl [0:{max(nl, 1) - 1}];",
          f"reg [31:0] late_gn [0:{max(nl, 1) - 1}];"]
    ports = ["clk", "rst"] + [n for n, _ in PACKAGE_INPUTS] + [n for n, _ in PACKAGE_OUTPUTS]
    L.append(f"{module} dut({', '.join(f'.{p}({p})' for p in ports)});")
    L.append("initial begin")
    L.append('  if ($value$plusargs("out=%s", path)) fd = $fopen(path, "w");')
    for i, (cyc, slot) in enumerate(sorted(setup.retries)):
        L.append(f"  retry_cyc[{i}] = {cyc}; retry_sl[{i}] = {slot};")
    for i, (cyc, slot, gen) in enumerate(sorted(setup.late_completions)):
        L.append(f"  late_cyc[{i}] = {cyc}; late_sl[{i}] = {slot}; late_gn[{i}] = {gen};")
    L.append("end")
    L.append("always @(negedge clk) begin")
    L.append("  nneg = nneg + 1;")
    L.append("  if (nneg >= 2) begin")
    resets = sorted({c + k for c in setup.resets for k in (0, 1)})
    if resets:
        L.append(f"    case (c) {', '.join(map(str, resets))}: begin rst = 1; next_job = 0; end "
                 "default: rst = 0; endcase")
    else:
        L.append("    rst = 0;")
    sched = setup.schedule()
    if sched:
        L.append("    case (c)")
        for cyc in sorted(sched):
            sets = " ".join(f"{port} = {len(package_signals(g)[port])}'h{value:x};" for port, value in sched[cyc])
            L.append(f"      {cyc}: begin {sets} end")
        L.append("      default: ;")
        L.append("    endcase")
    L.append(f"    if (next_job < {setup.total_jobs}) begin")
    L.append(f"      s_axis_job_tvalid = 1; s_axis_job_tdata = {setup.job_work}; "
             f"s_axis_job_tid = next_job % {1 << g.job_w};")
    L.append("    end else s_axis_job_tvalid = 0;")
    L.append(f"    if (ri < {nr} && c >= retry_cyc[ri]) begin retry_valid = 1; retry_slot = retry_sl[ri]; end")
    L.append("    else retry_valid = 0;")
    L.append(f"    while (li < {nl} && late_cyc[li] < c) li = li + 1;")
    L.append(f"    if (li < {nl} && late_cyc[li] == c) begin")
    L.append("      s_late_cmpl_valid = 1; s_late_cmpl_slot = late_sl[li]; s_late_cmpl_gen = late_gn[li]; li = li + 1;")
    L.append("    end else s_late_cmpl_valid = 0;")
    L.append("  end")
    L.append("end")
    outs = [n for n, _ in PACKAGE_OUTPUTS]
    L.append("always @(posedge clk) begin")
    L.append("  if (nneg >= 2) begin")
    L.append(f'    $fwrite(fd, "%0d{" %h" * len(outs)}\\n", c, {", ".join(outs)});')
    L.append("    if (s_axis_job_tvalid && s_axis_job_tready) next_job = next_job + 1;")
    L.append("    if (retry_valid && retry_ready) ri = ri + 1;")
    L.append("    c = c + 1;")
    L.append(f"    if (phases_done >= {setup.phases} || c >= {setup.max_cycles}) begin $fclose(fd); $finish; end")
    L.append("  end")
    L.append("end")
    L.append("endmodule")
    return "\n".join(L) + "\n"


def _compile(folder, module, tb, simulator):
    recipe = verilator_recipe() if simulator == "verilator" else ICARUS_MODES[simulator]
    tag = hashlib.sha256((simulator + " " + recipe + "\n" + tb).encode()).hexdigest()[:16]
    work = os.path.join(folder, f"pkgtb-{simulator}-{tag}")
    exe = os.path.join(work, "sim" + (".vvp" if simulator.startswith("icarus") else ""))
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)     # parallel workers may build the same bench
        if os.path.exists(exe):
            return exe
        tb_path = os.path.join(work, "pkg_tb.v")
        with open(tb_path, "w") as fh:
            fh.write(tb)
        if simulator.startswith("icarus"):
            icarus_build("pkg_tb", [toolchain.icarus_source(folder, module), tb_path], exe, work,
                         [ICARUS_MODES[simulator]])
        else:
            verilator_build("pkg_tb", [os.path.join(folder, module + ".v"), tb_path], os.path.join(work, "obj"),
                            exe + ".tmp", work)
            os.replace(exe + ".tmp", exe)
    return exe


def run_package_batch(setup, simulator="icarus-2005", design=None, plusargs=(), timeout=None):
    """Run `setup` on the batched simulator and return its `PackageRun`.  design: (folder, module)
    of a package given as a file (cosim.sim.batch.design_folder: a mutated design) instead of the
    one converted at the setup's parameters; plusargs: more simulator arguments; timeout: seconds
    of wall time, then SimulatorTimeout."""
    if simulator not in (*ICARUS_MODES, "verilator"):
        raise ValueError(f"unknown batched simulator {simulator!r}; choose icarus-2005, icarus-2012 or verilator")
    if design is None:
        folder, module, _ = toolchain.build(setup.block(), **package_signals(setup.geometry), **setup.params())
    else:
        folder, module = design
    exe = _compile(folder, module, tb_source(setup, module), simulator)
    run_dir = os.path.join(os.path.dirname(exe), f"run-{os.getpid()}")
    os.makedirs(run_dir, exist_ok=True)
    out = os.path.join(run_dir, "out.txt")
    cmd = (["vvp", "-n", exe] if simulator.startswith("icarus") else [exe]) + [f"+out={out}"] + list(plusargs)
    try:
        r, _ = run_simulator(cmd, run_dir, timeout, simulator)
        if r.returncode != 0:
            raise ToolchainError(f"{simulator} run failed: {(r.stderr or r.stdout).strip()[-2000:]}")
        trace = _parse(out)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    return PackageRun(setup, simulator, trace)


def _parse(path):
    names = [n for n, _ in PACKAGE_OUTPUTS]
    trace = {n: [] for n in names}
    with open(path) as fh:
        for expect, line in enumerate(fh):
            parts = line.split()
            if int(parts[0]) != expect or len(parts) != len(names) + 1:
                raise ToolchainError(f"{path}: malformed line {expect}: {line.strip()[:200]}")
            for n, tok in zip(names, parts[1:]):
                try:
                    trace[n].append(int(tok, 16))
                except ValueError:
                    raise ToolchainError(f"{path}: cycle {expect}: output {n} is {tok!r} (X or Z)") from None
    return trace
