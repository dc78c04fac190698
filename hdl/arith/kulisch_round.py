"""Pipelined rounder: exact Kulisch value -> FP32 / BF16 / FP16 / INT8, or exact.

After the port-local KULISCH_FIXED states of an element are merged, the node
rounds the sum ONCE to the RESULT format (or exports it exactly).  This block
is that rounding step: one value per cycle, result LATENCY cycles later.

Value: in_value is the W-bit two's-complement register (W = len(in_value),
LSB weight 2^-149, the smallest FP32 subnormal), i.e. value = in_value * 2^-149.

Rounding (bit-exact with the golden model, golden.arith.kulisch / golden.arith.formats):
  * floats: round to nearest, ties to even; subnormals kept (never flushed);
    overflow gives +-inf; a negative value too small for the format rounds
    to -0, an exact zero to +0;
  * INT8: round to nearest-even integer, then saturate to [-128, 127];
  * specials, in priority order: in_nan, or in_pos_inf together with
    in_neg_inf -> the canonical NaN (FP32 0x7FC00000, BF16 0x7FC0, FP16
    0x7E00, INT8 0x80); in_pos_inf -> +inf (INT8 0x7F); in_neg_inf -> -inf
    (INT8 0x80); in_overflow -> the true sum lies beyond every format's range:
    -inf when in_wrap_sign is set, else +inf (INT8 saturates the same way).
    in_value is not looked at in these cases.

Overflow bound (stated here once; hdl/node/prism_round16.py refers to it): the
W-bit state holds values in [-2^(W-1), 2^(W-1)) units of 2^-149, so a wrapped
(overflowed) sum has magnitude >= 2^(W-1-149) = 2^(W-150): 2^128 at the
smallest width this rounder accepts (W = 278), 2^130 at the node's KULISCH_W =
280, 2^170 at 320.  Every format's largest finite value is below 2^128 (FP32:
(2 - 2^-23) * 2^127), and round-to-nearest already gives inf from 2^128 - 2^103
up, so an overflowed sum is an infinity (INT8: a saturation) at every W.

Result format (in_format, at least 3 bits; the codes of golden.arith.formats
FORMAT_CODE plus one): 0 INT8, 1 FP16, 2 BF16, 3 FP32, 4 exact pass-through.
Codes 5.. are reserved and behave as 4.  out_bits holds the rounded pattern
zero-extended to 32 bits (0 for exact).  out_value and out_flags always carry
in_value and the input flags unchanged, so the exact export (the wrapped
W-bit state plus the overflow flag) is taken from there.

Datapath, three logical steps (one process each; LATENCY sets which end in a
register, the others are combinational).  The arithmetic is the MyHDL
functions of rounder_functions(W), which convert to Verilog functions; this
block is their unit test bench (the node's sixteen-lane rounder,
hdl/node/prism_round16.py, computes the same results with a shallower datapath
of its own):
  1. magnitude: |in_value| (one W-bit negate) and the special-case decision;
  2. normalise: loop-free leading-zero shift (256/128/.../1; each step taken
     only if the top k bits are zero and the shift so far plus k stays within
     the format's limit), stopped where the exponent reaches the format's
     minimum so subnormal results come out unnormalised; only the top 25
     bits (FP32 significand + guard) and the OR of the rest go on; the INT8
     result is rounded and saturated here straight from the magnitude;
  3. round + pack: round to nearest even on guard and sticky;
     the significand (with its hidden bit) is added to (exponent-1) << m, so
     a rounding carry moves into the exponent; at or above the infinity
     pattern gives inf; sign, specials and the format select are applied.

LATENCY (cycles from in_valid to out_valid; registers after steps):
    3: 1 | 2 | 3   (default)
    2: 1+2 | 3
    1: 1+2+3       (registered outputs only)

Ports (widths from the signals passed in):
    clk, rst        clock; synchronous reset (either polarity; asynchronous is rejected),
                    clears the valid flags only, data registers are not reset
    in_valid        a value is presented this cycle (always accepted)
    in_value        W-bit two's-complement Kulisch value, 278 <= W <= 512 (320 or 280 in the node)
    in_nan          sticky NaN flag of the sum
    in_pos_inf      a +inf contributed
    in_neg_inf      a -inf contributed
    in_overflow     the true sum is outside [-2^(W-1), 2^(W-1)) (net wrap count != 0)
    in_wrap_sign    sign of the net wrap count (1: the true sum is negative); used with in_overflow
    in_format       result format code (see above; >= 3 bits)
    in_tag          caller's side-band value carried with the value (any width)
    out_valid       out: in_valid delayed by LATENCY
    out_bits        out: rounded bit pattern, 32 bits, narrower formats in the low bits
    out_value       out: in_value, unchanged (W bits)
    out_flags       out: 4 bits, bit0 nan, bit1 +inf, bit2 -inf, bit3 overflow (as golden.arith.kulisch flags)
    out_tag         out: in_tag of that value
"""
from types import SimpleNamespace

from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

from hdl.arith.ports import check_widths
from spec.formats import (FMT_BF16, FMT_FP16, FMT_FP32, FMT_INT8, INF_BF16, INF_FP16, INF_FP32,
                          INF_INT8, KULISCH_LSB_SHIFT, KULISCH_MIN_WIDTH, NAN_BF16, NAN_FP16, NAN_FP32,
                          NAN_INT8, NEG_INF_BF16, NEG_INF_FP16, NEG_INF_FP32)

STAGE_REGISTERS = {
    3: (True, True, True),
    2: (False, True, True),
    1: (False, False, True),
}

# special-case kinds decided in step 1
KIND_FINITE, KIND_NAN, KIND_POS_INF, KIND_NEG_INF = 0, 1, 2, 3

MAX_WIDTH = 512   # the 9-bit normalising shift count

TOP_BITS = 25                          # FP32: 24 significand bits + guard
# normalise() result: {lead (9 bits), sticky, top (TOP_BITS)}
NORM_STICKY, NORM_LEAD = TOP_BITS, TOP_BITS + 1
NORM_WIDTH = TOP_BITS + 10


def round_kind(nan, pos_inf, neg_inf, overflow, wrap_sign):
    """The special case of a Kulisch value: NaN (also +inf with -inf), +inf, -inf (an overflow
    counts as the infinity of its sign) or finite."""
    kind = intbv(0)[2:]
    if nan or (pos_inf and neg_inf):
        kind[:] = KIND_NAN
    elif pos_inf:
        kind[:] = KIND_POS_INF
    elif neg_inf:
        kind[:] = KIND_NEG_INF
    elif overflow:
        if wrap_sign:
            kind[:] = KIND_NEG_INF
        else:
            kind[:] = KIND_POS_INF
    else:
        kind[:] = KIND_FINITE
    return kind


def rounder_functions(W, FMT_BITS=3):
    """The MyHDL functions of the rounder for a W-bit Kulisch value (LSB weight 2^-149) and a
    FMT_BITS-bit format code: magnitude, normalise, round_int8 and pack, plus round_kind.
    (The functions copy an argument they compare with 0 or 1 into a variable: MyHDL takes such a
    comparison of an argument for a clock edge.)"""
    # normalising-shift limits: the leading one may not move above the bit of
    # the format's smallest normal, 2^emin (FP32/BF16 emin -126, FP16 -14);
    # (biased exponent - 1) = limit - lead for the format's own limit
    LIMIT_FP32 = W - 1 - (KULISCH_LSB_SHIFT - 126)
    LIMIT_FP16 = W - 1 - (KULISCH_LSB_SHIFT - 14)
    INT_LOW = KULISCH_LSB_SHIFT                    # bits [INT_HIGH : INT_LOW] are the low 8 integer bits
    INT_HIGH = KULISCH_LSB_SHIFT + 8

    def magnitude(value):
        """|value| of the W-bit two's-complement value."""
        mag = modbv(0)[W:]
        if value[W - 1]:
            mag[:] = ~value + 1
        else:
            mag[:] = value
        return mag

    def normalise(mag, fmt):
        """Loop-free leading-zero shift (256/128/.../1; each step taken only if the top k bits are
        zero and the shift so far plus k stays within the format's limit): {lead, sticky, top}."""
        norm = intbv(0)[W:]
        lead = intbv(0)[9:]
        limit = intbv(0)[9:]
        r = intbv(0)[NORM_WIDTH:]
        fm = intbv(0)[FMT_BITS:]
        fm[:] = fmt
        norm[:] = mag
        if fm == FMT_FP16:
            limit[:] = LIMIT_FP16
        else:
            limit[:] = LIMIT_FP32
        lead[:] = 0
        if norm[W:W - 256] == 0 and lead + 256 <= limit:
            norm[:] = norm << 256
            lead[:] = lead + 256
        if norm[W:W - 128] == 0 and lead + 128 <= limit:
            norm[:] = norm << 128
            lead[:] = lead + 128
        if norm[W:W - 64] == 0 and lead + 64 <= limit:
            norm[:] = norm << 64
            lead[:] = lead + 64
        if norm[W:W - 32] == 0 and lead + 32 <= limit:
            norm[:] = norm << 32
            lead[:] = lead + 32
        if norm[W:W - 16] == 0 and lead + 16 <= limit:
            norm[:] = norm << 16
            lead[:] = lead + 16
        if norm[W:W - 8] == 0 and lead + 8 <= limit:
            norm[:] = norm << 8
            lead[:] = lead + 8
        if norm[W:W - 4] == 0 and lead + 4 <= limit:
            norm[:] = norm << 4
            lead[:] = lead + 4
        if norm[W:W - 2] == 0 and lead + 2 <= limit:
            norm[:] = norm << 2
            lead[:] = lead + 2
        if norm[W:W - 1] == 0 and lead + 1 <= limit:
            norm[:] = norm << 1
            lead[:] = lead + 1
        r[TOP_BITS:0] = norm[W:W - TOP_BITS]
        r[NORM_STICKY] = norm[W - TOP_BITS:0] != 0
        r[NORM_WIDTH:NORM_LEAD] = lead
        return r

    def round_int8(mag, negative):
        """INT8: round at 2^0 (bit INT_LOW) to nearest even, saturate; |value| >= 256 always saturates."""
        low = intbv(0)[8:]
        rounded = intbv(0)[9:]
        int8 = modbv(0)[8:]
        low[:] = mag[INT_HIGH:INT_LOW]
        beyond = mag[W:INT_HIGH] != 0
        round_up = mag[INT_LOW - 1] and (mag[INT_LOW - 1:0] != 0 or low[0])
        rounded[:] = low + round_up
        if negative:
            if beyond or rounded > 128:
                int8[:] = 0x80
            else:
                int8[:] = (low ^ 0xFF) + 1
                if round_up:
                    int8[:] = int8 - 1
        else:
            if beyond or rounded > 127:
                int8[:] = 0x7F
            else:
                int8[:] = rounded[8:0]
        return int8

    def pack(norm, negative, kind, fmt, int8):
        """Round to nearest even on guard and sticky and pack in the format: the significand (with
        its hidden bit) is added to (exponent-1) << m, so a rounding carry moves into the exponent;
        at or above the infinity pattern gives inf.  EXACT (4 and up) gives 0."""
        top = intbv(0)[TOP_BITS:]
        exp_m1 = modbv(0)[9:]
        pattern = modbv(0)[34:]
        bits = intbv(0)[32:]
        k = intbv(0)[2:]
        fm = intbv(0)[FMT_BITS:]
        k[:] = kind
        fm[:] = fmt
        sticky = bool(norm[NORM_STICKY])
        top[:] = norm[TOP_BITS:0]
        round_up = False
        if fm == FMT_FP32:
            exp_m1[:] = LIMIT_FP32 - norm[NORM_WIDTH:NORM_LEAD]
            round_up = top[0] and (sticky or top[1])
            pattern[:] = (exp_m1 << 23) + top[25:1]
            if round_up:
                pattern[:] = pattern + 1
            if pattern >= INF_FP32:
                pattern[:] = INF_FP32
            if k == KIND_NAN:
                bits[:] = NAN_FP32
            elif k == KIND_POS_INF:
                bits[:] = INF_FP32
            elif k == KIND_NEG_INF:
                bits[:] = NEG_INF_FP32
            else:
                bits[:] = concat(negative, pattern[31:0])
        elif fm == FMT_BF16:
            exp_m1[:] = LIMIT_FP32 - norm[NORM_WIDTH:NORM_LEAD]
            round_up = top[16] and (sticky or top[16:0] != 0 or top[17])
            pattern[:] = (exp_m1 << 7) + top[25:17]
            if round_up:
                pattern[:] = pattern + 1
            if pattern >= INF_BF16:
                pattern[:] = INF_BF16
            if k == KIND_NAN:
                bits[:] = NAN_BF16
            elif k == KIND_POS_INF:
                bits[:] = INF_BF16
            elif k == KIND_NEG_INF:
                bits[:] = NEG_INF_BF16
            else:
                bits[:] = concat(negative, pattern[15:0])
        elif fm == FMT_FP16:
            exp_m1[:] = LIMIT_FP16 - norm[NORM_WIDTH:NORM_LEAD]
            round_up = top[13] and (sticky or top[13:0] != 0 or top[14])
            pattern[:] = (exp_m1 << 10) + top[25:14]
            if round_up:
                pattern[:] = pattern + 1
            if pattern >= INF_FP16:
                pattern[:] = INF_FP16
            if k == KIND_NAN:
                bits[:] = NAN_FP16
            elif k == KIND_POS_INF:
                bits[:] = INF_FP16
            elif k == KIND_NEG_INF:
                bits[:] = NEG_INF_FP16
            else:
                bits[:] = concat(negative, pattern[15:0])
        elif fm == FMT_INT8:
            if k == KIND_NAN or k == KIND_NEG_INF:
                bits[:] = NAN_INT8
            elif k == KIND_POS_INF:
                bits[:] = INF_INT8
            else:
                bits[:] = int8
        else:
            bits[:] = 0
        return bits

    return SimpleNamespace(magnitude=magnitude, normalise=normalise, round_int8=round_int8, pack=pack,
                           kind=round_kind)


@block
def kulisch_round(clk, rst, in_valid, in_value, in_nan, in_pos_inf, in_neg_inf, in_overflow, in_wrap_sign,
                  in_format, in_tag, out_valid, out_bits, out_value, out_flags, out_tag, LATENCY=3):
    if LATENCY not in STAGE_REGISTERS:
        raise ValueError(f"kulisch_round: LATENCY={LATENCY!r} is not supported; choose one of "
                         f"{sorted(STAGE_REGISTERS)}")
    width = len(in_value)
    if not KULISCH_MIN_WIDTH <= width <= MAX_WIDTH:
        raise ValueError(f"kulisch_round: in_value is {width} bits; the Kulisch width must be "
                         f"{KULISCH_MIN_WIDTH}..{MAX_WIDTH} (320 or 280 in the node)")
    if len(out_value) != width:
        raise ValueError(f"kulisch_round: out_value is {len(out_value)} bits, in_value {width}; they must match")
    if len(in_format) < 3:
        raise ValueError(f"kulisch_round: in_format is {len(in_format)} bits; codes 0..4 need at least 3")
    check_widths("kulisch_round", ("out_bits", out_bits, 32), ("out_flags", out_flags, 4))
    if len(in_tag) != len(out_tag) or len(in_tag) < 1:
        raise ValueError(f"kulisch_round: in_tag ({len(in_tag)} bits) and out_tag ({len(out_tag)} bits) "
                         f"must have the same width, at least 1")
    if getattr(rst, "isasync", False):
        raise ValueError("kulisch_round: rst must be a synchronous reset (ResetSignal(..., isasync=False))")
    # only the valid flags are reset; data registers just follow (cheaper flops)
    RESET_ACTIVE = int(getattr(rst, "active", 1))
    tag_width = len(in_tag)
    fmt_width = len(in_format)
    W = width
    fn = rounder_functions(W, fmt_width)
    value_magnitude, normalise_top, round_int8, pack_result = fn.magnitude, fn.normalise, fn.round_int8, fn.pack

    regs = STAGE_REGISTERS[LATENCY]

    # step 1 -> 2
    s1_valid, s1_tag = Signal(bool(0)), Signal(intbv(0)[tag_width:])
    s1_value, s1_mag = Signal(intbv(0)[W:]), Signal(intbv(0)[W:])
    s1_negative = Signal(bool(0))
    s1_kind = Signal(intbv(0)[2:])
    s1_format = Signal(intbv(0)[fmt_width:])
    s1_flags = Signal(intbv(0)[4:])
    # step 2 -> 3
    s2_valid, s2_tag = Signal(bool(0)), Signal(intbv(0)[tag_width:])
    s2_value = Signal(intbv(0)[W:])
    s2_norm = Signal(intbv(0)[NORM_WIDTH:])  # {lead, sticky, significand + guard bits of the widest format}
    s2_negative = Signal(bool(0))
    s2_kind = Signal(intbv(0)[2:])
    s2_format = Signal(intbv(0)[fmt_width:])
    s2_flags = Signal(intbv(0)[4:])
    s2_int8 = Signal(intbv(0)[8:])

    def magnitude():
        value = intbv(0)[W:]
        value[:] = in_value
        if rst == RESET_ACTIVE:
            s1_valid.next = False
        else:
            s1_valid.next = in_valid
        s1_tag.next = in_tag
        s1_value.next = value
        s1_mag.next = value_magnitude(value)
        s1_negative.next = value[W - 1]
        s1_kind.next = round_kind(in_nan, in_pos_inf, in_neg_inf, in_overflow, in_wrap_sign)
        s1_format.next = in_format
        s1_flags.next = concat(in_overflow, in_neg_inf, in_pos_inf, in_nan)

    def normalise():
        if rst == RESET_ACTIVE:
            s2_valid.next = False
        else:
            s2_valid.next = s1_valid
        s2_tag.next = s1_tag
        s2_value.next = s1_value
        s2_norm.next = normalise_top(s1_mag, s1_format)
        s2_negative.next = s1_negative
        s2_kind.next = s1_kind
        s2_format.next = s1_format
        s2_flags.next = s1_flags
        s2_int8.next = round_int8(s1_mag, s1_negative)

    def round_pack():
        if rst == RESET_ACTIVE:
            out_valid.next = False
        else:
            out_valid.next = s2_valid
        out_tag.next = s2_tag
        out_value.next = s2_value
        out_flags.next = s2_flags
        out_bits.next = pack_result(s2_norm, s2_negative, s2_kind, s2_format, s2_int8)

    clocked = always(clk.posedge)
    step1 = clocked(magnitude) if regs[0] else always_comb(magnitude)
    step2 = clocked(normalise) if regs[1] else always_comb(normalise)
    step3 = clocked(round_pack) if regs[2] else always_comb(round_pack)
    return step1, step2, step3
