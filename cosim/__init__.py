"""Conversion, simulators, bus drivers and monitors, scoreboards.  Importing it makes MyHDL's
elaboration read each process function's source once (cosim/sim/myhdl_sources.py) and its
signal registry forget the signals nothing refers to any more (cosim/sim/myhdl_signals.py)."""
from cosim.sim import myhdl_signals, myhdl_sources

myhdl_signals.install()
myhdl_sources.install()
