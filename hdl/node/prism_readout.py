"""PRISM read-out: completed ranges -> rounded RESULT tiles (fixed format, AUTO, or exact).

Phase 5 (back) of the SINGLE node.  One completed 16-element range (a tile)
per cycle, fully pipelined, never stalling:

  KULISCH_FIXED (k_*: the merged exact states and flags of a range)
    A: hdl/node/prism_round16.py rounds each element ONCE to the result format;
       EXACT passes the W-bit state and flags through; AUTO rounds to FP32 first;
  FP32_ARRIVAL (f_*: a tile of 16 FP32 sums)
    (no stage A: the sums are already FP32)
  B: (AUTO, or FP32_ARRIVAL with a narrower result) hdl/arith/auto_classifier.py picks
     the tile's narrowest lossless format, then hdl/node/prism_round16.py converts
     each FP32 value to the tile's format (AUTO: lossless by construction;
     FP32_ARRIVAL narrow: the one rounding of the FP32 sum, as golden fp32_to_format).
  Finally lanes beyond the element count E (a final partial range) are zeroed
  and the tile is packed in its format (lane l of a w-bit format at bits
  [w*l + w - 1 : w*l] of `w_packed`), ready to be concatenated into beats.

Each rounder takes ROUND_STAGES = 3 register stages (hdl/node/prism_round16.py:
magnitude and leading-one search | normalising shift | round and pack), so no
path of the rounder is as long as the 60 LUT levels of a one-stage rounder.
Latency: stage A only 4 cycles (k_valid -> w_valid); through stage B 8 cycles
(Kulisch AUTO) or 5 (FP32_ARRIVAL).

Short paths between the stages: stage A's format is a register (out_fmt is
constant while an operation's tiles are read out, and its first tile comes
many cycles after it starts); whether a tile is the final partial range is
decided from its row as it enters stage B's rounder and travels in the
rounder's tag, so the end stage only selects, masks lanes and packs.

Ports (widths from the signals; W = KULISCH_W):
    clk, rst                    clock; synchronous reset
    policy                      0 KULISCH_FIXED, 1 FP32_ARRIVAL (2 bits)
    out_fmt                     result format: 0 INT8, 1 FP16, 2 BF16, 3 FP32, 4 EXACT, 5 AUTO (3 bits)
    count                       element count E of the operation (13 bits)
    k_valid, k_row              merged Kulisch range present, its row (8 bits)
    k_states, k_flags           16 x W states, 16 x 5 flags (prism_kulisch_store's o_states/o_flags)
    k_wraps                     16 x WB wrap counts (the merged range's; EXACT results need them whole)
    f_valid, f_row, f_tile      FP32_ARRIVAL range: 16 x 32-bit sums
    w_valid, w_row              out: a finished tile, its row
    w_packed                    out: 512 bits, the tile packed in its format
    w_fmt                       out: the tile's format code (0..4)
    w_exact                     out: 16 x (WB + 5 + W) bits, lane l = {wraps, flags {wrap_sign, ovf, -inf, +inf,
                                nan}, state}
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, intbv

from hdl.arith.auto_classifier import auto_classifier
from hdl.node.prism_round16 import prism_round16

from spec.formats import FMT_AUTO, FMT_BF16, FMT_FP16, FMT_FP32, FMT_INT8, KULISCH_WIDTHS
from spec.frames import POLICY_KULISCH

LANES = 16
ROUND_STAGES = 3             # register stages of each rounder (prism_round16 STAGES; exact_pass matches it)
ONES512 = (1 << 512) - 1     # a module-level constant: emitted as a sized literal


@block
def prism_readout(clk, rst, policy, out_fmt, count, k_valid, k_row, k_states, k_flags, k_wraps, f_valid, f_row,
                  f_tile, w_valid, w_row, w_packed, w_fmt, w_exact):
    W = len(k_states) // LANES
    if W not in KULISCH_WIDTHS or len(k_states) != W * LANES:
        raise ValueError("prism_readout: k_states is 16 x KULISCH_W (320 or 280) bits")
    WB = len(k_wraps) // LANES
    if len(k_wraps) != WB * LANES or len(w_exact) != LANES * (WB + 5 + W):
        raise ValueError("prism_readout: k_wraps is 16 x WB bits, w_exact 16 x (WB + 5 + KULISCH_W) bits")
    if len(k_flags) != 5 * LANES or len(f_tile) != 512 or len(w_packed) != 512:
        raise ValueError("prism_readout: k_flags 80 bits, f_tile and w_packed 512 bits")
    if len(out_fmt) != 3 or len(w_fmt) != 3 or len(count) != 13:
        raise ValueError("prism_readout: out_fmt and w_fmt 3 bits, count 13 bits")

    def sig(w=None):
        return Signal(bool(0)) if w is None else Signal(intbv(0)[w:])

    insts = []

    # ---- the operation's decodes ----
    # Stage A's format is registered: the operation's formats are constant while its tiles are read
    # out, and its first tile arrives many cycles after it starts (frames are admitted, accumulated
    # and completed first), so the copy one cycle late is read only once it equals out_fmt; the
    # rounder takes its format only with a valid tile.  Initial value: that of out_fmt = 0.
    fmt_a = sig(3)                      # stage A's format: AUTO rounds to FP32 first
    direct, from_k, is_auto = sig(), sig(), sig()
    last_row = sig(9)                   # the final partial range's row, E // 16 (read with drop)
    drop = sig(LANES)                   # lanes of the final partial range beyond E (0 when E % 16 == 0)

    @always(clk.posedge)
    def format_a():
        if out_fmt == FMT_AUTO:
            fmt_a.next = FMT_FP32
        else:
            fmt_a.next = out_fmt

    @always_comb
    def op_decode():
        tail = intbv(0)[5:]
        d = intbv(0)[LANES:]
        # KULISCH_FIXED, not AUTO: stage A's tile is the result; KULISCH_FIXED: stage B reads stage A
        # (else the FP32 sums); AUTO: the tile's format is the classifier's
        direct.next = policy == POLICY_KULISCH and out_fmt != FMT_AUTO
        from_k.next = policy == POLICY_KULISCH
        is_auto.next = out_fmt == FMT_AUTO
        last_row.next = count[13:4]
        tail[:] = count[4:0]
        d[:] = 0
        for l in range(LANES):
            if tail != 0 and l >= tail:
                d[l] = 1
        drop.next = d

    # ---- stage A: Kulisch rounding (one rounding of the merged exact sum) ----
    a_valid, a_tag, a_tile = sig(), sig(8), sig(512)
    no = Signal(bool(0))
    zero512 = sig(512)
    insts.append(prism_round16(clk, rst, k_valid, no, k_states, k_flags, zero512, fmt_a, k_row,
                               a_valid, a_tile, a_tag, STAGES=ROUND_STAGES))
    # EXACT: wraps, flags {wrap_sign, ovf, -inf, +inf, nan} and state pass through (the result
    # sender rebuilds the exact sum from the state and the wraps)
    exact_in = ConcatSignal(*[s for lane in reversed(range(LANES))
                              for s in (k_wraps(WB * lane + WB, WB * lane), k_flags(5 * lane + 5, 5 * lane),
                                        k_states(W * lane + W, W * lane))])
    a_exact = sig(LANES * (WB + 5 + W))
    # EXACT's pass-through waits as long as the rounder beside it (ROUND_STAGES registers)
    exact_d1, exact_d2 = sig(LANES * (WB + 5 + W)), sig(LANES * (WB + 5 + W))

    # ---- stage B: AUTO classifier + FP32 -> format ----
    b_in_valid, b_in_tile, b_in_keep = sig(), sig(512), sig(16)
    b_in_ready = sig()
    c_tile, c_keep, c_fmt, c_valid = sig(512), sig(16), sig(2), sig()
    c_row = sig(8)
    c_last = sig()                      # c_row is the final partial range
    one = Signal(bool(1))
    insts.append(auto_classifier(clk, rst, b_in_tile, b_in_keep, b_in_valid, b_in_ready,
                                 c_tile, c_keep, c_fmt, c_valid, one))
    fmt_b = sig(3)
    # stage B's tag: {final partial range, format (3 bits), row (8 bits)}
    b_valid, b_tag, b_tag_in, b_tile = sig(), sig(12), sig(12), sig(512)
    zero_values, zero_flags = sig(LANES * W), sig(80)
    insts.append(prism_round16(clk, rst, c_valid, one, zero_values, zero_flags, c_tile, fmt_b, b_tag_in,
                               b_valid, b_tile, b_tag, STAGES=ROUND_STAGES))

    # ---- final select, tail mask, packing ----
    final_tile = sig(512)
    final_valid, final_row, final_fmt = sig(), sig(8), sig(3)
    packed16 = ConcatSignal(intbv(0)[256:], *[final_tile(32 * l + 16, 32 * l) for l in reversed(range(LANES))])
    packed8 = ConcatSignal(intbv(0)[384:], *[final_tile(32 * l + 8, 32 * l) for l in reversed(range(LANES))])

    @always_comb
    def select_b():
        t = intbv(0)[12:]
        # lanes beyond E in a final partial range hold no element: the classifier ignores them
        if from_k:
            b_in_valid.next = a_valid and is_auto
            b_in_tile.next = a_tile
            if a_tag == last_row:
                b_in_keep.next = drop ^ 0xFFFF
            else:
                b_in_keep.next = 0xFFFF
        else:
            b_in_valid.next = f_valid
            b_in_tile.next = f_tile
            if f_row == last_row:
                b_in_keep.next = drop ^ 0xFFFF
            else:
                b_in_keep.next = 0xFFFF
        if is_auto:
            fmt_b.next = c_fmt
        else:
            fmt_b.next = out_fmt
        t[8:0] = c_row
        if is_auto:
            t[11:8] = c_fmt
        else:
            t[11:8] = out_fmt
        t[11] = c_last
        b_tag_in.next = t

    @always(clk.posedge)
    def exact_pass():
        exact_d1.next = exact_in
        exact_d2.next = exact_d1
        a_exact.next = exact_d2

    @always(clk.posedge)
    def classifier_row():
        # the classifier has one register stage and never stalls here: carry the row beside it
        if from_k:
            c_row.next = a_tag
            c_last.next = a_tag == last_row
        else:
            c_row.next = f_row
            c_last.next = f_row == last_row

    zero = sig(LANES)                   # lanes zeroed: beyond E in the final partial range
    zero_bits = ConcatSignal(*[zero(l) for l in reversed(range(LANES)) for _ in range(32)])

    @always_comb
    def finish():
        if direct:
            final_row.next = a_tag
            final_valid.next = a_valid
            final_fmt.next = out_fmt
            if a_tag == last_row:
                zero.next = drop
            else:
                zero.next = 0
        else:
            final_row.next = b_tag[8:0]
            final_valid.next = b_valid
            final_fmt.next = b_tag[11:8]
            if b_tag[11]:
                zero.next = drop
            else:
                zero.next = 0

    @always_comb
    def masked():
        if direct:
            final_tile.next = a_tile & (zero_bits ^ ONES512)
        else:
            final_tile.next = b_tile & (zero_bits ^ ONES512)

    @always(clk.posedge)
    def write():
        if rst:
            w_valid.next = 0
        else:
            w_valid.next = final_valid
            w_row.next = final_row
            w_fmt.next = final_fmt
            w_exact.next = a_exact
            if final_fmt == FMT_INT8:
                w_packed.next = packed8
            elif final_fmt == FMT_FP16 or final_fmt == FMT_BF16:
                w_packed.next = packed16
            else:
                w_packed.next = final_tile

    insts += [format_a, op_decode, select_b, exact_pass, classifier_row, finish, masked, write]
    return insts
