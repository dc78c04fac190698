"""cffi build script for the ECMP hashing kernel: ckernels._ecmp (see ecmp.h)."""
import os

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))


def _cdef() -> str:
    with open(os.path.join(HERE, "ecmp.h")) as f:
        return "\n".join(line for line in f.read().splitlines() if not line.lstrip().startswith("#"))


ffibuilder = FFI()
ffibuilder.cdef(_cdef())
ffibuilder.set_source(
    "ckernels._ecmp",
    '#include "ecmp.h"',
    sources=[os.path.join(HERE, "ecmp.c")],
    include_dirs=[HERE],
    extra_compile_args=["-O3", "-std=c99", "-Wall", "-Wextra"],
)

if __name__ == "__main__":
    import glob
    import importlib.machinery
    import shutil
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = ffibuilder.compile(tmpdir=tmp, verbose=False)
        # Only one built module may remain, or a stale one could shadow it; use
        # the file name `pip install -e .` gives it, so either build replaces the other.
        for old in glob.glob(os.path.join(HERE, "_ecmp.*.so")):
            os.remove(old)
        abi3 = ".abi3.so" in importlib.machinery.EXTENSION_SUFFIXES
        shutil.copy(out, os.path.join(HERE, "_ecmp.abi3.so" if abi3 else os.path.basename(out)))
