"""number_decoder on both back ends against golden.arith.formats, the TestFloat
f16->f32 / bf16->f32 vectors, and adversarial patterns of every format."""
import gzip
import os

from golden.arith import testfloat
import random

import pytest
from myhdl import Signal, intbv

from cosim.sim import toolchain
from cosim.sim.pipeline import run_per_cycle
from golden.arith.formats import FORMAT_CODE, WIDTH_BITS, format_to_fp32, to_kulisch_term
from hdl.arith.number_decoder import number_decoder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = testfloat.testfloat_dir()          # the vectors that ship in tests/data/testfloat


@pytest.fixture(params=["myhdl", "icarus"])
def backend(request):
    """The decoder is combinational (no clock for a per-edge recording to follow): the test runs
    on MyHDL and on the per-cycle Icarus co-simulation."""
    return request.param


def run_decoder(backend, vectors, width=320):
    """Apply (fmt, bits) one per cycle; return [(term, nan, pos_inf, neg_inf, fp32)]."""
    clk = Signal(bool(0))
    data, fmt = Signal(intbv(0)[32:]), Signal(intbv(0)[2:])
    term, fp32 = Signal(intbv(0)[width:]), Signal(intbv(0)[32:])
    nan, pinf, ninf = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))

    def load(vector):
        f, bits = vector
        data.next = bits
        fmt.next = FORMAT_CODE[f]

    out = run_per_cycle(toolchain.select(number_decoder, backend), (data, fmt, term, nan, pinf, ninf, fp32), clk,
                        vectors, load, lambda: (int(term), bool(nan), bool(pinf), bool(ninf), int(fp32)), backend)
    assert len(out) == len(vectors)
    return out


def expected(fmt, bits, width):
    t, n, p, m = to_kulisch_term(fmt, bits)
    return (t & ((1 << width) - 1), n, p, m, format_to_fp32(fmt, bits))


def adversarial(fmt):
    """Zeros, extremes, subnormal boundaries and specials of a format."""
    if fmt == "int8":
        return list(range(256))
    n = WIDTH_BITS[fmt]
    mbits = {"fp16": 10, "bf16": 7, "fp32": 23}[fmt]
    sign = 1 << (n - 1)
    exp_all = ((1 << (n - 1 - mbits)) - 1) << mbits
    base = [0, 1, 2, (1 << mbits) - 1, 1 << mbits, (1 << mbits) + 1, exp_all - 1, exp_all, exp_all + 1,
            exp_all | (1 << (mbits - 1)), exp_all | ((1 << mbits) - 1), 1 << (mbits - 1)]
    return base + [b | sign for b in base]


def load_testfloat(name):
    path = os.path.join(VECTORS, name)
    with gzip.open(path, "rt") as fh:
        return [tuple(int(x, 16) for x in line.split()[:2]) for line in fh if line.strip()]


@pytest.mark.parametrize("width", [320, 280])
def test_decoder_adversarial_and_random_every_format(backend, width):
    rng = random.Random(width)
    vectors = []
    for f in ("int8", "fp16", "bf16", "fp32"):
        vectors += [(f, b) for b in adversarial(f)]
        vectors += [(f, rng.getrandbits(WIDTH_BITS[f])) for _ in range(60 if backend == "icarus" else 400)]
    rng.shuffle(vectors)   # format changes every cycle: the select is a run-time input
    got = run_decoder(backend, vectors, width)
    for (f, b), g in zip(vectors, got):
        assert g == expected(f, b, width), (f, hex(b))


@pytest.mark.parametrize("name,fmt", [("f16_to_f32.level1.rne.txt.gz", "fp16"),
                                      ("bf16_to_f32.level1.rne.txt.gz", "bf16")])
def test_decoder_matches_testfloat_widening(backend, name, fmt):
    """A decoded FP16/BF16 element equals the decode of TestFloat's FP32 result:
    same Kulisch term and flags, and the same FP32 image (NaN: canonical)."""
    rows = load_testfloat(name)
    got = run_decoder(backend, [(fmt, a) for a, _ in rows])
    for (a, z), (term, n, p, m, w) in zip(rows, got):
        assert (term, n, p, m) == expected("fp32", z, 320)[:4], hex(a)
        z_nan = (z >> 23) & 0xFF == 0xFF and z & 0x7FFFFF
        assert w == (0x7FC00000 if z_nan else z), hex(a)


def test_decoder_rejects_narrow_term():
    s = [Signal(intbv(0)[32:]), Signal(intbv(0)[2:]), Signal(intbv(0)[200:]),
         Signal(bool(0)), Signal(bool(0)), Signal(bool(0)), Signal(intbv(0)[32:])]
    with pytest.raises(ValueError, match="at least 278"):
        number_decoder(*s)
