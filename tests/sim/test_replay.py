"""The 'myhdl+icarus' back end (cosim/sim/replay.py): the MyHDL block runs the test, its
converted Verilog replays the recorded run in batched Icarus, and every output is compared
on every rising edge.  A Verilog that agrees passes, with every edge compared, resets
included; one that differs is reported at its first differing edge with both values."""
import os
import re

import pytest
from myhdl import ResetSignal, Signal, always, always_seq, block, instance, intbv, modbv

from cosim.sim import replay, toolchain
from cosim.sim.tbutil import clock_gen, reset_pulse


@block
def sum_halved(clk, rst, a, b, y, count):
    """y = (a + b) / 2 one cycle later, and a free-running count cleared by rst.
    Written as `(a + b) >> 1` into 8 bits: MyHDL keeps the carry of a + b, Verilog sizes the
    sum to 8 bits and loses it (a measured conversion trap), so the two differ exactly when
    a + b > 255."""
    @always_seq(clk.posedge, reset=rst)
    def step():
        count.next = count + 1
        y.next = (a + b) >> 1
    return step


def drive(backend, pairs, reset_at=None):
    """Apply (a, b) pairs one per cycle after the power-on reset; assert rst again for two
    cycles at pair index `reset_at`.  Returns (what toolchain.run returned, y per cycle)."""
    clk, rst = Signal(bool(0)), ResetSignal(0, active=1, isasync=False)
    a, b, y = Signal(intbv(0)[8:]), Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    count = Signal(modbv(0)[6:])
    seen = []
    factory = toolchain.select(sum_halved, backend)

    @block
    def bench():
        dut = factory(clk, rst, a, b, y, count)

        @instance
        def stim():
            yield rst.negedge
            for k, (x, z) in enumerate(pairs):
                if k == reset_at:
                    rst.next = 1
                if k == (reset_at or 0) + 2 and reset_at is not None:
                    rst.next = 0
                a.next, b.next = x, z
                yield clk.posedge
                seen.append(int(y))
                yield clk.negedge
        return dut, clock_gen(clk), reset_pulse(clk, rst), stim

    edges = toolchain.run(bench(), duration=10 * (len(pairs) + 4), backend=backend)
    return edges, seen


def test_a_verilog_that_agrees_passes_with_every_edge_compared():
    pairs = [(k * 7 % 128, k * 5 % 127) for k in range(60)]        # a + b < 255: no carry is lost
    edges, seen = drive("myhdl+icarus", pairs, reset_at=30)
    assert edges == len(pairs) + 4                                # the run's rising edges, reset ones too
    _, plain = drive("myhdl", pairs, reset_at=30)
    assert seen == plain


def test_the_first_difference_is_reported_with_its_edge_port_and_values():
    pairs = [(10, 20)] * 5 + [(200, 100)] + [(1, 2)] * 5          # 200 + 100 carries out of 8 bits
    _, plain = drive("myhdl", pairs)
    assert 150 in plain                                            # MyHDL keeps the carry
    with pytest.raises(replay.ReplayMismatch) as err:
        drive("myhdl+icarus", pairs)
    msg = str(err.value)
    # rising edges 0 and 1 are the power-on reset's; pair k meets edge 2 + k, and y shows
    # its sum just before edge 3 + k: pair 5's at edge 8
    assert re.search(r"at rising edge 8 of \d+", msg), msg
    assert "y: MyHDL 0x96, Verilog 0x16" in msg                   # 150 against (300 mod 256) / 2 = 22
    assert "a=0x1, b=0x2" in msg                                  # the inputs of that edge
    kept = re.search(r"recorded vectors: (\S+)/vectors\.hex; Verilog waves: (\S+)", msg)
    assert kept and os.path.exists(os.path.join(kept.group(1), "vectors.hex")) and os.path.exists(kept.group(2))


def test_each_rising_edge_is_compared_not_only_what_the_test_reads():
    """count is never read by the test bench; a Verilog count that differed would still fail."""
    @block
    def count_twice(clk, rst, a, b, y, count):
        @always(clk.posedge)
        def step():
            if rst:
                count.next = 0
            else:
                count.next = count + 2 if a == 0xFF else count + 1     # a == 0xFF never happens
            y.next = a
        return step

    rec = replay.Recording(count_twice, toolchain.bind_arguments(count_twice, (
        Signal(bool(0)), ResetSignal(0, active=1, isasync=False), Signal(intbv(0)[8:]), Signal(intbv(0)[8:]),
        Signal(intbv(0)[8:]), Signal(modbv(0)[6:])), {}))
    # a recorded run whose count is off by one at edge 3: only count differs
    rec.edges = [(0, 1, 0, 0, 0, 0), (0, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 3)]
    replay._pending.append(rec)
    with pytest.raises(replay.ReplayMismatch, match=r"at rising edge 3 of 4:\n  count: MyHDL 0x3, Verilog 0x2"):
        replay.check_recordings()


def test_a_block_without_a_clock_or_with_an_asynchronous_reset_is_refused():
    @block
    def passthrough(a, y):
        @always(a)
        def copy():
            y.next = a
        return copy

    with pytest.raises(ValueError, match="'clk' port"):
        toolchain.select(passthrough, "myhdl+icarus")(Signal(intbv(0)[4:]), Signal(intbv(0)[4:]))
    with pytest.raises(ValueError, match="asynchronous reset"):
        toolchain.select(sum_halved, "myhdl+icarus")(
            Signal(bool(0)), ResetSignal(0, active=1, isasync=True), Signal(intbv(0)[8:]), Signal(intbv(0)[8:]),
            Signal(intbv(0)[8:]), Signal(modbv(0)[6:]))
