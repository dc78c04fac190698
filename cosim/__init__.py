"""Conversion, simulators, bus drivers and monitors, scoreboards.  Importing it makes MyHDL's
elaboration read each process function's source once (cosim/sim/myhdl_sources.py)."""
from cosim.sim import myhdl_sources

myhdl_sources.install()
