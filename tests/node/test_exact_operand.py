"""prism_exact_operand (an EXACT partial as a Kulisch word) on MyHDL and converted under Icarus,
against the naive reference: golden.arith.kulisch's add_exact into an empty register."""
import random

import pytest
from myhdl import Signal, intbv

from cosim.sim import toolchain
from cosim.sim.pipeline import run_per_cycle
from golden.arith.kulisch import KulischAccumulator
from golden.node import protocol as P
from hdl.node.prism_exact_operand import prism_exact_operand
from spec.formats import KULISCH_WRAP_BITS, exact_input_limit


def reference_word(width, total, flags):
    """The word a row adds for this one partial: {-inf, +inf, nan, E}, E = signed(state) + wraps * 2^W
    mod 2^(W + WB) of the register that holds the partial alone."""
    acc = KulischAccumulator(width)
    acc.add_exact(total, flags)
    ew = width + KULISCH_WRAP_BITS
    e = (acc.signed_state + (acc.wraps << width)) & ((1 << ew) - 1)
    return e | acc.nan << ew | acc.pos_inf << (ew + 1) | acc.neg_inf << (ew + 2)


def partials(width, rng):
    limit = exact_input_limit(width)
    edges = [0, 1, -1, limit - 1, -limit, limit, -limit - 1, (1 << (width - 1)) - 1, -(1 << (width - 1)),
             1 << (width - 1), -(1 << (width - 1)) - 1, (1 << 507) - 1, -(1 << 507)]
    out = [(v, 0) for v in edges]
    out += [(rng.randrange(-limit, limit), rng.choice((0, 0, 1, 2, 4, 6, 8, 15))) for _ in range(150)]
    out += [(rng.randrange(-(1 << 507), 1 << 507), rng.getrandbits(4)) for _ in range(40)]
    return out


@pytest.mark.parametrize("backend", ["myhdl", "icarus"])
@pytest.mark.parametrize("width", [320, 280])
def test_the_word_is_the_one_the_reference_row_holds(backend, width):
    values = partials(width, random.Random(width))
    clk = Signal(bool(0))
    beat, word = Signal(intbv(0)[512:]), Signal(intbv(0)[width + 3 + KULISCH_WRAP_BITS:])

    def load(value):
        beat.next = P.encode_exact(*value)

    # the word is registered at the edge
    out = run_per_cycle(toolchain.select(prism_exact_operand, backend), (clk, beat, word), clk, values, load,
                        lambda: int(word), backend, registered=True)
    assert out == [reference_word(width, t, f) for t, f in values]


def test_a_word_of_another_width_is_refused():
    with pytest.raises(ValueError, match="KULISCH_W"):
        prism_exact_operand(Signal(bool(0)), Signal(intbv(0)[512:]), Signal(intbv(0)[300:]))
    with pytest.raises(ValueError, match="cannot hold"):
        prism_exact_operand(Signal(bool(0)), Signal(intbv(0)[512:]), Signal(intbv(0)[320 + 3 + 8:]), WRAP_BITS=8)
