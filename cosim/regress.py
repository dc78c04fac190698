"""Random regressions: one seed -> one random scenario -> one verdict.

`random_scenario(seed)` draws operations (policy, input and result formats,
element count, 1-8 contributors, Reduce/AllReduce), backpressure on all four
streams, malformed frames of random validation classes, unsupported traffic
and, sometimes, a reset in the middle of an abandoned operation.  Everything
is a function of the seed, so `prism replay SEED` reruns it exactly.
"""
import json
import os
import random
import time
from dataclasses import asdict, dataclass, field
from typing import List, Optional

from golden import protocol as P

from .scenarios import Operation, Scenario, build, random_elements

RESULTS = {"kulisch": ("int8", "fp16", "bf16", "fp32", "exact", "auto"),
           "fp32-arrival": ("int8", "fp16", "bf16", "fp32", "auto")}


def _random_op(rng, op_id, max_elements):
    policy = rng.choice(("kulisch", "fp32-arrival"))
    in_fmt = rng.choice(("int8", "fp16", "bf16", "fp32"))
    res = rng.choice(RESULTS[policy])
    elements = rng.choice((16, 40, 64, 200, 256, 300, max_elements))
    contributors = rng.randint(1, 8)
    mode = rng.choice((P.MODE_ALLREDUCE, P.MODE_REDUCE))
    recipients = 0b11 if mode == P.MODE_ALLREDUCE else rng.choice((0b01, 0b10))
    specials = rng.random() < 0.2
    data = random_elements(rng, in_fmt, (contributors, elements), specials=specials)
    frame_elems = rng.choice((16, 48, 128, 4096))
    return Operation(op_id, rng.randint(0, 65535), policy, in_fmt, res, data, mode=mode, recipients=recipients,
                     frame_elems=frame_elems)


def _malformed(rng, op):
    fmt = P.FORMAT_CODES[op.in_format]
    vals = tuple(0 for _ in range(16))
    kind = rng.choice(("wrong_op", "stale_generation", "bad_contributor", "bad_format", "bad_range",
                       "bad_length", "unsupported"))
    base = dict(op_id=op.op_id, generation=op.generation, contributor=0, fmt=fmt, offset=0, values=vals)
    if kind == "wrong_op":
        base["op_id"] = (op.op_id + 1) % 256
    elif kind == "stale_generation":
        base["generation"] = (op.generation + 1) % 65536
    elif kind == "bad_contributor":
        base["contributor"] = op.contributors if op.contributors < 8 else 0
        if op.contributors == 8:
            return [0xF, 0]          # every id is valid: send unsupported traffic instead
    elif kind == "bad_format":
        base["fmt"] = (fmt + 1) % 4
    elif kind == "bad_range":
        base["offset"] = 8
    elif kind == "bad_length":
        base["n"] = 16 + P.ELEMS_PER_BEAT[fmt]
    else:
        return [rng.choice((0x0, 0x4, 0x7, 0xF))] + [rng.getrandbits(64) for _ in range(rng.randint(0, 5))]
    return P.Data(**base).encode()


def random_scenario(seed, max_elements=512):
    rng = random.Random(seed)
    n_ops = rng.choice((1, 1, 2, 3))
    ops = [_random_op(rng, k + 1, max_elements) for k in range(n_ops)]
    pause = rng.choice((0.0, 0.0, 0.2, 0.4))
    sink = rng.choice((0.0, 0.2, 0.5))
    sc = build(ops, seed=seed, source_pause=pause, sink_pause=sink, interleave=rng.random() < 0.7,
               control_port=rng.choice((0, 1)), data_delay=rng.choice((8, 30)))
    sc.description = "; ".join(f"op{o.op_id} {o.policy} {o.in_format}->{o.result_format} E={o.elements} "
                               f"C={o.contributors} {'AllReduce' if o.mode else 'Reduce'}" for o in ops)
    sc.description += f"; pause src {pause} sink {sink}"
    # malformed frames right after the first operation's COMMIT (before its DATA)
    if rng.random() < 0.5:
        ctrl = next(p for p in (0, 1) if sc.frames[p] and P.get_field(sc.frames[p][0].beats[0], "class") == P.CLASS_CONTROL)
        junk = Scenario(seed)
        for _ in range(rng.randint(1, 3)):
            junk.add(ctrl, _malformed(rng, ops[0]), delay=1)
        sc.frames[ctrl][2:2] = junk.frames[ctrl]
        sc.description += f"; {len(junk.frames[ctrl])} malformed"
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


def run_seed(seed, backend="batch-icarus", kulisch_w=320, log_dir=None, vcd=None, variant=None):
    """Run one seed; never raises (a crash is a failing verdict with its message)."""
    from .node_harness import check, run_node
    t0 = time.perf_counter()
    try:
        sc = random_scenario(seed)
        # generous for the scenario's size; a node that never goes idle fails instead of hanging
        budget = 20000 + 40 * sum(len(f) + f.delay for fs in sc.frames.values() for f in fs)
        run = run_node(sc, backend, kulisch_w=kulisch_w, vcd=vcd, variant=variant, max_cycles=budget)
        report = check(sc, run, kulisch_w=kulisch_w)
        if run.cycles >= budget:
            from .scoreboard import Mismatch
            report.mismatches.insert(0, Mismatch("timeout", 0, f"node still busy after {budget} cycles"))
    except Exception as e:  # noqa: BLE001 - a regression reports every failure as a verdict
        return SeedResult(seed, False, 0, 0, 0, time.perf_counter() - t0, "", error=f"{type(e).__name__}: {e}")
    if log_dir:
        write_transaction_log(os.path.join(log_dir, f"seed{seed}.jsonl"), report.scoreboard, run)
    first = report.first()
    return SeedResult(seed, report.ok, run.cycles, report.elements_checked, report.results_checked,
                      time.perf_counter() - t0, sc.description, str(first) if first else None,
                      len(report.mismatches))


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
