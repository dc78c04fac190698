"""Arithmetic units: number decoding, Kulisch and FP32 accumulation, rounding, the AUTO classifier, the reduce slice."""
