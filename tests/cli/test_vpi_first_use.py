"""MyHDL's Icarus VPI module on a kit installed without run.sh (cosim/sim/vpi.py): the first
co-simulation builds it into the user cache, later ones find it there; a missing tool or an
absent $PRISM_MYHDL_VPI file is one line from `prism`, never a traceback.
tests/cli/test_wheel_install.py (slow) does the same from an installed wheel."""
import os

import numpy as np
import pytest

from cosim import cli
from cosim.sim import vpi


@pytest.fixture
def no_venv_module(monkeypatch, tmp_path):
    """A venv without myhdl.vpi and an empty user cache."""
    monkeypatch.setattr(vpi, "venv_vpi_path", lambda: str(tmp_path / "venv" / "lib" / "prism" / "myhdl.vpi"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(vpi.ENV, raising=False)
    return tmp_path


def test_the_first_cosimulation_builds_the_module_into_the_user_cache(no_venv_module, capsys):
    cache = no_venv_module / "cache" / "prism"
    path = vpi.require_vpi()
    assert os.path.dirname(os.path.dirname(path)) == str(cache) and os.path.getsize(path) > 0
    assert "building" in capsys.readouterr().err
    assert vpi.require_vpi() == path                 # found, not built again
    assert "building" not in capsys.readouterr().err
    assert os.listdir(os.path.dirname(path)) == ["myhdl.vpi"]     # no temporary file left


def test_a_missing_tool_is_one_line_from_prism(no_venv_module, monkeypatch, capsys):
    np.save(no_venv_module / "in.npy", np.ones((2, 16), np.uint32))
    path = os.environ.get("PATH", "")
    monkeypatch.setenv("PATH", str(no_venv_module))       # no iverilog, no vvp
    args = ["reduce", "--policy", "kulisch", "--in-format", "fp32", "--out-format", "fp32", "--impl", "icarus",
            str(no_venv_module / "in.npy"), "-o", str(no_venv_module / "out.npy")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "iverilog" in err and "apt-get install iverilog" in err
    monkeypatch.setenv("PATH", path)
    monkeypatch.setenv(vpi.ENV, str(no_venv_module / "absent.vpi"))
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "absent.vpi" in err and "python -m cosim.sim.vpi" in err
