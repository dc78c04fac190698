"""`prism export`: converted Verilog and a README for users' own flows.

The exported file is compiled here by the test itself (iverilog -g2005, -g2012,
verilator --lint-only), independently of the checks the command runs and
reports; the README must list every port of the module with its direction and
width, and the parameters it was built with.
"""
import os
import re
import shutil
import subprocess

import pytest

from cosim.cli import main as prism
from cosim.reports.export import BLOCKS


def _ports(verilog, top):
    """{name: (direction, width)} of module `top`, read from the file (not from the exporter)."""
    text = open(verilog).read()
    modules = re.findall(r"^\s*module\s+(\w+)", text, re.M)
    assert modules == [top], f"expected exactly one module named {top}, found {modules}"
    header = re.search(rf"module\s+{top}\s*\((.*?)\);", text, re.S).group(1)
    names = [n.strip() for n in header.split(",") if n.strip()]
    out = {}
    for n in names:
        m = re.search(rf"^\s*(input|output)\s+(?:\[(\d+):0\]\s+)?{n}\s*;", text, re.M)
        assert m, f"port {n} has no declaration"
        out[n] = (m.group(1), int(m.group(2)) + 1 if m.group(2) else 1)
    return out


def _readme_ports(readme):
    rows = {}
    for line in open(readme):
        m = re.match(r"\|\s*`(\w+)`\s*\|\s*(input|output)\s*\|\s*(\d+)\s*\|\s*(.*?)\s*\|\s*$", line)
        if m:
            rows[m.group(1)] = (m.group(2), int(m.group(3)), m.group(4))
    return rows


def _readme_params(readme):
    return dict(re.findall(r"^\|\s*`(\w+)`\s*\|\s*('?[\w.]+'?)\s*\|", open(readme).read(), re.M))


def _compile_everywhere(verilog, top, tmp_path):
    for std in ("-g2005", "-g2012"):
        r = subprocess.run(["iverilog", std, "-o", str(tmp_path / f"x{std}.vvp"), "-s", top, verilog],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"iverilog {std}: {r.stderr[-2000:]}"
    r = subprocess.run(["verilator", "--lint-only", "-Wno-WIDTH", "--top-module", top, verilog],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"verilator --lint-only: {r.stderr[-2000:]}"


def _check_export(out, top, params, checked=True):
    verilog, readme = os.path.join(out, f"{top}.v"), os.path.join(out, "README.md")
    ports = _ports(verilog, top)
    listed = _readme_ports(readme)
    assert set(listed) == set(ports), f"README ports differ: {set(listed) ^ set(ports)}"
    for name, (direction, width) in ports.items():
        assert listed[name][:2] == (direction, width), name
        assert listed[name][2] and listed[name][2] != "see the block source", f"{name}: no role"
    listed_params = _readme_params(readme)
    for k, v in params.items():
        assert listed_params.get(k) == repr(v), f"{k}: README says {listed_params.get(k)}, built with {v!r}"
    text = open(readme).read()
    for mode in ("iverilog -g2005", "iverilog -g2012", "verilator --lint-only") if checked else ():
        assert re.search(rf"`{re.escape(mode)}[^`]*` \| passed", text), f"README does not report {mode} passed"
    from cosim.sim import toolchain
    first = open(verilog).readline()
    assert toolchain.build_root() not in first and os.sep not in first.split("File:")[-1].strip(), \
        "the file names a build folder"
    return verilog


SMALL = [("axis_register", ["--width", "64"], "axis_register", {"DATA_WIDTH": 64}),
         ("reduce_slice", ["--capacity", "64", "-P", "PATHS=kulisch"], "reduce_slice",
          {"CAPACITY": 64, "PATHS": "kulisch", "KULISCH_W": 320}),
         ("work_distributor", ["-P", "POLICY=0"], "work_distributor", {"POLICY": 0}),
         ("accelerator_package", [], "accelerator_package", {"POLICY": 1, "WINDOW": 64}),
         ("collective_fabric", ["--members", "4", "--stripes", "2"], "collective_fabric",
          {"MEMBERS": 4, "STRIPES": 2, "PATHS": 8})]


@pytest.mark.parametrize("block,args,top,params", SMALL, ids=[s[0] for s in SMALL])
def test_export_block_compiles_everywhere(block, args, top, params, tmp_path):
    out = str(tmp_path / "out")
    assert prism(["export", block, "-o", out, *args]) == 0
    verilog = _check_export(out, top, params)
    _compile_everywhere(verilog, top, tmp_path)


def test_export_node(tmp_path):
    """The node: prism_node.v with top module prism_node, every port and both parameters in the
    README, the protocol beside it.  Without the export's own checks: the cocotb client's tests
    compile this file under -g2012, the batched test benches compile the node under -g2005 and
    Verilator, and the slow test below runs the checks (three compiles of the node, 25 s cold)."""
    out = str(tmp_path / "node")
    assert prism(["export", "node", "-o", out, "--no-check"]) == 0
    verilog = _check_export(out, "prism_node", {"KULISCH_W": 320, "CAPACITY": 4096}, checked=False)
    ports = _ports(verilog, "prism_node")
    assert ports["s_axis_0_tdata"] == ("input", 512) and ports["counter_select"] == ("input", 6)
    assert ports["m_axis_1_tready"] == ("input", 1) and ports["counter_value"] == ("output", 32)
    assert os.path.exists(os.path.join(out, "protocol.md"))


@pytest.mark.slow
def test_export_node_compiles_everywhere(tmp_path, capsys):
    """The export's checks on the node, reported in its README, and the file compiled independently."""
    out = str(tmp_path / "node")
    assert prism(["export", "node", "-o", out]) == 0
    _check_export(out, "prism_node", {"KULISCH_W": 320, "CAPACITY": 4096})
    assert "iverilog -g2012 ok" in capsys.readouterr().out
    _compile_everywhere(os.path.join(out, "prism_node.v"), "prism_node", tmp_path)


def test_export_list(capsys):
    assert prism(["export", "--list"]) == 0
    text = capsys.readouterr().out
    for name, spec in BLOCKS.items():
        assert re.search(rf"^{name}\s+top module {spec.top}\b", text, re.M), name
    assert "FAULT" not in text            # the designs have no test-only (fault) parameters


@pytest.mark.parametrize("argv,message", [
    (["export", "bogus", "-o", "X"], "unknown block 'bogus'"),
    (["export", "node"], "-o DIR is required"),
    (["export"], "name a block"),
    (["export", "node", "-o", "X", "--width", "300"], "KULISCH_W=300"),
    (["export", "node", "-o", "X", "--capacity", "100"], "CAPACITY=100"),
    (["export", "node", "-o", "X", "--capacity", "0"], "--capacity must be a positive integer"),
    (["export", "axis_register", "-o", "X", "--capacity", "64"], "--capacity does not apply to axis_register"),
    (["export", "work_distributor", "-o", "X", "-P", "FAULT=1"], "no such parameter"),
    (["export", "work_distributor", "-o", "X", "-P", "BOGUS=1"], "no such parameter"),
    (["export", "work_distributor", "-o", "X", "-P", "POLICY"], "write NAME=VALUE"),
    (["export", "axis_register", "-o", "/proc/prism-export"], "cannot write into /proc/prism-export"),
])
def test_export_bad_arguments(argv, message, prism_refuses, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert message in prism_refuses(argv)
    assert not os.path.exists(tmp_path / "X")


def test_export_bad_option_value_is_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        prism(["export", "node", "-o", "X", "--width", "wide"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid int value" in err


def test_export_reports_a_failed_check(tmp_path, monkeypatch, capsys):
    """A check that fails is reported in the README and the exit status (not hidden)."""
    from cosim.reports import export as ex
    broken = ("Icarus Verilog", "iverilog -g2012", ("iverilog", "-V"),
              lambda f, top, tmp: ["iverilog", "-g2012", "-DNO_SUCH", "-o", os.path.join(tmp, "b.vvp"), "-s",
                                   top + "_missing", f])
    monkeypatch.setattr(ex, "CHECKS", (broken,))
    monkeypatch.setattr(ex, "_cache_dir", lambda: str(tmp_path / "cache"))
    out = str(tmp_path / "out")
    assert prism(["export", "axis_register", "-o", out]) == 1
    assert "FAILED" in open(os.path.join(out, "README.md")).read()
    assert "iverilog -g2012 failed" in capsys.readouterr().out
    shutil.rmtree(tmp_path / "cache")


def test_export_to_a_relative_folder_passes_its_checks(tmp_path, monkeypatch, capsys):
    """The checks run in a temporary folder: a relative output path must still reach them."""
    monkeypatch.chdir(tmp_path)
    assert prism(["export", "axis_register", "-o", "rel_out", "--width", "24"]) == 0
    out = capsys.readouterr()
    assert "failed" not in out.out + out.err
    assert "iverilog -g2005 ok" in out.out + out.err and (tmp_path / "rel_out" / "axis_register.v").exists()
