"""An installed kit works like the checkout: the wheel, installed into a fresh venv, runs
`prism reduce` (the C kernels cffi built into the wheel, and the HDL slice co-simulated under
Icarus, which builds MyHDL's VPI module into the user cache on first use) and `prism export
node` (which copies docs/protocol.md beside the Verilog), from a folder outside the checkout.

The venv sees the dependencies already installed here (numpy, numba, myhdl, cffi) through a
.pth file naming this interpreter's site-packages, so nothing is downloaded; the kit itself is
installed from the wheel alone (--no-deps, --no-index), and the test checks that it is the
wheel's copy that runs.  The wheel is built from a copy of the kit's files, so the build leaves
nothing in the checkout.  About two minutes on 2 cores (the C kernels' compile, then the
node's conversion in a fresh build folder): `slow`."""
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import numpy as np
import pytest

from golden.reduce import reduce

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# what setup.py packages (the rest of the checkout never enters the wheel)
SOURCES = ("setup.py", "README.md", "requirements.txt", "spec", "hdl", "golden", "ckernels", "cosim",
           os.path.join("docs", "protocol.md"))
JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "_*.c", "*.egg-info", "build")

pytestmark = pytest.mark.slow


def run(cmd, env, cwd, timeout=900):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv bin folder, environment, working folder) of the kit installed from its wheel."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for name in SOURCES:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        if os.path.isdir(os.path.join(ROOT, name)):
            shutil.copytree(os.path.join(ROOT, name), src / name, ignore=JUNK)
        else:
            shutil.copy(os.path.join(ROOT, name), src / name)
    here = dict(os.environ)
    here.pop("PYTHONPATH", None)
    run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(tmp / "dist"), "-q"], here, tmp)
    [wheel] = (tmp / "dist").glob("prism_verify-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("docs/protocol.md", "ckernels/kulisch.c", "ckernels/kulisch.h", "ckernels/prism_spec.h",
                   "cosim/cli/__init__.py", "hdl/node/prism_node.py", "spec/frames.py"):
        assert needed in names, f"the wheel lacks {needed}"
    assert any(n.startswith("ckernels/_kulisch.") and n.endswith(".so") for n in names)
    assert not any(n.startswith(("tests/", "bench/", "examples/")) for n in names)

    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], here, tmp)
    bin_dir = venv / "bin"
    site = subprocess.run([str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # the dependencies installed here; the kit is not among them (in the checkout's venv it is an
    # editable install, whose hook runs only from a site folder's own .pth files)
    with open(os.path.join(site, "prism_deps.pth"), "w") as fh:
        fh.write(sysconfig.get_paths()["purelib"] + "\n")
    run([sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "--no-deps", "--no-index",
         "-q", str(wheel)], here, tmp)
    work = tmp / "work"
    work.mkdir()
    env = dict(here, PATH=f"{bin_dir}{os.pathsep}{here.get('PATH', '')}", XDG_CACHE_HOME=str(tmp / "cache"),
               VIRTUAL_ENV=str(venv))
    env.pop("PRISM_MYHDL_VPI", None)
    env.pop("PRISM_BUILD_DIR", None)
    return bin_dir, env, work


def test_the_kit_runs_from_the_wheel_not_the_checkout(installed):
    bin_dir, env, work = installed
    out = run([str(bin_dir / "python"), "-c", "import sys, cosim, ckernels._kulisch as k; "
               "print(cosim.__file__); print(k.__file__); print('\\n'.join(sys.path))"], env, work).stdout
    venv = os.path.dirname(str(bin_dir))
    cosim_file, kernel_file, *path = out.splitlines()
    assert cosim_file.startswith(venv) and kernel_file.startswith(venv)
    # no folder on the path holds the kit but the venv's own (the dependencies' folder may lie
    # inside the checkout, as .venv does: it holds no package of the kit)
    holders = [p for p in path if os.path.exists(os.path.join(p or str(work), "cosim", "__init__.py"))]
    assert holders and all(os.path.realpath(p).startswith(os.path.realpath(venv)) for p in holders)
    assert ROOT not in {os.path.realpath(p or str(work)) for p in path}


@pytest.mark.parametrize("impl", ["c", "icarus"])
def test_prism_reduce(installed, impl):
    bin_dir, env, work = installed
    rng = np.random.default_rng(5)
    data = rng.standard_normal((3, 32)).astype(np.float32).view(np.uint32)
    np.save(work / f"in_{impl}.npy", data)
    r = run([str(bin_dir / "prism"), "reduce", "--policy", "kulisch", "--in-format", "fp32", "--out-format", "fp32",
             "--impl", impl, f"in_{impl}.npy", "-o", f"out_{impl}.npy"], env, work)
    assert "Traceback" not in r.stderr
    want = reduce("kulisch", "fp32", "fp32", data, impl="python")
    assert np.array_equal(np.load(work / f"out_{impl}.npy"), want.bits)
    if impl == "icarus":                      # myhdl.vpi was built into the user cache, once
        cache = os.path.join(env["XDG_CACHE_HOME"], "prism")
        assert [f for d in os.listdir(cache) for f in os.listdir(os.path.join(cache, d))] == ["myhdl.vpi"]


def test_a_missing_vpi_is_one_line(installed):
    """$PRISM_MYHDL_VPI naming a missing file: one line saying how to build it, no traceback."""
    bin_dir, env, work = installed
    np.save(work / "small.npy", np.ones((2, 16), np.uint32))
    r = subprocess.run([str(bin_dir / "prism"), "reduce", "--policy", "kulisch", "--in-format", "fp32",
                        "--out-format", "fp32", "--impl", "icarus", "small.npy", "-o", "small_out.npy"],
                       env=dict(env, PRISM_MYHDL_VPI=str(work / "absent.vpi")), cwd=work, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "python -m cosim.sim.vpi" in r.stderr


def test_prism_export_node(installed):
    bin_dir, env, work = installed
    # an absolute folder: with a relative one the export's checks, run from a temporary folder,
    # do not find the file (a fault of `prism export` in the checkout too)
    r = run([str(bin_dir / "prism"), "export", "node", "-o", str(work / "node")], env, work)
    assert "Traceback" not in r.stderr
    out = work / "node"
    assert (out / "prism_node.v").read_text().count("module prism_node") == 1
    with open(os.path.join(ROOT, "docs", "protocol.md")) as fh:
        assert (out / "protocol.md").read_text() == fh.read()
    assert "prism_node" in (out / "README.md").read_text()
