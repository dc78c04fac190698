"""Sixteen-lane rounding stage of the node's read-out: one tile per cycle, one process.

Rounds the 16 elements of a tile to one result format (INT8 / FP16 / BF16 / FP32).
The arithmetic is not written here: each lane calls the MyHDL functions of the
unit-tested blocks, which convert to Verilog functions --
hdl/arith/number_decoder.py (element_fields, term_function: an FP32 input's
exact term) and hdl/arith/kulisch_round.py (rounder_functions: magnitude,
normalise, INT8 rounding, round and pack; round_kind), so this block computes
exactly what hdl/arith/kulisch_round.py and hdl/arith/fp32_round.py compute
(and golden.arith.formats.round_exact / fp32_to_format).  It applies them to 16
lanes in a single clocked process with a constant-bound loop, because the
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

Latency 1 (registered outputs).  Formats 4 (EXACT) and up give 0.

Ports (widths from the signals; W = len(in_values) / 16):
    clk, rst            clock; synchronous reset (clears out_valid)
    in_valid            a tile is presented (always accepted)
    from_fp32           lanes come from in_fp32 instead of in_values/in_flags
    in_values           16 x W bits, lane l at [W*l + W - 1 : W*l]
    in_flags            16 x 5 bits, lane l at [5l+4:5l] = {wrap_sign, overflow, -inf, +inf, nan}
    in_fp32             16 x 32-bit FP32 patterns (512 bits)
    in_format           result format code (3 bits)
    in_tag              side-band value carried with the tile (any width)
    out_valid           out: in_valid one cycle later
    out_bits            out: 16 x 32 bits, lane l's rounded pattern right-aligned at [32l+31:32l]
    out_tag             out: in_tag of that tile
"""
from myhdl import always, block, intbv, modbv

from hdl.arith.kulisch_round import MAX_WIDTH, MIN_WIDTH, NORM_WIDTH, round_kind, rounder_functions
from hdl.arith.number_decoder import (FIELD_NAN, FIELD_NEG_INF, FIELD_POS_INF, FIELDS_WIDTH, FMT_FP32,
                                      element_fields, term_function)

LANES = 16


@block
def prism_round16(clk, rst, in_valid, from_fp32, in_values, in_flags, in_fp32, in_format, in_tag,
                  out_valid, out_bits, out_tag):
    W = len(in_values) // LANES
    if W * LANES != len(in_values) or not MIN_WIDTH <= W <= MAX_WIDTH:
        raise ValueError(f"prism_round16: in_values is {len(in_values)} bits; it must be 16 x W, "
                         f"{MIN_WIDTH} <= W <= {MAX_WIDTH}")
    if len(in_flags) != 5 * LANES or len(in_fp32) != 512 or len(out_bits) != 512:
        raise ValueError("prism_round16: in_flags 80 bits, in_fp32 and out_bits 512 bits")
    if len(in_format) != 3 or len(out_tag) != len(in_tag):
        raise ValueError("prism_round16: in_format is 3 bits; out_tag as wide as in_tag")
    SIGN = W - 1
    kulisch_term = term_function(W)
    fn = rounder_functions(W)
    value_magnitude, normalise_top, round_int8, pack_result = fn.magnitude, fn.normalise, fn.round_int8, fn.pack

    @always(clk.posedge)
    def round_tile():
        v = modbv(0)[W:]
        mag = intbv(0)[W:]
        fl = modbv(0)[5:]
        x = modbv(0)[32:]
        fmt32 = intbv(FMT_FP32)[2:]
        f = intbv(0)[FIELDS_WIDTH:]
        norm = intbv(0)[NORM_WIDTH:]
        kind = intbv(0)[2:]
        int8 = modbv(0)[8:]
        bits = intbv(0)[32:]
        res = intbv(0)[512:]
        lane_bits = intbv(0)[512:]
        sign = bool(0)
        nan = bool(0)
        pinf = bool(0)
        ninf = bool(0)
        ovf = bool(0)
        wsign = bool(0)
        if rst:
            out_valid.next = 0
        else:
            out_valid.next = in_valid
            out_tag.next = in_tag
            if in_valid:
                res[:] = 0
                for lane in range(LANES):
                    if from_fp32:
                        # as hdl/arith/fp32_round.py: the FP32 value's exact term; the sign of a zero
                        # comes from the pattern (the term of -0.0 is 0)
                        x[:] = in_fp32 >> (32 * lane)
                        fmt32[:] = FMT_FP32
                        f[:] = element_fields(x, fmt32)
                        v[:] = kulisch_term(f)
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
                    kind[:] = round_kind(nan, pinf, ninf, ovf, wsign)
                    mag[:] = value_magnitude(v)
                    norm[:] = normalise_top(mag, in_format)
                    int8[:] = round_int8(mag, sign)
                    bits[:] = pack_result(norm, sign, kind, in_format, int8)
                    lane_bits[:] = bits
                    res[:] = res | (lane_bits << (32 * lane))
                out_bits.next = res

    return round_tile
