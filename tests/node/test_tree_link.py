"""The wired tree's two small blocks on MyHDL and converted under Icarus, under random
backpressure on both sides:

- prism_tree_link: a RESULT frame of one group leaves as the DATA frame the golden protocol
  encodes for the same elements (the naive reference: decode, then encode as DATA with the
  link's contributor id); every other frame is consumed whole and counted;
- axis_frame_mux: every frame of both inputs leaves once, whole, in its input's order, and
  neither input waits more than one frame of the other.
"""
import random

import pytest
from myhdl import ResetSignal, Signal, block, instance, intbv

from cosim.sim import toolchain
from cosim.sim.axis import AxisFrame, AxisSink, AxisSource, pause_generator
from cosim.sim.tbutil import clock_gen, reset_pulse
from golden.node import protocol as P
from hdl.common.axis_frame_mux import axis_frame_mux
from hdl.common.interface import AxiStream
from hdl.node.prism_tree_link import prism_tree_link


def stream(width=512):
    return AxiStream(width)


def fields(bus):
    """The stream's signals in the order AxisSource and AxisSink take them."""
    return bus.tdata, bus.tvalid, bus.tready, bus.tlast


def run_link(backend, frames, contributor, src_pause, sink_pause, seed):
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    s_axis, m_axis = stream(), stream()
    dropped = Signal(intbv(0)[8:])
    src = AxisSource(clk, *fields(s_axis), pause=pause_generator(src_pause, seed))
    sink = AxisSink(clk, *fields(m_axis), pause=pause_generator(sink_pause, seed + 1))
    for f in frames:
        src.send(f)
    total = sum(len(f) for f in frames)
    dut_factory = toolchain.select(prism_tree_link, backend)
    seen = []

    @block
    def bench():
        dut = dut_factory(clk, rst, s_axis, m_axis, dropped, CONTRIBUTOR=contributor)

        @instance
        def watch():
            while True:
                yield clk.negedge
                seen.append(int(dropped))
        return dut, clock_gen(clk), reset_pulse(clk, rst), src.inst(), sink.inst(), watch

    toolchain.run(bench(), duration=10 * (40 + 8 * total), backend=backend)
    return src, sink, seen[-1]


def result_frames(rng):
    """(RESULT or other frame objects, whether the link sends it on)."""
    frames = []
    for fmt, count in ((P.FMT_FP32, 256), (P.FMT_EXACT, 16), (P.FMT_INT8, 48), (P.FMT_FP32, 32), (P.FMT_EXACT, 33),
                       (P.FMT_BF16, 16), (P.FMT_FP16, 64)):
        if fmt == P.FMT_EXACT:
            values = tuple((rng.randrange(-(1 << 300), 1 << 300), rng.getrandbits(4)) for _ in range(count))
        else:
            values = tuple(rng.getrandbits(P.ELEMENT_BITS[fmt]) for _ in range(count))
        frames.append((P.Result(rng.randrange(256), rng.randrange(65536), 256 * rng.randrange(16),
                                ((fmt, values),), kulisch_w=rng.choice((280, 320))), True))
    two_groups = P.Result(3, 4, 0, ((P.FMT_INT8, (1,) * 16), (P.FMT_FP32, (2,) * 16)))
    frames.insert(2, (two_groups, False))                                   # AUTO's kind: not DATA
    frames.insert(4, (P.Response(True, 3, 4, 0, P.OP_COMMIT), False))       # a response: never sent on
    frames.insert(5, (P.Data(3, 4, 1, P.FMT_FP32, 0, (7,) * 16), False))      # a DATA frame: not a child's result
    bad_format = P.Result(3, 4, 0, ((P.FMT_FP32, (5,) * 16),)).encode()
    bad_format[0] |= 7 << P.GROUP_DESC_LSB                                  # group format 7: no DATA format
    frames.append((bad_format, False))
    return frames


def as_data(result, contributor):
    (fmt, values), = result.groups
    return P.Data(result.op_id, result.generation, contributor, fmt, result.offset, values).encode()


@pytest.mark.parametrize("src_pause,sink_pause", [(0.0, 0.0), (0.3, 0.5), (0.6, 0.2)])
def test_link_sends_a_result_on_as_the_data_frame_of_its_elements(backend, src_pause, sink_pause):
    rng = random.Random(5)
    frames = result_frames(rng)
    contributor = 5
    src, sink, dropped = run_link(backend, [AxisFrame(f.encode() if hasattr(f, "encode") else f) for f, _ in frames],
                                  contributor, src_pause, sink_pause, seed=9)
    want = [AxisFrame(as_data(f, contributor)) for f, sent in frames if sent]
    assert [f.beats for f in sink.frames] == [f.beats for f in want]
    assert dropped == sum(1 for _, sent in frames if not sent)
    assert src.beats_sent == sum(len(f.encode() if hasattr(f, "encode") else f) for f, _ in frames)


def test_link_keeps_line_rate_through_a_result():
    rng = random.Random(2)
    result = P.Result(1, 2, 0, ((P.FMT_EXACT, tuple((rng.getrandbits(200), 0) for _ in range(64))),))
    _, sink, _ = run_link("icarus", [AxisFrame(result.encode())], 0, 0.0, 0.0, seed=1)
    cycles = sink.frames[0].cycles
    assert cycles == list(range(cycles[0], cycles[0] + 65))


def test_link_refuses_a_contributor_a_parent_cannot_have():
    with pytest.raises(ValueError, match="CONTRIBUTOR"):
        prism_tree_link(Signal(bool(0)), ResetSignal(0, active=1, isasync=False), stream(), stream(),
                        Signal(intbv(0)[8:]), CONTRIBUTOR=8)


def run_mux(backend, frames_a, frames_b, src_pause, sink_pause, seed, width=64):
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    a, b, m = stream(width), stream(width), stream(width)
    src_a = AxisSource(clk, *fields(a), pause=pause_generator(src_pause, seed))
    src_b = AxisSource(clk, *fields(b), pause=pause_generator(src_pause, seed + 1))
    sink = AxisSink(clk, *fields(m), pause=pause_generator(sink_pause, seed + 2))
    for f in frames_a:
        src_a.send(f)
    for f in frames_b:
        src_b.send(f)
    total = sum(len(f) for f in frames_a + frames_b)
    dut_factory = toolchain.select(axis_frame_mux, backend)

    @block
    def bench():
        dut = dut_factory(clk, rst, a, b, m)
        return dut, clock_gen(clk), reset_pulse(clk, rst), src_a.inst(), src_b.inst(), sink.inst()

    toolchain.run(bench(), duration=10 * (40 + 8 * total), backend=backend)
    return sink


@pytest.mark.parametrize("src_pause,sink_pause", [(0.0, 0.0), (0.3, 0.4), (0.5, 0.0)])
def test_mux_passes_every_frame_whole_and_in_order(backend, src_pause, sink_pause):
    rng = random.Random(13)
    # a frame's beats name it: input (bit 40), frame number (bits 32+), beat
    frames_a = [AxisFrame([(1 << 40) | (i << 32) | j for j in range(rng.randint(1, 7))]) for i in range(10)]
    frames_b = [AxisFrame([(2 << 40) | (i << 32) | j for j in range(rng.randint(1, 7))]) for i in range(10)]
    sink = run_mux(backend, frames_a, frames_b, src_pause, sink_pause, seed=4)
    got = [f.beats for f in sink.frames]
    assert sorted(got) == sorted(f.beats for f in frames_a + frames_b)     # every frame once, whole
    assert [f for f in got if f[0] >> 40 == 1] == [f.beats for f in frames_a]
    assert [f for f in got if f[0] >> 40 == 2] == [f.beats for f in frames_b]


def test_mux_alternates_when_both_inputs_wait():
    frames_a = [AxisFrame([(1 << 40) | i]) for i in range(6)]
    frames_b = [AxisFrame([(2 << 40) | i, (2 << 40) | i]) for i in range(6)]
    sink = run_mux("icarus", frames_a, frames_b, 0.0, 0.0, seed=1)
    sources = [f.beats[0] >> 40 for f in sink.frames]
    assert all(x != y for x, y in zip(sources, sources[1:])), sources


def test_mux_refuses_inputs_of_another_width():
    with pytest.raises(ValueError, match="s_axis_a_tdata is 32 bits, m_axis_tdata 64; they must match"):
        axis_frame_mux(Signal(bool(0)), ResetSignal(0, active=1, isasync=False), stream(32), stream(64), stream(64))
