"""AUTO result-format classifier: a rounded FP32 tile -> the narrowest lossless format.

A tile is one 16-element range of the rounded FP32 result (lane i of the tile
is element 16r + i).  The chosen format is the narrowest of
INT8 (0) < FP16 (1) < BF16 (2) < FP32 (3) in which every valid element's FP32
pattern round-trips (FP32 -> format -> FP32 gives the same bits); FP16 is
preferred when both FP16 and BF16 fit (it comes first).  Per element:

    INT8  +0.0 or an integer value in [-128, 127] (so -0.0, NaN, inf do not fit)
    FP16  +/-0, +/-inf, the canonical NaN 0x7FC00000, or a finite value with
          unbiased exponent E in [-24, 15] whose significand bits below FP16's
          precision are zero (13 fraction bits for E >= -14, -1-E bits below)
    BF16  +/-0, +/-inf, the canonical NaN, or any non-NaN pattern whose low 16
          bits are zero (BF16 has FP32's exponent range, subnormals included)

(Any other NaN becomes the canonical NaN on the way through, so it only fits FP32.)

One register stage with ready/valid: the tile and its format leave together
one cycle after they are taken.  s_axis_tready = m_axis_tready or output empty.

Ports (widths come from the signals):
    clk, rst        clock; synchronous active-high reset (clears the output's valid; the tile,
                    its mask and format are registers without reset, read only while valid)
    s_axis_tdata    in  tile, 16 x 32 bits (lane i at bits 32i+31..32i) = 512 bits
    s_axis_tkeep    in  16 bits, lane i valid (a final partial tile has fewer; at least one)
    s_axis_tvalid   in
    s_axis_tready   out
    m_axis_tdata    out the tile, unchanged (512 bits)
    m_axis_tkeep    out the lane mask, unchanged
    m_axis_tuser    out format code (2 bits): int8 0, fp16 1, bf16 2, fp32 3
    m_axis_tvalid   out
    m_axis_tready   in
"""
from myhdl import Signal, always, always_comb, always_seq, block, intbv, modbv

from spec.formats import FMT_BF16, FMT_FP16, FMT_FP32, FMT_INT8, NAN_FP32

LANES = 16


@block
def auto_classifier(clk, rst, s_axis_tdata, s_axis_tkeep, s_axis_tvalid, s_axis_tready,
                    m_axis_tdata, m_axis_tkeep, m_axis_tuser, m_axis_tvalid, m_axis_tready):
    if len(s_axis_tdata) != 32 * LANES or len(m_axis_tdata) != 32 * LANES:
        raise ValueError(f"auto_classifier: s/m_axis_tdata are {len(s_axis_tdata)}/{len(m_axis_tdata)} bits; "
                         f"a tile is {LANES} FP32 values = {32 * LANES} bits")
    if len(s_axis_tkeep) != LANES or len(m_axis_tkeep) != LANES:
        raise ValueError(f"auto_classifier: s/m_axis_tkeep must be {LANES} bits (one per lane)")
    if len(m_axis_tuser) != 2:
        raise ValueError("auto_classifier: m_axis_tuser carries a 2-bit format code")
    out_valid = Signal(bool(0))
    take = Signal(bool(0))

    @always_seq(clk.posedge, reset=rst)
    def hold_valid():
        if take:
            out_valid.next = 1
        elif m_axis_tready:
            out_valid.next = 0

    @always(clk.posedge)
    def classify():
        # the tile, its lane mask and its format are not reset: they are read only with out_valid
        x = modbv(0)[32:]   # truncating: takes the low 32 bits of the shifted tile
        e = intbv(0)[8:]
        f = intbv(0)[23:]
        low = intbv(0)[24:]
        all_int8 = bool(1)
        all_fp16 = bool(1)
        all_bf16 = bool(1)
        fits_int8 = bool(0)
        fits_fp16 = bool(0)
        fits_bf16 = bool(0)
        if take:
            for i in range(LANES):
                x[:] = s_axis_tdata >> (32 * i)
                e[:] = x[31:23]
                f[:] = x[23:0]
                fits_int8 = False
                fits_fp16 = False
                fits_bf16 = False
                if x[31:0] == 0 or (x == NAN_FP32):
                    # the two zeros, and the canonical NaN (not +0 / INT8 handled below)
                    fits_fp16 = True
                    fits_bf16 = True
                elif e == 255:
                    fits_fp16 = f == 0          # +/-inf; any other NaN does not round-trip
                    fits_bf16 = f == 0
                elif e != 0:
                    fits_bf16 = x[16:0] == 0
                    if e >= 113 and e <= 142:   # E in [-14, 15]: FP16 normal
                        fits_fp16 = f[13:0] == 0
                    elif e >= 103 and e <= 112:  # E in [-24, -15]: FP16 subnormal
                        low[:] = (1 << (126 - e)) - 1    # the -1-E bits below 2^-24
                        fits_fp16 = (f & low) == 0
                    if e >= 127 and e <= 133:   # 1 <= |x| < 128: integer when the fraction ends in zeros
                        low[:] = (1 << (150 - e)) - 1    # 23 - (e-127) fraction bits below the point
                        fits_int8 = (f & low) == 0
                    elif e == 134 and f == 0 and x[31]:
                        fits_int8 = True                 # -128
                else:
                    fits_bf16 = x[16:0] == 0    # FP32 subnormal: BF16 subnormal if the low half is zero
                if x == 0:
                    fits_int8 = True
                if s_axis_tkeep[i]:
                    all_int8 = all_int8 and fits_int8
                    all_fp16 = all_fp16 and fits_fp16
                    all_bf16 = all_bf16 and fits_bf16
            m_axis_tdata.next = s_axis_tdata
            m_axis_tkeep.next = s_axis_tkeep
            if all_int8:
                m_axis_tuser.next = FMT_INT8
            elif all_fp16:
                m_axis_tuser.next = FMT_FP16
            elif all_bf16:
                m_axis_tuser.next = FMT_BF16
            else:
                m_axis_tuser.next = FMT_FP32

    @always_comb
    def handshake():
        take.next = s_axis_tvalid and (m_axis_tready or not out_valid)
        s_axis_tready.next = m_axis_tready or not out_valid
        m_axis_tvalid.next = out_valid

    return hold_valid, classify, handshake
