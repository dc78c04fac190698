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
    """The slice's ports by their converted names (the tool chain groups them into its buses)."""
    b = lambda: Signal(bool(0))
    return dict(clk=b(), rst=ResetSignal(0, active=1, isasync=False),
                s_axis_tdata=Signal(intbv(0)[width:]), s_axis_tlast=b(), s_axis_tvalid=b(), s_axis_tready=b(),
                m_axis_tdata=Signal(intbv(0)[width:]), m_axis_tlast=b(), m_axis_tvalid=b(), m_axis_tready=b())


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
    design = BatchDesign(axis_register, **register_signals(width), simulator=simulator)
    res = design.run({"s_axis": StreamStimulus(frames, pause_generator(0.3, seed))},
                     sink_pause={"m_axis": pause_generator(0.4, seed + 1)})
    assert res.frames["m_axis"] == frames
    assert [f.cycles for f in res.frames["m_axis"]] == [f.cycles for f in sink.frames]


def test_batched_full_rate_and_no_capture():
    width = 32
    frames = [AxisFrame(list(range(1, 1001)))]
    design = BatchDesign(axis_register, **register_signals(width))
    res = design.run({"s_axis": StreamStimulus(frames)})
    cyc = res.frames["m_axis"][0].cycles
    assert cyc == list(range(cyc[0], cyc[0] + 1000))
    bare = design.run({"s_axis": StreamStimulus(frames)}, capture=False)
    assert bare.frames["m_axis"] == [] and bare.cycles == res.cycles


def test_unknown_stream_is_rejected():
    design = BatchDesign(axis_register, **register_signals(8))
    with pytest.raises(ValueError, match="no such stream"):
        design.run({"s_axis_9": StreamStimulus()})


def test_the_verilator_cxx_level_is_chosen_by_the_environment_and_kept_apart():
    """PRISM_VERILATOR_OPT sets the generated C++'s optimisation level (the suite builds at -O0);
    a build at another level than -O2 gets its own file names, and a bad level is refused."""
    import os
    import subprocess
    import sys
    probe = ("from cosim.sim import batch; "
             "print(' '.join(batch.VERILATOR_MAKE), repr(batch.VERILATOR_OPT_TAG))")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def run(level):
        env = dict(os.environ, PRISM_VERILATOR_OPT=level, PYTHONPATH=root)
        return subprocess.run([sys.executable, "-c", probe], env=env, cwd=root, capture_output=True, text=True)
    assert run("-O2").stdout.split("\n")[0] == "OPT_FAST=-O2 OPT_GLOBAL=-O2 ''"
    assert run("-O0").stdout.split("\n")[0] == "OPT_FAST=-O0 OPT_GLOBAL=-O0 OPT_SLOW=-O0 '_O0'"
    bad = run("-O9")
    assert bad.returncode != 0 and "PRISM_VERILATOR_OPT='-O9'; choose one of -O0, -O1, -O2, -O3, -Os" in bad.stderr


@pytest.mark.slow      # a Verilator build of its own (10-20 s); every other Verilator test builds through the header
def test_verilator_build_reads_the_model_headers_from_one_precompiled_header(tmp_path, monkeypatch):
    """verilator_build compiles the model's headers once per C++ level in use, and every model
    file is compiled with them forced first (GCC warns under -Winvalid-pch when it finds one it
    cannot use); the executable runs the design.  A model in one C++ file gets none.  The
    run-time library is compiled by the first build and taken from the cache by the second."""
    import os
    import subprocess
    from cosim.sim import batch
    monkeypatch.setenv("PRISM_BUILD_DIR", str(tmp_path / "build"))       # an empty run-time cache
    runtime_compiles = []
    counters = "".join(f"reg [15:0] c{i} = {i};\nalways @(posedge clk) c{i} <= c{i} * 3 + n;\n" for i in range(12))
    (tmp_path / "count_tb.v").write_text(
        "module count_tb;\n"
        "reg clk = 0; reg [7:0] n = 0;\n" + counters +
        "always #1 clk = !clk;\n"
        "always @(posedge clk) begin n <= n + 1; if (n == 9) begin $display(\"n=%0d c7=%0d\", n, c7); $finish; end end\n"
        "endmodule\n")
    c7 = 7
    for n in range(10):          # at the display's clock edge c7 still holds its value from before it
        c7, shown = (c7 * 3 + n) & 0xFFFF, c7
    # split into several files at -O2 (the once-run code at Verilator's default level: a second
    # header); one file at -O0.  The run-time library at -O0 in both, to keep the test short.
    for split, make in ((["--output-split", "10"], ("OPT_FAST=-O2", "OPT_GLOBAL=-O0")),
                        ([], ("OPT_FAST=-O0", "OPT_GLOBAL=-O0", "OPT_SLOW=-O0"))):
        monkeypatch.setitem(batch.VERILATOR_VARIANT_MAKE, "plain", make)
        monkeypatch.setitem(batch.VERILATOR_VARIANTS, "plain", batch.VERILATOR_FLAGS + tuple(split))
        mdir, exe = str(tmp_path / f"obj{len(split)}"), str(tmp_path / f"count{len(split)}")
        log = batch.verilator_build("count_tb", ["count_tb.v"], mdir, exe, str(tmp_path))
        assert subprocess.run([exe], capture_output=True, text=True).stdout.startswith(f"n=9 c7={shown}")
        compiles = [line for line in log.splitlines() if " -c " in line and " Vcount_tb" in line]
        runtime_compiles.append(sorted(line.split(" -o ")[1].split()[0] for line in log.splitlines()
                                       if " -c " in line and "/include/verilated" in line))
        built = sorted(f for f in os.listdir(mdir) if f.endswith(".gch"))
        if not split:
            assert [c.split()[-1] for c in compiles] == ["Vcount_tb__ALL.cpp"] and not built
            continue
        fast = [c for c in compiles if " -O2 -c " in c]          # the others: OPT_SLOW, none
        assert len(fast) > 2 and all("-include prism_pch_fast.h" in c for c in fast)
        assert len(compiles) > len(fast) and all("-include prism_pch_slow.h" in c for c in compiles if c not in fast)
        assert "[-Winvalid-pch]" not in log, log[-2000:]
        assert built == ["prism_pch_fast.h.gch", "prism_pch_slow.h.gch"]
    assert "verilated.o" in runtime_compiles[0] and runtime_compiles[1] == []
    cached = os.listdir(tmp_path / "build" / batch.RUNTIME_CACHE)
    assert len(cached) == 1 and "verilated.o" in os.listdir(tmp_path / "build" / batch.RUNTIME_CACHE / cached[0])


def test_condition_words_keep_many_streams_apart():
    """A wired tree has dozens of input streams: a frame waiting on stream 14 must not read as a
    wait for a reset, nor a reset after input stream 8 as one after output stream 0 (the words had
    4-bit codes, and 15 meant a reset)."""
    from cosim.sim.batch import RESET_STREAM, ResetEvent, _after_word
    words = {_after_word((k, 1), 40) for k in range(40)} | {_after_word((RESET_STREAM, 1), 40)}
    assert len(words) == 41
    events = {ResetEvent(f"in {k}", 3).word(40, 12) for k in range(40)} | \
             {ResetEvent(f"out {k}", 3).word(40, 12) for k in range(12)} | {ResetEvent("cycle", 0, 9).word(40, 12)}
    assert len(events) == 53
    with pytest.raises(ValueError, match="stream must be"):
        _after_word((40, 1), 40)
