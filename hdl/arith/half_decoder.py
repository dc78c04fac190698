"""Half decoder: one INT8, FP16 or BF16 element -> its exact FP32 image.

The FP32_ARRIVAL banks decode 64 elements per receive port and cycle, one per 32-bit lane of
a NumberGroup.  Lanes 16-31 carry INT8, FP16 and BF16 elements but never an FP32 one (an
FP32 beat holds 16), so those lanes take this decoder instead of hdl/arith/number_decoder.py:
the same FP32 image for every INT8, FP16 and BF16 pattern, without the FP32 path that no
element there could use (logic that cost LUTs and that no stimulus could observe; lanes 32-63,
INT8 only, take hdl/arith/int8_decoder.py).  Combinational, like number_decoder.

The image is number_decoder's: exact (every INT8, FP16 and BF16 value is exact in FP32), the
sign of a zero kept, any NaN the canonical 0x7FC00000.

Ports (widths come from the signals):
    data      in   the lane, right-aligned: bits [15:0] hold an FP16 or BF16 element, bits [7:0]
                   an INT8 one; the bits above are ignored
    fmt       in   format code, 2 bits (int8 0, fp16 1, bf16 2; 3, FP32, never reaches these
                   lanes: its image is left undefined, here BF16's)
    fp32      out  32-bit exact FP32 value of the element
"""
from myhdl import always_comb, block, intbv, modbv

from hdl.arith.ports import check_widths
from spec.formats import FMT_FP16, FMT_INT8, INF_FP32, NAN_FP32


@block
def half_decoder(data, fmt, fp32):
    if len(data) < 16:
        raise ValueError(f"half_decoder: data is {len(data)} bits; it must hold an FP16 or BF16 element (>= 16)")
    check_widths("half_decoder", ("fmt (a format code)", fmt, 2), ("fp32", fp32, 32))

    @always_comb
    def decode():
        half = modbv(0)[16:]        # the low 16 bits of the lane (a whole-signal copy: a slice of
                                    # a slice signal would convert to a chain of indices)
        sign = bool(0)
        mag = intbv(0)[11:]         # what needs normalising: an INT8 magnitude (<= 128) or an
                                    # FP16 subnormal's fraction (< 2^10)
        lead = intbv(0)[4:]
        norm = intbv(0)[24:]
        half[:] = data
        mag[:] = 0
        if fmt == FMT_INT8:
            sign = bool(half[7])
            if sign:
                mag[:] = 256 - half[8:0]            # 0x80 -> 128
            else:
                mag[:] = half[8:0]
        else:
            sign = bool(half[15])
            mag[:] = half[10:0]
        lead[:] = 0
        for i in range(11):
            if mag[i]:
                lead[:] = i
        norm[:] = mag << (23 - lead)
        if fmt == FMT_INT8:
            if mag == 0:
                fp32.next = 0
            else:
                fp32.next = (sign << 31) | ((lead + 127) << 23) | norm[23:0]
        elif fmt == FMT_FP16:
            if half[15:10] == 31:
                if half[10:0] != 0:
                    fp32.next = NAN_FP32
                else:
                    fp32.next = (sign << 31) | INF_FP32
            elif half[15:10] != 0:
                fp32.next = (sign << 31) | ((half[15:10] + 112) << 23) | (half[10:0] << 13)
            elif half[10:0] != 0:       # a subnormal: value fraction * 2^-24
                fp32.next = (sign << 31) | ((lead + 103) << 23) | norm[23:0]
            else:
                fp32.next = sign << 31
        else:                           # BF16 (and FP32, which never comes here)
            if half[15:7] == 255 and half[7:0] != 0:
                fp32.next = NAN_FP32
            else:
                fp32.next = half << 16

    return decode
