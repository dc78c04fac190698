"""The node's scoreboard for cocotb: what the monitors saw, judged by the kit's golden model.

`PrismScoreboard` collects, from the monitors, every frame that moved on the two receive
and two transmit streams (with the cycle of each beat), the frames resets cut, the resets
themselves and protocol errors the monitors found.  `check()` then feeds the input frames
to the golden node model (golden/node/node_model.py) in processing order (their last beats'
cycles, port 0 first in a tie) and compares with cosim.node.scoreboard.NodeScoreboard,
the scoreboard of the kit's own regressions:

- every RESULT frame bit for bit: element values first (named with operation, element,
  range, lane and the contributors in admission order), then the whole frame as the
  protocol encodes it: every header field, reserved bit, group descriptor and unused slot,
  and the padding past each group's last element;
- CONTROL responses in order, field by field and as a whole beat;
- RESULT frames of an operation before the next operation's, on each port;
- TX port 0 alternating between waiting responses and RESULT frames;
- every counter (all 64 `counter_select` values, when the test read them) against the
  events the monitors saw;
- `busy` at the end against the model's open operation, and, watched at every rising edge,
  high while RESULT frames leave and rising only two edges after a COMMIT's last beat;
- resets: frames cut, outputs a reset may discard, per docs/verification.md.

The comparison runs over the whole run at once (RESULT blocks of an operation may leave in
any order, and a reset decides which predictions may go missing), so call it once traffic
has settled (`PrismNodeEnv.wait_idle()`).  Mismatches are reported in cycle order: the
first is the earliest wrong frame.
"""
from dataclasses import dataclass, fields

from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY

from cosim.node.node_harness import (NodeRun, busy_rises_with_commit, busy_while_sending, counter_names,
                                     expected_counter, tx0_arbitration)
from cosim.node.scoreboard import MISMATCH_KINDS, Mismatch, NodeScoreboard, ScoreboardReport

# the kit's kinds, and one of the monitors' own
VIP_MISMATCH_KINDS = dict(MISMATCH_KINDS, undefined="a handshake at a rising edge, or the tdata of a beat taken, "
                                                    "was X or Z")

FAILURES_LISTED = 8         # mismatches a failure message lists after the first


@dataclass
class PrismReport(ScoreboardReport):
    """The kit's ScoreboardReport (mismatches, frames and elements checked, `ok`, `first()`)
    with what was judged: `run` (the observed NodeRun), `scoreboard` (the NodeScoreboard and
    its golden model) and, once the environment has sampled it, `coverage`."""
    run: object = None
    scoreboard: object = None
    coverage: object = None

    def summary(self):
        """A verdict line; on failure the first mismatch and the next few, one per line."""
        if self.ok:
            return self.verdict()
        lines = [f"FAIL: {len(self.mismatches)} mismatches; first: {self.mismatches[0]}"]
        lines += [f"  then: {m}" for m in self.mismatches[1:1 + FAILURES_LISTED]]
        if len(self.mismatches) > 1 + FAILURES_LISTED:
            lines.append(f"  ... and {len(self.mismatches) - 1 - FAILURES_LISTED} more")
        return "\n".join(lines)


class PrismScoreboard:
    """Collects what the monitors saw on the node's ports and judges it against the golden
    model (see the module docstring).  Independent of the simulator: the unit tests feed it
    frames by hand (`input_frame`, `output_frame`, `reset_at`)."""

    def __init__(self, kulisch_w=KULISCH_WIDTH_DEFAULT, capacity=MAX_CAPACITY, ports=2):
        self.kulisch_w, self.capacity, self.ports = kulisch_w, capacity, ports
        self.rx = {p: [] for p in range(ports)}        # AxisFrames taken on each receive port
        self.tx = {p: [] for p in range(ports)}        # ... sent on each transmit port
        self.rx_cut = {p: [] for p in range(ports)}    # frames a reset cut, per receive port
        self.tx_cut = {p: [] for p in range(ports)}
        self.resets = []                               # cycles at which rst rose
        self.protocol_errors = []                      # Mismatches the monitors found

    # --- what the monitors report -----------------------------------------------------------
    def input_frame(self, port, frame):
        """A frame whose last beat the design took on receive port `port` (an AxisFrame with cycles)."""
        self.rx[port].append(frame)

    def output_frame(self, port, frame):
        """A frame the design sent whole on transmit port `port`."""
        self.tx[port].append(frame)

    def input_cut(self, port, frame):
        self.rx_cut[port].append(frame)

    def output_cut(self, port, frame):
        self.tx_cut[port].append(frame)

    def reset_at(self, cycle):
        """rst rose between rising edges `cycle` and `cycle` + 1 (or at edge `cycle`, after it)."""
        self.resets.append(cycle)

    def protocol_error(self, mismatch):
        self.protocol_errors.append(mismatch)

    # --- the verdict --------------------------------------------------------------------------
    def node_run(self, counters=None, busy_at_end=False, cycles=0, busy_changes=None):
        """Everything observed, in the form the kit's checks and coverage sampler read.
        `counters`: {counter_select: value} as read, or None; `busy_changes`: (cycle, level) at
        each change of `busy` as sampled at the rising edges, or None (not watched)."""
        names = counter_names()
        return NodeRun("cocotb", tx={p: list(f) for p, f in self.tx.items()},
                       rx={p: list(f) for p, f in self.rx.items()},
                       counters={names[sel]: v for sel, v in (counters or {}).items() if sel in names},
                       cycles=cycles, resets=sorted(self.resets), busy_at_end=bool(busy_at_end),
                       busy_changes=None if busy_changes is None else list(busy_changes),
                       truncated={p: len(f) for p, f in self.rx_cut.items()},
                       rx_cut={p: [f.cycles[-1] for f in frames if f.cycles] for p, frames in self.rx_cut.items()},
                       cut={p: list(f) for p, f in self.tx_cut.items()})

    def check(self, counters=None, busy_at_end=None, cycles=0, busy_changes=None):
        """Judge the run so far.  `counters`: {counter_select: value} for every selection read
        (None: counters not checked); `busy_at_end`: the design's `busy` now (None: not checked);
        `busy_changes`: `busy` as watched (node_run; None: judged at the end only).
        Returns a PrismReport; `ok` is True when nothing differs."""
        run = self.node_run(counters, busy_at_end, cycles, busy_changes)
        sb = NodeScoreboard(capacity=self.capacity, kulisch_w=self.kulisch_w, ports=self.ports)
        for port in range(self.ports):
            for frame in run.rx[port]:
                sb.record_input(port, frame)
        sb.resets = list(run.resets)
        found = sb.compare(run.tx)
        report = PrismReport(**{f.name: getattr(found, f.name) for f in fields(found)}, run=run, scoreboard=sb)
        report.mismatches += self.protocol_errors
        if counters is not None:
            report.mismatches += self._counter_mismatches(sb, run, counters)
        report.mismatches += tx0_arbitration(sb, run)
        if busy_changes is not None:
            report.mismatches += busy_while_sending(run) + busy_rises_with_commit(run)
        if busy_at_end is not None:
            report.mismatches += self._end_state(sb, run)
        # earliest first; mismatches without a cycle (a frame never sent, a counter) after them
        report.mismatches.sort(key=lambda m: (m.cycle is None, m.cycle or 0))
        return report

    @staticmethod
    def _counter_mismatches(sb, run, counters):
        out = []
        names = counter_names()
        unread = sorted(sel for sel in names if sel not in counters)
        if unread:
            out.append(Mismatch("counter", 0, f"{len(unread)} counter selections were not read "
                                              f"(first: {unread[0]}, {names[unread[0]][1]})"))
        for (port, name), got in sorted(run.counters.items(), key=lambda kv: (kv[0][0] is None, kv[0])):
            low, high = expected_counter(sb, run, port, name)
            if not low <= got <= high:
                want = low if low == high else f"{low} .. {high}"
                out.append(Mismatch("counter", port if port is not None else 0,
                                    f"counter {name}{'' if port is None else f' (port {port})'}: expected {want}, "
                                    f"got {got}", expected=want, actual=got))
        return out

    @staticmethod
    def _end_state(sb, run):
        op = sb.model.active
        open_op = op is not None and op.in_progress
        if run.busy_at_end == open_op:
            return []
        what = f"operation {op.stage.op_id} still waits for contributions" if open_op else "no operation is open"
        return [Mismatch("end-state", 0, f"busy at the end: expected {int(open_op)} ({what}), got "
                                         f"{int(run.busy_at_end)}", expected=int(open_op), actual=int(run.busy_at_end))]

