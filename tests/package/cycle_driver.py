"""One per-cycle driver for the package blocks' unit tests: a step's input values go in at a
falling edge, the outputs are sampled after the next rising edge."""
from myhdl import block, instance

from cosim.package.package_bench import run_until_done
from cosim.sim import toolchain
from cosim.sim.tbutil import clock_gen


def run_cycles(backend, block_func, s, steps, sample, lead=1, tail=False, **params):
    """Run `block_func` on `backend` with the signals `s` (port name -> Signal, "clk" among
    them): after `lead` falling edges, each step ({port: value}, "rst" included when the test
    drives the reset) is applied at a falling edge and `sample()` recorded after the next
    rising edge; with `tail`, once more one cycle after the last step.  Returns the samples."""
    got, state = [], {}
    factory = toolchain.select(block_func, backend)

    @block
    def bench():
        dut = factory(**s, **params)

        @instance
        def run():
            for _ in range(lead):
                yield s["clk"].negedge
            for values in steps:
                for name, value in values.items():
                    s[name].next = value
                yield s["clk"].posedge
                got.append(sample())
                yield s["clk"].negedge
            if tail:
                yield s["clk"].posedge
                got.append(sample())
            state["finished"] = True
            while True:
                yield s["clk"].posedge

        return dut, clock_gen(s["clk"]), run

    run_until_done(bench(), backend, state, len(steps) + 8)
    return got
