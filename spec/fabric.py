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

# The collective declaration (docs/fabric_declaration.md): the collective library tells the
# fabric what it is doing, one DECL_BITS-bit word per event.  Fields, least significant first,
# as (name, bits); golden.fabric.declaration encodes and decodes them, and
# hdl/fabric/collective_declaration_table.py slices the same offsets.
DECL_VERSION = 1
DECL_FIELDS = (("version", 4),          # DECL_VERSION; any other value is rejected
               ("op", 2),               # DECL_OP_START or DECL_OP_END
               ("kind", 2),             # DECL_KIND_*: the pattern the job's flows form
               ("job", 16),             # job id: the flows of the job carry it
               ("participants", 16),    # ranks in the collective (>= 2)
               ("flows", 16),           # flows the job starts through the receiving leaf this phase
               ("rate_gbps", 16),       # the rate each of those flows will offer, Gb/s
               ("bytes_per_step", 32))  # bytes each flow moves per collective step
DECL_BITS = sum(bits for _, bits in DECL_FIELDS)                       # 104, a 13-byte word
DECL_OFFSETS = {name: sum(b for _, b in DECL_FIELDS[:i]) for i, (name, _) in enumerate(DECL_FIELDS)}
DECL_WIDTHS = dict(DECL_FIELDS)
DECL_OP_START = 1       # a phase starts: its flows will start now and run until its end
DECL_OP_END = 2         # the phase ended: the job's flows are no longer declared
DECL_KIND_RING = 0      # each rank sends to the next: N flows (times the stripes)
DECL_KIND_ALL_TO_ALL = 1    # every rank to every other: N(N-1) flows
DECL_KIND_TREE = 2      # each rank to its parent (reduce) or children (broadcast)
DECL_KINDS = {"ring": DECL_KIND_RING, "all_to_all": DECL_KIND_ALL_TO_ALL, "tree": DECL_KIND_TREE}
