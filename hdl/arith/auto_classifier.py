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

The significand tests use no variable mask: "the fraction bits below position k
are zero", k = 126 - e (FP16 subnormal) or 150 - e (INT8), is written per bit as
"fraction bit j is zero, or e >= 126 - j (resp. 150 - j)", a comparison of e with
a constant, so the lane tests and the AND over the lanes fit in a few LUT levels.

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
ALL_LANES = (1 << LANES) - 1


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
        fi8 = intbv(0)[LANES:]
        f16 = intbv(0)[LANES:]
        b16 = intbv(0)[LANES:]
        special = bool(0)
        low_ok = bool(0)
        if take:
            # per lane, "fits INT8 / FP16 / BF16"; a lane outside the mask fits every format
            for i in range(LANES):
                x[:] = s_axis_tdata >> (32 * i)
                e[:] = x[31:23]
                f[:] = x[23:0]
                # +/-inf and the canonical NaN fit FP16 and BF16 (any other NaN fits neither)
                special = (e == 255 and f == 0) or x == NAN_FP32
                # BF16: a non-NaN pattern whose low 16 bits are zero (zeros and subnormals included)
                b16[i] = special or (e != 255 and x[16:0] == 0) or not s_axis_tkeep[i]
                # FP16: the zeros, or E in [-24, 15] (e in [103, 142]) with the fraction bits below
                # FP16's precision zero: the 13 low ones always, bit j in 13..22 while e < 126 - j
                # (the -1-E bits below 2^-24 of an FP16 subnormal, e <= 112)
                low_ok = f[13:0] == 0 and e >= 103 and e <= 142
                for j in range(13, 23):
                    low_ok = low_ok and (not f[j] or e >= 126 - j)
                f16[i] = special or x[31:0] == 0 or low_ok or not s_axis_tkeep[i]
                # INT8: +0, -128, or 1 <= |x| < 128 (e in [127, 133]) with the fraction bits below the
                # point zero: the 17 low ones always, bit j in 17..22 while e < 150 - j
                low_ok = f[17:0] == 0 and e >= 127 and e <= 133
                for j in range(17, 23):
                    low_ok = low_ok and (not f[j] or e >= 150 - j)
                fi8[i] = x == 0 or (x[31] and e == 134 and f == 0) or low_ok or not s_axis_tkeep[i]
            m_axis_tdata.next = s_axis_tdata
            m_axis_tkeep.next = s_axis_tkeep
            if fi8 == ALL_LANES:
                m_axis_tuser.next = FMT_INT8
            elif f16 == ALL_LANES:
                m_axis_tuser.next = FMT_FP16
            elif b16 == ALL_LANES:
                m_axis_tuser.next = FMT_BF16
            else:
                m_axis_tuser.next = FMT_FP32

    @always_comb
    def handshake():
        take.next = s_axis_tvalid and (m_axis_tready or not out_valid)
        s_axis_tready.next = m_axis_tready or not out_valid
        m_axis_tvalid.next = out_valid

    return hold_valid, classify, handshake
