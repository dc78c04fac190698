"""Pipelined IEEE 754 binary32 adder: round to nearest even, subnormals kept.

The FP32_ARRIVAL banks add every admitted contribution into their running FP32
sum through this unit: one addition is accepted per cycle and its result leaves
exactly LATENCY cycles later, with the caller's tag beside it (so a bank can
route the sum back to the element it belongs to without a side FIFO).

Arithmetic (bit-exact with IEEE 754-2008 addition, roundTiesToEven):
  * subnormal operands and results are kept (no flush-to-zero, no
    denormals-are-zero); overflow rounds to +-inf;
  * x + (-x) = +0 and (+0) + (-0) = +0, but (-0) + (-0) = -0;
  * a NaN operand or inf - inf gives the canonical quiet NaN 0x7FC00000
    (payloads are not propagated); inf + finite keeps the infinity.
No exception flags are produced (the node has no consumer for them).

Datapath, four logical steps (one process each with sized variables; which of them end in
a register is set by LATENCY, the rest are combinational):
  1. unpack + align: classify the operands (NaN/inf give the special result);
     shift each significand right by its distance below the other one's
     exponent, and find each one's sticky bit (a set bit shifted out), all
     side by side with the magnitude comparison, which then picks the larger
     operand and the other one's shifted significand, 24+3 bits (guard, round,
     sticky).  The distance comes from the raw exponent fields: a subnormal
     beside a normal operand is shifted one too far, and step 2 shifts it back;
  2. add: 28-bit significand add or subtract (never negative: |big| >= |small|),
     and the sum's leading-zero count from the carry position, stopped at the
     larger exponent (a one ORed in at bit 27 - exponent) so the exponent never
     goes below 1;
  3. normalise: one left shift by that count (a count of 0 is a carry: the
     dropped bit stays in the sticky LSB), so subnormal results come out
     unnormalised; the exponent field (exponent + 1 - count, less one without
     the hidden bit) beside the fraction, the round-up bit and an overflow flag;
  4. round + pack: {exponent field, fraction} + round-up, so a rounding carry
     moves into the exponent (the largest finite value rounds up to exactly
     0x7F800000, inf); specials, overflow and exact zeros chosen last.
At LATENCY 4 every step is at most 7 LUT levels in the node's FP32 bank (`prism synth`),
without a fifth register: the leading-zero count is a parallel one-hot
encoding rather than a chain of shifts, and no carry chain's output (which
yosys' abc treats as arriving at the start of the cycle) feeds more than a few
levels of logic.

LATENCY (cycles from in_valid to out_valid; registers after steps):
    4: 1 | 2 | 3 | 4        (default; shortest logic per cycle)
    3: 1 | 2+3 | 4
    2: 1+2 | 3+4
    1: 1+2+3+4              (a registered output only)
Other values raise ValueError.

Ports (widths come from the signals passed in):
    clk          clock
    rst          synchronous reset (either polarity; asynchronous is rejected);
                 clears the valid flags only, data registers are not reset
    in_valid     an addition is presented this cycle (always accepted)
    in_a, in_b   operands, binary32 bit patterns (32 bits each)
    in_tag       caller's side-band value carried with the addition (any width)
    out_valid    out: a result is present (in_valid delayed by LATENCY cycles)
    out_result   out: in_a + in_b, binary32 bit pattern (32 bits)
    out_tag      out: in_tag of that addition (width of in_tag)
There is no backpressure: the unit never stalls, a caller that must stall
holds its additions back (gaps in in_valid are allowed anywhere).
"""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

from hdl.arith.ports import check_widths
from spec.formats import INF_FP32, NAN_FP32

# Register placement per LATENCY: True = the step ends in a pipeline register.
STAGE_REGISTERS = {
    4: (True, True, True, True),
    3: (True, False, True, True),
    2: (False, True, False, True),
    1: (False, False, False, True),
}


@block
def fp32_add(clk, rst, in_valid, in_a, in_b, in_tag, out_valid, out_result, out_tag, LATENCY=4):
    if LATENCY not in STAGE_REGISTERS:
        raise ValueError(f"fp32_add: LATENCY={LATENCY!r} is not supported; choose one of "
                         f"{sorted(STAGE_REGISTERS)}")
    check_widths("fp32_add", ("in_a", in_a, 32), ("in_b", in_b, 32), ("out_result", out_result, 32))
    if len(in_tag) != len(out_tag):
        raise ValueError(f"fp32_add: in_tag is {len(in_tag)} bits, out_tag {len(out_tag)}; they must match")
    tag_width = len(in_tag)
    if tag_width < 1:
        raise ValueError("fp32_add: in_tag must be at least 1 bit wide")
    if getattr(rst, "isasync", False):
        raise ValueError("fp32_add: rst must be a synchronous reset (ResetSignal(..., isasync=False))")
    # only the valid flags are reset; data registers just follow (cheaper flops)
    RESET_ACTIVE = int(getattr(rst, "active", 1))

    # side-band fields that travel with an addition unchanged: {zero_sign, sign, special_nan, special, tag}
    SPECIAL, SPECIAL_NAN, SIGN, ZERO_SIGN = tag_width, tag_width + 1, tag_width + 2, tag_width + 3
    SIDE_W = tag_width + 4
    # bit k of a 32-bit one-hot's position: where the leading one is (normalising shift)
    LZ_MASKS = [sum(1 << i for i in range(32) if i >> k & 1) for k in range(5)]
    LZ0, LZ1, LZ2, LZ3, LZ4 = LZ_MASKS
    # a one at bit 27 - exp (the sum's bit 27 is the carry) stops the leading-zero count at exp:
    # the normalised exponent exp + 1 - count never goes below 1
    STOP_TOP = 1 << 27

    def side_signal():
        return Signal(intbv(0)[SIDE_W:])

    # step 1 -> 2
    s1_valid, s1_side, s1_subtract = Signal(bool(0)), side_signal(), Signal(bool(0))
    s1_exp = Signal(intbv(0)[8:])
    s1_big, s1_small = Signal(intbv(0)[27:]), Signal(intbv(0)[27:])
    s1_sticky, s1_pre = Signal(bool(0)), Signal(bool(0))
    # step 2 -> 3
    s2_valid, s2_side = Signal(bool(0)), side_signal()
    s2_exp = Signal(intbv(0)[8:])
    s2_sum = Signal(intbv(0)[28:])
    s2_lz = Signal(intbv(0)[5:])
    # step 3 -> 4
    s3_valid, s3_side, s3_zero = Signal(bool(0)), side_signal(), Signal(bool(0))
    s3_bits = Signal(intbv(0)[31:])          # {exponent field, fraction} before rounding
    s3_round_up, s3_overflow = Signal(bool(0)), Signal(bool(0))

    regs = STAGE_REGISTERS[LATENCY]
    # A registered step computes only when its input is valid (1 = gated): the simulators run
    # every clocked process at every edge, and an idle lane then costs one test per step.
    # A combinational step must always compute (0: no gate, no latch).
    G1, G2, G3, G4 = (int(r) for r in regs)

    # Each step creates its variables inside its gate: the converted process then initialises
    # them only when the step computes (an idle step costs the simulators a test, not ~10 stores).
    def unpack_align():
        s1_valid.next = bool(in_valid) and rst != RESET_ACTIVE
        if in_valid or not G1:
            a = intbv(0)[32:]
            b = intbv(0)[32:]
            exp_a = intbv(0)[8:]
            exp_b = intbv(0)[8:]
            gen_ab = modbv(0)[8:]
            gen_ba = modbv(0)[8:]
            prop = modbv(0)[8:]
            prop2 = modbv(0)[8:]
            diff_ab = modbv(0)[8:]
            diff_ba = modbv(0)[8:]
            sig_a = intbv(0)[27:]
            sig_b = intbv(0)[27:]
            below_a = modbv(0)[32:]
            below_b = modbv(0)[32:]
            shifted_a = intbv(0)[27:]
            shifted_b = intbv(0)[27:]
            exp_big = intbv(0)[8:]
            exp_a1 = intbv(0)[8:]
            exp_b1 = intbv(0)[8:]
            order = modbv(0)[32:]
            pick_a = intbv(0)[27:]
            pick_b = intbv(0)[27:]
            sig_big = intbv(0)[27:]
            aligned = intbv(0)[27:]
            sign = False
            sticky = False
            a[:] = in_a
            b[:] = in_b
            a_inf_or_nan = a[31:23] == 0xFF
            b_inf_or_nan = b[31:23] == 0xFF
            a_nan = a_inf_or_nan and a[23:0] != 0
            b_nan = b_inf_or_nan and b[23:0] != 0
            # an infinite result has the sign of the larger-magnitude operand (the infinity)
            special = a_inf_or_nan or b_inf_or_nan
            special_nan = a_nan or b_nan or (a_inf_or_nan and b_inf_or_nan and a[31] != b[31])
            # Each operand is aligned, and its sticky found, as though it were the smaller one,
            # side by side with the magnitude comparison that then picks one of the two.  The
            # exponent differences and the comparison are written as plain logic, not as '-' or
            # '>': yosys would map those to carry chains, whose outputs abc takes as arriving at
            # the start of the cycle, and it then puts the shifters and the choice after them.
            exp_a[:] = a[31:23]
            exp_b[:] = b[31:23]
            # exp_a - exp_b and exp_b - exp_a (mod 256; the one that is negative is not used), each
            # as x + ~y + 1 with parallel-prefix carries
            gen_ab[:] = exp_a & (exp_b ^ 0xFF)
            gen_ba[:] = exp_b & (exp_a ^ 0xFF)
            prop[:] = exp_a ^ exp_b ^ 0xFF
            gen_ab[:] = gen_ab | (prop & 1)
            gen_ba[:] = gen_ba | (prop & 1)
            gen_ab[:] = gen_ab | (prop & (gen_ab << 1))
            gen_ba[:] = gen_ba | (prop & (gen_ba << 1))
            prop2[:] = prop & (prop << 1)
            gen_ab[:] = gen_ab | (prop2 & (gen_ab << 2))
            gen_ba[:] = gen_ba | (prop2 & (gen_ba << 2))
            prop2[:] = prop2 & (prop2 << 2)
            gen_ab[:] = gen_ab | (prop2 & (gen_ab << 4))
            gen_ba[:] = gen_ba | (prop2 & (gen_ba << 4))
            diff_ab[:] = prop ^ ((gen_ab << 1) | 1)
            diff_ba[:] = prop ^ ((gen_ba << 1) | 1)
            sig_a[:] = concat(exp_a != 0, a[23:0], intbv(0)[3:])
            sig_b[:] = concat(exp_b != 0, b[23:0], intbv(0)[3:])
            # A subnormal (field 0, exponent 1) beside a normal operand: the raw fields make the
            # distance one too large.  The add step shifts the aligned operand back left by one;
            # the bit that shift should have kept is then the sticky's (below).
            pre = (exp_a == 0) != (exp_b == 0)
            # bit j: a set significand bit below j (j >= 27: the significand is not 0)
            below_a[:] = sig_a
            below_a[:] = below_a | (below_a << 1)
            below_a[:] = below_a | (below_a << 2)
            below_a[:] = below_a | (below_a << 4)
            below_a[:] = below_a | (below_a << 8)
            below_a[:] = below_a | (below_a << 16)
            below_a[:] = below_a << 1
            below_b[:] = sig_b
            below_b[:] = below_b | (below_b << 1)
            below_b[:] = below_b | (below_b << 2)
            below_b[:] = below_b | (below_b << 4)
            below_b[:] = below_b | (below_b << 8)
            below_b[:] = below_b | (below_b << 16)
            below_b[:] = below_b << 1
            # (a shift of 27 or more leaves 0)
            shifted_a[:] = sig_a >> diff_ba
            shifted_b[:] = sig_b >> diff_ab
            # subnormals: exponent field 0 means exponent 1
            exp_a1[:] = exp_a
            if exp_a == 0:
                exp_a1[:] = 1
            exp_b1[:] = exp_b
            if exp_b == 0:
                exp_b1[:] = 1
            # order by magnitude so the significand difference is never negative: |b| > |a| when b
            # holds the highest bit in which the two differ
            order[:] = a[31:0] ^ b[31:0]
            order[:] = order | (order >> 1)
            order[:] = order | (order >> 2)
            order[:] = order | (order >> 4)
            order[:] = order | (order >> 8)
            order[:] = order | (order >> 16)
            order[:] = order ^ (order >> 1)
            if (order & b[31:0]) != 0:
                sign = b[31]
                exp_big[:] = exp_b1
                sig_big[:] = sig_b
                pick_a[:] = 0x7FFFFFF
                if diff_ba[8:5] == 0:
                    sticky = below_a[diff_ba[5:0]]
                else:
                    sticky = below_a[31]
            else:
                sign = a[31]
                exp_big[:] = exp_a1
                sig_big[:] = sig_a
                pick_b[:] = 0x7FFFFFF
                if diff_ab[8:5] == 0:
                    sticky = below_b[diff_ab[5:0]]
                else:
                    sticky = below_b[31]
            # (an and-or rather than a choice: yosys would otherwise merge the two shifters into
            # one behind the choice, which is the slow order)
            aligned[:] = (shifted_a & pick_a) | (shifted_b & pick_b)
            zero_sign = a[31] and b[31]
            s1_side.next = concat(zero_sign, sign, special_nan, special, in_tag)
            s1_subtract.next = a[31] != b[31]
            s1_exp.next = exp_big
            s1_big.next = sig_big
            s1_small.next = aligned
            s1_pre.next = pre
            s1_sticky.next = sticky

    def add():
        s2_valid.next = bool(s1_valid) and rst != RESET_ACTIVE
        if s1_valid or not G2:
            small = modbv(0)[27:]
            big_x = modbv(0)[29:]
            small_x = modbv(0)[29:]
            sum_x = modbv(0)[29:]
            total = modbv(0)[28:]
            stop = intbv(0)[28:]
            ones = modbv(0)[32:]
            lead = intbv(0)[32:]
            # a subnormal beside a normal operand was shifted one too far (step 1); the bit this
            # shift back brings in is in the sticky, which is ORed into the LSB
            small[:] = s1_small
            if s1_pre:
                small[:] = small << 1
            if s1_sticky:
                small[0] = True
            # one adder for both (a choice of two would be merged into an adder behind a negation):
            # big + ~small + 1 subtracts, the carry in entering through an extra low bit
            if s1_subtract:
                small[:] = ~small
            big_x[:] = concat(False, s1_big, True)
            small_x[:] = concat(s1_subtract, small, s1_subtract)
            sum_x[:] = big_x + small_x
            total[:] = sum_x[29:1]
            # leading zeros of the sum from bit 27 (0: a carry), stopped at s1_exp by a one at
            # bit 27 - s1_exp; four ones below it end the count at 28 (a zero sum: step 4 ignores it)
            stop[:] = STOP_TOP >> s1_exp
            ones[:] = total | stop
            ones[:] = (ones << 4) | 0xF
            # every bit below the leading one set, then the leading one alone
            ones[:] = ones | (ones >> 1)
            ones[:] = ones | (ones >> 2)
            ones[:] = ones | (ones >> 4)
            ones[:] = ones | (ones >> 8)
            ones[:] = ones | (ones >> 16)
            lead[:] = ones ^ (ones >> 1)
            # the count is 31 minus the leading one's position: each bit the complement of its bit
            s2_lz.next = concat((lead & LZ4) == 0, (lead & LZ3) == 0, (lead & LZ2) == 0, (lead & LZ1) == 0,
                                (lead & LZ0) == 0)
            s2_side.next = s1_side
            s2_exp.next = s1_exp
            s2_sum.next = total

    def normalise():
        s3_valid.next = bool(s2_valid) and rst != RESET_ACTIVE
        if s2_valid or not G3:
            shifted = modbv(0)[28:]
            norm = intbv(0)[27:]
            # modular: an idle (not valid) stage may hold any exponent and count
            exp = modbv(0)[8:]
            exp_less = modbv(0)[8:]
            # one shift for both cases: a carry (count 0) drops bit 0, which stays in the sticky
            # LSB; otherwise the count's first bit takes the carry position away
            shifted[:] = s2_sum << s2_lz
            norm[:] = shifted[28:1]
            if shifted[0]:
                norm[0] = True
            exp_less[:] = s2_exp - s2_lz
            exp[:] = s2_exp + 1 - s2_lz
            # the exponent field: exp with the hidden bit, exp - 1 without it (a subnormal: exp is
            # 1 then); a rounding carry out of the fraction moves into the exponent in step 4
            if norm[26]:
                s3_bits.next = concat(exp, norm[26:3])
            else:
                s3_bits.next = concat(exp_less, norm[26:3])
            s3_round_up.next = norm[2] and (norm[1] or norm[0] or norm[3])
            # only a carry out of exponent 254 overflows before rounding; a rounding carry out of
            # exponent 254's largest significand gives exactly 0x7F800000, infinity
            s3_overflow.next = s2_sum[27] and s2_exp[8:1] == 0x7F
            s3_side.next = s2_side
            s3_zero.next = s2_sum == 0

    def round_pack():
        out_valid.next = bool(s3_valid) and rst != RESET_ACTIVE
        if s3_valid or not G4:
            packed = intbv(0)[32:]
            result = intbv(0)[32:]
            # round to nearest even: the carry of the increment flows into the exponent
            packed[:] = s3_bits + s3_round_up
            if s3_side[SPECIAL] and s3_side[SPECIAL_NAN]:
                result[:] = NAN_FP32
            elif s3_side[SPECIAL] or s3_overflow:
                result[:] = INF_FP32
                result[31] = s3_side[SIGN]
            elif s3_zero:
                result[:] = concat(s3_side[ZERO_SIGN], intbv(0)[31:])
            else:
                result[:] = concat(s3_side[SIGN], packed[31:0])
            out_tag.next = s3_side[tag_width:0]
            out_result.next = result

    # (the decorators are applied here, in the block's own frame, as MyHDL requires)
    clocked = always(clk.posedge)
    step1 = clocked(unpack_align) if regs[0] else always_comb(unpack_align)
    step2 = clocked(add) if regs[1] else always_comb(add)
    step3 = clocked(normalise) if regs[2] else always_comb(normalise)
    step4 = clocked(round_pack) if regs[3] else always_comb(round_pack)
    return step1, step2, step3, step4
