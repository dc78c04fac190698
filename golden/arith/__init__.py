"""Bit-exact arithmetic references: number formats, Kulisch and FP32 sums (Python, numba, C), AUTO, TestFloat vectors."""
