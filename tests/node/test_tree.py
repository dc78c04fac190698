"""The reduction tree (issue 35): shapes, the naive tree reference against one flat reduction,
co-simulated trees of nodes on Icarus and Verilator with hostile links and nodes, `prism tree`."""
import json
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from cosim.node.tree import TREE_POINTS, TreeMismatch, random_tree_case, run_tree, run_tree_seed
from golden.node.tree import check_tree, deal, parse_shape, reduce_tree, shape_from_json
from golden.reduce import reduce

SHAPES = ["1", "2", "3", "2x2", "4x2", "2x2x2", "8", "[[[],[]],[],[[[],[]],[]]]", "[[[[]]],[]]"]
MAX_FP32 = 0x7F7FFFFF


def shape(spec):
    return shape_from_json(json.loads(spec)) if spec.startswith("[") else parse_shape(spec)


def hard_data(contributions, elements=48, seed=1):
    """FP32 columns on the edges a tree could get wrong: the largest values of one sign (partials
    past W = 280 at a leaf, merged across levels), a huge sum cancelled to its last bits by other
    leaves, subnormals, mixed magnitudes and specials."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((contributions, elements)) * np.exp2(rng.integers(-140, 120, (contributions, elements))))
    a = x.astype(np.float32).view(np.uint32).copy()
    a[:, 0] = MAX_FP32                                        # one sign: overflows W = 280 past 5 terms
    a[:, 1] = np.where(np.arange(contributions) % 2, MAX_FP32 | 0x80000000, MAX_FP32)   # cancels across leaves
    a[-1, 1] = 1                                              # ... to the smallest subnormal
    a[:, 2] = rng.integers(1, 1 << 23, contributions)         # subnormals
    a[0, 3] = 0x7F800000                                      # +inf in one leaf, -inf in another: NaN
    a[-1, 3] = 0xFF800000
    a[1 % contributions, 4] = 0x7FC00001                      # a NaN with a payload
    return a


def test_shapes_from_specs_and_json():
    assert shape("2x2").describe() == [[[], []], [[], []]]
    assert shape("3").describe() == [[], [], []]
    assert shape("[[[],[]],[]]").describe() == [[[], []], []]
    assert len(shape("4x2").leaves()) == 8 and shape("2x2x2").depth() == 3
    assert deal(shape("2"), 5) == {"root.0": [0, 2, 4], "root.1": [1, 3]}
    for bad in ("0", "2x", "two", "2x-1"):
        with pytest.raises(ValueError):
            parse_shape(bad)
    with pytest.raises(ValueError, match="a node is a list"):
        shape_from_json([[], 3])
    with pytest.raises(ValueError, match="at least one"):
        deal(shape("4"), 3)
    with pytest.raises(ValueError, match="at most 8"):
        check_tree(shape("9"), 9)
    with pytest.raises(ValueError, match="use more leaves"):
        check_tree(shape("2"), 17)


@pytest.mark.parametrize("spec", SHAPES)
@pytest.mark.parametrize("width", [320, 280])
def test_the_tree_reference_gives_the_flat_bits(spec, width):
    """Every output format, against the flat naive reference (golden.reduce, impl python)."""
    tree = shape(spec)
    a = hard_data(min(8 * len(tree.leaves()), len(tree.leaves()) + 5))
    for out in ("exact", "fp32", "bf16", "fp16", "int8", "auto"):
        got = reduce_tree(tree, a, "kulisch", "fp32", out, width)
        flat = reduce("kulisch", "fp32", out, a, impl="python", width=width)
        assert np.array_equal(got[0], flat.bits) and np.array_equal(got[1], flat.flags), (out, spec)
        assert np.array_equal(got[2], flat.wraps), (out, spec)
        if out == "auto":
            assert np.array_equal(got[3], flat.auto_formats)


def test_overflow_across_levels_keeps_the_true_sum():
    """At W = 280 every leaf of 6 largest FP32 values overflows its register; the root's exact
    sum is still the true one (the EXACT beat carries it whole) and the flat one."""
    tree = shape("2x2")
    a = np.full((24, 16), MAX_FP32, np.uint32)
    got = reduce_tree(tree, a, "kulisch", "fp32", "exact", 280)
    flat = reduce("kulisch", "fp32", "exact", a, impl="python", width=280)
    assert np.array_equal(got[2], flat.wraps) and np.all(flat.wraps > 1)     # several wraps of 2^280


def test_fp32_arrival_moves_with_the_order_kulisch_does_not():
    import random
    tree = shape("4")
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((8, 200)) * np.exp2(rng.integers(-30, 30, (8, 200)))).astype(np.float32).view(np.uint32)
    answers = {"kulisch": set(), "fp32-arrival": set()}
    for k in range(6):
        r = random.Random(k)
        for policy in answers:
            bits = reduce_tree(tree, a, policy, "fp32", "fp32", order=lambda n, items: r.sample(list(items), len(items)))[0]
            answers[policy].add(bits.tobytes())
    assert len(answers["kulisch"]) == 1 and len(answers["fp32-arrival"]) > 1


# both in the slow set (a per-cycle Icarus node of each width, 20-40 s): the default run's trees run
# on Verilator (the W = 280 node is in the slow set)
@pytest.mark.parametrize("spec,width,out", [pytest.param("2", 280, "exact", marks=pytest.mark.slow),
                                             pytest.param("[[[],[]],[]]", 320, "fp32", marks=pytest.mark.slow)])
def test_a_tree_of_icarus_nodes_gives_the_flat_bits(spec, width, out):
    tree = shape(spec)
    a = hard_data(len(tree.leaves()) * 3, elements=40)
    run = run_tree(tree, a, "kulisch", "fp32", out, width, impl="icarus", seed=2)
    flat = reduce("kulisch", "fp32", out, a, impl="c", width=width)
    assert np.array_equal(run.bits, flat.bits)
    if out == "exact":
        assert np.array_equal(run.flags, flat.flags) and np.array_equal(run.wraps, flat.wraps)
    assert all(n.cycles > 0 for n in run.nodes.values()) and run.critical_cycles > 0


def test_a_verilator_tree_survives_an_abort_and_a_reset():
    """A 2x2 tree whose inner node's operation is ABORTed after its first DATA frame and whose
    leaf is reset in the middle of its DATA: both run again, the root's bits are the flat ones."""
    tree = shape("2x2")
    a = hard_data(12, elements=100, seed=5)
    events = {"root.0": "abort", "root.1.1": "reset"}
    # W = 320: the default run builds the node for Verilator at one width
    run = run_tree(tree, a, "kulisch", "fp16", "auto", 320, impl="verilator", seed=4, events=events)
    flat = reduce("kulisch", "fp16", "auto", a.astype(np.uint16), impl="c", width=320)
    assert np.array_equal(run.bits, flat.bits) and np.array_equal(run.auto_formats, flat.auto_formats)
    assert run.nodes["root.0"].attempts == 2 and run.nodes["root.1.1"].attempts == 2


def test_a_broken_node_fails_the_tree():
    tree = shape("2")
    a = hard_data(4, elements=32)
    with pytest.raises(TreeMismatch, match="node root"):
        run_tree(tree, a, "kulisch", "fp32", "fp32", 320, impl="icarus", seed=1, variant="prism_node_fault")


def test_hostile_events_name_a_node_and_an_event():
    with pytest.raises(ValueError, match="name a node"):
        run_tree(shape("2"), hard_data(2), "kulisch", "fp32", "fp32", impl="icarus", events={"root.7": "abort"})
    with pytest.raises(ValueError, match="name a node"):
        run_tree(shape("2"), hard_data(2), "kulisch", "fp32", "fp32", impl="icarus", events={"root.0": "crash"})


def test_random_trees_reach_every_bin():
    hits = Counter()
    for seed in range(1, 301):
        for point, b in random_tree_case(seed).bins.items():
            hits[point, b] += 1
    missing = [(p, b) for p, bins in TREE_POINTS.items() for b in bins if not hits[p, b]]
    assert not missing


# seed 3: W = 320 (the default run's one Verilator width); 10: 17 nodes with a reset, at W = 280
@pytest.mark.parametrize("seed", [3, pytest.param(10, marks=pytest.mark.slow)])
def test_random_tree_seeds_pass_on_verilator(seed):
    r = run_tree_seed(seed, "verilator")
    assert r.ok, r.error
    assert r.nodes >= 3


def prism(*args):
    return subprocess.run([sys.executable, "-m", "cosim.cli", *args], capture_output=True, text=True)


def test_prism_tree_writes_what_prism_reduce_writes(tmp_path):
    a = hard_data(9, elements=64).view(np.float32)
    np.save(tmp_path / "in.npy", a)
    for out in ("exact", "bf16"):
        t = prism("tree", "--shape", "3x1", "--policy", "kulisch", "--in-format", "fp32", "--out-format", out,
                  "--width", "280", str(tmp_path / "in.npy"), "-o", str(tmp_path / f"tree_{out}.npy"))
        f = prism("reduce", "--policy", "kulisch", "--in-format", "fp32", "--out-format", out, "--width", "280",
                  str(tmp_path / "in.npy"), "-o", str(tmp_path / f"flat_{out}.npy"))
        assert t.returncode == 0 and f.returncode == 0, t.stderr + f.stderr
        for tag in ("", ".flags") + ((".wraps",) if out == "exact" else ()):
            assert (tmp_path / f"tree_{out}{tag}.npy").read_bytes() == (tmp_path / f"flat_{out}{tag}.npy").read_bytes()


def test_prism_tree_report(tmp_path):
    np.save(tmp_path / "in.npy", hard_data(16, elements=32).view(np.float32))
    r = prism("tree", "--shape", "2x2", "--policy", "fp32-arrival", "--in-format", "fp32", "--out-format", "fp32",
              str(tmp_path / "in.npy"), "-o", str(tmp_path / "out.npy"), "--report", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "rep" / "tree_report.md").read_text()
    rows = json.loads((tmp_path / "rep" / "tree_report.json").read_text())
    done = [row for row in rows if "skipped" not in row]
    assert done and all(row["kulisch_same"] and row["exact_same"] for row in done)
    assert "| `2x2` |" in text and (tmp_path / "rep" / "tree_spread.png").stat().st_size > 0


@pytest.mark.parametrize("argv,message", [
    (["--shape", "2x0"], "fan-in must be at least 1"),
    (["--shape-json", "[[],"], "--shape-json is not JSON"),
    (["--shape-json", "[[], 5]"], "a node is a list"),
    (["--shape", "8"], "each leaf needs at least one"),
    (["--shape", "2", "--policy-fp32"], None),
    (["--shape", "2", "--wired"], "--wired co-simulates the wired tree"),
    (["--shape", "2", "--wired", "--impl", "icarus", "--policy", "fp32-arrival"], "--wired judges KULISCH_FIXED"),
])
def test_prism_tree_bad_arguments(tmp_path, argv, message):
    np.save(tmp_path / "in.npy", np.zeros((4, 16), np.float32))
    base = ["tree", "--policy", "kulisch", "--in-format", "fp32", "--out-format", "fp32", str(tmp_path / "in.npy"),
            "-o", str(tmp_path / "out.npy")]
    r = prism(*base, *argv)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    if message:
        assert message in r.stderr


def test_prism_tree_rejects_exact_under_fp32_arrival(tmp_path):
    np.save(tmp_path / "in.npy", np.zeros((4, 16), np.float32))
    r = prism("tree", "--shape", "2", "--policy", "fp32-arrival", "--in-format", "fp32", "--out-format", "exact",
              str(tmp_path / "in.npy"), "-o", str(tmp_path / "out.npy"))
    assert r.returncode == 2 and "needs --policy kulisch" in r.stderr
