"""The collective fabric of seed 000: ring, striping, ECMP hashing, telemetry, conformance."""
