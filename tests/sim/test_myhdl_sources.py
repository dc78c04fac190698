"""The elaboration speed-up (cosim/sim/myhdl_sources.py) gives MyHDL exactly the trees it would build."""
import ast

import myhdl._instance as myhdl_instance
import myhdl._util as myhdl_util
from myhdl import ResetSignal, Signal, always, always_comb, always_seq, block, instance, intbv

import cosim  # noqa: F401  (installs the cached source reader)
from cosim.sim import myhdl_sources
from hdl.arith.fp32_add import fp32_add
from hdl.arith.number_decoder import number_decoder


def _process_functions():
    def s(w=None):
        return Signal(bool(0)) if w is None else Signal(intbv(0)[w:])
    adder = fp32_add(s(), s(), s(), s(32), s(32), s(4), s(), s(32), s(4))
    decoder = number_decoder(s(32), s(2), s(320), s(), s(), s(), s(32))
    return [inst.funcobj for inst in list(adder.subs) + list(decoder.subs)]


def test_installed():
    assert myhdl_instance._makeAST is myhdl_sources.make_ast


def test_same_tree_as_myhdl_every_time():
    funcs = _process_functions()
    assert len(funcs) >= 5
    for f in funcs:
        want = myhdl_util._makeAST(f)
        for _ in range(2):                      # first call reads the source, the second the cache
            got = myhdl_sources.make_ast(f)
            assert ast.dump(got) == ast.dump(want)
            assert (got.sourcefile, got.lineoffset) == (want.sourcefile, want.lineoffset)
            assert got is not want


def test_each_instance_gets_its_own_tree():
    f = _process_functions()[0]
    a, b = myhdl_sources.make_ast(f), myhdl_sources.make_ast(f)
    assert a is not b
    a.body.clear()
    assert b.body


@block
def _leaf(a, b):
    @always_comb
    def copy():
        b.next = a
    return copy


@block
def _tree(clk, rst, a, outs, total):
    leaves = [_leaf(a, o) for o in outs]

    @always_seq(clk.posedge, reset=rst)
    def add():
        total.next = (outs[0] + outs[1]) % 16

    @always(clk.posedge)
    def keep():
        pass

    @instance
    def watch():
        while True:
            yield clk.posedge
    return leaves, add, keep, watch


def _call_infos(top):
    """(kind, name, modctxt, symbol table) of every block and process under `top`, in order."""
    out, todo = [], [top]
    while todo:
        b = todo.pop(0)
        ci = b.callinfo
        out.append((type(b).__name__, ci.name, ci.modctxt, {k: id(v) for k, v in ci.symdict.items()}))
        todo.extend(getattr(b, "subs", []))
    return out


def test_call_info_without_the_stack_is_myhdls():
    """The frame walk finds the same caller, context and symbols as MyHDL's inspect.stack()
    for every block and process of a hierarchy with nested blocks, comprehensions and
    every kind of process."""
    import myhdl._always as myhdl_always
    import myhdl._always_comb as myhdl_always_comb
    import myhdl._always_seq as myhdl_always_seq
    import myhdl._block as myhdl_block

    assert myhdl_instance._getCallInfo is myhdl_sources.instance_call_info
    assert myhdl_block._getCallInfo is myhdl_sources.block_call_info

    def build():
        def s(w=None):
            return Signal(bool(0)) if w is None else Signal(intbv(0)[w:])
        return [fp32_add(s(), s(), s(), s(32), s(32), s(4), s(), s(32), s(4)),
                number_decoder(s(32), s(2), s(320), s(), s(), s(), s(32)),
                _tree(s(), ResetSignal(0, active=1, isasync=False), s(4), [s(4) for _ in range(3)], s(4))]

    fast = [_call_infos(b) for b in build()]
    modules = (myhdl_instance, myhdl_always, myhdl_always_comb, myhdl_always_seq)
    try:
        for m in modules:
            m._getCallInfo = myhdl_sources._ORIGINAL_CALL_INFO["instance"]
        myhdl_block._getCallInfo = myhdl_sources._ORIGINAL_CALL_INFO["block"]
        slow = [_call_infos(b) for b in build()]
    finally:
        myhdl_sources.install()
    assert myhdl_instance._getCallInfo is myhdl_sources.instance_call_info
    assert [[(k, n, m, sorted(d)) for k, n, m, d in t] for t in fast] == \
        [[(k, n, m, sorted(d)) for k, n, m, d in t] for t in slow]
    kinds = {k for t in fast for k, *_ in t}
    assert {"_Block", "_Always", "_AlwaysComb", "_AlwaysSeq", "_Instantiator"} <= kinds, kinds
    assert any(n == "_tree" for t in fast for _, n, _, _ in t)     # leaves made in a comprehension


def test_converted_names_do_not_depend_on_what_was_built_before(tmp_path, monkeypatch):
    """A design holding a register slice, converted in a fresh process state and again after
    other slices were elaborated: the same Verilog (MyHDL alone would name the second
    conversion's instance `axis_register0_0`)."""
    import os

    from cosim.sim import toolchain
    from hdl.common.axis_register import axis_register
    from hdl.common.interface import AxiStream
    from hdl.common.wiring import bundle

    def slice_signals():
        b = lambda: Signal(bool(0))
        return dict(clk=b(), rst=ResetSignal(1, active=1, isasync=False),
                    s_axis_tdata=Signal(intbv(0)[6:]), s_axis_tlast=b(), s_axis_tvalid=b(), s_axis_tready=b(),
                    m_axis_tdata=Signal(intbv(0)[6:]), m_axis_tlast=b(), m_axis_tvalid=b(), m_axis_tready=b())

    @block
    def wrapped_slice(clk, rst, s_axis_tdata, s_axis_tlast, s_axis_tvalid, s_axis_tready,
                      m_axis_tdata, m_axis_tlast, m_axis_tvalid, m_axis_tready):
        ports = locals()
        return axis_register(clk, rst, AxiStream.from_ports("s_axis", ports), AxiStream.from_ports("m_axis", ports))

    def converted(where):
        monkeypatch.setenv("PRISM_BUILD_DIR", str(tmp_path / where))
        folder, module, _ = toolchain.build(wrapped_slice, **slice_signals())
        text = open(os.path.join(folder, module + ".v")).read()
        return [line for line in text.split("\n") if not line.startswith(("// File", "// Date"))]

    first = converted("first")
    for _ in range(2):      # use up the names
        axis_register(**bundle(axis_register, slice_signals()))
    again = converted("again")
    assert any("axis_register0_skid_valid" in line for line in first)
    assert again == first



def _walk_tables(top):
    """Per process under `top`, in order: the tables MyHDL's tree walk fills, by name, with each
    signal's width (the signal objects differ between two elaborations)."""
    from myhdl._Signal import _Signal

    def widths(table):
        return sorted((n, len(v) if isinstance(v, _Signal) else [len(s) for s in v]) for n, v in table.items())
    out, todo = [], [top]
    while todo:
        b = todo.pop(0)
        todo.extend(getattr(b, "subs", []))
        if isinstance(b, myhdl_instance._Instantiator):
            assert all(b.sigdict[n] is b.symdict[n] for n in b.sigdict if n in b.symdict)
            # the sets as they iterate: the converter writes sensitivity lists in that order
            out.append((type(b).__name__, b.funcobj.__name__, list(b.inputs), list(b.outputs),
                        list(b.inouts), b.embedded_func, widths(b.sigdict), widths(b.losdict),
                        sorted(b.symdict)))
    return out


def test_kept_tree_walk_finds_what_myhdls_walk_finds():
    """Every process of the node (16 FP32 banks of 16 lanes, the phase blocks, processes that
    read an interface's signals and so take MyHDL's own walk) elaborated with the kept walk and
    again with MyHDL's alone: the same inputs, outputs, signals and symbols in every process."""
    from cosim.node.node_harness import NodeBench
    from hdl.common.wiring import bundle
    from hdl.node.prism_node import prism_node

    assert myhdl_instance._Instantiator.__init__ is myhdl_sources.analysed_instance_init
    bench = NodeBench("myhdl")
    fast = _walk_tables(prism_node(**bundle(prism_node, bench.sig), **bench.params))
    try:
        myhdl_instance._Instantiator.__init__ = myhdl_sources._ORIGINAL_INSTANCE_INIT[0]
        slow = _walk_tables(prism_node(**bundle(prism_node, bench.sig), **bench.params))
    finally:
        myhdl_sources.install()
    assert myhdl_instance._Instantiator.__init__ is myhdl_sources.analysed_instance_init
    assert len(fast) > 2000
    assert fast == slow
    assert {k for k, *_ in fast} >= {"_Always", "_AlwaysComb"}
    assert sum(bool(t[2]) for t in fast) > 2000 and sum(bool(t[3]) for t in fast) > 2000


class _Pair:
    def __init__(self, w):
        self.x, self.y = Signal(intbv(0)[w:]), Signal(intbv(0)[w:])


@block
def _reader(clk, a, b):
    @always(clk.posedge)
    def follow():
        b.next = a[0] if isinstance(a, list) else a
    return follow


@block
def _kinds(clk, outs, pair):
    """One process function met with a signal, a constant, an intbv and a list of signals for
    the same name, and a process reading an interface's attributes."""
    readers = [_reader(clk, Signal(intbv(3)[4:]), outs[0]), _reader(clk, 5, outs[1]),
               _reader(clk, intbv(6)[4:], outs[2]), _reader(clk, [Signal(intbv(1)[4:]), Signal(intbv(2)[4:])], outs[3])]

    @always(clk.posedge)
    def swap():
        pair.y.next = pair.x
    return readers, swap


def test_kept_tree_walk_tells_the_kinds_of_a_name_apart():
    def build():
        return _walk_tables(_kinds(Signal(bool(0)), [Signal(intbv(0)[4:]) for _ in range(4)], _Pair(4)))
    fast = build()
    try:
        myhdl_instance._Instantiator.__init__ = myhdl_sources._ORIGINAL_INSTANCE_INIT[0]
        slow = build()
    finally:
        myhdl_sources.install()
    assert fast == slow
    follow = [t for t in fast if t[1] == "follow"]
    assert [t[2] for t in follow] == [["a"], [], ["a"], ["a"]]          # the constant is no input
    assert [bool(t[7]) for t in follow] == [False, False, False, True]   # the list of signals
    swap, = [t for t in fast if t[1] == "swap"]
    assert swap[2] == ["pair_x"] and swap[3] == ["pair_y"]               # MyHDL's names for pair.x, pair.y
