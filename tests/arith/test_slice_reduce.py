"""reduce_through_hardware (the slice + rounder + AUTO classifier on a simulator)
equals golden.reduce.reduce(impl="python") bit for bit, on both back ends, and
`prism reduce --impl myhdl|icarus` writes the same files as `--impl python`."""
import zlib

import numpy as np
import pytest

from cosim.cli import main as prism
from cosim.arith.slice_reduce import reduce_through_hardware
from golden.reduce import reduce

DTYPE = {"int8": np.uint8, "fp16": np.uint16, "bf16": np.uint16, "fp32": np.uint32}
BITS = {"int8": 8, "fp16": 16, "bf16": 16, "fp32": 32}

# Every (policy, input format) once per back end in the default run, the result
# formats rotated over them so each appears; the full product is a slow test.
DEFAULT = [("kulisch", "int8", "exact"), ("kulisch", "fp16", "auto"), ("kulisch", "bf16", "fp16"),
           ("kulisch", "fp32", "int8"), ("fp32-arrival", "int8", "fp32"), ("fp32-arrival", "fp16", "bf16"),
           ("fp32-arrival", "bf16", "auto"), ("fp32-arrival", "fp32", "fp16")]
FULL = [(p, i, o) for p in ("kulisch", "fp32-arrival") for i in DTYPE
        for o in ("exact", "fp32", "bf16", "fp16", "int8", "auto") if not (p == "fp32-arrival" and o == "exact")]


def make_data(in_fmt, c, e, seed):
    """Random patterns with a share of extremes, specials, and cancelling pairs."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 1 << BITS[in_fmt], size=(c, e), dtype=np.uint64)
    if in_fmt != "int8":
        sign = 1 << (BITS[in_fmt] - 1)
        top = {"fp16": 0x7BFF, "bf16": 0x7F7F, "fp32": 0x7F7FFFFF}[in_fmt]
        data[0, ::5] = top                                   # huge: overflow / cancellation material
        data[1 % c, ::5] = top | sign
        data[:, 3::11] &= (1 << {"fp16": 10, "bf16": 7, "fp32": 23}[in_fmt]) - 1   # subnormals
    data[:, 7] = data[0, 7]                                  # a column of equal values
    return data.astype(DTYPE[in_fmt])


@pytest.mark.parametrize("policy,in_fmt,out_fmt", DEFAULT)
def test_hardware_reduce_matches_golden(backend, policy, in_fmt, out_fmt):
    data = make_data(in_fmt, 3, 40, seed=zlib.crc32(f"{policy}{in_fmt}{out_fmt}".encode()))
    order = "interleaved" if in_fmt in ("fp16", "fp32") else "sequential"
    hw = reduce_through_hardware(policy, in_fmt, out_fmt, data, 320, backend, order)
    ref = reduce(policy, in_fmt, out_fmt, data, impl="python")
    assert hw.same_as(ref), (hw.bits, ref.bits)


def test_hardware_reduce_280_bit_overflow_exact(backend):
    """A 280-bit register overflows on a column of the largest FP32 values: the exact
    export (state mod 2^W, overflow flag, wraps) and the rounded +inf agree with golden."""
    data = np.full((12, 20), 0x7F7FFFFF, dtype=np.uint32)
    data[:, 10:] = 0xFF7FFFFF
    data[::3, 5] = 0x00000001
    for out_fmt in ("exact", "bf16"):
        hw = reduce_through_hardware("kulisch", "fp32", out_fmt, data, 280, backend)
        ref = reduce("kulisch", "fp32", out_fmt, data, impl="python", width=280)
        assert hw.same_as(ref)
        assert np.all(ref.flags & 8)


@pytest.mark.slow
@pytest.mark.parametrize("policy,in_fmt,out_fmt", FULL)
def test_hardware_reduce_full_matrix(backend, policy, in_fmt, out_fmt):
    data = make_data(in_fmt, 4, 70, seed=5)
    for order in ("sequential", "interleaved"):
        hw = reduce_through_hardware(policy, in_fmt, out_fmt, data, 320, backend, order)
        assert hw.same_as(reduce(policy, in_fmt, out_fmt, data, impl="python"))


@pytest.mark.parametrize("policy,in_fmt,out_fmt", [("kulisch", "bf16", "exact"), ("fp32-arrival", "int8", "auto")])
def test_cli_hardware_impl_matches_python(tmp_path, capsys, backend, policy, in_fmt, out_fmt):
    data = make_data(in_fmt, 2, 33, seed=9)
    src = tmp_path / "in.npy"
    np.save(src, data)
    outs = {}
    for impl in ("python", backend):
        out = tmp_path / f"{impl}.npy"
        rc = prism(["reduce", "--policy", policy, "--in-format", in_fmt, "--out-format", out_fmt,
                    "--impl", impl, str(src), "-o", str(out)])
        assert rc == 0
        outs[impl] = sorted(p.name.split(".", 1)[1] for p in tmp_path.glob(f"{impl}.*"))
        for suffix in outs[impl]:
            got = np.load(tmp_path / f"{impl}.{suffix}")
            if impl != "python":
                want = np.load(tmp_path / f"python.{suffix}")
                assert got.dtype == want.dtype and np.array_equal(got, want), suffix
    assert outs["python"] == outs[backend]


def test_bad_arguments_are_rejected_before_simulating():
    data = np.zeros((2, 4), np.uint16)
    with pytest.raises(ValueError, match="exact"):
        reduce_through_hardware("fp32-arrival", "fp16", "exact", data)
    with pytest.raises(ValueError, match="order"):
        reduce_through_hardware("kulisch", "fp16", "fp32", data, order="random")
    with pytest.raises(ValueError, match="8-bit int8"):
        reduce_through_hardware("kulisch", "int8", "fp32", np.full((2, 4), 300, np.uint16))
    with pytest.raises(ValueError, match="back end"):
        reduce_through_hardware("kulisch", "fp16", "fp32", data, backend="verilator")
