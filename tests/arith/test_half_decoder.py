"""half_decoder (lanes 16-31 of the FP32_ARRIVAL banks) on MyHDL and converted under Icarus:
every FP16 and BF16 pattern and every INT8 value (Icarus, in the slow set: 13 s), or the formats'
edges, every exponent of each with the extreme fractions and a random sample (the default run:
MyHDL and Icarus), with random bits above the element, against golden.arith.formats."""
import random

import pytest
from myhdl import Signal, intbv

from cosim.sim import toolchain
from cosim.sim.pipeline import run_per_cycle
from golden.arith.formats import format_to_fp32
from hdl.arith.half_decoder import half_decoder

FORMATS = {"int8": (0, 8), "fp16": (1, 16), "bf16": (2, 16)}


def _exponent_edges(name, bits):
    """Every exponent field of the format with fraction 0, 1 and all ones, both signs."""
    if name == "int8":
        return set(range(1 << bits))
    mbits = 10 if name == "fp16" else 7
    out = set()
    for e in range(1 << (bits - 1 - mbits)):
        for frac in (0, 1, (1 << mbits) - 1):
            for sign in (0, 1 << (bits - 1)):
                out.add(sign | e << mbits | frac)
    return out


def _cases(exhaustive):
    rng = random.Random(16)
    cases = []
    for name, (code, bits) in FORMATS.items():
        patterns = list(range(1 << bits))
        if not exhaustive:
            top = (1 << bits) - 1
            patterns = sorted(({0, 1, top, top >> 1, 1 << (bits - 1), 0x7C00, 0x7C01, 0xFC00, 0x7F80, 0x7F81,
                                0x03FF, 0x0400, 0x8001} & set(patterns)) | _exponent_edges(name, bits)) \
                + rng.sample(patterns, min(300, len(patterns)))
        for p in patterns:
            cases.append((name, code, p | (rng.getrandbits(32 - bits) << bits)))
    return cases


@pytest.mark.parametrize("backend,exhaustive", [("myhdl", False), ("icarus", False),
                                                pytest.param("icarus", True, marks=pytest.mark.slow)])
def test_every_int8_fp16_and_bf16_pattern_decodes_to_its_exact_fp32(backend, exhaustive):
    cases = _cases(exhaustive)
    clk = Signal(bool(0))
    data, fmt, fp32 = Signal(intbv(0)[32:]), Signal(intbv(0)[2:]), Signal(intbv(0)[32:])

    def load(case):
        _, code, bits = case
        data.next = bits
        fmt.next = code

    out = run_per_cycle(toolchain.select(half_decoder, backend), (data, fmt, fp32), clk, cases, load,
                        lambda: int(fp32), backend)
    want = [format_to_fp32(name, bits & ((1 << FORMATS[name][1]) - 1)) for name, _, bits in cases]
    bad = [(name, hex(bits), hex(w), hex(g)) for (name, _, bits), w, g in zip(cases, want, out) if w != g]
    assert not bad, bad[:5]


def test_a_lane_narrower_than_a_half_is_refused():
    with pytest.raises(ValueError, match="FP16 or BF16 element"):
        half_decoder(Signal(intbv(0)[15:]), Signal(intbv(0)[2:]), Signal(intbv(0)[32:]))
