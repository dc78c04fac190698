"""Build and locate MyHDL's Icarus VPI module (myhdl.vpi).

MyHDL's wheel ships the VPI C source under <prefix>/share/myhdl/cosimulation/icarus/;
`iverilog-vpi` compiles it.  The module is placed in <prefix>/lib/prism/myhdl.vpi
(inside the venv), or where $PRISM_MYHDL_VPI points.

    python -m cosim.sim.vpi          build it if missing, print its path
"""
import os
import shutil
import subprocess
import sys
import tempfile

FIX_HINT = "run `bash run.sh setup` (installs iverilog and builds myhdl.vpi)"


class ToolchainError(RuntimeError):
    """A co-simulation tool is missing; the message says how to fix it."""


def vpi_path():
    return os.environ.get("PRISM_MYHDL_VPI") or os.path.join(sys.prefix, "lib", "prism", "myhdl.vpi")


def vpi_source_dir():
    for base in (sys.prefix, sys.base_prefix, "/usr/local", "/usr"):
        d = os.path.join(base, "share", "myhdl", "cosimulation", "icarus")
        if os.path.exists(os.path.join(d, "myhdl.c")):
            return d
    raise ToolchainError("MyHDL's VPI source (share/myhdl/cosimulation/icarus/myhdl.c) not found; "
                         "reinstall myhdl with pip, then " + FIX_HINT)


def require_tool(name):
    if shutil.which(name) is None:
        raise ToolchainError(f"`{name}` not found on PATH; {FIX_HINT}")
    return shutil.which(name)


def build_vpi(force=False):
    """Compile myhdl.vpi if it is missing; return its path."""
    dest = vpi_path()
    if os.path.exists(dest) and not force:
        return dest
    require_tool("iverilog-vpi")
    src = vpi_source_dir()
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for f in ("myhdl.c", "myhdl_table.c"):
            shutil.copy(os.path.join(src, f), tmp)
        r = subprocess.run(["iverilog-vpi", "myhdl.c", "myhdl_table.c"], cwd=tmp,
                           capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(os.path.join(tmp, "myhdl.vpi")):
            raise ToolchainError("iverilog-vpi failed to build myhdl.vpi: " + (r.stderr.strip().splitlines() or ["?"])[-1])
        shutil.move(os.path.join(tmp, "myhdl.vpi"), dest)
    return dest


def require_vpi():
    """Path of an existing myhdl.vpi, or a one-line error saying how to get it."""
    require_tool("iverilog")
    require_tool("vvp")
    p = vpi_path()
    if not os.path.exists(p):
        raise ToolchainError(f"myhdl.vpi not found at {p}; {FIX_HINT} or `python -m cosim.sim.vpi`")
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        p = build_vpi(force="--force" in argv)
    except ToolchainError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if "--quiet" not in argv:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
