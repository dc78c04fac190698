"""`prism package`: the report files, their computed figures (each figure with
the seed's value, ours, and what produced it), and one-line errors with exit
status 2 on bad arguments."""
import re

import pytest

from cosim.cli import main

import test_package_faults
import test_package_monitor
import test_package_resources


def _report(tmp_path, *extra):
    out = tmp_path / "rep"
    assert main(["package", "-o", str(out), *extra]) == 0
    md = (out / "package_report.md").read_text()
    png = (out / "package_report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    return md


def _rows(md, first_cell):
    out = []
    for line in md.splitlines():
        if line.startswith(f"| {first_cell} |"):
            out.append([c.strip() for c in line.strip("|").split("|")])
    if not out:
        raise AssertionError(f"no table row starting with {first_cell!r}")
    return out


def test_model_tables_only(tmp_path):
    md = _report(tmp_path, "--no-sim")
    # the definition of phase cycles is given once, and used consistently
    assert md.count("*Phase cycles* = *stream cycles* + *barrier cycles*") == 1
    assert "120 + 200 = 320" in md and "23.4 %" in md
    dies = {n: _rows(md, str(n))[0] for n in (1, 2, 4, 8)}
    assert [dies[n][4] for n in (1, 2, 4, 8)] == ["500", "400", "320", "320"]
    assert [dies[n][3] for n in (1, 2, 4, 8)] == ["compute", "d2d", "hbm", "hbm"]
    assert dies[2][5] == "1.2500x" and dies[4][5] == "1.5625x"
    assert _rows(md, "HBM x2")[0][3] == "d2d" and _rows(md, "barrier / 2")[0][2] == "220"
    # every model figure says where it came from
    for row in _rows(md, "minimum service") + _rows(md, "compute utilisation"):
        assert row[-1] == "model (golden.package.resource_graph)"
    # degraded die, fluid model: the notes' 50 % and 12 % (12.5 %)
    cb = {r[1]: r for r in _rows(md, "compute-bound")}
    assert cb["round_robin"][3] == "50.0 %" and cb["service_rate"][3] == "12.5 %"
    # partitioning: NPS4 is legal with CPX only
    rows = _rows(md, "SPX") + _rows(md, "DPX") + _rows(md, "CPX")
    nps4 = {r[0]: r[5] for r in rows if r[1] == "NPS4"}
    assert nps4 == {"SPX": "illegal", "DPX": "illegal", "CPX": "legal"}
    assert "co-sim" in md and "| - |" in md


@pytest.mark.slow      # 10-16 s: the whole report with the package co-simulated; its parts are tested one by one
def test_report_with_the_cosimulated_package(tmp_path):
    md = _report(tmp_path, "--backend", "icarus-2005")
    # worked example, cycle by cycle: 8 x 320 cycles, HBM binds by the arbiter's counters
    cosim = [r for r in _rows(md, "phase cycles") if r[-1].startswith("co-simulated")][0]
    phase = float(cosim[2].split("= ")[1].split("(")[1].rstrip(")"))
    assert 320 <= phase <= 322
    assert _rows(md, "binding node")[0][2].startswith("hbm")
    # die-count scaling and migration co-simulated: binding nodes agree with the model
    for n in (2, 4, 8):
        row = _rows(md, str(n))[0]
        assert row[-1] == row[3]
    # degraded die: co-simulated losses close to the fluid model's
    cb = {r[1]: r for r in _rows(md, "compute-bound")}
    assert 49 < float(cb["round_robin"][6].rstrip(" %")) < 51
    assert 12.5 <= float(cb["service_rate"][6].rstrip(" %")) < 15
    # co-simulated cycles everywhere carry their model-cycle equivalent (the definitions' promise)
    for cell in [cb[p][5] for p in cb] + [_rows(md, run)[0][5] for run in ("no retries", "with retries")]:
        for sim_cycles, model_cycles in re.findall(r"(\d+) \(([\d.]+)\)", cell):
            assert abs(int(sim_cycles) / 8 - float(model_cycles)) < 0.05, cell
        assert re.findall(r"\d+ \([\d.]+\)", cell), cell
    assert "stream cycles (= phase cycles: no barrier)" in md
    # diagnosis: each scenario named right
    assert "its own compute is slow" in md and "held back downstream of its compute" in md
    assert "HBM was used up" in md and "D2D was used up" in md and "healthy: rates alike" in md
    # retries leave svc_rate unchanged; counted as work they are caught
    assert _rows(md, "with retries")[0][2] == "yes"
    assert "a_work_conserved (cycle" in _rows(md, "with retries, fault retry_as_work")[0][6]
    # every assertion fires on its broken variant, alone, and holds on the correct design
    for a in ("a_retire_once", "a_retry_creates_no_job", "a_route_epoch_stable", "a_no_dispatch_to_disabled",
              "a_bounded_imbalance", "a_work_conserved"):
        row = _rows(md, f"`{a}`")[0]
        assert row[4].isdigit() and row[5] == "none" and row[6] == "holds"
    # the tests the report names exist
    named = set(re.findall(r"`(test_\w+)", md))
    assert {"test_slow_die_is_not_starved", "test_shared_bottleneck_starves_every_die",
            "test_retries_leave_svc_rate_unchanged",
            "test_broken_variant_fires_exactly_its_assertion_on_both_back_ends"} <= named
    modules = (test_package_faults, test_package_monitor, test_package_resources)
    assert all(any(hasattr(m, t) for m in modules) for t in named), named
    assert hasattr(test_package_faults, "test_broken_variant_fires_exactly_its_assertion_under_verilator")


@pytest.mark.parametrize("args,needle", [
    (["--degraded-die", "7"], "--degraded-die"),
    (["--degraded-die", "two"], "integer"),
    (["--degraded-factor", "0"], "0 < F <= 1"),
    (["--degraded-factor", "1/3"], "whole number"),
    (["--degraded-factor", "half"], "fraction"),
    (["--window", "1"], "--window"),
    (["--phase-units", "100"], "multiple of 16"),
    (["--backend", "vcs"], "--backend"),
    (["--partition", "DPX+NPS4"], "must not exceed"),
    (["--partition", "CPX"], "CPX+NPS4"),
    (["--partition", "QPX+NPS1"], "unknown compute mode"),
    (["--bogus"], ""),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, prism_refuses, args, needle):
    assert needle in prism_refuses(["package", "-o", str(tmp_path / "x"), "--no-sim", *args])


def test_output_path_that_is_a_file(tmp_path, prism_refuses):
    f = tmp_path / "file"
    f.write_text("x")
    assert "cannot create" in prism_refuses(["package", "-o", str(f), "--no-sim"])
