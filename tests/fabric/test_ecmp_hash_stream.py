"""The AXI-Stream ECMP hash block against golden.fabric.ecmp, bit for bit, under random
backpressure on both sides: per-cycle on both back ends and batched (native vvp and
Verilator, ~2 000 flows), with the batched run landing on the same cycles as the
per-cycle one; full rate when the sink keeps up; parameter checks."""
import random

import pytest
from myhdl import ResetSignal, Signal, block, intbv

from cosim.sim import toolchain
from cosim.sim.axis import AxisFrame, AxisSink, AxisSource, pause_generator
from cosim.sim.batch import BatchDesign, StreamStimulus
from cosim.sim.tbutil import clock_gen, reset_pulse
from golden.fabric import ecmp
from hdl.fabric.ecmp_hash_stream import ecmp_hash_stream

from test_ecmp_hash_unit import random_tuples, tuple_word


def path_bits(paths):
    return max(1, (paths - 1).bit_length())


def stream_signals(paths):
    b = lambda: Signal(bool(0))
    return (b(), ResetSignal(0, active=1, isasync=False), Signal(intbv(0)[104:]), b(), b(), b(),
            Signal(intbv(0)[32 + path_bits(paths):]), b(), b(), b())


def flow_frames(tuples, seed):
    """The flows cut into frames of 1..8 beats (so tlast is exercised), some with start gaps."""
    rng = random.Random(seed)
    frames, i = [], 0
    while i < len(tuples):
        n = rng.randint(1, 8)
        frames.append(AxisFrame([tuple_word(t) for t in tuples[i:i + n]], delay=rng.choice((0, 0, 0, 2))))
        i += n
    return frames


def expected_frames(frames, paths, mode):
    out = []
    for f in frames:
        beats = []
        for word in f.beats:
            h = ecmp.flow_hash(ecmp.deserialize(word.to_bytes(13, "big")), "crc32")
            beats.append((ecmp.select_path(h, paths, mode, 32) << 32) | h)
        out.append(AxisFrame(beats))
    return out


def run_stream(backend, frames, paths=32, mode="mod", src_pause=0.0, sink_pause=0.0, seed=0):
    sig = stream_signals(paths)
    clk, rst, s_data, s_valid, s_ready, s_last, m_data, m_valid, m_ready, m_last = sig
    src = AxisSource(clk, s_data, s_valid, s_ready, s_last, pause=pause_generator(src_pause, seed))
    sink = AxisSink(clk, m_data, m_valid, m_ready, m_last, pause=pause_generator(sink_pause, seed + 1))
    for f in frames:
        src.send(f)
    total = sum(len(f) + f.delay for f in frames)
    factory = toolchain.select(ecmp_hash_stream, backend)

    @block
    def bench():
        dut = factory(*sig, PATHS=paths, PATH_MODE=mode)
        return dut, clock_gen(clk), reset_pulse(clk, rst), src.inst(), sink.inst()

    toolchain.run(bench(), duration=10 * (40 + 12 * total), backend=backend)
    return src, sink


def ring_and_random(n, seed):
    ring = list(ecmp.ring_flows(stripes=2).tuples())
    rng = random.Random(seed)
    return rng.sample(ring, n // 2) + random_tuples(rng, n - n // 2)


@pytest.mark.parametrize("paths,mode,src_pause,sink_pause", [
    (32, "mod", 0.0, 0.0), (32, "mod", 0.3, 0.5), (6, "mulhi", 0.2, 0.7), (6, "mod", 0.0, 0.4)])
def test_stream_bit_exact_under_backpressure(backend, paths, mode, src_pause, sink_pause):
    frames = flow_frames(ring_and_random(160, paths), seed=paths)
    src, sink = run_stream(backend, frames, paths, mode, src_pause, sink_pause, seed=4)
    assert sink.frames == expected_frames(frames, paths, mode)
    assert src.beats_sent == sink.beats_received == 160


def test_stream_full_rate(backend):
    """A sink that always accepts: one flow per cycle in, results back to back out."""
    frames = [AxisFrame([tuple_word(t) for t in random_tuples(random.Random(1), 100)])]
    src, sink = run_stream(backend, frames)
    out = sink.frames[0].cycles
    assert out == list(range(out[0], out[0] + 100))
    assert sink.frames == expected_frames(frames, 32, "mod")


def test_stream_backends_agree_cycle_for_cycle():
    frames = flow_frames(random_tuples(random.Random(8), 120), seed=8)
    cycles = {}
    for be in toolchain.PER_CYCLE_BACKENDS:
        _, sink = run_stream(be, frames, 32, "mod", 0.3, 0.4, seed=6)
        cycles[be] = [f.cycles for f in sink.frames]
    assert cycles["myhdl"] == cycles["icarus"]


# batched Icarus in the slow set (7 s of 2,000 flows); the default run takes Verilator, and the
# per-cycle Icarus run above holds the converted block against MyHDL
@pytest.mark.parametrize("simulator", [pytest.param("icarus", marks=pytest.mark.slow), "verilator"])
def test_stream_batched_2000_flows_bit_exact_and_same_cycles(simulator):
    """~2 000 flows (half the golden model's RoCEv2 ring 5-tuples) through the native
    simulator with random pauses on both sides: bit-exact against golden.fabric.ecmp, and
    every output beat on the same cycle as in the per-cycle MyHDL simulation."""
    frames = flow_frames(ring_and_random(2000, 12), seed=12)
    want = expected_frames(frames, 32, "mod")
    design = BatchDesign(ecmp_hash_stream, *stream_signals(32), simulator=simulator, PATHS=32, PATH_MODE="mod")
    res = design.run({"s_axis": StreamStimulus(frames, pause_generator(0.2, 21))},
                     sink_pause={"m_axis": pause_generator(0.3, 22)}, max_cycles=20_000)
    assert res.frames["m_axis"] == want
    if simulator == "icarus":
        _, sink = run_stream("myhdl", frames, 32, "mod", 0.2, 0.3, seed=21)
        assert [f.cycles for f in res.frames["m_axis"]] == [f.cycles for f in sink.frames]


@pytest.mark.parametrize("kwargs,out_bits,match", [
    (dict(PATHS=0), 37, "PATHS"), (dict(PATH_MODE="xor"), 37, "PATH_MODE"),
    (dict(PATHS=64), 37, "m_axis_tdata"), (dict(PATHS=2), 32, "m_axis_tdata")])
def test_stream_rejects_bad_parameters(kwargs, out_bits, match):
    sig = list(stream_signals(32))
    sig[6] = Signal(intbv(0)[out_bits:])
    with pytest.raises(ValueError, match=match):
        ecmp_hash_stream(*sig, **kwargs)


def test_stream_rejects_wrong_tuple_width():
    sig = list(stream_signals(32))
    sig[2] = Signal(intbv(0)[96:])
    with pytest.raises(ValueError, match="s_axis_tdata"):
        ecmp_hash_stream(*sig)
