"""One driver for valid-tagged pipelines (fp32_add, kulisch_round, ecmp_hash_unit, ...):
one item per cycle after reset, random idle cycles, a tag per item, every output with
the rising edge it left at; and one for blocks without a handshake (the decoders, ...):
one item per cycle, an output per item.

The caller owns the signals and says how to put an item on the inputs (`load`) and how to
read an output (`read`); the driver owns the clock, the reset, the schedule and the
cycle counting, so every pipeline test bench times its items the same way."""
import random

from myhdl import StopSimulation, block, instance

from cosim.sim import toolchain
from cosim.sim.tbutil import CLOCK_PERIOD, clock_gen, reset_pulse


def gap_schedule(n, gap_rate, rng):
    """Item index per cycle, None for an idle cycle: before each item, idle cycles while
    rng.random() < gap_rate (none at all when gap_rate is 0: rng untouched)."""
    schedule = []
    for i in range(n):
        while gap_rate and rng.random() < gap_rate:
            schedule.append(None)
        schedule.append(i)
    return schedule


def offer(clk, valid, ready, items, load, pause, accepted=None, stalled=None):
    """Test-bench generator (yield it from an @instance): offer `items` one by one on a
    valid/ready input from a falling edge on, load(item) setting the data, idle in the cycles
    `pause` (an endless bool iterator) says; accepted() / stalled() run at each rising edge that
    takes an item / finds it refused.  Ends at the falling edge after the last item, valid low."""
    i = 0
    while i < len(items):
        if next(pause):
            valid.next = 0
        else:
            load(items[i])
            valid.next = 1
        yield clk.posedge
        if valid and ready:
            if accepted is not None:
                accepted()
            i += 1
        elif valid and stalled is not None:
            stalled()
        yield clk.negedge
    valid.next = 0


def run_pipeline(dut, ports, params, clk, rst, in_valid, out_valid, items, load, read, backend, latency,
                 in_tag=None, out_tag=None, gap_rate=0.0, seed=0, idle=None, stop_when_done=False):
    """Drive `items` through dut(*ports, **params) (a toolchain.select factory; its ports
    include clk, rst, in_valid and out_valid) on `backend`; returns
    [(read(), tag, in_cycle, out_cycle)] in output order.

    load(item) sets the data inputs; in_tag (if given) carries the item's index modulo its
    width; idle(rng), if given, runs on each idle cycle (e.g. to put junk on data inputs the
    design must ignore).  Items enter from the first falling edge after reset; the run lasts
    len(schedule) + latency + 8 cycles, or ends at the last expected output when
    stop_when_done.  in_cycle/out_cycle count rising edges: out - in is the latency an item saw.
    """
    rng = random.Random(seed)
    schedule = gap_schedule(len(items), gap_rate, rng)
    tag_mod = 1 << len(in_tag) if in_tag is not None else None
    sent, got = [], []
    cycle = [0]

    @block
    def bench():
        design = dut(*ports, **params)          # built here: MyHDL wants sub-blocks made in the block

        @instance
        def drive():
            yield clk.negedge
            while rst == rst.active:
                yield clk.negedge
            for i in schedule:
                if i is None:
                    in_valid.next = 0
                    if idle is not None:
                        idle(rng)
                else:
                    in_valid.next = 1
                    load(items[i])
                    if in_tag is not None:
                        in_tag.next = i % tag_mod
                    sent.append(cycle[0] + 1)          # sampled at the coming rising edge
                yield clk.negedge
            in_valid.next = 0

        @instance
        def monitor():
            while True:
                yield clk.posedge
                cycle[0] += 1
                if out_valid:
                    got.append((read(), int(out_tag) if out_tag is not None else None, cycle[0]))
                    if stop_when_done and len(got) == len(items):
                        raise StopSimulation()

        return design, clock_gen(clk), reset_pulse(clk, rst), drive, monitor

    toolchain.run(bench(), duration=None if stop_when_done else CLOCK_PERIOD * (len(schedule) + latency + 8),
                  backend=backend)
    return [(value, tag, s, c) for (value, tag, c), s in zip(got, sent)]


def run_per_cycle(dut, ports, clk, items, load, read, backend, registered=False):
    """Drive `items` through dut(*ports) (a toolchain.select factory; `clk` among its ports or
    not: a combinational block) on `backend`, one per cycle, and return [read()] per item.
    load(item) sets the inputs at a falling edge; read() samples the outputs at the next rising
    edge (what the block settled to: a combinational block's answer), or when `registered` at the
    falling edge after it (what that edge registered).  No reset: a block with one has it among
    the inputs load() sets."""
    out = []

    @block
    def bench():
        design = dut(*ports)                # built here: MyHDL wants sub-blocks made in the block

        @instance
        def drive():
            yield clk.negedge
            for item in items:
                load(item)
                yield clk.posedge
                if registered:
                    yield clk.negedge
                    out.append(read())
                else:
                    out.append(read())
                    yield clk.negedge

        return design, clock_gen(clk), drive

    toolchain.run(bench(), duration=CLOCK_PERIOD * (len(items) + 2), backend=backend)
    return out
