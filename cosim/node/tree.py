"""A reduction tree of co-simulated PRISM nodes (the merge harness of issue 35).

Each node of the tree (golden/node/tree.py: shape, dealing, the naive reference) runs as one
converted node on a batched simulator, children before their parent.  The links between nodes
are the nodes' own streams: a child's RESULT frames, taken from its transmit port under that
link's backpressure, are decoded and sent on to its parent as DATA frames (EXACT partials
under KULISCH_FIXED, FP32 sums under FP32_ARRIVAL), with the parent's receive port, the
arrival order of its children and the stalls on both sides drawn from the seed.  Every node's
run is checked by the node scoreboard against the golden node model, and the root's result
against the tree's reference and, under KULISCH_FIXED, against one flat reduction.

Hostile events (`events`): {node name: "abort" | "reset"}.  That node's operation is broken
(an ABORT after its first DATA frame, or a reset right after it); the node scoreboard checks
every frame it answered; the operation is then run again on the same node with a new
generation from the same inputs, as a collective library retries one member, and only the
retry's RESULT frames go on to the parent.  The tree's result is the same bits
(tests/node/test_tree.py holds it).
"""
import random
from dataclasses import dataclass, field, replace
from typing import Dict

import numpy as np

from cosim.node.node_harness import check, run_node
from cosim.node.scenarios import Operation, build
from cosim.sim.batch import ResetEvent
from golden.node import protocol as P
from golden.node.tree import check_tree, deal, exact_outputs, node_formats, reduce_tree
from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY

IMPLS = ("model", "icarus", "verilator")
BACKEND = {"icarus": "batch-icarus", "verilator": "batch-verilator"}
HOSTILE_EVENTS = ("abort", "reset")


class TreeMismatch(AssertionError):
    """A node of the tree disagreed with the golden node model, or the root with the reference."""


@dataclass
class NodeRecord:
    name: str
    in_format: str
    out_format: str
    inputs: int                 # contributors: rows at a leaf, children otherwise
    attempts: int = 1
    cycles: int = 0             # cycles of its (last) run
    frames_in: int = 0
    event: str = ""


@dataclass
class TreeRun:
    bits: np.ndarray
    flags: np.ndarray
    wraps: np.ndarray
    auto_formats: object
    nodes: Dict[str, NodeRecord] = field(default_factory=dict)
    critical_cycles: int = 0    # the longest root-to-leaf chain of node runs, in cycles

    def same_as(self, other):
        """The same bits (and AUTO formats), and the same flags and wraps where both have them (a
        co-simulated tree with a rounded result has the RESULT frame's values only)."""
        same = self.bits.dtype == other.bits.dtype and np.array_equal(self.bits, other.bits)
        for mine, theirs in ((self.flags, other.flags), (self.wraps, other.wraps)):
            if mine is not None and theirs is not None:
                same = same and np.array_equal(mine, theirs)
        if self.auto_formats is None or other.auto_formats is None:
            return same and self.auto_formats is None and other.auto_formats is None
        return same and np.array_equal(self.auto_formats, other.auto_formats)


def _carried_array(values, policy):
    """A C x E array of a node's inputs from its children's values (EXACT pairs as objects)."""
    if policy == "kulisch":
        out = np.empty((len(values), len(values[0])), dtype=object)
        for j, row in enumerate(values):
            for e, v in enumerate(row):
                out[j, e] = v
        return out
    return np.array(values, np.uint32)


def _result_values(run, op, port, elements):
    """Per element (format code, value) from the operation's RESULT frames on `port`."""
    got = {}
    for frame in run.tx[port]:
        res = P.decode(frame.beats)
        if isinstance(res, P.Result) and (res.op_id, res.generation) == (op.op_id, op.generation):
            for i, fmt, v in res.elements():
                got[i] = (fmt, v)
    missing = [i for i in range(elements) if i not in got]
    if missing:
        raise TreeMismatch(f"op {op.op_id}: no RESULT for elements {missing[:5]}{'...' if len(missing) > 5 else ''}")
    return [got[i] for i in range(elements)]


def _node_run(node, op, backend, width, rng, event, seed, variant=None):
    """A node's run on `backend`; (NodeRun, the operation whose RESULT frames count).  With an
    `event` the operation is broken and then retried with the next generation."""
    control = rng.choice((0, 1))
    pauses = dict(source_pause=rng.choice((0.0, 0.0, 0.2, 0.5)), sink_pause=rng.choice((0.0, 0.0, 0.3, 0.6)),
                  interleave=rng.random() < 0.7, control_port=control, data_delay=rng.choice((2, 8, 30)))
    if not event:
        sc = build([op], seed=seed, **pauses)
    else:
        retry = replace(op, generation=(op.generation + 1) % 65536)
        sc = build([op, retry], seed=seed, reset_before={1: 1} if event == "reset" else None, **pauses)
        first = sc.op_frames[0]
        port = 0 if first["data"][0] else 1
        if event == "abort":
            sc.add(control, P.Abort(op.op_id, op.generation), after=(port, first["data"][port][0]))
        else:
            sc.add_reset(ResetEvent(f"in {port}", sc.frames[port].index(first["data"][port][0]) + 1,
                                    rng.randint(0, 6)))
        op = retry
    sc.kulisch_w = width
    run = run_node(sc, backend, kulisch_w=width, variant=variant)
    report = check(sc, run, kulisch_w=width)
    if not report.ok:
        raise TreeMismatch(f"node {node.name}{f' ({event})' if event else ''}: {report.verdict()}")
    return run, op


def run_tree(tree, data, policy, in_fmt, out_fmt, width=KULISCH_WIDTH_DEFAULT, impl="model", seed=0,
             events=None, progress=None, variant=None):
    """Reduce C x E `data` through `tree`; TreeRun.  impl "model": the naive reference
    (golden/node/tree.py); "icarus", "verilator": every node co-simulated (see the module doc);
    `variant`: a test-only node variant for every node (cosim.node.node_harness.node_block)."""
    if impl not in IMPLS:
        raise ValueError(f"unknown tree implementation {impl!r}; choose one of {', '.join(IMPLS)}")
    events = dict(events or {})
    data = np.asarray(data)
    contributions, elements = data.shape
    check_tree(tree, contributions)
    names = {n.name for n in tree.walk()}
    for name, what in events.items():
        if name not in names or what not in HOSTILE_EVENTS:
            raise ValueError(f"hostile event {name}={what}: name a node of the tree ({', '.join(sorted(names))}) "
                             f"and one of {', '.join(HOSTILE_EVENTS)}")
    rng = random.Random(seed)
    if impl == "model":
        order = (lambda node, items: rng.sample(list(items), len(items))) if seed else None
        bits, flags, wraps, auto = reduce_tree(tree, data, policy, in_fmt, out_fmt, width, order=order)
        return TreeRun(bits, flags, wraps, auto)
    backend = BACKEND[impl]
    rows = deal(tree, contributions)
    carried, nodes, chain = {}, {}, {}
    for k, node in enumerate(tree.walk()):
        node_in, node_out = node_formats(tree, node, policy, in_fmt, out_fmt)
        if node.is_leaf:
            inputs = data[rows[node.name]]
        else:
            inputs = _carried_array([carried[c.name] for c in node.children], policy)
        count = inputs.shape[0]
        arrival = rng.sample(range(count), count)        # the children's (rows') order of arrival
        ports = tuple(rng.choice((0, 1)) for _ in range(count))
        recipients = rng.choice((0b01, 0b10))
        record = NodeRecord(node.name, node_in, node_out, count, event=events.get(node.name, ""))
        op = Operation(k % 256, rng.randint(0, 65535), policy, node_in, node_out, inputs[arrival],
                       mode=P.MODE_REDUCE, recipients=recipients, frame_elems=rng.choice((16, 48, 256, MAX_CAPACITY)),
                       ids=tuple(arrival), ports=ports)
        run, op = _node_run(node, op, backend, width, rng, events.get(node.name), seed * 1000 + k, variant)
        record.attempts = 2 if events.get(node.name) else 1
        record.cycles, record.frames_in = run.cycles, sum(len(run.rx[p]) for p in (0, 1))
        nodes[node.name] = record
        chain[node.name] = run.cycles + max((chain[c.name] for c in node.children), default=0)
        values = _result_values(run, op, 0 if recipients == 0b01 else 1, elements)
        if node is tree:
            root = values
        else:
            carried[node.name] = [v for _, v in values]
        if progress:
            progress(record)
    return root_result(root, policy, out_fmt, width, nodes, chain[tree.name])


def root_result(values, policy, out_fmt, width, nodes, critical):
    from golden.reduce import out_dtype
    elements = len(values)
    if out_fmt == "exact":
        bits, flags, wraps = exact_outputs([v for _, v in values], width)
        return TreeRun(bits, flags, wraps, None, nodes, critical)
    flags = wraps = None            # a rounded RESULT carries the value only, not the accumulator's flags
    if out_fmt == "auto":
        bits = np.array([v for _, v in values], np.uint32)
        codes = np.array([values[t][0] for t in range(0, elements, P.RANGE_ELEMS)], np.uint8)
        return TreeRun(bits, flags, wraps, codes, nodes, critical)
    return TreeRun(np.array([v for _, v in values], out_dtype(out_fmt)), flags, wraps, None, nodes, critical)


# ---- random tree regressions ------------------------------------------------------------------

TREE_POINTS = {
    "tree: depth": ["1", "2", "3"],
    "tree: shape": ["balanced", "unbalanced"],
    "tree: largest fan-in": ["2", "3-4", "5-8"],
    "tree: contributions per leaf": ["1", "2-3", "4-8"],
    "tree: policy x width": [f"{p} W={w}" for p in ("kulisch", "fp32-arrival") for w in KULISCH_WIDTH_CHOICES],
    "tree: result format": ["exact", "fp32", "bf16", "fp16", "int8", "auto"],
    "tree: data": ["random", "huge (partials wrap W)", "cancelling leaves", "subnormal", "special"],
    "tree: hostile event": ["none", "abort", "reset"],
}


@dataclass
class TreeCase:
    seed: int
    tree: object
    data: np.ndarray
    policy: str
    in_fmt: str
    out_fmt: str
    width: int
    events: dict
    bins: dict                  # cover point -> bin

    @property
    def description(self):
        import json
        return (f"seed {self.seed}: {json.dumps(self.tree.describe(), separators=(',', ':'))} {self.policy} "
                f"W={self.width} {self.in_fmt}->{self.out_fmt} C×E={self.data.shape[0]}x{self.data.shape[1]}"
                + (f" events {self.events}" if self.events else ""))


def _random_shape(rng, depth):
    from golden.node.tree import TreeNode, named_tree
    def node(level):
        if level == depth or (level > 0 and rng.random() < 0.25):
            return TreeNode()
        fan = rng.choice((1, 2, 2, 2, 3, 4)) if level else rng.choice((2, 2, 3, 4, 8))
        return TreeNode([node(level + 1) for _ in range(fan)])
    return named_tree(node(0))


def random_tree_case(seed, capacity=256):
    """A tree, its contributions and hostile events drawn from `seed` (tests and `prism tree --regress`)."""
    from cosim.node.regress import mode_values
    rng = random.Random(seed * 13_000_019 + 1)
    tree = _random_shape(rng, rng.choice((1, 2, 2, 3)))
    leaves = tree.leaves()
    per_leaf = rng.choice((1, 1, 2, 3, 4, 8)) if len(leaves) <= 4 else rng.choice((1, 1, 2))
    contributions = len(leaves) * per_leaf + rng.randrange(0, len(leaves))
    contributions = min(contributions, len(leaves) * 8)
    policy = rng.choice(("kulisch", "kulisch", "kulisch", "fp32-arrival"))
    width = rng.choice(KULISCH_WIDTH_CHOICES)
    in_fmt = rng.choice(("int8", "fp16", "bf16", "fp32"))
    out_fmt = rng.choice(("exact", "fp32", "bf16", "fp16", "int8", "auto") if policy == "kulisch"
                         else ("fp32", "bf16", "fp16", "int8", "auto"))
    elements = min(capacity, rng.choice((1, 16, 40, 100, 256)))
    mode = rng.choice(("random", "random", "huge", "cancel", "subnormal", "special"))
    if mode == "huge":          # near the largest finite value: partials wrap W = 280 and cross levels
        in_fmt = "fp32"
    data = mode_values(rng, in_fmt, (contributions, elements), mode)
    events = {}
    if rng.random() < 0.3:
        events[rng.choice([n.name for n in tree.walk()])] = rng.choice(HOSTILE_EVENTS)
    fans = max(len(n.children) for n in tree.walk())
    depths = {len(leaf.name.split(".")) - 1 for leaf in leaves}
    bins = {"tree: depth": str(tree.depth()),
            "tree: shape": "balanced" if len(depths) == 1 and len({len(n.children) for n in tree.walk()
                                                                   if not n.is_leaf}) == 1 else "unbalanced",
            "tree: largest fan-in": "2" if fans <= 2 else "3-4" if fans <= 4 else "5-8",
            "tree: contributions per leaf": (lambda m: "1" if m == 1 else "2-3" if m <= 3 else "4-8")(
                -(-contributions // len(leaves))),
            "tree: policy x width": f"{policy} W={width}",
            "tree: result format": out_fmt,
            "tree: data": {"random": "random", "huge": "huge (partials wrap W)", "cancel": "cancelling leaves",
                           "subnormal": "subnormal", "special": "special"}[mode],
            "tree: hostile event": next(iter(events.values()), "none")}
    return TreeCase(seed, tree, data, policy, in_fmt, out_fmt, width, events, bins)


@dataclass
class TreeSeedResult:
    seed: int
    ok: bool
    description: str
    error: str = ""
    bins: dict = field(default_factory=dict)
    nodes: int = 0
    cycles: int = 0


def run_tree_seed(seed, backend="verilator"):
    """One random tree co-simulated on `backend` ("icarus" or "verilator"): every node checked by the
    node scoreboard, the root against the tree's reference and (KULISCH_FIXED) one flat reduction."""
    from golden.reduce import reduce
    case = random_tree_case(seed)
    try:
        run = run_tree(case.tree, case.data, case.policy, case.in_fmt, case.out_fmt, case.width, impl=backend,
                       seed=seed, events=case.events)
        if case.policy == "kulisch":
            flat = reduce("kulisch", case.in_fmt, case.out_fmt, case.data, impl="c", width=case.width)
            want = TreeRun(flat.bits, flat.flags if case.out_fmt == "exact" else None,
                           flat.wraps if case.out_fmt == "exact" else None, flat.auto_formats)
            if not run.same_as(want):
                bad = np.flatnonzero(np.any(run.bits.reshape(len(run.bits), -1) != want.bits.reshape(len(want.bits), -1),
                                            axis=1))
                raise TreeMismatch(f"the root differs from the flat reduction at elements {bad[:5].tolist()}")
        return TreeSeedResult(seed, True, case.description, bins=case.bins, nodes=len(run.nodes),
                              cycles=run.critical_cycles)
    except TreeMismatch as e:
        return TreeSeedResult(seed, False, case.description, str(e), case.bins)
