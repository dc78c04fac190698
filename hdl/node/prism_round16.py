"""Sixteen-lane rounding stage of the node's read-out: one tile per cycle, three register stages.

Rounds the 16 elements of a tile to one result format (INT8 / FP16 / BF16 / FP32),
bit-exactly as hdl/arith/kulisch_round.py and hdl/arith/fp32_round.py (and
golden.arith.formats.round_exact / fp32_to_format).  Those single-value blocks
normalise with a W-bit negate and a nine-step leading-zero shift (about 60 LUT
levels in all); at one tile per cycle every stage here must stay within a few
LUT levels (issue 34: at most 8 from register to register), so this block has
its own datapath, built so that no step has a W-bit carry chain or a chain of
dependent shifts (see "Datapath" below).  It handles 16 lanes in one clocked
process per stage with a constant-bound loop, because the node's read-out needs
a whole tile per cycle and 16 x 2 separately instantiated rounders make the
node's elaboration and MyHDL simulation several times slower (one MyHDL
process per pipeline step and lane).

Input per lane, one of (`from_fp32`):
  0  exact value: W-bit two's-complement Kulisch state (LSB weight 2^-149) with
     flags {wrap_sign, overflow, -inf, +inf, nan} (prism_kulisch_store o_flags);
  1  an FP32 pattern (lane l of `in_fp32`), decoded exactly (its term, its
     specials; the sign of a zero is kept).
Rules (those of hdl/arith/kulisch_round.py, where the overflow bound is
stated): round to nearest, ties to even; floats overflow to +-inf; subnormals
kept; a negative value too small for the format rounds to -0, an exact zero
of the Kulisch path to +0; INT8 rounds to the nearest-even integer and
saturates to [-128, 127].  Specials in priority order: NaN, or +inf with -inf
-> canonical NaN (FP32 0x7FC00000, BF16 0x7FC0, FP16 0x7E00, INT8 0x80); +inf,
-inf -> the infinity (INT8 0x7F / 0x80); overflow -> -inf if wrap_sign else
+inf (INT8 saturates).

Latency STAGES = 3 (the node's setting, hdl/node/prism_readout.py ROUND_STAGES; registered
outputs).  Formats 4 (EXACT) and up give 0.  A reset clears the tiles in flight.  (One- and
two-stage forms of the earlier datapath were measured in docs/hdl_sizes.md and removed, the node
using neither: the git history has them.)

Datapath per lane (mag: the one's-complement magnitude, |value| = mag + neg; P: the bit of the
format's smallest normal, 23 for FP32/BF16 (and INT8, whose exponent is unused), 135 for FP16):
  1. magnitude and leading-one search.  A Kulisch value v gives mag = v, or ~v and neg = 1 when
     negative: the +1 of the negate is never added across W bits (a 320-bit carry chain is 20
     levels), it is folded into the rounding in step 3.  The leading one of mag with bit P set
     (so a value below 2^emin keeps the subnormal exponent, as the old shift limit did) is found
     as a tree: per SEG-bit segment, whether it holds a one (the highest such segment is the
     leading one's: its index) and where its own highest one is (every segment's place is
     registered; step 2 picks one).  An FP32 value's magnitude is sig << (exponent - 1) and its
     leading one's place is known from its exponent, max(exponent + 22, P); no search.
  2. normalising shift, split in two: a coarse shift by segment (the three segments from the
     leading one's down) and a fine one by the place within it; the KEEP = 25 bits from the
     leading one down (FP32's significand and guard) go on.  Sticky: whether any bit of v below
     them is set -- |v| has the same low zeros as v, so it is read from v's bits (the region's
     low bits under a mask by place, the segments below the region under a mask by index).  The
     biased exponent (place - P + 1, or 0 when the leading one found is only bit P's) and the
     INT8 rounding's inputs (v's low byte, guard, sticky, whether the bits above are all 0 / 1)
     are computed beside the shift.
  3. round and pack.  With |v| = mag + 1 the +1 reaches the kept bits only when no bit of v
     below them is set (carry = neg and not sticky); then the value there is exact and rounding
     up is guard | (low bits all ones & lsb), else the usual guard & (sticky | low bits | lsb):
     one increment either way.  The pattern {exponent, fraction} and the pattern + 1 are formed
     beside that decision, each one's overflow to infinity read from its exponent field
     (a rounding carry moves into the exponent by itself).  INT8 rounds v in two's complement
     (round half to even is symmetric) or |x| with its sign (FP32), then saturates.
Figures (synth_xilinx -family xcup, 16 lanes, LUT levels with a CARRY4 a quarter): docs/hdl_sizes.md.

Ports (widths from the signals; lanes = len(out_bits) / 32, 16 in the node, fewer
only to measure one lane; W = len(in_values) / lanes):
    clk, rst            clock; synchronous reset (clears out_valid)
    in_valid            a tile is presented (always accepted)
    from_fp32           lanes come from in_fp32 instead of in_values/in_flags
    in_values           16 x W bits, lane l at [W*l + W - 1 : W*l]
    in_flags            16 x 5 bits, lane l at [5l+4:5l] = {wrap_sign, overflow, -inf, +inf, nan}
    in_fp32             16 x 32-bit FP32 patterns (512 bits; 32 x lanes)
    in_format           result format code (3 bits)
    in_tag              side-band value carried with the tile (any width)
    out_valid           out: in_valid STAGES cycles later
    out_bits            out: 16 x 32 bits, lane l's rounded pattern right-aligned at [32l+31:32l]
    out_tag             out: in_tag of that tile
"""
from myhdl import Signal, always, block, concat, intbv, modbv

from hdl.arith.kulisch_round import KIND_NAN, KIND_NEG_INF, KIND_POS_INF, MAX_WIDTH, round_kind
from hdl.arith.number_decoder import FIELD_NAN, FIELD_NEG_INF, FIELD_POS_INF, FIELDS_WIDTH, element_fields
from spec.formats import (FMT_BF16, FMT_FP16, FMT_FP32, FMT_INT8, INF_BF16, INF_FP16, INF_FP32, INF_INT8,
                          KULISCH_LSB_SHIFT, KULISCH_MIN_WIDTH, NAN_BF16, NAN_FP16, NAN_FP32, NAN_INT8,
                          NEG_INF_BF16, NEG_INF_FP16, NEG_INF_FP32)

LANES = 16
STAGE_CHOICES = (3,)        # register stages (the read-out passes its ROUND_STAGES)

SEG = 16                    # bits per segment of the leading-one search
SEG_INDEX_BITS = 5          # a segment's index (W <= 512: at most 32 segments)
LEAD_BITS = 4               # the leading one's place in its segment
# the bit of each format's smallest normal, 2^emin (units of 2^-149): the leading one is looked for
# in the magnitude with this bit set, so a value below it keeps the subnormal exponent
LOW_FP32 = KULISCH_LSB_SHIFT - 126      # 23 (FP32, BF16 and INT8, whose exponent is not used)
LOW_FP16 = KULISCH_LSB_SHIFT - 14       # 135
KEEP = 25                   # bits kept from the leading one down: FP32's 24-bit significand + guard
# the three segments from the leading one's down: the leading one at REGION[2*SEG + lead], the kept
# bits from there down to REGION[KEEP_LOW + lead], the bits below them in REGION[KEEP_LOW + lead - 1 : 0]
REGION = 3 * SEG
KEEP_LOW = 2 * SEG - (KEEP - 1)         # 8
BELOW = KEEP_LOW + SEG - 1              # 23: REGION bits that can lie below the kept ones
INT_LOW = KULISCH_LSB_SHIFT             # INT8: the bit of 2^0; bits [INT_LOW+8 : INT_LOW] are the low byte


@block
def prism_round16(clk, rst, in_valid, from_fp32, in_values, in_flags, in_fp32, in_format, in_tag,
                  out_valid, out_bits, out_tag, STAGES=3):
    if STAGES not in STAGE_CHOICES:
        raise ValueError(f"prism_round16: STAGES={STAGES!r}; choose one of {STAGE_CHOICES} "
                         f"(register stages from a tile to its rounded patterns)")
    lanes = len(out_bits) // 32
    if lanes * 32 != len(out_bits) or not 1 <= lanes <= LANES:
        raise ValueError(f"prism_round16: out_bits is {len(out_bits)} bits; it must be 32 x lanes, "
                         f"1 <= lanes <= {LANES} (16 in the node)")
    W = len(in_values) // lanes
    if W * lanes != len(in_values) or not KULISCH_MIN_WIDTH <= W <= MAX_WIDTH:
        raise ValueError(f"prism_round16: in_values is {len(in_values)} bits; it must be {lanes} x W, "
                         f"{KULISCH_MIN_WIDTH} <= W <= {MAX_WIDTH}")
    if len(in_flags) != 5 * lanes or len(in_fp32) != 32 * lanes:
        raise ValueError(f"prism_round16: in_flags {5 * lanes} bits, in_fp32 {32 * lanes} bits "
                         f"({lanes} lanes)")
    if len(in_format) != 3 or len(out_tag) != len(in_tag):
        raise ValueError("prism_round16: in_format is 3 bits; out_tag as wide as in_tag")
    SIGN = W - 1
    NSEG = (W + SEG - 1) // SEG             # segments of the magnitude (the top one may be partial)
    EXT = SEG * (NSEG + 2)                  # the magnitude with two segments below bit 0
    LEADS = LEAD_BITS * NSEG                # every segment's leading-one place
    UPPER = W - (INT_LOW + 8)               # INT8: bits above the low byte
    PAD_ONES = (1 << (2 * SEG)) - 1         # module-level constants: emitted as sized literals
    BELOW_ONES = (1 << BELOW) - 1
    FRAC_ONES_FP32 = (1 << 23) - 1
    # (2^29 - 1) >> (31 - j): the segments two and more below segment j, [j - 3 : 0]
    BELOW_SEGS_ONES = (1 << ((1 << SEG_INDEX_BITS) - 3)) - 1

    # Stage 1 -> 2, per lane: the one's-complement magnitude (|value| = mag + neg), the leading
    # one's segment and each segment's leading-one place, sign and special-case kind.
    s1_valid = Signal(bool(0))
    s1_tag = Signal(intbv(0)[len(in_tag):])
    s1_format = Signal(intbv(0)[3:])
    s1_fp32 = Signal(bool(0))
    s1_mag = Signal(intbv(0)[W * lanes:])
    s1_neg = Signal(intbv(0)[lanes:])
    s1_seg = Signal(intbv(0)[SEG_INDEX_BITS * lanes:])
    s1_leads = Signal(intbv(0)[LEADS * lanes:])
    s1_sign = Signal(intbv(0)[lanes:])
    s1_kind = Signal(intbv(0)[2 * lanes:])
    # Stage 2 -> 3, per lane: the KEEP bits from the leading one down, the sticky bit below them,
    # the biased exponent before rounding, and the INT8 rounding's inputs.
    s2_valid = Signal(bool(0))
    s2_tag = Signal(intbv(0)[len(in_tag):])
    s2_is_fp32 = Signal(bool(0))            # the result format, decoded
    s2_is_bf16 = Signal(bool(0))
    s2_is_fp16 = Signal(bool(0))
    s2_is_int8 = Signal(bool(0))
    s2_fp32 = Signal(bool(0))
    s2_keep = Signal(intbv(0)[KEEP * lanes:])
    s2_sticky = Signal(intbv(0)[lanes:])
    s2_neg = Signal(intbv(0)[lanes:])
    s2_exp = Signal(intbv(0)[9 * lanes:])
    s2_sign = Signal(intbv(0)[lanes:])
    s2_kind = Signal(intbv(0)[2 * lanes:])
    s2_int_byte = Signal(intbv(0)[8 * lanes:])
    s2_int_guard = Signal(intbv(0)[lanes:])
    s2_int_sticky = Signal(intbv(0)[lanes:])
    s2_int_upper_any = Signal(intbv(0)[lanes:])
    s2_int_upper_all = Signal(intbv(0)[lanes:])

    @always(clk.posedge)
    def magnitude_stage():
        v = modbv(0)[W:]
        mag = modbv(0)[W:]
        marked = modbv(0)[W:]
        shifted = modbv(0)[W + 1:]
        fl = modbv(0)[5:]
        x = modbv(0)[32:]
        fmt32 = intbv(FMT_FP32)[2:]
        f = intbv(0)[FIELDS_WIDTH:]
        expo = intbv(0)[8:]
        frac = intbv(0)[23:]
        sig = intbv(0)[24:]
        top = modbv(0)[9:]
        seg = modbv(0)[SEG:]
        half = intbv(0)[8:]
        quarter = intbv(0)[4:]
        pair = intbv(0)[2:]
        lead = intbv(0)[LEAD_BITS:]
        seg_index = intbv(0)[SEG_INDEX_BITS:]
        leads = intbv(0)[LEADS:]
        wide_leads = intbv(0)[LEADS:]
        kind = intbv(0)[2:]
        mags = intbv(0)[W * lanes:]
        wide_mag = intbv(0)[W * lanes:]
        all_leads = intbv(0)[LEADS * lanes:]
        wide_all_leads = intbv(0)[LEADS * lanes:]
        segs = intbv(0)[SEG_INDEX_BITS * lanes:]
        wide_seg = intbv(0)[SEG_INDEX_BITS * lanes:]
        kinds = intbv(0)[2 * lanes:]
        wide_kind = intbv(0)[2 * lanes:]
        signs = intbv(0)[lanes:]
        negs = intbv(0)[lanes:]
        fp16 = bool(0)
        nan = bool(0)
        pinf = bool(0)
        ninf = bool(0)
        ovf = bool(0)
        wsign = bool(0)
        if rst:
            s1_valid.next = 0
        else:
            s1_valid.next = in_valid
            s1_tag.next = in_tag
            if in_valid:
                s1_format.next = in_format
                s1_fp32.next = from_fp32
                fp16 = in_format == FMT_FP16
                mags[:] = 0
                all_leads[:] = 0
                segs[:] = 0
                kinds[:] = 0
                signs[:] = 0
                negs[:] = 0
                for lane in range(lanes):
                    leads[:] = 0
                    if from_fp32:
                        # an FP32 value: its exact magnitude sig << (exponent - 1) (units of 2^-149);
                        # its leading one is at exponent + 22, or at the format's smallest normal if lower
                        x[:] = in_fp32 >> (32 * lane)
                        f[:] = element_fields(x, fmt32)
                        nan = bool(f[FIELD_NAN])
                        pinf = bool(f[FIELD_POS_INF])
                        ninf = bool(f[FIELD_NEG_INF])
                        ovf = False
                        wsign = False
                        expo[:] = x[31:23]
                        frac[:] = x[23:0]
                        sig[:] = frac
                        if expo != 0:
                            sig[23] = 1
                        shifted[:] = sig << expo
                        mag[:] = shifted[W + 1:1]
                        if expo == 0:
                            mag[23:0] = frac            # a subnormal: sig << 0
                        top[:] = expo + (LOW_FP32 - 1)
                        if fp16:
                            if top < LOW_FP16:
                                top[:] = LOW_FP16
                        elif top < LOW_FP32:
                            top[:] = LOW_FP32
                        seg_index[:] = top[9:LEAD_BITS]
                        lead[:] = top[LEAD_BITS:0]
                        for k in range(NSEG):
                            wide_leads[:] = lead
                            leads[:] = leads | (wide_leads << (LEAD_BITS * k))
                        signs[lane] = x[31]
                    else:
                        # a Kulisch value: |v| = mag + neg with mag = v, or ~v for a negative v
                        v[:] = in_values >> (W * lane)
                        fl[:] = in_flags >> (5 * lane)
                        nan = bool(fl[0])
                        pinf = bool(fl[1])
                        ninf = bool(fl[2])
                        ovf = bool(fl[3])
                        wsign = bool(fl[4])
                        if v[SIGN]:
                            mag[:] = ~v
                        else:
                            mag[:] = v
                        # the leading one of mag with the format's smallest-normal bit set: per segment
                        # whether it holds a one (the highest such is the leading one's) and where
                        marked[:] = mag
                        if fp16:
                            marked[LOW_FP16] = 1
                        else:
                            marked[LOW_FP32] = 1
                        seg_index[:] = 0
                        for k in range(NSEG):
                            seg[:] = marked >> (SEG * k)
                            if seg != 0:
                                seg_index[:] = k
                            lead[:] = 0
                            half[:] = seg[8:0]
                            if seg[16:8] != 0:
                                lead[3] = 1
                                half[:] = seg[16:8]
                            quarter[:] = half[4:0]
                            if half[8:4] != 0:
                                lead[2] = 1
                                quarter[:] = half[8:4]
                            pair[:] = quarter[2:0]
                            if quarter[4:2] != 0:
                                lead[1] = 1
                                pair[:] = quarter[4:2]
                            lead[0] = pair[1]
                            wide_leads[:] = lead
                            leads[:] = leads | (wide_leads << (LEAD_BITS * k))
                        signs[lane] = v[SIGN]
                        negs[lane] = v[SIGN]
                    kind[:] = round_kind(nan, pinf, ninf, ovf, wsign)
                    wide_mag[:] = mag
                    mags[:] = mags | (wide_mag << (W * lane))
                    wide_all_leads[:] = leads
                    all_leads[:] = all_leads | (wide_all_leads << (LEADS * lane))
                    wide_seg[:] = seg_index
                    segs[:] = segs | (wide_seg << (SEG_INDEX_BITS * lane))
                    wide_kind[:] = kind
                    kinds[:] = kinds | (wide_kind << (2 * lane))
                s1_mag.next = mags
                s1_neg.next = negs
                s1_seg.next = segs
                s1_leads.next = all_leads
                s1_sign.next = signs
                s1_kind.next = kinds

    @always(clk.posedge)
    def normalise_stage():
        # the coarse shift (by segment) and the fine one (within it), the sticky bit, the exponent
        mag = modbv(0)[W:]
        bits = modbv(0)[W:]
        ext = intbv(0)[EXT:]
        region = modbv(0)[REGION:]
        shifted = modbv(0)[REGION:]
        seg = modbv(0)[SEG:]
        low = modbv(0)[BELOW:]
        low_mask = modbv(0)[BELOW:]
        seg_index = modbv(0)[SEG_INDEX_BITS:]
        leads = modbv(0)[LEADS:]
        lead = modbv(0)[LEAD_BITS:]
        lead_inv = modbv(0)[LEAD_BITS:]
        seg_index_inv = modbv(0)[SEG_INDEX_BITS:]
        below_mask = modbv(0)[NSEG:]
        keep = intbv(0)[KEEP:]
        place = intbv(0)[9:]
        expo = modbv(0)[9:]
        upper = modbv(0)[UPPER:]
        upper_inv = modbv(0)[UPPER:]
        neg = bool(0)
        sticky = bool(0)
        keeps = intbv(0)[KEEP * lanes:]
        wide_keep = intbv(0)[KEEP * lanes:]
        expos = intbv(0)[9 * lanes:]
        wide_expo = intbv(0)[9 * lanes:]
        stickies = intbv(0)[lanes:]
        int_bytes = intbv(0)[8 * lanes:]
        wide_byte = intbv(0)[8 * lanes:]
        int_guards = intbv(0)[lanes:]
        int_stickies = intbv(0)[lanes:]
        int_anys = intbv(0)[lanes:]
        int_alls = intbv(0)[lanes:]
        if rst:
            s2_valid.next = 0
        else:
            s2_valid.next = s1_valid
            s2_tag.next = s1_tag
            if s1_valid:
                s2_is_fp32.next = s1_format == FMT_FP32
                s2_is_bf16.next = s1_format == FMT_BF16
                s2_is_fp16.next = s1_format == FMT_FP16
                s2_is_int8.next = s1_format == FMT_INT8
                s2_fp32.next = s1_fp32
                s2_sign.next = s1_sign
                s2_kind.next = s1_kind
                s2_neg.next = s1_neg
                keeps[:] = 0
                expos[:] = 0
                stickies[:] = 0
                int_bytes[:] = 0
                int_guards[:] = 0
                int_stickies[:] = 0
                int_anys[:] = 0
                int_alls[:] = 0
                for lane in range(lanes):
                    mag[:] = s1_mag >> (W * lane)
                    neg = bool(s1_neg[lane])
                    seg_index[:] = s1_seg >> (SEG_INDEX_BITS * lane)
                    leads[:] = s1_leads >> (LEADS * lane)
                    lead[:] = leads >> (LEAD_BITS * seg_index)
                    # below bit 0 the magnitude continues with the bits of a negative value's ~v
                    if neg:
                        ext[:] = concat(mag, intbv(PAD_ONES)[2 * SEG:])
                    else:
                        ext[:] = concat(mag, intbv(0)[2 * SEG:])
                    region[:] = ext >> (SEG * seg_index)
                    shifted[:] = region >> lead
                    keep[:] = shifted[KEEP_LOW + KEEP:KEEP_LOW]
                    # sticky: is any bit of v below the kept ones set (|v| = mag + neg has the same
                    # low zeros as v); in the region, then in the segments below it
                    low[:] = region[BELOW:0]
                    if neg:
                        low[:] = low ^ BELOW_ONES
                    # (masks by shifting constants: no adder or comparator on this path)
                    lead_inv[:] = ~lead
                    low_mask[:] = BELOW_ONES >> lead_inv         # bits [KEEP_LOW + lead - 1 : 0]
                    low[:] = low & low_mask
                    sticky = low != 0
                    seg_index_inv[:] = ~seg_index
                    below_mask[:] = BELOW_SEGS_ONES >> seg_index_inv    # segments [seg_index - 3 : 0]
                    for k in range(NSEG - 3):
                        seg[:] = mag >> (SEG * k)
                        if neg:
                            seg[:] = seg ^ 0xFFFF
                        if seg != 0 and below_mask[k]:
                            sticky = True
                    # biased exponent before rounding: (place of the leading one) - (smallest
                    # normal's) + 1, or 0 when the leading one found is only the smallest normal's bit
                    place[:] = concat(seg_index, lead)
                    if s1_format == FMT_FP16:
                        expo[:] = place - (LOW_FP16 - 1)
                    else:
                        expo[:] = place - (LOW_FP32 - 1)
                    if not keep[KEEP - 1]:
                        expo[:] = 0
                    wide_keep[:] = keep
                    keeps[:] = keeps | (wide_keep << (KEEP * lane))
                    wide_expo[:] = expo
                    expos[:] = expos | (wide_expo << (9 * lane))
                    stickies[lane] = sticky
                    # INT8's inputs from v (Kulisch, two's complement) or |x| (FP32)
                    bits[:] = mag
                    if neg:
                        bits[:] = ~mag
                    wide_byte[:] = bits[INT_LOW + 8:INT_LOW]
                    int_bytes[:] = int_bytes | (wide_byte << (8 * lane))
                    int_guards[lane] = bits[INT_LOW - 1]
                    int_stickies[lane] = bits[INT_LOW - 1:0] != 0
                    upper[:] = bits[W:INT_LOW + 8]
                    upper_inv[:] = ~upper
                    int_anys[lane] = upper != 0
                    int_alls[lane] = upper_inv == 0
                s2_keep.next = keeps
                s2_exp.next = expos
                s2_sticky.next = stickies
                s2_int_byte.next = int_bytes
                s2_int_guard.next = int_guards
                s2_int_sticky.next = int_stickies
                s2_int_upper_any.next = int_anys
                s2_int_upper_all.next = int_alls

    @always(clk.posedge)
    def pack_stage():
        # round to nearest even and pack
        keep = modbv(0)[KEEP:]
        expo = modbv(0)[9:]
        kind = modbv(0)[2:]
        low16 = modbv(0)[16:]
        low13 = modbv(0)[13:]
        base = modbv(0)[32:]
        base_up = modbv(0)[32:]
        pattern = modbv(0)[32:]
        byte = modbv(0)[8:]
        byte_up = modbv(0)[8:]
        int_down = modbv(0)[8:]
        int_up_bits = modbv(0)[8:]
        int8 = modbv(0)[8:]
        bits = intbv(0)[32:]
        res = intbv(0)[32 * lanes:]
        lane_bits = intbv(0)[32 * lanes:]
        sign = bool(0)
        neg = bool(0)
        sticky = bool(0)
        carry = bool(0)
        guard = bool(0)
        up = bool(0)
        int_up = bool(0)
        upper_any = bool(0)
        frac_full = bool(0)
        inf_down = bool(0)
        inf_up = bool(0)
        inf = bool(0)
        if rst:
            out_valid.next = 0
        else:
            out_valid.next = s2_valid
            out_tag.next = s2_tag
            if s2_valid:
                res[:] = 0
                for lane in range(lanes):
                    keep[:] = s2_keep >> (KEEP * lane)
                    expo[:] = s2_exp >> (9 * lane)
                    kind[:] = s2_kind >> (2 * lane)
                    sign = bool(s2_sign[lane])
                    neg = bool(s2_neg[lane])
                    sticky = bool(s2_sticky[lane])
                    # |v| = mag + neg: the +1 reaches the kept bits when no bit of v below them is set
                    carry = neg and not sticky
                    bits[:] = 0
                    # the pattern rounded down (base) and up (base + 1) are formed beside the rounding
                    # decision; each one's overflow to infinity is read from its exponent field
                    if s2_is_fp32:
                        guard = bool(keep[0])
                        if carry:
                            up = guard or bool(keep[1])
                        else:
                            up = guard and (sticky or bool(keep[1]))
                        base[:] = concat(expo, keep[KEEP - 1:1])
                        frac_full = keep[KEEP - 1:1] == FRAC_ONES_FP32
                    elif s2_is_bf16:
                        guard = bool(keep[16])
                        low16[:] = keep[16:0]
                        if carry:
                            up = guard or (low16 == 0xFFFF and bool(keep[17]))
                        else:
                            up = guard and (sticky or low16 != 0 or bool(keep[17]))
                        base[:] = concat(expo, keep[KEEP - 1:17])
                        frac_full = keep[KEEP - 1:17] == 0x7F
                    else:
                        guard = bool(keep[13])
                        low13[:] = keep[13:0]
                        if carry:
                            up = guard or (low13 == 0x1FFF and bool(keep[14]))
                        else:
                            up = guard and (sticky or low13 != 0 or bool(keep[14]))
                        base[:] = concat(expo, keep[KEEP - 1:14])
                        frac_full = keep[KEEP - 1:14] == 0x3FF
                    base_up[:] = base + 1
                    if s2_is_fp16:
                        inf_down = expo[9:5] != 0 or expo[5:0] == 31
                        inf_up = inf_down or (expo == 30 and frac_full)
                    else:
                        inf_down = expo[8] or expo[8:0] == 255
                        inf_up = inf_down or (expo == 254 and frac_full)
                    if up:
                        pattern[:] = base_up
                        inf = inf_up
                    else:
                        pattern[:] = base
                        inf = inf_down
                    if s2_is_fp32:
                        if inf:
                            pattern[:] = INF_FP32
                        if kind == KIND_NAN:
                            bits[:] = NAN_FP32
                        elif kind == KIND_POS_INF:
                            bits[:] = INF_FP32
                        elif kind == KIND_NEG_INF:
                            bits[:] = NEG_INF_FP32
                        else:
                            bits[:] = concat(sign, pattern[31:0])
                    elif s2_is_bf16:
                        if inf:
                            pattern[:] = INF_BF16
                        if kind == KIND_NAN:
                            bits[:] = NAN_BF16
                        elif kind == KIND_POS_INF:
                            bits[:] = INF_BF16
                        elif kind == KIND_NEG_INF:
                            bits[:] = NEG_INF_BF16
                        else:
                            bits[:] = concat(sign, pattern[15:0])
                    elif s2_is_fp16:
                        if inf:
                            pattern[:] = INF_FP16
                        if kind == KIND_NAN:
                            bits[:] = NAN_FP16
                        elif kind == KIND_POS_INF:
                            bits[:] = INF_FP16
                        elif kind == KIND_NEG_INF:
                            bits[:] = NEG_INF_FP16
                        else:
                            bits[:] = concat(sign, pattern[15:0])
                    elif s2_is_int8:
                        # round to nearest even at 2^0, saturate to [-128, 127]; the results with the
                        # integer part rounded down (int_down) and up (int_up_bits) are formed beside
                        # the rounding decision
                        byte[:] = s2_int_byte >> (8 * lane)
                        byte_up[:] = byte + 1
                        int_up = bool(s2_int_guard[lane]) and (bool(s2_int_sticky[lane]) or bool(byte[0]))
                        upper_any = bool(s2_int_upper_any[lane])
                        if s2_fp32:
                            # |x| and its sign: -|x| rounded is ~byte + 1 down, ~byte up
                            if sign:
                                if upper_any or (byte[7] and byte[7:0] != 0):
                                    int_down[:] = 0x80
                                else:
                                    int_down[:] = (byte ^ 0xFF) + 1
                                if upper_any or byte[7]:
                                    int_up_bits[:] = 0x80
                                else:
                                    int_up_bits[:] = byte ^ 0xFF
                            else:
                                if upper_any or byte[7]:
                                    int_down[:] = 0x7F
                                else:
                                    int_down[:] = byte
                                if upper_any or byte[7] or byte[7:0] == 0x7F:
                                    int_up_bits[:] = 0x7F
                                else:
                                    int_up_bits[:] = byte_up
                        else:
                            # v in two's complement: the integer part (floor) rounded up, saturated
                            int_down[:] = byte
                            int_up_bits[:] = byte_up
                            if neg:
                                if not (s2_int_upper_all[lane] and byte[7]):
                                    int_down[:] = 0x80
                                    int_up_bits[:] = 0x80
                            else:
                                if upper_any or byte[7]:
                                    int_down[:] = 0x7F
                                    int_up_bits[:] = 0x7F
                                elif byte == 127:
                                    int_up_bits[:] = 0x7F
                        if int_up:
                            int8[:] = int_up_bits
                        else:
                            int8[:] = int_down
                        if kind == KIND_NAN or kind == KIND_NEG_INF:
                            bits[:] = NAN_INT8
                        elif kind == KIND_POS_INF:
                            bits[:] = INF_INT8
                        else:
                            bits[:] = int8
                    lane_bits[:] = bits
                    res[:] = res | (lane_bits << (32 * lane))
                out_bits.next = res

    return magnitude_stage, normalise_stage, pack_stage
