"""Number formats: codes on the wire, widths, the Kulisch accumulator, canonical specials.

Values from docs/protocol.md ("STAGE", "RESULT", "Arithmetic of the results") and
docs/arithmetic.md; tests/spec/test_spec_formats.py derives them again independently.
"""

# Format codes (STAGE input/result format, DATA format, RESULT group format).
FMT_INT8, FMT_FP16, FMT_BF16, FMT_FP32, FMT_EXACT, FMT_AUTO = range(6)
FORMAT_NAMES = {FMT_INT8: "int8", FMT_FP16: "fp16", FMT_BF16: "bf16", FMT_FP32: "fp32",
                FMT_EXACT: "exact", FMT_AUTO: "auto"}
FORMAT_CODES = {name: code for code, name in FORMAT_NAMES.items()}
INPUT_FORMATS = (FMT_INT8, FMT_FP16, FMT_BF16, FMT_FP32)      # the four element formats
INPUT_FORMAT_CODES = {FORMAT_NAMES[c]: c for c in INPUT_FORMATS}
# What a DATA frame may carry: the element formats and, under KULISCH_FIXED only, EXACT partials
# (another node's EXACT results, one per beat: the merge of a reduction tree).
DATA_FORMATS = INPUT_FORMATS + (FMT_EXACT,)

# Element width in bits of the four element formats, and (exponent, fraction) bits of the floats.
ELEMENT_BITS = {FMT_INT8: 8, FMT_FP16: 16, FMT_BF16: 16, FMT_FP32: 32}
FLOAT_LAYOUT = {FMT_FP16: (5, 10), FMT_BF16: (8, 7), FMT_FP32: (8, 23)}

# Kulisch accumulator: a W-bit two's complement register whose LSB weighs 2^KULISCH_LSB_EXP
# (the smallest FP32 subnormal), so every finite element is an integer term value * 2^149.
# One sign convention: the exponent is negative; the shift that makes a term (the bit index of
# 2^0 in the register) is KULISCH_LSB_SHIFT = -KULISCH_LSB_EXP.
KULISCH_LSB_EXP = -149
KULISCH_LSB_SHIFT = -KULISCH_LSB_EXP   # 149: a value's integer term is value << KULISCH_LSB_SHIFT
KULISCH_WIDTHS = (280, 320)      # the widths the node and the models accept
KULISCH_WIDTH_DEFAULT = 320
# The same widths as the tools offer and run them: the default first (320, 280).
KULISCH_WIDTH_CHOICES = (KULISCH_WIDTH_DEFAULT,) + tuple(w for w in KULISCH_WIDTHS if w != KULISCH_WIDTH_DEFAULT)
# The node's Kulisch rows count wraps of the W-bit register in a KULISCH_WRAP_BITS-bit two's
# complement counter, so a row holds any true sum below 2^(W + KULISCH_WRAP_BITS - 1) in magnitude.
# An EXACT input is taken when |sigma| < 2^(W + KULISCH_EXACT_IN_HEADROOM): a row then takes 8 of
# them (the most contributors) and a merge of two rows without the counter wrapping.  A larger
# sigma enters as a NaN contribution (its value cannot be held; docs/protocol.md, "EXACT input").
KULISCH_WRAP_BITS = 16
# 8 inputs add 3 bits, the sign and one bit of margin 2 more: |true sum| < 2^(W + 14) <= 2^(W + 15)
KULISCH_EXACT_IN_HEADROOM = KULISCH_WRAP_BITS - 5


def exact_input_limit(width):
    """The largest |sigma| + 1 a node of Kulisch width `width` takes as an EXACT input."""
    return 1 << (width + KULISCH_EXACT_IN_HEADROOM)


# The narrowest register one FP32 term fits: (2^24 - 1) * 2^104 * 2^149 < 2^277, plus a sign bit.
# A wrapped (overflowed) sum of a register at least this wide is beyond every format's range.
KULISCH_MIN_WIDTH = 278

# Canonical specials: results never carry a NaN payload.  INT8 has no NaN or infinity: NaN and
# -inf become 0x80 (-128, the integer indefinite), +inf saturates to 0x7F.
NAN_FP32, INF_FP32 = 0x7FC00000, 0x7F800000
NAN_BF16, INF_BF16 = 0x7FC0, 0x7F80
NAN_FP16, INF_FP16 = 0x7E00, 0x7C00
NAN_INT8, INF_INT8, NEG_INF_INT8 = 0x80, 0x7F, 0x80
SIGN_FP32, SIGN_BF16, SIGN_FP16 = 0x80000000, 0x8000, 0x8000
NEG_INF_FP32, NEG_INF_BF16, NEG_INF_FP16 = SIGN_FP32 | INF_FP32, SIGN_BF16 | INF_BF16, SIGN_FP16 | INF_FP16
CANONICAL_NAN = {FMT_INT8: NAN_INT8, FMT_FP16: NAN_FP16, FMT_BF16: NAN_BF16, FMT_FP32: NAN_FP32}
POS_INF = {FMT_INT8: INF_INT8, FMT_FP16: INF_FP16, FMT_BF16: INF_BF16, FMT_FP32: INF_FP32}
NEG_INF = {FMT_INT8: NEG_INF_INT8, FMT_FP16: NEG_INF_FP16, FMT_BF16: NEG_INF_BF16, FMT_FP32: NEG_INF_FP32}
