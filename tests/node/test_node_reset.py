"""Reset in every phase of an operation, under both policies: whatever the reset interrupts,
the next operation on the same ranges is bit-exact (nothing of the interrupted one is left in
the FP32 banks, the Kulisch stores, the range counts, the result store or the egress).

Each reset is placed by stream progress (cosim.sim.batch.ResetEvent), so it lands in the intended
phase whatever the timing; each test also checks from the monitors that it did."""
import random

import pytest

from cosim.sim.batch import ResetEvent
from cosim.node.node_harness import check, run_node
from cosim.node.scenarios import Operation, build, random_elements
from golden.node import protocol as P

E = 512                      # two RESULT blocks
# the design's behaviour is the point: the faster simulator (tests/node/test_regress.py holds
# batched Verilator and Icarus to the same frames, cycles and verdict; the test below runs Icarus)
SCENARIO_BACKEND = "batch-verilator"
PHASES = ("mid_data", "admitted", "draining", "sending")


def results_of(run, op_id):
    return [f for p in (0, 1) for f in run.tx[p]
            if P.get_field(f.beats[0], "class") == P.CLASS_RESULT and P.get_field(f.beats[0], "op_id") == op_id]


def reset_scenario(policy, phase, seed=11):
    """Operation 1 interrupted by a reset in `phase`, then operation 2 on the same ranges."""
    rng = random.Random(seed)
    first = Operation(1, 1, policy, "fp32", "fp32", random_elements(rng, "fp32", (2, E)), frame_elems=256)
    second = Operation(2, 5, policy, "fp32", "fp32", random_elements(rng, "fp32", (2, E)), frame_elems=256)
    sink_pause = 0.6 if phase == "sending" else 0.0
    sc = build([first], seed=seed, sink_pause=sink_pause)
    # port 0: STAGE, COMMIT, then contributor 0's two 17-beat DATA frames; port 1: contributor 1's
    if phase == "mid_data":
        event = ResetEvent("in 0", 2, 8 + 8)          # 8 beats into the first DATA frame
    elif phase == "admitted":
        sc.frames[1][0].delay += 3000                 # contributor 1 is late: only contributor 0 is in
        event = ResetEvent("in 0", 4, 20)
    elif phase == "draining":
        event = ResetEvent("in 1", 2, 3)              # every DATA frame is in; RESULT frames are being formed
    else:
        event = ResetEvent("out 1", 5, 0)             # in the middle of a RESULT frame on TX port 1
    k = sc.add_reset(event)
    build([second], scenario=sc, after_reset=k)
    sc.sink_pause = {0: sink_pause, 1: sink_pause}
    return sc


@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
@pytest.mark.parametrize("phase", PHASES)
def test_reset_in_every_phase_leaves_nothing_behind(policy, phase):
    sc = reset_scenario(policy, phase)
    run = run_node(sc, SCENARIO_BACKEND)
    report = check(sc, run)
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:8])
    assert len(run.resets) == 1
    reset = run.resets[0]
    # the reset hit the intended phase (what the monitors saw)
    data_ends = [f.cycles[-1] for p in (0, 1) for f in run.rx[p]
                 if P.get_field(f.beats[0], "class") == P.CLASS_DATA and P.get_field(f.beats[0], "op_id") == 1]
    first_results = results_of(run, 1)
    if phase == "mid_data":
        assert run.truncated[0] == 1 and run.counters[(0, "truncated")] == 1
    elif phase == "admitted":
        # contributor 0's frames were in before the reset; contributor 1's come long after it
        assert sorted(c < reset for c in data_ends) == [False, False, True, True] and not first_results
    elif phase == "draining":
        assert len(data_ends) == 4 and max(data_ends) < reset
        assert len(first_results) < 4                 # not every RESULT frame was out yet
    else:
        assert run.cut[1], "no RESULT frame was cut on TX port 1"
    # operation 2, on the same ranges, is complete and bit-exact (the scoreboard checked the bits)
    assert len(results_of(run, 2)) == 4               # 2 blocks x 2 recipients
    assert not run.busy_at_end


def test_per_cycle_and_batched_reset_schedules_agree():
    """The per-cycle harness places resets exactly as the batched test bench does."""
    sc = reset_scenario("fp32-arrival", "sending", seed=4)
    batched = run_node(sc, "batch-icarus", read_counters=False)
    per_cycle = run_node(reset_scenario("fp32-arrival", "sending", seed=4), "icarus", read_counters=False)
    assert per_cycle.resets == batched.resets
    for p in (0, 1):
        assert [(f.beats, f.cycles) for f in per_cycle.tx[p]] == [(f.beats, f.cycles) for f in batched.tx[p]]
        assert [f.cycles for f in per_cycle.cut[p]] == [f.cycles for f in batched.cut[p]]
