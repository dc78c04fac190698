"""auto_classifier on both back ends against golden.arith.auto.auto_format: tiles built
to sit on every class boundary (integers, FP16/BF16-exact values, subnormals,
signed zeros, NaNs, infinities), partial tiles, random backpressure."""
import random
import struct

import pytest

from cosim.arith import slice_reduce
from golden.arith.auto import auto_format
from golden.arith.formats import FORMAT_CODE


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def element(rng, kind):
    s = rng.getrandbits(1) << 31
    if kind == "int8":
        return f32(float(rng.randint(-128, 127)))
    if kind == "fp16":   # a random FP16 value, widened exactly (normal or subnormal)
        e = rng.randint(0, 30)
        m = rng.getrandbits(10)
        v = (m * 2.0 ** -24) if e == 0 else ((1024 + m) * 2.0 ** (e - 25))
        return f32(v) | s
    if kind == "bf16":
        return (rng.getrandbits(16) << 16) & ~(0xFF << 23) | (rng.randint(0, 254) << 23)
    if kind == "edge":
        return rng.choice([0, 0x80000000, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800000, 0xFF800000,
                           0x7F800001, 0x43000000, 0xC3000000, 0x42FE0000, 0x3F800000, 0x00000001,
                           0x00010000, 0x33800000, 0x33C00000, 0x387FC000, 0x38800000, 0x477FE000,
                           0x47800000, 0x477FF000, 0x3F000000, 0x33000000])
    return rng.getrandbits(32)


def make_tiles(rng, n):
    tiles = []
    for _ in range(n):
        kinds = rng.sample(["int8", "fp16", "bf16", "edge", "rand"], rng.randint(1, 2))
        weights = [0.9 if k != "rand" else 0.05 for k in kinds]
        tile = [element(rng, rng.choices(kinds, weights)[0]) for _ in range(16)]
        keep = (1 << 16) - 1 if rng.random() < 0.7 else (1 << rng.randint(1, 15)) - 1
        tiles.append((tile, keep))
    return tiles


def run_classifier(backend, tiles, src_pause=0.3, sink_pause=0.3, seed=0):
    return slice_reduce.run_classifier(backend, tiles, src_pause, sink_pause, seed)


def test_classifier_matches_golden(backend):
    rng = random.Random(5)
    tiles = make_tiles(rng, 150 if backend == "icarus" else 1200)
    out = run_classifier(backend, tiles)
    assert len(out) == len(tiles)
    codes = set()
    for (tile, keep), (data, okeep, code) in zip(tiles, out):
        assert data == sum(v << (32 * k) for k, v in enumerate(tile)) and okeep == keep
        valid = [v for k, v in enumerate(tile) if keep >> k & 1]
        assert code == FORMAT_CODE[auto_format(valid)], [hex(v) for v in valid]
        codes.add(code)
    assert codes == {0, 1, 2, 3}


@pytest.mark.parametrize("value,fmt", [(0x80000000, "fp16"), (0x7FC00000, "fp16"), (0xFFC00000, "fp32"),
                                       (0xC3000000, "int8"), (0x43000000, "fp16"), (0x33800000, "fp16"),
                                       (0x33000000, "bf16"), (0x00010000, "bf16"), (0x7F800000, "fp16")])
def test_classifier_single_element_boundaries(value, fmt):
    """Hand-picked boundaries, checked against both the golden model and the stated rule."""
    assert auto_format([value]) == fmt
    out = run_classifier("myhdl", [([value] + [0] * 15, 1)], 0.0, 0.0)
    assert out[0][2] == FORMAT_CODE[fmt]


def sweep_elements():
    """Every sign and biased exponent, with fractions whose lowest set bit sits on each position
    the rules look at (FP16's 13 dropped bits and its subnormal shifts, BF16's 16, INT8's point),
    plus the canonical NaN: one element per tile, in lane k % 16 alone in the mask, the other
    lanes holding values that fit no narrow format."""
    values = [(s << 31) | (e << 23) | f for s in (0, 1) for e in range(256)
              for f in [0] + [1 << j for j in (0, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22)]]
    values.append(0x7FC00000)
    tiles = []
    for k, v in enumerate(values):
        tile = [0x7FC00001] * 16
        tile[k % 16] = v
        tiles.append((tile, 1 << (k % 16)))
    return values, tiles


def test_classifier_every_exponent_and_fraction_boundary():
    values, tiles = sweep_elements()
    out = run_classifier("myhdl", tiles, 0.0, 0.0)
    assert len(out) == len(tiles)
    wrong = [hex(v) for v, (_, _, code) in zip(values, out) if code != FORMAT_CODE[auto_format([v])]]
    assert not wrong, wrong[:20]


def test_classifier_compiles_everywhere(compiles_everywhere):
    from myhdl import ResetSignal, Signal, intbv

    from hdl.arith.auto_classifier import auto_classifier

    def sig(w=None):
        return Signal(bool(0)) if w is None else Signal(intbv(0)[w:])
    compiles_everywhere(auto_classifier, sig(), ResetSignal(0, active=1, isasync=False), sig(512), sig(16), sig(),
                        sig(), sig(512), sig(16), sig(2), sig(), sig())
