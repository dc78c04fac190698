"""The Kulisch rounder (hdl/arith/kulisch_round.py) against the golden model, on both back ends.

Every expected result comes from golden.arith.kulisch.KulischAccumulator.result()
(itself golden.arith.formats.round_exact of the true sum, specials first): the
accumulator is loaded with the W-bit state, the net wrap count implied by the
overflow flag and its sign, and the three special flags.  Exact pass-through
is checked against the accumulator's state and flags.

Stimulus, per width (320 and 280), each value sent in all five format codes:
ties at every float rounding position (and one unit of 2^-149 either side),
values just below / at / above each format's largest finite value and its
rounding threshold to infinity, the subnormal and zero-underflow boundaries,
INT8 ties and saturation edges, the register's extremes, negative values,
zero, random values of random magnitude, and all 32 flag combinations.
Inputs arrive with random gaps (in_valid low), and the results must leave in
order, exactly LATENCY cycles after their input.

The MyHDL back end runs the full set; per-cycle Icarus co-simulation runs the
adversarial set for W=320 and a smaller random sample (it costs ~0.6 ms a cycle).
TestFloat's f32_to_f16 / f32_to_bf16 / i32_to_f32 vectors are replayed with the
operand as a single Kulisch term; the expected result is the vector's, except
that a NaN is our format's canonical NaN and -0.0 (an exact zero sum) gives +0.
"""
import random
from fractions import Fraction

import pytest
from myhdl import ResetSignal, Signal, intbv

from cosim.sim import toolchain
from cosim.sim.pipeline import run_pipeline
from golden.arith import formats, kulisch
from golden.arith.testfloat import read_vectors
from hdl.arith.kulisch_round import STAGE_REGISTERS, kulisch_round
from spec.formats import FMT_EXACT, INPUT_FORMAT_CODES, KULISCH_LSB_EXP

FORMAT_CODES = {**INPUT_FORMAT_CODES, "exact": FMT_EXACT}
RESERVED_CODES = {"reserved5": 5, "reserved6": 6, "reserved7": 7}     # documented to act as exact
SCALE = 1 << -KULISCH_LSB_EXP          # Kulisch units per 1.0
TAG_WIDTH = 12


class Item:
    """One rounder input: a signed value in Kulisch units and the flags."""
    __slots__ = ("value", "nan", "pos_inf", "neg_inf", "overflow", "wrap_negative", "fmt")

    def __init__(self, value, fmt, nan=False, pos_inf=False, neg_inf=False, overflow=False, wrap_negative=False):
        self.value, self.fmt = value, fmt
        self.nan, self.pos_inf, self.neg_inf = nan, pos_inf, neg_inf
        self.overflow, self.wrap_negative = overflow, wrap_negative

    def __repr__(self):
        return (f"Item(value={self.value}, fmt={self.fmt!r}, nan={self.nan}, pos_inf={self.pos_inf}, "
                f"neg_inf={self.neg_inf}, overflow={self.overflow}, wrap_negative={self.wrap_negative})")


def golden_expect(item, width):
    """(out_bits, out_value, out_flags) the golden accumulator gives for `item`."""
    acc = kulisch.KulischAccumulator(width)
    acc.state = item.value & ((1 << width) - 1)
    acc.wraps = (-1 if item.wrap_negative else 1) if item.overflow else 0
    acc.nan, acc.pos_inf, acc.neg_inf = item.nan, item.pos_inf, item.neg_inf
    bits = acc.result(item.fmt) if item.fmt in formats.FORMATS else 0
    return bits, acc.state, acc.flags


def run_rounder(backend, items, width=320, latency=3, gap_rate=0.0, seed=0):
    """Drive `items` (gaps with probability gap_rate); return [(bits, value, flags, tag, in_cycle, out_cycle)]."""
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    in_valid, out_valid = Signal(bool(0)), Signal(bool(0))
    in_value, out_value = Signal(intbv(0)[width:]), Signal(intbv(0)[width:])
    flag_in = [Signal(bool(0)) for _ in range(5)]
    in_format = Signal(intbv(0)[3:])
    in_tag, out_tag = Signal(intbv(0)[TAG_WIDTH:]), Signal(intbv(0)[TAG_WIDTH:])
    out_bits, out_flags = Signal(intbv(0)[32:]), Signal(intbv(0)[4:])
    mask = (1 << width) - 1
    dut_factory = toolchain.select(kulisch_round, backend)

    def load(it):
        in_value.next = it.value & mask
        for s, v in zip(flag_in, (it.nan, it.pos_inf, it.neg_inf, it.overflow, it.wrap_negative)):
            s.next = bool(v)
        in_format.next = {**FORMAT_CODES, **RESERVED_CODES}[it.fmt]

    def idle(rng):
        in_value.next = rng.getrandbits(width)   # ignored data while not valid

    ports = (clk, rst, in_valid, in_value, *flag_in, in_format, in_tag, out_valid, out_bits, out_value,
             out_flags, out_tag)
    got = run_pipeline(dut_factory, ports, dict(LATENCY=latency), clk, rst, in_valid, out_valid, items, load,
                       lambda: (int(out_bits), int(out_value), int(out_flags)), backend, latency,
                       in_tag=in_tag, out_tag=out_tag, gap_rate=gap_rate, seed=seed, idle=idle)
    return [(b, v, f, t, s, c) for (b, v, f), t, s, c in got], len(got)


def check(backend, items, width=320, latency=3, gap_rate=0.0, seed=0):
    results, n_out = run_rounder(backend, items, width, latency, gap_rate, seed)
    assert n_out == len(items), f"{n_out} results for {len(items)} inputs"
    bad = []
    for i, (item, (bits, value, flags, tag, in_cycle, out_cycle)) in enumerate(zip(items, results)):
        exp = golden_expect(item, width)
        if (bits, value, flags) != exp or tag != i % (1 << TAG_WIDTH) or out_cycle - in_cycle != latency:
            bad.append((item, (hex(bits), value, flags, tag, out_cycle - in_cycle), (hex(exp[0]),) + exp[1:]))
    assert not bad, f"{len(bad)} of {len(items)} wrong, first: {bad[:3]}"


# ---------------------------------------------------------------- stimulus
FLOATS = {f: formats.float_params(f) for f in ("fp16", "bf16", "fp32")}


def _units(x):
    """Kulisch units of an exact value (must be a multiple of 2^-149)."""
    t = Fraction(x) * SCALE
    assert t.denominator == 1
    return int(t)


def adversarial_values(width, rng):
    """{format: sorted values aimed at that format's rounding}; "any" for register edges."""
    top = 1 << (width - 1)
    out = {"any": {0, 1, -1, 2, -2, 3, top - 1, -top, -top + 1, top // 2, -(top // 2)}}
    for fmt, (_, mbits, _, emin, emax) in FLOATS.items():
        vals = out.setdefault(fmt, set())
        p = mbits + 1
        # ties and their neighbours at every rounding position reachable in the
        # register: even significand (ties down), all-ones (ties up, carrying
        # into the next binade), and a random one
        for e in range(emin - 1, emax + 2):
            half = e - mbits - 1                 # weight of half an ulp at exponent e
            if half < -149:
                continue
            for sig in ((1 << mbits), (1 << p) - 1, rng.randrange(1 << mbits, 1 << p)):
                tie = _units(Fraction(2 * sig + 1) * Fraction(2) ** half)
                for d in (0, 1, -1):
                    vals.update((tie + d, -(tie + d)))
        # largest finite value, the tie above it (rounds to inf), the next binade
        fmax = ((1 << p) - 1) * Fraction(2) ** (emax - mbits)
        ulp = Fraction(2) ** (emax - mbits)
        for x in (fmax, fmax + ulp / 2, 2 * Fraction(2) ** emax):
            u = _units(x)
            for d in (-1, 0, 1):
                vals.update((u + d, -(u + d)))
        # subnormal / underflow boundaries
        tiny = Fraction(2) ** (emin - mbits)
        for x in (tiny, tiny / 2, 3 * tiny / 2, Fraction(2) ** emin, Fraction(2) ** emin - tiny / 2):
            if (x * SCALE).denominator == 1:
                u = _units(x)
                for d in (-1, 0, 1):
                    vals.update((u + d, -(u + d)))
    # INT8: ties, quarter points, saturation edges
    vals = out.setdefault("int8", set())
    for k in range(-130, 131):
        for frac in (Fraction(0), Fraction(1, 2), Fraction(1, 4)):
            u = _units(k + frac)
            vals.update((u, u + 1, u - 1))
    for k in (255, 256, 257, 511, 512, 1 << 40):
        vals.update((_units(k), -_units(k), _units(k) - 1, -_units(k) + 1))
    return {f: sorted(v for v in vals if -top <= v < top) for f, vals in out.items()}


def adversarial_items(width, rng, cross_formats=False):
    """Each adversarial value in the format it aims at, plus (cross_formats) all others;
    register edges in every format; a random 10% also as exact pass-through."""
    items = []
    for target, values in adversarial_values(width, rng).items():
        for v in values:
            if cross_formats or target == "any":
                items.extend(Item(v, fmt) for fmt in FORMAT_CODES)
            else:
                items.append(Item(v, target))
                if rng.random() < 0.1:
                    items.append(Item(v, "exact"))
    return items


def random_values(width, rng, n):
    """Random signed values with a random bit length (all magnitudes equally likely)."""
    out = []
    for _ in range(n):
        bits = rng.randint(1, width - 1)
        v = rng.getrandbits(bits) | (1 << (bits - 1))
        out.append(-v if rng.random() < 0.5 else v)
    return out


def flag_items(width, rng):
    items = []
    for combo in range(32):
        nan, pinf, ninf, ovf, wneg = ((combo >> k) & 1 == 1 for k in range(5))
        v = random_values(width, rng, 1)[0]
        for fmt in FORMAT_CODES:
            items.append(Item(v, fmt, nan, pinf, ninf, ovf, wneg))
    return items


def all_formats(values):
    return [Item(v, fmt) for v in values for fmt in FORMAT_CODES]


# ---------------------------------------------------------------- tests
@pytest.mark.parametrize("width", [320, 280])
def test_adversarial_values(backend, width):
    rng = random.Random(width)
    items = adversarial_items(width, rng)
    if backend == "icarus":
        items = rng.sample(items, 1500)
    items += flag_items(width, rng)
    rng.shuffle(items)
    check(backend, items, width=width, gap_rate=0.2, seed=width)


@pytest.mark.slow
@pytest.mark.parametrize("width", [320, 280])
def test_adversarial_values_every_format_slow(width):
    """Every adversarial value in all five format codes (about 80k roundings per width, MyHDL)."""
    rng = random.Random(width)
    items = adversarial_items(width, rng, cross_formats=True)
    rng.shuffle(items)
    check("myhdl", items, width=width, gap_rate=0.1, seed=width)


def sticky_walk_items(rng):
    """Per float format, at one random exponent: an exact tie with an even
    significand (which rounds down) plus one sticky bit at each position below
    the guard bit (which must round up), both signs."""
    items = []
    for fmt, (_, mbits, _, emin, emax) in FLOATS.items():
        e = rng.randrange(emin, emax + 1)
        half_units = _units(Fraction(2) ** (e - mbits - 1))
        sig = rng.randrange(1 << mbits, 1 << (mbits + 1)) & ~1
        tie = (2 * sig + 1) * half_units
        for k in range(half_units.bit_length() - 1):
            items += [Item(tie + (1 << k), fmt), Item(-(tie + (1 << k)), fmt)]
        items += [Item(tie, fmt), Item(-tie, fmt)]
    return items


def test_sticky_bit_at_every_position(backend):
    rng = random.Random(31)
    items = sticky_walk_items(rng)
    check(backend, items, width=320, gap_rate=0.1, seed=4)


@pytest.mark.parametrize("width", [320, 280])
def test_random_values_all_formats(backend, width):
    rng = random.Random(1000 + width)
    n = 300 if backend == "icarus" else 2000
    items = [Item(v, rng.choice(list(FORMAT_CODES))) for v in random_values(width, rng, n)]
    check(backend, items, width=width, gap_rate=0.3, seed=7)


@pytest.mark.parametrize("latency", sorted(STAGE_REGISTERS))
def test_every_latency_back_to_back(backend, latency):
    rng = random.Random(latency)
    values = random_values(320, rng, 120) + [0, -1, 1]
    items = all_formats(values) + [Item(v, f) for v in values[:20] for f in RESERVED_CODES]
    check(backend, items, width=320, latency=latency)


def _conversion_items(name, src_fmt, dst_fmt):
    items, expected = [], []
    for operand, result, _flags in read_vectors(name):
        if src_fmt == "i32":
            term, nan, pinf, ninf = (operand - (1 << 32) if operand >> 31 else operand) * SCALE, False, False, False
        else:
            term, nan, pinf, ninf = formats.to_kulisch_term(src_fmt, operand)
        items.append(Item(term, dst_fmt, nan, pinf, ninf))
        if formats.is_nan(dst_fmt, result):
            result = formats.canonical_nan(dst_fmt)
        elif term == 0 and not (nan or pinf or ninf):
            result = 0          # -0.0 is an exact zero: the Kulisch result is +0
        expected.append(result)
    return items, expected


@pytest.mark.parametrize("name,src,dst", [("f32_to_f16.level1.rne", "fp32", "fp16"),
                                          ("f32_to_bf16.level1.rne", "fp32", "bf16"),
                                          ("i32_to_f32.level1.rne", "i32", "fp32")])
def test_testfloat_conversions(backend, name, src, dst):
    items, expected = _conversion_items(name, src, dst)
    results, n_out = run_rounder(backend, items, width=320, gap_rate=0.1, seed=3)
    assert n_out == len(items)
    got = [r[0] for r in results]
    bad = [(hex(it.value), hex(g), hex(e)) for it, g, e in zip(items, got, expected) if g != e]
    assert not bad, f"{len(bad)} of {len(items)} differ from TestFloat: {bad[:5]}"
    # the golden model agrees with the same vectors (so the two checks are one definition)
    assert [golden_expect(it, 320)[0] for it in items] == expected


def test_impossible_parameters_rejected():
    def sigs(width=320, fmt_bits=3, tag_in=4, tag_out=4, out_bits=32):
        b = [Signal(bool(0)) for _ in range(7)]
        return (b[0], ResetSignal(0, active=1, isasync=False), b[1], Signal(intbv(0)[width:]), b[2], b[3], b[4],
                b[5], b[6], Signal(intbv(0)[fmt_bits:]), Signal(intbv(0)[tag_in:]), Signal(bool(0)),
                Signal(intbv(0)[out_bits:]), Signal(intbv(0)[width:]), Signal(intbv(0)[4:]),
                Signal(intbv(0)[tag_out:]))
    with pytest.raises(ValueError, match="LATENCY"):
        kulisch_round(*sigs(), LATENCY=4)
    with pytest.raises(ValueError, match="Kulisch width"):
        kulisch_round(*sigs(width=200))
    with pytest.raises(ValueError, match="in_format"):
        kulisch_round(*sigs(fmt_bits=2))
    with pytest.raises(ValueError, match="in_tag"):
        kulisch_round(*sigs(tag_out=5))
    with pytest.raises(ValueError, match="out_bits"):
        kulisch_round(*sigs(out_bits=16))
    args = list(sigs())
    args[1] = ResetSignal(0, active=1, isasync=True)
    with pytest.raises(ValueError, match="synchronous"):
        kulisch_round(*args)
