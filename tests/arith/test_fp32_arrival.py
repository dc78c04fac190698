"""FP32_ARRIVAL: IEEE binary32 adds in admission order (pure-Python reference,
numba and C), canonical NaN."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from golden.arith.fp32_arith import fp32_add, fp32_arrival_fold
from golden.arith.formats import is_nan
from spec.formats import NAN_FP32


def np_add(a, b):
    x = np.array([a, b], np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        r = int((x[:1] + x[1:]).view(np.uint32)[0])
    return NAN_FP32 if is_nan("fp32", r) else r


def test_signed_zero_and_nan_rules():
    assert fp32_add(0x80000000, 0x80000000) == 0x80000000       # (-0) + (-0) = -0
    assert fp32_add(0x80000000, 0x00000000) == 0x00000000
    assert fp32_add(0x3F800000, 0xBF800000) == 0x00000000       # x + (-x) = +0
    assert fp32_add(0x7F800000, 0xFF800000) == NAN_FP32
    assert fp32_add(0xFFC00001, 0x3F800000) == NAN_FP32
    assert fp32_add(0x7F7FFFFF, 0x73000000) == 0x7F800000       # FLT_MAX + half ulp: tie, odd -> up -> inf
    assert fp32_add(0x7F7FFFFF, 0x72FFFFFF) == 0x7F7FFFFF       # just below the tie
    assert fp32_add(0x00000001, 0x00000001) == 0x00000002       # subnormals kept, no FTZ
    assert fp32_add(0x00800000, 0x80000001) == 0x007FFFFF       # normal - subnormal -> subnormal


def test_fold_is_in_admission_order():
    # 2^24 + 1 + 1: left to right each +1 is lost (tie to even); other order keeps 2.
    big, one = 0x4B800000, 0x3F800000
    assert fp32_arrival_fold("fp32", [big, one, one]) == big
    assert fp32_arrival_fold("fp32", [one, one, big]) == 0x4B800001
    assert fp32_arrival_fold("fp16", [0x3C00, 0x3C00], "fp16") == 0x4000
    assert fp32_arrival_fold("int8", [0x7F, 0x7F], "int8") == 0x7F          # 254 saturates
    assert fp32_arrival_fold("bf16", [0xFFC1], "bf16") == 0x7FC0
    assert fp32_arrival_fold("fp32", [0x80000000], "fp32") == 0x80000000    # single -0 stays -0
    assert fp32_arrival_fold("fp32", []) is None


@settings(max_examples=1000, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 2 ** 32 - 1))
def test_reference_add_matches_hardware_float32(a, b):
    assert fp32_add(a, b) == np_add(a, b)


def _compiled_adders():
    from golden.arith import kulisch_c as ck
    from golden.arith import fp32_numba as fn

    def c_add(a, b):      # the C fold over two rows is exactly one add per column
        return ck.fp32_arrival_reduce("fp32", np.stack([a, b]))

    return {"numba": fn.fp32_add, "c": c_add}


def _check_vectors(vecs, impls):
    a = np.array([v[0] for v in vecs], np.uint32)
    b = np.array([v[1] for v in vecs], np.uint32)
    z = np.array([v[2] for v in vecs], np.uint32)
    znan = ((z & 0x7F800000) == 0x7F800000) & ((z & 0x7FFFFF) != 0)
    for name, add in impls.items():
        r = np.asarray(add(a, b), np.uint32)
        assert np.array_equal(r[~znan], z[~znan]), name
        assert np.all(r[znan] == NAN_FP32), name


def test_compiled_adds_match_testfloat_level1():
    from golden.arith.testfloat import read_vectors
    vecs = read_vectors("f32_add.level1.rne")
    _check_vectors(vecs, _compiled_adders())
    from golden.arith import kulisch_c as ck
    for a, b, z, _ in vecs[:3000]:                  # the scalar C entry point too
        assert ck.fp32_add(a, b) == (NAN_FP32 if is_nan("fp32", z) else z)


@pytest.mark.slow
def test_compiled_adds_match_testfloat_level2_prefix():
    from golden.arith.testfloat import read_vectors
    _check_vectors(read_vectors("f32_add.level2.first2000000.rne"), _compiled_adders())


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["int8", "fp16", "bf16", "fp32"]), st.integers(1, 12), st.integers(1, 20), st.data())
def test_fold_three_impls(in_fmt, rows, cols, data):
    from golden.arith import kulisch_c as ck
    from golden.arith import fp32_numba as fn
    from golden.arith.formats import WIDTH_BITS
    dt = {8: np.uint8, 16: np.uint16, 32: np.uint32}[WIDTH_BITS[in_fmt]]
    specials = {"int8": [0x80, 0x7F], "fp16": [0x7C00, 0xFC00, 0x7E01, 0x8000, 0x0001, 0x7BFF],
                "bf16": [0x7F80, 0xFF80, 0x7FC1, 0x8000, 0x0001, 0x7F7F],
                "fp32": [0x7F800000, 0xFF800000, 0x7FC00001, 0x80000000, 0x00000001, 0x7F7FFFFF]}[in_fmt]
    el = st.one_of(st.integers(0, 2 ** WIDTH_BITS[in_fmt] - 1), st.sampled_from(specials))
    arr = np.array(data.draw(st.lists(el, min_size=rows * cols, max_size=rows * cols)), dt).reshape(rows, cols)
    want = [fp32_arrival_fold(in_fmt, arr[:, c].tolist()) for c in range(cols)]
    assert fn.fp32_arrival_reduce(in_fmt, arr).tolist() == want
    assert ck.fp32_arrival_reduce(in_fmt, arr).tolist() == want
    for out in ("fp16", "bf16", "int8"):
        from golden.arith.formats import fp32_to_format
        w = [fp32_to_format(out, x) for x in want]
        assert fn.fp32_to_format(out, want).tolist() == w
        assert ck.fp32_to_format(out, want).tolist() == w


def test_numba_float32_add_is_binary32_not_double():
    # 1 + 2^-24 + 2^-24: in binary32 each add ties to even and is lost; a
    # double accumulator would keep 2^-23.  Also checks no FTZ on subnormals.
    from golden.arith import fp32_numba as fn
    one, half_ulp = 0x3F800000, 0x33800000
    arr = np.array([[one, 0x00000001], [half_ulp, 0x00000001], [half_ulp, 0x80000000]], np.uint32)
    assert fn.fp32_arrival_reduce("fp32", arr).tolist() == [one, 0x00000002]
