"""Regression seeds kept as stimulus files (tests/data): the exact frames, waits and pauses
that once failed, replayed whatever the random generator has become since.

Seeds 50420 and 50530 of the earlier generator failed on both Verilator and batched Icarus:
DATA frames on port 1 reached the node after their operation's last range was complete but
before its last RESULT frame was queued.  The model ended the operation at that admission and
dropped them as `no_operation`; the node still held the operation "in progress" and dropped
them by later rules (bad_format, bad_range).  The end of an operation now has one definition
(docs/protocol.md, "Operation lifetime": the admission that completes the last range), and
both sides drop them as `no_operation`."""
import os

import pytest

from cosim.node_harness import check, run_node
from cosim.scenarios import Scenario

DATA = os.path.join(os.path.dirname(__file__), "data")
# per seed: the counters of the port-1 frames that came after the end of their operation
EXPECTED = {50420: {(1, "dropped_no_operation"): 2, (1, "dropped_stale_generation"): 1,
                    (1, "dropped_bad_format"): 0, (1, "dropped_bad_range"): 0},
            50530: {(1, "dropped_no_operation"): 1, (1, "dropped_bad_range"): 1,
                    (1, "dropped_bad_format"): 0}}


@pytest.mark.parametrize("backend", ["batch-icarus", "batch-verilator"])
@pytest.mark.parametrize("seed", sorted(EXPECTED))
def test_kept_seed_passes(seed, backend):
    sc = Scenario.load(os.path.join(DATA, f"regress_seed{seed}.json"))
    run = run_node(sc, backend)
    report = check(sc, run)
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:5])
    for key, want in EXPECTED[seed].items():
        assert run.counters[key] == want, key


def test_scenarios_round_trip_through_files(tmp_path):
    from cosim.regress import random_scenario
    sc = random_scenario(20)            # resets by stream progress, waits on resets and on the other port
    path = tmp_path / "sc.json"
    sc.save(path)
    back = Scenario.load(path)
    for p in (0, 1):
        assert [(f.beats, f.delay, f.after) for f in back.stream(p)] == \
               [(f.beats, f.delay, f.after) for f in sc.stream(p)]
    assert back.resets == sc.resets and back.kulisch_w == sc.kulisch_w
