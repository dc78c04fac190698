"""The collective fabric (seed 000): its size, its rates, the flow tuple, the path modes and the
efficiency lookup its blocks compute.

Values from docs/fabric.md and the seed's collective_pkg; hdl/fabric/collective_pkg.py (the
design's package), golden/fabric (the references) and cosim/fabric import them from here.
tests/spec/test_spec_fabric.py derives them again: the lookup from the balls-in-bins curve.
"""
# The fabric of the seed: 32 leaves x 32 accelerators, 32 uplinks per leaf at 100 Gb/s.
LEAVES = 32
ACC_PER_LEAF = 32
UPLINKS_PER_LEAF = 32
RATE_GBPS = 100
PARTICIPANTS = LEAVES * ACC_PER_LEAF      # 1024

# A flow's canonical 5-tuple: 13 bytes, big-endian (src_ip[4] dst_ip[4] src_port[2] dst_port[2]
# proto[1]), one TUPLE_BITS-bit word in the design (byte 0, hashed first, in the top bits).
TUPLE_BYTES = 13
TUPLE_BITS = 8 * TUPLE_BYTES              # 104

# Range reductions of a hash onto the paths: h % n, or (h * n) >> width.
PATH_MODES = ("mod", "mulhi")

# The efficiency lookup (per cent of the uplink group a collective gets): flows per uplink up to
# EFF_FPU_LIMITS[i] -> EFF_PCT[i]; above the last limit -> EFF_PCT[-1].  The seed's six entries
# plus a seventh, 94 %, above 100 flows per uplink (the seed's own 93.8 % at 1 023).
EFF_FPU_LIMITS = (1, 2, 4, 8, 20, 100)
EFF_PCT = (28, 37, 46, 56, 67, 82, 94)
