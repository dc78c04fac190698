"""INT8 decoder: one INT8 element -> its exact FP32 image.

The FP32_ARRIVAL banks decode 64 elements per receive port and cycle, one per 32-bit lane of
a NumberGroup.  Lanes 32-63 only ever carry INT8 elements (an FP16 or BF16 beat holds 32, an
FP32 beat 16), so those lanes take this decoder instead of hdl/arith/number_decoder.py: the
same FP32 image for every INT8 value, without the FP16, BF16 and FP32 paths that no element
there could use (logic that cost LUTs and could not be observed).  Combinational, like
number_decoder.

Ports (widths come from the signals):
    data      in   the lane, right-aligned: bits [7:0] are the two's-complement element, the
                   bits above are ignored
    fp32      out  32-bit exact FP32 value of the element (every INT8 value is exact; 0 is +0)
"""
from myhdl import always_comb, block, intbv, modbv

from hdl.arith.ports import check_widths


@block
def int8_decoder(data, fp32):
    if len(data) < 8:
        raise ValueError(f"int8_decoder: data is {len(data)} bits; it must hold an INT8 element (>= 8)")
    check_widths("int8_decoder", ("fp32", fp32, 32))

    @always_comb
    def decode():
        byte = modbv(0)[8:]         # the low 8 bits of the lane (a whole-signal copy: a slice of a
                                    # slice signal would convert to a chain of indices)
        sign = bool(0)
        mag = intbv(0)[8:]          # |value| <= 128
        lead = intbv(0)[3:]
        norm = intbv(0)[24:]
        byte[:] = data
        sign = bool(byte[7])
        if sign:
            mag[:] = 256 - byte             # 0x80 -> 128
        else:
            mag[:] = byte
        lead[:] = 0
        for i in range(8):
            if mag[i]:
                lead[:] = i
        norm[:] = mag << (23 - lead)
        if mag == 0:
            fp32.next = 0
        else:
            fp32.next = (sign << 31) | ((lead + 127) << 23) | norm[23:0]

    return decode
