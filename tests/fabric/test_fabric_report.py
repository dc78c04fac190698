"""`prism fabric`: writes the report and the plots; bad arguments give a
one-line error and exit status 2."""
import os

import pytest

from cosim.cli import main

import test_fabric_properties as fabric_property_tests

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def row(report, first_cells):
    """The Markdown table row that starts with these cells."""
    start = "| " + " | ".join(first_cells) + " |"
    hits = [line for line in report.splitlines() if line.startswith(start)]
    assert len(hits) == 1, (start, hits)
    return [c.strip() for c in hits[0].strip("|").split(" | ")]


def test_fabric_report_written(tmp_path, capsys):
    out = tmp_path / "rep"
    rc = main(["fabric", "-o", str(out), "--flows", "4096", "--trials", "400", "--seed", "3"])
    assert rc == 0
    report = (out / "fabric_report.md").read_text()
    for name in ("efficiency_vs_flows.png", "max_load_distribution.png", "striping.png"):
        data = (out / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000, name
        assert f"({name})" in report
    # every seed figure: seed value, ours, what produced ours
    r = row(report, ("4,8", "efficiency of 32 flows on 32 uplinks (%) = 100/E[max]"))
    assert r[2:6] == ["28.4%", "28.305", "exact: integer count over all 32^32 assignments", "explained"]
    assert row(report, ("8", "P(busiest of 32 uplinks carries 1 of 32 flows)"))[2:4] == ["1.8 x 10^-13", "1.800e-13"]
    assert "3.5329" in report and "crc32 | mod | 4,096" in report
    assert "1 000-trial" not in report and "at 1 000 trials" not in report
    # the RTL figures come from our blocks; the seed's SystemVerilog sits in its own column
    r = row(report, ("8,17", "ideal ring all-reduce (ms)"))
    assert r[2:6] == ["1.279 s", "1278", "RTL: ring_allreduce_model (32 links, N = 1 024, S_MB = 8 000)", "1340"]
    r = row(report, ("7", "accelerator-hours lost per run"))
    assert r[2:4] == ["91 705", "91704"] and r[5] == "91136"
    r = row(report, ("9,10", "all-to-all efficiency_pct, 32 736 flows per leaf (%)"))
    assert r[2:4] == ["93.8%", "94"] and r[5] == "82"
    r = row(report, ("1023",))
    assert r[6:8] == ["94", "82"]                          # efficiency curve: our lookup, the seed's
    # the collision story in hardware, predicted by the golden model
    assert row(report, ("ECMP (CRC-32)",))[-1] == "yes" and row(report, ("load-aware",))[-1] == "yes"
    r = row(report, ("ring links on the busiest uplink (k)",))
    assert r[1] == r[2] == "3" and r[3] == r[4] == "1"
    r = row(report, ("collective_time_ms (ring model)",))
    assert r[1] == r[2] == "3875" and r[3] == r[4] == "1278"
    # register bits: ours from the converted blocks beside the seed's
    r = row(report, ("load_aware_selector",))
    assert r[1:3] == ["576", "577"]
    # the 34 properties, the refused one, the seed's scenario groups
    assert sum(1 for line in report.splitlines() if line[:5] in {f"| {g}{i} " for g in "ABCDEF" for i in range(1, 7)}) == 34
    # each property row names its tests, and those tests exist
    assert all(f"`test_fault_fires_exactly_its_property[{g}{i}]`" in row(report, (f"{g}{i}",))[4]
               for g, n in zip("ABCDEF", (6, 6, 6, 6, 5, 5)) for i in range(1, n + 1))
    for suffix in ("", "_verilator"):
        assert callable(getattr(fabric_property_tests, "test_fault_fires_exactly_its_property" + suffix))
    assert "> **R**: mean_gbps rises" in report and "the 34 properties: none fired" in report
    assert [row(report, g)[2] for g in (("1", "the reduction operator"), ("2", "the ring, which needs a chain"),
                                        ("3", "flow counts and efficiency"))] == ["8", "10", "10"]
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("argv,msg", [
    (["--flows", "lots"], "--flows must be an integer"),
    (["--flows", "12"], "--flows must be in"),
    (["--trials", "5"], "--trials must be in"),
    (["--impl", "fortran"], "--impl must be"),
    (["--seed", "-4"], "--seed must be in"),
    (["--rtl-sim", "modelsim"], "--rtl-sim must be"),
])
def test_bad_arguments_one_line_exit_2(tmp_path, prism_refuses, argv, msg):
    assert msg in prism_refuses(["fabric", "-o", str(tmp_path / "x")] + argv)
    assert not os.path.exists(tmp_path / "x")          # nothing written on bad input


def test_output_path_that_is_a_file(tmp_path, prism_refuses):
    f = tmp_path / "file"
    f.write_text("keep me")
    assert "not a directory" in prism_refuses(["fabric", "-o", str(f), "--flows", "2048"])
    assert f.read_text() == "keep me"


@pytest.mark.slow
def test_fabric_report_runs_the_34_broken_variants(tmp_path):
    out = tmp_path / "rep"
    assert main(["fabric", "-o", str(out), "--flows", "2048", "--trials", "200", "--properties"]) == 0
    report = (out / "fabric_report.md").read_text()
    rows = [line for line in report.splitlines() if line[:5] in {f"| {g}{i} " for g in "ABCDEF" for i in range(1, 7)}]
    assert len(rows) == 34 and all(line.rstrip().endswith("| yes |") for line in rows)
