"""Sixteen-lane rounding stage of the node's read-out: one tile per cycle, one process.

Rounds the 16 elements of a tile to one result format (INT8 / FP16 / BF16 / FP32).
The arithmetic is the one of hdl/arith/kulisch_round.py and hdl/arith/fp32_round.py (and
golden.arith.formats.round_exact / fp32_to_format); this block applies it to 16
lanes in a single clocked process with a constant-bound loop, because the
node's read-out needs a whole tile per cycle and 16 x 2 separately
instantiated rounders make the node's elaboration and MyHDL simulation several
times slower (one MyHDL process per pipeline step and lane).

Input per lane, one of (`from_fp32`):
  0  exact value: W-bit two's-complement Kulisch state (LSB weight 2^-149) with
     flags {wrap_sign, overflow, -inf, +inf, nan} (prism_kulisch_store o_flags);
  1  an FP32 pattern (lane l of `in_fp32`), decoded exactly (its term, its
     specials; the sign of a zero is kept).
Rules: round to nearest, ties to even; floats overflow to +-inf; subnormals
kept; a negative value too small for the format rounds to -0, an exact zero
of the Kulisch path to +0; INT8 rounds to the nearest-even integer and
saturates to [-128, 127].  Specials in priority order: NaN, or +inf with -inf
-> canonical NaN (FP32 0x7FC00000, BF16 0x7FC0, FP16 0x7E00, INT8 0x80); +inf,
-inf -> the infinity (INT8 0x7F / 0x80); overflow (the true sum is beyond
2^(W-1-149) >= 2^130) -> -inf if wrap_sign else +inf (INT8 saturates).

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

from spec.formats import (FMT_BF16, FMT_FP32, FMT_INT8, INF_BF16, INF_FP16, INF_FP32, INF_INT8,
                          KULISCH_LSB_EXP, NAN_BF16, NAN_FP16, NAN_FP32, NAN_INT8, NEG_INF_INT8,
                          SIGN_BF16, SIGN_FP16, SIGN_FP32)

LANES = 16
LSB_SHIFT = -KULISCH_LSB_EXP   # bit index of 2^0 in the Kulisch state (149)


@block
def prism_round16(clk, rst, in_valid, from_fp32, in_values, in_flags, in_fp32, in_format, in_tag,
                  out_valid, out_bits, out_tag):
    W = len(in_values) // LANES
    if W * LANES != len(in_values) or not 278 <= W <= 512:
        raise ValueError(f"prism_round16: in_values is {len(in_values)} bits; it must be 16 x W, 278 <= W <= 512")
    if len(in_flags) != 5 * LANES or len(in_fp32) != 512 or len(out_bits) != 512:
        raise ValueError("prism_round16: in_flags 80 bits, in_fp32 and out_bits 512 bits")
    if len(in_format) != 3 or len(out_tag) != len(in_tag):
        raise ValueError("prism_round16: in_format is 3 bits; out_tag as wide as in_tag")
    SIGN = W - 1

    @always(clk.posedge)
    def step():
        v = modbv(0)[W:]
        mag = modbv(0)[W:]
        n = modbv(0)[W:]
        q = modbv(0)[W:]
        rem = modbv(0)[W:]
        half = modbv(0)[W:]
        one = modbv(0)[W:]
        fl = modbv(0)[5:]
        x = modbv(0)[32:]
        sig24 = intbv(0)[24:]
        ex = intbv(0)[9:]
        z = intbv(0)[10:]
        p = intbv(0)[10:]
        shift = intbv(0)[10:]
        base = intbv(0)[10:]
        bits = modbv(0)[32:]
        res = intbv(0)[512:]
        lane_bits = intbv(0)[512:]
        m = intbv(0)[5:]
        lsb = intbv(0)[8:]
        inf_pat = intbv(0)[32:]
        nan_pat = intbv(0)[32:]
        sign_bit = intbv(0)[32:]
        sign = bool(0)
        nan = bool(0)
        pinf = bool(0)
        ninf = bool(0)
        ovf = bool(0)
        wsign = bool(0)
        negz = bool(0)
        up = bool(0)
        if rst:
            out_valid.next = 0
        else:
            out_valid.next = in_valid
            out_tag.next = in_tag
            if in_valid:
                # format parameters: significand bits, exponent of the smallest subnormal's LSB
                # relative to 2^-149, the infinity / canonical NaN / sign patterns
                if in_format == FMT_FP32:
                    m[:] = 23
                    lsb[:] = 0
                    inf_pat[:] = INF_FP32
                    nan_pat[:] = NAN_FP32
                    sign_bit[:] = SIGN_FP32
                elif in_format == FMT_BF16:
                    m[:] = 7
                    lsb[:] = 16
                    inf_pat[:] = INF_BF16
                    nan_pat[:] = NAN_BF16
                    sign_bit[:] = SIGN_BF16
                else:
                    m[:] = 10
                    lsb[:] = 125
                    inf_pat[:] = INF_FP16
                    nan_pat[:] = NAN_FP16
                    sign_bit[:] = SIGN_FP16
                res[:] = 0
                for lane in range(LANES):
                    negz = False
                    if from_fp32:
                        x[:] = in_fp32 >> (32 * lane)
                        sign = bool(x[31])
                        ex[:] = x[31:23]
                        nan = ex == 255 and x[23:0] != 0
                        pinf = ex == 255 and x[23:0] == 0 and not sign
                        ninf = ex == 255 and x[23:0] == 0 and sign
                        ovf = False
                        wsign = False
                        negz = x == 0x80000000
                        sig24[:] = x[23:0]
                        if ex == 0:
                            ex[:] = 1
                        else:
                            sig24[23] = 1
                        if ex == 255:
                            mag[:] = 0
                        else:
                            mag[:] = sig24 << (ex - 1)
                    else:
                        v[:] = in_values >> (W * lane)
                        fl[:] = in_flags >> (5 * lane)
                        nan = bool(fl[0])
                        pinf = bool(fl[1])
                        ninf = bool(fl[2])
                        ovf = bool(fl[3])
                        wsign = bool(fl[4])
                        sign = bool(v[SIGN])
                        if sign:
                            mag[:] = ~v + 1
                        else:
                            mag[:] = v
                    # leading one, loop-free: n = mag << z with n's top bit set (mag != 0)
                    n[:] = mag
                    z[:] = 0
                    if n[W:W - 256] == 0:
                        n[:] = n << 256
                        z[:] = z + 256
                    if n[W:W - 128] == 0:
                        n[:] = n << 128
                        z[:] = z + 128
                    if n[W:W - 64] == 0:
                        n[:] = n << 64
                        z[:] = z + 64
                    if n[W:W - 32] == 0:
                        n[:] = n << 32
                        z[:] = z + 32
                    if n[W:W - 16] == 0:
                        n[:] = n << 16
                        z[:] = z + 16
                    if n[W:W - 8] == 0:
                        n[:] = n << 8
                        z[:] = z + 8
                    if n[W:W - 4] == 0:
                        n[:] = n << 4
                        z[:] = z + 4
                    if n[W:W - 2] == 0:
                        n[:] = n << 2
                        z[:] = z + 2
                    if n[W:W - 1] == 0:
                        z[:] = z + 1
                    # the rounding position
                    if in_format == FMT_INT8:
                        shift[:] = LSB_SHIFT
                        base[:] = 0
                    else:
                        p[:] = 0
                        if z < W:
                            p[:] = SIGN - z
                        if p >= m + lsb:
                            shift[:] = p - m
                            base[:] = p - m - lsb
                        else:
                            shift[:] = lsb
                            base[:] = 0
                    q[:] = mag >> shift
                    up = False
                    if shift != 0:
                        one[:] = 1
                        rem[:] = mag & ((one << shift) - 1)
                        half[:] = one << (shift - 1)
                        up = rem > half or (rem == half and q[0])
                    if up:
                        q[:] = q + 1
                    if in_format == FMT_INT8:
                        if nan or (pinf and ninf):
                            bits[:] = NAN_INT8
                        elif pinf:
                            bits[:] = INF_INT8
                        elif ninf:
                            bits[:] = NEG_INF_INT8
                        elif ovf:
                            if wsign:
                                bits[:] = 0x80
                            else:
                                bits[:] = 0x7F
                        elif sign:
                            if q >= 128:
                                bits[:] = 0x80
                            else:
                                bits[:] = (0x100 - q[8:0]) & 0xFF
                        else:
                            if q >= 127:
                                bits[:] = 0x7F
                            else:
                                bits[:] = q[8:0]
                    elif in_format > FMT_FP32:
                        bits[:] = 0
                    else:
                        if nan or (pinf and ninf):
                            bits[:] = nan_pat
                        elif pinf:
                            bits[:] = inf_pat
                        elif ninf:
                            bits[:] = inf_pat | sign_bit
                        elif ovf:
                            if wsign:
                                bits[:] = inf_pat | sign_bit
                            else:
                                bits[:] = inf_pat
                        else:
                            if q[W:32] != 0:
                                bits[:] = inf_pat
                            else:
                                bits[:] = (base << m) + q[32:0]
                                if bits >= inf_pat:
                                    bits[:] = inf_pat
                            if sign or negz:
                                bits[:] = bits | sign_bit
                    lane_bits[:] = bits
                    res[:] = res | (lane_bits << (32 * lane))
                out_bits.next = res

    return step
