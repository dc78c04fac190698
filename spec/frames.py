"""Frames of the PRISM SINGLE node: classes, opcodes, header fields, counters, limits.

Values from docs/protocol.md; tests/spec/test_spec_frames.py checks them against the layout rules
(no field overlaps another of its frame, every field fits the beat) and against the cocotb
client, which encodes frames from the document alone.
"""
BEAT_BITS = 512

# Common header: class [3:0], opcode [7:4].
CLASS_CONTROL, CLASS_DATA, CLASS_RESULT = 1, 2, 3
OP_STAGE, OP_COMMIT, OP_ABORT, OP_ACK, OP_NACK = 1, 2, 3, 8, 9
POLICY_KULISCH, POLICY_FP32_ARRIVAL = 0, 1
POLICY_NAMES = {POLICY_KULISCH: "kulisch", POLICY_FP32_ARRIVAL: "fp32-arrival"}
MODE_REDUCE, MODE_ALLREDUCE = 0, 1

# Reason codes of CONTROL responses.
OK, BAD_OPCODE, BAD_POLICY, BAD_FORMAT, BAD_COUNT, BAD_CONTRIBUTORS, BAD_RECIPIENTS, \
    NO_STAGED, STAGED_MISMATCH, BUSY, BAD_LENGTH, NOT_OPEN, ACTIVE_MISMATCH = range(13)
REASON_NAMES = ("OK", "BAD_OPCODE", "BAD_POLICY", "BAD_FORMAT", "BAD_COUNT", "BAD_CONTRIBUTORS",
                "BAD_RECIPIENTS", "NO_STAGED", "STAGED_MISMATCH", "BUSY", "BAD_LENGTH", "NOT_OPEN",
                "ACTIVE_MISMATCH")

# DATA drop reasons, in validation order: the first failing rule names the drop.
DROP_REASONS = ("too_long", "no_operation", "wrong_op", "stale_generation", "bad_contributor",
                "bad_format", "bad_range", "bad_length", "duplicate")

# --- header fields ------------------------------------------------------------------------------
# Each field is word[<F>_END:<F>_LSB] in MyHDL slice notation: bits <F>_LSB .. <F>_END - 1.
# Two integers per field (not a tuple) because MyHDL converts a module-level integer as a literal.
HDR_BITS = 96            # a request's header (CONTROL, DATA): every field it carries lies in [HDR_BITS-1:0]
F_CLASS_LSB, F_CLASS_END = 0, 4
F_OPCODE_LSB, F_OPCODE_END = 4, 8
F_OP_ID_LSB, F_OP_ID_END = 8, 16
F_GENERATION_LSB, F_GENERATION_END = 16, 32
# STAGE
F_POLICY_LSB, F_POLICY_END = 32, 34
F_IN_FORMAT_LSB, F_IN_FORMAT_END = 36, 39          # 0-3 element formats, 4 EXACT partials
F_RESULT_FORMAT_LSB, F_RESULT_FORMAT_END = 40, 43
F_MODE_LSB, F_MODE_END = 44, 45
F_COUNT_LSB, F_COUNT_END = 48, 61                 # element count E
F_CONTRIBUTORS_LSB, F_CONTRIBUTORS_END = 64, 72   # bit c: contributor c
F_RECIPIENTS_LSB, F_RECIPIENTS_END = 80, 82       # bit p: TX port p
# DATA
F_CONTRIBUTOR_LSB, F_CONTRIBUTOR_END = 32, 35
F_DATA_FORMAT_LSB, F_DATA_FORMAT_END = 36, 39
F_OFFSET_LSB, F_OFFSET_END = 48, 61               # DATA / RESULT element offset
F_N_LSB, F_N_END = 64, 77                         # DATA / RESULT element count
# RESULT
F_GROUPS_LSB, F_GROUPS_END = 80, 85
F_KULISCH_W_LSB, F_KULISCH_W_END = 96, 105        # the node's Kulisch accumulator width W
# CONTROL response
F_REASON_LSB, F_REASON_END = 32, 40
F_REQUEST_OPCODE_LSB, F_REQUEST_OPCODE_END = 40, 44
RESPONSE_BITS = F_REQUEST_OPCODE_END              # a response header: bits [43:0], the rest 0
# The response queue (TX port 0) and the admission rule that keeps it from overflowing: a receive
# port takes a new frame's first beat only while RESPONSE_MARGIN entries are free, one for every
# frame the two ports' frame banks can hold before it is answered (FRAME_BANKS per port)
FRAME_BANKS = 3
RESPONSE_QUEUE_DEPTH = 16
RESPONSE_MARGIN = 2 * FRAME_BANKS

# name -> (lsb, width), the table golden/node/protocol.py encodes and decodes with
FIELDS = {name: (lsb, end - lsb) for name, lsb, end in (
    ("class", F_CLASS_LSB, F_CLASS_END),
    ("opcode", F_OPCODE_LSB, F_OPCODE_END),
    ("op_id", F_OP_ID_LSB, F_OP_ID_END),
    ("generation", F_GENERATION_LSB, F_GENERATION_END),
    ("policy", F_POLICY_LSB, F_POLICY_END),
    ("in_format", F_IN_FORMAT_LSB, F_IN_FORMAT_END),
    ("result_format", F_RESULT_FORMAT_LSB, F_RESULT_FORMAT_END),
    ("mode", F_MODE_LSB, F_MODE_END),
    ("count", F_COUNT_LSB, F_COUNT_END),
    ("contributors", F_CONTRIBUTORS_LSB, F_CONTRIBUTORS_END),
    ("recipients", F_RECIPIENTS_LSB, F_RECIPIENTS_END),
    ("contributor", F_CONTRIBUTOR_LSB, F_CONTRIBUTOR_END),
    ("data_format", F_DATA_FORMAT_LSB, F_DATA_FORMAT_END),
    ("offset", F_OFFSET_LSB, F_OFFSET_END),
    ("n", F_N_LSB, F_N_END),
    ("groups", F_GROUPS_LSB, F_GROUPS_END),
    ("kulisch_w", F_KULISCH_W_LSB, F_KULISCH_W_END),
    ("reason", F_REASON_LSB, F_REASON_END),
    ("request_opcode", F_REQUEST_OPCODE_LSB, F_REQUEST_OPCODE_END),
)}
# the fields of each kind of frame (a field appears in several kinds where the frames share it)
COMMON_FIELDS = ("class", "opcode", "op_id", "generation")
FRAME_FIELDS = {
    "stage": COMMON_FIELDS + ("policy", "in_format", "result_format", "mode", "count", "contributors",
                              "recipients"),
    "commit": COMMON_FIELDS,
    "abort": COMMON_FIELDS,
    "response": COMMON_FIELDS + ("reason", "request_opcode"),
    "data": COMMON_FIELDS + ("contributor", "data_format", "offset", "n"),
    "result": COMMON_FIELDS + ("offset", "n", "groups", "kulisch_w"),
}

# RESULT group g descriptor at [GROUP_DESC_LSB + GROUP_DESC_BITS*g +: GROUP_DESC_BITS]:
# format [2:0], element count [15:3].
GROUP_DESC_LSB, GROUP_DESC_BITS, GROUP_FORMAT_BITS = 256, 16, 3

# An EXACT value's beat: the exact sum (units of 2^KULISCH_LSB_EXP) as a two's complement integer
# at [507:0], the flag nibble {overflow, neg_inf, pos_inf, nan} at [511:508].  A RESULT frame
# carries EXACT values this way, and a DATA frame of format EXACT takes them back in (a tree's
# partials): one element per beat.
EXACT_SUM_BITS = 508
EXACT_FLAG_LSB = 508
FLAG_NAN, FLAG_POS_INF, FLAG_NEG_INF, FLAG_OVERFLOW = 1, 2, 4, 8

# --- counters (counter_select) -------------------------------------------------------------------
# Per-port counter k of port P at CTR_PORT_STRIDE * P + k; a validation event code is the index of
# the counter it counts (CTR_DROP + k for DROP_REASONS[k]).
CTR_PORT_STRIDE = 16
CTR_CONTROL = 0          # CONTROL requests answered
CTR_ADMITTED = 1         # DATA frames admitted
CTR_DROP = 2             # + k: DATA frames dropped for DROP_REASONS[k]
CTR_UNSUPPORTED = 11     # unsupported frames drained
CTR_TRUNCATED = 12       # frames truncated by a reset in the middle of the frame
CTR_RANGES = 32          # ranges completed
CTR_RESULTS = 33         # RESULT frames sent
CTR_RESPONSES = 34       # CONTROL responses sent
COUNTERS = 48            # counter slots (a 6-bit counter_select; the others read 0)
COUNTER_BITS = 32

# --- limits ---------------------------------------------------------------------------------------
RANGE_ELEMS = 16         # elements per range and per AUTO tile
BLOCK_ELEMS = 256        # elements per RESULT frame (16 ranges)
MAX_PAYLOAD_BEATS = 256  # a frame bank: 1 header + 256 payload beats
MAX_CONTRIBUTORS = 8
MAX_GROUPS = 16          # NumberGroups per RESULT frame
MAX_CAPACITY = 4096      # the node's largest element capacity (STAGE count E)
MAX_RANGES = MAX_CAPACITY // RANGE_ELEMS
