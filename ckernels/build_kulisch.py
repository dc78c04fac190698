"""cffi build script for the Kulisch / FP32_ARRIVAL kernel: ckernels._kulisch (see kulisch.h)."""
import os
import sys

# cffi's setuptools hook runs this file without its folder on the path; the shared helper lives there
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cffi_kernel import build_in_place, kernel_ffi  # noqa: E402

# no fast-math and no FMA contraction: the FP32_ARRIVAL adds and the exact float64 levels must round as written
ffibuilder = kernel_ffi("kulisch", ["-std=c11", "-fno-fast-math", "-ffp-contract=off", "-fno-strict-aliasing"])

if __name__ == "__main__":
    build_in_place(ffibuilder, "kulisch")
