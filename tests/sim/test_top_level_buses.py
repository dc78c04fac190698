"""Buses as ports of a converted top level (hdl/common/interface.py, hdl/common/wiring.py,
cosim.sim.convert.bind_arguments): a test bench, a formal target or the CLI names the ports
flat, as the Verilog does (`<bus>_<field>`); the tool chain groups them into the block's buses
and reports them flat again, so every back end drives and samples the same names."""
import inspect
import re

import pytest
from myhdl import Signal, always_comb, block, intbv

from cosim.sim.convert import bind_arguments, build
from hdl.common.interface import AxiStream, Interface, bit, vec
from hdl.common.wiring import bundle, flat_ports, ports_of
from hdl.fabric import fabric_buses
from hdl.package import package_buses


class Pair(Interface):
    """a, b    two 4-bit fields"""

    def __init__(self):
        self.a = vec(4)
        self.b = vec(4)


@block
def adder(clk, pair: Pair, y):
    @always_comb
    def add():
        y.next = pair.a + pair.b
    return add


@block
def flat_adder(pair_a, pair_b, y):
    @always_comb
    def add():
        y.next = pair_a + pair_b
    return add


def _flat():
    return dict(clk=bit(), pair_b=vec(4), pair_a=vec(4), y=Signal(intbv(0)[5:]))


def test_a_bus_is_assembled_from_its_converted_names_in_declaration_order():
    flat = _flat()
    kw = bundle(adder, flat)
    assert set(kw) == {"clk", "pair", "y"} and kw["pair"].a is flat["pair_a"] and kw["pair"].b is flat["pair_b"]
    assert [n for n, _ in kw["pair"].fields()] == ["a", "b"]          # the class's order, not the caller's
    assert bundle(adder, kw) == kw                                      # a bus given whole passes through
    assert flat_ports(kw) == {"clk": flat["clk"], "pair_a": flat["pair_a"], "pair_b": flat["pair_b"], "y": flat["y"]}
    assert ports_of(adder, flat)["pair"].b is flat["pair_b"]


def test_a_flat_port_is_found_as_the_field_of_a_bus_in_scope():
    pair, y = Pair(), Signal(intbv(0)[5:])
    got = ports_of(flat_adder, locals())
    assert got["pair_a"] is pair.a and got["pair_b"] is pair.b and got["y"] is y
    with pytest.raises(ValueError, match=r"no signal for: \['pair_b'\]"):
        ports_of(flat_adder, {"pair_a": vec(4), "y": y})


def test_the_bound_arguments_are_flat_and_the_block_gets_its_buses():
    flat = _flat()
    bound = bind_arguments(adder, (), flat)
    assert set(bound.arguments) == {"clk", "pair_a", "pair_b", "y"}
    assert isinstance(bound.args[1], Pair) and set(bound.buses) == {"pair"}    # (clk, pair, y)


def test_flat_or_whole_the_converted_top_is_the_same(tmp_path, monkeypatch):
    monkeypatch.setenv("PRISM_BUILD_DIR", str(tmp_path))
    flat = _flat()
    folder, name, _ = build(adder, **flat)
    assert build(adder, **bundle(adder, _flat()))[0] == folder
    with open(f"{folder}/{name}.v") as fh:
        text = fh.read()
    header = re.search(r"module adder \((.*?)\);", text, re.S).group(1).split(",")
    # MyHDL lists the plain signal ports first, then each bus's fields
    assert [p.strip() for p in header] == ["clk", "y", "pair_a", "pair_b"]
    assert re.search(r"^input \[3:0\] pair_a;", text, re.M) and re.search(r"^output \[4:0\] y;", text, re.M)


def test_axi_stream_fields_are_optional_where_a_block_needs_them():
    assert [n for n, _ in AxiStream(8).fields()] == ["tdata", "tlast", "tvalid", "tready"]
    job = AxiStream(8, id_width=12, last=False)
    assert [n for n, _ in job.fields()] == ["tdata", "tid", "tvalid", "tready"] and len(job.tid) == 12
    assert AxiStream.field_names() == ("tdata", "tid", "tuser", "tlast", "tvalid", "tready")


def _bus_classes():
    return [c for m in (package_buses, fabric_buses) for _, c in inspect.getmembers(m, inspect.isclass)
            if issubclass(c, Interface) and c is not Interface and c.__module__ == m.__name__] + [AxiStream]


@pytest.mark.parametrize("cls", _bus_classes(), ids=lambda c: c.__name__)
def test_every_field_is_documented_in_its_class(cls):
    documented = set()
    for line in inspect.getdoc(cls).splitlines():
        m = re.match(r"^(\w+(?:, \w+)*)\s{2,}\S", line)
        if m:
            documented.update(n.strip() for n in m.group(1).split(","))
    assert set(cls.field_names()) <= documented, f"undocumented: {set(cls.field_names()) - documented}"
