"""fp32_arrival_lane on its own (both back ends): running FP32 sums per row, and a reset or a
clear that leaves no partial sum behind (the node's FP32_ARRIVAL reset fault)."""
import random

import pytest
from myhdl import ResetSignal, Signal, block, instance, intbv

from cosim.sim import toolchain
from cosim.sim.tbutil import clock_gen
from golden.arith.fp32_arith import fp32_add
from hdl.arith.fp32_arrival_lane import fp32_arrival_lane

ONE, TWO, THREE = 0x3F800000, 0x40000000, 0x40400000
LATENCY = 4


def run_lane(backend, program, rows=4):
    """program: per cycle, one of ("add", row, value), ("read", row), ("reset",), ("clear",) or None.
    Returns the read-outs in order."""
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    clear, op_valid, op_read, rd_valid = (Signal(bool(0)) for _ in range(4))
    op_row = Signal(intbv(0)[2:])
    op_value, rd_value = Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    reads = []
    factory = toolchain.select(fp32_arrival_lane, backend)

    @block
    def bench():
        dut = factory(clk, rst, clear, op_valid, op_row, op_read, op_value, rd_valid, rd_value,
                      ROWS=rows, LATENCY=LATENCY)

        @instance
        def drive():
            for step in list(program) + [None] * (LATENCY + 4):
                yield clk.negedge
                op_valid.next = 0
                rst.next = 0
                clear.next = 0
                if step is None:
                    continue
                if step[0] == "reset":
                    rst.next = 1
                elif step[0] == "clear":
                    clear.next = 1
                else:
                    op_valid.next = 1
                    op_row.next = step[1]
                    op_read.next = step[0] == "read"
                    op_value.next = step[2] if step[0] == "add" else 0

        @instance
        def collect():
            while True:
                yield clk.posedge
                if rd_valid:
                    reads.append(int(rd_value))

        return dut, clock_gen(clk), drive, collect

    toolchain.run(bench(), duration=10 * (len(program) + LATENCY + 6), backend=backend)
    return reads


def gap(n=LATENCY + 1):
    return [None] * n


def test_reset_empties_every_row(backend):
    """add 1.0, reset, add 2.0, read: 2.0 (the lane once gave 3.0: reset kept the RAM's sums)."""
    program = [("add", 1, ONE), ("add", 2, ONE)] + gap() + [("reset",)] + gap(2)
    program += [("add", 1, TWO)] + gap() + [("read", 1), ("read", 2)]
    assert run_lane(backend, program) == [TWO, 0]


def test_reset_drops_sums_in_flight(backend):
    """A reset while the add is still in the adder: nothing of it lands."""
    program = [("add", 0, ONE), None, ("reset",)] + gap() + [("read", 0)]
    assert run_lane(backend, program) == [0]


def test_clear_empties_every_row(backend):
    program = [("add", 3, ONE)] + gap() + [("clear",), ("add", 3, TWO)] + gap() + [("read", 3), ("read", 0)]
    assert run_lane(backend, program) == [TWO, 0]


def test_sums_and_reads_follow_ieee_adds(backend):
    """Random adds over four rows (respecting the reservation window), then read every row."""
    rng = random.Random(7)
    program, model = [], {r: None for r in range(4)}
    for _ in range(40):
        row = rng.randrange(4)
        value = rng.choice((ONE, TWO, THREE, 0x80000000, 0x7F7FFFFF, 0x00000001, rng.getrandbits(31)))
        program += [("add", row, value)] + gap()
        model[row] = value if model[row] is None else fp32_add(model[row], value)
    program += [("read", r) for r in range(4)] + gap() + [("read", 0)]
    assert run_lane(backend, program) == [model[r] or 0 for r in range(4)] + [0]


def test_a_read_empties_its_row(backend):
    program = [("add", 0, THREE)] + gap() + [("read", 0)] + gap() + [("read", 0)]
    assert run_lane(backend, program) == [THREE, 0]


def test_lane_rejects_bad_parameters():
    clk, rst, clear, v, rd, rv = (Signal(bool(0)) for _ in range(6))
    row, val, out = Signal(intbv(0)[2:]), Signal(intbv(0)[32:]), Signal(intbv(0)[32:])
    with pytest.raises(ValueError, match="ROWS"):
        fp32_arrival_lane(clk, rst, clear, v, row, rd, val, rv, out, ROWS=5)
    with pytest.raises(ValueError, match="32 bits"):
        fp32_arrival_lane(clk, rst, clear, v, row, rd, Signal(intbv(0)[16:]), rv, out, ROWS=4)
