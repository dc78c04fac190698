"""The simulation core: conversion (convert), the back ends (toolchain, myhdl_run, replay), Verilog rewriting, Icarus VPI,
batched Icarus and Verilator, bus models, code coverage.  It imports no subsystem of cosim (.importlinter)."""
