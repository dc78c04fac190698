"""Build and locate MyHDL's Icarus VPI module (myhdl.vpi).

MyHDL's wheel ships the VPI C source under <data folder>/share/myhdl/cosimulation/icarus/ (found
through the files myhdl's installation recorded);
`iverilog-vpi` compiles it in a few seconds.  The module is looked for, in this order:

1. where $PRISM_MYHDL_VPI points (never built there behind the user's back: a missing file
   is a one-line error saying how to build it);
2. <prefix>/lib/prism/myhdl.vpi, inside the venv (`bash run.sh setup` builds it there);
3. the user cache, $XDG_CACHE_HOME/prism (default ~/.cache/prism), in a folder named after
   the VPI source and the Icarus version, so an upgrade of either builds a fresh one.

An installed kit (`pip install`, no run.sh) finds none of them on its first co-simulation and
builds the module into the user cache then, once.  Every failure is a `ToolchainError` whose
message is one line saying how to fix it; the `prism` command prints it without a traceback.

    python -m cosim.sim.vpi          build it if missing (into the venv, or the user cache where
                                     the venv is not writable), print its path
"""
import functools
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile

FIX_HINT = ("install Icarus Verilog (iverilog, vvp and iverilog-vpi; Debian: `apt-get install iverilog`), "
            "then `python -m cosim.sim.vpi` builds myhdl.vpi (in a checkout of the kit: `bash run.sh setup`)")
ENV = "PRISM_MYHDL_VPI"
VPI_SOURCES = ("myhdl.c", "myhdl_table.c")


class ToolchainError(RuntimeError):
    """A co-simulation tool is missing; the message says how to fix it."""


def venv_vpi_path():
    """The module's place inside the venv (where run.sh builds it)."""
    return os.path.join(sys.prefix, "lib", "prism", "myhdl.vpi")


def cache_root():
    """The kit's user cache folder: $XDG_CACHE_HOME/prism, default ~/.cache/prism."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "prism")


@functools.lru_cache(maxsize=None)
def _build_tag(source_dir):
    """A short digest of the VPI source and of the Icarus version it is built for."""
    h = hashlib.sha256()
    for f in VPI_SOURCES:
        with open(os.path.join(source_dir, f), "rb") as fh:
            h.update(fh.read())
    try:
        r = subprocess.run(["iverilog", "-V"], capture_output=True, text=True)
        h.update((r.stdout or r.stderr).split("\n", 1)[0].encode())
    except OSError:
        pass
    return h.hexdigest()[:12]


def cache_vpi_path():
    """The module's place in the user cache (built there on first use)."""
    try:
        tag = _build_tag(vpi_source_dir())
    except (ToolchainError, OSError):
        tag = "no-source"
    return os.path.join(cache_root(), f"myhdl-vpi-{tag}", "myhdl.vpi")


def vpi_path():
    """Where myhdl.vpi is, or is to be built: $PRISM_MYHDL_VPI, else the venv's module if it
    exists, else the user cache."""
    if os.environ.get(ENV):
        return os.environ[ENV]
    venv = venv_vpi_path()
    return venv if os.path.exists(venv) else cache_vpi_path()


def _installed_source_dirs():
    """Where pip put MyHDL's VPI source: the files myhdl's installation recorded (wherever its
    data folder is: a venv, --user, a system prefix, or a venv borrowing another's packages)."""
    try:
        dist = importlib.metadata.distribution("myhdl")
    except importlib.metadata.PackageNotFoundError:
        return []
    return [os.path.dirname(os.path.realpath(dist.locate_file(f))) for f in dist.files or ()
            if str(f).replace(os.sep, "/").endswith("cosimulation/icarus/" + VPI_SOURCES[0])]


def vpi_source_dir():
    prefixes = (sys.prefix, sys.base_prefix, "/usr/local", "/usr")
    for d in _installed_source_dirs() + [os.path.join(p, "share", "myhdl", "cosimulation", "icarus")
                                         for p in prefixes]:
        if all(os.path.exists(os.path.join(d, f)) for f in VPI_SOURCES):
            return d
    raise ToolchainError("MyHDL's VPI source (share/myhdl/cosimulation/icarus/myhdl.c) not found; "
                         "reinstall myhdl with pip, then " + FIX_HINT)


def require_tool(name):
    if shutil.which(name) is None:
        raise ToolchainError(f"`{name}` not found on PATH; {FIX_HINT}")
    return shutil.which(name)


def build_vpi(force=False, dest=None):
    """Compile myhdl.vpi into `dest` (default: vpi_path()) if it is missing; return its path.
    The module is written beside its final name and renamed into place, so two processes
    building it at once each leave a whole module."""
    dest = dest or vpi_path()
    if os.path.exists(dest) and not force:
        return dest
    require_tool("iverilog-vpi")
    src = vpi_source_dir()
    folder = os.path.dirname(os.path.abspath(dest))
    try:
        os.makedirs(folder, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".myhdl-vpi-", dir=folder)
    except OSError as e:
        raise ToolchainError(f"cannot write myhdl.vpi into {folder} ({e.strerror or e}); set ${ENV} to a "
                             f"writable file path and run `python -m cosim.sim.vpi`") from None
    try:
        for f in VPI_SOURCES:
            shutil.copy(os.path.join(src, f), tmp)
        r = subprocess.run(["iverilog-vpi", *VPI_SOURCES], cwd=tmp, capture_output=True, text=True)
        built = os.path.join(tmp, "myhdl.vpi")
        if r.returncode != 0 or not os.path.exists(built):
            last = (r.stderr.strip() or r.stdout.strip() or "?").splitlines()[-1]
            raise ToolchainError(f"iverilog-vpi failed to build myhdl.vpi: {last}")
        os.replace(built, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def require_vpi():
    """Path of myhdl.vpi, built into the user cache on first use; or a one-line ToolchainError
    saying how to get it."""
    require_tool("iverilog")
    require_tool("vvp")
    p = vpi_path()
    if os.path.exists(p):
        return p
    if os.environ.get(ENV):
        raise ToolchainError(f"myhdl.vpi not found at {p} (${ENV}); {FIX_HINT}")
    require_tool("iverilog-vpi")
    vpi_source_dir()            # both missing: the one-line error, before announcing a build
    print(f"prism: building MyHDL's Icarus VPI module into {p} (first co-simulation; once)", file=sys.stderr)
    return build_vpi(dest=p)


def _writable(path):
    """Whether `path`'s folder exists and is writable, or can be created."""
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    return os.access(folder, os.W_OK)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        # inside the venv (run.sh), or the user cache where the venv is not writable
        dest = os.environ.get(ENV) or (venv_vpi_path() if _writable(venv_vpi_path()) else cache_vpi_path())
        p = build_vpi(force="--force" in argv, dest=dest)
    except ToolchainError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if "--quiet" not in argv:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
