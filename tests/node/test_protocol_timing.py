"""The cycle numbers docs/protocol.md gives a client, held on the node edge by edge.

Each test drives the node through the per-cycle harness (`NodeBench`, Icarus co-simulation:
every signal is seen at every rising edge) with frames placed back to back, so the edges are
known: edge c is the c-th rising edge, the power-on reset is high at edges 1 and 2, and the
first beat is taken at edge 4.  What is held, each against its paragraph of the document:

* "Reset and power-on": a reset first sampled at edge E keeps the frames whose last beat was
  taken at E - 2 or earlier (processed and counted), loses the one taken at E - 1 (counted
  nowhere), counts a frame it cuts as truncated; tready is low from E + 1 and high again two
  edges after the last reset edge.
* "Counters": CONTROL requests are counted when decided, not when their response leaves; a
  range is counted T + j + 8 (KULISCH_FIXED) or T + j + 7 (FP32_ARRIVAL) edges after the last
  beat of the frame that completes it; the per-port counters add up to the frames processed.
* "Operation lifetime": busy falls at the edge at which the last RESULT beat can first be
  taken, at most two beats before the end of a stalled frame; a COMMIT held in the drain is
  answered when it ends, one that fails a check at once; a reset discards a held COMMIT and
  the frames behind it, uncounted; after an ABORT busy falls 18 edges after its last beat.
* "Frames": reserved bits are ignored on receipt and sent as 0, and the document's table of
  them is the complement of the fields.
"""
import itertools
import re
from pathlib import Path

import pytest
from myhdl import block, instance

from cosim.node.node_harness import NodeBench, counter_names
from cosim.sim.axis import AxisFrame
from golden.node import protocol as P
from golden.node.node_model import NodeModel
from spec.frames import CTR_RANGES

ONE = {P.FMT_INT8: 1, P.FMT_FP16: 0x3C00, P.FMT_BF16: 0x3F80, P.FMT_FP32: 0x3F800000}
POLICIES = {"kulisch": P.POLICY_KULISCH, "fp32-arrival": P.POLICY_FP32_ARRIVAL}
RANGE_COUNT_DELAY = {"kulisch": 8, "fp32-arrival": 7}     # docs/protocol.md, "Counters", counter 32
# port 0's counters 0 .. 12 by their golden names (counter_names() maps each to its select)
PER_PORT = [(0, "control_accepted"), (0, "data_accepted")] + [(0, f"dropped_{r}") for r in P.DROP_REASONS] + [
    (0, "unsupported"), (0, "truncated")]
PER_PORT += [(1, name) for _, name in PER_PORT]


class Edges:
    """A NodeBench run with every edge recorded: busy, tready, counter_value (counter_select
    driven by `select(edge)` until the final counter sweep) and rst driven by `reset(edge,
    bench)` (True: rst high at that edge).  stall[p](edge, bench): TX port p holds tready low."""

    def __init__(self, frames, cycles, select=lambda c: 0, reset=lambda c, b: False, stall=None, counters=()):
        self.bench = b = NodeBench("icarus")
        for port, items in frames.items():
            for item in items:
                beats, after = item if isinstance(item, tuple) else (item, None)
                b.send(port, AxisFrame(beats, after=after))
        stall = stall or {}

        def pauses(held):
            # the sink's pause draw k sets tready for edge k + 2
            return (bool(held(c, b)) for c in itertools.count(2))
        for p in (0, 1):
            b.sink[p].pause = pauses(stall.get(p, lambda c, b: False))
        self.rows = {}
        sig, rst = b.sig, b.rst

        @block
        def watch():
            @instance
            def edges():
                c, was_reset = 0, False
                while c < cycles:
                    yield sig["clk"].posedge
                    c += 1
                    self.rows[c] = {"rst": bool(rst), "busy": bool(sig["busy"]), "value": int(sig["counter_value"]),
                                    **{f"tready{p}": bool(sig[f"s_axis_{p}_tready"]) for p in (0, 1)}}
                    yield sig["clk"].negedge
                    if c + 1 > 2:          # after the power-on reset (edges 1 and 2)
                        high = bool(reset(c + 1, b))
                        if high and not was_reset:
                            for s in b.src + b.sink:
                                s.abort()    # the link partners see the reset too
                        if was_reset and not high:
                            b.resets_done[0] += 1
                        rst.next = high
                        was_reset = high
                    if c < cycles:       # then the final sweep drives counter_select
                        sig["counter_select"].next = select(c + 1)
            return edges

        # the counters to read at the end, as (port, name) of the golden model (port None: node-wide)
        sweep = [sel for sel, key in counter_names().items() if key in counters]
        b.run(lambda bench: bench.cycles >= cycles, read_counters=sweep, extra=[watch])

    def counter(self, name, port=None):
        return self.bench.counters[(port, name)]

    def sent(self, port):
        """(frame beats, cycles) of the frames the node sent on TX `port`."""
        return [(f.beats, f.cycles) for f in self.bench.sink[port].frames]

    def responses(self):
        return [(P.decode(beats), cycles[-1]) for beats, cycles in self.sent(0)
                if P.get_field(beats[0], "class") == P.CLASS_CONTROL]

    def last_beats(self, port):
        return [f.cycles[-1] for f in self.bench.src[port].sent]

    def busy_low_from(self, edge):
        """The first edge at or after `edge` at which busy is sampled low."""
        return next(c for c in sorted(self.rows) if c >= edge and not self.rows[c]["busy"])


def stage(op_id, policy=P.POLICY_KULISCH, count=16, contributors=1, recipients=0b01, fmt=P.FMT_FP32):
    mode = P.MODE_REDUCE if recipients in (1, 2) else P.MODE_ALLREDUCE
    return P.Stage(op_id, 1, policy, fmt, P.FMT_FP32, mode, count, contributors, recipients).encode()


def data(op_id, contributor, count, offset=0, fmt=P.FMT_FP32, gen=1):
    return P.Data(op_id, gen, contributor, fmt, offset, tuple([ONE[fmt]] * count)).encode()


def test_a_reset_keeps_the_frames_done_two_edges_before_it():
    """Reset first sampled at edge E = 10 (high at 10 and 11).  Port 0: one-beat STAGEs with
    last beats at 4 .. 9; port 1: DATA frames (no operation) ending at 5 and 7, and a 3-beat
    one with beats at 8 and 9 (its source stops when rst rises).  Then a STAGE after the reset."""
    E = 10
    port0 = [stage(k) for k in range(1, 7)] + [(stage(9), ("reset", 1))]
    port1 = [data(1, 0, 16), data(1, 0, 16), data(1, 0, 32)]
    run = Edges({0: port0, 1: port1}, cycles=40, reset=lambda c, b: c in (E, E + 1),
                counters=PER_PORT + [(None, "responses")])
    assert run.last_beats(0)[:6] == [4, 5, 6, 7, 8, 9]       # the schedule the numbers below assume
    assert run.last_beats(1)[:2] == [5, 7] and len(run.bench.src[1].aborted) == 1
    # processed and counted: last beats at 4 .. E - 2 on port 0, 5 and 7 on port 1
    # (the STAGE ending at E - 1 is counted nowhere); plus the STAGE after the reset
    assert run.counter("control_accepted", 0) == (E - 2 - 4 + 1) + 1
    assert run.counter("dropped_no_operation", 1) == 2
    assert run.counter("truncated", 1) == 1                  # cut at E: its last beat never moved
    # counted when decided: two decided STAGEs had not sent their responses when the reset came
    answered = run.responses()
    assert run.counter("responses") == len(answered) == 3 + 1
    assert run.counter("control_accepted", 0) - run.counter("responses") == 2
    assert [r.op_id for r, _ in answered] == [1, 2, 3, 9]
    # tready: low from E + 1 to the last reset edge + 1, high again at E + 3
    assert [run.rows[c]["tready0"] for c in range(E + 1, E + 4)] == [False, False, True]
    assert run.last_beats(0)[-1] >= E + 3
    # every frame processed on a port is in exactly one of its counters 0 .. 11
    per_port = [sum(run.counter(name, p) for q, name in PER_PORT if q == 0 and name != "truncated")
                for p in (0, 1)]
    assert per_port == [(E - 2 - 4 + 1) + 1, 2]


def result_drain(stall_last=0, held_commit=False, reset_at=None, counters=()):
    """Operation 1 (KULISCH_FIXED, E = 256 in one 17-beat DATA frame, Reduce to TX port 1: one
    17-beat RESULT frame); inside its drain a STAGE of operation 2 and a COMMIT that fails
    STAGED_MISMATCH; with held_commit, a COMMIT of operation 2 and a STAGE behind it.  TX port 1
    stalls for 12 cycles after `17 - stall_last` RESULT beats (stall_last = 99: for good)."""
    port0 = [stage(1, count=256, recipients=0b10), P.Commit(1, 1).encode(), data(1, 0, 256),
             stage(2, count=16), P.Commit(2, 7).encode()]
    if held_commit:
        port0 += [P.Commit(2, 1).encode(), stage(3)]
    window = []

    def stall(c, b):
        taken = b.sink[1].beats_received
        if stall_last and taken >= 17 - stall_last and not window:
            window.append(c)
        return bool(window) and (stall_last == 99 or c < window[0] + 12)
    return Edges({0: port0}, cycles=140, stall={1: stall}, counters=counters,
                 reset=(lambda c, b: reset_at is not None and c in (reset_at, reset_at + 1)))


@pytest.mark.parametrize("stall_last", [0, 1, 2, 3])
def test_busy_falls_when_the_last_result_beat_can_leave(stall_last):
    run = result_drain(stall_last)
    [(beats, cycles)] = run.sent(1)
    assert len(beats) == 17
    last = cycles[-1]
    commit1_decided = run.last_beats(0)[1] + 1
    busy_low = run.busy_low_from(commit1_decided + 1)
    assert all(run.rows[c]["busy"] for c in range(commit1_decided + 1, busy_low))
    if stall_last in (0, 3):
        assert busy_low == last               # low at the edge that takes the last RESULT beat
    else:
        # the stall held back only the last stall_last beats: busy fell while they waited
        assert busy_low < last
        assert sum(1 for c in cycles if c < busy_low) == 17 - stall_last
    # inside the drain: the STAGE is answered and the failing COMMIT NACKed at once (T + 3)
    answers = run.responses()
    stage2_end, nack_end = run.last_beats(0)[3:5]
    assert (answers[2][0].op_id, answers[2][0].ack, answers[2][1]) == (2, True, stage2_end + 3)
    assert (answers[3][0].reason, answers[3][1]) == (P.STAGED_MISMATCH, nack_end + 3)
    assert nack_end + 3 < busy_low


def test_a_held_commit_is_acked_when_the_drain_ends():
    run = result_drain(held_commit=True, counters=[(0, "control_accepted")])
    [(_, cycles)] = run.sent(1)
    last = cycles[-1]
    answers = run.responses()
    assert [(r.request_opcode, r.op_id, r.ack) for r, _ in answers[-2:]] == [(P.OP_COMMIT, 2, True),
                                                                             (P.OP_STAGE, 3, True)]
    # decided at the edge the drain ends (last - 1), its ACK taken at last + 1; the STAGE
    # behind it one edge later; busy never falls between the two operations
    assert [c for _, c in answers[-2:]] == [last + 1, last + 2]
    assert all(run.rows[c]["busy"] for c in range(run.last_beats(0)[1] + 2, 140))
    assert run.counter("control_accepted", 0) == 6


def test_a_reset_discards_a_held_commit_and_the_frames_behind_it():
    run = result_drain(stall_last=99, held_commit=True, reset_at=100, counters=[(0, "control_accepted")])
    assert not run.sent(1)                    # the RESULT frame was cut (TX port 1 stalled)
    held = run.last_beats(0)[5]
    assert held < 100                         # the COMMIT was in before the reset
    assert [(r.request_opcode, r.op_id) for r, _ in run.responses()] == [
        (P.OP_STAGE, 1), (P.OP_COMMIT, 1), (P.OP_STAGE, 2), (P.OP_COMMIT, 2)]     # the last: the NACK
    assert run.counter("control_accepted", 0) == 4        # neither the held COMMIT nor the STAGE behind it


def test_busy_falls_eighteen_edges_after_an_abort_with_nothing_in_flight():
    run = Edges({0: [stage(1, contributors=3), P.Commit(1, 1).encode(), P.Abort(1, 1).encode()]}, cycles=40)
    abort_end = run.last_beats(0)[2]
    assert run.responses()[-1][0].ack
    assert run.busy_low_from(abort_end + 2) == abort_end + 18


@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
def test_ranges_are_counted_at_a_fixed_delay_after_the_last_beat(policy):
    """E = 256 in one FP32 frame (16 payload beats, one range each): range k (payload beat
    k + 1) is counted at T + k + 1 + delay and shown by counter_value one edge later."""
    frames = [stage(1, POLICIES[policy], count=256), P.Commit(1, 1).encode(), data(1, 0, 256)]
    run = Edges({0: frames}, cycles=60, select=lambda c: CTR_RANGES)
    T = run.last_beats(0)[2]
    d = RANGE_COUNT_DELAY[policy]
    shown = [run.rows[c + 1]["value"] for c in range(T, T + 16 + d + 3)]   # counter_value after edge c
    assert shown == [max(0, min(16, c - T - d - 1)) for c in range(T, T + 16 + d + 3)]


@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
@pytest.mark.parametrize("early", [0, 1])
def test_a_reset_from_the_counting_edge_on_keeps_the_range_counted(policy, early):
    """E = 16, one 2-beat DATA frame ending at T: counted at T + 1 + delay; a reset first
    sampled then keeps the count, one edge earlier loses it."""
    d = RANGE_COUNT_DELAY[policy]

    def reset(c, b):
        sent = b.src[0].sent
        if len(sent) < 3:
            return False
        at = sent[2].cycles[-1] + 1 + d - early
        return at <= c <= at + 1
    run = Edges({0: [stage(1, POLICIES[policy]), P.Commit(1, 1).encode(), data(1, 0, 16)]}, cycles=40,
                reset=reset, counters=[(None, "ranges_completed")])
    assert run.counter("ranges_completed") == 1 - early


def reserved_mask(kind):
    mask = (1 << P.BEAT_BITS) - 1
    for name in P.FRAME_FIELDS[kind]:
        lsb, width = P.FIELDS[name]
        mask &= ~(((1 << width) - 1) << lsb)
    return mask


@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
def test_reserved_bits_are_ignored_on_receipt_and_sent_as_zero(policy):
    """An operation whose frames have every reserved header bit set (and a DATA opcode of 15)
    gets the answers and RESULT frames the golden model gives for the frames without them, bit
    for bit: RESULT and response headers carry 0 in every reserved bit, group slots past G
    included."""
    pol = POLICIES[policy]
    frames = [stage(1, pol, count=40, contributors=3, recipients=0b11, fmt=P.FMT_FP16), P.Commit(1, 1).encode(),
              data(1, 0, 40, fmt=P.FMT_FP16), data(1, 1, 40, fmt=P.FMT_FP16)]
    kinds = ("stage", "commit", "data", "data")
    dirty = [[f[0] | reserved_mask(k) | (0xF << 4 if k == "data" else 0)] + f[1:] for f, k in zip(frames, kinds)]
    run = Edges({0: dirty}, cycles=60)
    model = NodeModel()
    expected = {0: [], 1: []}
    for f in frames:
        for out in model.receive(0, f):
            expected[out.port].append(out.frame.encode())
    for p in (0, 1):
        assert [beats for beats, _ in run.sent(p)] == expected[p]
    assert len(expected[0]) == 3 and len(expected[1]) == 1       # two responses and a RESULT, a RESULT
    for beats in expected[0] + expected[1]:
        head = beats[0]
        if P.get_field(head, "class") == P.CLASS_RESULT:
            groups = P.get_field(head, "groups")
            assert head & reserved_mask("result") & ((1 << P.GROUP_DESC_LSB) - 1) == 0
            assert head >> (P.GROUP_DESC_LSB + P.GROUP_DESC_BITS * groups) == 0     # slots g >= G
        else:
            assert head & reserved_mask("response") == 0 and head >> 44 == 0


def test_the_reserved_bit_table_lists_every_bit_outside_the_fields():
    """docs/protocol.md, "Reserved bits": each row is the complement of its frame's fields
    (spec/frames.py), with the opcode reserved in DATA and RESULT, and RESULT's group slots
    (bits 256 and up) described by G rather than listed."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
    section = text[text.index("### Reserved bits"):]
    rows = {"STAGE": "stage", "COMMIT, ABORT": "commit", "CONTROL response (sent by the node)": "response",
            "DATA": "data", "RESULT (sent by the node)": "result"}
    for label, kind in rows.items():
        row = re.search(rf"^\| {re.escape(label)} \| (.*) \|$", section, re.M).group(1)
        listed = 0
        for hi, lo in re.findall(r"`\[(\d+)(?::(\d+))?\]`", row):
            lo = hi if lo == "" else lo
            listed |= ((1 << (int(hi) - int(lo) + 1)) - 1) << int(lo)
        expected = reserved_mask(kind)
        if kind in ("data", "result"):
            expected |= ((1 << P.FIELDS["opcode"][1]) - 1) << P.FIELDS["opcode"][0]
        if kind == "result":
            expected &= (1 << P.GROUP_DESC_LSB) - 1
            assert "256 + 16·G" in row
        assert listed == expected, f"{label}: the table lists {listed ^ expected:#x} wrongly"
