"""A reduction tree as one wired design (hdl/node/prism_tree.py), co-simulated whole.

Where cosim/node/tree.py runs a tree's nodes one after another and carries each child's
results to its parent in Python, here every node, link and frame multiplexer runs at once in
one simulation: a child's RESULT frames cross its link to the parent under the parent's
backpressure, cycle by cycle, as they would in hardware.  The test bench drives only what a
collective library and the contributors would: each node's STAGE and COMMIT (a leaf's on its
receive port 0, an inner node's on its CONTROL stream) and the leaves' DATA, with pauses drawn
from the seed on every input and output.  It checks:

- every node answers its STAGE and COMMIT with an ACK, and sends nothing else on port 0;
- the root's RESULT frames are the tree's reference (golden/node/tree.py) bit for bit, and
  under KULISCH_FIXED one flat reduction's;
- the design ends idle.

Conversion: the tree's Verilog instantiates the converted node as a module (`prism_node`,
one file for every node of the tree) instead of MyHDL's flattened copy per node, so a tree of
N nodes costs one node's Verilog and build.
"""
import contextlib
import json
import os
import random
from dataclasses import dataclass, field
from typing import Dict, List

import numpy as np
from myhdl import ResetSignal, Signal, always, block, intbv

import hdl.node.prism_tree as tree_hdl
from cosim.node.node_harness import node_block, node_signals
from cosim.node.scenarios import Operation, build
from cosim.node.tree import TreeMismatch, TreeRun, TreeSeedResult, random_tree_case, root_result
from cosim.sim import convert
from cosim.sim.axis import AxisFrame, PausePattern
from cosim.sim.batch import RESET_STREAM, BatchDesign, ResetEvent, StreamStimulus, module_ports
from golden.node import protocol as P
from golden.node.tree import check_tree, deal, node_formats, parse_shape, reduce_tree, shape_from_json
from golden.reduce import reduce
from hdl.common.interface import AxiStream
from hdl.node.prism_tree import LINK_COUNT_BITS, TreeStreams, prism_tree, tree_nodes, tree_streams
from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY

SIMULATORS = ("icarus", "verilator")
_node_module = ["prism_node"]     # the module node_instance instantiates (set while a tree converts)
_NODE_PORTS = ("clk", "rst",
               "s_axis_0_tdata", "s_axis_0_tvalid", "s_axis_0_tready", "s_axis_0_tlast",
               "s_axis_1_tdata", "s_axis_1_tvalid", "s_axis_1_tready", "s_axis_1_tlast",
               "m_axis_0_tdata", "m_axis_0_tvalid", "m_axis_0_tready", "m_axis_0_tlast",
               "m_axis_1_tdata", "m_axis_1_tvalid", "m_axis_1_tready", "m_axis_1_tlast",
               "counter_select", "counter_value", "busy")
_NODE_OUTPUTS = {"s_axis_0_tready", "s_axis_1_tready", "m_axis_0_tdata", "m_axis_0_tvalid", "m_axis_0_tlast",
                 "m_axis_1_tdata", "m_axis_1_tvalid", "m_axis_1_tlast", "counter_value", "busy"}
_instance_ids = [0]


def _next_instance():
    _instance_ids[0] += 1
    return _instance_ids[0]


def _stream(bus):
    return bus.tdata, bus.tvalid, bus.tready, bus.tlast


@block
def node_instance(clk, rst, s_axis_0: AxiStream, s_axis_1: AxiStream, m_axis_0: AxiStream, m_axis_1: AxiStream,
                  counter_select, counter_value, busy, KULISCH_W=KULISCH_WIDTH_DEFAULT, CAPACITY=MAX_CAPACITY):
    """The node as an instance of the converted `prism_node` module (its Verilog: node_instance.
    verilog_code); KULISCH_W and CAPACITY are those the module was converted with."""
    inst_id = _next_instance()     # noqa: F841  (the instance name in verilog_code)
    node_module = _node_module[0]  # noqa: F841  (the module name in verilog_code)
    # verilog_code names the module's ports, `<bus>_<field>`: one local per field (it also names
    # the signal in the tree's Verilog, as a flat port of this block did)
    s_axis_0_tdata, s_axis_0_tvalid, s_axis_0_tready, s_axis_0_tlast = _stream(s_axis_0)
    s_axis_1_tdata, s_axis_1_tvalid, s_axis_1_tready, s_axis_1_tlast = _stream(s_axis_1)
    m_axis_0_tdata, m_axis_0_tvalid, m_axis_0_tready, m_axis_0_tlast = _stream(m_axis_0)
    m_axis_1_tdata, m_axis_1_tvalid, m_axis_1_tready, m_axis_1_tlast = _stream(m_axis_1)
    for s in (s_axis_0_tready, s_axis_1_tready, m_axis_0_tdata, m_axis_0_tvalid, m_axis_0_tlast,
              m_axis_1_tdata, m_axis_1_tvalid, m_axis_1_tlast, counter_value, busy):
        s.driven = "wire"
    for s in (clk, rst, s_axis_0_tdata, s_axis_0_tvalid, s_axis_0_tlast, s_axis_1_tdata, s_axis_1_tvalid,
              s_axis_1_tlast, m_axis_0_tready, m_axis_1_tready, counter_select):
        s.read = True

    @always(clk.posedge)
    def never():
        pass
    return never


node_instance.verilog_code = ("${node_module} node_$inst_id (\n"
                              + ",\n".join(f"    .{p}(${p})" for p in _NODE_PORTS) + "\n);\n")


@contextlib.contextmanager
def _nodes_as_instances(node_file, module):
    """While the tree is converted, its nodes are instances of the converted node `module`, and
    the conversion's compile check reads that module from `node_file`."""
    saved, saved_module = tree_hdl.prism_node, _node_module[0]
    tree_hdl.prism_node, _node_module[0] = node_instance, module
    try:
        with convert.external_modules([node_file]):
            yield
    finally:
        tree_hdl.prism_node, _node_module[0] = saved, saved_module


def tree_top_signals(shape):
    """The tree top's ports for `shape` (keyword arguments of prism_tree)."""
    ins, outs = tree_streams(shape)
    links = len(tree_nodes(shape)) - 1
    return dict(clk=Signal(bool(0)), rst=ResetSignal(0, active=1, isasync=False), s_axis=TreeStreams(ins),
                m_axis=TreeStreams(outs), busy=Signal(bool(0)), link_dropped=Signal(intbv(0)[LINK_COUNT_BITS * links:]))


_designs = {}


def tree_design(shape, simulator="verilator", width=KULISCH_WIDTH_DEFAULT, capacity=MAX_CAPACITY, variant=None):
    """The wired tree of `shape` (nested tuples) with the batched test bench, built once;
    `variant`: a test-only node variant for every node (cosim.node.node_harness.node_block)."""
    if simulator not in SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r}; choose one of {', '.join(SIMULATORS)}")
    key = (shape, simulator, width, capacity, variant, convert.hdl_source_digest())
    if key not in _designs:
        node_folder, node_module, _ = convert.build(node_block(variant), **node_signals(), KULISCH_W=width,
                                                    CAPACITY=capacity)
        node_file = os.path.join(node_folder, f"{node_module}.v")
        with _nodes_as_instances(convert.icarus_source(node_folder, node_module), node_module):
            folder, module, _ = convert.build(prism_tree, **tree_top_signals(shape), SHAPE=shape, KULISCH_W=width,
                                              CAPACITY=capacity)
        tree_file = os.path.join(folder, f"{module}.v")
        # Icarus compiles the kit's own Icarus forms (the node's shares its process variables: a
        # far shorter compile than the rewrite a plain Verilog file gets)
        _designs[key] = BatchDesign.from_verilog(
            [tree_file, node_file], module, module_ports(tree_file, module), simulator=simulator,
            label=f"prism_tree-{len(tree_nodes(shape))}",
            icarus_sources=[convert.icarus_source(folder, module), convert.icarus_source(node_folder, node_module)])
    return _designs[key]


def shape_tuple(tree):
    """golden/node/tree.py's TreeNode as prism_tree's SHAPE (nested tuples)."""
    return tuple(shape_tuple(c) for c in tree.children)


@dataclass
class TreeTopRun:
    tree: TreeRun
    cycles: int
    wall_seconds: float
    responses: Dict[int, List[object]] = field(default_factory=dict)   # node index -> decoded frames on TX0


def _node_operation(tree, node, k, root, data, rows, policy, in_fmt, out_fmt, op_id, generation, recipients, rng):
    node_in, node_out = node_formats(tree, node, policy, in_fmt, out_fmt)
    count = len(rows[node.name]) if node.is_leaf else len(node.children)
    elements = data.shape[1]
    return Operation(op_id, generation, policy, node_in, node_out,
                     data[rows[node.name]] if node.is_leaf else np.zeros((count, elements), np.uint32),
                     mode=P.MODE_REDUCE, recipients=recipients if k == root else 0b10,
                     frame_elems=rng.choice((16, 48, 256, MAX_CAPACITY)),
                     ports=tuple(rng.choice((0, 1)) for _ in range(count)) if node.is_leaf else None)


def _attempt_frames(names, ops, index, rng, seed, attempt, earlier):
    """{input stream: frames} of one attempt: every node's STAGE and COMMIT, the leaves' DATA.
    `earlier`: {stream: frames queued before this attempt's} (a frame's wait on the other port
    counts those too)."""
    streams = {}
    for k, (node, op) in enumerate(zip(names, ops)):
        if node.is_leaf:
            sc = build([op], seed=seed * 1000 + 100 * attempt + k, interleave=rng.random() < 0.7,
                       data_delay=rng.choice((8, 30)))
            for port in (0, 1):
                other = f"s_axis_n{k}_rx{1 - port}"
                streams[f"s_axis_n{k}_rx{port}"] = [
                    AxisFrame(f.beats, delay=f.delay,
                              after=None if f.after is None else (index[other], len(earlier[other]) + f.after[1]))
                    for f in sc.stream(port)]
        else:
            streams[f"s_axis_n{k}_ctl"] = [AxisFrame(op.stage().encode()), AxisFrame(op.commit().encode())]
    return streams


def _control_count(frames):
    """Frames of a stream up to and including its first COMMIT (None: it has none)."""
    for n, f in enumerate(frames, 1):
        if P.get_field(f.beats[0], "class") == P.CLASS_CONTROL and P.get_field(f.beats[0], "opcode") == P.OP_COMMIT:
            return n
    return None


def _after_every_commit(names, streams, index, delay):
    """The whole-tree reset, once every node has taken its first attempt's STAGE and COMMIT.

    A reset that falls before some node's STAGE or COMMIT has gone in would see that node open
    the abandoned attempt's operation afterwards, and refuse the retry's COMMIT (BUSY) for ever:
    a host retries after a reset once it has sent its first attempt's requests.  So each node's
    STAGE waits for the COMMIT of the node before it (in walk order, the root last), and the reset
    rises `delay` cycles after the root's COMMIT: leaves' DATA and children's partials are in
    flight then, or already merged."""
    previous = None
    for k, node in enumerate(names):
        ports = (f"s_axis_n{k}_rx0", f"s_axis_n{k}_rx1") if node.is_leaf else (f"s_axis_n{k}_ctl",)
        port = next(p for p in ports if _control_count(streams[p]))
        frames = streams[port]
        if previous is not None and frames[0].after is None:
            frames[0].after = previous
        previous = (index[port], _control_count(frames))
    return ResetEvent(f"in {previous[0]}", previous[1], delay)


def run_tree_top(tree, data, policy, in_fmt, out_fmt, width=KULISCH_WIDTH_DEFAULT, simulator="verilator", seed=0,
                 source_pause=None, sink_pause=None, reset=False, max_cycles=None, variant=None, capacity=None,
                 recipients=None):
    """Reduce C x E `data` through the wired tree of `tree` (golden TreeNode); TreeTopRun, or
    TreeMismatch with the first difference.  Pauses default to ones drawn from the seed; `variant`:
    see tree_design; `capacity`: the nodes' CAPACITY (default the largest; a smaller node builds
    faster); `recipients`: the root's transmit port mask (default drawn).  `reset`: the whole
    tree is reset once every node has its first attempt's operation open (_after_every_commit:
    leaves' DATA and partials in flight), and the collective runs again with the next generation
    (every node staged and committed again, the leaves' DATA sent again); only the retry's
    results count.

    Judged under KULISCH_FIXED only: there the root's bits cannot depend on when a child's
    partial reaches its parent, so they are the tree reference's whatever the link timing.  An
    FP32_ARRIVAL tree's answer depends on each inner node's arrival order, which the wired
    design does not expose; cosim/node/tree.py observes it node by node."""
    if policy != "kulisch":
        raise ValueError("the wired tree is judged under KULISCH_FIXED; run FP32_ARRIVAL trees node by node "
                         "(prism tree without --wired)")
    rng = random.Random(seed)
    data = np.asarray(data)
    contributions, elements = data.shape
    check_tree(tree, contributions)
    capacity = capacity or MAX_CAPACITY
    if elements > capacity:
        raise ValueError(f"E = {elements} elements; the tree's nodes hold {capacity}")
    design = tree_design(shape_tuple(tree), simulator, width, capacity, variant=variant)
    names = list(tree.walk())                       # node k of prism_tree is the k-th of walk()
    rows = deal(tree, contributions)
    root = len(names) - 1
    op_id, generation = rng.randrange(256), rng.randrange(65536)
    recipients = rng.choice((0b01, 0b10)) if recipients is None else recipients
    index = {p: i for i, p in enumerate(design.inputs)}
    attempts = [generation] + ([(generation + 1) % 65536] if reset else [])
    streams = {p: [] for p in design.inputs}
    resets = []
    for attempt, gen in enumerate(attempts):
        ops = [_node_operation(tree, node, k, root, data, rows, policy, in_fmt, out_fmt, op_id, gen, recipients, rng)
               for k, node in enumerate(names)]
        frames = _attempt_frames(names, ops, index, rng, seed, attempt, streams)
        if attempt:                                 # the retry starts once the reset is over
            for p, fs in frames.items():
                if fs and fs[0].after is None:      # (a frame waiting on the other port waits for that one)
                    fs[0].after = (RESET_STREAM, 1)
        for p, fs in frames.items():
            if attempt == 0 and reset and not resets and p.endswith("_rx0") and len(fs) > 3:
                # the reset's delay (its trigger is set by _after_every_commit below; the draw
                # stays here, so every seed's later draws are what they were)
                resets.append(ResetEvent(f"in {index[p]}", 3, rng.randint(0, 12)))
            streams[p] += fs
    if reset and not resets:
        first = next(p for p in design.inputs if p.endswith("_rx0"))
        resets.append(ResetEvent(f"in {index[first]}", 2, rng.randint(0, 12)))
    if reset:
        resets = [_after_every_commit(names, streams, index, resets[0].delay)]
    source_pause = rng.choice((0.0, 0.2, 0.5)) if source_pause is None else source_pause
    sink_pause = rng.choice((0.0, 0.3, 0.6)) if sink_pause is None else sink_pause
    if max_cycles is None:          # ample: every beat of the tree ten times over, on the deepest chain
        beats = sum(len(f.beats) for fs in streams.values() for f in fs)
        max_cycles = 20_000 + 10 * (tree.depth() + 1) * beats
    stimulus = {p: StreamStimulus(frames, PausePattern(source_pause, seed=rng.randrange(1 << 30)))
                for p, frames in streams.items()}
    sink = {p: PausePattern(sink_pause, seed=rng.randrange(1 << 30)) for p in design.outputs}
    result = design.run(stimulus, sink_pause=sink, max_cycles=max_cycles, idle_stop=300, resets=resets)
    if result.cycles >= max_cycles:
        raise TreeMismatch(f"the wired tree did not settle within {max_cycles} cycles (a frame never arrived, or "
                           "a node stayed busy)")
    if reset and not result.resets:
        raise TreeMismatch("the reset the run asked for was never raised")
    out = {p: result.frames.get(p, []) for p in design.outputs}
    responses = _check_responses(names, out, op_id, attempts[-1], recipients, root, retried=reset)
    values = _root_values(out[f"m_axis_n{root}_tx{0 if recipients == 0b01 else 1}"], op_id, attempts[-1], elements)
    got = root_result(values, policy, out_fmt, width, {}, result.cycles)
    want = TreeRun(*reduce_tree(tree, data, policy, in_fmt, out_fmt, width))
    if not got.same_as(want):
        bad = np.flatnonzero(np.any(got.bits.reshape(elements, -1) != want.bits.reshape(elements, -1), axis=1))
        raise TreeMismatch(f"the wired tree's root differs from the tree's reference at elements {bad[:5].tolist()}"
                           if len(bad) else "the wired tree's root differs from the tree's reference (flags or wraps)")
    if result.busy_at_end:
        raise TreeMismatch("the wired tree is still busy at the end of the run")
    return TreeTopRun(got, result.cycles, result.wall_seconds, responses)


# The wired regression's shapes: every new shape is a new build of the whole design (a node's
# Verilator build), so the seeds draw from these two and vary everything else.  Between them:
# depth 2 and 3, fan-in 2 and 3, balanced and unbalanced, a node with leaves and inner children.
WIRED_SHAPES = ("[[[],[]],[],[[],[],[]]]", "2x2x2")
WIRED_CAPACITY = 256
# cosim/node/tree.py's bins the wired regression cannot reach by design, and why (its report
# lists them apart, so a bin it should reach and does not stands out)
WIRED_NOT_APPLICABLE = {
    ("tree: depth", "1"): "the wired shapes are two and three levels deep",
    ("tree: largest fan-in", "5-8"): "the wired shapes' largest fan-in is 3",
    ("tree: hostile event", "abort"): "a hostile event is a whole-tree reset (an ABORT in one node is run node by node)",
    **{("tree: policy x width", f"fp32-arrival W={w}"): "the wired tree is judged under KULISCH_FIXED only"
       for w in KULISCH_WIDTH_CHOICES},
}


def wired_case(seed):
    """random_tree_case's data, formats and width for seed `seed` on one of WIRED_SHAPES, under
    KULISCH_FIXED; a hostile event becomes a whole-tree reset."""
    rng = random.Random(seed * 7_919 + 3)
    spec = rng.choice(WIRED_SHAPES)
    tree = shape_from_json(json.loads(spec)) if spec.startswith("[") else parse_shape(spec)
    case = random_tree_case(seed, capacity=WIRED_CAPACITY)
    leaves = len(tree.leaves())
    rows = rng.randint(leaves, min(8 * leaves, max(leaves, case.data.shape[0])))
    data = np.resize(case.data, (rows, case.data.shape[1]))     # the case's values, one row per contributor
    out_fmt = case.out_fmt if case.policy == "kulisch" else rng.choice(
        ("exact", "fp32", "bf16", "fp16", "int8", "auto"))
    unbalanced = spec.startswith("[")
    bins = dict(case.bins, **{"tree: depth": str(tree.depth()),
                              "tree: shape": "unbalanced" if unbalanced else "balanced",
                              "tree: largest fan-in": "3-4" if unbalanced else "2",
                              "tree: contributions per leaf": (lambda m: "1" if m == 1 else "2-3" if m <= 3 else "4-8")(
                                  -(-rows // leaves)),
                              "tree: policy x width": f"kulisch W={case.width}", "tree: result format": out_fmt,
                              "tree: hostile event": "reset" if case.events else "none"})
    return tree, data, case.in_fmt, out_fmt, case.width, bool(case.events), bins


def run_tree_top_seed(seed, simulator="verilator"):
    """One random wired tree (wired_case), checked against the tree's reference and the flat
    reduction (`prism reduce`)."""
    tree, data, in_fmt, out_fmt, width, reset, bins = wired_case(seed)
    description = (f"wired seed {seed}: {json.dumps(tree.describe(), separators=(',', ':'))} kulisch W={width} "
                   f"{in_fmt}->{out_fmt} C×E={data.shape[0]}x{data.shape[1]}" + (" reset" if reset else ""))
    try:
        run = run_tree_top(tree, data, "kulisch", in_fmt, out_fmt, width, simulator, seed=seed, reset=reset,
                           capacity=WIRED_CAPACITY)
        flat = reduce("kulisch", in_fmt, out_fmt, data, impl="c", width=width)
        want = TreeRun(flat.bits, flat.flags if out_fmt == "exact" else None,
                       flat.wraps if out_fmt == "exact" else None, flat.auto_formats)
        if not run.tree.same_as(want):
            raise TreeMismatch("the wired tree's root differs from the flat reduction")
        return TreeSeedResult(seed, True, description, bins=bins, nodes=len(list(tree.walk())), cycles=run.cycles)
    except TreeMismatch as e:
        return TreeSeedResult(seed, False, description, str(e), bins)


def _decoded(frames, where):
    out = []
    for frame in frames:
        try:
            out.append(P.decode(frame.beats))
        except P.MalformedFrame as exc:
            raise TreeMismatch(f"{where}: a malformed frame ({exc})") from None
    return out


def _check_responses(names, out, op_id, generation, recipients, root, retried=False):
    """Every node's transmit port 0: an ACK of its STAGE, then of its COMMIT, and (but for a root
    that sends its results there) nothing else; after a reset (`retried`) the responses of the
    retry's generation are those, and the first attempt's may be any.  {node index: decoded frames}."""
    responses = {}
    for k, node in enumerate(names):
        frames = _decoded(out[f"m_axis_n{k}_tx0"], f"node {k} ({node.name}) port 0")
        answers = [f for f in frames if isinstance(f, P.Response) and (not retried or f.generation == generation)]
        others = [f for f in frames if not isinstance(f, P.Response) and (not retried or f.generation == generation)]
        want = [(True, P.OP_STAGE), (True, P.OP_COMMIT)]
        got = [(a.ack, a.request_opcode) for a in answers]
        if got != want or any((a.op_id, a.generation) != (op_id, generation) for a in answers):
            raise TreeMismatch(f"node {k} ({node.name}): responses {[str(a) for a in answers]}; "
                               "want an ACK of STAGE then of COMMIT")
        if others and not (k == root and recipients == 0b01):
            raise TreeMismatch(f"node {k} ({node.name}) port 0: {len(others)} frame(s) beyond its responses")
        responses[k] = frames
    return responses


def _root_values(frames, op_id, generation, elements):
    """Per element (format code, value) from the root's RESULT frames, each element exactly once."""
    got = {}
    for res in _decoded(frames, "the root's results"):
        if not isinstance(res, P.Result):
            continue
        if (res.op_id, res.generation) != (op_id, generation):
            raise TreeMismatch(f"the root sent a RESULT of op {res.op_id} generation {res.generation}; "
                               f"the tree runs op {op_id} generation {generation}")
        for i, fmt, v in res.elements():
            if i in got:
                raise TreeMismatch(f"the root sent element {i} twice")
            got[i] = (fmt, v)
    missing = [i for i in range(elements) if i not in got]
    if missing:
        raise TreeMismatch(f"the root sent no RESULT for elements {missing[:5]}{'...' if len(missing) > 5 else ''}")
    return [got[i] for i in range(elements)]
