"""What the cffi build scripts share: ckernels/build_<name>.py builds ckernels._<name> from
<name>.c, with <name>.h (minus preprocessor lines, but keeping numeric #defines) as the cdef."""
import glob
import importlib.machinery
import os
import shutil
import tempfile

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))


def _cdef_from_header(path):
    lines = []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s.startswith("#define "):
                name, _, value = s[len("#define "):].partition(" ")
                if value.strip().isdigit():          # a constant the Python side may read as lib.NAME
                    lines.append(f"#define {name} {value.strip()}\n")
                continue
            if s.startswith("#"):
                continue
            lines.append(line)
    return "".join(lines)


def kernel_ffi(name, extra_compile_args):
    """The FFI builder of ckernels._<name>."""
    ffi = FFI()
    ffi.cdef(_cdef_from_header(os.path.join(HERE, f"{name}.h")))
    ffi.set_source(f"ckernels._{name}", f'#include "{name}.h"', sources=[os.path.join(HERE, f"{name}.c")],
                   include_dirs=[HERE], extra_compile_args=["-O3", "-Wall", "-Wextra", *extra_compile_args])
    return ffi


def build_in_place(ffi, name):
    """`python ckernels/build_<name>.py`: compile and put the module beside the sources."""
    with tempfile.TemporaryDirectory() as tmp:
        out = ffi.compile(tmpdir=tmp, verbose=False)
        # Only one built module may remain, or a stale one could shadow it; use
        # the file name `pip install -e .` gives it, so either build replaces the other.
        for old in glob.glob(os.path.join(HERE, f"_{name}.*.so")):
            os.remove(old)
        abi3 = ".abi3.so" in importlib.machinery.EXTENSION_SUFFIXES
        shutil.copy(out, os.path.join(HERE, f"_{name}.abi3.so" if abi3 else os.path.basename(out)))
