"""Batched co-simulation (native vvp / Verilator with a file-driven test bench) gives
the same frames at the same cycles as the per-cycle co-simulation on the same stimulus."""
import itertools
import random

import pytest
from myhdl import ResetSignal, Signal, intbv

from cosim.sim.axis import AxisFrame, pause_generator
from cosim.sim.batch import BatchDesign, StreamStimulus
from hdl.common.axis_register import axis_register

from test_axis_register import run_register


def register_signals(width):
    b = lambda: Signal(bool(0))
    return (b(), ResetSignal(0, active=1, isasync=False), Signal(intbv(0)[width:]), b(), b(), b(),
            Signal(intbv(0)[width:]), b(), b(), b())


def frames_with_delays(seed, width):
    rng = random.Random(seed)
    return [AxisFrame([rng.getrandbits(width) for _ in range(rng.randint(1, 7))], delay=rng.choice([0, 0, 3]))
            for _ in range(25)]


@pytest.mark.parametrize("simulator", ["icarus", "verilator"])
def test_batched_matches_per_cycle_cosim(simulator):
    width, seed = 64, 4
    frames = frames_with_delays(seed, width)
    _, sink = run_register("icarus", [AxisFrame(f.beats, delay=f.delay) for f in frames], width=width,
                           src_pause=0.3, sink_pause=0.4, seed=seed)
    design = BatchDesign(axis_register, *register_signals(width), simulator=simulator)
    res = design.run({"s_axis": StreamStimulus(frames, pause_generator(0.3, seed))},
                     sink_pause={"m_axis": pause_generator(0.4, seed + 1)})
    assert res.frames["m_axis"] == frames
    assert [f.cycles for f in res.frames["m_axis"]] == [f.cycles for f in sink.frames]


def test_batched_full_rate_and_no_capture():
    width = 32
    frames = [AxisFrame(list(range(1, 1001)))]
    design = BatchDesign(axis_register, *register_signals(width))
    res = design.run({"s_axis": StreamStimulus(frames)})
    cyc = res.frames["m_axis"][0].cycles
    assert cyc == list(range(cyc[0], cyc[0] + 1000))
    bare = design.run({"s_axis": StreamStimulus(frames)}, capture=False)
    assert bare.frames["m_axis"] == [] and bare.cycles == res.cycles


def test_unknown_stream_is_rejected():
    design = BatchDesign(axis_register, *register_signals(8))
    with pytest.raises(ValueError, match="no such stream"):
        design.run({"s_axis_9": StreamStimulus()})
