"""`prism package`: the report files, their computed figures, and one-line errors
with exit status 2 on bad arguments."""
import re

import pytest

from cosim.cli import main


def _report(tmp_path, *extra):
    out = tmp_path / "rep"
    assert main(["package", "-o", str(out), *extra]) == 0
    md = (out / "package_report.md").read_text()
    png = (out / "package_report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    return md


def _row(md, first_cell):
    for line in md.splitlines():
        if line.startswith(f"| {first_cell} |"):
            return [c.strip() for c in line.strip("|").split("|")]
    raise AssertionError(f"no table row starting with {first_cell!r}")


def test_tables_only(tmp_path):
    md = _report(tmp_path, "--no-sim")
    assert "120 + 200 = 320 cycles" in md and "23.4 %" in md
    dies = {n: _row(md, str(n)) for n in (1, 2, 4, 8)}
    assert [dies[n][5] for n in (1, 2, 4, 8)] == ["500", "400", "320", "320"]
    assert [dies[n][4] for n in (1, 2, 4, 8)] == ["compute", "d2d", "hbm", "hbm"]
    assert dies[2][6] == "1.2500x" and dies[4][6] == "1.5625x" and dies[8][7] == "1x"
    assert _row(md, "HBM x2")[2] == "d2d" and _row(md, "barrier / 2")[1] == "220"
    assert "co-simulation skipped" in md


def test_report_with_cosimulated_scenario(tmp_path):
    # A shorter phase than the default 1200 units keeps this quick; the scenario's full-size
    # figures are asserted in test_degraded_die.py.
    md = _report(tmp_path, "--backend", "icarus", "--phase-units", "480")
    losses = {}
    for pol in ("round_robin", "service_rate"):
        for line in md.splitlines():
            if line.startswith(f"| {pol} |") and "units/cycle" not in line and "->" in line and "%" in line:
                cells = [c.strip() for c in line.strip("|").split("|")]
                if re.fullmatch(r"\d+", cells[1]):
                    losses[pol] = float(cells[4].rstrip(" %"))
    assert 45 < losses["round_robin"] < 55
    assert 12.5 <= losses["service_rate"] < 20     # fluid 12.5 % + a first window of round-robin
    assert "2 (degraded)" in md
    assert "| round_robin | degraded | none |" in md and "| service_rate | degraded | none |" in md


@pytest.mark.parametrize("args,needle", [
    (["--degraded-die", "7"], "--degraded-die"),
    (["--degraded-die", "two"], "integer"),
    (["--degraded-factor", "0"], "0 < F <= 1"),
    (["--degraded-factor", "1/3"], "whole number"),
    (["--degraded-factor", "half"], "fraction"),
    (["--window", "1"], "--window"),
    (["--phase-units", "100"], "multiple of 16"),
    (["--backend", "verilator"], "--backend"),
    (["--bogus"], ""),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, args, needle):
    argv = ["package", "-o", str(tmp_path / "x"), "--no-sim", *args]
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2
    if needle:
        assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_output_path_that_is_a_file(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["package", "-o", str(f), "--no-sim"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot create" in err
