"""Every kind of failure the node's scoreboard reports is shown failing.

One passing run of the node (two operations: a KULISCH_FIXED AllReduce with a partial last beat
and an FP32_ARRIVAL AUTO Reduce; a NACKed COMMIT) is observed once; each test then changes
what the monitors saw in one way a broken design could (a flipped result bit, a reserved bit, a
padding bit, a lost or extra frame, a wrong response, a truncated frame, a wrong counter, busy
left high, busy rising with no COMMIT, a run that never settles) and checks that the scoreboard reports exactly that
kind, naming where.  The unchanged run passes, so every failure below comes from the change."""
import copy
import random

import pytest

from cosim.node.node_harness import check, counter_names, run_node
from cosim.node.scenarios import Operation, build, random_elements
from cosim.node.scoreboard import MISMATCH_KINDS
from cosim.sim.axis import AxisFrame
from golden.node import protocol as P


@pytest.fixture(scope="module")
def observed():
    rng = random.Random(2024)
    ops = [Operation(1, 5, "kulisch", "fp32", "fp32", random_elements(rng, "fp32", (2, 40))),
           Operation(2, 6, "fp32-arrival", "bf16", "auto", random_elements(rng, "bf16", (3, 64)),
                     mode=P.MODE_REDUCE, recipients=0b10)]
    sc = build(ops, seed=11)
    sc.frames[0].insert(0, AxisFrame(P.Commit(9, 9).encode(), delay=2))       # NACK NO_STAGED
    run = run_node(sc, "batch-icarus")
    report = check(sc, run)
    assert report.ok, [str(m) for m in report.mismatches]
    return sc, run


def _kinds(sc, run):
    return [m.kind for m in check(sc, run).mismatches]


def _frames(run, port, cls):
    return [f for f in run.tx[port] if P.get_field(f.beats[0], "class") == cls]


def _flip(frame, beat, bit):
    frame.beats[beat] ^= 1 << bit


def test_every_kind_is_documented():
    assert {"result-value", "result-header", "result-padding", "result-missing", "result-unexpected", "response",
            "response-bits", "malformed", "counter", "end-state", "timeout"} <= set(MISMATCH_KINDS)


def test_a_flipped_result_bit_is_a_value_mismatch(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    _flip(_frames(run, 0, P.CLASS_RESULT)[0], 1, 3)          # element 0 of op 1, bit 3
    report = check(sc, run)
    assert [m.kind for m in report.mismatches] == ["result-value"]
    assert report.first().element == 0 and "expected fp32" in report.first().message


@pytest.mark.parametrize("bit, field", [(104, "kulisch_w"), (90, "a reserved bit"), (80, "groups"),
                                        (256 + 16 * 3, "group 3 descriptor"), (5, "opcode")])
def test_a_wrong_header_bit_is_a_header_mismatch(observed, bit, field):
    sc, run = observed
    run = copy.deepcopy(run)
    frame = _frames(run, 0, P.CLASS_RESULT)[0]
    frame.beats[0] ^= 1 << (bit if field != "kulisch_w" else P.FIELDS["kulisch_w"][0])
    kinds = _kinds(sc, run)
    # a changed group count or a stray group slot also changes how the payload decodes
    assert kinds[0] in ("result-header", "malformed", "result-layout", "result-unexpected"), kinds
    if field in ("kulisch_w", "a reserved bit", "opcode"):
        assert kinds == ["result-header"]
        assert field in check(sc, run).first().message


def test_a_padding_bit_past_the_last_element_is_caught(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    frame = _frames(run, 0, P.CLASS_RESULT)[0]             # 40 FP32 elements: beat 3 holds 8 of 16
    _flip(frame, 3, 511)
    report = check(sc, run)
    assert [m.kind for m in report.mismatches] == ["result-padding"]
    assert "beat 3 bit 511" in report.first().message


def test_a_lost_result_frame_is_missing(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    frame = _frames(run, 1, P.CLASS_RESULT)[0]
    run.tx[1].remove(frame)
    kinds = _kinds(sc, run)
    assert kinds[0] == "result-missing"
    assert set(kinds) <= {"result-missing", "counter"}      # RESULT frames sent: counted on the wire


def test_an_extra_result_frame_is_unexpected(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    extra = copy.deepcopy(_frames(run, 0, P.CLASS_RESULT)[0])
    extra.beats[0] = P.set_field(extra.beats[0], "offset", 256)
    run.tx[0].append(extra)
    assert _kinds(sc, run)[0] == "result-unexpected"


def test_a_result_on_the_wrong_port_is_caught(observed):
    sc, run = observed                       # op 2 is a Reduce to TX1 only
    run = copy.deepcopy(run)
    frame = _frames(run, 1, P.CLASS_RESULT)[0]
    run.tx[1].remove(frame)
    run.tx[0].append(frame)
    kinds = _kinds(sc, run)
    assert "result-unexpected" in kinds and "result-missing" in kinds


def test_a_wrong_response_is_a_response_mismatch(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    nack = next(f for f in _frames(run, 0, P.CLASS_CONTROL) if P.get_field(f.beats[0], "opcode") == P.OP_NACK)
    nack.beats[0] = P.set_field(nack.beats[0], "reason", P.STAGED_MISMATCH)
    report = check(sc, run)
    assert [m.kind for m in report.mismatches] == ["response"]
    assert "NO_STAGED" in report.first().message and "STAGED_MISMATCH" in report.first().message


def test_a_missing_or_reordered_response_is_caught(observed):
    sc, run = observed
    lost = copy.deepcopy(run)
    first = _frames(lost, 0, P.CLASS_CONTROL)[0]
    lost.tx[0].remove(first)
    assert "response" in _kinds(sc, lost)
    swapped = copy.deepcopy(run)
    responses = [i for i, f in enumerate(swapped.tx[0]) if P.get_field(f.beats[0], "class") == P.CLASS_CONTROL]
    a, b = responses[0], responses[1]
    swapped.tx[0][a], swapped.tx[0][b] = swapped.tx[0][b], swapped.tx[0][a]
    assert "response" in _kinds(sc, swapped)


def test_a_reserved_response_bit_or_an_extra_beat_is_caught(observed):
    sc, run = observed
    for change in ("reserved", "beat"):
        r = copy.deepcopy(run)
        frame = _frames(r, 0, P.CLASS_CONTROL)[0]
        if change == "reserved":
            frame.beats[0] |= 1 << 300
        else:
            frame.beats.append(0)
            frame.cycles.append(frame.cycles[-1] + 1)
        assert _kinds(sc, r) == ["response-bits"], change


def test_a_truncated_or_foreign_frame_is_malformed_not_a_crash(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    frame = _frames(run, 0, P.CLASS_RESULT)[0]
    frame.beats.pop()
    frame.cycles.pop()
    run.tx[1].append(AxisFrame([P.Data(1, 5, 0, P.FMT_FP32, 0, (0,) * 16).encode()[0]], None, [10]))
    kinds = _kinds(sc, run)
    assert kinds.count("malformed") == 2 and "truncated" not in kinds
    from cosim.node.coverage import sample
    sample(sc, run, check(sc, run))          # the coverage sampler reads the same frames without raising


def test_a_wrong_or_unread_counter_is_caught(observed):
    sc, run = observed
    wrong = copy.deepcopy(run)
    wrong.counters[(1, "data_accepted")] += 1
    report = check(sc, wrong)
    assert [m.kind for m in report.mismatches] == ["counter"] and "data_accepted (port 1)" in report.first().message
    stray = copy.deepcopy(run)
    unused = next(k for k in counter_names().values() if k[1].startswith("unused"))
    stray.counters[unused] = 1                # a selection the protocol says reads 0
    assert _kinds(sc, stray) == ["counter"]
    unread = copy.deepcopy(run)
    unread.counters = {}
    report = check(sc, unread)
    assert [m.kind for m in report.mismatches] == ["counter"] and "not read" in report.first().message


def test_busy_left_high_is_an_end_state_mismatch(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    run.busy_at_end = True
    assert _kinds(sc, run) == ["end-state"]


def test_busy_low_while_a_result_frame_is_sent_is_caught(observed):
    sc, run = observed
    assert run.busy_changes and run.busy_changes[0][1]        # the batched bench records busy: it rose
    run = copy.deepcopy(run)
    frame = next(f for f in _frames(run, 0, P.CLASS_RESULT) if len(f.cycles) > 2)
    dip = frame.cycles[0]
    run.busy_changes += [(dip, False), (dip + 1, True)]        # low for the frame's first beat only
    kinds = _kinds(sc, run)
    assert kinds == ["busy", "busy-rise"], kinds                # (and it rose again with no COMMIT)
    # the last two beats of a frame may leave after busy fell (docs/protocol.md): not a failure
    run.busy_changes = [c for c in run.busy_changes if c[0] not in (dip, dip + 1)] + [
        (frame.cycles[-2], False), (frame.cycles[-1] + 1, True)]
    assert "busy" not in _kinds(sc, run)


def test_busy_rising_with_no_commit_is_caught(observed):
    """busy rises two edges after a successful COMMIT's last beat and at no other time: the same
    rise one edge early or late, or a second rise between operations (work left over from before
    a reset, say), is a busy-rise mismatch naming the cycle."""
    sc, run = observed
    rises = [c for (c, v), (_, was) in zip(sorted(run.busy_changes), [(0, False)] + sorted(run.busy_changes))
             if v and not was]
    commits = {f.cycles[-1] for p in (0, 1) for f in run.rx[p]
               if P.get_field(f.beats[0], "class") == P.CLASS_CONTROL and P.get_field(f.beats[0], "opcode") == P.OP_COMMIT}
    assert rises and all(c - 2 in commits for c in rises)       # the observed run: every rise explained
    for shift in (-1, 1):
        broken = copy.deepcopy(run)
        first = min(broken.busy_changes)
        broken.busy_changes = [(first[0] + shift, first[1])] + [c for c in broken.busy_changes if c != first]
        report = check(sc, broken)
        assert [m.kind for m in report.mismatches] == ["busy-rise"], report.mismatches
        assert f"cycle {first[0] + shift}" in report.first().message
    broken = copy.deepcopy(run)
    idle = max(c for c, v in broken.busy_changes if not v) + 5   # after the last fall: a blip
    broken.busy_changes += [(idle, True), (idle + 1, False)]
    assert _kinds(sc, broken) == ["busy-rise"]


def test_a_bubble_inside_a_reduce_result_frame_is_a_transmit_stall(observed):
    """Operation 2 is a Reduce to TX port 1 with no sink stall: a RESULT frame whose beats leave
    with a cycle between them, the sink ready, lost line rate."""
    sc, run = observed
    run = copy.deepcopy(run)
    frame = next(f for f in _frames(run, 1, P.CLASS_RESULT) if P.get_field(f.beats[0], "op_id") == 2)
    assert len(frame.beats) > 2
    frame.cycles = frame.cycles[:1] + [c + 1 for c in frame.cycles[1:]]
    report = check(sc, run)
    assert [m.kind for m in report.mismatches] == ["tx-stall"]
    assert f"cycle {frame.cycles[0] + 1}" in report.first().message


def test_a_link_or_busy_left_high_through_a_reset_is_caught(observed):
    """The power-on reset of the observed run was judged and found quiet; a receive port's
    tready (or busy) seen high at an edge after one with rst high is a reset-links mismatch."""
    sc, run = observed
    assert run.reset_live == []
    for what, signal in (("i 1", "s_axis_1_tready"), ("o 0", "m_axis_0_tvalid"), ("busy 0", "busy")):
        broken = copy.deepcopy(run)
        broken.reset_live = [(2, what)]
        report = check(sc, broken)
        assert [m.kind for m in report.mismatches] == ["reset-links"]
        assert signal in report.first().message and "cycle 2" in report.first().message


def test_a_run_that_never_settles_is_a_timeout(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    run.max_cycles = run.cycles
    assert _kinds(sc, run)[0] == "timeout"


def test_results_of_two_operations_interleaved_are_out_of_order(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    # op 1 sends one block to TX0; a frame of a later-committed operation before it breaks the order
    frame = _frames(run, 0, P.CLASS_RESULT)[0]
    early = copy.deepcopy(frame)
    early.beats[0] = P.set_field(P.set_field(early.beats[0], "op_id", 2), "generation", 6)
    early.cycles = [frame.cycles[0] - 1] * len(early.cycles)
    run.tx[0].insert(0, early)
    kinds = _kinds(sc, run)
    assert "result-order" in kinds, kinds


def test_a_receive_port_stalled_inside_a_frame_is_caught(observed):
    sc, run = observed
    run = copy.deepcopy(run)
    frame = next(f for f in run.rx[1] if len(f.cycles) > 2)
    frame.cycles = [frame.cycles[0] - 1] + frame.cycles[1:]      # the header one cycle earlier: a gap after it
    kinds = _kinds(sc, run)
    assert kinds == ["rx-stall"], kinds


def test_an_output_lost_long_before_a_reset_is_caught():
    """A reset may discard what was still on its way, not what was due hundreds of cycles
    before it: a response and a RESULT frame removed from a run whose reset came long after
    them are reported, each naming the reset."""
    from cosim.sim.batch import ResetEvent
    rng = random.Random(5)
    sc = build([Operation(1, 3, "kulisch", "fp16", "fp16", random_elements(rng, "fp16", (2, 32)))], seed=4)
    before = len(sc.frames[0])
    sc.frames[0].append(AxisFrame(P.Commit(9, 9).encode(), delay=900))     # keeps the run going
    sc.add_reset(ResetEvent("in 0", before, 700))       # 700 cycles after port 0's DATA: long after the outputs
    run = run_node(sc, "batch-icarus")
    assert check(sc, run).ok and len(run.resets) == 1
    for cls in (P.CLASS_CONTROL, P.CLASS_RESULT):
        r = copy.deepcopy(run)
        r.tx[0].remove(_frames(r, 0, cls)[0])
        report = check(sc, r)
        lost = [m for m in report.mismatches if "never sent before reset 1" in m.message]
        assert lost and lost[0].kind == ("response" if cls == P.CLASS_CONTROL else "result-missing"), \
            [str(m) for m in report.mismatches]


@pytest.fixture(scope="module")
def drain_with_requests():
    """A Reduce to TX0 of 16 blocks, CONTROL requests (each NACKed) arriving while its RESULT
    frames leave, then a line-rate probe: TX0's arbitration and the probe are both decided."""
    from cosim.node.regress import add_line_rate_probe
    rng = random.Random(9)
    op = Operation(1, 2, "fp32-arrival", "fp32", "fp32", random_elements(rng, "fp32", (2, 4096)),
                   mode=P.MODE_REDUCE, recipients=0b01)
    sc = build([op], seed=21)
    last = sc.frames[1][-1]
    for k in range(12):
        sc.frames[0].append(AxisFrame([P.set_field(op.stage().encode()[0], "opcode", 7)],
                                      delay=40 if k % 2 == 0 else 0, after=(1, last) if k == 0 else None))
    add_line_rate_probe(sc, random.Random(3), 0, 4096)
    run = run_node(sc, "batch-verilator")      # 4,096 elements and a probe: seconds on the run's Verilator node
    report = check(sc, run)
    assert report.ok, [str(m) for m in report.mismatches]
    return sc, run


def test_a_response_held_back_behind_two_result_frames_is_caught(drain_with_requests):
    sc, run = drain_with_requests
    run = copy.deepcopy(run)
    tx0 = run.tx[0]
    kinds = [P.get_field(f.beats[0], "class") for f in tx0]
    # a response that left just before two RESULT frames: it waited while they left, one after the other
    i = next(k for k in range(len(tx0) - 2) if kinds[k] == P.CLASS_CONTROL and kinds[k + 1] == P.CLASS_RESULT
             and kinds[k + 2] == P.CLASS_RESULT)
    resp = tx0.pop(i)
    resp.cycles = [tx0[i + 1].cycles[-1] + 1]
    tx0.insert(i + 2, resp)
    assert "tx-arbitration" in _kinds(sc, run)


def test_a_response_passed_over_at_the_end_of_a_result_frame_is_caught(drain_with_requests):
    """A request that arrives while a RESULT frame leaves TX0 is answered between that frame and
    the next one.  Moved behind the next frame, it was passed over at that frame's grant, which
    came no earlier than the first frame's last beat: caught although the response's wait began
    after the first frame had started (when only frames starting after the wait were judged,
    this order passed)."""
    sc, run = drain_with_requests
    run = copy.deepcopy(run)
    tx0 = run.tx[0]
    kinds = [P.get_field(f.beats[0], "class") for f in tx0]
    requests = sorted(f.cycles[-1] for f in run.rx[0] if P.get_field(f.beats[0], "class") == P.CLASS_CONTROL)
    i = next(k for k in range(1, len(tx0) - 1) if kinds[k - 1] == P.CLASS_RESULT and kinds[k] == P.CLASS_CONTROL
             and kinds[k + 1] == P.CLASS_RESULT and any(tx0[k - 1].cycles[0] < r <= tx0[k - 1].cycles[-1] - 3
                                                       for r in requests))
    resp = tx0.pop(i)
    resp.cycles = [tx0[i].cycles[-1] + 1]
    tx0.insert(i + 1, resp)
    assert "tx-arbitration" in _kinds(sc, run)


def test_responses_going_ahead_of_a_waiting_result_frame_are_caught(observed):
    """Op 1's AllReduce frame left TX1 at cycle a1, so it waited for TX0 from then on: three
    responses loaded on TX0 after a1 and ahead of it break the round robin (one may go first)."""
    sc, run = observed
    run = copy.deepcopy(run)
    tx0 = run.tx[0]
    i = next(k for k, f in enumerate(tx0) if P.get_field(f.beats[0], "class") == P.CLASS_RESULT)
    a1 = next(f for f in run.tx[1] if P.get_field(f.beats[0], "op_id") == 1).cycles[0]
    response = next(f for f in tx0 if P.get_field(f.beats[0], "class") == P.CLASS_CONTROL)
    shift = max(0, a1 + 5 - tx0[i].cycles[0])
    for f in tx0[i:]:
        f.cycles = [c + shift for c in f.cycles]
    for n in (3, 2, 1):
        extra = copy.deepcopy(response)
        extra.cycles = [a1 + n]
        tx0.insert(i, extra)
    assert check(sc, observed[1]).ok
    assert "tx-arbitration" in _kinds(sc, run)


def test_a_port_losing_cycles_on_the_line_rate_probe_is_caught(drain_with_requests):
    sc, run = drain_with_requests
    run = copy.deepcopy(run)
    probe = [f for f in run.rx[1] if P.get_field(f.beats[0], "op_id") == sc.probe["op_id"]
             and P.get_field(f.beats[0], "class") == P.CLASS_DATA]
    assert len(probe) >= 2
    for f in probe[1:]:                      # every later frame one cycle later: one cycle lost between frames
        f.cycles = [c + 1 for c in f.cycles]
    assert _kinds(sc, run) == ["line-rate"]


@pytest.fixture(scope="module")
def aborted():
    """Two operations ended by ABORT: op 1 right after its COMMIT (nothing admitted), op 2 after
    one of its two contributors' DATA was admitted."""
    from cosim.node.scenarios import Scenario
    rng = random.Random(5)
    one = Operation(1, 3, "kulisch", "fp32", "fp32", random_elements(rng, "fp32", (1, 32)))
    two = Operation(2, 4, "kulisch", "fp32", "fp32", random_elements(rng, "fp32", (2, 64)))
    sc = Scenario(seed=5)
    for frame, delay in ((one.stage(), 0), (one.commit(), 0), (P.Abort(1, 3).encode(), 3), (two.stage(), 30),
                         (two.commit(), 0), (two.data_frames(0)[0], 2), (P.Abort(2, 4).encode(), 5)):
        sc.add(0, frame, delay=delay)
    run = run_node(sc, "batch-icarus")
    report = check(sc, run)
    assert report.ok, [str(m) for m in report.mismatches]
    return sc, run


def test_busy_falling_off_time_after_an_abort_is_caught(aborted):
    """After an ABORT taken at edge T, `busy` is low from T + 18 exactly when nothing was admitted,
    and from T + 18 at the earliest otherwise (docs/protocol.md, "Operation lifetime"): a fall one
    edge early or late after the first ABORT, or one early after the second, is a busy mismatch."""
    sc, run = aborted
    aborts = [f.cycles[-1] for f in run.rx[0] if P.get_field(f.beats[0], "class") == P.CLASS_CONTROL
              and P.get_field(f.beats[0], "opcode") == P.OP_ABORT]
    falls = [c for c, v in sorted(run.busy_changes) if not v]
    assert len(aborts) == 2 and falls[0] == aborts[0] + 18 and falls[1] >= aborts[1] + 18

    def moved(which, shift):
        broken = copy.deepcopy(run)
        broken.busy_changes = [(c + shift if (c, v) == (falls[which], False) else c, v) for c, v in broken.busy_changes]
        return check(sc, broken)
    for which, shift in ((0, -1), (0, 1), (1, -(falls[1] - aborts[1] - 17))):
        report = moved(which, shift)
        assert [m.kind for m in report.mismatches] == ["busy"], report.mismatches
        assert f"busy fell at cycle {falls[which] + shift}" in report.first().message
    assert moved(1, 1).ok           # later than T + 18 with work admitted: the datapath may still drain


def test_a_probe_met_by_a_drain_is_reported_as_the_stimulus_fault(drain_with_requests):
    """A probe whose DATA frames meet an earlier operation's RESULT frames was held behind a held
    COMMIT: the line-rate failure names the drain, so a reader does not hunt a node fault."""
    from cosim.node.node_harness import check_line_rate
    sc, run = drain_with_requests
    run = copy.deepcopy(run)
    probe = [f for f in run.rx[1] if P.get_field(f.beats[0], "op_id") == sc.probe["op_id"]
             and P.get_field(f.beats[0], "class") == P.CLASS_DATA]
    for f in probe[1:]:
        f.cycles = [c + 1 for c in f.cycles]
    assert "nothing held" in check_line_rate(sc, run)[0].message
    earlier = [f for f in run.tx[0] if P.get_field(f.beats[0], "class") == P.CLASS_RESULT
               and P.get_field(f.beats[0], "op_id") != sc.probe["op_id"]]
    earlier[-1].cycles = [probe[0].cycles[0] + k for k in range(len(earlier[-1].cycles))]
    lost = check_line_rate(sc, run)
    assert [m.kind for m in lost] == ["line-rate"]
    assert "the stimulus waited too short a time for the drain" in lost[0].message
