"""The end of an operation, one definition for the document, the model and the node
(docs/protocol.md, "Operation lifetime"): an operation ends at the admission that completes its
last range, or at an ABORT of it; frames inside the drain window that follows (RESULT frames
still being formed and sent) get the answers the model gives, with and without TX backpressure.
ABORT ends an open operation without a reset."""
import random

import pytest

from cosim.node.node_harness import check, run_node
from cosim.node.scenarios import Operation, Scenario, random_elements
from golden.node import protocol as P

E = 512
# the design's behaviour is the point: the faster simulator (tests/node/test_regress.py holds
# batched Verilator and Icarus to the same frames, cycles and verdict)
SCENARIO_BACKEND = "batch-verilator"


def op(op_id, gen, policy, seed):
    rng = random.Random(seed)
    return Operation(op_id, gen, policy, "fp32", "fp32", random_elements(rng, "fp32", (2, E)), frame_elems=256)


def kind(frame):
    return P.get_field(frame.beats[0], "class"), P.get_field(frame.beats[0], "op_id")


def assert_pass(report):
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:8])


def run_second_operation(sc, second, commit2, sink_pause):
    """Queue operation `second`'s DATA (port 1's once COMMIT `commit2` is through) and run the
    scenario on SCENARIO_BACKEND with both sinks pausing at `sink_pause`."""
    for fr in second.data_frames(0):
        sc.add(0, fr)
    sc.add(1, second.data_frames(1)[0], after=(0, commit2))
    sc.add(1, second.data_frames(1)[1])
    sc.sink_pause = {0: sink_pause, 1: sink_pause}
    return run_node(sc, SCENARIO_BACKEND)


@pytest.mark.parametrize("sink_pause", [0.0, 0.8])
@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
def test_requests_inside_the_end_window(policy, sink_pause):
    """After operation 1's last admission, while its RESULT frames are formed and sent: STAGE,
    DATA of the ended operation (no_operation), ABORT of it (NOT_OPEN) and COMMIT of the next
    (ACK: the node holds it until the drain is over), then operation 2 on the same ranges."""
    first, second = op(1, 1, policy, 1), op(2, 2, policy, 2)
    sc = Scenario(seed=7)
    sc.add(0, first.stage())
    commit1 = sc.add(0, first.commit())
    d0 = first.data_frames(0)
    d1 = first.data_frames(1)
    sc.add(0, d0[0], delay=4)
    sc.add(0, d0[1])
    sc.add(1, d1[0], after=(0, commit1))
    last1 = sc.add(1, d1[1])
    sc.add(0, second.stage(), after=(1, last1))          # port 0 frames 4 .. 6: the window
    sc.add(0, d0[0], delay=2)                            # the ended operation's DATA
    sc.add(0, P.Abort(1, 1), delay=2)                    # ABORT of the ended operation
    commit2 = sc.add(0, second.commit(), delay=2)
    run = run_second_operation(sc, second, commit2, sink_pause)
    report = check(sc, run)
    assert_pass(report)
    # the window frames were processed while operation 1's RESULT frames were still going out
    window_ends = [run.rx[0][k].cycles[-1] for k in range(4, 7)]
    result1_ends = [f.cycles[-1] for p in (0, 1) for f in run.tx[p] if kind(f) == (P.CLASS_RESULT, 1)]
    assert len(result1_ends) == 4 and max(window_ends) < max(result1_ends)
    responses = [(P.decode(f.beats), f.cycles[-1]) for f in run.tx[0] if kind(f)[0] == P.CLASS_CONTROL]
    by_opcode = {(r.request_opcode, r.op_id): (r.ack, r.reason, c) for r, c in responses}
    assert by_opcode[(P.OP_ABORT, 1)][:2] == (False, P.NOT_OPEN)
    assert by_opcode[(P.OP_COMMIT, 2)][:2] == (True, P.OK)
    assert run.counters[(0, "dropped_no_operation")] == 1
    # the held COMMIT is answered only once operation 1's last RESULT frame has been queued,
    # so its ACK leaves TX port 0 after that frame
    tx0_results = [f.cycles[-1] for f in run.tx[0] if kind(f) == (P.CLASS_RESULT, 1)]
    assert by_opcode[(P.OP_COMMIT, 2)][2] > max(tx0_results)
    assert sum(1 for p in (0, 1) for f in run.tx[p] if kind(f) == (P.CLASS_RESULT, 2)) == 4


@pytest.mark.parametrize("sink_pause", [0.0, 0.7])
@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
def test_abort_ends_the_open_operation_without_a_reset(policy, sink_pause):
    """Block 0 complete, block 1 half done, then ABORT: block 0 is still sent, block 1 never;
    the late DATA is dropped as no_operation; operation 2 on the same ranges is bit-exact."""
    first, second = op(1, 1, policy, 3), op(2, 9, policy, 4)
    sc = Scenario(seed=9)
    sc.add(0, first.stage())
    commit1 = sc.add(0, first.commit())
    d0, d1 = first.data_frames(0), first.data_frames(1)
    sc.add(0, d0[0], delay=4)
    sc.add(0, d0[1])                                     # contributor 0: both blocks
    b0 = sc.add(1, d1[0], after=(0, commit1))            # contributor 1: block 0 only ...
    abort = sc.add(0, P.Abort(1, 1), after=(1, b0))
    sc.add(1, d1[1], after=(0, abort))                   # ... its block 1 comes after the ABORT
    sc.add(0, second.stage())
    commit2 = sc.add(0, second.commit())
    run = run_second_operation(sc, second, commit2, sink_pause)
    assert_pass(check(sc, run))
    sent1 = sorted(P.get_field(f.beats[0], "offset") for p in (0, 1) for f in run.tx[p]
                   if kind(f) == (P.CLASS_RESULT, 1))
    assert sent1 == [0, 0]                               # block 0 to both recipients, never block 1
    assert run.counters[(1, "dropped_no_operation")] == 1
    assert sum(1 for p in (0, 1) for f in run.tx[p] if kind(f) == (P.CLASS_RESULT, 2)) == 4
    assert not run.busy_at_end


def test_a_contributor_that_never_sends_keeps_the_operation_open_until_abort():
    """Without the ABORT every COMMIT would be BUSY for good; with it the next one succeeds."""
    first, second = op(1, 1, "fp32-arrival", 5), op(2, 2, "kulisch", 6)
    sc = Scenario(seed=3)
    sc.add(0, first.stage())
    sc.add(0, first.commit())
    for fr in first.data_frames(0):                      # contributor 1 never sends
        sc.add(0, fr)
    sc.add(0, second.stage())
    sc.add(0, second.commit())                           # BUSY: operation 1 is still open
    sc.add(0, P.Abort(1, 1), delay=20)
    sc.add(0, second.commit())                           # now ACK
    for fr in second.data_frames(0):
        sc.add(0, fr)
    for fr in second.data_frames(1):
        sc.add(0, fr)
    run = run_node(sc, SCENARIO_BACKEND)
    assert_pass(check(sc, run))
    answers = [(r.request_opcode, r.ack, r.reason) for r in (P.decode(f.beats) for f in run.tx[0]
                                                             if kind(f)[0] == P.CLASS_CONTROL)]
    assert answers[-3:] == [(P.OP_COMMIT, False, P.BUSY), (P.OP_ABORT, True, P.OK), (P.OP_COMMIT, True, P.OK)]
    assert not [f for p in (0, 1) for f in run.tx[p] if kind(f) == (P.CLASS_RESULT, 1)]
