"""Line-rate measurement of the node (no backpressure).

Eight contributors, four per receive port, each sending a whole E-element
vector as two DATA frames back to back: eight frames per port, more than the
frame banks hold, so the figure is the sustained rate, not a burst into the
banks.  *same range*: both ports send their halves in the same order, so they
hit the same ranges at the same time.  *different ranges*: port 1 sends each
contributor's second half first, so the ports work on disjoint ranges.
Reported: DATA beats accepted per cycle per port (first to last DATA beat)
and the cycles from the last DATA beat to the last RESULT beat.

    python -m cosim.node.linerate [--backend batch-icarus] [--elements 4096]
"""
import argparse
import random
import sys

from golden.node import protocol as P

from cosim.node.metrics import line_rate
from cosim.node.node_harness import check, run_node
from cosim.node.scenarios import Operation, Scenario, random_elements
from spec.formats import INPUT_FORMAT_CODES
from spec.frames import MAX_CAPACITY, POLICY_NAMES

FORMATS = tuple(INPUT_FORMAT_CODES)
POLICIES = tuple(POLICY_NAMES.values())


def scenario(policy, in_fmt, same_range, elements=MAX_CAPACITY, seed=1, contributors=8, frame_elems=None):
    """Every contributor sends its vector as two DATA frames back to back (`frame_elems` in the
    first, default half), contributors alternating ports; port 1 sends its halves in reverse
    order unless `same_range`."""
    rng = random.Random(seed)
    data = random_elements(rng, in_fmt, (contributors, elements))
    op = Operation(1, 1, policy, in_fmt, "fp32", data, frame_elems=frame_elems or elements // 2)
    sc = Scenario(seed)
    sc.operations.append(op)
    sc.add(0, op.stage())
    sc.add(0, op.commit())
    first = {0: True, 1: True}
    for c in range(contributors):
        port = c % 2
        halves = op.data_frames(c)
        assert len(halves) == 2
        for fr in (halves if same_range or port == 0 else halves[::-1]):
            sc.add(port, fr, delay=(8 if port == 0 else 10) if first[port] else 0)
            first[port] = False
    return sc


def measure(policy, in_fmt, same_range, backend="batch-icarus", elements=MAX_CAPACITY):
    sc = scenario(policy, in_fmt, same_range, elements)
    run = run_node(sc, backend)
    report = check(sc, run)
    lr = line_rate(run)
    return {"policy": policy, "format": in_fmt, "ranges": "same" if same_range else "different",
            "port0": lr.beats_per_cycle(0), "port1": lr.beats_per_cycle(1), "drain": lr.drain_cycles,
            "ok": report.ok, "cycles": run.cycles}


def table(rows):
    out = ["| policy | input | ranges | DATA beats/cycle port 0 | port 1 | last DATA → last RESULT (cycles) | bit-exact |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['policy']} | {r['format']} | {r['ranges']} | {r['port0']:.3f} | {r['port1']:.3f} | "
                   f"{r['drain']} | {'yes' if r['ok'] else 'NO'} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cosim.node.linerate")
    ap.add_argument("--backend", default="batch-icarus")
    ap.add_argument("--elements", type=int, default=MAX_CAPACITY)
    args = ap.parse_args(argv)
    rows = [measure(pol, fmt, same, args.backend, args.elements)
            for pol in POLICIES for fmt in FORMATS for same in (False, True)]
    print(table(rows))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
