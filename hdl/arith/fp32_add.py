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
  1. unpack + align: classify the operands (NaN/inf give the special result),
     order them by magnitude, shift the smaller significand right by the
     exponent difference into 24+3 bits (guard, round, sticky-ORed LSB);
  2. add: 28-bit significand add or subtract (never negative: |big| >= |small|);
  3. normalise: a carry shifts right by one (sticky kept); otherwise a
     loop-free, exponent-limited leading-zero shift (16/8/4/2/1) that stops at
     the minimum exponent, so subnormal results come out unnormalised;
  4. round + pack: round to nearest even on guard/round/sticky; the
     significand is added to (exponent-1) << 23 so a rounding carry moves
     into the exponent, and anything at or above 0x7F800000 becomes inf.

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

    def side_signal():
        return Signal(intbv(0)[SIDE_W:])

    # step 1 -> 2
    s1_valid, s1_side, s1_subtract = Signal(bool(0)), side_signal(), Signal(bool(0))
    s1_exp = Signal(intbv(0)[8:])
    s1_big, s1_small = Signal(intbv(0)[27:]), Signal(intbv(0)[27:])
    # step 2 -> 3
    s2_valid, s2_side = Signal(bool(0)), side_signal()
    s2_exp = Signal(intbv(0)[8:])
    s2_sum = Signal(intbv(0)[28:])
    # step 3 -> 4
    s3_valid, s3_side, s3_zero = Signal(bool(0)), side_signal(), Signal(bool(0))
    s3_exp = Signal(intbv(0)[9:])
    s3_norm = Signal(intbv(0)[27:])

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
            larger = intbv(0)[32:]
            smaller = intbv(0)[32:]
            exp_big = intbv(0)[8:]
            exp_small = intbv(0)[8:]
            shift = intbv(0)[8:]
            sig_big = intbv(0)[27:]
            sig_small = intbv(0)[27:]
            aligned = intbv(0)[27:]
            back = intbv(0)[27:]
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
            # order by magnitude so the significand difference is never negative
            if b[31:0] > a[31:0]:
                larger[:] = b
                smaller[:] = a
            else:
                larger[:] = a
                smaller[:] = b
            # subnormals: exponent field 0 means exponent 1 without the hidden bit
            if larger[31:23] == 0:
                exp_big[:] = 1
                sig_big[:] = concat(False, larger[23:0], intbv(0)[3:])
            else:
                exp_big[:] = larger[31:23]
                sig_big[:] = concat(True, larger[23:0], intbv(0)[3:])
            if smaller[31:23] == 0:
                exp_small[:] = 1
                sig_small[:] = concat(False, smaller[23:0], intbv(0)[3:])
            else:
                exp_small[:] = smaller[31:23]
                sig_small[:] = concat(True, smaller[23:0], intbv(0)[3:])
            shift[:] = exp_big - exp_small
            if shift > 26:
                aligned[:] = 0
                sticky = sig_small != 0
            else:
                aligned[:] = sig_small >> shift
                back[:] = aligned << shift
                sticky = back != sig_small
            if sticky:
                aligned[0] = True
            zero_sign = a[31] and b[31]
            s1_side.next = concat(zero_sign, larger[31], special_nan, special, in_tag)
            s1_subtract.next = a[31] != b[31]
            s1_exp.next = exp_big
            s1_big.next = sig_big
            s1_small.next = aligned

    def add():
        s2_valid.next = bool(s1_valid) and rst != RESET_ACTIVE
        if s1_valid or not G2:
            total = modbv(0)[28:]
            if s1_subtract:
                total[:] = s1_big - s1_small
            else:
                total[:] = s1_big + s1_small
            s2_side.next = s1_side
            s2_exp.next = s1_exp
            s2_sum.next = total

    def normalise():
        s3_valid.next = bool(s2_valid) and rst != RESET_ACTIVE
        if s2_valid or not G3:
            total = intbv(0)[28:]
            norm = intbv(0)[27:]
            # modular: an idle (not valid) stage may hold exponent 0
            exp = modbv(0)[9:]
            limit = modbv(0)[8:]
            lead = intbv(0)[5:]
            total[:] = s2_sum
            if total[27]:
                # carry out: one right shift, the dropped bit stays in the sticky LSB
                norm[:] = total[28:1]
                if total[0]:
                    norm[0] = True
                exp[:] = s2_exp + 1
            else:
                # leading-zero shift, stopped where the exponent reaches 1 (subnormal)
                norm[:] = total[27:0]
                limit[:] = s2_exp - 1
                lead[:] = 0
                if norm[27:11] == 0 and lead + 16 <= limit:
                    norm[:] = norm << 16
                    lead[:] = lead + 16
                if norm[27:19] == 0 and lead + 8 <= limit:
                    norm[:] = norm << 8
                    lead[:] = lead + 8
                if norm[27:23] == 0 and lead + 4 <= limit:
                    norm[:] = norm << 4
                    lead[:] = lead + 4
                if norm[27:25] == 0 and lead + 2 <= limit:
                    norm[:] = norm << 2
                    lead[:] = lead + 2
                if norm[27:26] == 0 and lead + 1 <= limit:
                    norm[:] = norm << 1
                    lead[:] = lead + 1
                exp[:] = s2_exp - lead
            s3_side.next = s2_side
            s3_zero.next = total == 0
            s3_exp.next = exp
            s3_norm.next = norm

    def round_pack():
        out_valid.next = bool(s3_valid) and rst != RESET_ACTIVE
        if s3_valid or not G4:
            norm = intbv(0)[27:]
            keep = intbv(0)[24:]
            packed = modbv(0)[33:]
            result = intbv(0)[32:]
            norm[:] = s3_norm
            keep[:] = norm[27:3]
            round_up = norm[2] and (norm[1] or norm[0] or keep[0])
            # the significand's hidden bit adds 1 to (exp-1): a rounding carry
            # therefore moves into the exponent, and a subnormal can round up to
            # the smallest normal
            packed[:] = ((s3_exp - 1) << 23) + keep
            if round_up:
                packed[:] = packed + 1
            if packed >= INF_FP32:
                packed[:] = INF_FP32
            if s3_side[SPECIAL] and s3_side[SPECIAL_NAN]:
                result[:] = NAN_FP32
            elif s3_side[SPECIAL]:
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
