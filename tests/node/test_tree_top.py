"""The wired tree (hdl/node/prism_tree.py): every node, link and multiplexer in one simulation,
the root's bits against the tree's reference and one flat reduction (`prism reduce`).  Every
co-simulated tree builds the whole design (its node module, several instances): those runs are
in the slow set; the default run checks the shape's ports and numbering (the link and the frame
multiplexer: tests/node/test_tree_link.py)."""
import subprocess
import sys

import numpy as np
import pytest

from cosim.node.tree import TreeMismatch
from cosim.node.tree_top import run_tree_top, run_tree_top_seed, tree_top_signals
from golden.node.tree import parse_shape, shape_from_json
from golden.reduce import reduce
from hdl.node.prism_tree import prism_tree, tree_nodes, tree_streams

MAX_FP32 = 0x7F7FFFFF


def hard_data(contributions, elements=48, seed=1):
    """FP32 columns a tree could get wrong: one sign at the top of the range (partials past
    W = 280, merged across levels), a huge sum cancelled to the smallest subnormal by another
    leaf, subnormals, wide magnitudes, +inf against -inf."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((contributions, elements)) * np.exp2(rng.integers(-140, 120, (contributions, elements)))
    a = x.astype(np.float32).view(np.uint32).copy()
    a[:, 0] = MAX_FP32
    a[:, 1] = np.where(np.arange(contributions) % 2, MAX_FP32 | 0x80000000, MAX_FP32)
    a[-1, 1] = 1
    a[:, 2] = rng.integers(1, 1 << 23, contributions)
    a[0, 3] = 0x7F800000
    a[-1, 3] = 0xFF800000
    return a


def flat(data, out_fmt, width):
    return reduce("kulisch", "fp32", out_fmt, data, impl="c", width=width)


@pytest.mark.slow
def test_a_wired_tree_gives_the_flat_bits_on_icarus():
    data = hard_data(5, elements=40)
    run = run_tree_top(parse_shape("2"), data, "kulisch", "fp32", "exact", 320, simulator="icarus", seed=2)
    want = flat(data, "exact", 320)
    assert np.array_equal(run.tree.bits, want.bits)
    assert np.array_equal(run.tree.flags, want.flags) and np.array_equal(run.tree.wraps, want.wraps)
    assert sorted(run.responses) == [0, 1, 2]          # every node answered, and only its STAGE and COMMIT


@pytest.mark.slow
def test_a_broken_node_fails_the_wired_tree():
    with pytest.raises(TreeMismatch):
        run_tree_top(parse_shape("2"), hard_data(4, elements=32), "kulisch", "fp32", "fp32", 320,
                     simulator="icarus", seed=1, variant="prism_node_fault", recipients=0b01)


def test_the_wired_tree_is_judged_under_kulisch_only():
    with pytest.raises(ValueError, match="KULISCH_FIXED"):
        run_tree_top(parse_shape("2"), hard_data(2), "fp32-arrival", "fp32", "fp32", simulator="icarus")


def test_shape_ports_and_numbering():
    shape = (((), ()), ())                   # a root with an inner node of two leaves, and a leaf
    assert tree_nodes(shape) == [(), (), (0, 1), (), (2, 3)]
    ins, outs = tree_streams(shape)
    assert ins == ["n0_rx0", "n0_rx1", "n1_rx0", "n1_rx1", "n2_ctl", "n3_rx0", "n3_rx1", "n4_ctl"]
    assert outs == ["n0_tx0", "n1_tx0", "n2_tx0", "n3_tx0", "n4_tx0", "n4_tx1"]
    with pytest.raises(ValueError, match="single node"):
        tree_nodes(())
    with pytest.raises(ValueError, match="at most"):
        tree_nodes(((),) * 9)
    sig = tree_top_signals(((), ()))
    sig["link_dropped"] = sig["link_dropped"].__class__(0)     # a counter port of the wrong width
    with pytest.raises(ValueError, match="link_dropped"):
        prism_tree(**sig, SHAPE=((), ()))


@pytest.mark.slow
@pytest.mark.parametrize("spec,width,out_fmt", [("2x2", 320, "auto"), ("[[[],[]],[],[[],[],[]]]", 280, "exact"),
                                                ("2x2x2", 280, "fp16")])
def test_wired_trees_on_verilator(spec, width, out_fmt):
    tree = shape_from_json(__import__("json").loads(spec)) if spec.startswith("[") else parse_shape(spec)
    data = hard_data(len(tree.leaves()) * 2 + 1, elements=100, seed=3)
    run = run_tree_top(tree, data, "kulisch", "fp32", out_fmt, width, simulator="verilator", seed=7)
    want = flat(data, out_fmt, width)
    assert np.array_equal(run.tree.bits, want.bits)
    if out_fmt == "auto":
        assert np.array_equal(run.tree.auto_formats, want.auto_formats)


@pytest.mark.slow
def test_a_wired_tree_reset_mid_operation_runs_again_to_the_flat_bits():
    data = hard_data(6, elements=64, seed=4)
    run = run_tree_top(parse_shape("2x2"), data, "kulisch", "fp32", "fp32", 320, simulator="verilator", seed=5,
                       reset=True)
    assert np.array_equal(run.tree.bits, flat(data, "fp32", 320).bits)


@pytest.mark.slow
def test_random_wired_trees_on_icarus():
    results = [run_tree_top_seed(seed, "icarus") for seed in (3,)]
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]


@pytest.mark.slow
def test_prism_tree_wired_gives_what_prism_reduce_gives(tmp_path):
    np.save(tmp_path / "in.npy", hard_data(5, elements=40).view(np.float32))
    common = ["--policy", "kulisch", "--in-format", "fp32", "--out-format", "bf16", str(tmp_path / "in.npy")]
    t = subprocess.run([sys.executable, "-m", "cosim.cli", "tree", "--shape", "2", "--wired", "--impl", "icarus",
                        *common, "-o", str(tmp_path / "tree.npy")], capture_output=True, text=True)
    f = subprocess.run([sys.executable, "-m", "cosim.cli", "reduce", *common, "-o", str(tmp_path / "flat.npy")],
                       capture_output=True, text=True)
    assert t.returncode == 0 and f.returncode == 0, t.stdout + t.stderr + f.stderr
    assert "wired" in t.stdout and "the same bits" in t.stdout
    assert (tmp_path / "tree.npy").read_bytes() == (tmp_path / "flat.npy").read_bytes()


def test_the_wired_regression_sets_apart_exactly_the_bins_it_cannot_reach():
    """Every bin set apart is one of the tree's cover points, and 300 wired draws never reach
    one of them; every other bin is reached (so a bin set apart by mistake would show)."""
    from collections import Counter
    from cosim.node.tree import TREE_POINTS
    from cosim.node.tree_top import WIRED_NOT_APPLICABLE, wired_case
    assert all(b in TREE_POINTS[p] for p, b in WIRED_NOT_APPLICABLE)
    hits = Counter()
    for seed in range(3001, 3301):
        hits.update(wired_case(seed)[-1].items())
    assert not [k for k in WIRED_NOT_APPLICABLE if hits[k]]
    assert not [(p, b) for p, bins in TREE_POINTS.items() for b in bins
                if (p, b) not in WIRED_NOT_APPLICABLE and not hits[p, b]]


@pytest.mark.slow
def test_wired_seed_3132_resets_only_once_every_node_has_committed():
    """Seed 3132 (2x2x2, W = 280, reset): its reset once fell before the root had taken its
    first attempt's STAGE and COMMIT; the root then opened the abandoned operation and NACKed the
    retry's COMMIT (BUSY), and the tree never settled.  The reset now waits for every COMMIT."""
    r = run_tree_top_seed(3132, "verilator")
    assert r.ok, r.error
