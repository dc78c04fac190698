"""Architecture contracts (.importlinter): the design never imports the golden models or the
verification code, the golden models never import the design or the verification code, and
the packages form layers without circles (the C kernels and spec, the shared constants, import
nothing of ours)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_import_contracts_are_kept():
    lint = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    out = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "BROKEN" not in out.stdout and "4 kept, 0 broken" in out.stdout


def test_a_forbidden_import_breaks_a_contract(tmp_path):
    """The check can fail: a copy of the contracts over a design package that imports golden."""
    pkg = tmp_path / "hdl"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "leaky.py").write_text("from golden import protocol\n")
    for name in ("golden", "cosim", "ckernels", "spec"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "golden" / "protocol.py").write_text("")
    config = open(os.path.join(ROOT, ".importlinter")).read()
    (tmp_path / ".importlinter").write_text(config)
    lint = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    out = subprocess.run([lint, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode != 0
    assert "hdl.leaky -> golden.protocol" in out.stdout
