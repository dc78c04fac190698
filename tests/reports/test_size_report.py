"""Smoke test of the yosys size report on a small block (the big blocks are
left to `python -m cosim.reports.size_report`, outside the test run)."""
from cosim.reports import size_report
from hdl.common.axis_register import axis_register


def test_synth_stats_counts_the_register_slice_flops(tmp_path, monkeypatch):
    monkeypatch.setenv("PRISM_BUILD_DIR", str(tmp_path))
    width = 8
    func, args, kwargs = size_report._axis_register(width)
    assert func is axis_register
    stats = size_report.synth_stats(func, *args, **kwargs)
    # output data + skid data (2 x width), output/skid last, skid/out valid, running
    assert stats["flops"] == 2 * width + 5
    assert stats["cells"] > stats["flops"]
    assert sum(stats["cell_types"].values()) == stats["cells"]
    # cached beside the converted design: a second call gives the same figures
    assert size_report.synth_stats(func, *args, **kwargs) == stats
    assert list(tmp_path.glob("cosim/axis_register-*/yosys_stat.json"))


def test_unknown_block_name_is_a_one_line_error(capsys):
    assert size_report.main(["no such block"]) == 2
    err = capsys.readouterr().err
    assert "no such block" in err and err.count("\n") == 1


def test_parse_stat_takes_the_top_module_and_counts_flop_bits():
    text = """
=== sub ===
   Number of cells:                  3
     $_AND_                          3
=== top ===
   Number of cells:                  7
     $_DFF_P_                        2
     $_SDFFE_PP0P_                   1
     $_MUX_                          4
"""
    s = size_report.parse_stat(text)
    assert s == {"flops": 3, "cells": 7, "cell_types": {"$_DFF_P_": 2, "$_SDFFE_PP0P_": 1, "$_MUX_": 4}}
