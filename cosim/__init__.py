"""Conversion, simulators, bus drivers and monitors, scoreboards.  Importing it makes MyHDL's
elaboration read each process function's source once (cosim/myhdl_sources.py)."""
from . import myhdl_sources

myhdl_sources.install()
