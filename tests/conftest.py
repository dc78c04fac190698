"""Shared fixtures.

`backend` runs a test on both simulators: 'myhdl' (the MyHDL block itself) and
'icarus' (the block converted to Verilog, compiled by iverilog, co-simulated).
`--waves DIR` writes one VCD per test into DIR, on either back end.
"""
import os
import re

import pytest

from cosim.sim import toolchain


def pytest_addoption(parser):
    parser.addoption("--waves", metavar="DIR", default=None,
                     help="write a VCD waveform per test into DIR")


@pytest.fixture(params=toolchain.BACKENDS)
def backend(request):
    return request.param


@pytest.fixture(autouse=True)
def _waves(request):
    folder = request.config.getoption("--waves")
    if not folder:
        yield None
        return
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    with toolchain.waves(os.path.join(folder, name + ".vcd")) as path:
        yield path
