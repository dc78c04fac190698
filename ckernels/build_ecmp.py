"""cffi build script for the ECMP hashing kernel: ckernels._ecmp (see ecmp.h)."""
import os
import sys

# cffi's setuptools hook runs this file without its folder on the path; the shared helper lives there
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cffi_kernel import build_in_place, kernel_ffi  # noqa: E402

ffibuilder = kernel_ffi("ecmp", ["-std=c99"])

if __name__ == "__main__":
    build_in_place(ffibuilder, "ecmp")
