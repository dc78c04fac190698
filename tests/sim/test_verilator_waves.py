"""Waveforms from batched runs: Verilator's traced build writes the VCD (or FST) a run asks for,
as batched Icarus does; `prism replay --vcd` writes the file it names (the node under `slow`)."""
import os
import random
import subprocess
import sys

import pytest
from myhdl import Signal, intbv

from cosim.sim.axis import AxisFrame
from cosim.sim.batch import VERILATOR_OPT_TAG, BatchDesign, StreamStimulus
from hdl.common.axis_register import axis_register

from test_batch import register_signals as batch_register_signals

WIDTH = 64          # the block test_batch.py builds: its plain builds are shared, only tracing is extra


def register_signals():
    return batch_register_signals(WIDTH)


def read_vcd(path):
    """({scope path: {signal: [(time, value), ...]}}, {(scope path, signal): declared width}) of a
    VCD file (a reader of our own: only what the checks need, so a broken file fails here)."""
    with open(path) as fh:
        text = fh.read()
    head, sep, body = text.partition("$enddefinitions")
    assert sep, f"{path}: no $enddefinitions: not a VCD file"
    scopes, by_code, widths = [], {}, {}
    tokens = head.split()
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "$scope":
            scopes.append(tokens[i + 2])
            i += 3
        elif t == "$upscope":
            scopes.pop()
            i += 1
        elif t == "$var":
            width, code, name = int(tokens[i + 2]), tokens[i + 3], tokens[i + 4]
            by_code.setdefault(code, []).append((".".join(scopes), name))
            widths[(".".join(scopes), name)] = width
            i += 5
        else:
            i += 1
    changes = {where: [] for codes in by_code.values() for where in codes}
    time, vector = 0, None
    for tok in body.split()[1:]:          # after the "$end" of $enddefinitions
        if vector is not None:            # "b0101 <code>": the code follows the value
            for where in by_code[tok]:
                changes[where].append((time, vector))
            vector = None
        elif tok.startswith("#"):
            time = int(tok[1:])
        elif tok[0] in "bB":
            vector = tok[1:]
        elif tok[0] in "01xzXZ" and tok[1:] in by_code:
            for where in by_code[tok[1:]]:
                changes[where].append((time, tok[0]))
    out = {}
    for (scope, name), seq in changes.items():
        out.setdefault(scope, {})[name] = seq
    return out, widths


def dut_scope(waves):
    """The design instance's scope (batch_tb.dut under Icarus, TOP.batch_tb.dut under Verilator)."""
    scopes = [s for s in waves if s.split(".")[-1] == "dut"]
    assert len(scopes) == 1, sorted(waves)
    return waves[scopes[0]]


def frames(seed=3):
    rng = random.Random(seed)
    return [AxisFrame([rng.getrandbits(WIDTH) for _ in range(rng.randint(1, 5))]) for _ in range(10)]


@pytest.mark.parametrize("simulator", ["verilator", "icarus"])
def test_batched_run_writes_the_vcd_it_is_given(simulator, tmp_path):
    design = BatchDesign(axis_register, **register_signals(), simulator=simulator)
    path = tmp_path / "run.vcd"
    stalls = [i % 3 == 0 for i in range(300)]
    res = design.run({"s_axis": StreamStimulus(frames())}, sink_pause={"m_axis": stalls}, vcd=str(path))
    assert res.frames["m_axis"] == frames()
    dut = dut_scope(read_vcd(path)[0])
    clock_edges = sum(1 for _, v in dut["clk"] if v == "1")
    assert clock_edges >= res.cycles - 1
    beats = sum(len(f) for f in frames())
    valid = dut["m_axis_tvalid"]
    assert {v for _, v in valid} == {"0", "1"} and len(valid) >= 2
    # every beat that left shows up on the traced data bus
    data_values = {int(v, 2) for _, v in dut["m_axis_tdata"] if set(v) <= {"0", "1"}}
    assert {b for f in frames() for b in f.beats} <= data_values
    assert len(data_values) <= beats + 1


def test_plain_and_traced_verilator_builds_are_separate(tmp_path):
    design = BatchDesign(axis_register, **register_signals(), simulator="verilator")
    plain = design.executable("plain")
    traced = design.executable("trace")
    assert plain != traced and os.path.exists(plain) and os.path.exists(traced)
    level = VERILATOR_OPT_TAG          # the suite's C++ level ('' at the default -O2)
    stamp = lambda tag: open(os.path.join(design.folder, f".built-verilator_r2{tag}{level}")).read()
    assert stamp("") != stamp("_trace")
    # a plain run writes no waveform; the traced build is not used for it
    res = design.run({"s_axis": StreamStimulus(frames())})
    assert res.frames["m_axis"] == frames()
    assert os.path.getmtime(traced) == os.path.getmtime(design.executable("trace"))


def test_a_design_can_wait_for_its_first_run_to_build(tmp_path):
    from cosim.sim.batch import builds_on_first_run
    sig = register_signals()
    sig["s_axis_tdata"] = Signal(intbv(0)[WIDTH + 1:])          # a design no other test builds
    sig["m_axis_tdata"] = Signal(intbv(0)[WIDTH + 1:])
    with builds_on_first_run():
        design = BatchDesign(axis_register, **sig, simulator="icarus", reset_cycles=3)
    exe = os.path.join(design.folder, "batch_icarus_r3.vvp")
    if os.path.exists(exe):
        os.remove(exe)
        os.remove(os.path.join(design.folder, ".built-icarus_r3"))
        design = None
        with builds_on_first_run():
            design = BatchDesign(axis_register, **sig, simulator="icarus", reset_cycles=3)
    assert not os.path.exists(exe)
    res = design.run({"s_axis": StreamStimulus(frames())})
    assert os.path.exists(exe) and sum(len(f) for f in res.frames["m_axis"]) == sum(len(f) for f in frames())


def test_icarus_writes_fst_when_the_name_says_so(tmp_path):
    design = BatchDesign(axis_register, **register_signals(), simulator="icarus")
    path = tmp_path / "run.fst"
    design.run({"s_axis": StreamStimulus(frames())}, vcd=str(path))
    head = open(path, "rb").read(64)
    assert len(head) == 64 and not head.startswith(b"$")      # binary FST, not VCD text


@pytest.mark.slow
def test_verilator_writes_fst_when_the_name_says_so(tmp_path):
    design = BatchDesign(axis_register, **register_signals(), simulator="verilator")
    path = tmp_path / "run.fst"
    design.run({"s_axis": StreamStimulus(frames())}, vcd=str(path))
    head = open(path, "rb").read(64)
    assert len(head) == 64 and not head.startswith(b"$")


@pytest.mark.slow
def test_replay_on_verilator_writes_the_waves_it_names(tmp_path):
    """The command `prism regress` prints for a failing seed writes the waveform it promises
    (the node's traced Verilator build: minutes the first time)."""
    vcd = tmp_path / "seed3.vcd"
    r = subprocess.run([sys.executable, "-m", "cosim.cli", "replay", "3", "--backend", "batch-verilator",
                        "--width", "320", "--vcd", str(vcd), "--out", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stdout + r.stderr        # the verdict is not the point here
    assert f"waves {vcd}" in r.stdout
    waves, widths = read_vcd(vcd)
    dut = dut_scope(waves)
    for name in ("clk", "s_axis_0_tvalid", "m_axis_0_tvalid"):
        assert {v for _, v in dut[name]} == {"0", "1"}, name
    assert [w for (scope, name), w in widths.items() if scope.endswith("dut") and name == "m_axis_0_tdata"] == [512]
    assert len({v for _, v in dut["m_axis_0_tdata"]}) > 2     # wide buses are traced whole, and they move
