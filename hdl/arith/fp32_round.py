"""FP32 value -> RESULT format (INT8 / FP16 / BF16 / FP32), one per cycle, pipelined.

The FP32_ARRIVAL path ends in an FP32 sum; a narrower RESULT format (and the
AUTO re-encoding of a rounded tile) needs that value rounded once more.  The
value is decoded exactly (hdl/arith/number_decoder.py: its Kulisch term and specials
flags) and rounded by the Kulisch rounder (hdl/arith/kulisch_round.py), so the FP32
and Kulisch paths share one rounding unit design.  Rules (golden fp32_to_format):
round to nearest, ties to even; floats overflow to +-inf, subnormals kept;
INT8 rounds to the nearest-even integer and saturates; NaN -> the format's
canonical NaN (INT8 0x80); the sign of a zero is kept for the float formats
(the Kulisch term of -0.0 is 0, so the rounder alone would give +0; the sign
travels beside it in the rounder's tag and is put back at the output).

Latency: LATENCY cycles (the rounder's; the decoder is combinational).

Parameters:
    LATENCY   kulisch_round latency, 1..3

Ports (widths come from the signals):
    clk, rst      clock; synchronous active-high reset (ResetSignal)
    in_valid      a value is presented (always accepted, no backpressure)
    in_bits       32-bit FP32 pattern
    in_format     3-bit result format code: int8 0, fp16 1, bf16 2, fp32 3
    in_tag        caller's side-band value (any width >= 1)
    out_valid     out: in_valid delayed by LATENCY
    out_bits      out: the rounded pattern, right-aligned in 32 bits
    out_tag       out: in_tag of that value
"""
from myhdl import Signal, always_comb, block, intbv

from hdl.arith.kulisch_round import kulisch_round
from hdl.arith.number_decoder import number_decoder
from spec.formats import KULISCH_WIDTHS

TERM_WIDTH = min(KULISCH_WIDTHS)   # 280: the narrowest rounder build, enough for any FP32 term (KULISCH_MIN_WIDTH)


@block
def fp32_round(clk, rst, in_valid, in_bits, in_format, in_tag, out_valid, out_bits, out_tag, LATENCY=3):
    if len(in_bits) != 32 or len(out_bits) != 32:
        raise ValueError("fp32_round: in_bits and out_bits must be 32 bits")
    if len(in_format) != 3:
        raise ValueError(f"fp32_round: in_format is {len(in_format)} bits; it must be 3")
    if len(in_tag) != len(out_tag) or len(in_tag) < 1:
        raise ValueError("fp32_round: in_tag and out_tag must have the same width, at least 1")
    tw = len(in_tag)
    TAG_W = tw + 4                  # negative zero | format (3) | caller's tag

    fmt2 = Signal(intbv(0)[2:])
    term = Signal(intbv(0)[TERM_WIDTH:])
    nan, pinf, ninf = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    round_fp32_image = Signal(intbv(0)[32:])
    r_tag_in = Signal(intbv(0)[TAG_W:])
    r_tag_out = Signal(intbv(0)[TAG_W:])
    r_bits = Signal(intbv(0)[32:])
    r_value = Signal(intbv(0)[TERM_WIDTH:])
    r_flags = Signal(intbv(0)[4:])
    no = Signal(bool(0))

    decoder = number_decoder(in_bits, fmt2, term, nan, pinf, ninf, round_fp32_image)
    rounder = kulisch_round(clk, rst, in_valid, term, nan, pinf, ninf, no, no, in_format, r_tag_in,
                            out_valid, r_bits, r_value, r_flags, r_tag_out, LATENCY=LATENCY)

    @always_comb
    def inputs():
        fmt2.next = 3                                    # the input is always FP32
        t = intbv(0)[TAG_W:]
        t[:] = in_tag
        t[tw + 3:tw] = in_format
        t[tw + 3] = in_bits == 0x80000000
        r_tag_in.next = t

    @always_comb
    def outputs():
        b = intbv(0)[32:]
        b[:] = r_bits
        if r_tag_out[tw + 3] and r_bits == 0:
            if r_tag_out[tw + 3:tw] == 3:
                b[:] = 0x80000000
            elif r_tag_out[tw + 3:tw] != 0:
                b[:] = 0x8000                            # FP16 and BF16 -0
        out_bits.next = b
        out_tag.next = r_tag_out[tw:0]

    return decoder, rounder, inputs, outputs
