"""MyHDL's registries of signals and memories forget the designs nothing refers to any more
(cosim/sim/myhdl_registries.py): a dropped design leaves both, the signals still in use keep their
creation order, a live design keeps its memories (and still converts), and simulations behave as
with MyHDL's own list (a second run of the same signals starts from their initial values; shadow
signals follow their sources).  Last, the collection threshold the `prism` command and the test
suite set for large heaps (cosim/sim/toolchain.py)."""
import gc
import re

import myhdl._extractHierarchy as _hierarchy
import myhdl._simulator as _simulator
from myhdl import ResetSignal, Signal, always, always_comb, block, delay, instance, intbv

import cosim  # noqa: F401  (installs the registries)
from cosim.sim import myhdl_registries
from cosim.sim.myhdl_registries import LiveMemories, LiveSignals, forget_unused_memories, release_dropped_designs
from hdl.common.axis_register import axis_register
from hdl.common.interface import AxiStream


def test_the_registry_is_installed_in_every_module_that_uses_it():
    import myhdl._Signal as signal_module
    import myhdl._Simulation as simulation_module
    assert isinstance(_simulator._signals, LiveSignals)
    assert signal_module._signals is _simulator._signals is simulation_module._signals
    assert isinstance(_hierarchy._memInfoMap, LiveMemories)


def _settle():
    """Free what earlier tests dropped: their blocks, then their memories' entries, then signals."""
    gc.collect()
    forget_unused_memories()
    gc.collect()


def _register_slice():
    """An elaborated register slice and its ports (elaborated in a frame that then ends: a running
    frame keeps the locals MyHDL read from it, the ports among them)."""
    s_axis, m_axis = AxiStream(64), AxiStream(64)
    design = axis_register(Signal(bool(0)), ResetSignal(0, active=1, isasync=False), s_axis, m_axis)
    return design, 2 + len(s_axis.fields()) + len(m_axis.fields())


def test_a_dropped_design_leaves_the_registry_and_live_signals_keep_their_order():
    kept = [Signal(intbv(0)[8:]) for _ in range(5)]
    _settle()
    before = len(_simulator._signals)
    design, n_ports = _register_slice()
    assert len(_simulator._signals) > before + n_ports       # the ports and the slice's registers
    del design
    gc.collect()
    assert len(_simulator._signals) == before
    listed = list(_simulator._signals)
    positions = [next(i for i, s in enumerate(listed) if s is k) for k in kept]
    assert positions == sorted(positions)


@block
def small_ram(clk, addr, dout, DEPTH=4):
    """A block with a memory (a list of signals), which MyHDL records in its memory map."""
    mem = [Signal(intbv(n)[8:]) for n in range(DEPTH)]

    @always(clk.posedge)
    def read():
        dout.next = mem[addr]

    return read


def _ram_ports():
    return Signal(bool(0)), Signal(intbv(0, min=0, max=4)), Signal(intbv(0)[8:])


def _dropped_ram(depth):
    design = small_ram(*_ram_ports(), DEPTH=depth)
    return id(design.memdict["mem"].mem)


def test_a_dropped_designs_memory_leaves_the_map_and_a_live_ones_stays_and_converts(tmp_path):
    live = small_ram(*_ram_ports())
    live_key = id(live.memdict["mem"].mem)
    _settle()
    before = len(_simulator._signals)
    dropped_key = _dropped_ram(6)
    assert dropped_key in _hierarchy._memInfoMap
    gc.collect()                            # frees the dropped design's blocks
    forget_unused_memories()                # then its memory
    gc.collect()                            # then the memory's signals
    assert dropped_key not in _hierarchy._memInfoMap and live_key in _hierarchy._memInfoMap
    assert len(_simulator._signals) == before
    live.convert(hdl="Verilog", path=str(tmp_path), name="small_ram")
    text = (tmp_path / "small_ram.v").read_text()
    assert re.search(r"reg \[7:0\]\s+mem \[0:4-1\];", text), text


def test_release_dropped_designs_frees_dropped_designs_at_once(monkeypatch):
    monkeypatch.setattr(myhdl_registries, "LARGE_DESIGN_SIGNALS", 100)
    _settle()
    before = release_dropped_designs()          # the level: what is alive now
    dropped_key = _dropped_ram(300)
    assert myhdl_registries.live_signals() >= before + 300
    assert release_dropped_designs() == before
    assert dropped_key not in _hierarchy._memInfoMap


def test_a_large_live_design_is_collected_for_once_not_at_every_call(monkeypatch):
    """Beside a large design that stays alive, later calls (every conversion and MyHDL run) must
    not collect each time: only growth since the last release counts."""
    monkeypatch.setattr(myhdl_registries, "LARGE_DESIGN_SIGNALS", 100)
    _settle()
    release_dropped_designs()
    large_live = small_ram(*_ram_ports(), DEPTH=300)
    collections = []
    real_collect = gc.collect
    real_collect()                              # the elaboration's own garbage
    monkeypatch.setattr(myhdl_registries.gc, "collect", lambda *a: collections.append(a) or real_collect())
    release_dropped_designs()                   # grew by 300: collects once (nothing found: no second)
    assert len(collections) == 1
    for _ in range(3):
        _dropped_ram(6)
        release_dropped_designs()               # small growth beside it: left to the collector
    assert len(collections) == 1
    del large_live


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
