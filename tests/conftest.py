"""Shared fixtures.

`backend` runs a block test on 'myhdl+icarus' (cosim/sim/replay.py): the MyHDL block runs
the test, then its converted Verilog replays the recorded run in batched Icarus (-g2012) and
every output is compared on every cycle.  One run checks the test's assertions on the MyHDL
block and the Verilog against it, where running the test once per simulator paid for it twice.
PRISM_TEST_BACKENDS=myhdl,icarus (a comma-separated choice of myhdl, icarus, myhdl+icarus)
runs the tests on those back ends instead; 'icarus' is the per-cycle co-simulation.
`--waves DIR` writes one VCD per test into DIR, on any back end.

Every test that draws data draws it from a fixed seed; hypothesis's draws are fixed too (the
"prism" profile below; PRISM_HYPOTHESIS_PROFILE=default explores fresh examples instead).

Order: the longest tests run first, by the durations recorded in tests/durations.json
(`--record-durations tests/durations.json` rewrites it from a run), so that with several
workers no long test starts last while the others have nothing left to do.  A test with no
record takes its module's mean (a new test in a slow module is probably slow).
"""
import inspect
import json
import os
import re
import subprocess
from collections import defaultdict

import pytest

# Verilator builds of the tests compile their C++ at -O0: the node's build takes 40 % of the CPU
# time of -O2 and the suite's runs are short (cosim/sim/batch.py has the figures).  Set before
# anything imports cosim.sim.batch; PRISM_VERILATOR_OPT=-O2 tests the optimised build instead.
os.environ.setdefault("PRISM_VERILATOR_OPT", "-O0")

from cosim.sim import toolchain  # noqa: E402

toolchain.collect_less_often()

# Property-based tests draw the same examples on every run and machine (a failure found once
# is found again, and a green run means the same inputs passed): hypothesis derives its draws
# from each test's name instead of a fresh random seed, and keeps no example database.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("prism", derandomize=True, database=None)
_hypothesis_settings.load_profile(os.environ.get("PRISM_HYPOTHESIS_PROFILE", "prism"))


def pytest_addoption(parser):
    parser.addoption("--waves", metavar="DIR", default=None,
                     help="write a VCD waveform per test into DIR")
    parser.addoption("--record-durations", metavar="FILE", default=None,
                     help="write each test's duration (setup + call + teardown, seconds) as JSON into FILE")


DURATIONS = os.path.join(os.path.dirname(__file__), "durations.json")


def _recorded_durations():
    try:
        with open(DURATIONS) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def pytest_configure(config):
    # pytest-xdist's load scheduling hands each worker a run of consecutive tests at the start (an
    # eighth of the suite each) and later chunks of up to a quarter of what is left: after the
    # longest-first sort the first worker got the 169 longest tests, 1,762 s of the suite's
    # 2,265 s, and the run took as long as that worker.  One test at a time keeps both busy.
    if getattr(config.option, "maxschedchunk", "absent") is None:
        config.option.maxschedchunk = 1


def pytest_collection_modifyitems(config, items):
    recorded = _recorded_durations()
    if not recorded:
        return
    per_module = defaultdict(list)
    for nodeid, seconds in recorded.items():
        per_module[nodeid.split("::")[0]].append(seconds)
    module_mean = {m: sum(v) / len(v) for m, v in per_module.items()}

    def expected(item):
        return recorded.get(item.nodeid, module_mean.get(item.nodeid.split("::")[0], 1.0))
    items.sort(key=expected, reverse=True)      # stable: equal estimates keep their collection order
    # xdist's first hand-out gives worker k the tests at 2k and 2k+1: pair the longest with the
    # shortest of the first 2n, so the longest tests (the two Verilator builds of the node) do not
    # all start on one worker while the others run shorter ones
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    if workers > 1 and len(items) >= 4 * workers:
        head = items[:2 * workers]
        items[:2 * workers] = [t for k in range(workers) for t in (head[k], head[2 * workers - 1 - k])]
        # The node's Verilator build (conversion included, VERILATOR_BUILD_S of a cold run) is made by
        # the first test that needs it, under a lock: another worker that takes such a test meanwhile
        # waits idle (65 s of a 477 s cold run).  The first of them keeps its place and pays for the
        # build; the others follow enough other tests to keep the other workers busy until it is
        # built.  A warm run loses nothing: the same tests in another order.
        needs = [t for t in items if _needs_batch_verilator(t)]
        if len(needs) > 1:
            later = {id(t) for t in needs[1:]}
            others = [t for t in items if id(t) not in later]
            busy, cut = 0.0, len(others)
            for i, t in enumerate(others):
                busy += 0.0 if t is needs[0] else expected(t)
                # (the builder's worker also takes the second test of the first hand-out, so the
                # others' share is counted twice over)
                if busy >= VERILATOR_BUILD_S * workers:
                    cut = i + 1
                    break
            items[:] = others[:cut] + needs[1:] + others[cut:]


VERILATOR_BUILD_S = 95          # the node's conversion and -O0 Verilator build in a cold run (measured 80-95 s)


def _needs_batch_verilator(item):
    """The test runs something on batched Verilator (the node's build, or another design's): its
    id, its function or one of its fixtures names the back end."""
    if "batch-verilator" in item.nodeid:
        return True
    funcs = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        for fixture in (info.name2fixturedefs.get(name, ()) if info else ()):
            funcs.append(fixture.func)
    for func in funcs:
        try:
            if func is not None and "batch-verilator" in inspect.getsource(func):
                return True
        except (OSError, TypeError):
            continue
    return False


_durations = defaultdict(float)


def pytest_runtest_logreport(report):
    # runs in the controlling process under xdist too (the workers' reports are replayed there)
    _durations[report.nodeid] += report.duration


def pytest_sessionfinish(session):
    path = session.config.getoption("--record-durations")
    if path and not hasattr(session.config, "workerinput") and _durations:
        with open(path, "w") as fh:
            json.dump({k: round(v, 2) for k, v in sorted(_durations.items())}, fh, indent=0)
            fh.write("\n")


TEST_BACKENDS = tuple(os.environ.get("PRISM_TEST_BACKENDS", "myhdl+icarus").split(","))
_unknown = set(TEST_BACKENDS) - set(toolchain.BACKENDS)
if _unknown:
    raise pytest.UsageError(f"PRISM_TEST_BACKENDS: unknown back end(s) {sorted(_unknown)}; "
                            f"choose from {', '.join(toolchain.BACKENDS)}")


@pytest.fixture(params=TEST_BACKENDS)
def backend(request):
    return request.param


@pytest.fixture
def compiles_everywhere(tmp_path):
    """convert(block, *signals, **parameters): the block's Verilog (cosim.sim.toolchain.build)
    must compile under iverilog -g2005 and -g2012 and pass Verilator's lint with no error;
    returns the Verilog text."""
    def convert(block_func, *args, **kwargs):
        folder, module, _ = toolchain.build(block_func, *args, **kwargs)
        design = os.path.join(folder, module + ".v")
        for mode in ("-g2005", "-g2012"):
            r = subprocess.run(["iverilog", mode, "-o", str(tmp_path / "a.vvp"), "-s", module, design],
                               capture_output=True, text=True)
            assert r.returncode == 0, (design, mode, r.stderr[-2000:])
        r = subprocess.run(["verilator", "--lint-only", "-Wno-fatal", "-Wno-lint", "-Wno-style", "--top-module", module,
                            design], capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 0 and "%Error" not in r.stderr, (design, r.stderr[-2000:])
        with open(design) as fh:
            return fh.read()
    return convert


@pytest.fixture
def prism_refuses(capsys):
    """refuse(argv): runs the `prism` command line on arguments it must refuse and checks the
    refusal every sub-command promises (exit status 2, one line on stderr, no traceback);
    returns that line."""
    from cosim.cli import main

    def refuse(argv):
        try:
            code = main(argv)
        except SystemExit as e:         # argparse's own errors leave through exit()
            code = e.code
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        return err
    return refuse


@pytest.fixture(autouse=True)
def _waves(request):
    folder = request.config.getoption("--waves")
    if not folder:
        yield None
        return
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    with toolchain.waves(os.path.join(folder, name + ".vcd")) as path:
        yield path
