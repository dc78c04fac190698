"""The elaboration speed-up (cosim/myhdl_sources.py) gives MyHDL exactly the trees it would build."""
import ast

import myhdl._instance as myhdl_instance
import myhdl._util as myhdl_util
from myhdl import Signal, intbv

import cosim  # noqa: F401  (installs the cached source reader)
from cosim import myhdl_sources
from hdl.fp32_add import fp32_add
from hdl.number_decoder import number_decoder


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
