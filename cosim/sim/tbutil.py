"""Clock and reset generators, and signal makers, shared by every test bench."""
from myhdl import ResetSignal, block, delay, instance

from hdl.common.interface import bit, vec  # noqa: F401 (bit is re-exported for the test benches)

CLOCK_PERIOD = 10  # simulation time units per cycle; edges at multiples of 5


@block
def clock_gen(clk, period=CLOCK_PERIOD):
    half = period // 2

    @instance
    def tick():
        while True:
            yield delay(half)
            clk.next = not clk
    return tick


@block
def reset_pulse(clk, rst, cycles=2):
    """Hold `rst` active for `cycles` rising edges, releasing it at a falling edge."""
    @instance
    def pulse():
        rst.next = rst.active
        for _ in range(cycles):
            yield clk.posedge
        yield clk.negedge
        rst.next = not rst.active
    return pulse


# Signal makers: the ones the design's buses use (a one-bit signal; an unsigned `width`-bit one), both 0.
word = vec


def sync_reset():
    """The project's reset: synchronous, active high, starting inactive."""
    return ResetSignal(0, active=1, isasync=False)
