"""Random regressions: one seed -> one hostile random scenario -> one verdict and its coverage.

`random_scenario(seed)` draws, all from the seed (so `prism replay SEED` reruns it exactly):
  * 1-4 operations: policy, input and result formats, E from 1 to CAPACITY (the buckets 1,
    15, 16, 17, 255, 256, 257 and 4,096 on purpose), 1-8 contributors, Reduce/AllReduce,
    frames from one range up to full 257-beat frame banks, data that is random, huge and
    of one sign (FP32 such data overflows a 280-bit accumulator; half the KULISCH EXACT
    operations of a W = 280 node get it), cancelling, subnormal or special;
  * contributors as real links bring them: half the operations with a sparse set of ids and
    each contributor on a receive port of its own (all on one port, or each drawn), not row c
    on port c % 2; operation ids anywhere in 0..255 on half the seeds;
  * the node build: KULISCH_W 320 or 280;
  * backpressure on all four streams, sometimes with long TX stalls (pause bursts of up to
    300 cycles);
  * resets in every phase (placed by stream progress: in a DATA frame, after some DATA was
    admitted, during the drain and while RESULT frames leave), after which the next
    operation starts;
  * ABORTs of the open operation (right behind its COMMIT, after some DATA, after a late
    frame when blocks are complete; sometimes first with a wrong generation), an operation
    left open at the end (staged and committed, no contributor sends), requests inside the end
    window (STAGE, DATA of the ended operation, ABORT of it, the held COMMIT), exact and
    partly overlapping duplicate DATA, every malformed DATA class (a header alone right after a
    frame with n = 0 among them), CONTROL requests that
    are NACKed for every reason (rules on two fields among them: a Reduce to both ports, EXACT
    under FP32_ARRIVAL), floods of requests in the drain (more than the response queue holds
    while RESULT frames keep TX0 busy), and unsupported traffic (RESULT frames among them).
Functional coverage (cosim/node/coverage.py) then measures what the node actually met.
"""
import json
import os
import pickle
import random
import time
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from golden.node import protocol as P

from cosim.sim.axis import AxisFrame
from cosim.sim.batch import RESET_STREAM, ResetEvent
from cosim.node.scenarios import DTYPES, Operation, Scenario, build, random_elements
from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT, KULISCH_WIDTHS
from spec.frames import FRAME_BANKS, MAX_CAPACITY, RESPONSE_MARGIN, RESPONSE_QUEUE_DEPTH

RESULTS = {"kulisch": ("int8", "fp16", "bf16", "fp32", "exact", "auto"),
           "fp32-arrival": ("int8", "fp16", "bf16", "fp32", "auto")}
NARROW_W = min(KULISCH_WIDTHS)     # the width FP32 sums can overflow (W = 280)
E_CHOICES = (1, 2, 9, 15, 16, 17, 40, 64, 200, 255, 256, 257, 300, 512, 1000, MAX_CAPACITY)
RESET_PHASES = ("in a DATA frame", "after admissions", "after the last DATA", "after COMMIT")
STAGE_COMMIT_RESET = "between STAGE and COMMIT"     # aimed (drawn from the seed's second stream)
MALFORMED = ("too_long", "wrong_op", "stale_generation", "bad_contributor", "bad_format", "bad_range_offset",
             "bad_range_end", "bad_range_tail", "bad_length", "no_operation", "unsupported", "result_frame",
             "bad_length_control", "bad_opcode", "bad_policy", "bad_format_stage", "bad_count",
             "bad_contributors", "bad_recipients", "commit_mismatch", "commit_busy")


def mode_values(rng, fmt, shape, mode):
    """Bit patterns of `fmt`: random finite, huge of one sign, cancelling pairs, subnormal or special."""
    if mode == "random" or fmt == "int8" and mode in ("subnormal",):
        return random_elements(rng, fmt, shape)
    if mode == "special":
        return random_elements(rng, fmt, shape, specials=True)
    w = P.ELEMENT_BITS[P.FORMAT_CODES[fmt]]
    top = {"int8": 0x7F, "fp16": 0x7BFF, "bf16": 0x7F7F, "fp32": 0x7F7FFFFF}[fmt]
    sign = 1 << (w - 1)
    out = np.zeros(shape, dtype=np.uint64)
    for idx in np.ndindex(*shape):
        if mode == "huge":          # near the largest finite value, all positive
            v = top - rng.randrange(0, 4)
        elif mode == "subnormal":   # exponent field 0
            v = rng.randrange(0, {"fp16": 1 << 10, "bf16": 1 << 7, "fp32": 1 << 23}[fmt]) | (sign * rng.randrange(2))
        else:                       # cancelling: contributor pairs send x and -x
            c, e = idx
            base = random.Random(e * 7919 + 17).getrandbits(w - 1) & top
            v = base if c % 2 == 0 else (base | sign if fmt != "int8" else (-base) & 0xFF)
        out[idx] = v
    return out.astype(DTYPES[P.FORMAT_CODES[fmt]])


def _random_op(rng, op_id, capacity):
    policy = rng.choice(("kulisch", "fp32-arrival"))
    in_fmt = rng.choice(("int8", "fp16", "bf16", "fp32"))
    res = rng.choice(RESULTS[policy])
    elements = min(capacity, rng.choice(E_CHOICES + (rng.randint(1, capacity),)))
    contributors = rng.randint(1, 8)
    mode = rng.choice((P.MODE_ALLREDUCE, P.MODE_REDUCE))
    recipients = rng.choice((0b11, 0b11, 0b01, 0b10)) if mode == P.MODE_ALLREDUCE else rng.choice((0b01, 0b10))
    data_mode = rng.choice(("random",) * 5 + ("huge", "cancel", "subnormal", "special"))
    data = mode_values(rng, in_fmt, (contributors, elements), data_mode)
    per_frame_max = P.MAX_PAYLOAD_BEATS * P.ELEMS_PER_BEAT[P.FORMAT_CODES[in_fmt]]
    frame_elems = rng.choice((16, 48, 128, MAX_CAPACITY, per_frame_max))
    return Operation(op_id, rng.randint(0, 65535), policy, in_fmt, res, data, mode=mode, recipients=recipients,
                     frame_elems=frame_elems), data_mode


def _malformed(rng, kind, op, staged_next=None):
    """(beats, port preference or None) of a frame that breaks one rule against operation `op`."""
    fmt = P.FORMAT_CODES[op.in_format]
    per = P.ELEMS_PER_BEAT[fmt]
    e = op.elements
    zero = (0, 0) if fmt == P.FMT_EXACT else 0
    base = dict(op_id=op.op_id, generation=op.generation, contributor=op.contributor_ids[0], fmt=fmt, offset=0,
                values=tuple(zero for _ in range(min(16, e))))
    stage = op.stage()
    if kind == "too_long":
        return [P.Data(**base).encode()[0]] + [rng.getrandbits(64) for _ in range(P.MAX_PAYLOAD_BEATS + 1)]
    if kind == "wrong_op":
        base["op_id"] = (op.op_id + 128) % 256
    elif kind == "stale_generation":
        base["generation"] = (op.generation + 1) % 65536
    elif kind == "bad_contributor":
        outside = [c for c in range(P.MAX_CONTRIBUTORS) if c not in op.contributor_ids]
        if not outside:             # every id is in the set: send unsupported traffic instead
            return [rng.choice((0x0, 0x4, 0xF))] + [rng.getrandbits(64) for _ in range(rng.randint(0, 3))]
        base["contributor"] = rng.choice(outside)
    elif kind == "bad_format":
        base["fmt"] = (fmt + rng.randint(1, 3)) % 4
        if fmt == P.FMT_EXACT:
            base["values"] = tuple(0 for _ in base["values"])     # elements to an operation of partials
        elif op.generation % 3 == 0:
            base["fmt"] = P.FMT_EXACT           # partials to an operation of elements (no extra draw)
            base["values"] = tuple((0, 0) for _ in base["values"])
    elif kind == "bad_range_offset":
        base["offset"] = 8
    elif kind == "bad_range_end":
        base["offset"] = 16 * (-(-e // 16))                      # starts at or beyond E
    elif kind == "bad_range_tail":
        if e <= 32:
            base["offset"] = 8
        else:
            base["values"] = tuple(zero for _ in range(20))       # 20 elements, not ending at E
    elif kind == "bad_length":
        base["n"] = len(base["values"]) + per                    # one payload beat short
        if op.generation % 3 == 0:                               # (no draw) or a header alone
            base["values"], base["n"] = (), min(16, e)
    elif kind == "no_operation":
        pass                                                     # placed before the COMMIT
    elif kind == "unsupported":
        # any class but CONTROL and DATA (a one-beat RESULT-class frame among them)
        return [rng.choice((0x0, 0x3, 0x4, 0x7, 0x9, 0xF))] + [rng.getrandbits(64) for _ in range(rng.randint(0, 5))]
    elif kind == "result_frame":
        return P.Result(op.op_id, op.generation, 0, ((P.FMT_FP32, (0,) * 16),)).encode()
    elif kind == "bad_length_control":
        return stage.encode() + [0]
    elif kind == "bad_opcode":
        return [P.set_field(stage.encode()[0], "opcode", rng.choice((4, 5, 7, 8, 9, 15)))]
    elif kind in ("bad_policy", "bad_format_stage", "bad_count", "bad_contributors", "bad_recipients"):
        head = stage.encode()[0]
        field, value = {"bad_policy": ("policy", rng.choice((2, 3))),
                        "bad_format_stage": ("result_format", rng.choice((6, 7))),
                        "bad_count": ("count", rng.choice((0, 4097, 8191))),
                        "bad_contributors": ("contributors", 0),
                        "bad_recipients": ("recipients", 0)}[kind]
        # the checks that combine two fields, chosen by the generation's low bits (no extra draw,
        # so every seed keeps the rest of its scenario): a Reduce to both ports, EXACT under
        # FP32_ARRIVAL
        if kind == "bad_recipients" and op.generation % 2:
            return [P.set_field(P.set_field(head, "mode", P.MODE_REDUCE), "recipients", 0b11)]
        if kind == "bad_format_stage" and op.generation % 2:
            return [P.set_field(P.set_field(head, "policy", P.POLICY_FP32_ARRIVAL), "result_format",
                                P.FMT_EXACT)]
        if kind == "bad_format_stage" and op.generation % 4 == 2:
            # the input format's rules: EXACT partials under FP32_ARRIVAL, or a code past EXACT
            head = P.set_field(head, "result_format", P.FMT_FP32)
            if op.generation % 8 == 2:
                return [P.set_field(P.set_field(head, "policy", P.POLICY_FP32_ARRIVAL), "in_format", P.FMT_EXACT)]
            return [P.set_field(head, "in_format", value - 1)]
        return [P.set_field(head, field, value)]
    elif kind == "commit_mismatch":
        return P.Commit((op.op_id + 64) % 256, op.generation).encode()
    elif kind == "commit_busy":
        target = staged_next or op
        return target.commit().encode()
    return P.Data(**base).encode()


TWIN_SHARE = 0.2         # operations with DATA on both ports that get twins
TWIN_OFFSETS = (0, 1, 1, 2)   # cycles the second copy starts after the first


def _add_twins(sc, rec, control_port, rng, position):
    """A copy of one of the operation's DATA frames (contributor and ranges) on each receive port,
    each ahead of that port's first DATA frame of the operation, both waiting for the COMMIT; the
    second starts 0, 1 or 2 cycles after the first (TWIN_OFFSETS), counted from the COMMIT's end
    with the frames the control port sends between (with no receive stalls the two then complete
    that many cycles apart).  Returns (the first's port, the second's, the offset)."""
    p = rng.randrange(2)
    frames = rec["data"][0] + rec["data"][1]
    beats = frames[rng.randrange(len(frames))].beats
    off = rng.choice(TWIN_OFFSETS)
    commit = rec["commit"]
    lead = {}
    placed = {}
    for port in (0, 1):
        first = rec["data"][port][0]
        at = position(port, first)
        g = AxisFrame(beats, delay=0, after=None if port == control_port else (control_port, commit))
        sc.frames[port].insert(at, g)
        placed[port] = g
        if port == control_port:        # what the port sends between the COMMIT and the copy
            between = sc.frames[port][position(port, commit) + 1:at]
            lead[port] = sum(len(f.beats) + f.delay for f in between)
        else:
            lead[port] = 0
    q = 1 - p
    start_p = max(lead[p], lead[q] - off)
    placed[p].delay = 1 + start_p - lead[p]
    placed[q].delay = 1 + start_p + off - lead[q]
    return p, q, off


def _empty_then_header_alone(op):
    """Two DATA frames of `op` that the node must drop: one with n = 0 and a payload beat (the range
    rule), then a header with n = min(16, E) and no payload (the length rule).  The first one's
    length digest (payload beats + 1 = 1) is a one-beat frame's: a receiver that kept it for the
    header would admit a frame with no elements."""
    fmt = P.FORMAT_CODES[op.in_format]
    zero = (0, 0) if fmt == P.FMT_EXACT else 0
    c = op.contributor_ids[0]
    return (P.Data(op.op_id, op.generation, c, fmt, 0, (zero,), n=0).encode(),
            P.Data(op.op_id, op.generation, c, fmt, 0, (), n=min(16, op.elements)).encode())


def _partial_overlap(rng, op, frame_obj):
    """A DATA frame of the same contributor covering part of `frame_obj`'s ranges and one more."""
    head = frame_obj.beats[0]
    off, n = P.get_field(head, "offset"), P.get_field(head, "n")
    c, fmt = P.get_field(head, "contributor"), P.get_field(head, "data_format")
    e = op.elements
    lo = off + 16 if n > 16 else max(0, off - 16)
    hi = min(e, lo + 32)
    if hi - lo < 1 or (lo == off and hi == off + n):
        return None
    values = tuple(rng.getrandbits(8) for _ in range(hi - lo))
    if fmt == P.FMT_EXACT:
        values = tuple((v, 0) for v in values)
    return P.Data(op.op_id, op.generation, c, fmt, lo, values).encode()


def _block_zero_frames(rec, op, control_port, other):
    """(control-port frame, other-port frame) after which every contributor has sent block 0
    (elements 0..255) while frames of later blocks remain; either may be None (no DATA on
    that port).  None when the operation has one block or no such point exists."""
    if op.elements <= P.BLOCK_ELEMS:
        return None
    picks = {}
    for port in (control_port, other):
        frames = rec["data"][port]
        if not frames:
            picks[port] = None
            continue
        last_c = P.get_field(frames[-1].beats[0], "contributor")
        covering = [g for g in frames if P.get_field(g.beats[0], "contributor") == last_c
                    and P.get_field(g.beats[0], "offset") + P.get_field(g.beats[0], "n") >= P.BLOCK_ELEMS]
        if not covering:
            return None
        picks[port] = covering[0]
    if all(picks[q] is None or picks[q] is rec["data"][q][-1] for q in (0, 1)):
        return None                 # block 0's frames end the rows: the operation would be complete
    return picks[control_port], picks[other]


PROBE_OP_ID = 0xF0            # the line-rate probe's operation (the generator's own ops are numbered from 1)
PROBE_FRAME_BEATS = (8, 16)     # payload beats of each probe frame: shorter frames make more frame
                                # switches, and a reader slower than a beat a cycle fills the three
                                # banks within a few frames (frames of fewer beats are below the
                                # line rate's frame length: docs/prism_node.md, "Line rate")
PROBE_QUIET = 1500            # cycles of silence before the probe, beyond the longest drain's RESULT beats


def burst_start(share, burst):
    """The probability that a stall burst of 1 .. `burst` cycles starts on a free cycle, for a
    port stalled `share` of its cycles."""
    mean_burst = (1 + burst) / 2
    return share / (mean_burst * (1 - share) + share)


def stall_share(start, burst):
    """The share of cycles stalled by bursts of 1 .. burst cycles that start with probability
    `start` (burst_start's inverse)."""
    mean_burst = (1 + burst) / 2
    return start * mean_burst / (start * mean_burst + 1 - start)


def _result_beats(op):
    """RESULT beats an operation sends on one port at most (EXACT: one per element; AUTO: as FP32)."""
    fmt = P.FORMAT_CODES["fp32" if op.result_format == "auto" else op.result_format]
    per = 1 if fmt == P.FMT_EXACT else P.ELEMS_PER_BEAT[fmt]
    blocks = -(-op.elements // P.BLOCK_ELEMS)
    return sum(1 + -(-min(P.BLOCK_ELEMS, op.elements - b * P.BLOCK_ELEMS) // per) for b in range(blocks))


DRAIN_STALL_MARGIN = 1.5      # a stalled port's drain against its mean (seen: 1.06 x on a 40 % port, bursts of 300)


def _longest_drain(sc):
    """Cycles any operation's drain could still be running after its last frame: its RESULT
    beats on one port, stretched where the transmit ports stall (a COMMIT that arrives during a
    drain is held, and its DATA frames with it: a probe behind a drain would measure the drain).
    Seed 242882 met it: 4,112 EXACT beats on a port stalled 40 % of its cycles in bursts of up to
    300 took 7,270 cycles, not 4,112."""
    beats = max((_result_beats(o) for o in sc.operations), default=0)
    share = max(stall_share(sc.sink_pause.get(p, 0.0), sc.sink_burst) for p in (0, 1))
    if share == 0:
        return beats
    return int(beats / (1 - share) * DRAIN_STALL_MARGIN) + 2 * sc.sink_burst


def add_line_rate_probe(sc, rng, control_port, capacity, probe_frames=None):
    """An operation at the end of a run without backpressure, after PROBE_QUIET silent cycles: two
    contributors, one per port, each sending its vector as back-to-back DATA frames of 256
    elements.  The node must take every beat of them in consecutive cycles on each port (line
    rate: a beat per cycle per port in every format under both policies; check_line_rate).  With
    `probe_frames` (a random stream), half the probes send the whole capacity in frames of 8 or
    16 payload beats."""
    policy = rng.choice(("kulisch", "fp32-arrival"))
    in_fmt = rng.choice(("int8", "fp16", "bf16", "fp32"))
    elements = min(capacity, rng.choice((512, 1024, MAX_CAPACITY)))
    from cosim.node.scenarios import random_elements
    per_beat = P.ELEMS_PER_BEAT[P.FORMAT_CODES[in_fmt]]
    frame_beats = PROBE_FRAME_BEATS[-1]
    if probe_frames is not None and probe_frames.random() < 0.5:     # its own stream: the other draws stay
        frame_beats = probe_frames.choice(PROBE_FRAME_BEATS)
        elements = min(capacity, MAX_CAPACITY)
    op = Operation(PROBE_OP_ID, rng.randint(0, 65535), policy, in_fmt, rng.choice(RESULTS[policy]),
                   random_elements(rng, in_fmt, (2, elements)), frame_elems=frame_beats * per_beat)
    other = 1 - control_port
    last_other = sc.frames[other][-1] if sc.frames[other] else None
    sc.add(control_port, op.stage(), delay=PROBE_QUIET + _longest_drain(sc),
           after=None if last_other is None else (other, last_other))
    commit = sc.add(control_port, op.commit())
    for c in (0, 1):
        port = control_port if c == 0 else other
        for k, frame in enumerate(op.data_frames(c)):
            sc.add(port, frame, delay=2 if k == 0 else 0, after=(control_port, commit) if k == 0 and port == other
                   else None)
    sc.probe = {"op_id": PROBE_OP_ID, "generation": op.generation}


def add_arrival_overtake(sc, rng, control_port, op_id):
    """An FP32_ARRIVAL operation in which a frame admitted later could overtake an older one on
    the other port: contributor A (RX0) sends its vector first, then contributor B (RX1) all of
    it in one frame, then contributor C (RX0) a short frame of the last ranges as soon as B's
    frame is taken, and the rest of its vector after.  B's reader is still at its first ranges
    when C's frame starts, so C must wait for B on the last ranges (docs/protocol.md, FP32_ARRIVAL:
    additions in admission order).  There A + B cancel exactly and C is far below A's ulp, so the
    two orders give different sums: (A + B) + C = C, (A + C) + B = 0."""
    elements = P.RANGE_ELEMS * rng.choice((8, 16, 32))
    tail = P.RANGE_ELEMS * rng.choice((1, 2))
    data = random_elements(rng, "fp32", (3, elements))
    for i in range(elements - tail, elements):
        big = (rng.getrandbits(1) << 31) | (rng.randint(100, 160) << 23) | rng.getrandbits(23)
        data[0, i] = big
        data[1, i] = big ^ (1 << 31)
        tiny_exp = max(0, ((big >> 23) & 0xFF) - rng.randint(26, 60))
        data[2, i] = (rng.getrandbits(1) << 31) | (tiny_exp << 23) | rng.getrandbits(23)
    op = Operation(op_id, rng.randint(0, 65535), "fp32-arrival", "fp32", rng.choice(("fp32", "auto")), data,
                   mode=P.MODE_ALLREDUCE, recipients=0b11, ports=(0, 1, 0))
    other = 1 - control_port
    last_other = sc.frames[other][-1] if sc.frames[other] else None
    # after any earlier drain, stretched by the transmit ports' stalls (as the line-rate probe waits)
    sc.add(control_port, op.stage(), delay=_longest_drain(sc) + 40,
           after=None if last_other is None else (other, last_other))
    commit = sc.add(control_port, op.commit())

    def frame(c, lo, hi):
        return P.Data(op.op_id, op.generation, c, P.FMT_FP32, lo, tuple(int(x) for x in data[c, lo:hi]))

    a = sc.add(0, frame(0, 0, elements), delay=2, after=(1, commit) if control_port == 1 else None)
    b = sc.add(1, frame(1, 0, elements), delay=0, after=(0, a))
    sc.add(0, frame(2, elements - tail, elements), delay=0, after=(1, b))
    sc.add(0, frame(2, 0, elements - tail), delay=4)
    sc.operations.append(op)
    sc.op_frames.append({"op": op, "stage": None, "commit": commit, "data": {0: [a], 1: [b]}})
    return op


OVERFLOW_LANES_SHARE = 0.25   # FP32_ARRIVAL operations of FP32 or BF16 data given an overflow in every lane
SUBNORMAL_LANES_SHARE = 0.25  # ... of the others, a subnormal beside a normal in every lane


def _aim_data(aux, drawn, width, capacity, lanes=None, subnormals=None):
    """Aimed data for some operations (cosim/node/aimed.py), from the seed's second stream:
    sums on the result format's edges, AUTO tile boundaries, specials at chosen lanes, every
    input format's own edge patterns in every lane, and,
    at W = 280, EXACT sums across the accumulator's range, up and down, in every Kulisch lane
    (aimed.wrap_values)."""
    from cosim.node import aimed
    out = []
    for op, data_mode in drawn:
        shape = op.data.shape
        r = aux.random()
        data = None
        arrival = op.policy == "fp32-arrival"
        # FP32_ARRIVAL's rounder (the read-out's second) meets the result formats' edges only
        # through these operations: they take a larger share of the edges than Kulisch ones
        edges_end, specials_end = (0.32, 0.42) if arrival else (0.3, 0.4)
        if op.policy == "kulisch" and op.in_format != "exact" and width == NARROW_W \
                and (data_mode == "huge" and op.result_format == "exact" or r < 0.15):
            if aux.random() < 0.7:
                # every Kulisch lane meets each wrap case (5 x 64 elements), or fewer lanes, each
                # case in turn; any result format shows the wrap (an overflow's infinity takes
                # the wrap's sign)
                shape = (max(5, shape[0]), min(capacity, aux.choice((aimed.KULISCH_LANES, 100, aimed.WRAP_SWEEP, aimed.WRAP_SWEEP))))
                data, data_mode = aimed.wrap_values(aux, shape, width), "wrap edges"
        elif arrival and r < 0.2:
            # every one of the 256 FP32 adder lanes meets each case when E >= 256
            if aux.random() < 0.6:
                shape = (max(2, shape[0]), min(capacity, aux.choice((256, 512, MAX_CAPACITY, MAX_CAPACITY))))
            if aux.random() < 0.3:
                # FP32 sums one bit past a tie in every element, the bit stepping through 16 of the
                # shifted-out positions in every adder lane (whatever the operation's input format)
                shape = (shape[0], capacity)
                data, data_mode = aimed.adder_stress_values(aux, "fp32", shape, sticky_sweep=True), "sticky sweep"
            else:
                data, data_mode = aimed.adder_stress_values(aux, op.in_format, shape), "adder stress"
        elif op.result_format == "auto" and r < 0.4:
            data, data_mode = aimed.auto_edge_values(aux, op.in_format, shape), "AUTO edges"
        elif r < edges_end:
            data, data_mode = aimed.edge_values(aux, op.in_format, op.result_format, shape, width), "edges"
        elif r < specials_end:
            if aux.random() < 0.5:
                # enough elements that every Kulisch lane (64) and most FP32 adder lanes (256) meet
                # each special: a lane that loses its NaN or infinity flag fails wherever it is
                shape = (shape[0], min(capacity, max(shape[1], aux.choice((256, 1024)))))
            data, data_mode = aimed.special_lane_values(aux, op.in_format, shape), "special lanes"
        elif r < 0.5:
            # enough elements that every lane meets every edge pattern from both first contributors
            shape = (max(2, shape[0]), min(capacity, max(shape[1], aimed.input_edge_elements(op.in_format))))
            data, data_mode = aimed.input_edge_values(aux, op.in_format, shape), "input edges"
        if data is None and lanes is not None and arrival and op.in_format in ("fp32", "bf16") \
                and lanes.random() < OVERFLOW_LANES_SHARE:
            # (a stream of its own, so the draws above stay what they were)
            shape = (max(2, shape[0]), min(capacity, lanes.choice((aimed.ADDER_LANES, 2 * aimed.ADDER_LANES))))
            data, data_mode = aimed.overflow_values(lanes, op.in_format, shape), "overflow in every lane"
        if data is None and subnormals is not None and arrival and op.in_format in ("fp32", "bf16") \
                and subnormals.random() < SUBNORMAL_LANES_SHARE:
            # (a stream of its own too)
            shape = (max(2, shape[0]), min(capacity, subnormals.choice((aimed.ADDER_LANES, 2 * aimed.ADDER_LANES))))
            data, data_mode = aimed.subnormal_lane_values(subnormals, op.in_format, shape), "subnormals in every lane"
        if data is not None:
            in_fmt = "fp32" if data_mode in ("wrap edges", "sticky sweep") else op.in_format
            op = Operation(op.op_id, op.generation, op.policy, in_fmt, op.result_format, data, mode=op.mode,
                           recipients=op.recipients, frame_elems=op.frame_elems)
        out.append((op, data_mode))
    return out


MARGIN_TX1_STALL = 150      # edges TX1 takes nothing at the start of a response-margin seed
MARGIN_TX0_STALL = 400      # ... and TX0 (longer: the held requests are answered into a stalled queue)


def add_response_margin(sc, rng, control_port, op_ids, fill):
    """Aimed: the response queue driven to the edge of its admission rule (spec.frames,
    RESPONSE_MARGIN), at the start of a run so that fixed stall windows meet it: TX0 takes nothing
    for MARGIN_TX0_STALL edges, TX1 nothing for MARGIN_TX1_STALL.  Operation A (one contributor, a
    Reduce to TX1) is committed and fed, and its RESULT frame waits for TX1; operation B is staged;
    requests NACKed `BAD_OPCODE` then leave QUEUE - MARGIN responses in the queue when `fill`, one
    more otherwise (and one more in TX0's output register).  Then COMMIT B and five more requests,
    two behind it on the control port and three on the other: enough to fill both ports' banks.

    fill: the node must take COMMIT B at once (RESPONSE_MARGIN entries are free) and answer it and
    the requests behind it into the stalled queue, which then holds RESPONSE_QUEUE_DEPTH responses,
    every one of which must still leave in order; `sc.margin` names the frame and the edge it must
    have started by (node_harness.check_margin).  Otherwise the node must hold COMMIT B back until
    TX0 frees an entry: a node that took it would answer more requests than its queue holds.
    B's DATA follows; the run goes on with the seed's operations."""
    c, o = control_port, 1 - control_port
    reduce_to_tx1 = dict(mode=P.MODE_REDUCE, recipients=0b10, ports=(c,))
    a = Operation(op_ids[0], rng.randrange(65536), "kulisch", "fp32", "fp32",
                  random_elements(rng, "fp32", (1, 4 * P.RANGE_ELEMS)), **reduce_to_tx1)
    b = Operation(op_ids[1], rng.randrange(65536), "kulisch", "fp32", "fp32",
                  random_elements(rng, "fp32", (1, 2 * P.RANGE_ELEMS)), **reduce_to_tx1)
    sc.operations += [a, b]

    def nack():
        return [P.set_field(a.stage().encode()[0], "opcode", rng.choice((7, 10, 15)))]
    for frame in (a.stage(), a.commit(), *a.data_frames(0), b.stage()):
        sc.add(c, frame)
    answered = 3                # STAGE A, COMMIT A, STAGE B (DATA is not answered)
    # TX0's output register takes the queue's head, so one response more than the queue holds waits
    waiting = RESPONSE_QUEUE_DEPTH - RESPONSE_MARGIN + 1 + (0 if fill else 1)
    for _ in range(waiting - answered):
        sc.add(c, nack())
    # a pause first, so that every request before it has been answered when it is offered (a
    # response waits at TX0 at most RESPONSE_READY edges after its request's last beat)
    commit_b = sc.add(c, b.commit(), delay=6)
    for _ in range(FRAME_BANKS - 1):
        sc.add(c, nack())
    for k in range(FRAME_BANKS):
        sc.add(o, nack(), after=(c, commit_b) if k == 0 else None)
    for frame in b.data_frames(0):
        sc.add(c, frame)
    sc.sink_windows = {0: ((0, MARGIN_TX0_STALL),), 1: ((0, MARGIN_TX1_STALL),)}
    if fill:
        sc.margin = {"port": c, "frame": commit_b, "by": MARGIN_TX0_STALL}
    return a, b


def add_reserved_noise(rng, frame, share):
    """With probability `share`, set random reserved bits of `frame`'s header (a STAGE, COMMIT,
    ABORT or DATA frame; others are left alone) and fill a well-formed DATA frame's last payload
    beat past its element count with random bits.  Returns 1 when the frame changed."""
    if not frame.beats or rng.random() >= share:
        return 0
    head = frame.beats[0]
    cls, opcode = P.get_field(head, "class"), P.get_field(head, "opcode")
    kind = {P.OP_STAGE: "stage", P.OP_COMMIT: "commit", P.OP_ABORT: "abort"}.get(opcode) \
        if cls == P.CLASS_CONTROL else ("data" if cls == P.CLASS_DATA else None)
    if kind is None:
        return 0
    frame.beats[0] = head | (rng.getrandbits(P.BEAT_BITS) & P.reserved_mask(kind))
    if kind == "data":
        fmt, n = P.get_field(head, "data_format"), P.get_field(head, "n")
        if fmt in P.ELEMS_PER_BEAT and n and len(frame.beats) - 1 == P.payload_beats(fmt, n):
            frame.beats[-1] |= rng.getrandbits(P.BEAT_BITS) & P.payload_padding_mask(fmt, n)
    return 1


def random_scenario(seed, capacity=MAX_CAPACITY):
    rng = random.Random(seed)
    n_ops = rng.choice((1, 2, 2, 3, 3, 4))
    drawn = [_random_op(rng, k + 1, capacity) for k in range(n_ops)]
    ops = [op for op, _ in drawn]
    width = rng.choice(KULISCH_WIDTH_CHOICES)
    # a second stream for draws that aim at rare bins, so the main draws stay what they were
    aux = random.Random(seed * 1_000_003 + 11)
    flood = random.Random(seed * 7_000_003 + 5)
    abort_stall = random.Random(seed * 29_000_039 + 17)
    cut_result = random.Random(seed * 9_000_011 + 7)      # a fourth: the reset inside a RESULT frame
    stale_digest = random.Random(seed * 47_000_071 + 37)  # a header alone after a frame with n = 0
    twins = random.Random(seed * 61_000_111 + 47)          # one DATA frame on both ports at once
    if width == NARROW_W:
        # an EXACT result overflows W = 280 only from FP32 near its largest value: one is just
        # under 2^277 units of 2^-149, so five of one sign pass the sign bit (2^279); uniform
        # draws reach that in about one operation of 2,000
        for k, (op, data_mode) in enumerate(drawn):
            if op.policy == "kulisch" and op.result_format == "exact" and aux.random() < 0.5:
                data = mode_values(aux, "fp32", (max(5, op.contributors), op.elements), "huge")
                drawn[k] = (Operation(op.op_id, op.generation, "kulisch", "fp32", "exact", data, mode=op.mode,
                                      recipients=op.recipients, frame_elems=op.frame_elems), "huge")
        ops = [op for op, _ in drawn]
    drawn = _aim_data(aux, drawn, width, capacity, lanes=random.Random(seed * 23_000_081 + 13),
                      subnormals=random.Random(seed * 59_000_093 + 43))
    # contributors as real links bring them: half the operations take a sparse set of ids and
    # their own receive port per contributor (all on one port, or each drawn), not row c as
    # contributor c on port c % 2 (a fourth stream, so the other draws stay what they were)
    links = random.Random(seed * 9_000_011 + 3)
    for k, (op, data_mode) in enumerate(drawn):
        if links.random() < 0.5:
            ids = tuple(sorted(links.sample(range(P.MAX_CONTRIBUTORS), op.contributors)))
            if links.random() < 0.4:
                ports = (links.choice((0, 1)),) * op.contributors
            else:
                ports = tuple(links.choice((0, 1)) for _ in range(op.contributors))
            if data_mode == "input edges":
                # its sweep puts every pattern in every lane from contributors 0 and 1: one per
                # port, so both ports' decoders meet each
                ports = tuple(c % 2 for c in range(op.contributors))
            drawn[k] = (replace(op, ids=ids, ports=ports), data_mode)
    if links.random() < 0.5:        # operation ids anywhere in 0..255, not 1, 2, 3, ...
        for k, op_id in enumerate(links.sample(range(256), len(drawn))):
            drawn[k] = (replace(drawn[k][0], op_id=op_id), drawn[k][1])
    # a reduction tree's inner node: a KULISCH_FIXED operation takes its children's EXACT partials
    # as DATA (a fifth stream)
    tree = random.Random(seed * 11_000_027 + 7)
    for k, (op, data_mode) in enumerate(drawn):
        if op.policy == "kulisch" and tree.random() < 0.3:
            from cosim.node import aimed
            elements = min(op.elements, tree.choice((16, 40, 256, 300)))
            data = aimed.exact_partial_values(tree, (op.contributors, elements), width)
            mode = "EXACT partials"
            if op.contributors >= 2 and tree.random() < 0.5:
                # every Kulisch lane meets each wrap case from partials (W = 320 too)
                elements = min(capacity, tree.choice((aimed.KULISCH_LANES, aimed.WRAP_SWEEP, aimed.WRAP_SWEEP)))
                data, mode = aimed.exact_wrap_values(tree, (op.contributors, elements), width), "EXACT wraps"
            drawn[k] = (replace(op, in_format="exact", data=data, frame_elems=tree.choice((16, 48, 256))), mode)
    # aimed (a stream of its own): half the operations that sweep the wrap cases through the Kulisch
    # lanes ask for EXACT results, whose wrap count shows each lane's merged wraps whole (a rounded
    # result shows only their sign and whether they are 0)
    wraps_out = random.Random(seed * 53_000_081 + 41)
    for k, (op, data_mode) in enumerate(drawn):
        if data_mode in ("wrap edges", "EXACT wraps") and op.result_format != "exact" and wraps_out.random() < 0.5:
            drawn[k] = (replace(op, result_format="exact"), data_mode)
    # aimed: where a port takes several contributors, each one's frames start at the range the
    # one before it on that port ended with, so the port's reader feeds the same row in
    # consecutive cycles at every change of contributor (a Kulisch lane's and an FP32 bank's
    # read-modify-write bypass), at a range of any residue (its own stream)
    chain = random.Random(seed * 37_000_043 + 23)
    for k, (op, data_mode) in enumerate(drawn):
        if chain.random() < 0.3 and op.elements > P.RANGE_ELEMS:
            ports = op.ports if op.ports is not None else tuple(c % 2 for c in range(op.contributors))
            starts, last_range = [0] * op.contributors, {}
            for c in range(op.contributors):
                if ports[c] in last_range:
                    starts[c] = last_range[ports[c]]
                # its frames end with the range before its start (or with the vector's last range)
                last_range[ports[c]] = ((starts[c] or op.elements) - 1) // P.RANGE_ELEMS * P.RANGE_ELEMS
            drawn[k] = (replace(op, starts=tuple(starts)), data_mode)
    ops = [op for op, _ in drawn]
    pause = rng.choice((0.0, 0.0, 0.2, 0.5))
    source_burst = rng.choice((1, 1, 4, 150))
    sink = rng.choice((0.0, 0.0, 0.3, 0.7))
    sink_burst = rng.choice((1, 1, 8, 300))
    # `pause` and `sink` are the shares of cycles a receive / transmit port is stalled; stalls
    # come in bursts of 1 .. burst cycles, so a burst starts with the probability that gives that
    # share (a long stall is rare, not permanent: a link that is 99 % stalled only tests the
    # cycle budget)

    control_port = rng.choice((0, 1))
    reset_in = {k: rng.choice(RESET_PHASES) for k in range(n_ops) if rng.random() < 0.3}
    for k in range(n_ops):      # aimed: the window between STAGE and COMMIT (the staged slot must empty)
        if aux.random() < 0.1:
            reset_in[k] = STAGE_COMMIT_RESET
    reset_before, n = {}, 0
    for k in sorted(reset_in):
        n += 1
        if k + 1 < n_ops:
            reset_before[k + 1] = n
    # aimed: the response queue at the edge of its admission rule, at the start of the run, where
    # fixed stall windows meet it (add_response_margin; an eleventh stream).  Only without
    # receive stalls, which would move the requests out of the windows
    margin_draw = random.Random(seed * 43_000_067 + 31)
    prologue, margin_note = None, None
    if pause == 0 and margin_draw.random() < 0.15:
        prologue = Scenario(seed)
        ids = [i for i in range(160, 0, -1) if i not in {op.op_id for op in ops}][:2]
        fill = margin_draw.random() < 0.5
        a, b = add_response_margin(prologue, margin_draw, control_port, ids, fill)
        margin_note = (f"response queue {'filled' if fill else 'one past its admission margin'} by op{a.op_id} "
                       f"and op{b.op_id} (TX0, TX1 stalled at the start)")
    sc = build(ops, seed=seed, source_pause=burst_start(pause, source_burst), sink_pause=burst_start(sink, sink_burst), interleave=rng.random() < 0.7,
               control_port=control_port, data_delay=rng.choice((2, 8, 30)), reset_before=reset_before,
               scenario=prologue)
    sc.kulisch_w = width
    sc.sink_burst = sink_burst
    sc.source_burst = source_burst
    other = 1 - control_port
    notes = [margin_note] if margin_note else []
    planned = []                # resets: (port, trigger frame, 1 if after it else 0, delay)
    aborts = []                 # (operation index, its ABORT frame on the control port)

    def position(port, frame):
        """The index of this very frame on `port` (equal frames abound: duplicates, repeated COMMITs)."""
        return next(i for i, g in enumerate(sc.frames[port]) if g is frame)

    def insert_after(port, frame, beats, after=None, delay=1):
        f = AxisFrame(beats, delay=delay, after=after)
        sc.frames[port].insert(position(port, frame) + 1, f)
        return f

    def insert_before(port, frame, beats, after=None, delay=1):
        f = AxisFrame(beats, delay=delay, after=after)
        sc.frames[port].insert(position(port, frame), f)
        return f

    def last_needed(port, q, g):
        """The highest index on `port` that the frames of port q up to g wait for (-1: none)."""
        waits = [h.after[1] for h in sc.frames[q][:position(q, g) + 1] if h.after and h.after[0] == port]
        return max((position(port, h) for h in waits), default=-1)

    cut_reset, cut_stalled = None, None
    for k, rec in enumerate(sc.op_frames):
        op = rec["op"]
        datas = [(p, f) for p in (0, 1) for f in rec["data"][p]]
        nxt = sc.op_frames[k + 1] if k + 1 < len(sc.op_frames) else None
        staged_next = nxt["op"] if nxt and k + 1 not in reset_before else None
        aborted = False
        # ABORT of the open operation (sometimes with a wrong generation first)
        if datas and rng.random() < 0.15:
            aborted = True
            p, f = rng.choice(datas)
            late = _block_zero_frames(rec, op, control_port, other) if aux.random() < 0.6 else None
            if rng.random() < 0.3:          # right behind the COMMIT, before any DATA is admitted
                anchor, cond = rec["commit"], None
            elif late is not None:
                # after the frames that complete block 0 on both ports, before the operation ends:
                # the ABORT meets blocks already sent
                f_control, g_other = late
                needed = position(control_port, rec["commit"])
                if g_other is not None:
                    needed = max(needed, last_needed(control_port, other, g_other))
                if f_control is not None:
                    needed = max(needed, position(control_port, f_control))
                anchor = sc.frames[control_port][needed]
                cond = None if g_other is None else (other, g_other)
            elif p == control_port:
                anchor, cond = f, None
            else:
                # after every control-port frame that the other port's frames up to f wait for,
                # or the two ports would wait on each other for ever
                needed = max(position(control_port, rec["commit"]), last_needed(control_port, other, f))
                anchor, cond = sc.frames[control_port][needed], (other, f)
            aborts.append((k, insert_after(control_port, anchor, P.Abort(op.op_id, op.generation).encode(),
                                           after=cond)))
            if rng.random() < 0.3:      # first an ABORT with the wrong generation (ACTIVE_MISMATCH)
                insert_after(control_port, anchor, P.Abort(op.op_id, (op.generation + 1) % 65536).encode(),
                             after=cond)
            notes.append(f"op{op.op_id} ABORT" + (" after block 0" if late is not None and anchor is not rec["commit"]
                                                  else ""))
            if anchor is not rec["commit"] and abort_stall.random() < 0.6:
                # the ABORT meets RESULT frames of completed ranges held by a stalled TX port: the
                # drain's quiet count must wait for the sender, so stalls come in bursts longer than it
                # (longer bursts, each port keeping its share of stalled cycles: the same burst-start
                # probability with longer bursts would stall a 70 % port 93 % of the time)
                longer = max(sc.sink_burst, 48)
                sc.sink_pause = {port: burst_start(stall_share(q, sc.sink_burst), longer)
                                 for port, q in sc.sink_pause.items()}
                sc.sink_burst = longer
                for port in (0, 1):
                    if op.recipients >> port & 1:
                        sc.sink_pause[port] = max(sc.sink_pause[port], burst_start(0.4, sc.sink_burst))
                notes.append("TX stalled in long bursts at the ABORT")
        # requests inside the end window: after the last DATA, before the next COMMIT
        if datas and rng.random() < 0.3:
            last_other = rec["data"][other][-1] if rec["data"][other] else None
            anchor = nxt["commit"] if nxt else None
            window = [(staged_next or op).stage().encode(), rng.choice(datas)[1].beats,
                      P.Abort(op.op_id, op.generation).encode()]
            rng.shuffle(window)
            first = True
            for beats in window:
                cond = (other, last_other) if first and last_other is not None else None
                if anchor is not None and any(g is anchor for g in sc.frames[control_port]):
                    insert_before(control_port, anchor, beats, after=cond, delay=rng.randint(0, 3))
                else:
                    sc.frames[control_port].append(AxisFrame(beats, delay=rng.randint(0, 3), after=cond))
                first = False
            notes.append(f"op{op.op_id} window")
        # aimed: bursts of requests spread over the drain, so CONTROL responses wait while RESULT
        # frames leave TX port 0 (its arbitration between frames is then decided); each is answered
        # NACK and changes nothing
        if datas and aux.random() < 0.35:
            last_other = rec["data"][other][-1] if rec["data"][other] else None
            anchor = nxt["commit"] if nxt else None
            harmless = [P.Abort(op.op_id, (op.generation + 1) % 65536).encode(),
                        [P.set_field(op.stage().encode()[0], "opcode", 7)],
                        P.Commit((op.op_id + 101) % 256, op.generation).encode(),
                        [P.set_field(op.stage().encode()[0], "policy", 3)]]
            first = True
            # spread over the drain's RESULT frames: a long drain (16 EXACT frames of 257 beats) gets
            # its requests in its middle too, where a response waits for the frame on TX0 to end
            stretch = max(1, _result_beats(op) // 300)
            for _ in range(aux.randint(2, 5)):
                delay = aux.choice((5, 20, 40, 80, 150)) * stretch
                for _ in range(aux.randint(2, 3)):
                    beats = aux.choice(harmless)
                    cond = (other, last_other) if first and last_other is not None else None
                    if anchor is not None and any(g is anchor for g in sc.frames[control_port]):
                        insert_before(control_port, anchor, beats, after=cond, delay=delay)
                    else:
                        sc.frames[control_port].append(AxisFrame(beats, delay=delay, after=cond))
                    first, delay = False, 0
            notes.append(f"op{op.op_id} requests in the drain")
        # aimed: a flood of back-to-back one-beat requests in the drain, more than the response
        # queue holds while RESULT frames keep TX port 0 busy (and TX0 stalls): admission must stop
        # with room for every request already in flight, and every one is still answered (a
        # third stream, so the other draws stay what they were)
        if datas and flood.random() < 0.15:
            last_other = rec["data"][other][-1] if rec["data"][other] else None
            anchor = nxt["commit"] if nxt else None
            # half the floods come on both receive ports at once, so both ingress queues hold
            # requests when admission stops: the margin must cover every one of them
            both = flood.random() < 0.5 and last_other is not None
            behind, start = last_other, flood.choice((0, 30, 120))
            for j in range(flood.randint(18, 40)):
                beats = [P.set_field(op.stage().encode()[0], "opcode", flood.choice((7, 9, 12)))]
                delay = start if j < 1 + both else 0
                if both and j % 2:
                    behind = insert_after(other, behind, beats, delay=delay)
                    continue
                cond = (other, last_other) if j == 0 and last_other is not None else None
                if anchor is not None and any(g is anchor for g in sc.frames[control_port]):
                    insert_before(control_port, anchor, beats, after=cond, delay=delay)
                else:
                    sc.frames[control_port].append(AxisFrame(beats, delay=delay, after=cond))
            notes.append(f"op{op.op_id} request flood" + (" on both ports" if both else ""))
            flood.random()              # (once a coin for the stalls below: drawn still, the stream stays)
            if stall_share(sc.sink_pause[0], sc.sink_burst) < 0.3:
                # TX0 stalled at least 30 % of its cycles: the sender forms the next RESULT frame
                # while the last one waits, so RESULT frames and the flood's responses meet at frame
                # boundaries, where the round robin decides (a frame is otherwise formed a cycle
                # after the last, and a response waiting then goes without a contest)
                sc.sink_pause = dict(sc.sink_pause)
                sc.sink_pause[0] = burst_start(0.3, sc.sink_burst)     # the seed's own bursts: both ports draw them
                notes.append("TX0 stalled for the flood")
        # duplicates: an exact repeat and a partly overlapping frame of the same contributor
        if datas and rng.random() < 0.2:
            p, f = rng.choice(datas)
            insert_after(p, f, f.beats)
            over = _partial_overlap(rng, op, f)
            if over:
                insert_after(p, f, over)
            notes.append(f"op{op.op_id} duplicates")
        # malformed frames and NACKed requests, between the COMMIT and the last DATA
        if rng.random() < 0.5:
            for _ in range(rng.randint(1, 3)):
                kind = rng.choice(MALFORMED)
                beats = _malformed(rng, kind, op, staged_next)
                if kind == "no_operation":
                    insert_before(control_port, rec["stage"], beats)
                elif kind in ("commit_busy", "commit_mismatch") and staged_next is not None and rec["data"][control_port]:
                    insert_before(control_port, rec["data"][control_port][-1], beats)
                elif kind.startswith("commit"):
                    insert_after(control_port, rec["commit"], P.Commit(op.op_id, op.generation).encode())
                elif datas:
                    p, f = rng.choice(datas)
                    insert_after(p, f, beats)
                else:
                    insert_after(control_port, rec["commit"], beats)
                notes.append(kind)
        # aimed (a stream of its own): one DATA frame on both receive ports at once, or a cycle or
        # two apart, ahead of the operation's own frames: the control must admit one copy and
        # drop the other as a duplicate, though the copy it admitted is not yet in the map it
        # checks against (decided in the same cycle, or at the last edge: the overlap it keeps
        # for a frame completing right after a candidate)
        if rec["data"][0] and rec["data"][1] and twins.random() < TWIN_SHARE:
            first, second, off = _add_twins(sc, rec, control_port, twins, position)
            notes.append(f"op{op.op_id} twins on both ports (RX{second} {off} after RX{first})")
        # aimed (a stream of its own): a header alone right after a frame with n = 0, on one port
        if datas and stale_digest.random() < 0.15:
            p, f = datas[stale_digest.randrange(len(datas))]
            empty, header_alone = _empty_then_header_alone(op)
            insert_before(p, insert_after(p, f, header_alone), empty)
            notes.append(f"op{op.op_id} header alone after n = 0 on RX{p}")
        # a reset in a chosen phase of this operation: its trigger frame now, its count (the
        # frame's position) once every frame is in place
        # aimed: a reset a few beats into the first operation's RESULT frames on TX port 1 (with
        # TX0 stalled or not): the egress, the sender and the read-out are caught with a frame half
        # sent, in the state a reset must clear and that a later operation would otherwise meet
        if k == 0 and k not in reset_in and not aborted and op.recipients & 0b10 and op.result_format != "auto" \
                and cut_result.random() < (0.8 if op.recipients == 0b11 else 0.4) and _result_beats(op) > 2:
            cut_reset = ResetEvent("out 1", cut_result.randint(1, _result_beats(op) - 1), cut_result.randint(0, 4))
            notes.append(f"reset in a RESULT frame of op{op.op_id}")
            # aimed: an AllReduce's frame cut with one transmit port stalled most of the time, so
            # the other is a beat ahead when the reset falls (the egress has handed the beat to
            # one port only), and one more AllReduce after it sends its first beats to both
            if op.recipients == 0b11 and cut_result.random() < 0.8:
                cut_stalled = cut_result.choice((0, 1))
        if k in reset_in:
            phase = reset_in[k]
            if phase == "in a DATA frame" and datas:
                p, f = rng.choice(datas)
                planned.append((p, f, 0, f.delay + rng.randint(1, max(1, len(f) - 1))))
            elif phase == STAGE_COMMIT_RESET:
                # after every frame before the COMMIT, which waits for the reset: the COMMIT then
                # finds nothing staged (NO_STAGED) and the operation's DATA no operation
                number = sorted(reset_in).index(k) + 1
                commit_at = position(control_port, rec["commit"])
                planned.append((control_port, sc.frames[control_port][commit_at - 1] if commit_at else None,
                                1, aux.randint(0, 3)))
                rec["commit"].after = (RESET_STREAM, number)
            elif phase == "after admissions" and datas:
                p, f = rng.choice(datas)
                delay = rng.randint(0, 40)
                if aux.random() < 0.5:      # aimed: a few cycles after the admission, before completion
                    delay = aux.randint(0, 6)
                planned.append((p, f, 1, delay))
            elif phase == "after the last DATA" and datas:
                p = max((0, 1), key=lambda q: sum(len(f) for f in rec["data"][q]))
                planned.append((p, rec["data"][p][-1], 1, rng.randint(0, 600)))
            else:
                planned.append((control_port, rec["commit"], 1, rng.randint(0, 20)))
            notes.append(f"reset {phase} of op{op.op_id}")
    # an operation left open: staged and committed once every other frame is through, and no
    # contributor ever sends (the run ends on the node's `busy` after BUSY_STOP quiet cycles)
    if aux.random() < 0.05:
        extra = Operation(n_ops + 1, aux.randint(0, 65535), aux.choice(("kulisch", "fp32-arrival")), "fp32",
                          "fp32", np.zeros((aux.randint(1, 8), aux.choice((1, 16, 300))), dtype=np.uint32))
        last_other = sc.frames[other][-1] if sc.frames[other] else None
        cond = None if last_other is None else (other, last_other)
        sc.frames[control_port].append(AxisFrame(extra.stage().encode(), delay=4, after=cond))
        sc.frames[control_port].append(AxisFrame(extra.commit().encode(), delay=1))
        notes.append(f"op{extra.op_id} left open")
    # unsupported traffic at random
    probe_wanted = aux.random() < 0.5
    if rng.random() < 0.3:
        p = rng.choice((0, 1))
        sc.frames[p].insert(rng.randint(0, len(sc.frames[p])),
                            AxisFrame(_malformed(rng, "unsupported", ops[0]), delay=rng.randint(0, 5)))
        notes.append("unsupported")
    # aimed: unsupported frames right behind DATA frames of an FP32_ARRIVAL operation.  Its frames
    # start in admission order and wait for each other's banks, so a receive port's frame banks
    # are often all full when the unsupported frame comes: it must drain without touching them (a
    # sixth stream)
    junk = random.Random(seed * 13_000_019 + 5)
    arrival = [rec for rec in sc.op_frames if rec["op"].policy == "fp32-arrival"
               and sum(len(rec["data"][p]) for p in (0, 1)) > 2]
    if arrival and junk.random() < 0.4:
        rec = junk.choice(arrival)
        behind = [(p, f) for p in (0, 1) for f in rec["data"][p][:-1]]    # the port's stream goes on after it
        for p, f in junk.sample(behind, min(len(behind), junk.randint(1, 3))):
            insert_after(p, f, [junk.choice((0x0, 0x3, 0x4, 0x7, 0x9, 0xF))]
                         + [junk.getrandbits(P.BEAT_BITS) for _ in range(junk.randint(1, 8))], delay=0)
        notes.append(f"unsupported behind op{rec['op'].op_id}'s DATA")
    if cut_reset is not None:                # op 0's results come before any later operation's events
        n = sc.add_reset(cut_reset)
        if cut_stalled is not None:
            used = {o.op_id for o in sc.operations}
            after, _ = _random_op(cut_result, next(i for i in range(200, 0, -1) if i not in used), min(capacity, 64))
            after = replace(after, mode=P.MODE_ALLREDUCE, recipients=0b11)
            stalls = (sc.source_pause, sc.sink_pause)          # build sets them: keep the seed's
            build([after], seed=seed + 2, scenario=sc, control_port=control_port, after_reset=n, data_delay=2)
            sc.source_pause, sc.sink_pause = stalls
            sc.sink_pause = dict(sc.sink_pause)
            sc.sink_pause[cut_stalled] = burst_start(0.6, sc.sink_burst)
            notes.append(f"TX{cut_stalled} stalled 60 % at the cut, then op{after.op_id} to both ports")
    for p, f, past, delay in planned:       # "in p": after the frames before f (+ f itself) finished
        sc.add_reset(ResetEvent(f"in {p}", position(p, f) + past if f is not None else 0, delay))
    probe = probe_wanted and pause == 0 and sink == 0 and not any("left open" in n or "TX0 stalled" in n
                                                                    for n in notes)
    # aimed: a reset while the last operation's ABORT drains (the node counts quiet cycles before it
    # forgets the operation), held one edge or two, then an operation of the same shape at once whose
    # DATA comes in two parts 40 cycles apart: whatever of the ABORT a reset leaves (its quiet count
    # still running) would end the new operation's first part (a tenth stream)
    drain = random.Random(seed * 23_000_047 + 13)
    last_abort = [f for k, f in aborts if k == len(sc.op_frames) - 1]
    abort_reset = False
    if last_abort and not probe and not sc.resets and drain.random() < 0.9:
        like = sc.op_frames[-1]["op"]
        delay = drain.randint(1, 18)
        n = sc.add_reset(ResetEvent(f"in {control_port}", position(control_port, last_abort[0]) + 1, delay))
        sc.reset_hold = drain.choice((1, 2))
        used = {o.op_id for o in sc.operations}
        half = max(P.RANGE_ELEMS, (like.elements // 2) // P.RANGE_ELEMS * P.RANGE_ELEMS)
        again = replace(like, op_id=next(i for i in range(220, 0, -1) if i not in used),
                        ports=tuple([control_port] * like.contributors),
                        frame_elems=half if like.elements > half else like.frame_elems)
        if like.in_format != "exact":
            again = replace(again, data=random_elements(drain, like.in_format, (like.contributors, like.elements)))
        stalls = (sc.source_pause, sc.sink_pause)
        build([again], seed=seed + 4, scenario=sc, control_port=control_port, after_reset=n, data_delay=0)
        sc.source_pause, sc.sink_pause = stalls
        parts = sc.op_frames[-1]["data"][control_port]
        if len(parts) > 1:
            parts[len(parts) // 2].delay = 40
        abort_reset = True
        notes.append(f"reset {delay} cycles after op{like.op_id}'s ABORT (held {sc.reset_hold}), "
                     f"then op{again.op_id} at once, its DATA 40 cycles apart")
    # aimed: one more reset, after every planned one, at a point drawn from the whole run (after
    # any input frame, then 0 to 400 cycles on): the node is caught in whatever state it is in
    # then (an ABORT's quiet count, frames held behind a COMMIT, a drain, a read-out, a port
    # stalled inside a frame), so a register a reset must clear is met in a state where it is
    # not already clear (a sixth stream, so the other draws stay what they were)
    anywhere = random.Random(seed * 13_000_019 + 5)
    if not probe and not abort_reset and anywhere.random() < 0.35:
        p = anywhere.choice([q for q in (0, 1) if sc.frames[q]] or [0])
        count = anywhere.randint(1, max(1, len(sc.frames[p])))
        delay = anywhere.choice((anywhere.randint(0, 6), anywhere.randint(7, 60), anywhere.randint(61, 400)))
        n = sc.add_reset(ResetEvent(f"in {p}", count, delay))
        # and one more operation once it is over, to meet whatever the reset left behind
        used = {o.op_id for o in sc.operations}
        after, _ = _random_op(anywhere, next(i for i in range(250, 0, -1) if i not in used), min(capacity, 300))
        if sc.operations and anywhere.random() < 0.7:
            # most often the shape of an operation the reset may have caught (policy, formats,
            # E, contributors), staged right after it: state the reset left in its rows,
            # counts or pipelines meets an operation that reads the same rows at once
            like = anywhere.choice([o for o in sc.operations if o.in_format != "exact"] or [after])
            data = random_elements(anywhere, like.in_format, (like.contributors, like.elements))
            after = replace(after, policy=like.policy, in_format=like.in_format, result_format=like.result_format,
                            data=data, mode=like.mode, recipients=like.recipients, frame_elems=like.frame_elems)
        stalls = (sc.source_pause, sc.sink_pause)          # build sets them: keep the seed's
        build([after], seed=seed + 1, scenario=sc, control_port=control_port, after_reset=n, data_delay=2)
        sc.source_pause, sc.sink_pause = stalls
        notes.append(f"reset anywhere (after frame {count} of RX{p}, {delay} cycles on), then op{after.op_id}")
    # aimed: an FP32_ARRIVAL frame that could overtake an older frame of the other port
    # (add_arrival_overtake), at the end of the run (a ninth stream)
    overtake = random.Random(seed * 19_000_043 + 11)
    if not probe and not any("left open" in n for n in notes) and overtake.random() < 0.25:
        used = {o.op_id for o in sc.operations}
        op = add_arrival_overtake(sc, overtake, control_port, next(i for i in range(230, 0, -1) if i not in used))
        notes.append(f"op{op.op_id} FP32_ARRIVAL overtake")
    # aimed: a reset while the last operation's results are still being read out (0 to 16 cycles
    # after its last DATA frame was taken: ranges completing, merges, the rounder, tiles reaching
    # the result store), held for one edge or two, then an operation of the same shape whose
    # STAGE and COMMIT come at the first edges the node takes beats again.  Whatever the reset
    # leaves moving through the read-out then meets the new operation's rows right after its
    # clear (an eighth stream, so the other draws stay what they were)
    readout = random.Random(seed * 17_000_023 + 9)
    last_op = sc.op_frames[-1] if sc.op_frames else None
    tails = [p for p in (0, 1) if last_op and last_op["data"][p] and sc.frames[p]
             and sc.frames[p][-1] is last_op["data"][p][-1]]
    if last_op and any(sc.frames[q] and not last_op["data"][q] for q in (0, 1)):
        tails = []          # a port ends on other frames: the reset would not follow the read-out
    caught = last_op and any(n.startswith("reset") and n.endswith(f"of op{last_op['op'].op_id}") for n in notes)
    if not probe and not caught and not abort_reset and not any(n.startswith("reset anywhere") for n in notes) \
            and tails \
            and last_op["op"].in_format != "exact" and readout.random() < 0.3:
        # the port whose stream is planned to end last (its frames' beats and delays; the waits
        # across the ports only postpone both): its last DATA frame completes the last ranges
        p = max(tails, key=lambda q: sum(len(f.beats) + f.delay for f in sc.frames[q]))
        delay = readout.randint(0, 16)
        n = sc.add_reset(ResetEvent(f"in {p}", len(sc.frames[p]), delay))
        sc.reset_hold = readout.choice((1, 2))
        like = last_op["op"]
        used = {o.op_id for o in sc.operations}
        again = replace(like, op_id=next(i for i in range(240, 0, -1) if i not in used),
                        data=random_elements(readout, like.in_format, (like.contributors, like.elements)))
        stalls = (sc.source_pause, sc.sink_pause)
        build([again], seed=seed + 3, scenario=sc, control_port=control_port, after_reset=n, data_delay=0)
        sc.source_pause, sc.sink_pause = stalls
        notes.append(f"reset {delay} cycles after op{like.op_id}'s last DATA on RX{p} "
                     f"(held {sc.reset_hold}), then op{again.op_id} at once")
    # hostile but legal: reserved header bits set and the payload past a DATA frame's element
    # count filled, which the node must ignore (the same answers, admissions and results on the
    # same cycles; a seventh stream, so the other draws stay what they were)
    noise = random.Random(seed * 15_000_017 + 3)
    if noise.random() < 0.4:
        share = noise.choice((0.3, 1.0))
        touched = sum(add_reserved_noise(noise, f, share) for p in (0, 1) for f in sc.frames[p])
        notes.append(f"reserved bits set in {touched} frames")
    if probe:
        add_line_rate_probe(sc, aux, control_port, capacity, random.Random(seed * 31_000_033 + 19))
        notes.append("line-rate probe")
    stuck = sc.stuck()
    if stuck:       # a generator bug, not a node failure: say so rather than time out
        raise ValueError(f"seed {seed}: the stimulus cannot finish, frames wait on each other ({', '.join(stuck)})")
    sc.description = "; ".join(f"op{o.op_id} {o.policy} {o.in_format}->{o.result_format} E={o.elements} "
                               f"C={o.contributors}"
                               + ("" if o.ids is None else f" ids {''.join(map(str, o.ids))} on RX "
                                                           f"{''.join(map(str, o.ports))}")
                               + f" {'AllReduce' if o.mode else 'Reduce'}"
                               f"{'' if m == 'random' else ' ' + m}" for o, m in drawn)
    sc.description += (f"; W={width}; src stalled {pause:.0%}" + (f" burst {source_burst}" if source_burst > 1 else "")
                       + f" sink stalled {sink:.0%}" + (f" burst {sink_burst}" if sink_burst > 1 else ""))
    if notes:
        sc.description += "; " + ", ".join(notes)
    return sc


@dataclass
class SeedResult:
    seed: int
    ok: bool
    cycles: int
    elements: int
    results: int
    wall: float
    description: str
    first_mismatch: Optional[str] = None
    mismatches: int = 0
    error: Optional[str] = None
    kulisch_w: int = KULISCH_WIDTH_DEFAULT
    coverage: Optional[dict] = None     # cosim.node.coverage.Coverage.to_dict() of the run
    kinds: tuple = ()                   # the kinds of every mismatch (cosim.node.scoreboard.MISMATCH_KINDS),
                                        # first mismatch first; ("timeout",) for a run stopped at its time limit


# Seeds whose scenario a process keeps (pickled: every run gets its own copy), for callers that
# run the same seeds again and again (a mutation campaign's workers: `remember_scenarios`).  The
# aimed data's exact sums make generation the costliest part of a short seed.
_SCENARIOS = {}
_SCENARIOS_KEPT = 0


def remember_scenarios(n):
    """Keep the scenarios of the first `n` distinct seeds this process runs (0: none)."""
    global _SCENARIOS_KEPT
    _SCENARIOS_KEPT = n


def _scenario(seed, capacity):
    key = (seed, capacity)
    kept = _SCENARIOS.get(key)
    if kept is not None:
        return pickle.loads(kept)
    sc = random_scenario(seed, capacity=capacity)
    if len(_SCENARIOS) < _SCENARIOS_KEPT:
        _SCENARIOS[key] = pickle.dumps(sc, protocol=pickle.HIGHEST_PROTOCOL)
    return sc


def run_seed(seed, backend="batch-icarus", kulisch_w=None, log_dir=None, vcd=None, variant=None, code_coverage=None,
             dut=None, timeout=None):
    """Run one seed; never raises (a crash is a failing verdict with its message).  The node's
    KULISCH_W is the seed's own unless `kulisch_w` forces one (or `dut`, a Verilog design of one
    width, has it).  code_coverage: a folder for the run's Verilator coverage data
    (cosim.sim.batch.code_coverage; batch-verilator only).  dut: a Verilog design in place of the
    kit's node (cosim.node.dut.NodeDut).  timeout: the simulator's wall-time limit (seconds); a
    run stopped there fails as a hang."""
    import contextlib
    from cosim.sim.batch import code_coverage as coverage_runs
    from cosim.node.coverage import sample
    from cosim.node.node_harness import check, run_node
    t0 = time.perf_counter()
    width = kulisch_w
    try:
        capacity = dut.capacity if dut is not None else MAX_CAPACITY
        sc = _scenario(seed, capacity)
        width = (dut.width if dut is not None else None) or kulisch_w or sc.kulisch_w
        # generous for the scenario's size; a node that never goes idle fails instead of hanging
        budget = 20000 + 40 * sum(len(f) + f.delay for fs in sc.frames.values() for f in fs)
        with coverage_runs(code_coverage) if code_coverage else contextlib.nullcontext():
            run = run_node(sc, backend, kulisch_w=width, capacity=capacity, vcd=vcd, variant=variant,
                           max_cycles=budget, dut=dut, timeout=timeout)
        report = check(sc, run, kulisch_w=width, capacity=capacity)
        coverage = sample(sc, run, report).to_dict()
    except Exception as e:  # noqa: BLE001 - a regression reports every failure as a verdict
        from cosim.sim.batch import SimulatorTimeout
        kind = "timeout" if isinstance(e, SimulatorTimeout) else "crash"
        return SeedResult(seed, False, 0, 0, 0, time.perf_counter() - t0, "", error=f"{type(e).__name__}: {e}",
                          kulisch_w=width or KULISCH_WIDTH_DEFAULT, kinds=(kind,))
    if log_dir:
        write_transaction_log(os.path.join(log_dir, f"seed{seed}.jsonl"), report.scoreboard, run)
    first = report.first()
    return SeedResult(seed, report.ok, run.cycles, report.elements_checked, report.results_checked,
                      time.perf_counter() - t0, sc.description, str(first) if first else None,
                      len(report.mismatches), kulisch_w=width, coverage=coverage,
                      kinds=tuple(dict.fromkeys(m.kind for m in report.mismatches)))


def write_transaction_log(path, scoreboard, run):
    """Frames in and out (and resets) with their cycles, one JSON object per line, in cycle order."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    events = []
    for p, frames in run.rx.items():
        for f in frames:
            events.append({"cycle": f.cycles[-1], "dir": "in", "port": p, **_frame_summary(f.beats)})
    for p, frames in run.tx.items():
        for f in frames:
            events.append({"cycle": f.cycles[-1], "dir": "out", "port": p, **_frame_summary(f.beats)})
    for c in run.resets:
        events.append({"cycle": c, "dir": "reset"})
    events.sort(key=lambda e: (e["cycle"], e["dir"]))
    with open(path, "w") as fh:
        for e in events:
            fh.write(json.dumps(e) + "\n")
    return path


def _frame_summary(beats):
    head = beats[0]
    cls = P.get_field(head, "class")
    out = {"beats": len(beats), "class": {1: "CONTROL", 2: "DATA", 3: "RESULT"}.get(cls, f"unsupported({cls})")}
    if cls in (1, 2, 3):
        out.update(op_id=P.get_field(head, "op_id"), generation=P.get_field(head, "generation"))
    if cls == 1:
        out["opcode"] = P.get_field(head, "opcode")
        if out["opcode"] in (P.OP_ACK, P.OP_NACK):
            out["reason"] = P.REASON_NAMES[P.get_field(head, "reason")] if P.get_field(head, "reason") < len(P.REASON_NAMES) else P.get_field(head, "reason")
    if cls in (2, 3):
        out.update(offset=P.get_field(head, "offset"), count=P.get_field(head, "n"))
    if cls == 2:
        out["contributor"] = P.get_field(head, "contributor")
    return out
