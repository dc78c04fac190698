"""Sixteen-lane rounding stage of the node's read-out: one tile per cycle, three register stages.

Rounds the 16 elements of a tile to one result format (INT8 / FP16 / BF16 / FP32).
The arithmetic is not written here: each lane calls the MyHDL functions of the
unit-tested blocks, which convert to Verilog functions --
hdl/arith/number_decoder.py (element_fields, magnitude_function: an FP32 input's
exact term's magnitude) and hdl/arith/kulisch_round.py (rounder_functions: magnitude,
normalise, INT8 rounding, round and pack; round_kind), so this block computes
exactly what hdl/arith/kulisch_round.py and hdl/arith/fp32_round.py compute
(and golden.arith.formats.round_exact / fp32_to_format).  It applies them to 16
lanes in one clocked process per stage with a constant-bound loop, because the
node's read-out needs a whole tile per cycle and 16 x 2 separately
instantiated rounders make the node's elaboration and MyHDL simulation several
times slower (one MyHDL process per pipeline step and lane).

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
outputs).  Formats 4 (EXACT) and up give 0.  The lane's path is split at two register stages
(docs/hdl_sizes.md, "Logic depth per stage", gives what each costs):
    decode + magnitude | normalise + INT8 rounding | round and pack
A reset clears the tiles in flight.  (One- and two-stage forms were measured there and
removed, the node using neither: the git history has them.)

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
from myhdl import Signal, always, block, intbv, modbv

from hdl.arith.kulisch_round import MAX_WIDTH, NORM_WIDTH, round_kind, rounder_functions
from hdl.arith.number_decoder import (FIELD_NAN, FIELD_NEG_INF, FIELD_POS_INF, FIELDS_WIDTH, FMT_FP32,
                                      element_fields, magnitude_function)
from spec.formats import KULISCH_MIN_WIDTH

LANES = 16
STAGE_CHOICES = (3,)        # register stages (the read-out passes its ROUND_STAGES)


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
    term_magnitude = magnitude_function(W)
    fn = rounder_functions(W)
    value_magnitude, normalise_top, round_int8, pack_result = fn.magnitude, fn.normalise, fn.round_int8, fn.pack

    # The lanes' intermediate results in registers.
    # Stage 1 -> 2: each lane's magnitude, sign and special-case kind.
    s1_valid = Signal(bool(0))
    s1_tag = Signal(intbv(0)[len(in_tag):])
    s1_format = Signal(intbv(0)[3:])
    s1_mag = Signal(intbv(0)[W * lanes:])
    s1_sign = Signal(intbv(0)[lanes:])
    s1_kind = Signal(intbv(0)[2 * lanes:])
    # Stage 2 -> 3: each lane's normalised top bits and its INT8 result.
    s2_valid = Signal(bool(0))
    s2_tag = Signal(intbv(0)[len(in_tag):])
    s2_format = Signal(intbv(0)[3:])
    s2_norm = Signal(intbv(0)[NORM_WIDTH * lanes:])
    s2_int8 = Signal(intbv(0)[8 * lanes:])
    s2_sign = Signal(intbv(0)[lanes:])
    s2_kind = Signal(intbv(0)[2 * lanes:])

    @always(clk.posedge)
    def magnitude_stage():
        v = modbv(0)[W:]
        mag = intbv(0)[W:]
        fl = modbv(0)[5:]
        x = modbv(0)[32:]
        fmt32 = intbv(FMT_FP32)[2:]
        f = intbv(0)[FIELDS_WIDTH:]
        kind = intbv(0)[2:]
        wide_mag = intbv(0)[W * lanes:]
        wide_kind = intbv(0)[2 * lanes:]
        mags = intbv(0)[W * lanes:]
        kinds = intbv(0)[2 * lanes:]
        signs = intbv(0)[lanes:]
        sign = bool(0)
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
                mags[:] = 0
                kinds[:] = 0
                signs[:] = 0
                for lane in range(lanes):
                    if from_fp32:
                        # as hdl/arith/fp32_round.py: the FP32 value's exact term; the sign of a zero
                        # comes from the pattern (the term of -0.0 is 0)
                        x[:] = in_fp32 >> (32 * lane)
                        fmt32[:] = FMT_FP32
                        f[:] = element_fields(x, fmt32)
                        mag[:] = term_magnitude(f)          # |term|: its sign is the pattern's
                        nan = bool(f[FIELD_NAN])
                        pinf = bool(f[FIELD_POS_INF])
                        ninf = bool(f[FIELD_NEG_INF])
                        ovf = False
                        wsign = False
                        sign = bool(x[31])
                    else:
                        v[:] = in_values >> (W * lane)
                        fl[:] = in_flags >> (5 * lane)
                        nan = bool(fl[0])
                        pinf = bool(fl[1])
                        ninf = bool(fl[2])
                        ovf = bool(fl[3])
                        wsign = bool(fl[4])
                        sign = bool(v[SIGN])
                        mag[:] = value_magnitude(v)
                    kind[:] = round_kind(nan, pinf, ninf, ovf, wsign)
                    wide_mag[:] = mag
                    mags[:] = mags | (wide_mag << (W * lane))
                    wide_kind[:] = kind
                    kinds[:] = kinds | (wide_kind << (2 * lane))
                    signs[lane] = sign
                s1_mag.next = mags
                s1_kind.next = kinds
                s1_sign.next = signs

    @always(clk.posedge)
    def normalise_stage():
        # normalise and round to INT8 into the second register stage
        mag = modbv(0)[W:]
        norm = intbv(0)[NORM_WIDTH:]
        int8 = modbv(0)[8:]
        wide_norm = intbv(0)[NORM_WIDTH * lanes:]
        wide_int8 = intbv(0)[8 * lanes:]
        norms = intbv(0)[NORM_WIDTH * lanes:]
        int8s = intbv(0)[8 * lanes:]
        sign = bool(0)
        if rst:
            s2_valid.next = 0
        else:
            s2_valid.next = s1_valid
            s2_tag.next = s1_tag
            if s1_valid:
                s2_format.next = s1_format
                s2_sign.next = s1_sign
                s2_kind.next = s1_kind
                norms[:] = 0
                int8s[:] = 0
                for lane in range(lanes):
                    mag[:] = s1_mag >> (W * lane)
                    sign = bool(s1_sign[lane])
                    norm[:] = normalise_top(mag, s1_format)
                    int8[:] = round_int8(mag, sign)
                    wide_norm[:] = norm
                    norms[:] = norms | (wide_norm << (NORM_WIDTH * lane))
                    wide_int8[:] = int8
                    int8s[:] = int8s | (wide_int8 << (8 * lane))
                s2_norm.next = norms
                s2_int8.next = int8s

    @always(clk.posedge)
    def pack_stage():
        # round and pack from the second register stage
        norm = modbv(0)[NORM_WIDTH:]
        kind = modbv(0)[2:]
        int8 = modbv(0)[8:]
        bits = intbv(0)[32:]
        res = intbv(0)[32 * lanes:]
        lane_bits = intbv(0)[32 * lanes:]
        sign = bool(0)
        if rst:
            out_valid.next = 0
        else:
            out_valid.next = s2_valid
            out_tag.next = s2_tag
            if s2_valid:
                res[:] = 0
                for lane in range(lanes):
                    norm[:] = s2_norm >> (NORM_WIDTH * lane)
                    kind[:] = s2_kind >> (2 * lane)
                    int8[:] = s2_int8 >> (8 * lane)
                    sign = bool(s2_sign[lane])
                    bits[:] = pack_result(norm, sign, kind, s2_format, int8)
                    lane_bits[:] = bits
                    res[:] = res | (lane_bits << (32 * lane))
                out_bits.next = res

    return magnitude_stage, normalise_stage, pack_stage
