"""The delay model that turns LUT levels into a clock and a line rate, and the depth budget every
phase block of the node is held to (cosim/reports/timing.py): depth must not creep back."""
import os

import pytest

from cosim.reports import synth, timing
from spec.formats import KULISCH_WIDTH_CHOICES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_model_gives_the_clocks_the_goals_are_stated_in():
    # 8 levels: about 250 MHz, 128 Gb/s on a 512-bit port; 6 levels: the CMAC's 322 MHz
    assert timing.period_ns(8) == pytest.approx(4.0)
    assert timing.fmax_mhz(8) == pytest.approx(250.0)
    assert timing.port_gbps(timing.fmax_mhz(8)) == pytest.approx(128.0)
    assert 320 <= timing.fmax_mhz(6) <= 325
    # deeper is slower, and nothing is faster than the cap
    assert timing.fmax_mhz(57) < timing.fmax_mhz(34) < timing.fmax_mhz(8)
    assert timing.fmax_mhz(0) == timing.FMAX_CAP_MHZ
    with pytest.raises(ValueError):
        timing.period_ns(-1)


def test_a_block_over_its_budget_is_reported_and_one_within_is_not():
    assert timing.over_budget("prism_egress", timing.DEPTH_BUDGET["prism_egress"]) is None
    complaint = timing.over_budget("prism_egress", timing.DEPTH_BUDGET["prism_egress"] + 0.25)
    assert complaint and "over its budget" in complaint
    assert "no depth budget" in timing.over_budget("prism_new_block", 1.0)


def test_every_phase_block_has_a_budget_and_the_quick_ones_are_phase_blocks():
    assert set(timing.DEPTH_BUDGET) == set(synth.block_names())
    assert set(timing.QUICK_BLOCKS) <= set(synth.block_names())


def test_the_committed_figures_are_within_budget():
    """The figures docs/hdl_sizes.md is written from: no block's deepest path over its budget."""
    by_width, _ = synth.load_figures(os.path.join(ROOT, "docs", "hdl_sizes_synth.json"))
    over = [f"W {w}: {c}" for w, rows in by_width.items() for r in rows if "figures" in r
            for c in [timing.over_budget(r["block"], r["figures"]["depth"][0]["depth"])] if c]
    assert not over, over


def _synthesised_depth(block, width, recorded_paths=None):
    row = synth.synth_node(width, blocks=[block], recorded_paths=recorded_paths)[0]
    assert "figures" in row, row.get("error")
    return row["figures"]["depth"][0]["depth"]


@pytest.mark.parametrize("block", timing.QUICK_BLOCKS)
def test_a_quick_block_is_within_its_budget(block):
    """Synthesised now (seconds of yosys): the default run holds the quickest blocks.  A composite's
    sub-blocks (minutes of yosys) are timed by the paths recorded with the committed figures."""
    recorded = synth.recorded_port_paths(os.path.join(ROOT, "docs", "hdl_sizes_synth.json"), 320)
    assert timing.over_budget(block, _synthesised_depth(block, 320, recorded)) is None


@pytest.mark.slow       # minutes of yosys per large block, at both widths
@pytest.mark.parametrize("width", KULISCH_WIDTH_CHOICES)
@pytest.mark.parametrize("block", synth.block_names())
def test_every_block_is_within_its_budget(block, width):
    assert timing.over_budget(block, _synthesised_depth(block, width)) is None
