"""Number decoder: one INT8 / FP16 / BF16 / FP32 element -> Kulisch term + exact FP32.

Combinational (no clock): the outputs follow `data` and `fmt` in the same
cycle, so a lane can decode and accumulate an element in one clock.

The format is a run-time input because the operation's format is a register of
the node, not a build option.  Format codes (as everywhere in the node):
int8 = 0, fp16 = 1, bf16 = 2, fp32 = 3.

Kulisch term: the element's value times 2^149 (LSB weight 2^-149, FP32's
smallest subnormal), as a W-bit two's-complement pattern.  Every finite value
of the four formats is an integer multiple of 2^-149 and below 2^128, so the
term fits in 278 signed bits; W must be at least that.  A special (NaN, +inf,
-inf) gives term 0 and raises exactly one flag.  Both zeros give term 0.

The arithmetic is two MyHDL functions, `element_fields` and the one that
`term_function(W)` makes; they convert to Verilog functions.  This block is
their unit test bench: the node's Kulisch banks (hdl/node/prism_kulisch_bank.py,
element_fields, whose significand and shift they place in their own carry-save rows)
and its FP32 -> format rounder (hdl/node/prism_round16.py, element_fields for an FP32
value's specials) call them inside their own processes.

FP32 widening: the element converted exactly to binary32 (every INT8, FP16 and
BF16 value is exact in FP32; the sign of a zero is kept; any NaN becomes the
canonical 0x7FC00000, INT8 -0 does not exist).  The FP32_ARRIVAL path adds this.

Ports (widths come from the signals):
    data      in   element bit pattern, right-aligned (>= 32 bits; the upper bits
                   above the format's width are ignored)
    fmt       in   format code, 2 bits
    term      out  W-bit Kulisch term (W = len(term) >= 278; 320 or 280 in the node;
                   any width, left 0, when TERM is False)
    nan       out  the element is a NaN (FP formats only)
    pos_inf   out  the element is +inf
    neg_inf   out  the element is -inf
    fp32      out  32-bit exact FP32 value of the element (canonical NaN)

Parameters:
    TERM      True (default): drive `term`.  False: `term` stays 0 and the W-bit shift
              and negation are left out (an FP32-only user such as the FP32_ARRIVAL
              banks needs only `fp32` and the flags; the wide term is most of this
              block's simulation time)
"""
from myhdl import always_comb, block, intbv, modbv

from hdl.arith.ports import check_widths
from spec.formats import (FMT_BF16, FMT_FP16, FMT_FP32, FMT_INT8, INF_FP32, KULISCH_LSB_SHIFT, KULISCH_MIN_WIDTH,
                          NAN_FP32)

# element_fields() result: the significand and its shift, the three specials flags (in the order of the
# Kulisch word's flags: nan, +inf, -inf) and the sign
FIELD_SH, FIELD_NAN, FIELD_POS_INF, FIELD_NEG_INF, FIELD_SIGN = 24, 33, 34, 35, 36
FIELDS_WIDTH = 37


def element_fields(d, fmt):
    """{sign, -inf, +inf, nan, sh (9 bits), sig (24 bits)} of the 32-bit element pattern d in format fmt:
    a finite element is (-1)^sign * sig * 2^(sh - 149); sig and sh are 0-based as they come from the fields."""
    f = intbv(0)[37:]
    sig = intbv(0)[24:]        # significand magnitude (hidden bit included)
    ex = intbv(0)[9:]          # exponent field, max(field, 1) applied below
    sh = intbv(0)[9:]          # left shift of sig that gives the term (units of 2^-149)
    fm = intbv(0)[2:]          # (an argument compared with 0 or 1 would be taken for a clock edge)
    sign = bool(0)
    special = bool(0)
    frac_nz = bool(0)
    fm[:] = fmt
    if fm == FMT_FP32:
        sign = bool(d[31])
        ex[:] = d[31:23]
        special = ex == 255
        frac_nz = d[23:0] != 0
        sig[:] = d[23:0]
        if ex != 0:
            sig[23] = 1
        else:
            ex[:] = 1
        sh[:] = ex - 1
    elif fm == FMT_BF16:
        sign = bool(d[15])
        ex[:] = d[15:7]
        special = ex == 255
        frac_nz = d[7:0] != 0
        sig[:] = d[7:0]
        if ex != 0:
            sig[7] = 1
        else:
            ex[:] = 1
        sh[:] = ex + 15
    elif fm == FMT_FP16:
        sign = bool(d[15])
        ex[:] = d[15:10]
        special = ex == 31
        frac_nz = d[10:0] != 0
        sig[:] = d[10:0]
        if ex != 0:
            sig[10] = 1
        else:
            ex[:] = 1
        sh[:] = ex + 124
    else:  # INT8: the magnitude of a two's-complement byte, times 2^149
        sign = bool(d[7])
        if sign:
            sig[:] = (d[8:0] ^ 0xFF) + 1
        else:
            sig[:] = d[8:0]
        sh[:] = KULISCH_LSB_SHIFT
    f[24:0] = sig
    f[33:24] = sh
    f[33] = special and frac_nz
    f[34] = special and not frac_nz and not sign
    f[35] = special and not frac_nz and sign
    f[36] = sign
    return f


def term_function(W):
    """The MyHDL function fields -> W-bit Kulisch term (two's complement; 0 for a special)."""
    def kulisch_term(f):
        sig = intbv(0)[24:]
        sh = intbv(0)[9:]
        mag = modbv(0)[W:]
        t = modbv(0)[W:]
        sig[:] = f[24:0]
        sh[:] = f[33:24]
        if f[33] or f[34] or f[35]:
            mag[:] = 0
        else:
            mag[:] = sig << sh          # assigned straight to the wide variable: converts at full width
        if f[36]:
            t[:] = ~mag + 1
        else:
            t[:] = mag
        return t
    return kulisch_term


@block
def number_decoder(data, fmt, term, nan, pos_inf, neg_inf, fp32, TERM=True):
    width = len(term)
    if TERM and width < KULISCH_MIN_WIDTH:
        raise ValueError(f"number_decoder: term is {width} bits; a Kulisch term needs at least "
                         f"{KULISCH_MIN_WIDTH} (use 280 or 320)")
    if len(data) < 32:
        raise ValueError(f"number_decoder: data is {len(data)} bits; it must hold an FP32 pattern (>= 32)")
    check_widths("number_decoder", ("fmt (a format code)", fmt, 2), ("fp32", fp32, 32))
    kulisch_term = term_function(width)

    @always_comb
    def decode():
        d = modbv(0)[32:]
        f = intbv(0)[FIELDS_WIDTH:]
        sign = bool(0)
        image32 = intbv(0)[32:]       # exact FP32 image
        short_mag = intbv(0)[11:]     # value that needs normalising for the FP32 image
        lead = intbv(0)[5:]
        norm = intbv(0)[24:]
        d[:] = data           # truncating: the low 32 bits
        f[:] = element_fields(d, fmt)
        sign = bool(f[FIELD_SIGN])

        if fmt == FMT_FP32:
            image32[:] = d
        elif fmt == FMT_BF16:
            image32[:] = d[16:0] << 16
        elif fmt == FMT_FP16:
            if d[15:10] == 31:
                image32[:] = (sign << 31) | INF_FP32
            elif d[15:10] != 0:
                image32[:] = (sign << 31) | ((d[15:10] + 112) << 23) | (d[10:0] << 13)
            else:
                short_mag[:] = d[10:0]
        else:
            short_mag[:] = f[11:0]

        # FP16 subnormal or INT8: normalise `short_mag` (< 2^11) into an FP32 normal.
        if (fmt == FMT_FP16 and d[15:10] == 0) or fmt == FMT_INT8:
            lead[:] = 0
            for i in range(11):
                if short_mag[i]:
                    lead[:] = i
            norm[:] = short_mag << (23 - lead)
            if short_mag != 0:
                if fmt == FMT_INT8:
                    image32[:] = (sign << 31) | ((lead + 127) << 23) | norm[23:0]
                else:   # value short_mag * 2^-24 -> exponent lead - 24
                    image32[:] = (sign << 31) | ((lead + 103) << 23) | norm[23:0]
            elif fmt == FMT_FP16:
                image32[:] = sign << 31
            else:
                image32[:] = 0

        if TERM:
            term.next = kulisch_term(f)
        else:
            term.next = 0
        nan.next = f[FIELD_NAN]
        pos_inf.next = f[FIELD_POS_INF]
        neg_inf.next = f[FIELD_NEG_INF]
        if f[FIELD_NAN]:
            fp32.next = NAN_FP32
        else:
            fp32.next = image32

    return decode
