"""The node driven by a cocotb client written from docs/protocol.md alone.

`prism export node` writes the node's Verilog; cocotb's Python runner
(cocotb_tools.runner) compiles it with Icarus in cocotb's default mode
(`iverilog -g2012`) and runs the cocotb tests of tests/node/cocotb_client/
(cocotb 2 + cocotbext-axi sources and sinks with pause generators on all four
streams).  Every cocotb test runs in a simulation of its own, from power-on.
The client (tests/node/cocotb_client/) imports nothing of the kit: its encoders,
decoders, expected arithmetic and scoreboard model come from the document.
"""
import ast
import fcntl
import filecmp
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from cosim.sim import toolchain
from cosim.cli import main as prism

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cocotb_client")
if CLIENT not in sys.path:
    sys.path.insert(0, CLIENT)        # the simulator's Python inherits sys.path (cocotb's runner)

import prism_reference as R  # noqa: E402
import prism_wire as W  # noqa: E402


# Assertion rewriting (cocotb uses pytest's) for the client's own modules only: by default
# cocotb rewrites every module the simulator's Python imports, numpy and cocotbext-axi
# included, again in every simulation when byte-code is not written.  The simulator uses
# pytest for nothing else, so pytest's plugins are not loaded there.
CLIENT_MODULES = " ".join(sorted(n for n in os.listdir(CLIENT) if n.endswith(".py")))
SIMULATOR_ENV = {"COCOTB_REWRITE_ASSERTION_FILES": CLIENT_MODULES, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

_simulations = {}       # width -> (runner, build folder): exported and compiled once per process


def _node_simulation(width):
    """(runner, build folder) of the exported node compiled by cocotb's Icarus runner."""
    if width not in _simulations:
        _simulations[width] = _export_and_compile(width)
    return _simulations[width]


def _export_and_compile(width):
    """Export the node and compile it with cocotb's Icarus runner; one export and one
    compilation per design, shared by parallel test workers."""
    from cocotb_tools.runner import get_runner

    root = os.path.join(toolchain.build_root(), "cocotb", f"prism_node-w{width}")
    os.makedirs(root, exist_ok=True)
    sim_dir = os.path.join(root, "sim")
    runner = get_runner("icarus")
    with open(os.path.join(root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        export_dir, fresh = os.path.join(root, "export"), os.path.join(root, f"export-{os.getpid()}")
        rc = prism(["export", "node", "-o", fresh, "--width", str(width), "--no-check"])
        assert rc == 0, "prism export node failed"
        verilog = os.path.join(export_dir, "prism_node.v")
        if os.path.exists(verilog) and filecmp.cmp(verilog, os.path.join(fresh, "prism_node.v"), shallow=False):
            shutil.rmtree(fresh)          # unchanged design: keep the file, and the compiled simulation
        else:
            shutil.rmtree(export_dir, ignore_errors=True)
            os.replace(fresh, export_dir)
        runner.build(sources=[verilog], hdl_toplevel="prism_node", build_dir=sim_dir)
    return runner, sim_dir


def run_cocotb(testcase, tmp_path, width=320, **settings):
    """Run one cocotb test in a fresh simulation; fail with the cocotb failure message."""
    runner, sim_dir = _node_simulation(width)
    results = str(tmp_path / "results.xml")
    env = dict(SIMULATOR_ENV)
    env.update({f"PRISM_COCOTB_{k.upper()}": str(v) for k, v in settings.items()})
    env["PRISM_COCOTB_KULISCH_W"] = str(width)
    try:
        runner.test(test_module="test_node_cocotb", hdl_toplevel="prism_node", testcase=testcase,
                    build_dir=sim_dir, test_dir=str(tmp_path), results_xml=results, extra_env=env)
    except SystemExit:
        pass                               # the runner exits on a failed test; the results say why
    assert os.path.exists(results), f"the simulation of {testcase} ended without results (see its output)"
    cases = [c for c in ET.parse(results).getroot().iter("testcase") if c.get("name") == testcase]
    assert len(cases) == 1, f"{testcase}: {len(cases)} results"
    problems = [e for e in cases[0] if e.tag in ("failure", "error", "skipped")]
    if problems:
        msg = "\n".join((e.get("message") or "") + "\n" + (e.text or "") for e in problems)
        pytest.fail(f"cocotb {testcase}: {msg.strip()[-4000:]}", pytrace=False)


# ----------------------------------------------------------------------------------- the node
POWER_ON = [(p, f) for p in ("KULISCH_FIXED", "FP32_ARRIVAL") for f in ("INT8", "FP16", "BF16", "FP32", "EXACT",
                                                                        "AUTO")
            if not (p == "FP32_ARRIVAL" and f == "EXACT")]


# one result format per policy in the default run (the kit's own power-on test, tests/node/test_power_on.py,
# takes every format); the client's other nine in the slow set
DEFAULT_POWER_ON = (("KULISCH_FIXED", "EXACT"), ("FP32_ARRIVAL", "AUTO"))


@pytest.mark.parametrize("policy,fmt", [c if c in DEFAULT_POWER_ON else pytest.param(*c, marks=pytest.mark.slow)
                                        for c in POWER_ON])
def test_power_on_first_operation(policy, fmt, tmp_path):
    run_cocotb("power_on_first_operation", tmp_path, case=f"{policy}:{fmt}")


SCENARIOS = ("backpressure_operations", "control_requests", "data_drops", "abort_requests", "end_window",
             "reset_phases_kulisch", "reset_phases_fp32_arrival", "exact_sums")


# in the slow set: end_window (28 s: requests at every cycle of an operation's end, which the hostile
# regression's end-window draws also reach) and the resets in every phase under both policies (21 s
# and 23 s; the default run's regression seeds draw resets in every window, and the cocotb
# component's example resets between random operations)
SLOW_SCENARIOS = ("end_window", "reset_phases_kulisch", "reset_phases_fp32_arrival")


@pytest.mark.parametrize("testcase", [pytest.param(t, marks=pytest.mark.slow) if t in SLOW_SCENARIOS else t
                                      for t in SCENARIOS])
def test_scenario(testcase, tmp_path):
    run_cocotb(testcase, tmp_path)


@pytest.mark.slow          # the 280-bit export and its build: 23 s of a cold run (the regression covers W = 280)
def test_exact_sums_280(tmp_path):
    """The 280-bit build: eight near-largest contributions overflow the accumulator, and the
    EXACT beat still carries the whole sum."""
    run_cocotb("exact_sums", tmp_path, width=280)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3, 4])
def test_backpressure_operations_long(seed, tmp_path):
    run_cocotb("backpressure_operations", tmp_path, seed=seed, ops=40)


# ----------------------------------------------------------------------------------- the client itself
def test_client_imports_nothing_of_the_kit():
    kit = {"golden", "cosim", "hdl", "ckernels", "bench"}
    for name in sorted(os.listdir(CLIENT)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(CLIENT, name)) as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for m in mods:
                assert m.split(".")[0] not in kit, f"{name} imports {m}"


def test_pytest_never_collects_the_cocotb_module():
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", CLIENT],
                       capture_output=True, text=True, cwd=os.path.dirname(CLIENT))
    assert r.returncode == 5, r.stdout + r.stderr          # 5: no tests collected, and no import error
    assert "error" not in (r.stdout + r.stderr).lower()


def _f32(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def test_reference_rounding_against_numpy():
    """The client's Fraction rounding agrees with numpy's IEEE conversions and adds."""
    rng = np.random.default_rng(14)
    f32 = np.concatenate([rng.integers(0, 1 << 32, 4000, dtype=np.uint64).astype(np.uint32),
                          (rng.standard_normal(4000) * np.exp2(rng.integers(-30, 18, 4000))).astype(np.float32)
                          .view(np.uint32)])
    with np.errstate(over="ignore", invalid="ignore"):
        f16 = f32.view(np.float32).astype(np.float16).view(np.uint16)
    for p, h in zip(f32.tolist(), f16.tolist()):
        if not np.isnan(np.array([p], np.uint32).view(np.float32)[0]):
            assert R.fp32_to(W.FP16, p) == h, hex(p)
    # FP16 patterns (every 5th, and every subnormal and special) widen exactly (numpy) and round back
    for h in sorted(set(range(0, 1 << 16, 5)) | set(range(0x400)) | set(range(0x7C00, 0x7C10))):
        x = np.array([h], np.uint16).view(np.float16)[0]
        if np.isnan(x):
            assert R.to_fp32(W.FP16, h) == 0x7FC00000
            continue
        assert R.to_fp32(W.FP16, h) == _f32(x.astype(np.float32))
        assert R.fp32_to(W.FP16, R.to_fp32(W.FP16, h)) == h
    # KULISCH_FIXED of two FP16 values = their float64 sum (exact) rounded once by numpy
    a, b = rng.integers(0, 0x7C00, 3000), rng.integers(0, 0x7C00, 3000)
    sign = rng.integers(0, 2, (2, 3000)) << 15
    for x, y in zip((a | sign[0]).tolist(), (b | sign[1]).tolist()):
        exact = np.float64(np.array([x], np.uint16).view(np.float16)[0]) + \
            np.float64(np.array([y], np.uint16).view(np.float16)[0])
        want = _f32(np.float32(exact)) if exact != 0 else 0       # an exact zero is +0
        assert R.kulisch_result(W.FP32, [(W.FP16, x), (W.FP16, y)]) == want
    # BF16 is the top half of FP32: rounding to it matches a hand-rolled RNE on the bits
    for p in f32.tolist():
        if (p >> 23) & 0xFF == 0xFF:
            continue
        low, top = p & 0xFFFF, p >> 16
        up = low > 0x8000 or (low == 0x8000 and top & 1)
        assert R.fp32_to(W.BF16, p) == top + up, hex(p)


def test_reference_specials_and_int8():
    nan, pinf, ninf = 0x7FC00000, 0x7F800000, 0xFF800000
    for fmt in (W.INT8, W.FP16, W.BF16, W.FP32):
        assert R.kulisch_result(fmt, [(W.FP32, nan), (W.FP32, 0x3F800000)]) == R.CANONICAL_NAN[fmt]
        assert R.kulisch_result(fmt, [(W.FP32, pinf), (W.FP32, ninf)]) == R.CANONICAL_NAN[fmt]
        assert R.kulisch_result(fmt, [(W.FP32, pinf), (W.FP32, 0xFF7FFFFF)]) == R.POS_INF[fmt]
        assert R.kulisch_result(fmt, [(W.FP32, 0x80000000), (W.FP32, 0x80000000)]) == 0     # exact zero: +0
    assert R.arrival_result(W.FP32, [(W.FP32, 0x80000000), (W.FP32, 0x80000000)]) == 0x80000000
    assert R.arrival_result(W.FP16, [(W.FP32, 0x80000000)]) == 0x8000
    # INT8: nearest integer, ties to even, saturated
    half = lambda v: R.round_exact(W.FP16, R.Fraction(v))
    for v, want in ((2.5, 2), (3.5, 4), (-2.5, -2), (127.5, 127), (-128.5, -128), (300, 127), (-0.5, 0)):
        assert R.kulisch_result(W.INT8, [(W.FP16, half(v))]) == want & 0xFF, v
    # AUTO: -0 is not INT8, the canonical NaN and inf are FP16, 2^-30 needs BF16, 1 + 2^-20 FP32
    assert R.auto_format([_f32(3.0)]) == W.INT8
    assert R.auto_format([0x80000000]) == W.FP16
    assert R.auto_format([nan, pinf]) == W.FP16
    assert R.auto_format([_f32(2.0 ** -30)]) == W.BF16
    assert R.auto_format([_f32(1 + 2.0 ** -20)]) == W.FP32


def test_wire_fields_do_not_overlap():
    """Each STAGE field set alone to its largest value covers its own bits, no other field's."""
    base = W.stage(0, 0, 0, 0, 0, 0, 0, 0, mode=0)[0]
    widths = dict(op_id=8, generation=16, policy=2, in_fmt=2, out_fmt=3, count=13, contributors=8, recipients=2,
                  mode=1)
    seen = 0
    for name, width in widths.items():
        args = dict.fromkeys(widths, 0)
        args[name] = (1 << width) - 1
        mask = W.stage(**args)[0] ^ base
        assert bin(mask).count("1") == width and not mask & seen, name
        seen |= mask
    frame = W.data(3, 4, 5, W.FP16, 32, list(range(40)))
    assert len(frame) == 1 + 2 and W.unpack(W.FP16, frame[1:], 40) == list(range(40))
    assert W.from_bytes(W.to_bytes(frame)) == frame
