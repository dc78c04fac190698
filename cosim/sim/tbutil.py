"""Clock and reset generators, and signal makers, shared by every test bench."""
from myhdl import ResetSignal, Signal, block, delay, instance, intbv

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


def bit():
    """A one-bit signal, 0."""
    return Signal(bool(0))


def word(width):
    """An unsigned `width`-bit signal, 0."""
    return Signal(intbv(0)[width:])


def sync_reset():
    """The project's reset: synchronous, active high, starting inactive."""
    return ResetSignal(0, active=1, isasync=False)
