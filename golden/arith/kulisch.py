"""Kulisch exact accumulator: pure-Python reference (Python ints).

A W-bit two's-complement fixed-point register with LSB weight 2^-149 (the
smallest FP32 subnormal).  Every finite INT8/FP16/BF16/FP32 value x enters as
the integer term x * 2^149; the largest FP32 magnitude (2^24-1) * 2^104 is
below 2^277, so one term fits in 278 signed bits and W (320, or 280 in the
U280 build) is enough for one add to wrap at most once.

The register adds modulo 2^W.  A small signed *net wrap counter* counts
+1 when an add carries past the top (the running sum went above 2^(W-1)-1)
and -1 when it borrows past the bottom.  Overflow <=> counter != 0, which is
exactly "the true sum lies outside [-2^(W-1), 2^(W-1))" whatever order the
terms came in; the counter's sign is the true sum's sign.

Specials travel beside the register as three sticky flags (nan, pos_inf,
neg_inf).  The result is rounded once, from the true sum, to the selected
format; an overflowed sum rounds to +/-inf (INT8 saturates) because
2^(W-1-149) is beyond every format's range.  Only the exact export shows the
wrapped W-bit state, with the overflow flag set.
"""
from fractions import Fraction

from golden.arith.formats import KULISCH_LSB_EXP, canonical_nan, infinity, round_exact, to_kulisch_term
from spec.formats import KULISCH_WIDTH_DEFAULT, KULISCH_WIDTHS, exact_input_limit
from spec.frames import FLAG_NAN, FLAG_NEG_INF, FLAG_OVERFLOW, FLAG_POS_INF  # noqa: F401


def exact_limb_count(width):
    return -(-width // 64)


class KulischAccumulator:
    """One Kulisch register of `width` bits (320 or 280) plus flags."""

    def __init__(self, width=KULISCH_WIDTH_DEFAULT):
        if width not in KULISCH_WIDTHS:
            raise ValueError(f"Kulisch width must be one of {KULISCH_WIDTHS}, got {width!r}")
        self.width = width
        self.state = 0          # W-bit two's-complement pattern, in [0, 2^W)
        self.wraps = 0          # net wrap count
        self.nan = False
        self.pos_inf = False
        self.neg_inf = False

    # -- register arithmetic ------------------------------------------------
    @property
    def signed_state(self):
        w = self.width
        return self.state - (1 << w) if self.state >> (w - 1) else self.state

    def add_term(self, term):
        """Add one integer (units of 2^-149) modulo 2^W, counting wraps."""
        w = self.width
        if not -(1 << (w - 1)) <= term < (1 << (w - 1)):
            raise ValueError(f"term does not fit in {w} signed bits")
        s = self.signed_state + term
        if s >= 1 << (w - 1):
            s -= 1 << w
            self.wraps += 1
        elif s < -(1 << (w - 1)):
            s += 1 << w
            self.wraps -= 1
        self.state = s & ((1 << w) - 1)

    def add(self, fmt, bits):
        """Accumulate one element given as a raw bit pattern of `fmt`."""
        term, nan, pos_inf, neg_inf = to_kulisch_term(fmt, bits)
        self.nan |= nan
        self.pos_inf |= pos_inf
        self.neg_inf |= neg_inf
        if term:
            self.add_term(term)

    def add_exact(self, total, flags):
        """Merge a partial as an EXACT beat carries it (a child node's result): the exact sum
        `total` (units of 2^-149, any width) and the flag nibble.  The specials flags are ORed;
        the overflow flag is informational (`total` is complete) and ignored.  A partial at or
        outside [-L, L), L = exact_input_limit(W) (W + 12 signed bits), cannot be held by a node's
        row; it enters as a NaN contribution (docs/protocol.md, "EXACT input")."""
        self.nan |= bool(flags & FLAG_NAN)
        self.pos_inf |= bool(flags & FLAG_POS_INF)
        self.neg_inf |= bool(flags & FLAG_NEG_INF)
        limit = exact_input_limit(self.width)
        if not -limit <= total < limit:
            self.nan = True
            return
        w = self.width
        s = self.signed_state + total
        wraps, s = divmod(s + (1 << (w - 1)), 1 << w)    # s - 2^(W-1) in [-2^(W-1), 2^(W-1))
        self.wraps += wraps
        self.state = (s - (1 << (w - 1))) & ((1 << w) - 1)

    def merge(self, other):
        """Fold another accumulator of the same width into this one (the
        merge of port-local states)."""
        if other.width != self.width:
            raise ValueError("cannot merge Kulisch accumulators of different widths")
        self.add_term(other.signed_state)
        self.wraps += other.wraps
        self.nan |= other.nan
        self.pos_inf |= other.pos_inf
        self.neg_inf |= other.neg_inf

    # -- views ----------------------------------------------------------------
    @property
    def overflow(self):
        return self.wraps != 0

    @property
    def true_sum(self):
        """The exact sum as an integer in units of 2^-149."""
        return self.signed_state + (self.wraps << self.width)

    @property
    def flags(self):
        """bit0 nan, bit1 +inf, bit2 -inf, bit3 overflow."""
        return (FLAG_NAN * self.nan | FLAG_POS_INF * self.pos_inf
                | FLAG_NEG_INF * self.neg_inf | FLAG_OVERFLOW * self.overflow)

    def special(self):
        """"nan", "+inf", "-inf" or None."""
        if self.nan or (self.pos_inf and self.neg_inf):
            return "nan"
        if self.pos_inf:
            return "+inf"
        if self.neg_inf:
            return "-inf"
        return None

    def value(self):
        """Exact value of the true sum as a Fraction (ignores specials)."""
        return Fraction(self.true_sum, 1 << -KULISCH_LSB_EXP)

    def result(self, out_fmt):
        """The true sum rounded once to `out_fmt` (RNE; specials first; an
        exact zero gives +0)."""
        sp = self.special()
        if sp == "nan":
            return canonical_nan(out_fmt)
        if sp is not None:
            return infinity(out_fmt, sp == "-inf")
        return round_exact(out_fmt, self.value())

    def exact_limbs(self):
        """The W-bit state as ceil(W/64) uint64 limbs, limb 0 least
        significant, sign-extended to the full limb width."""
        n = exact_limb_count(self.width)
        x = self.signed_state & ((1 << (64 * n)) - 1)
        return [(x >> (64 * i)) & 0xFFFFFFFFFFFFFFFF for i in range(n)]


def limbs_to_signed(limbs, width):
    """Inverse of `exact_limbs`: the signed W-bit state from its limbs."""
    x = 0
    for i, limb in enumerate(limbs):
        x |= int(limb) << (64 * i)
    x &= (1 << width) - 1
    return x - (1 << width) if x >> (width - 1) else x


def kulisch_sum(fmt, bits_seq, width=KULISCH_WIDTH_DEFAULT):
    """Accumulate a sequence of raw patterns; returns the accumulator."""
    acc = KulischAccumulator(width)
    for b in bits_seq:
        acc.add(fmt, int(b))
    return acc
