"""The simulation core: conversion, Verilog rewriting, Icarus VPI, batched Icarus and Verilator, bus models, code coverage."""
