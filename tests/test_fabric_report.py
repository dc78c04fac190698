"""`prism fabric`: writes the report and the plots; bad arguments give a
one-line error and exit status 2."""
import os

import pytest

from cosim.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_fabric_report_written(tmp_path, capsys):
    out = tmp_path / "rep"
    rc = main(["fabric", "-o", str(out), "--flows", "4096", "--trials", "400", "--seed", "3"])
    assert rc == 0
    report = (out / "fabric_report.md").read_text()
    for name in ("efficiency_vs_flows.png", "max_load_distribution.png", "striping.png"):
        data = (out / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000, name
        assert f"({name})" in report
    # the seed table shows the seed's value beside the computed one
    assert "| 4,8 | efficiency of 32 flows on 32 uplinks (%) = 100/E[max] | 28.4% | 28.305 | explained |" in report
    assert "1.8 x 10^-13 | 1.800e-13 | agree" in report
    assert "3.5329" in report and "crc32 | mod | 4,096" in report
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("argv,msg", [
    (["--flows", "lots"], "--flows must be an integer"),
    (["--flows", "12"], "--flows must be in"),
    (["--trials", "5"], "--trials must be in"),
    (["--impl", "fortran"], "--impl must be"),
    (["--seed", "-4"], "--seed must be in"),
])
def test_bad_arguments_one_line_exit_2(tmp_path, capsys, argv, msg):
    rc = main(["fabric", "-o", str(tmp_path / "x")] + argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert msg in err and err.count("\n") == 1 and "Traceback" not in err
    assert not os.path.exists(tmp_path / "x")          # nothing written on bad input


def test_output_path_that_is_a_file(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("keep me")
    assert main(["fabric", "-o", str(f), "--flows", "2048"]) == 2
    err = capsys.readouterr().err
    assert "not a directory" in err and err.count("\n") == 1
    assert f.read_text() == "keep me"
