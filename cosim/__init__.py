"""Conversion, simulators, bus drivers and monitors, scoreboards.  Importing it makes MyHDL's
elaboration read each process function's source once (cosim/sim/myhdl_sources.py) and its
registries of signals and memories forget the designs nothing refers to any more
(cosim/sim/myhdl_registries.py)."""
from cosim.sim import myhdl_registries, myhdl_sources

myhdl_registries.install()
myhdl_sources.install()
