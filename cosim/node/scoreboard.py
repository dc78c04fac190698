"""Node scoreboard: input monitors -> golden node model -> compare with output monitors.

Inputs are the frames seen on the two receive streams (AxisFrame with the cycle
of every beat).  Their processing order is the order of their last beats, port 0
first in a tie (docs/protocol.md), which is all the golden model needs.
CONTROL responses are compared in order; RESULT frames per TX port as a set
keyed by (op_id, generation, offset), since blocks may complete in any order.

Resets cut a run into segments.  `rst` rises at the falling edge after cycle
R and is first sampled at the rising edge R + 1: frames whose last beat came
before R are processed before the reset, a frame completing at R is lost (the
ingress took it, the reset comes before its validation), and later frames
belong to the next segment.  Outputs leaving at cycles up to R belong to the segment
before the reset.  Every output must match a prediction of its own segment,
bit for bit and (responses) in order; a prediction of a segment that ended in
a reset may be missing (the node had not sent it yet: it is lost to the
reset), never a prediction of the last segment.

A mismatch report names the first differing element: operation, element
index, range, lane, contributors in admission order, expected and actual bits
with their decoded values, and the cycle at which the frame left the node.
"""
from dataclasses import dataclass, field
from typing import List

from golden.node import protocol as P
from golden.node.node_model import NodeModel
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY


# What a check can find, and what each kind means (every kind has a test that makes it fail:
# tests/node/test_scoreboard_kinds.py)
MISMATCH_KINDS = {
    "result-value": "an element of a RESULT frame differs from the golden model's",
    "result-layout": "a RESULT frame's groups (formats, counts) differ",
    "result-header": "a RESULT header field or reserved bit differs (count, groups, KULISCH_W, opcode, group slots)",
    "result-padding": "bits past a group's last element, or past E, are not 0",
    "result-missing": "a RESULT frame the model sends never left the node",
    "result-unexpected": "a RESULT frame the model does not send",
    "response": "a CONTROL response differs (ACK/NACK, reason, echoed fields), is missing or is extra",
    "response-bits": "a CONTROL response has reserved bits set or more than one beat",
    "malformed": "a frame that cannot be decoded, or of a class the node never sends",
    "counter": "a counter differs from the events the monitors saw",
    "rx-stall": "the node held tready low inside a frame while its next beat was offered",
    "tx-stall": "a transmit port offered no beat inside a Reduce's RESULT frame while its sink was ready",
    "tx-arbitration": "TX0 broke its round robin: two RESULT frames back to back while a CONTROL response "
                      "waited, or two responses while a RESULT frame waited",
    "line-rate": "a port lost cycles on the line-rate probe (back-to-back DATA frames, no backpressure)",
    "result-order": "a RESULT frame of an operation left after one of the next operation",
    "busy": "busy was low while a RESULT frame was still being sent (busy is high while an operation is open or draining)",
    "busy-rise": "busy rose with no COMMIT's last beat taken two edges before (it rises only with a successful COMMIT)",
    "reset-links": "tready, tvalid or busy was high at an edge right after one with rst high (they are low through a reset)",
    "end-state": "busy at the end of the run differs from the model's open operation",
    "timeout": "the run did not end: the node stayed busy or kept sending",
    "crash": "the simulator or the test bench stopped with an error",
}


def _result_frames_seen(tx_frames):
    """Per operation (op_id, generation): the cycle of its last RESULT beat on any transmit port,
    and how many of its RESULT frames were seen."""
    last_beat, seen = {}, {}
    for frames in tx_frames.values():
        for f in frames:
            head = f.beats[0]
            if P.get_field(head, "class") == P.CLASS_RESULT and f.cycles:
                key = (P.get_field(head, "op_id"), P.get_field(head, "generation"))
                last_beat[key] = max(last_beat.get(key, 0), f.cycles[-1])
                seen[key] = seen.get(key, 0) + 1
    return last_beat, seen


@dataclass
class Mismatch:
    kind: str                 # one of MISMATCH_KINDS
    port: int
    message: str
    op_id: int = None
    element: int = None
    expected: object = None
    actual: object = None
    cycle: int = None

    def __str__(self):
        return f"[TX{self.port}] {self.kind}: {self.message}"


@dataclass
class ScoreboardReport:
    mismatches: List[Mismatch] = field(default_factory=list)
    results_checked: int = 0
    elements_checked: int = 0
    responses_checked: int = 0
    lost_to_reset: int = 0          # predicted outputs a reset came before (allowed)
    frames_lost_to_reset: int = 0   # input frames complete at the cycle rst rose (never processed)

    @property
    def ok(self):
        return not self.mismatches

    def first(self):
        return self.mismatches[0] if self.mismatches else None

    def verdict(self):
        if self.ok:
            return (f"PASS: {self.results_checked} RESULT frames, {self.elements_checked} elements and "
                    f"{self.responses_checked} CONTROL responses bit-exact against the golden model")
        return f"FAIL: {len(self.mismatches)} mismatches; first: {self.mismatches[0]}"


def _describe(fmt, v, kulisch_w):
    from golden.arith.formats import decode
    if fmt == P.FMT_EXACT:
        total, flags = v
        return f"exact sum {total} * 2^-149 flags {flags:#x}"
    name = P.FORMAT_NAMES[fmt]
    width = P.ELEMENT_BITS[fmt] // 4
    try:
        val = decode(name, v)
        val = float(val) if not isinstance(val, str) else val
    except Exception:  # a value the decoder cannot represent is still reported by its bits
        val = "?"
    return f"{name} {v:#0{width + 2}x} ({val})"


def _field_at(bit, kind):
    """The header field of frame kind `kind` that holds header bit `bit` (or what else it is)."""
    for name in P.FRAME_FIELDS[kind]:
        lsb, width = P.FIELDS[name]
        if lsb <= bit < lsb + width:
            return f"field {name} [{lsb + width - 1}:{lsb}]"
    if kind == "result" and bit >= P.GROUP_DESC_LSB:
        g = (bit - P.GROUP_DESC_LSB) // P.GROUP_DESC_BITS
        return f"group {g} descriptor"
    return "a reserved bit"


def _beat_difference(expected, actual, kind):
    """Where two frames' beats first differ, in words: beat, bit, what the bit is, both values."""
    if len(expected) != len(actual):
        return f"{len(actual)} beats, expected {len(expected)}"
    for n, (e, a) in enumerate(zip(expected, actual)):
        if e != a:
            diff = e ^ a
            bit = (diff & -diff).bit_length() - 1
            where = _field_at(bit, kind) if n == 0 else "payload (past the last element: padding must be 0)"
            return (f"beat {n} bit {bit} ({where}) is {a >> bit & 1}, expected {e >> bit & 1}; "
                    f"beat {n} expected {e:#x}, got {a:#x}")
    return "no difference"


class NodeScoreboard:
    def __init__(self, capacity=MAX_CAPACITY, kulisch_w=KULISCH_WIDTH_DEFAULT, ports=2):
        self.kulisch_w = kulisch_w
        self.model = NodeModel(capacity=capacity, kulisch_w=kulisch_w, ports=ports)
        self.ports = ports
        self.inputs = []          # (last cycle, port, AxisFrame)
        self.resets = []          # cycles at which the node was reset
        self.log = []             # transaction log entries (dicts)
        self.events = []          # per processed frame and reset: what it met (for coverage)
        self.results_expected = {}    # (op_id, generation) -> RESULT frames the model sends

    def record_input(self, port, frame):
        self.inputs.append((frame.cycles[-1] if frame.cycles else 0, port, frame))

    def predict(self):
        """Feed the recorded inputs to the model in processing order; expected outputs per
        segment (between resets) and port."""
        def segment():
            return {p: {"responses": [], "results": {}} for p in range(self.ports)}
        segments = [segment()]
        resets = sorted(self.resets)
        self.frames_lost = 0
        self.due = {}
        self.results_expected = {}
        self.segment_ranges = []      # ranges the model completed in each segment but the last
        for cycle, port, frame in sorted(self.inputs, key=lambda t: (t[0], t[1])):
            while resets and resets[0] < cycle:
                self._reset(resets.pop(0))
                segments.append(segment())
            if resets and cycle == resets[0]:
                # completed in the cycle rst rose: the reset comes before its validation
                self.frames_lost += 1
                self.events.append({"kind": "lost", "cycle": cycle, "port": port})
                self.log.append({"dir": "lost", "port": port, "cycle": cycle, "beats": len(frame.beats),
                                 "header": f"{frame.beats[0]:#x}"})
                continue
            self.log.append({"dir": "in", "port": port, "cycle": cycle, "beats": len(frame.beats),
                             "header": f"{frame.beats[0]:#x}"})
            outs = self.model.receive(port, frame.beats)
            self.events.append(dict(self.model.last, cycle=cycle, port=port, beats=len(frame.beats),
                                    header=frame.beats[0], frame=frame.beats))
            for out in outs:
                self.due[id(out.frame)] = cycle       # the input frame whose processing made it due
                if isinstance(out.frame, P.Response):
                    segments[-1][out.port]["responses"].append(out.frame)
                else:
                    key = (out.frame.op_id, out.frame.generation, out.frame.offset)
                    segments[-1][out.port]["results"][key] = out.frame
                    self.results_expected[key[:2]] = self.results_expected.get(key[:2], 0) + 1
        while resets:
            self._reset(resets.pop(0))
            segments.append(segment())
        return segments

    def _reset(self, cycle):
        op = self.model.active
        self.events.append({"kind": "reset", "cycle": cycle, "op": op,
                            "open": op is not None and op.in_progress,
                            "admitted_before": 0 if op is None else op.frames_admitted,
                            "staged": self.model.staged})
        done = self.model.node_counters["ranges_completed"]
        self.segment_ranges.append(done - sum(self.segment_ranges))
        self.model.reset()
        self.log.append({"dir": "reset", "cycle": cycle})

    # cycles from an operation's last RESULT beat on the wire until the node releases a COMMIT
    # it held during the drain (generous: the bound below only widens by it)
    HOLD_RELEASE_SLACK = 32

    def _drains(self, drain_end_of):
        """(event, drain_end) for the processed-frame events in order, drain_end the cycle the drain
        of the last operation that ended (since the start or the last reset) ends, as
        drain_end_of((op_id, generation), event) gave it at the event that ended the operation (the
        key None when the model knew no operation); None while none has ended.  Resets are yielded
        too (with None), lost frames are not."""
        drain_end = None
        for ev in self.events:
            if ev["kind"] == "reset":
                drain_end = None
            elif ev["kind"] == "lost":
                continue
            elif ev.get("ends_op"):
                op = ev.get("op")
                drain_end = drain_end_of((op.stage.op_id, op.stage.generation) if op is not None else None, ev)
            yield ev, drain_end

    def possibly_held_at_reset(self, tx_frames):
        """Processed-frame events the node may still have held when a reset came.

        A COMMIT that arrives while the previous operation drains is held, with the frames
        processed after it, until the drain ends (docs/protocol.md); a reset discards them
        unanswered and uncounted.  The model answers them at once, so for a frame that came
        after such a COMMIT and before a reset that fell inside the drain (or soon after its
        last RESULT beat), the node's counters may or may not include it."""
        last_beat, seen = _result_frames_seen(tx_frames)
        for key in list(last_beat):
            if seen[key] < self.results_expected.get(key, 0):
                del last_beat[key]      # the drain was still sending when the reset came
        uncertain, segment, held = [], [], False
        # (not every RESULT seen: the drain lasted until the reset, or the end of the run)
        for ev, drain_end in self._drains(lambda key, ev: last_beat.get(key, float("inf")) if key else None):
            if ev["kind"] == "reset":
                if held:
                    uncertain += [e for e in segment if e.get("held_from", 0) and
                                  ev["cycle"] <= e["held_from"] + self.HOLD_RELEASE_SLACK]
                segment, held = [], False
                continue
            if ev["kind"] == "COMMIT" and drain_end is not None and ev["cycle"] <= drain_end:
                held = True
            if held:
                segment.append(dict(ev, held_from=drain_end))
        return uncertain

    def ranges_surely_completed(self, tx_frames):
        """Ranges the node must have completed: every range of the last segment (after the last
        reset) and those of the blocks whose RESULT frames left before a reset."""
        resets = sorted(self.resets)
        last_start = resets[-1] if resets else -1
        total = self.model.node_counters["ranges_completed"] - sum(self.segment_ranges)
        seen = set()
        for frames in tx_frames.values():
            for f in frames:
                if P.get_field(f.beats[0], "class") == P.CLASS_RESULT and f.cycles and f.cycles[-1] <= last_start:
                    head = f.beats[0]
                    seen.add((P.get_field(head, "op_id"), P.get_field(head, "generation"),
                              P.get_field(head, "offset"), P.get_field(head, "n")))
        return total + sum(-(-n // P.RANGE_ELEMS) for *_, n in seen)

    def contributors_of(self, op_id, generation, element):
        op = self.model.operations.get((op_id, generation))
        return [] if op is None else [c for c, _ in op.admissions.get(element, [])]

    # How long an output may still be on its way when a reset discards it, in cycles after the
    # input frame that made it due, beyond the cycles its port was stalled or busy sending: a
    # CONTROL response (not held behind a drain) or a RESULT frame.  Measured on the node over
    # 200 hostile seeds on Verilator (docs/verification.md): at most 54 for a response and 170 for
    # a RESULT frame; the bounds are generous so that only an output held back for no reason fails.
    RESPONSE_DUE = 128
    RESULT_DUE = 512

    def held_until(self, tx_frames):
        """{id(event): cycle} for the frames processed behind a COMMIT held during a drain: they
        are answered when the drain ends (the previous operation's last RESULT beat; inf when it
        never ended before a reset or the end of the run)."""
        last_beat, seen = _result_frames_seen(tx_frames)

        def drain_end_of(key, ev):
            complete = key is not None and seen.get(key, 0) >= self.results_expected.get(key, 0)
            return last_beat.get(key, ev["cycle"]) if complete else float("inf")

        out, until = {}, None
        for ev, drain_end in self._drains(drain_end_of):
            if ev["kind"] == "reset":
                until = None
                continue
            if ev["kind"] == "COMMIT" and drain_end is not None and ev["cycle"] <= drain_end:
                until = drain_end
            if until is not None:
                out[id(ev)] = until
        return out

    def compare(self, tx_frames, ready=None, cut_frames=None):
        """tx_frames: {port: [AxisFrame]} as received by the sinks (frames a reset cut are not here).
        ready(port, cycle): whether the port's sink took beats in that cycle (the test bench's pause
        pattern); with it, an output a reset discarded must have been due shortly before the reset
        (RESPONSE_DUE, RESULT_DUE), else only the order of what was lost is checked.
        cut_frames: {port: [AxisFrame]}, the beats of the frames a reset cut short: a port is busy
        from a frame's first beat to its last or to the reset that cut it (the egress sends a frame
        whole, so nothing else can leave there meanwhile, even while the frame waits for its next
        beat)."""
        segments = self.predict()
        resets = sorted(self.resets)
        report = ScoreboardReport(frames_lost_to_reset=self.frames_lost)
        last = len(segments) - 1
        held = self.held_until(tx_frames) if ready is not None else {}
        trigger = {}                    # input cycle -> its event (held or not)
        for ev in self.events:
            if ev["kind"] not in ("reset", "lost"):
                trigger.setdefault(ev["cycle"], ev)
        sending = {q: set() for q in set(tx_frames) | set(cut_frames or {})}
        for q, frames in tx_frames.items():
            for f in frames:
                if f.cycles:
                    sending[q].update(range(f.cycles[0], f.cycles[-1] + 1))
        for q, frames in (cut_frames or {}).items():
            for f in frames:
                if f.cycles:
                    cut_at = next((r for r in resets if r >= f.cycles[-1]), f.cycles[-1])
                    sending[q].update(range(f.cycles[0], cut_at + 1))

        def late(frame, ports, reset, bound):
            """Why `frame`, expected before the reset at `reset` and never sent, was due long before
            it (None: it may have been on its way)."""
            if ready is None:
                return None
            due = self.due.get(id(frame))
            if due is None:
                return None
            ev = trigger.get(due)
            start = due
            if ev is not None and id(ev) in held:
                if held[id(ev)] == float("inf"):
                    return None
                start = max(due, held[id(ev)])
            waited = sum(1 for c in range(start + 1, reset + 1)
                         if all(ready(q, c) for q in ports) and not any(c in sending.get(q, ()) for q in ports))
            if waited > bound:
                return (f"it was due from cycle {start} (its input frame's last beat"
                        f"{', then held behind a drain' if start > due else ''}), and its port stood ready "
                        f"and idle for {waited} cycles before the reset at cycle {reset} (bound {bound})")
            return None
        for port in range(self.ports):
            got_resp = [[] for _ in segments]
            exp_res = [dict(seg[port]["results"]) for seg in segments]
            for frame in tx_frames.get(port, []):
                leave = frame.cycles[-1] if frame.cycles else None
                k = sum(1 for r in resets if leave is not None and r < leave)     # its segment
                self.log.append({"dir": "out", "port": port, "cycle": leave, "beats": len(frame.beats),
                                 "header": f"{frame.beats[0]:#x}"})
                try:
                    obj = P.decode(frame.beats)
                except P.MalformedFrame as e:
                    report.mismatches.append(Mismatch("malformed", port, f"undecodable frame leaving at cycle {leave}: {e}", cycle=leave))
                    continue
                if isinstance(obj, P.Response):
                    got_resp[k].append((obj, leave))
                    if frame.beats != obj.encode():
                        report.mismatches.append(Mismatch(
                            "response-bits", port, f"CONTROL response {obj} leaving at cycle {leave}: "
                            f"{_beat_difference(obj.encode(), frame.beats, 'response')}", cycle=leave))
                elif isinstance(obj, P.Result):
                    key = (obj.op_id, obj.generation, obj.offset)
                    want = exp_res[k].pop(key, None)
                    if want is None:
                        where = "" if not resets else f" in segment {k} (after {k} resets)"
                        report.mismatches.append(Mismatch("result-unexpected", port,
                                                          f"RESULT op {obj.op_id} offset {obj.offset} not predicted{where} (cycle {leave})",
                                                          op_id=obj.op_id, cycle=leave))
                        continue
                    report.results_checked += 1
                    self._compare_result(report, port, want, obj, leave, frame.beats)
                else:
                    report.mismatches.append(Mismatch("malformed", port, f"unexpected frame {obj} at cycle {leave}", cycle=leave))
            self._check_result_order(report, port, tx_frames.get(port, []), resets)
            for k, seg in enumerate(segments):
                for key, want in exp_res[k].items():
                    if k < last:
                        why = late(want, self._recipients(want), resets[k], self.RESULT_DUE)
                        if why:
                            report.mismatches.append(Mismatch(
                                "result-missing", port, f"RESULT op {key[0]} gen {key[1]} offset {key[2]} "
                                f"was never sent before reset {k + 1}: {why}", op_id=key[0], element=key[2]))
                        report.lost_to_reset += 1
                        continue
                    report.mismatches.append(Mismatch("result-missing", port,
                                                      f"RESULT op {key[0]} gen {key[1]} offset {key[2]} never sent",
                                                      op_id=key[0], element=key[2]))
                exp_resp = seg[port]["responses"]
                got = got_resp[k]
                n = len(got) if k < last else max(len(exp_resp), len(got))
                report.lost_to_reset += max(0, len(exp_resp) - len(got)) if k < last else 0
                if k < last and len(exp_resp) > len(got):
                    why = late(exp_resp[len(got)], (port,), resets[k], self.RESPONSE_DUE)
                    if why:
                        report.mismatches.append(Mismatch(
                            "response", port, f"CONTROL response #{len(got)} ({exp_resp[len(got)]}) was never "
                            f"sent before reset {k + 1}: {why}"))
                for j in range(n):
                    want = exp_resp[j] if j < len(exp_resp) else None
                    have, leave = got[j] if j < len(got) else (None, None)
                    report.responses_checked += 1
                    if want != have:
                        report.mismatches.append(Mismatch("response", port,
                                                          f"CONTROL response #{j}{f' after reset {k}' if k else ''}: "
                                                          f"expected {want}, got {have} (cycle {leave})",
                                                          expected=want, actual=have, cycle=leave))
        return report

    def _recipients(self, result):
        """The ports a RESULT frame goes to (a stalled one delays the other by a beat at most)."""
        op = self.model.operations.get((result.op_id, result.generation))
        mask = op.stage.recipients if op is not None else 0b11
        return tuple(p for p in range(self.ports) if mask >> p & 1) or (0,)

    def _check_result_order(self, report, port, frames, resets):
        """All RESULT frames of an operation leave a port before any of the next operation
        (docs/protocol.md, "RESULT"), operations in the order they were committed; checked
        between resets (a reset ends every operation)."""
        commits = [(ev["cycle"], (ev["new_op"].stage.op_id, ev["new_op"].stage.generation)) for ev in self.events
                   if ev["kind"] == "COMMIT" and ev.get("verdict") == "OK" and ev.get("new_op") is not None]
        bounds = [-1] + list(resets) + [float("inf")]
        for lo, hi in zip(bounds, bounds[1:]):
            order = [key for c, key in commits if lo < c <= hi]
            seen, last = [], None
            for f in frames:
                leave = f.cycles[-1] if f.cycles else None
                head = f.beats[0]
                if leave is None or not lo < leave <= hi or P.get_field(head, "class") != P.CLASS_RESULT:
                    continue
                key = (P.get_field(head, "op_id"), P.get_field(head, "generation"))
                if key == last:
                    continue
                if key in seen or (key in order and any(order.index(k) > order.index(key) for k in seen
                                                        if k in order)):
                    report.mismatches.append(Mismatch(
                        "result-order", port, f"RESULT op {key[0]} gen {key[1]} left TX{port} at cycle {leave}, "
                        f"after RESULT frames of op {last[0]} gen {last[1]}"
                        + (" (it had already sent frames before them)" if key in seen else
                           " (committed after it)"), op_id=key[0], cycle=leave))
                    return
                seen.append(key)
                last = key

    def _compare_result(self, report, port, want, got, leave, beats):
        exp_el = list(want.elements())
        got_el = list(got.elements())
        if [(i, f) for i, f, _ in exp_el] != [(i, f) for i, f, _ in got_el]:
            report.mismatches.append(Mismatch(
                "result-layout", port,
                f"RESULT op {want.op_id} offset {want.offset}: group layout differs: expected "
                f"{[(P.FORMAT_NAMES[f], len(v)) for f, v in want.groups]}, got "
                f"{[(P.FORMAT_NAMES.get(f, f), len(v)) for f, v in got.groups]} (cycle {leave})",
                op_id=want.op_id, element=want.offset, cycle=leave))
            return
        for (i, fmt, ev), (_, _, gv) in zip(exp_el, got_el):
            report.elements_checked += 1
            if ev != gv:
                contributors = self.contributors_of(want.op_id, want.generation, i)
                msg = (f"op {want.op_id} element {i} (range {i // P.RANGE_ELEMS}, lane {i % P.RANGE_ELEMS}), "
                       f"contributors {contributors}: expected {_describe(fmt, ev, self.kulisch_w)}, "
                       f"got {_describe(fmt, gv, self.kulisch_w)}; frame left TX{port} at cycle {leave}")
                report.mismatches.append(Mismatch("result-value", port, msg, op_id=want.op_id, element=i,
                                                  expected=ev, actual=gv, cycle=leave))
                return
        # the values agree: every other bit of the frame must be the model's too (header fields,
        # reserved bits, unused group slots, padding past the last element of each group)
        expected = want.encode()
        if beats != expected:
            kind = "result-header" if beats[:1] != expected[:1] else "result-padding"
            report.mismatches.append(Mismatch(
                kind, port, f"RESULT op {want.op_id} offset {want.offset} (left TX{port} at cycle {leave}): "
                f"{_beat_difference(expected, beats, 'result')}", op_id=want.op_id, element=want.offset,
                cycle=leave))
