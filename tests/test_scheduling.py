"""The suite's own scheduling: the longest tests first, handed to the workers one at a time."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_mix(tmp_path, durations, sleeps, n=80):
    """Run n tests (test k sleeps sleeps(k) seconds) on two workers with the suite's conftest
    and the given recorded durations; {k: the worker that ran test k}."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(open(os.path.join(ROOT, "tests", "conftest.py")).read())
    (tests / "test_mix.py").write_text(
        "import os, time, pytest\n"
        f"SLEEPS = {[sleeps(k) for k in range(n)]!r}\n"
        f"@pytest.mark.parametrize('k', range({n}))\n"
        "def test_k(k):\n"
        "    time.sleep(SLEEPS[k])\n"
        "    with open(os.path.join(os.path.dirname(__file__), f'ran-{k}'), 'w') as fh:\n"
        "        fh.write(os.environ['PYTEST_XDIST_WORKER'])\n")
    (tests / "durations.json").write_text(json.dumps({f"tests/test_mix.py::test_k[{k}]": durations(k)
                                                      for k in range(n)}))
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider", "tests"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return {k: (tests / f"ran-{k}").read_text() for k in range(n)}


def test_long_tests_are_shared_and_the_two_longest_start_on_different_workers(tmp_path):
    """Ten tests recorded as long (100 s down to 91 s) and seventy as short, on two workers:
    each worker runs several of the long ones (xdist's default first chunk, an eighth of the
    suite, gave the first worker a run of consecutive tests, all the long ones after the sort),
    and of the two tests each worker gets first, the longest goes with the fourth longest and
    the second with the third (before, the first worker got the two longest: the node's two
    Verilator builds, one after the other)."""
    worker_of = _run_mix(tmp_path, lambda k: 100.0 - k if k < 10 else 0.1, lambda k: 0.3 if k < 10 else 0.0)
    long_per_worker = [sum(1 for k in range(10) if worker_of[k] == w) for w in ("gw0", "gw1")]
    assert min(long_per_worker) >= 3, long_per_worker
    assert worker_of[0] != worker_of[1]
    assert worker_of[0] == worker_of[3] and worker_of[1] == worker_of[2]
