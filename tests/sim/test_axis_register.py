"""The register slice on both back ends: every accepted beat leaves once, in order,
under random backpressure on both sides; and the tool chain's caching and errors."""
import random

import pytest
from myhdl import ResetSignal, Signal, block, intbv

from cosim.sim import toolchain
from cosim.sim.axis import AxisFrame, AxisSink, AxisSource, pause_generator
from cosim.sim.tbutil import clock_gen, reset_pulse
from hdl.common.axis_register import axis_register
from hdl.common.interface import AxiStream


def run_register(backend, frames, width=64, src_pause=0.0, sink_pause=0.0, seed=0):
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    s_data, m_data = Signal(intbv(0)[width:]), Signal(intbv(0)[width:])
    s_last, s_valid, s_ready = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    m_last, m_valid, m_ready = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    src = AxisSource(clk, s_data, s_valid, s_ready, s_last, pause=pause_generator(src_pause, seed))
    sink = AxisSink(clk, m_data, m_valid, m_ready, m_last, pause=pause_generator(sink_pause, seed + 1))
    for f in frames:
        src.send(f)
    total = sum(len(f) for f in frames)
    dut_factory = toolchain.select(axis_register, backend)

    @block
    def bench():
        dut = dut_factory(clk, rst, AxiStream.wrap(tdata=s_data, tlast=s_last, tvalid=s_valid, tready=s_ready),
                          AxiStream.wrap(tdata=m_data, tlast=m_last, tvalid=m_valid, tready=m_ready))
        return dut, clock_gen(clk), reset_pulse(clk, rst), src.inst(), sink.inst()

    # enough cycles for every beat even at the slowest pause rates used here
    toolchain.run(bench(), duration=10 * (20 + 8 * total), backend=backend)
    return src, sink


def random_frames(rng, n, width):
    return [AxisFrame([rng.getrandbits(width) for _ in range(rng.randint(1, 6))]) for _ in range(n)]


@pytest.mark.parametrize("src_pause,sink_pause", [(0.0, 0.0), (0.3, 0.0), (0.0, 0.5), (0.4, 0.4)])
def test_register_passes_every_beat_once_in_order(backend, src_pause, sink_pause):
    rng = random.Random(7)
    frames = random_frames(rng, 12, 64)
    src, sink = run_register(backend, frames, src_pause=src_pause, sink_pause=sink_pause, seed=3)
    assert sink.frames == frames
    assert src.beats_sent == sink.beats_received == sum(len(f) for f in frames)


def test_register_sustains_one_beat_per_cycle(backend):
    frames = [AxisFrame(list(range(1, 41)))]
    src, sink = run_register(backend, frames)
    cycles = sink.frames[0].cycles
    assert cycles == list(range(cycles[0], cycles[0] + 40))


def test_backends_agree_cycle_for_cycle():
    rng = random.Random(11)
    frames = random_frames(rng, 8, 32)
    got = {}
    for be in toolchain.PER_CYCLE_BACKENDS:
        _, sink = run_register(be, frames, width=32, src_pause=0.3, sink_pause=0.3, seed=5)
        got[be] = [f.cycles for f in sink.frames]
    assert got["myhdl"] == got["icarus"]


def test_width_mismatch_rejected_at_elaboration():
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    with pytest.raises(ValueError, match="m_axis_tdata is 16 bits, s_axis_tdata 8; they must match"):
        axis_register(clk, rst, AxiStream(8), AxiStream(16))


def test_build_is_cached_and_keyed_by_parameters(tmp_path, monkeypatch):
    monkeypatch.setenv("PRISM_BUILD_DIR", str(tmp_path))
    sigs8 = [Signal(bool(0)), ResetSignal(0, active=1, isasync=False), AxiStream(8), AxiStream(8)]
    folder1, _, _ = toolchain.build(axis_register, *sigs8)
    stamp = (tmp_path / "cosim").stat().st_mtime_ns
    folder2, _, _ = toolchain.build(axis_register, *sigs8)
    assert folder1 == folder2
    sigs16 = list(sigs8)
    sigs16[2], sigs16[3] = AxiStream(16), AxiStream(16)
    folder3, _, _ = toolchain.build(axis_register, *sigs16)
    assert folder3 != folder1
    assert sorted(p.name for p in (tmp_path / "cosim").iterdir()) == sorted(
        {folder1.split("/")[-1], folder3.split("/")[-1]})
    del stamp


def test_waves_written_on_every_backend(tmp_path):
    for be in toolchain.BACKENDS:
        path = tmp_path / f"{be}.vcd"
        with toolchain.waves(str(path)):
            run_register(be, [AxisFrame([1, 2, 3])])
        text = path.read_text()
        assert "$enddefinitions" in text and "m_axis_tvalid" in text


def test_missing_vpi_gives_one_line_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("PRISM_MYHDL_VPI", str(tmp_path / "absent.vpi"))
    with pytest.raises(toolchain.ToolchainError) as e:
        run_register("icarus", [AxisFrame([1])])
    assert "\n" not in str(e.value) and "run.sh setup" in str(e.value)
