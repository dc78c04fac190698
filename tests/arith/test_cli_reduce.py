"""`prism reduce`: python / numba / c give bit-identical files for every
policy x input format x output format; bad input is a one-line error, exit 2."""
import subprocess
import sys

import numpy as np
import pytest

from cosim.cli import main
from golden.arith.kulisch import kulisch_sum, limbs_to_signed

UINT = {"int8": np.uint8, "fp16": np.uint16, "bf16": np.uint16, "fp32": np.uint32}
SPECIALS = {"int8": [0x80, 0x7F], "fp16": [0x7C00, 0xFC00, 0x7E00, 0x8000, 0x0001, 0x7BFF],
            "bf16": [0x7F80, 0xFF80, 0x7FC0, 0x8000, 0x0001, 0x7F7F],
            "fp32": [0x7F800000, 0xFF800000, 0x7FC00000, 0x80000000, 0x00000001, 0x7F7FFFFF]}


def make_input(tmp_path, fmt, rows=5, cols=40, seed=0):
    rng = np.random.default_rng(seed)
    bits = 8 if fmt == "int8" else 16 if fmt in ("fp16", "bf16") else 32
    a = rng.integers(0, 2 ** bits, (rows, cols)).astype(UINT[fmt])
    a[0, :len(SPECIALS[fmt])] = SPECIALS[fmt]
    a[:, -3:] = a[0, -3:] & UINT[fmt](0x0F)                 # small, AUTO-friendly tile tail
    path = tmp_path / f"in_{fmt}.npy"
    np.save(path, a)
    return path, a


def run_cli(*argv):
    return main([str(x) for x in argv])


@pytest.mark.parametrize("in_fmt", ["int8", "fp16", "bf16", "fp32"])
def test_impls_bit_identical_every_combination(tmp_path, in_fmt, capsys):
    path, arr = make_input(tmp_path, in_fmt)
    for policy in ("kulisch", "fp32-arrival"):
        for out_fmt in ("exact", "fp32", "bf16", "fp16", "int8", "auto"):
            if policy == "fp32-arrival" and out_fmt == "exact":
                continue
            outputs = {}
            for impl in ("python", "numba", "c"):
                out = tmp_path / f"{policy}_{out_fmt}_{impl}.npy"
                assert run_cli("reduce", "--policy", policy, "--in-format", in_fmt, "--out-format", out_fmt,
                               "--impl", impl, "--width", 280, path, "-o", out) == 0
                files = {"bits": np.load(out)}
                for tag in ("flags", "wraps", "formats"):
                    side = tmp_path / f"{policy}_{out_fmt}_{impl}.{tag}.npy"
                    if side.exists():
                        files[tag] = np.load(side)
                outputs[impl] = files
            ref = outputs["python"]
            assert ("flags" in ref) == (policy == "kulisch")
            assert ("formats" in ref) == (out_fmt == "auto")
            assert ("wraps" in ref) == (out_fmt == "exact")
            for impl in ("numba", "c"):
                assert outputs[impl].keys() == ref.keys()
                for k in ref:
                    assert ref[k].dtype == outputs[impl][k].dtype and np.array_equal(ref[k], outputs[impl][k]), (impl, k)
            lines = [l for l in capsys.readouterr().out.splitlines() if l.startswith("reduce ")]
            assert len(lines) == 3 and len({l.split("sha256=")[1].split()[0] for l in lines}) == 1
            # The exact export decodes to the reference accumulator's state.
            if out_fmt == "exact":
                bits = ref["bits"]
                assert bits.dtype == np.uint64 and bits.shape == (arr.shape[1], 5)
                for e in (0, 7, arr.shape[1] - 1):
                    acc = kulisch_sum(in_fmt, arr[:, e].tolist(), 280)
                    assert limbs_to_signed(bits[e].tolist(), 280) == acc.signed_state


def test_native_dtypes_are_reinterpreted(tmp_path):
    x = np.array([[1.5, -2.0], [0.25, 3.0]], np.float16)
    np.save(tmp_path / "h.npy", x)
    np.save(tmp_path / "u.npy", x.view(np.uint16))
    assert run_cli("reduce", "--policy", "kulisch", "--in-format", "fp16", "--out-format", "fp16",
                   "--impl", "c", tmp_path / "h.npy", "-o", tmp_path / "h_out") == 0
    assert run_cli("reduce", "--policy", "kulisch", "--in-format", "fp16", "--out-format", "fp16",
                   "--impl", "c", tmp_path / "u.npy", "-o", tmp_path / "u_out.npy") == 0
    a, b = np.load(tmp_path / "h_out.npy"), np.load(tmp_path / "u_out.npy")
    assert a.dtype == np.uint16 and np.array_equal(a, b)
    assert a.view(np.float16).tolist() == [1.75, 1.0]


def _bad(tmp_path, capsys, *argv):
    rc = run_cli("reduce", *argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("prism reduce: error:"), err
    return err[0]


def test_bad_input_one_line_exit_2(tmp_path, capsys):
    good, _ = make_input(tmp_path, "fp32", cols=8)
    common = ["--policy", "kulisch", "--in-format", "fp32", "--out-format", "fp32"]
    np.save(tmp_path / "f64.npy", np.zeros((2, 2)))
    assert "must be uint32" in _bad(tmp_path, capsys, *common, tmp_path / "f64.npy", "-o", tmp_path / "o.npy")
    np.save(tmp_path / "vec.npy", np.zeros(4, np.uint32))
    assert "2-d" in _bad(tmp_path, capsys, *common, tmp_path / "vec.npy", "-o", tmp_path / "o.npy")
    np.save(tmp_path / "cube.npy", np.zeros((2, 2, 2), np.uint32))
    assert "2-d" in _bad(tmp_path, capsys, *common, tmp_path / "cube.npy", "-o", tmp_path / "o.npy")
    (tmp_path / "junk.npy").write_bytes(b"not a numpy file")
    assert "cannot read" in _bad(tmp_path, capsys, *common, tmp_path / "junk.npy", "-o", tmp_path / "o.npy")
    assert "no such file" in _bad(tmp_path, capsys, *common, tmp_path / "missing.npy", "-o", tmp_path / "o.npy")
    np.save(tmp_path / "obj.npy", np.array([[1, "a"]], object), allow_pickle=True)
    assert "cannot read" in _bad(tmp_path, capsys, *common, tmp_path / "obj.npy", "-o", tmp_path / "o.npy")
    assert "needs --policy kulisch" in _bad(tmp_path, capsys, "--policy", "fp32-arrival", "--in-format", "fp32",
                                             "--out-format", "exact", good, "-o", tmp_path / "o.npy")
    np.save(tmp_path / "f16.npy", np.zeros((2, 2), np.float16))
    assert "bf16 input must be uint16" in _bad(tmp_path, capsys, "--policy", "kulisch", "--in-format", "bf16",
                                               "--out-format", "fp32", tmp_path / "f16.npy", "-o", tmp_path / "o.npy")
    np.save(tmp_path / "wide.npy", np.zeros((2, 4097), np.uint32))
    for impl in ("myhdl", "icarus"):
        assert "4096" in _bad(tmp_path, capsys, *common, "--impl", impl, tmp_path / "wide.npy", "-o", tmp_path / "o.npy")
    np.save(tmp_path / "norows.npy", np.zeros((0, 3), np.uint32))
    assert "at least one" in _bad(tmp_path, capsys, "--policy", "fp32-arrival", "--in-format", "fp32",
                                  "--out-format", "fp32", tmp_path / "norows.npy", "-o", tmp_path / "o.npy")
    (tmp_path / "file").write_text("")
    assert "cannot write" in _bad(tmp_path, capsys, *common, good, "-o", tmp_path / "file" / "o.npy")
    # The golden models accept a wide E (no store limit).
    assert run_cli("reduce", *common, "--impl", "c", tmp_path / "wide.npy", "-o", tmp_path / "w.npy") == 0


def test_unknown_format_is_rejected_by_the_parser():
    r = subprocess.run([sys.executable, "-c", "import sys; from cosim.cli import main; sys.exit(main())", "reduce", "--policy", "kulisch", "--in-format", "fp8",
                        "--out-format", "fp32", "x.npy", "-o", "y.npy"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "invalid choice: 'fp8'" in r.stderr
