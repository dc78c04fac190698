"""The node's typed buses (hdl/node/prism_buses.py on hdl/common/interface.py)."""
import inspect
import os
import re

import pytest

from hdl.common.interface import Interface, bit, vec
from hdl.node import prism_buses


def _bus_classes():
    return [c for _, c in inspect.getmembers(prism_buses, inspect.isclass)
            if issubclass(c, Interface) and c is not Interface]


def _instance(cls):
    params = inspect.signature(cls.__init__).parameters
    return cls(kulisch_w=320) if "kulisch_w" in params else cls()


@pytest.mark.parametrize("cls", _bus_classes(), ids=lambda c: c.__name__)
def test_every_field_is_documented_in_its_class(cls):
    doc = inspect.getdoc(cls)
    documented = set()
    for line in doc.splitlines():
        m = re.match(r"^(\w+(?:, \w+)*)\s{2,}\S", line)
        if m:
            documented.update(n.strip() for n in m.group(1).split(","))
    fields = [name for name, _ in _instance(cls).fields()]
    assert fields and set(fields) <= documented, f"undocumented: {set(fields) - documented}"


def test_reserved_field_names_are_refused():
    class Bad(Interface):
        def __init__(self):
            self.next = bit()
    with pytest.raises(AttributeError, match="next"):
        Bad()


def test_wrap_keeps_the_given_signals_and_repr_names_the_widths():
    v, h = bit(), vec(prism_buses.HDR_BITS)
    frame = prism_buses.Frame.wrap(valid=v, header=h, beats=vec(9), too_long=bit(), bank=vec(2), frame_end=vec(14),
                                   nr=vec(10), r_end=vec(9), need1=vec(14), span=vec(prism_buses.MAX_RANGES),
                                   next_c=vec(3), next_span=vec(prism_buses.MAX_RANGES), next_fe=vec(14),
                                   next_rf=vec(9), next_re=vec(9), next_rok=bit(), next_part=bit())
    assert frame.valid is v and frame.header is h
    # the repr is part of a converted block's build key: widths in, identities out
    assert repr(frame) == repr(prism_buses.Frame()) == \
        ("Frame(valid:bool, header:96b=0, beats:9b=0, too_long:bool, bank:2b=0, frame_end:14b=0, nr:10b=0, "
         "r_end:9b=0, need1:14b=0, span:256b=0, next_c:3b=0, next_span:256b=0, next_fe:14b=0, next_rf:9b=0, "
         "next_re:9b=0, next_rok:bool, next_part:bool)")
    assert repr(prism_buses.MergedRange(280)) != repr(prism_buses.MergedRange(320))


def test_a_block_converted_alone_has_one_port_per_bus_field():
    """prism synth and the before/after Verilog snapshots convert phase blocks alone: a bus port
    becomes `<bus>_<field>` ports, and its fields' slices have names (no `None` in the Verilog)."""
    from cosim.sim.toolchain import build
    from hdl.node.prism_kulisch_route import prism_kulisch_route
    folder, name, _ = build(prism_kulisch_route, prism_buses.IssueGroup(), vec(256), prism_buses.SubStorePort(), SUB=1)
    with open(os.path.join(folder, f"{name}.v")) as fh:
        text = fh.read()
    for port in ("input [63:0] group_lanes", "input [2047:0] group_data", "output [15:0] sub_go",
                 "output [511:0] sub_sdata"):
        assert port in text
    assert "None" not in text
