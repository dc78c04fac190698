"""The suite's own scheduling: the longest tests first, handed to the workers one at a time."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_recorded_longest_tests_are_not_all_given_to_one_worker(tmp_path):
    """Ten tests recorded as long and seventy as short, on two workers: each worker runs several
    of the long ones.  (xdist's default first chunk, an eighth of the suite, gave the first
    worker a run of consecutive tests, all the long ones after the sort.)"""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text(open(os.path.join(ROOT, "tests", "conftest.py")).read())
    (tests / "test_mix.py").write_text(
        "import os, time, pytest\n"
        "@pytest.mark.parametrize('k', range(80))\n"
        "def test_k(k):\n"
        "    time.sleep(0.3 if k < 10 else 0.0)\n"
        "    with open(os.path.join(os.path.dirname(__file__), f'ran-{k}'), 'w') as fh:\n"
        "        fh.write(os.environ['PYTEST_XDIST_WORKER'])\n")
    durations = {f"tests/test_mix.py::test_k[{k}]": (30.0 if k < 10 else 0.1) for k in range(80)}
    (tests / "durations.json").write_text(json.dumps(durations))
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider", "tests"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    worker_of = {k: (tests / f"ran-{k}").read_text() for k in range(80)}
    long_per_worker = [sum(1 for k in range(10) if worker_of[k] == w) for w in ("gw0", "gw1")]
    assert min(long_per_worker) >= 3, long_per_worker
