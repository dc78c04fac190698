"""MyHDL's signal registry holds each signal weakly (cosim/sim/myhdl_signals.py): a design nothing
refers to any more leaves it, the signals still in use keep their creation order, and simulations
behave as with MyHDL's own list (a second run of the same signals starts from their initial
values; shadow signals follow their sources).  Last, the collection threshold the `prism` command
and the test suite set for large heaps (cosim/sim/toolchain.py)."""
import gc

import myhdl._simulator as _simulator
from myhdl import ResetSignal, Signal, always, always_comb, block, delay, instance, intbv

import cosim  # noqa: F401  (installs the registry)
from cosim.sim.myhdl_signals import LiveSignals
from hdl.common.axis_register import axis_register


def test_the_registry_is_installed_in_every_module_that_uses_it():
    import myhdl._Signal as signal_module
    import myhdl._Simulation as simulation_module
    assert isinstance(_simulator._signals, LiveSignals)
    assert signal_module._signals is _simulator._signals is simulation_module._signals


def _register_slice():
    """An elaborated register slice and its ports (elaborated in a frame that then ends: a running
    frame keeps the locals MyHDL read from it, the ports among them)."""
    ports = [Signal(bool(0)), ResetSignal(0, active=1, isasync=False), Signal(intbv(0)[64:]), Signal(bool(0)),
             Signal(bool(0)), Signal(bool(0)), Signal(intbv(0)[64:]), Signal(bool(0)), Signal(bool(0)), Signal(bool(0))]
    return axis_register(*ports), len(ports)


def test_a_dropped_design_leaves_the_registry_and_live_signals_keep_their_order():
    kept = [Signal(intbv(0)[8:]) for _ in range(5)]
    gc.collect()
    before = len(_simulator._signals)
    design, n_ports = _register_slice()
    assert len(_simulator._signals) > before + n_ports       # the ports and the slice's registers
    del design
    gc.collect()
    assert len(_simulator._signals) == before
    listed = list(_simulator._signals)
    positions = [next(i for i, s in enumerate(listed) if s is k) for k in kept]
    assert positions == sorted(positions)


def test_many_dropped_signals_are_pruned_and_the_others_stay():
    registry = LiveSignals()
    kept = Signal(intbv(3)[4:])
    registry.append(kept)
    gc.disable()                            # no collection (and so no pruning) inside the loop
    try:
        for _ in range(5000):
            registry.append(Signal(bool(0)))
    finally:
        gc.enable()
    gc.collect()
    assert len(registry) == 1 and len(registry._refs) == 5001
    late = Signal(bool(1))
    registry.append(late)                   # an append drops the references of collected signals
    assert len(registry._refs) == 2
    assert list(registry) == [kept, late]


@block
def counter_with_slice(clk, count, low):
    low_bits = count(2, 0)                  # a shadow signal: its waiter comes from the registry

    @always(clk.posedge)
    def step():
        count.next = count + 1

    @always_comb
    def copy():
        low.next = low_bits

    @instance
    def clock():
        for _ in range(12):
            yield delay(5)
            clk.next = not clk

    return step, copy, clock


def test_simulations_behave_as_with_myhdls_list():
    clk, count, low = Signal(bool(0)), Signal(intbv(0)[8:]), Signal(intbv(0)[2:])
    for _ in range(2):                      # the second run starts again from the initial values
        seen = []

        @block
        def bench():
            dut = counter_with_slice(clk, count, low)

            @always(clk.negedge)
            def watch():
                seen.append((int(count), int(low)))

            return dut, watch

        bench().run_sim(quiet=1)
        assert seen == [(n, n % 4) for n in range(1, 7)]


def test_collect_less_often_raises_the_youngest_threshold_and_never_lowers_it():
    from cosim.sim.toolchain import GC_YOUNGEST_THRESHOLD, collect_less_often
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        collect_less_often()
        assert gc.get_threshold() == (GC_YOUNGEST_THRESHOLD, 10, 10)
        gc.set_threshold(GC_YOUNGEST_THRESHOLD * 2, 5, 7)
        collect_less_often()
        assert gc.get_threshold() == (GC_YOUNGEST_THRESHOLD * 2, 5, 7)
    finally:
        gc.set_threshold(*saved)
