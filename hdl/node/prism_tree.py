"""A reduction tree of PRISM nodes wired in one design: the seed's merge harness.

Every node of SHAPE is a `prism_node`.  A child's transmit port 1 feeds its parent through a
`prism_tree_link`, which sends the child's RESULT frames on as DATA (EXACT partials under
KULISCH_FIXED, FP32 sums under FP32_ARRIVAL) with the child's place at its parent as contributor
id; the links to one receive port, and on port 0 the node's CONTROL stream, are merged frame by
frame (`axis_frame_mux`).  Leaves take their contributors' frames (CONTROL and DATA) on their
own receive ports, as a single node does.  Every link is a stream with backpressure end to end:
a parent that stalls stalls its children's transmit ports.

Nodes are numbered children first, children in order, the root last (a tree computes in that
order).  Child j of a node reaches receive port j % 2.  A client stages every node with the same
(op_id, generation), Reduce to transmit port 1 for every node but the root (its results go to
its parent), and with contributor j for child j.

Ports:
    clk, rst          clock; synchronous active-high reset of every node, link and multiplexer
    s_axis            TreeStreams of the inputs (`tree_streams(SHAPE)`): per leaf k its receive
                      ports `n<k>_rx0`, `n<k>_rx1`; per inner node k its CONTROL `n<k>_ctl`;
                      each stream's fields `<name>_tdata/_tvalid/_tready/_tlast` (512-bit beats)
    m_axis            TreeStreams of the outputs: every node's transmit port 0 `n<k>_tx0` (its
                      CONTROL responses) and the root's transmit port 1 `n<root>_tx1`
    busy              out: some node has an operation in progress
    link_dropped      out: LINK_COUNT_BITS per link, child order (the links of nodes 0, 1, ...):
                      frames a link consumed without sending them on (prism_tree_link)

Parameters:
    SHAPE        the tree as nested tuples: a leaf is (), a node the tuple of its children;
                 e.g. ((), ()) a root with two leaves.  At least one inner node; at most
                 MAX_CONTRIBUTORS children per node.
    KULISCH_W    every node's accumulator width (prism_node)
    CAPACITY     every node's element capacity (prism_node)
"""
from myhdl import ConcatSignal, Signal, always_comb, block, intbv

from hdl.common.axis_frame_mux import axis_frame_mux
from hdl.common.interface import AxiStream, Interface, bit, vec
from hdl.node.prism_node import prism_node
from hdl.node.prism_tree_link import prism_tree_link
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import BEAT_BITS, MAX_CAPACITY, MAX_CONTRIBUTORS

LINK_COUNT_BITS = 8


def tree_nodes(shape):
    """[(children's indices)] per node, children first, the root last."""
    if not isinstance(shape, tuple):
        raise ValueError(f"prism_tree: SHAPE {shape!r}; a node is the tuple of its children, a leaf ()")
    nodes = []

    def visit(node):
        if not isinstance(node, tuple):
            raise ValueError(f"prism_tree: SHAPE holds {node!r}; a node is the tuple of its children, a leaf ()")
        if len(node) > MAX_CONTRIBUTORS:
            raise ValueError(f"prism_tree: a node of SHAPE has {len(node)} children; a node takes at most "
                             f"{MAX_CONTRIBUTORS} contributors")
        children = tuple(visit(child) for child in node)
        nodes.append(children)
        return len(nodes) - 1
    visit(shape)
    if len(nodes) < 2:
        raise ValueError("prism_tree: SHAPE is a single node; a tree has a root with at least one child")
    return nodes


def tree_streams(shape):
    """(input stream names, output stream names) of the tree top's s_axis and m_axis."""
    nodes = tree_nodes(shape)
    ins, outs = [], []
    for k, children in enumerate(nodes):
        ins += [f"n{k}_rx0", f"n{k}_rx1"] if not children else [f"n{k}_ctl"]
        outs.append(f"n{k}_tx0")
    outs.append(f"n{len(nodes) - 1}_tx1")
    return ins, outs


class TreeStreams(Interface):
    """Streams by name, each as the fields `<name>_tdata`, `_tvalid`, `_tready`, `_tlast`."""

    def __init__(self, names, width=BEAT_BITS):
        for name in names:
            setattr(self, f"{name}_tdata", vec(width))
            setattr(self, f"{name}_tvalid", bit())
            setattr(self, f"{name}_tready", bit())
            setattr(self, f"{name}_tlast", bit())

    def stream(self, name):
        """One stream as an AxiStream (its fields are this bus's `<name>_<field>` signals)."""
        return AxiStream.from_ports(name, vars(self))


@block
def prism_tree(clk, rst, s_axis, m_axis, busy, link_dropped, SHAPE=((), ()), KULISCH_W=KULISCH_WIDTH_DEFAULT,
               CAPACITY=MAX_CAPACITY):
    nodes = tree_nodes(SHAPE)
    root = len(nodes) - 1
    links = root                    # every node but the root has one
    if len(link_dropped) != LINK_COUNT_BITS * links:
        raise ValueError(f"prism_tree: link_dropped is {len(link_dropped)} bits; this tree has {links} links of "
                         f"{LINK_COUNT_BITS} bits")
    insts = []
    child_tx1 = {}                  # node index -> its transmit port 1 (to its parent's link)
    drops = []
    busies = []
    counter_select = Signal(intbv(0)[6:])

    joins = []                      # (a, b, out): a frame multiplexer of streams a and b into out

    def merged(streams):
        """One stream carrying all of `streams`' frames: a balanced tree of frame multiplexers
        (recorded in `joins`; MyHDL wants every instance made in the block's own body)."""
        if not streams:
            return AxiStream(BEAT_BITS)    # never valid
        while len(streams) > 1:
            joined = []
            for a, b in zip(streams[0::2], streams[1::2]):
                joins.append((a, b, AxiStream(BEAT_BITS)))
                joined.append(joins[-1][2])
            if len(streams) % 2:
                joined.append(streams[-1])
            streams = joined
        return streams[0]

    for k, children in enumerate(nodes):
        if children:
            to_parent = {}
            for j, child in enumerate(children):
                out = AxiStream(BEAT_BITS)
                dropped = Signal(intbv(0)[LINK_COUNT_BITS:])
                drops.append((child, dropped))
                insts.append(prism_tree_link(clk=clk, rst=rst, s_axis=child_tx1[child], m_axis=out, dropped=dropped,
                                             CONTRIBUTOR=j))
                to_parent[child] = out
            port0 = merged([s_axis.stream(f"n{k}_ctl")] + [to_parent[c] for c in children[0::2]])
            port1 = merged([to_parent[c] for c in children[1::2]])
        else:
            port0, port1 = s_axis.stream(f"n{k}_rx0"), s_axis.stream(f"n{k}_rx1")
        tx1 = m_axis.stream(f"n{k}_tx1") if k == root else AxiStream(BEAT_BITS)
        child_tx1[k] = tx1
        node_busy = Signal(bool(0))
        busies.append(node_busy)
        insts.append(prism_node(clk=clk, rst=rst, s_axis_0=port0, s_axis_1=port1, m_axis_0=m_axis.stream(f"n{k}_tx0"),
                                m_axis_1=tx1, counter_select=counter_select, counter_value=Signal(intbv(0)[32:]),
                                busy=node_busy, KULISCH_W=KULISCH_W, CAPACITY=CAPACITY))

    for a, b, out in joins:
        insts.append(axis_frame_mux(clk=clk, rst=rst, s_axis_a=a, s_axis_b=b, m_axis=out))

    # ConcatSignal puts its first argument in the high bits: node 0's link lowest
    counts = [d for _, d in sorted(drops, key=lambda cd: cd[0])]
    dropped_bits = ConcatSignal(*reversed(counts)) if len(counts) > 1 else counts[0]
    any_busy = ConcatSignal(*busies)

    @always_comb
    def outputs():
        busy.next = any_busy != 0
        link_dropped.next = dropped_bits

    insts.append(outputs)
    return insts
