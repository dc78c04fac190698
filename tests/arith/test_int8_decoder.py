"""int8_decoder (lanes 32-63 of the FP32_ARRIVAL banks) on MyHDL and converted under Icarus:
every INT8 value, with random bits above the byte, against golden.arith.formats."""
import random

import pytest
from myhdl import Signal, intbv

from cosim.sim import toolchain
from cosim.sim.pipeline import run_per_cycle
from golden.arith.formats import format_to_fp32
from hdl.arith.int8_decoder import int8_decoder


@pytest.mark.parametrize("backend", ["myhdl", "icarus"])
def test_every_int8_value_decodes_to_its_exact_fp32(backend):
    rng = random.Random(8)
    lanes = [v | (rng.getrandbits(24) << 8) for v in range(256)] + [0x80, 0x7F, 0xFFFFFF00, 0xFFFFFFFF]
    clk = Signal(bool(0))
    data, fp32 = Signal(intbv(0)[32:]), Signal(intbv(0)[32:])

    def load(bits):
        data.next = bits

    out = run_per_cycle(toolchain.select(int8_decoder, backend), (data, fp32), clk, lanes, load, lambda: int(fp32),
                        backend)
    assert out == [format_to_fp32("int8", bits & 0xFF) for bits in lanes]


def test_a_lane_narrower_than_a_byte_is_refused():
    with pytest.raises(ValueError, match="INT8 element"):
        int8_decoder(Signal(intbv(0)[7:]), Signal(intbv(0)[32:]))
