"""The pipelined FP32 adder (hdl/arith/fp32_add.py), bit-exact, on both back ends.

Reference results:
  * Berkeley TestFloat 3 f32_add level-1 RNE vectors.  Where TestFloat's
    result is a NaN (it propagates payloads) the expected result is our
    canonical 0x7FC00000; every other result is compared bit for bit.
    - MyHDL back end: all 46,464 vectors, one addition per cycle (LATENCY 4).
    - Per-cycle Icarus: a fixed sample of 2,000 vectors holding every special
      class of the file (NaN / inf / zero / subnormal operands, exact zero,
      subnormal, overflowing, inexact and exact results), with random input gaps.
  * golden.arith.fp32_arith.fp32_add on adversarial inputs: all pairs of special
    operands (signed zeros, subnormal edges, largest finite, infinities,
    quiet/signalling NaNs with payloads), near-cancellation, round-to-even
    ties and their neighbours, overflow to infinity at the largest exponent,
    subnormal sums, every exponent distance; plus a hypothesis search.
Every check also requires each result to leave exactly LATENCY cycles after
its operands, in order, with its own tag.
"""
import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from myhdl import ResetSignal, Signal, intbv

from cosim.sim import toolchain
from cosim.sim.pipeline import run_pipeline
from golden.arith.fp32_arith import fp32_add as golden_fp32_add
from golden.arith.testfloat import read_vectors
from hdl.arith.fp32_add import STAGE_REGISTERS, fp32_add
from spec.formats import NAN_FP32

TAG_WIDTH = 16
DEFAULT_LATENCY = 4


def is_nan32(bits):
    return (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF != 0


def run_adder(backend, pairs, latency=DEFAULT_LATENCY, gap_rate=0.0, seed=0):
    """Add every (a, b) of `pairs` (gaps with probability gap_rate); returns the
    results in arrival order as (result, tag, in_cycle, out_cycle)."""
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    in_valid, out_valid = Signal(bool(0)), Signal(bool(0))
    in_a, in_b, out_result = Signal(intbv(0)[32:]), Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    in_tag, out_tag = Signal(intbv(0)[TAG_WIDTH:]), Signal(intbv(0)[TAG_WIDTH:])
    dut_factory = toolchain.select(fp32_add, backend)

    def load(pair):
        in_a.next, in_b.next = pair

    def idle(rng):
        in_a.next = rng.getrandbits(32)               # ignored while not valid

    ports = (clk, rst, in_valid, in_a, in_b, in_tag, out_valid, out_result, out_tag)
    got = run_pipeline(dut_factory, ports, dict(LATENCY=latency), clk, rst, in_valid, out_valid, pairs, load,
                       lambda: int(out_result), backend, latency,
                       in_tag=in_tag, out_tag=out_tag, gap_rate=gap_rate, seed=seed, idle=idle)
    assert len(got) == len(pairs), f"{len(got)} results for {len(pairs)} additions"
    return got


def check(backend, pairs, expected, latency=DEFAULT_LATENCY, gap_rate=0.0, seed=0):
    results = run_adder(backend, pairs, latency, gap_rate, seed)
    bad = []
    for i, ((a, b), exp, (res, tag, t_in, t_out)) in enumerate(zip(pairs, expected, results)):
        if res != exp or tag != i % (1 << TAG_WIDTH) or t_out - t_in != latency:
            bad.append(f"{a:08X} + {b:08X}: got {res:08X} (tag {tag}, {t_out - t_in} cycles), expected {exp:08X}")
    assert not bad, f"{len(bad)} of {len(pairs)} wrong; first: {bad[:5]}"


# ---------------------------------------------------------------- TestFloat
def expected_from_testfloat(z):
    return NAN_FP32 if is_nan32(z) else z


# session scope: the longest-first order interleaves modules, and a module-scoped fixture
# is torn down whenever the next test comes from another module (the vectors are read once)
@pytest.fixture(scope="session")
def add_vectors():
    return read_vectors("f32_add.level1.rne")


@pytest.mark.slow      # 12 s; the default run checks the 2,000-vector sample below on both back ends
def test_testfloat_all_vectors_myhdl(add_vectors):
    """All 46,464 TestFloat f32_add vectors, one per cycle, MyHDL back end."""
    assert len(add_vectors) == 46464
    pairs = [(a, b) for a, b, _, _ in add_vectors]
    check("myhdl", pairs, [expected_from_testfloat(z) for _, _, z, _ in add_vectors])


def _classes(a, b, z, flags):
    def kind(x):
        e, f = (x >> 23) & 0xFF, x & 0x7FFFFF
        if e == 0xFF:
            return "nan" if f else "inf"
        if e == 0:
            return "sub" if f else "zero"
        return "norm"
    out = {f"a_{kind(a)}", f"b_{kind(b)}", f"z_{kind(z)}", f"z_sign{z >> 31}"}
    for bit, name in ((0x01, "inexact"), (0x02, "underflow"), (0x04, "overflow"), (0x10, "invalid")):
        if flags & bit:
            out.add(name)
    if not flags & 0x01:
        out.add("exact")
    if a & 0x7FFFFFFF == b & 0x7FFFFFFF and a != b:
        out.add("cancel")
    return out


def sample_vectors(vectors, n=2000, per_class=60, seed=2024):
    """A fixed sample holding up to `per_class` vectors of every class, filled up randomly."""
    rng = random.Random(seed)
    order = list(range(len(vectors)))
    rng.shuffle(order)
    chosen, counts = [], {}
    for i in order:
        cl = _classes(*vectors[i])
        if any(counts.get(c, 0) < per_class for c in cl):
            chosen.append(i)
            for c in cl:
                counts[c] = counts.get(c, 0) + 1
    taken = set(chosen)
    chosen += [i for i in order if i not in taken][: max(0, n - len(chosen))]
    return [vectors[i] for i in sorted(chosen[:n])], counts


def test_testfloat_sample(backend, add_vectors):
    """2,000 TestFloat vectors covering every special class, with random gaps (both back ends)."""
    sample, counts = sample_vectors(add_vectors)
    assert len(sample) == 2000
    # (an addition never underflows: a tiny sum is exact, a multiple of 2^-149)
    for cls in ("a_nan", "b_nan", "a_inf", "b_inf", "a_zero", "a_sub", "b_sub", "z_zero", "z_sub",
                "z_inf", "overflow", "invalid", "exact", "cancel"):
        assert counts.get(cls, 0) > 0, f"the vector file has no {cls} case?"
    pairs = [(a, b) for a, b, _, _ in sample]
    check(backend, pairs, [expected_from_testfloat(z) for _, _, z, _ in sample], gap_rate=0.25, seed=5)


# ---------------------------------------------------------------- adversarial vs golden
SPECIALS = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
            0x00800001, 0x3F800000, 0xBF800000, 0x3F800001, 0x33800000, 0xB3800000, 0x7F7FFFFF, 0xFF7FFFFF,
            0x7F7FFFFE, 0x7F000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF,
            0x7FA12345, 0xFFFFFFFF]


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def adversarial_pairs(rng, n_random=300, carry_family=True):
    pairs = [(a, b) for a in SPECIALS for b in SPECIALS]
    for _ in range(n_random):
        a = rng.getrandbits(32) & 0x7F7FFFFF | (rng.getrandbits(1) << 31)
        if (a >> 23) & 0xFF == 0xFF:
            continue
        # near-cancellation: -a give or take a few ulps (exact zero, one-bit results, subnormals)
        pairs.append((a, (a ^ 0x80000000) + rng.randint(-3, 3) if a & 0x7FFFFFFF > 3 else a ^ 0x80000000))
        # ties and near-ties: b around half an ulp of a, either sign
        ea = rng.randint(1, 254)
        a = (a & 0x807FFFFF) | (ea << 23)
        eb = max(0, min(254, ea - 24 + rng.randint(-2, 1)))
        mb = rng.choice((0, 1, 0x7FFFFF, 0x400000, rng.getrandbits(23)))
        pairs.append((a, (rng.getrandbits(1) << 31) | (eb << 23) | mb))
        # overflow at the largest exponents
        e = rng.randint(252, 254)
        s = rng.getrandbits(1) << 31
        pairs.append((s | (254 << 23) | rng.getrandbits(23), s | (e << 23) | rng.getrandbits(23)))
        # subnormal + subnormal / subnormal + smallest normals
        pairs.append((rng.getrandbits(1) << 31 | rng.getrandbits(23),
                      rng.getrandbits(1) << 31 | (rng.randint(0, 2) << 23) | rng.getrandbits(23)))
        # every exponent distance
        d = rng.randint(0, 30)
        eb = rng.randint(0, 254 - d)
        pairs.append((rng.getrandbits(1) << 31 | ((eb + d) << 23) | rng.getrandbits(23),
                      rng.getrandbits(1) << 31 | (eb << 23) | rng.getrandbits(23)))
        pairs.append((rng.getrandbits(32), rng.getrandbits(32)))
    # significand carry-out with a sparse smaller operand at every exponent distance: the bit
    # shifted out by the carry, and the alignment sticky, decide ties (same and opposite signs)
    for d in range(1, 28 if carry_family else 1):
        for mb in (1, 0x100001, 0x200001, 0x400001, 0x000003):
            for ma in (0x7FFFFF, 0x7FFFFE, 0x7FFFF0 | rng.getrandbits(4)):
                e = rng.randint(d + 1, 254)
                s, flip = rng.getrandbits(1) << 31, rng.getrandbits(1) << 31 if ma != 0x7FFFFF else 0
                pairs.append((s | (e << 23) | ma, (s ^ flip) | ((e - d) << 23) | mb))
    pairs += [(f32(1.0), f32(2.0 ** -24)), (f32(1.0), f32(3 * 2.0 ** -24)), (f32(-1.0), f32(-(2.0 ** -24))),
              (f32(1.0), f32(-(2.0 ** -25))), (0x7F7FFFFF, 0x73800000), (0x7F7FFFFF, 0x73000000)]
    return pairs


def test_adversarial_against_golden(backend):
    rng = random.Random(99)
    pairs = adversarial_pairs(rng, n_random=160 if backend == "icarus" else 300)
    check(backend, pairs, [golden_fp32_add(a, b) for a, b in pairs], gap_rate=0.15, seed=1)


@pytest.mark.parametrize("latency", sorted(STAGE_REGISTERS))
def test_every_latency(backend, latency):
    """Each pipeline depth, back to back and with gaps, on special and random operands."""
    rng = random.Random(latency)
    pairs = [(a, b) for a in SPECIALS[::3] for b in SPECIALS[1::3]]
    pairs += adversarial_pairs(rng, 30, carry_family=False)[len(SPECIALS) ** 2:]
    expected = [golden_fp32_add(a, b) for a, b in pairs]
    check(backend, pairs, expected, latency=latency)
    check(backend, pairs, expected, latency=latency, gap_rate=0.4, seed=latency)


_fp32 = st.one_of(
    st.integers(0, 0xFFFFFFFF),
    st.sampled_from(SPECIALS),
    st.builds(lambda s, e, m: s << 31 | e << 23 | m, st.integers(0, 1), st.sampled_from([0, 1, 2, 126, 127, 253, 254]),
              st.one_of(st.integers(0, 0x7FFFFF), st.sampled_from([0, 1, 0x400000, 0x7FFFFF]))),
)


def _related(draw_pair):
    a, b, k = draw_pair
    return (a, (a ^ 0x80000000) + k) if 4 <= a & 0x7FFFFFFF < 0x7F800000 - 4 else (a, b)


_pairs = st.lists(st.one_of(st.tuples(_fp32, _fp32),
                            st.tuples(_fp32, _fp32, st.integers(-4, 4)).map(_related)),
                  min_size=1, max_size=150)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_pairs)
def test_hypothesis_against_golden(pairs):
    """Hypothesis-generated operand lists (MyHDL back end), each list one pipelined run."""
    check("myhdl", pairs, [golden_fp32_add(a, b) for a, b in pairs])


@pytest.mark.parametrize("latency", sorted(STAGE_REGISTERS))
def test_compiles_everywhere(compiles_everywhere, latency):
    """The converted adder compiles under iverilog -g2005 and -g2012 and passes Verilator's lint,
    at every LATENCY (each puts different steps in combinational processes)."""
    compiles_everywhere(fp32_add, Signal(bool(0)), ResetSignal(0, active=1, isasync=False), Signal(bool(0)),
                        Signal(intbv(0)[32:]), Signal(intbv(0)[32:]), Signal(intbv(0)[TAG_WIDTH:]), Signal(bool(0)),
                        Signal(intbv(0)[32:]), Signal(intbv(0)[TAG_WIDTH:]), LATENCY=latency)


def test_impossible_parameters_rejected():
    def sigs(a=32, b=32, r=32, tag_in=4, tag_out=4):
        return (Signal(bool(0)), ResetSignal(0, active=1, isasync=False), Signal(bool(0)),
                Signal(intbv(0)[a:]), Signal(intbv(0)[b:]), Signal(intbv(0)[tag_in:]), Signal(bool(0)),
                Signal(intbv(0)[r:]), Signal(intbv(0)[tag_out:]))
    for bad in (0, 5, 2.5, None):
        with pytest.raises(ValueError, match="LATENCY"):
            fp32_add(*sigs(), LATENCY=bad)
    with pytest.raises(ValueError, match="in_a is 16 bits"):
        fp32_add(*sigs(a=16))
    with pytest.raises(ValueError, match="out_result"):
        fp32_add(*sigs(r=33))
    with pytest.raises(ValueError, match="in_tag"):
        fp32_add(*sigs(tag_out=8))
    args = list(sigs())
    args[1] = ResetSignal(0, active=1, isasync=True)
    with pytest.raises(ValueError, match="synchronous"):
        fp32_add(*args)
