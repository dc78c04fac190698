"""cffi build script for the Kulisch / FP32_ARRIVAL kernel (ckernels._kulisch).
The cdef is the header itself, minus preprocessor lines."""
import os

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))


def _cdef_from_header(path):
    lines = []
    for line in open(path):
        s = line.strip()
        if s.startswith("#define "):
            name, _, value = s[len("#define "):].partition(" ")
            if value.strip().isdigit():
                lines.append(f"#define {name} {value.strip()}\n")
            continue
        if s.startswith("#"):
            continue
        lines.append(line)
    return "".join(lines)


ffibuilder = FFI()
ffibuilder.cdef(_cdef_from_header(os.path.join(HERE, "kulisch.h")))
ffibuilder.set_source(
    "ckernels._kulisch",
    '#include "kulisch.h"',
    sources=[os.path.join(HERE, "kulisch.c")],
    include_dirs=[HERE],
    extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-fno-fast-math", "-ffp-contract=off", "-fno-strict-aliasing"],
)

if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        import glob
        import importlib.machinery
        import shutil
        out = ffibuilder.compile(tmpdir=tmp, verbose=False)
        # Only one built module may remain, or a stale one could shadow it; use
        # the file name `pip install -e .` gives it, so either build replaces the other.
        for old in glob.glob(os.path.join(HERE, "_kulisch.*.so")):
            os.remove(old)
        abi3 = ".abi3.so" in importlib.machinery.EXTENSION_SUFFIXES
        shutil.copy(out, os.path.join(HERE, "_kulisch.abi3.so" if abi3 else os.path.basename(out)))
