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
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = ffibuilder.compile(tmpdir=tmp, verbose=False)
        import shutil
        shutil.copy(out, os.path.join(HERE, os.path.basename(out)))
