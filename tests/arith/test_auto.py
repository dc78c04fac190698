"""golden.arith.auto: the lossless AUTO result-format classifier."""
import numpy as np
from hypothesis import given, settings, strategies as st

from golden.arith.auto import TILE, auto_encode, auto_format, auto_tiles
from golden.arith.formats import FORMAT_CODE

ONE, NEG_ZERO, NAN, INF = 0x3F800000, 0x80000000, 0x7FC00000, 0x7F800000


def f32(x):
    return int(np.array([x], np.float32).view(np.uint32)[0])


def test_preference_order():
    assert auto_format([0, ONE, f32(-128.0), f32(127.0)]) == "int8"
    assert auto_format([f32(128.0)]) == "fp16"               # out of INT8 range
    assert auto_format([f32(0.5)]) == "fp16"                 # not an integer
    assert auto_format([NEG_ZERO]) == "fp16"                 # -0 does not fit INT8
    assert auto_format([NAN, INF, ONE]) == "fp16"            # specials fit FP16
    assert auto_format([f32(65504.0)]) == "fp16"
    assert auto_format([f32(65536.0)]) == "bf16"             # beyond FP16, 1 significant bit
    assert auto_format([f32(2.0 ** -24)]) == "fp16"          # FP16 subnormal
    assert auto_format([f32(2.0 ** -25)]) == "bf16"
    assert auto_format([f32(1 + 2.0 ** -10)]) == "fp16"
    assert auto_format([f32(1 + 2.0 ** -11)]) == "fp32"      # needs 12 significant bits, beyond bf16 too
    assert auto_format([f32(3.0e38)]) == "fp32"
    assert auto_format([0x7FC00001]) == "fp32"               # a non-canonical NaN cannot round-trip
    assert auto_format([]) == "int8"


def test_tiles_are_16_elements_and_partial_tail():
    v = [ONE] * 16 + [f32(0.5)] * 16 + [f32(1e30)] + [ONE] * 3
    assert auto_tiles(v) == ["int8", "fp16", "fp32"]
    bits, codes = auto_encode(v)
    assert codes == [FORMAT_CODE["int8"], FORMAT_CODE["fp16"], FORMAT_CODE["fp32"]]
    assert bits[:16] == [1] * 16 and bits[16] == 0x3800 and bits[32] == f32(1e30) and bits[33] == ONE
    assert TILE == 16


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2 ** 32 - 1), min_size=1, max_size=16))
def test_choice_is_lossless_and_narrowest(tile):
    fmt = auto_format(tile)
    # Independent lossless check through numpy for FP16 (numpy is not the reference).
    f = np.array(tile, np.uint32).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        fp16_ok = bool(np.all(f.astype(np.float16).astype(np.float32).view(np.uint32) == np.array(tile, np.uint32)))
    if fmt in ("int8",):
        assert all(float(x).is_integer() and -128 <= x <= 127 for x in f) and NEG_ZERO not in tile
    if fmt == "fp16" or fmt == "int8":
        assert fp16_ok or any(np.isnan(f))
    if fp16_ok and not any(np.isnan(f)) and fmt not in ("int8", "fp16"):
        raise AssertionError(f"fp16 fits but {fmt} chosen")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 2 ** 32 - 1),
                          st.sampled_from([0, NEG_ZERO, NAN, INF, 0xFF800000, ONE, 0x42FE0000, 0x43000000,
                                           0x477FE000, 0x47800000, 0x33800000, 0x3F801000, 0x3F802000])),
                min_size=0, max_size=50))
def test_numba_and_c_classifiers_match_reference(v):
    from golden.arith import kulisch_c as ck
    from golden.arith import fp32_numba as fn
    bits, codes = auto_encode(v)
    for impl in (fn, ck):
        c, b = impl.auto_classify(np.array(v, np.uint32))
        assert c.tolist() == codes and b.tolist() == bits
