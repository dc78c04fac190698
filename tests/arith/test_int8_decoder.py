"""int8_decoder (lanes 32-63 of the FP32_ARRIVAL banks) on MyHDL and converted under Icarus:
every INT8 value, with random bits above the byte, against golden.arith.formats."""
import random

import pytest
from myhdl import Signal, block, instance, intbv

from cosim.sim import toolchain
from cosim.sim.tbutil import clock_gen
from golden.arith.formats import format_to_fp32
from hdl.arith.int8_decoder import int8_decoder


@pytest.mark.parametrize("backend", ["myhdl", "icarus"])
def test_every_int8_value_decodes_to_its_exact_fp32(backend):
    rng = random.Random(8)
    lanes = [v | (rng.getrandbits(24) << 8) for v in range(256)] + [0x80, 0x7F, 0xFFFFFF00, 0xFFFFFFFF]
    clk = Signal(bool(0))
    data, fp32 = Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    out = []
    dut_factory = toolchain.select(int8_decoder, backend)

    @block
    def bench():
        dut = dut_factory(data, fp32)

        @instance
        def drive():
            for bits in lanes:
                yield clk.negedge
                data.next = bits
                yield clk.posedge
                out.append(int(fp32))
        return dut, clock_gen(clk), drive

    toolchain.run(bench(), duration=10 * (len(lanes) + 2), backend=backend)
    assert out == [format_to_fp32("int8", bits & 0xFF) for bits in lanes]


def test_a_lane_narrower_than_a_byte_is_refused():
    with pytest.raises(ValueError, match="INT8 element"):
        int8_decoder(Signal(intbv(0)[7:]), Signal(intbv(0)[32:]))
