"""kulisch_lane on both back ends against golden.arith.kulisch.KulischAccumulator:
random and adversarial term sequences (cancellation, extreme exponents,
subnormals, 280-bit overflow), merges of port-local states, read-and-clear,
back-to-back updates of one row, random stalls."""
import random

import pytest
from myhdl import ResetSignal, Signal, block, instance, intbv

from cosim.sim import toolchain
from cosim.sim.axis import pause_generator
from cosim.sim.tbutil import clock_gen, reset_pulse
from golden.arith.formats import WIDTH_BITS, to_kulisch_term
from golden.arith.kulisch import KulischAccumulator
from hdl.arith.kulisch_lane import kulisch_lane

WRAP_W = 8


def adversarial_fp32(rng):
    """FP32 patterns biased to extremes: huge, subnormal, specials, near-cancelling."""
    r = rng.random()
    s = rng.getrandbits(1) << 31
    if r < 0.3:
        return s | (0xFE << 23) | rng.getrandbits(23)            # largest binade
    if r < 0.45:
        return s | rng.getrandbits(23)                           # subnormal
    if r < 0.5:
        return s | (0xFF << 23) | (rng.getrandbits(1) * rng.getrandbits(23))   # inf or NaN
    if r < 0.55:
        return s | (rng.randint(1, 3) << 23) | rng.getrandbits(23)            # tiny normal
    return rng.getrandbits(32)


def make_ops(rng, n, rows, width, adversarial=True):
    """Operations: ("add", row, fmt, bits) | ("merge", row, acc) | ("read", row, clear) | ("clear", row)."""
    ops = []
    for _ in range(n):
        row = rng.randrange(rows) if rng.random() < 0.5 else (ops[-1][1] if ops else 0)   # many repeats
        r = rng.random()
        if r < 0.7:
            fmt = rng.choice(["int8", "fp16", "bf16", "fp32"])
            bits = adversarial_fp32(rng) if (fmt == "fp32" and adversarial) else rng.getrandbits(WIDTH_BITS[fmt])
            ops.append(("add", row, fmt, bits))
        elif r < 0.8:
            other = KulischAccumulator(width)
            for _ in range(rng.randint(1, 6)):
                other.add("fp32", adversarial_fp32(rng))
            other.wraps = max(-60, min(60, other.wraps))
            ops.append(("merge", row, other))
        elif r < 0.95:
            ops.append(("read", row, rng.random() < 0.5))
        else:
            ops.append(("clear", row))
    ops += [("read", r, True) for r in range(rows)]
    return ops


def model(ops, rows, width):
    accs = [KulischAccumulator(width) for _ in range(rows)]
    reads = []
    for op in ops:
        kind, row = op[0], op[1]
        a = accs[row]
        if kind == "add":
            a.add(op[2], op[3])
        elif kind == "merge":
            a.merge(op[2])
        elif kind == "read":
            reads.append((row, a.state, a.nan, a.pos_inf, a.neg_inf, a.wraps % (1 << WRAP_W)))
            if op[2]:
                accs[row] = KulischAccumulator(width)
        else:
            accs[row] = KulischAccumulator(width)
    return reads


def run_lane(backend, ops, rows, width, row_bits, stall=0.3, seed=0):
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    op_valid, op_acc, op_read = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    op_row, rd_row = Signal(intbv(0)[row_bits:]), Signal(intbv(0)[row_bits:])
    op_state, rd_state = Signal(intbv(0)[width:]), Signal(intbv(0)[width:])
    op_f = [Signal(bool(0)) for _ in range(3)]
    rd_f = [Signal(bool(0)) for _ in range(3)]
    op_wraps, rd_wraps = Signal(intbv(0)[WRAP_W:]), Signal(intbv(0)[WRAP_W:])
    rd_valid = Signal(bool(0))
    reads = []
    done = [False]
    pause = pause_generator(stall, seed)
    mask = (1 << width) - 1
    factory = toolchain.select(kulisch_lane, backend)

    @block
    def bench():
        dut = factory(clk, rst, op_valid, op_row, op_acc, op_read, op_state, *op_f, op_wraps,
                      rd_valid, rd_row, rd_state, *rd_f, rd_wraps, ROWS=rows)

        @instance
        def drive():
            yield rst.negedge
            for op in ops:
                while True:
                    yield clk.negedge
                    if not next(pause):
                        break
                    op_valid.next = 0
                kind, row = op[0], op[1]
                op_valid.next, op_row.next = 1, row
                state, flags, wraps, acc, read = 0, (0, 0, 0), 0, 1, 0
                if kind == "add":
                    t, n, p, m = to_kulisch_term(op[2], op[3])
                    state, flags = t & mask, (n, p, m)
                elif kind == "merge":
                    o = op[2]
                    state, flags, wraps = o.state, (o.nan, o.pos_inf, o.neg_inf), o.wraps % (1 << WRAP_W)
                elif kind == "read":
                    read, acc = 1, 0 if op[2] else 1
                else:
                    acc = 0
                op_acc.next, op_read.next, op_state.next, op_wraps.next = acc, read, state, wraps
                for s, f in zip(op_f, flags):
                    s.next = bool(f)
            yield clk.negedge
            op_valid.next = 0
            for _ in range(4):
                yield clk.negedge
            done[0] = True

        @instance
        def collect():
            while True:
                yield clk.posedge
                if rd_valid:
                    reads.append((int(rd_row), int(rd_state), bool(rd_f[0]), bool(rd_f[1]), bool(rd_f[2]),
                                  int(rd_wraps)))
        return dut, clock_gen(clk), reset_pulse(clk, rst), drive, collect

    toolchain.run(bench(), duration=10 * (int(len(ops) * (1 + 3 * stall)) + 40), backend=backend)
    assert done[0], "test bench ran out of time"
    return reads


@pytest.mark.parametrize("width", [320, 280])
def test_lane_random_adversarial_with_stalls(backend, width):
    rng = random.Random(width)
    n = 500 if backend == "icarus" else 2500
    rows = 6
    ops = make_ops(rng, n, rows, width)
    assert run_lane(backend, ops, rows, width, row_bits=3, stall=0.3, seed=width) == model(ops, rows, width)


def test_lane_back_to_back_same_row_overflow_280(backend):
    """Every cycle the same row, no stall: the bypass must carry each sum; the
    largest FP32 terms wrap a 280-bit state both ways."""
    big, nbig = 0x7F7FFFFF, 0xFF7FFFFF
    seq = [big] * 7 + [nbig] * 15 + [big] * 9 + [0x00000001, 0x80000001] * 3
    ops = [("add", 1, "fp32", b) for b in seq[:7]] + [("read", 1, False)] + \
          [("add", 1, "fp32", b) for b in seq[7:]] + [("read", 1, True), ("add", 1, "fp32", big), ("read", 1, True)]
    got = run_lane(backend, ops, 2, 280, row_bits=1, stall=0.0)
    want = model(ops, 2, 280)
    assert got == want
    assert any(r[5] != 0 for r in want)          # the sequence really overflowed


def test_lane_cancellation_leaves_exact_small_value(backend):
    """Huge terms cancel exactly, leaving only the subnormal LSBs (exact sum)."""
    ops = []
    for s in (0, 1 << 31):
        ops += [("add", 0, "fp32", s ^ 0x7F000000), ("add", 0, "fp32", 0x00000003), ("add", 0, "fp32", s ^ 0xFF000000)]
    ops += [("read", 0, True)]
    got = run_lane(backend, ops, 1, 320, row_bits=1, stall=0.0)
    assert got == model(ops, 1, 320)
    assert got[-1][1] == 6


def test_lane_rejects_bad_parameters():
    s = lambda n: Signal(intbv(0)[n:])
    b = lambda: Signal(bool(0))
    args = [b(), ResetSignal(0, active=1, isasync=False), b(), s(3), b(), b(), s(320), b(), b(), b(), s(8),
            b(), s(3), s(320), b(), b(), b(), s(8)]
    with pytest.raises(ValueError, match="ROWS=9"):
        kulisch_lane(*args, ROWS=9)
    args[13] = s(280)
    with pytest.raises(ValueError, match="must match"):
        kulisch_lane(*args, ROWS=8)
