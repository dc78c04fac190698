"""Run the example cocotb test (node_tests.py) of the PRISM verification component under Icarus.

    python examples/cocotb_node/run.py [--dut FILE.v ...] [--top NAME] [--width 320|280]
                                       [--capacity N] [--seed N] [--operations N] [--out DIR]

Without --dut it exports the kit's node (`prism export node --width W`) and runs against it;
with --dut it runs against your Verilog, which must have the node's ports (docs/protocol.md)
and be built with KULISCH_W = --width (or declare KULISCH_W as a parameter).  The design is
compiled once per content by cocotb's runner (`iverilog -g2012`); the simulation log, the
results and the coverage report go to --out.  The last line printed is PASS or FAIL; the
exit status is 0, 1 on FAIL, 2 with a one-line message on a bad argument or a design that
cannot be built.
"""
import argparse
import contextlib
import fcntl
import filecmp
import hashlib
import io
import itertools
import json
import logging
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# the test module and the kit, for this process and for the simulator's Python (cocotb's
# runner passes sys.path on as PYTHONPATH)
for path in (ROOT, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT  # noqa: E402 (after the path)
from spec.frames import MAX_CAPACITY  # noqa: E402

TEST_MODULE = "node_tests"
TIMESCALE = ("1ns", "1ps")      # for modules without `timescale (the test's clock has a 10 ns period)


class UsageError(Exception):
    """A bad argument or an unusable design: one line, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def parse(argv):
    p = OneLineParser(prog="run.py", description="cocotb test of a PRISM node with the kit's verification component")
    p.add_argument("--dut", action="append", metavar="FILE.v", help="your Verilog (repeat for more files); "
                                                                      "default: the kit's node, exported")
    p.add_argument("--top", help="top module of --dut (default: the one module no other instantiates)")
    p.add_argument("--width", type=int, default=KULISCH_WIDTH_DEFAULT,
                   help=f"KULISCH_W of the design: {' or '.join(map(str, KULISCH_WIDTH_CHOICES))} "
                        f"(default {KULISCH_WIDTH_DEFAULT})")
    p.add_argument("--capacity", type=int, default=MAX_CAPACITY,
                   help=f"CAPACITY of the design (default {MAX_CAPACITY})")
    p.add_argument("--seed", type=int, default=1, help="seed of values, pauses and random operations")
    p.add_argument("--operations", type=int, default=0, help="random operations after the fixed ones (default 0)")
    p.add_argument("--out", metavar="DIR", help="results, simulation log and coverage (default build/cocotb_node/run)")
    args = p.parse_args(argv)
    if args.width not in KULISCH_WIDTH_CHOICES:
        raise UsageError(f"--width {args.width}: KULISCH_W is {' or '.join(map(str, KULISCH_WIDTH_CHOICES))}")
    if args.operations < 0:
        raise UsageError(f"--operations {args.operations}: give 0 or more")
    if not 1 <= args.capacity <= MAX_CAPACITY:      # the kit's node refuses more (prism export says which)
        raise UsageError(f"--capacity {args.capacity}: 1 .. {MAX_CAPACITY}")
    if args.top and not args.dut:
        raise UsageError("--top names a module of --dut")
    return args


def _locked(folder):
    """An exclusive lock on a build folder (parallel runs and test workers share it)."""
    os.makedirs(folder, exist_ok=True)
    lock = open(os.path.join(folder, ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def _same_design(a, b):
    """Whether two converted files hold the same design: equal but for the conversion date
    that MyHDL writes into the header comment."""
    if filecmp.cmp(a, b, shallow=False):
        return True
    with open(a) as fa, open(b) as fb:
        return all(la == lb or (la.startswith("// Date:") and lb.startswith("// Date:")) for la, lb in
                   itertools.zip_longest(fa, fb))


def kit_node(width, capacity):
    """The kit's node exported as Verilog: (sources, top, parameters, build folder, label).

    The folder, <build>/cocotb/prism_node-w<W> with export/ and sim/, is the one
    tests/node/test_cocotb_client.py uses, so the two share one export and one compiled
    simulation; the file is replaced only when the design changed (not when it was merely
    converted again), which keeps the compiled simulation: cocotb's runner rebuilds when a
    source is newer."""
    from cosim.cli import main as prism
    from cosim.sim.toolchain import build_root

    name = f"prism_node-w{width}" + ("" if capacity == MAX_CAPACITY else f"-c{capacity}")
    root = os.path.join(build_root(), "cocotb", name)
    with _locked(root):
        current, fresh = os.path.join(root, "export"), os.path.join(root, f"export-{os.getpid()}")
        said = io.StringIO()            # prism export's own line would come before ours
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            status = prism(["export", "node", "-o", fresh, "--width", str(width), "--capacity", str(capacity),
                            "--no-check"])
        if status != 0:
            shutil.rmtree(fresh, ignore_errors=True)
            lines = said.getvalue().strip().splitlines()
            raise UsageError(lines[-1] if lines else f"prism export node failed (status {status})")
        verilog = os.path.join(current, "prism_node.v")
        if os.path.exists(verilog) and _same_design(verilog, os.path.join(fresh, "prism_node.v")):
            shutil.rmtree(fresh)
        else:
            shutil.rmtree(current, ignore_errors=True)
            os.replace(fresh, current)
    return [verilog], "prism_node", {}, root, f"the kit's node ({verilog})"


def _top_module(texts, top):
    """The top module among the files' modules: `top` if given, else the one module no other
    instantiates.  A line scan, not a Verilog parser: the kit's interface reader
    (cosim/sim/verilog_interface.py) takes seconds on a flat 12 MB module such as the exported
    node, and the environment checks the ports themselves once the simulation starts."""
    defined = {}
    for path, text in texts.items():
        for name in re.findall(r"^\s*module\s+([A-Za-z_]\w*)", text, re.M):
            defined.setdefault(name, path)
    if not defined:
        raise UsageError(f"no module in {', '.join(texts)}")
    if top is not None:
        if top not in defined:
            raise UsageError(f"--top {top}: no such module (modules: {', '.join(sorted(defined))})")
        return top
    used = {name for name in defined for text in texts.values()
            if re.search(rf"^\s*{re.escape(name)}\s+(?:#\s*\(|[A-Za-z_]\w*\s*\()", text, re.M)}
    roots = [name for name in defined if name not in used]
    if len(roots) != 1:
        raise UsageError(f"cannot tell the top module among {', '.join(sorted(roots or defined))}: give --top NAME")
    return roots[0]


def _declared_parameters(text, top):
    """Which of the node's build parameters module `top` declares (then they are set per run)."""
    start = re.search(rf"^\s*module\s+{re.escape(top)}\b", text, re.M)
    end = text.find("endmodule", start.end())
    module = text[start.start():end if end >= 0 else len(text)]
    return [name for name in ("KULISCH_W", "CAPACITY") if re.search(rf"\bparameter\b[^;]*?\b{name}\b", module)]


def user_design(paths, top, width, capacity):
    """Your Verilog: (sources, top, parameters, build folder, label).  The files are copied into a
    folder keyed by their contents, so an unchanged design is compiled once however often it is
    written again (cocotb's runner compares file times)."""
    from cosim.sim.toolchain import build_root

    contents = {}
    for path in paths:
        try:
            with open(path, "rb") as fh:
                contents[os.path.abspath(path)] = fh.read()
        except OSError as e:
            raise UsageError(f"--dut {path}: {e.strerror}") from None
    texts = {path: data.decode(errors="replace") for path, data in contents.items()}
    top = _top_module(texts, top)
    text = next(t for t in texts.values() if re.search(rf"^\s*module\s+{re.escape(top)}\b", t, re.M))
    values = {"KULISCH_W": width, "CAPACITY": capacity}
    parameters = {name: values[name] for name in _declared_parameters(text, top)}
    digest = hashlib.sha256(repr((top, sorted(parameters.items()), TIMESCALE)).encode())
    for data in contents.values():
        digest.update(hashlib.sha256(data).digest())
    root = os.path.join(build_root(), "cocotb_node", f"{top}-{digest.hexdigest()[:16]}")
    copies = []
    with _locked(root):
        for k, (path, data) in enumerate(contents.items()):
            copy = os.path.join(root, "sources", f"{k}-{os.path.basename(path)}")
            if not os.path.exists(copy):
                os.makedirs(os.path.dirname(copy), exist_ok=True)
                with open(copy + ".tmp", "wb") as fh:
                    fh.write(data)
                os.replace(copy + ".tmp", copy)
            copies.append(copy)
    return copies, top, parameters, root, ", ".join(paths)


def compile_design(sources, top, parameters, root, label):
    """Compile with cocotb's Icarus runner into root/sim (skipped when up to date)."""
    from cocotb_tools.runner import get_runner

    runner = get_runner("icarus")
    logging.getLogger(type(runner).__qualname__).setLevel(logging.ERROR)    # "Skipping compilation" is the point
    sim_dir = os.path.join(root, "sim")
    log = os.path.join(root, "build.log")
    with _locked(root):
        try:
            runner.build(sources=sources, hdl_toplevel=top, build_dir=sim_dir, parameters=parameters, log_file=log,
                         timescale=TIMESCALE)
        except SystemExit as e:         # the runner's way of saying iverilog is not installed
            raise UsageError(str(e)) from None
        except RuntimeError:
            errors = []
            if os.path.exists(log):
                with open(log, errors="replace") as fh:
                    errors = [line.strip() for line in fh if "error" in line.lower()]
            first = errors[0].replace(os.path.join(root, "sources") + os.sep, "") if errors else f"see {log}"
            raise UsageError(f"iverilog could not compile {label}: {first}") from None
    return runner, sim_dir


def simulate(runner, sim_dir, top, out, settings):
    """Run the cocotb test; (passed, failure messages)."""
    os.makedirs(out, exist_ok=True)
    results = os.path.join(out, "results.xml")
    env = {f"PRISM_VIP_{k.upper()}": str(v) for k, v in settings.items()}
    env["PRISM_VIP_OUT"] = out
    # cocotb rewrites the asserts of every module the simulator imports unless told which
    env["COCOTB_REWRITE_ASSERTION_FILES"] = f"{TEST_MODULE}.py"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        runner.test(test_module=TEST_MODULE, hdl_toplevel=top, build_dir=sim_dir, test_dir=out,
                    results_xml=results, extra_env=env, log_file=os.path.join(out, "sim.log"))
    except SystemExit:
        pass                     # the runner exits on a failed test; the results say why
    if not os.path.exists(results):
        return False, [f"the simulation ended without results (see {os.path.join(out, 'sim.log')})"]
    cases = list(ET.parse(results).getroot().iter("testcase"))
    problems = [e for c in cases for e in c if e.tag in ("failure", "error")]
    messages = [(e.get("message") or e.text or "failed").strip() for e in problems]
    return bool(cases) and not problems, messages


def main(argv=None):
    try:
        args = parse(argv)
        if args.dut:
            sources, top, parameters, root, label = user_design(args.dut, args.top, args.width, args.capacity)
        else:
            sources, top, parameters, root, label = kit_node(args.width, args.capacity)
        runner, sim_dir = compile_design(sources, top, parameters, root, label)
    except UsageError as e:
        print(f"run.py: error: {e}", file=sys.stderr)
        return 2
    from cosim.sim.toolchain import build_root
    out = os.path.abspath(args.out or os.path.join(build_root(), "cocotb_node", "run"))
    passed, messages = simulate(runner, sim_dir, top, out, dict(kulisch_w=args.width, capacity=args.capacity,
                                                                  seed=args.seed, operations=args.operations))
    print(f"design: {top}, {label}, KULISCH_W {args.width}; log and coverage in {out}")
    coverage = os.path.join(out, "coverage.json")
    if os.path.exists(coverage):
        with open(coverage) as fh:
            cov = json.load(fh)
        print(f"functional coverage {cov['percent']:.1f}% ({cov['bins_hit']}/{cov['bins']} bins; "
              f"holes in {os.path.join(out, 'coverage.md')})")
    for message in messages:
        print(message)
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
