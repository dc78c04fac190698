"""A reduction tree of PRISM nodes: its shape, how contributors are dealt to its leaves, and its
naive reference (Python ints, one element at a time).

A tree's leaves take contributors' DATA; every other node takes its children's results as DATA
and the root sends the tree's result (docs/protocol.md, "EXACT input").

- KULISCH_FIXED: a node that is not the root sends EXACT partials (the exact sum of its
  contributions and its specials flags); its parent merges them exactly; the root rounds once.
  Whatever the shape and the order partials arrive in, the root's bits are those of one flat
  reduction of every contribution (golden.reduce), as long as every partial is below the
  bound a node takes (spec.formats.exact_input_limit).
- FP32_ARRIVAL: every node adds in arrival order and sends FP32 sums on; the result depends
  on the shape and on the order (the contrast `prism tree` reports).

Shapes: a spec string gives the fan-in per level from the root down ("2": a root with two
leaves; "2x2": a root, two inner nodes, four leaves; "4x2", "2x2x2", ...), or a nested list
(JSON) where a node is the list of its children and a leaf is the empty list:
[[[], []], []] is a root with an inner node of two leaves and one leaf.  Leaves are numbered
depth first, left to right; contributor row c goes to leaf c % L (round robin).
"""
from dataclasses import dataclass, field
from typing import List

import numpy as np

from golden.arith.kulisch import KulischAccumulator
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import FLAG_NAN, FLAG_NEG_INF, FLAG_POS_INF, MAX_CONTRIBUTORS


@dataclass
class TreeNode:
    children: List["TreeNode"] = field(default_factory=list)
    name: str = ""                  # its path from the root: "root", "root.1", "root.1.0", ...

    @property
    def is_leaf(self):
        return not self.children

    def walk(self):
        """Every node, children before their parent (the order a tree computes in)."""
        for child in self.children:
            yield from child.walk()
        yield self

    def leaves(self):
        return [n for n in self.walk() if n.is_leaf]

    def depth(self):
        return 0 if self.is_leaf else 1 + max(c.depth() for c in self.children)

    def describe(self):
        """The shape as a nested list (its JSON form)."""
        return [c.describe() for c in self.children]


def named_tree(node, name="root"):
    node.name = name
    for j, child in enumerate(node.children):
        named_tree(child, f"{name}.{j}")
    return node


def parse_shape(spec):
    """A tree from its fan-in per level, root first: "2", "2x2", "4x2", "2x2x2"."""
    text = str(spec).strip().lower()
    try:
        fan = [int(part) for part in text.split("x")]
    except ValueError:
        raise ValueError(f"shape {spec!r}: write the fan-in per level from the root down, e.g. 2, 2x2, 4x2") from None
    if any(f < 1 for f in fan):
        raise ValueError(f"shape {spec!r}: every fan-in must be at least 1")

    def level(k):
        return TreeNode([level(k + 1) for _ in range(fan[k])]) if k < len(fan) else TreeNode()
    return named_tree(level(0))


def shape_from_json(obj):
    """A tree from a nested list: a node is the list of its children, a leaf the empty list."""
    def node(x, path):
        if not isinstance(x, list):
            raise ValueError(f"shape JSON: {path} is {type(x).__name__}; a node is a list of its children "
                             "([] for a leaf)")
        return TreeNode([node(c, f"{path}[{j}]") for j, c in enumerate(x)])
    tree = node(obj, "the root")
    if tree.is_leaf:
        tree = TreeNode([TreeNode()])   # [] alone: one node, its one leaf being itself is the flat case
    return named_tree(tree)


def deal(tree, contributions):
    """{leaf name: [contributor rows]}: row c to leaf c % L, each leaf at least one."""
    leaves = tree.leaves()
    if contributions < len(leaves):
        raise ValueError(f"the tree has {len(leaves)} leaves and C = {contributions} contributions: "
                         "each leaf needs at least one")
    rows = {leaf.name: [] for leaf in leaves}
    for c in range(contributions):
        rows[leaves[c % len(leaves)].name].append(c)
    return rows


def check_tree(tree, contributions):
    """ValueError unless every node has at most MAX_CONTRIBUTORS inputs (children, or rows at
    a leaf) and every leaf at least one row."""
    for node in tree.walk():
        if len(node.children) > MAX_CONTRIBUTORS:
            raise ValueError(f"node {node.name} has {len(node.children)} children; a node takes at most "
                             f"{MAX_CONTRIBUTORS} contributors")
    for leaf, rows in deal(tree, contributions).items():
        if len(rows) > MAX_CONTRIBUTORS:
            raise ValueError(f"leaf {leaf} gets {len(rows)} contributions; a node takes at most "
                             f"{MAX_CONTRIBUTORS} (use more leaves)")


def node_formats(tree, node, policy, in_fmt, out_fmt):
    """(input format, result format) of `node`: leaves take the contributors' format, inner
    nodes their children's results; every node but the root sends EXACT partials (KULISCH)
    or FP32 sums (FP32_ARRIVAL)."""
    carried = "exact" if policy == "kulisch" else "fp32"
    node_in = in_fmt if node.is_leaf else carried
    node_out = out_fmt if node is tree else carried
    return node_in, node_out


def _identity_order(node, items):
    return list(items)


def reduce_tree(tree, data, policy, in_fmt, out_fmt, width=KULISCH_WIDTH_DEFAULT, order=None):
    """The tree's result per element, the naive way: (bits, flags, wraps, auto_formats) as
    golden.reduce returns them.  `order(node, items)` gives the arrival order of a node's inputs
    (its rows at a leaf, its children's partials otherwise; default: as listed); only
    FP32_ARRIVAL results depend on it."""
    from golden.arith.formats import fp32_to_format
    from golden.arith.fp32_arith import fp32_add, format_to_fp32
    from golden.reduce import LIMBS, out_dtype
    order = order or _identity_order
    data = np.asarray(data)
    contributions, elements = data.shape
    check_tree(tree, contributions)
    rows = deal(tree, contributions)
    partial = {}                    # node name -> per element: KulischAccumulator or FP32 bits
    for node in tree.walk():
        if node.is_leaf:
            inputs = [data[r] for r in order(node, rows[node.name])]
        else:
            inputs = [partial[c.name] for c in order(node, node.children)]
        values = []
        for e in range(elements):
            if policy == "kulisch":
                acc = KulischAccumulator(width)
                for item in inputs:
                    if node.is_leaf:
                        acc.add(in_fmt, int(item[e]))
                    else:
                        acc.add_exact(item[e].true_sum, item[e].flags)
                values.append(acc)
            else:
                s = None
                for item in inputs:
                    x = format_to_fp32(in_fmt, int(item[e])) if node.is_leaf else item[e]
                    s = x if s is None else fp32_add(s, x)
                values.append(s)
        partial[node.name] = values
    root = partial[tree.name]
    flags = np.array([a.flags if policy == "kulisch" else 0 for a in root], np.uint8)
    wraps = np.array([a.wraps if policy == "kulisch" else 0 for a in root], np.int64)
    if out_fmt == "exact":
        return np.array([a.exact_limbs() for a in root], np.uint64).reshape(elements, LIMBS), flags, wraps, None
    fp32 = [a.result("fp32") for a in root] if policy == "kulisch" else root
    if out_fmt == "auto":
        from golden.arith.auto import auto_encode
        bits, codes = auto_encode(fp32)
        return np.array(bits, np.uint32), flags, wraps, np.array(codes, np.uint8)
    if policy == "kulisch":
        return np.array([a.result(out_fmt) for a in root], out_dtype(out_fmt)), flags, wraps, None
    return np.array([fp32_to_format(out_fmt, x) for x in fp32], out_dtype(out_fmt)), flags, wraps, None


def exact_outputs(values, width):
    """(bits, flags, wraps) as golden.reduce's EXACT output from a root's EXACT values, each
    (sum, flag nibble) as a RESULT frame carries it: the W-bit state's limbs, the flags, the
    net wrap count of the W-bit register."""
    from golden.reduce import LIMBS
    limbs, flags, wraps = [], [], []
    for total, f in values:
        acc = KulischAccumulator(width)
        acc.wraps, rest = divmod(total + (1 << (width - 1)), 1 << width)    # total = state + wraps * 2^W
        acc.state = (rest - (1 << (width - 1))) & ((1 << width) - 1)
        acc.nan, acc.pos_inf, acc.neg_inf = bool(f & FLAG_NAN), bool(f & FLAG_POS_INF), bool(f & FLAG_NEG_INF)
        limbs.append(acc.exact_limbs())
        flags.append(acc.flags)
        wraps.append(acc.wraps)
    return (np.array(limbs, np.uint64).reshape(len(values), LIMBS), np.array(flags, np.uint8),
            np.array(wraps, np.int64))


