"""Arithmetic units co-simulated as a reduction (`prism reduce --impl icarus|verilator`)."""
