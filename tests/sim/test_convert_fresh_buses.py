"""A block converted alone gets unconnected copies of its ports, buses included: a bus taken from
a larger design can keep what an earlier elaboration marked on its signals (a field another block
drives: MyHDL's `_driven`, left set by a conversion that stopped half way), and MyHDL would make
such a field an output of the block that only reads it.  The node's synthesis
tables once lost the result sender and half the Kulisch store's own logic to that (their bus inputs
became undriven outputs, and yosys removed what read them)."""
import re

from myhdl import Signal, always_comb, block, intbv

from cosim.sim.convert import build
from hdl.common.interface import Interface, vec


class Pair(Interface):
    def __init__(self):
        self.a = vec(4)
        self.b = vec(4)


@block
def pair_reader(bus, y):
    @always_comb
    def read():
        y.next = bus.a + bus.b
    return read


def test_a_bus_marked_driven_elsewhere_is_an_input_of_the_block_that_reads_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PRISM_BUILD_DIR", str(tmp_path))      # converted now, not found in a cache
    bus = Pair()
    y = Signal(intbv(0)[5:])
    for field in (bus.a, bus.b):
        field._driven = "wire"                  # what another block's elaboration left on the field
    folder, name, _ = build(pair_reader, bus, y)
    with open(f"{folder}/{name}.v") as fh:
        text = fh.read()
    assert re.search(r"^input \[3:0\] bus_a;", text, re.M) and re.search(r"^input \[3:0\] bus_b;", text, re.M)
    assert re.search(r"^output \[4:0\] y;", text, re.M)
