"""Mutation campaigns (cosim/mutation/campaign.py), end to end on a small design.

The AXI-Stream register slice, with a regression of its own: random frames through it under
random backpressure on batched Icarus, every beat out equal to a beat in, in order.  The
campaign draws mutants, builds the instrumented slice once, stops the unmutated design from
failing, runs every mutant in rounds until a seed fails, proves survivors equivalent where it
can, and writes its report; the numbers in the report are checked against the mutants' own
verdicts."""
import json
import os
import random

import pytest

from cosim.mutation.campaign import CampaignError, SeedVerdict, Target, markdown, run_campaign, write
from cosim.sim.axis import AxisFrame
from cosim.sim.batch import BatchDesign, StreamStimulus
from cosim.sim.codecov import DesignMap

WIDTH = 8


def _design(sources, folder=None):
    ports = {"clk": ("input", 1), "rst": ("input", 1), "s_axis_tdata": ("input", WIDTH), "s_axis_tlast": ("input", 1),
             "s_axis_tvalid": ("input", 1), "s_axis_tready": ("output", 1), "m_axis_tdata": ("output", WIDTH),
             "m_axis_tlast": ("output", 1), "m_axis_tvalid": ("output", 1), "m_axis_tready": ("input", 1)}
    return BatchDesign.from_verilog(sources, "axis_register", ports, simulator="icarus")


def run_slice_seed(seed, sources, plusargs, timeout):
    """One seed of the slice's regression: frames in = frames out, beat for beat."""
    rng = random.Random(seed)
    frames = [AxisFrame([rng.getrandbits(WIDTH) for _ in range(rng.randint(1, 5))], delay=rng.choice((0, 0, 3)))
              for _ in range(20)]
    design = _design(sources)
    pause = [rng.random() < 0.4 for _ in range(2000)]
    sink = [rng.random() < 0.4 for _ in range(2000)]
    res = design.run({"s_axis": StreamStimulus(frames, pause)}, sink_pause={"m_axis": sink}, max_cycles=2000,
                     idle_stop=20, plusargs=plusargs, timeout=timeout)
    got = [f.beats for f in res.frames["m_axis"]]
    want = [f.beats for f in frames]
    if got == want:
        return SeedVerdict(seed, True, seconds=res.wall_seconds)
    kind = "result-missing" if len(got) < len(want) else "result-value"
    return SeedVerdict(seed, False, (kind,), f"{len(got)} frames out of {len(want)}; first difference at frame "
                                            f"{next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), len(got))}",
                       res.wall_seconds)


@pytest.fixture(scope="module")
def slice_target(tmp_path_factory):
    from cosim.sim import toolchain
    from cosim.sim.tbutil import bit, sync_reset, word
    from hdl.common.axis_register import axis_register
    folder, module, _ = toolchain.build(axis_register, clk=bit(), rst=sync_reset(), s_axis_tdata=word(WIDTH),
                                        s_axis_tlast=bit(), s_axis_tvalid=bit(), s_axis_tready=bit(),
                                        m_axis_tdata=word(WIDTH), m_axis_tlast=bit(), m_axis_tvalid=bit(),
                                        m_axis_tready=bit())
    path = os.path.join(folder, module + ".v")
    return Target("axis_register", path, module, run_slice_seed, lambda sources: _design(sources), DesignMap(path),
                  "axis_register (8 bits)")


def test_a_campaign_kills_counts_and_reports(slice_target, tmp_path):
    camp = run_campaign(slice_target, mutants=12, seeds=list(range(1, 9)), seed=3, jobs=1, timeout=30,
                        first_round=1, equivalence_timeout=20, build_folder=str(tmp_path / "build"))
    statuses = {m.status for m in camp.mutants}
    assert statuses <= {"killed", "survived", "equivalent"}
    killed = [m for m in camp.mutants if m.status == "killed"]
    assert len(camp.mutants) == 12 and len(killed) >= 8
    for m in killed:            # a kill names the seed that failed and what caught it
        assert m.seed in camp.seeds and m.caught_by in ("result value", "missing or extra frame", "hang")
        assert 1 <= m.seeds_run <= len(camp.seeds)
    for m in camp.mutants:
        if m.status != "killed":
            assert m.seeds_run == len(camp.seeds) and m.equivalence is not None
    md = write(camp, str(tmp_path / "out"), "prism mutate (test)")
    data = json.load(open(tmp_path / "out" / "mutation.json"))
    assert data["killed"] == len(killed)
    assert data["non_equivalent"] == sum(1 for m in camp.mutants if m.status != "equivalent")
    text = open(md).read()
    assert f"**{len(killed)} of {data['non_equivalent']} non-equivalent mutants killed" in text
    for m in camp.mutants:
        if m.status == "survived":
            assert f"**#{m.mutation.id}**" in text and f"axis_register.v:{m.mutation.line}" in text


def test_the_unmutated_design_must_pass(slice_target, tmp_path):
    def failing(seed, sources, plusargs, timeout):
        return SeedVerdict(seed, False, ("result-value",), "always fails")
    broken = Target("axis_register", slice_target.verilog_path, slice_target.module, failing, slice_target.prepare,
                    slice_target.design_map)
    with pytest.raises(CampaignError, match="fails on the unmutated design"):
        run_campaign(broken, mutants=3, seeds=[1, 2], jobs=1, build_folder=str(tmp_path / "b"))


def test_a_hanging_mutant_is_caught_as_a_hang(slice_target, tmp_path):
    calls = []

    def hangs_once_selected(seed, sources, plusargs, timeout):
        calls.append(plusargs)
        if plusargs[0].endswith("=2"):
            return SeedVerdict(seed, False, ("timeout",), "simulator stopped after 1 s")
        return SeedVerdict(seed, True)
    t = Target("axis_register", slice_target.verilog_path, slice_target.module, hangs_once_selected,
               None, slice_target.design_map)
    camp = run_campaign(t, mutants=3, seeds=[1, 2, 3], jobs=1, build_folder=str(tmp_path / "h"), equivalence=False)
    by_id = {m.mutation.id: m for m in camp.mutants}
    assert by_id[2].status == "killed" and by_id[2].caught_by == "hang" and by_id[2].seeds_run == 1
    assert by_id[1].status == by_id[3].status == "survived" and by_id[1].seeds_run == 3
    assert "## Survivors" in markdown(camp)


def test_mutants_proved_equivalent_early_stop_running_seeds(slice_target, tmp_path, monkeypatch):
    """After `early_proofs` seeds the mutants still alive go to the prover's quick tiers; one proved
    equivalent then runs no more seeds, and the rest run them all and get the full proof at the
    end.  The prover is replaced by one that proves every third mutant (the prover itself:
    test_equivalence.py), so the campaign's bookkeeping is what is tested, at any machine load."""
    from cosim.mutation import campaign, equivalence
    calls = []

    def every_third(text, module, mutation, timeout):
        calls.append((mutation.id, timeout))
        proved = mutation.id % 3 == 0
        return equivalence.EquivalenceVerdict(True if proved else None, "unobservable" if proved else "none",
                                              "test prover", 0.0)
    monkeypatch.setattr(equivalence, "prove_equivalent", every_third)

    def passes(seed, sources, plusargs, timeout):
        return SeedVerdict(seed, True)
    t = Target("axis_register", slice_target.verilog_path, slice_target.module, passes, None,
               slice_target.design_map)
    camp = run_campaign(t, mutants=9, seeds=list(range(1, 15)), jobs=1, first_round=2, early_proofs=6,
                        equivalence_timeout=7, build_folder=str(tmp_path / "e"))
    by_id = {m.mutation.id: m for m in camp.mutants}
    assert {k for k, m in by_id.items() if m.status == "equivalent"} == {3, 6, 9}
    assert all(by_id[k].seeds_run == 6 for k in (3, 6, 9))
    assert all(m.seeds_run == 14 and m.status == "survived" for k, m in by_id.items() if k % 3)
    # the quick pass asks every mutant alive at seed 6; the full pass only the survivors
    assert [c for c in calls if c[1] == campaign.EARLY_PROOF_SECONDS] == [(k, campaign.EARLY_PROOF_SECONDS)
                                                                          for k in range(1, 10)]
    assert sorted(k for k, tmo in calls if tmo == 7) == [k for k in range(1, 10) if k % 3]
