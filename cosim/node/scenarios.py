"""Stimulus for the node: operations turned into frames on the two receive ports.

A `Scenario` is static: per port, an ordered list of frames, each with the idle
cycles that precede it, plus pause probabilities for every stream and a seed.
Static stimulus is what lets the same scenario run under per-cycle
co-simulation and under the batched file-driven test bench with identical
cycle counts.
"""
import random
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import numpy as np

from golden.node import protocol as P
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY

from cosim.sim.axis import AxisFrame
from cosim.sim.batch import RESET_STREAM, ResetEvent

DTYPES = {P.FMT_INT8: np.uint8, P.FMT_FP16: np.uint16, P.FMT_BF16: np.uint16, P.FMT_FP32: np.uint32}
POLICY_CODES = {"kulisch": P.POLICY_KULISCH, "fp32-arrival": P.POLICY_FP32_ARRIVAL}


@dataclass
class Operation:
    op_id: int
    generation: int
    policy: str                 # "kulisch" or "fp32-arrival"
    in_format: str              # int8 fp16 bf16 fp32, or exact (another node's partials)
    result_format: str          # int8 fp16 bf16 fp32 exact auto
    data: np.ndarray            # C x E raw bit patterns (exact: an object array of (sum, flags)); row c is contributor c
    mode: int = P.MODE_ALLREDUCE
    recipients: int = 0b11
    frame_elems: int = MAX_CAPACITY   # elements per DATA frame (capped by the frame bank)
    ids: Optional[tuple] = None     # contributor id of each row (default row c is contributor c)
    ports: Optional[tuple] = None   # receive port of each row (default: build's port_of)
    starts: Optional[tuple] = None  # element each row's frames start from (then round to 0; default 0)

    @property
    def contributor_ids(self):
        return tuple(self.ids) if self.ids is not None else tuple(range(self.contributors))

    @property
    def elements(self):
        return self.data.shape[1]

    @property
    def contributors(self):
        return self.data.shape[0]

    def stage(self):
        return P.Stage(self.op_id, self.generation, POLICY_CODES[self.policy], P.FORMAT_CODES[self.in_format],
                       P.FORMAT_CODES[self.result_format], self.mode, self.elements,
                       sum(1 << c for c in self.contributor_ids), self.recipients)

    def commit(self):
        return P.Commit(self.op_id, self.generation)

    def data_frames(self, contributor):
        """DATA frames of one contributor (a row of `data`): its row cut into frames that fit a frame bank,
        from element `starts[c]` to the end, then from 0 (a rotation: every element once)."""
        fmt = P.FORMAT_CODES[self.in_format]
        per_frame = min(self.frame_elems, P.MAX_PAYLOAD_BEATS * P.ELEMS_PER_BEAT[fmt])
        per_frame -= per_frame % P.RANGE_ELEMS
        row = self.data[contributor]
        value = (lambda x: (int(x[0]), int(x[1]))) if fmt == P.FMT_EXACT else int
        start = self.starts[contributor] if self.starts is not None else 0
        if start % P.RANGE_ELEMS or not 0 <= start < self.elements:
            raise ValueError(f"a row's frames start at a range inside the vector, not at element {start}")
        cuts = [(lo, min(lo + per_frame, self.elements)) for lo in range(start, self.elements, per_frame)] + \
               [(lo, min(lo + per_frame, start)) for lo in range(0, start, per_frame)]
        return [P.Data(self.op_id, self.generation, self.contributor_ids[contributor], fmt, lo,
                       tuple(value(x) for x in row[lo:hi]))
                for lo, hi in cuts]


@dataclass
class Scenario:
    seed: int
    frames: Dict[int, List[AxisFrame]] = field(default_factory=lambda: {0: [], 1: []})
    source_pause: Dict[int, float] = field(default_factory=lambda: {0: 0.0, 1: 0.0})
    sink_pause: Dict[int, float] = field(default_factory=lambda: {0: 0.0, 1: 0.0})
    operations: List[Operation] = field(default_factory=list)
    # mid-run resets: ResetEvent (a cycle, or a stream's progress plus a delay) or a plain int (a cycle)
    resets: List[object] = field(default_factory=list)
    # edges each mid-run reset holds rst high (docs/protocol.md allows one or more)
    reset_hold: int = 2
    op_frames: List[dict] = field(default_factory=list)   # per built operation: its frames (see build)
    sink_burst: int = 1         # pauses come in bursts of 1 .. burst cycles (long stalls when large)
    # per TX port, edges [first, end) in which its sink takes nothing, beside the random pauses
    sink_windows: Dict[int, tuple] = field(default_factory=dict)
    source_burst: int = 1
    kulisch_w: int = KULISCH_WIDTH_DEFAULT   # the node build the scenario is meant for
    description: str = ""
    probe: Optional[dict] = None    # a line-rate probe's operation (cosim.node.regress.add_line_rate_probe)
    # a frame the node must start taking before an edge ({"port", "frame": an AxisFrame of that
    # port, "by"}: cosim.node.regress.add_response_margin, node_harness.check_margin)
    margin: Optional[dict] = None

    def add_reset(self, event):
        """Schedule a mid-run reset (ResetEvent or cycle); returns how many resets are then
        scheduled, the count a frame waits for with after=("reset", n)."""
        self.resets.append(event)
        return len(self.resets)

    def add(self, port, frame_obj, delay=0, after=None):
        """Append a frame to `port`; `after` = (other port, one of its AxisFrames): this frame
        waits until that frame has been sent, or ("reset", n): until n resets are over.
        Returns the AxisFrame."""
        beats = frame_obj.encode() if hasattr(frame_obj, "encode") else list(frame_obj)
        frame = AxisFrame(beats, delay=delay, after=after)
        self.frames[port].append(frame)
        return frame

    def stream(self, port):
        """Copies of `port`'s frames for a source, each `after` resolved to (port, frames to wait
        for) by position, so frames inserted later (malformed ones) keep the intended order."""
        out = []
        position = {}                   # per port: id(frame) -> its index, built once
        for f in self.frames.get(port, []):
            after = None
            if f.after is not None and f.after[0] == RESET_STREAM:
                after = f.after             # ("reset", n): waits until n mid-run resets are over
            elif f.after is not None:
                other, target = f.after
                if other not in position:
                    position[other] = {id(g): i for i, g in enumerate(self.frames[other])}
                index = position[other].get(id(target))
                if index is None:
                    raise ValueError(f"port {port}: a frame waits on a frame that is not on port {other}")
                after = (other, index + 1)
            out.append(AxisFrame(f.beats, delay=f.delay, after=after))
        return out

    def stuck(self):
        """The frames that can never start, as "port P frame N" strings (empty: every frame
        goes out).  Sources take their frames in order, a frame waits for its `after` (a frame
        of the other port finished, or n mid-run resets over), and resets rise in schedule order
        once their stream condition holds; cycle counts and delays only postpone, so this order
        alone decides whether the stimulus can finish.  A scenario whose frames wait on each
        other across the ports would keep the node's sources busy until the cycle budget runs out."""
        streams = {p: self.stream(p) for p in self.frames}
        done = {p: 0 for p in streams}
        events = [e if isinstance(e, ResetEvent) else ResetEvent("cycle", 0, int(e)) for e in self.resets]
        fired, moved = 0, True
        while moved:
            moved = False
            for p, frames in streams.items():
                while done[p] < len(frames):
                    after = frames[done[p]].after
                    if after is not None and (fired < after[1] if after[0] == RESET_STREAM
                                              else done[after[0]] < after[1]):
                        break
                    done[p] += 1
                    moved = True
            while fired < len(events):
                side, _, k = events[fired].source.partition(" ")
                # output progress follows from the input frames; only input conditions can wait forever
                if side == "in" and done[int(k)] < events[fired].count:
                    break
                fired += 1
                moved = True
        return [f"port {p} frame {done[p]}" for p, frames in streams.items() if done[p] < len(frames)]

    def save(self, path):
        """Write the stimulus as JSON (frames as hex beats with their delays and waits, pause
        settings, resets): a scenario kept as a file replays without the code that drew it."""
        import json
        out = {"seed": self.seed, "description": self.description, "source_pause": self.source_pause,
               "sink_pause": self.sink_pause, "source_burst": self.source_burst, "sink_burst": self.sink_burst,
               "kulisch_w": self.kulisch_w,
               "sink_windows": {str(p): [list(w) for w in ws] for p, ws in self.sink_windows.items()},
               "margin": None if self.margin is None else
               {"port": self.margin["port"], "by": self.margin["by"],
                "frame": next(i for i, f in enumerate(self.frames[self.margin["port"]]) if f is self.margin["frame"])},
               "resets": [r if isinstance(r, int) else {"source": r.source, "count": r.count, "delay": r.delay}
                          for r in self.resets],
               "reset_hold": self.reset_hold,
               "frames": {str(p): [{"beats": [f"{b:x}" for b in f.beats], "delay": f.delay,
                                     "after": list(f.after) if f.after else None} for f in self.stream(p)]
                          for p in (0, 1)}}
        with open(path, "w") as fh:
            json.dump(out, fh, indent=0)

    @classmethod
    def load(cls, path):
        """A scenario written by `save` (waits on other streams refer to frame counts there)."""
        import json
        with open(path) as fh:
            d = json.load(fh)
        sc = cls(d["seed"], description=d.get("description", ""))
        raw = {p: d["frames"][str(p)] for p in (0, 1)}
        for p in (0, 1):
            sc.frames[p] = [AxisFrame([int(b, 16) for b in f["beats"]], delay=f["delay"]) for f in raw[p]]
        for p in (0, 1):
            for f, r in zip(sc.frames[p], raw[p]):
                if r["after"]:
                    q, n = r["after"]
                    f.after = (RESET_STREAM, n) if q == RESET_STREAM else (q, sc.frames[q][n - 1])
        sc.source_pause = {int(k): v for k, v in d["source_pause"].items()}
        sc.sink_pause = {int(k): v for k, v in d["sink_pause"].items()}
        sc.source_burst, sc.sink_burst = d.get("source_burst", 1), d.get("sink_burst", 1)
        sc.kulisch_w = d.get("kulisch_w", KULISCH_WIDTH_DEFAULT)
        sc.sink_windows = {int(p): tuple(tuple(w) for w in ws) for p, ws in d.get("sink_windows", {}).items()}
        if d.get("margin"):
            m = d["margin"]
            sc.margin = {"port": m["port"], "by": m["by"], "frame": sc.frames[m["port"]][m["frame"]]}
        sc.resets = [r if isinstance(r, int) else ResetEvent(r["source"], r["count"], r["delay"]) for r in d["resets"]]
        sc.reset_hold = d.get("reset_hold", 2)
        return sc

    @property
    def data_beats(self):
        return {p: sum(len(f) for f in fs if P.get_field(f.beats[0], "class") == P.CLASS_DATA)
                for p, fs in self.frames.items()}


def random_elements(rng, fmt_name, shape, specials=False):
    """Random bit patterns of a format; finite unless `specials`."""
    fmt = P.FORMAT_CODES[fmt_name]
    w = P.ELEMENT_BITS[fmt]
    bits = np.array([rng.getrandbits(w) for _ in range(int(np.prod(shape)))], dtype=np.uint64)
    if not specials and fmt != P.FMT_INT8:
        exp_shift, exp_mask = {P.FMT_FP16: (10, 0x1F), P.FMT_BF16: (7, 0xFF), P.FMT_FP32: (23, 0xFF)}[fmt]
        all_ones = ((bits >> exp_shift) & exp_mask) == exp_mask
        bits[all_ones] ^= np.uint64(1 << exp_shift)    # clear one exponent bit: finite
    return bits.astype(DTYPES[fmt]).reshape(shape)


def build(ops, seed=0, source_pause=0.0, sink_pause=0.0, control_port=0, port_of=None, interleave=True,
          data_delay=8, gap=0, scenario=None, after_reset=None, reset_before=None):
    """Operations one after another: for each, STAGE and COMMIT on `control_port`, then
    every contributor's DATA frames (row c on port `op.ports[c]` if the operation names its
    ports, else `port_of(c)`, default c % 2).

    The next operation's STAGE follows the previous COMMIT at once (so it is staged while
    the previous operation is active); its COMMIT follows the previous operation's last
    DATA frame after `gap` idle cycles (default none: the node holds a COMMIT that comes
    while the previous operation's RESULT frames are still being formed).  With
    `interleave` both ports send concurrently; otherwise one contributor at a time, so
    admission order is contributor (row) order.

    Order across the two ports is enforced, not just planned (AxisFrame.after): DATA on
    the other port waits for its operation's COMMIT to be sent, the next COMMIT waits for
    the other port's last DATA frame, and sequential frames wait for the frame before
    them.  So backpressure can stretch the timeline but never reorders it (a DATA frame
    overtaking its COMMIT would be dropped and leave the operation open for good).
    Delays are planned for the no-pause case, stretched by 1/(1 - pause).

    `after_reset` = n: the operations start once n mid-run resets are over (the first frame on
    `control_port` waits for them; every other frame follows it).  `reset_before` = {k: n}:
    operation k (an index into `ops`) is staged and committed once n resets are over (it is
    not staged early, since a reset would empty the staged slot).

    Each operation's frames are recorded in `scenario.op_frames` (stage, commit, and the DATA
    frames per port), for callers that add frames around them.
    """
    reset_before = reset_before or {}
    sc = scenario or Scenario(seed)
    first_new = len(sc.frames[control_port])
    port_of = port_of or (lambda c: c % 2)
    stretch = 1.0 / (1.0 - max(source_pause, sink_pause, 0.0))
    free = {0: 0.0, 1: 0.0}          # when each port's previous frame is planned to end
    last = {0: None, 1: None}        # each port's last frame
    ends = {}                        # id(frame) -> planned end

    def place(port, frame, at, after=None):
        """Plan `frame` on `port` at `at`; `after` = a frame on the other port to wait for."""
        beats = len(frame.encode())
        base = free[port]
        if after is not None:
            base = max(base, ends[id(after)])
        delay = max(0, int(round(at - base)))
        f = sc.add(port, frame, delay=delay, after=None if after is None else (1 - port, after))
        free[port] = max(at, base) + beats * stretch
        ends[id(f)] = free[port]
        last[port] = f
        return free[port]

    t = 0.0
    staged_early = False
    for k, op in enumerate(ops):
        sc.operations.append(op)
        record = {"op": op, "stage": None, "commit": None, "data": {0: [], 1: []}}
        sc.op_frames.append(record)
        if not staged_early:
            place(control_port, op.stage(), t)
            record["stage"] = last[control_port]
            if k in reset_before:
                last[control_port].after = (RESET_STREAM, reset_before[k])
        else:
            record["stage"] = staged_early
        other = 1 - control_port
        wait = last[other] if k > 0 else None      # the previous operation's last DATA there
        t = place(control_port, op.commit(), max(t, free[control_port]), after=wait) + data_delay
        commit = last[control_port]
        record["commit"] = commit
        staged_early = None
        if k + 1 < len(ops) and k + 1 not in reset_before:   # stage the next one while this one runs
            place(control_port, ops[k + 1].stage(), free[control_port])
            staged_early = last[control_port]
        start = {0: t, 1: t}
        clock = t
        prev = None                     # sequential: the frame placed before
        first_on = {0: True, 1: True}
        for c in range(op.contributors):
            p = op.ports[c] if op.ports is not None else port_of(c)
            for fr in op.data_frames(c):
                after = None
                if p != control_port and first_on[p]:
                    after = commit
                if not interleave and prev is not None and prev[0] != p:
                    after = prev[1] if after is None or ends[id(prev[1])] >= ends[id(after)] else after
                first_on[p] = False
                if interleave:
                    start[p] = place(p, fr, max(start[p], free[p]), after=after)
                else:
                    clock = place(p, fr, max(clock, free[p]), after=after) + 4 * stretch
                prev = (p, last[p])
                record["data"][p].append(last[p])
        t = max(free.values()) + gap * stretch
    if after_reset is not None:
        sc.frames[control_port][first_new].after = (RESET_STREAM, after_reset)
    sc.source_pause = {0: source_pause, 1: source_pause}
    sc.sink_pause = {0: sink_pause, 1: sink_pause}
    return sc


def collective(op, seed=0, **kw):
    """One operation: see `build`."""
    return build([op], seed=seed, **kw)


def demo_operation(policy, elements=MAX_CAPACITY, contributors=4, seed=1, in_format="fp32", result_format="fp32",
                   op_id=1):
    rng = random.Random(seed)
    data = random_elements(rng, in_format, (contributors, elements))
    return Operation(op_id, 1, policy, in_format, result_format, data)
