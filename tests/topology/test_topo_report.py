"""`prism topo`: the report and its command line."""
import os
import re

import pytest

from cosim.cli import main


# session scope: the longest-first order interleaves modules, and a module-scoped fixture
# is torn down whenever the next test comes from another module (the report takes ~40 s to compute)
@pytest.fixture(scope="session")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("topo")
    rc = main(["topo", "-o", str(out), "--ecmp-n", "16", "--epochs", "2", "--quick"])
    assert rc == 0
    with open(out / "topo_report.md") as fh:
        return out, fh.read()


def _row(text, name):
    for line in text.splitlines():
        if line.startswith(f"| {name} |"):
            return [c.strip() for c in line.strip().strip("|").split("|")]
    raise AssertionError(f"no row for {name}")


def test_report_files(report):
    out, text = report
    for png in ("hop_histogram.png", "link_load.png", "ring_epochs.png"):
        with open(out / png, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
        assert f"({png})" in text


def test_counts_table_reproduces_the_document(report):
    _, text = report
    # formula / graph / document, the document's own figures
    assert _row(text, "ZCube(4,2)")[1:5] == ["16 / 16 / 16", "8 / 8 / 8", "48 / 48 / 48", "2 / 2 / 2"]
    assert _row(text, "ZCube(128,2)")[1:5] == ["16,384 / 16,384 / 16,384", "256 / 256 / 256",
                                               "49,152 / 49,152 / 49,152", "2 / 2 / 2"]
    assert _row(text, "ZCube(42,4)")[1] == "3,111,696 / 3,111,696 / 3,111,696"
    assert _row(text, "ZCube(42,4)")[4] == "4 / 4 / 4"
    assert _row(text, "ZCube(2,3)")[2] == "12 / 12 / 12"
    assert _row(text, "ROFT testbed (4 servers x 4 GPUs, 4 spines)")[2:4] == ["8 / 8 / 8", "32 / 32 / 32"]
    assert "**≠**" not in text
    assert "Disagreements: none" in text


def test_hop_and_ecmp_tables(report):
    _, text = report
    # ZCube(128,2): 2*127 of 16,383 other GPUs are one switch away
    assert _row(text, "ZCube(128,2)")  # counts row exists; the hop row follows the same name
    hop_rows = [line for line in text.splitlines() if line.startswith("| ZCube(128,2) |")]
    one = 2 * 127 / 16383
    assert any(f"{one:.4%}" in r for r in hop_rows)
    # ECMP table at 256 GPUs: all-to-all rows carry N(N-1) flows for both fabrics
    a2a = [line for line in text.splitlines() if "all-to-all x1" in line and "| per-device |" in line]
    assert len(a2a) == 2 and all("65,280" in r for r in a2a)
    assert any(r.startswith("| ZCube(16,2) |") for r in a2a) and any(r.startswith("| ROFT radix 16") for r in a2a)
    # the switch counts in the ECMP table: 2n for ZCube, 5n for ROFT
    assert re.search(r"\| ZCube\(16,2\) \| 32 \| 768 \| 2 \|", text)
    assert re.search(r"\| ROFT radix 16 \(256 GPUs\) \| 80 \| 768 \| 5 \|", text)


@pytest.mark.parametrize("argv,needle", [
    (["--ecmp-n", "17"], "--ecmp-n"),
    (["--ecmp-n", "lots"], "--ecmp-n"),
    (["--epochs", "0"], "--epochs"),
    (["--epochs", "1.5"], "--epochs"),
    (["--mode", "xor"], "--mode"),
])
def test_bad_arguments_one_line_exit_2(tmp_path, prism_refuses, argv, needle):
    err = prism_refuses(["topo", "-o", str(tmp_path / "x")] + argv)
    assert err.startswith("prism topo: error:") and needle in err
    assert not (tmp_path / "x").exists()


def test_output_is_a_file(tmp_path, prism_refuses):
    f = tmp_path / "plain"
    f.write_text("keep me")
    assert "not a directory" in prism_refuses(["topo", "-o", str(f), "--quick"])
    assert f.read_text() == "keep me"


def test_savings_paths_and_pxn_sections(report):
    _, text = report
    # the document's savings, each computed from switch counts of generated graphs
    assert _row(text, "switches, ZCube(128,2) vs ROFT")[2] == "1 − 256/640 = 60.0%"
    assert _row(text, "switches, ZCube(128,2) vs rail-only")[2] == "1 − 256/384 = 33.3%"
    assert _row(text, "switches, ZCube(128,2) vs HPN (dual-plane)")[2] == "1 − 256/384 = 33.3%"
    assert _row(text, "rail-only radix 128 (8 rails, two tiers each)")[2] == "384 / 384 / 384"
    assert _row(text, "dual-plane two-tier, HPN-style (2 x 200G per NIC)")[2] == "384 / 384 / 384"
    assert "9.6 vs 32 × 400G = 12.8 Tb/s: 25.0% less" in _row(text, "testbed link capacity, ZCube(4,2) vs ROFT")[2]
    # minimal paths: two for ZCube(n,2), more for k >= 3
    assert _row(text, "ZCube(16,2)")[1:3] == ["2", "0 of 65,280"]
    assert _row(text, "ZCube(3,4)")[1] == "8"
    # the computation behind it: by distance, the bound 2(k-1) for pairs two switches apart, a worked example
    paths = text.split("## Minimal paths per GPU pair")[1].split("\n## ")[0]
    r = _row(paths, "ZCube(2,3)")
    assert r[1] == "4" and r[3].split(" / ")[1] == "4" and r[4] == "4"
    assert _row(paths, "ZCube(4,2)")[3].startswith("1 / 2 /") and _row(paths, "ZCube(4,2)")[4] == "2"
    example = [line for line in text.splitlines() if re.match(r"\d\. 001 → ", line)]
    assert len(example) == 4 and len(set(example)) == 4 and all(line.endswith("→ 010") for line in example)
    assert all(len(line.split(" → ")) == 4 for line in example)     # two switches on each
    # hop histograms without and with PXN: the testbed ROFT's cross-rail pairs drop from 3 switches to 1
    roft_tb = [r for r in text.splitlines() if r.startswith("| ROFT2(rails=4, servers/group=4, groups=1, spines=4) "
                                                            "(testbed) |")]
    cells = [[c.strip() for c in r.strip("|").split("|")] for r in roft_tb]
    assert [c[1] for c in cells] == ["no", "yes"]
    assert cells[0][5] == "80.0000%" and cells[1][5] == "—" and cells[1][2] == "20.0000%"
    assert "ROFT 5 / 5" in text and "ZCube 2 / 2" in text
