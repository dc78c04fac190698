"""Aimed data: contributions whose sums land on the edges the node's arithmetic decides.

Uniform random bit patterns almost never sum to a value on a rounding tie, one step either
side of an overflow threshold, on a subnormal edge or on the boundary between two AUTO
formats; a design that gets such a value wrong passes thousands of uniform seeds (an FP16
overflow threshold off by one, turning 65504 into infinity, did).  These generators choose
the *sum* of each element first, on or next to such an edge, then split it into contributions
of the input format that add up to it (exactly where the format can express it, else as
closely as it can); the golden model then predicts every bit, so nothing here has to be
exactly on the edge to be checked, only near it to be useful.

- `edge_values`: per element, a sum at an edge of the result format: the largest finite value,
  the overflow threshold (the midpoint to the next binade: ties to even go to infinity), the
  smallest normal and subnormal values and half the smallest subnormal, a rounding tie at a
  random binade, INT8's saturation points (127.5, -128.5) and its .5 ties; each exactly on the
  edge or one step of the sum's resolution either side, with either sign.
- `auto_edge_values`: per 16-element tile (one AUTO tile), values that fit INT8, FP16 (its
  subnormals and 65504 included) or BF16 exactly, the formats in runs of 1 to 8 tiles (whole
  RESULT beats of one format, and a change of format inside a beat), with now and then one
  value that just does not fit (128, -129, 0.5, -0.0, 65505, 2^-25, a twelfth significant bit), or a special.
- `exact_wrap_values`: the same wrap cases from EXACT partials, at any width.
- `input_edge_values`: in every element, one contributor's pattern at an edge of the input
  format's decoding (a NaN whose fraction is 1, an infinity, the smallest subnormal, the largest
  finite value, either sign), the others small: every lane's decoder meets each.
- `special_lane_values`: finite data with NaN, +inf and -inf (NaN with payloads and sign bits,
  as a contributor may send them) at chosen lanes: lane 0 and 15 of a range, the first and last
  element of a beat and element E - 1, in one contributor or several (+inf and -inf together
  make a NaN), or a negative zero in every contributor and every element of a beat (the sum is
  -0, in every lane).

Every function returns a C x E array of bit patterns of the input format, drawn from `rng`
(a `random.Random`).
"""
from fractions import Fraction

import numpy as np

from golden.arith import formats as F
from golden.node import protocol as P

from cosim.node.scenarios import DTYPES
from spec.formats import INF_FP32, KULISCH_LSB_EXP, KULISCH_WIDTH_DEFAULT

TWO = Fraction(2)


def _edges(result_fmt, kulisch_w=KULISCH_WIDTH_DEFAULT):
    """(value, resolution) pairs at the edges of a result format: the value a sum lands on and
    the step that moves it just off the edge.  EXACT's edges are the accumulator's range,
    -2^(W-1) .. 2^(W-1) units of 2^-149, reachable from FP32 contributions at W = 280 only."""
    if result_fmt == "exact":
        top = TWO ** (kulisch_w - 1 + F.KULISCH_LSB_EXP)
        return [(top, TWO ** 104), (-top, TWO ** 104), (top / 2, TWO ** 100), (TWO ** KULISCH_LSB_EXP, TWO ** KULISCH_LSB_EXP)]
    if result_fmt == "int8":
        ints = [127, Fraction(255, 2), 128, -128, Fraction(-257, 2), -129, Fraction(1, 2), Fraction(3, 2),
                Fraction(5, 2), Fraction(-1, 2), Fraction(-3, 2), 0]
        return [(Fraction(v), Fraction(1, 4)) for v in ints]
    fmt = "fp32" if result_fmt == "auto" else result_fmt
    ebits, mbits, bias, emin, emax = F.float_params(fmt)
    largest = (2 - TWO ** -mbits) * TWO ** emax
    out = [(largest, TWO ** (emax - mbits - 1)),
           ((2 - TWO ** -(mbits + 1)) * TWO ** emax, TWO ** (emax - mbits - 2)),   # overflow threshold (tie)
           # the midpoint below the largest finite value (a tie to the even one below; a step up
           # rounds to the largest, not past it: a rounder that took the fraction ...10 for all
           # ones would give infinity)
           ((2 - 3 * TWO ** -(mbits + 1)) * TWO ** emax, TWO ** (emax - mbits - 2)),
           (TWO ** emin, TWO ** (emin - mbits - 1)),                             # smallest normal
           (TWO ** (emin - mbits), TWO ** (emin - mbits - 1)),                   # smallest subnormal
           (TWO ** (emin - mbits - 1), TWO ** (emin - mbits - 2)),               # half of it: a tie to 0
           ((TWO ** mbits - 1) * TWO ** (emin - mbits), TWO ** (emin - mbits - 1))]  # largest subnormal
    for e in (0, 5, -7, emax - 3, emin + 2):                                     # ties in a few binades
        out.append(((1 + TWO ** -(mbits + 1)) * TWO ** e, TWO ** (e - mbits - 3)))
        out.append(((1 + 3 * TWO ** -(mbits + 1)) * TWO ** e, TWO ** (e - mbits - 3)))
    return out


def _toward_zero(fmt, value):
    """The input-format pattern of largest magnitude not above |value|, with value's sign."""
    if value == 0:
        return 0
    if fmt == "int8":
        n = int(value) if value > 0 else -int(-value)
        return max(-128, min(127, n)) & 0xFF
    ebits, mbits, _, _, _ = F.float_params(fmt)
    bits = F.round_exact(fmt, value)
    mag_bits = bits & ((1 << (ebits + mbits)) - 1)
    if mag_bits == ((1 << ebits) - 1) << mbits:        # rounded to infinity: the largest finite value
        mag_bits -= 1
    while mag_bits and F.decode(fmt, mag_bits) > abs(value):
        mag_bits -= 1
    return mag_bits | (bits & (1 << (ebits + mbits)) if mag_bits else 0)


def split_sum(fmt, value, parts, rng):
    """`parts` patterns of `fmt` whose exact sum is `value` where the format allows it (each takes
    what is left, largest first; the last rounds to nearest), in random order."""
    out, left = [], Fraction(value)
    for k in range(parts):
        bits = F.round_exact(fmt, left) if k == parts - 1 else _toward_zero(fmt, left)
        v = F.decode(fmt, bits)
        if isinstance(v, str):                         # the last part rounded to an infinity
            bits = _toward_zero(fmt, left)
            v = F.decode(fmt, bits)
        out.append(bits)
        left -= v
    rng.shuffle(out)
    return out


def _columns(rng, in_fmt, shape, sums):
    """C x E patterns whose column e sums to sums[e] (or, when a column's entry is a list of
    patterns, those patterns spread over random rows, zeros elsewhere)."""
    contributors, elements = shape
    out = np.zeros(shape, dtype=np.uint64)
    for e, s in enumerate(sums):
        parts = s if isinstance(s, list) else split_sum(in_fmt, s, contributors, rng)
        rows = rng.sample(range(contributors), min(len(parts), contributors))
        for r, bits in zip(rows, parts):
            out[r, e] = bits
    return out.astype(DTYPES[P.FORMAT_CODES[in_fmt]])


def edge_values(rng, in_fmt, result_fmt, shape, kulisch_w=KULISCH_WIDTH_DEFAULT):
    """Sums on the edges of `result_fmt` (see the module notes), 3 in 4 elements; the rest random."""
    from cosim.node.scenarios import random_elements
    edges = _edges(result_fmt, kulisch_w)
    reach = _reach(in_fmt, shape[0])
    sums = []
    for _ in range(shape[1]):
        if rng.random() < 0.25:
            sums.append(None)
            continue
        value, step = rng.choice(edges)
        value = value + rng.choice((-1, 0, 0, 1)) * step
        value = value * rng.choice((1, -1))
        if abs(value) > reach:                 # beyond what C contributions of the format can add up to
            value = value / TWO ** (abs(value) / reach).__ceil__().bit_length()
        sums.append(value)
    filler = random_elements(rng, in_fmt, shape)
    out = _columns(rng, in_fmt, shape, [s if s is not None else 0 for s in sums])
    for e, s in enumerate(sums):
        if s is None:
            out[:, e] = filler[:, e]
    return out


KULISCH_LANES = 64        # the Kulisch store's lanes per port: 4 sub-stores x 16, element e in lane e % 64
WRAP_CASES = ("above the top", "below the bottom", "the bottom", "just below the top", "random")
WRAP_SWEEP = KULISCH_LANES * len(WRAP_CASES)   # elements that give every lane every case


def wrap_values(rng, shape, kulisch_w):
    """FP32 contributions whose sums cross the Kulisch accumulator's range (W = 280: FP32 alone
    can reach it): an element's sum just above the top (one wrap up), below the bottom (one wrap
    down, a negative wrap count), exactly the bottom and just below the top (no wrap), or random.
    Element e is held by Kulisch lane e % 64 (sub-store and lane), and a lane's successive
    elements take the cases in turn, so with E >= 64 * len(WRAP_CASES) every lane's wrap count,
    overflow flag and wrap sign meet each (a lane that kept its last wrap sign fails)."""
    contributors, elements = shape
    if contributors * 2 ** 128 <= TWO ** (kulisch_w - 1 + F.KULISCH_LSB_EXP):
        raise ValueError(f"wrap_values: {contributors} FP32 contributions cannot reach W = {kulisch_w}'s range")
    top = TWO ** (kulisch_w - 1 + F.KULISCH_LSB_EXP)
    offset = rng.randrange(len(WRAP_CASES))
    sums = []
    for e in range(elements):
        case = WRAP_CASES[(e // KULISCH_LANES + offset) % len(WRAP_CASES)]
        step = TWO ** rng.randint(100, 104)
        if case == "above the top":
            sums.append(top + rng.randint(0, 3) * step)
        elif case == "below the bottom":
            sums.append(-top - rng.randint(1, 3) * step)
        elif case == "the bottom":
            sums.append(-top)
        elif case == "just below the top":
            sums.append(top - step)
        else:
            sums.append(Fraction(rng.randint(-2 ** 20, 2 ** 20)) * TWO ** rng.randint(KULISCH_LSB_EXP, 100))
    return _columns(rng, "fp32", shape, sums)


def exact_wrap_values(rng, shape, kulisch_w):
    """EXACT partials (sum, flags) whose element totals take the wrap cases of `wrap_values` at any
    width (partials, unlike FP32 contributions, reach W = 320's range): per element a total just
    above the register's top, below its bottom, exactly the bottom, just below the top, or small,
    split over the contributors (each part inside exact_input_limit(W)); the cases in turn
    through the 64 Kulisch lanes as in `wrap_values`."""
    from spec.formats import exact_input_limit
    contributors, elements = shape
    top = 1 << (kulisch_w - 1)                  # the register's top, in units of its LSB
    spread = exact_input_limit(kulisch_w) // (2 * contributors)
    offset = rng.randrange(len(WRAP_CASES))
    out = np.empty(shape, dtype=object)
    for e in range(elements):
        case = WRAP_CASES[(e // KULISCH_LANES + offset) % len(WRAP_CASES)]
        step = 1 << rng.randint(kulisch_w - 60, kulisch_w - 20)
        total = {"above the top": top + rng.randint(0, 3) * step, "below the bottom": -top - rng.randint(1, 3) * step,
                 "the bottom": -top, "just below the top": top - step}.get(case, rng.randint(-2 ** 60, 2 ** 60))
        parts = [rng.randint(-spread, spread) for _ in range(contributors - 1)]
        parts.insert(rng.randrange(contributors), total - sum(parts))
        for c, part in enumerate(parts):
            out[c, e] = (part, 0)
    return out


def _reach(in_fmt, contributors):
    if in_fmt == "int8":
        return Fraction(127 * contributors)
    ebits, mbits, bias, emin, emax = F.float_params(in_fmt)
    return (2 - TWO ** -mbits) * TWO ** emax * contributors


# AUTO tiles: one value in each of these fits the format named and nothing narrower
_AUTO_FITS = {
    "int8": lambda rng: Fraction(rng.choice((127, -128, 0, 1, -1, rng.randint(-128, 127)))),
    "fp16": lambda rng: rng.choice((Fraction(65504), Fraction(-65504), TWO ** -24, -TWO ** -24, TWO ** -14,
                                    Fraction(rng.randint(1, 1023)) * TWO ** -24, Fraction(1, 2), Fraction(255, 2),
                                    Fraction(rng.randint(1025, 2047)) * TWO ** rng.randint(-13, 4))),
    "bf16": lambda rng: rng.choice((TWO ** -25, TWO ** 20, -TWO ** 17, Fraction(255) * TWO ** rng.randint(9, 100),
                                    Fraction(rng.randint(129, 255)) * TWO ** rng.randint(-120, -25))),
    "fp32": lambda rng: rng.choice((Fraction(65505), Fraction(4097) * TWO ** -12, TWO ** -25 + TWO ** -40,
                                    Fraction(rng.randint(1 << 12, 1 << 24) | 1) * TWO ** rng.randint(-30, 10))),
}
_SPECIALS = ("nan", "+inf", "-inf")


def auto_edge_values(rng, in_fmt, shape):
    """Per 16-element tile: values that fit one AUTO format, sometimes one that just does not,
    sometimes a special (a NaN from a NaN contribution, an infinity, or +inf and -inf)."""
    contributors, elements = shape
    sums = []
    run = 0
    for t in range(0, elements, P.RANGE_ELEMS):
        # formats in runs of tiles: a RESULT beat holds four INT8 or two FP16/BF16 tiles, so a run
        # fills whole beats and its end meets the next format inside a beat or at a beat's edge
        if run == 0:
            fmt, run = rng.choice(("int8", "fp16", "bf16", "fp32")), rng.choice((1, 1, 2, 3, 4, 5, 8))
        run -= 1
        tile = [_AUTO_FITS[fmt](rng) for _ in range(min(P.RANGE_ELEMS, elements - t))]
        if rng.random() < 0.3:                     # one value that breaks the tile's format
            k = rng.randrange(len(tile))
            tile[k] = _AUTO_FITS[rng.choice(("fp16", "bf16", "fp32"))](rng) if fmt != "fp32" else tile[k]
            if fmt == "int8" and rng.random() < 0.3:
                tile[k] = rng.choice((Fraction(128), Fraction(-129), Fraction(1, 2), "-0"))
        if rng.random() < 0.2:
            tile[rng.randrange(len(tile))] = rng.choice(_SPECIALS)
        sums.extend(tile)
    reach = _reach(in_fmt, contributors)
    cols = []
    for s in sums:
        if s == "-0":               # a negative zero sum: every contribution -0 (FP32_ARRIVAL keeps it)
            cols.append(_special_parts(in_fmt, s, rng) * contributors)
        elif isinstance(s, str):
            cols.append(_special_parts(in_fmt, s, rng))
        elif abs(s) > reach:
            cols.append(Fraction(rng.randint(-127, 127)))
        else:
            cols.append(s)
    return _columns(rng, in_fmt, shape, cols)


def _special_parts(fmt, what, rng):
    """Patterns of `fmt` that give `what`: "nan", "+inf", "-inf" or "-0" (a negative zero sum)."""
    if what == "-0":
        return [0x80 if fmt == "int8" else 1 << (F.WIDTH_BITS[fmt] - 1)]
    if fmt == "int8":                    # INT8 has no specials: its extremes instead
        return [0x7F if what == "+inf" else 0x80]
    if what == "nan":
        return rng.choice(([_nan(fmt, rng)], [F.infinity(fmt), F.infinity(fmt, True)]))
    return [F.infinity(fmt, what == "-inf")]


def _nan(fmt, rng):
    """A NaN as a contributor may send it: any payload, either sign, quiet or signalling."""
    ebits, mbits, _, _, _ = F.float_params(fmt)
    payload = rng.choice((1, 1 << (mbits - 1), (1 << mbits) - 1, rng.randrange(1, 1 << mbits)))
    return (rng.randrange(2) << (ebits + mbits)) | (((1 << ebits) - 1) << mbits) | payload


def special_lane_values(rng, in_fmt, shape):
    """Small finite values with specials at chosen positions (lanes 0 and 15 of a range, the first
    and last element of a beat, element E - 1, one lane drawn at random in every range, and about
    a third of all elements), each in one contributor or several; or, at some chosen positions, a
    negative zero in every contributor and every element of the position's beat (the sum is -0)."""
    contributors, elements = shape
    fmt_code = P.FORMAT_CODES[in_fmt]
    per_beat = P.ELEMS_PER_BEAT[fmt_code]
    out = np.zeros(shape, dtype=np.uint64)
    for c in range(contributors):
        for e in range(elements):
            out[c, e] = F.round_exact(in_fmt, Fraction(rng.randint(-20, 20), rng.choice((1, 2, 4))))
    positions = {0, elements - 1}
    for base in range(0, elements, P.RANGE_ELEMS * 4):
        positions |= {base, min(elements - 1, base + P.RANGE_ELEMS - 1), min(elements - 1, base + per_beat - 1)}
    positions = {p for p in positions if rng.random() < 0.7}
    for base in range(0, elements, P.RANGE_ELEMS):
        positions.add(min(elements - 1, base + rng.randrange(P.RANGE_ELEMS)))
    # and, element by element, one contributor's special in about a third of all elements: every
    # lane of every range (so every sub-store, bank and decoder instance, on either port) meets each
    # kind of special in a few seeds, while most elements keep one special alone, unmasked
    spread = {e for e in range(elements) if rng.random() < 0.35}
    for e in sorted(spread - positions):
        r = rng.randrange(contributors)
        if in_fmt == "int8":
            out[r, e] = rng.choice((0x7F, 0x80))
        else:
            what = rng.choice(("nan", "+inf", "-inf"))
            out[r, e] = _nan(in_fmt, rng) if what == "nan" else F.infinity(in_fmt, what == "-inf")
    positions = sorted(positions)
    for e in positions:
        what = rng.choice(_SPECIALS + ("+inf/-inf", "-0"))
        rows = rng.sample(range(contributors), rng.randint(1, contributors))
        if what == "-0" and in_fmt != "int8":
            # every contribution -0 in every element of e's beat (the sum is -0, IEEE), so each of
            # the beat's lanes, and so each decoder instance, meets a negative zero
            first = e - e % per_beat
            for e2 in range(first, min(elements, first + per_beat)):
                out[:, e2] = _special_parts(in_fmt, "-0", rng)[0]
            continue
        for r in rows:
            if in_fmt == "int8":
                out[r, e] = rng.choice((0x7F, 0x80))
            elif what == "nan":
                out[r, e] = _nan(in_fmt, rng)
            elif what == "+inf/-inf":
                out[r, e] = F.infinity(in_fmt, rng.random() < 0.5)
            else:
                out[r, e] = F.infinity(in_fmt, what == "-inf")
    return out.astype(DTYPES[fmt_code])


def input_edge_patterns(fmt):
    """The input patterns at the edges of a format's decoding, either sign: zero, the smallest
    and largest subnormal (fraction 1 and all ones at exponent 0), the smallest normal, one ulp
    above 1, the largest finite value, infinity (fraction 0 at the top exponent) and NaNs whose
    fraction is 1, the quiet bit alone or all ones; INT8's 0, +-1, 127, -128 and -127."""
    if fmt == "int8":
        return [0x00, 0x01, 0xFF, 0x7F, 0x80, 0x81]
    ebits, mbits, bias, _, _ = F.float_params(fmt)
    top = ((1 << ebits) - 1) << mbits
    magnitudes = [0, 1, (1 << mbits) - 1, 1 << mbits, (bias << mbits) | 1, top - 1, top,
                  top | 1, top | (1 << (mbits - 1)), top | ((1 << mbits) - 1)]
    sign = 1 << (ebits + mbits)
    return magnitudes + [m | sign for m in magnitudes]


def input_edge_elements(in_fmt, contributors=2):
    """The element count at which input_edge_values has put every edge pattern in every one of
    the 16 lanes once for each of the first two contributors (one per receive port when
    contributor c comes in on port c % 2)."""
    return P.RANGE_ELEMS * len(input_edge_patterns(in_fmt)) * min(2, contributors)


def input_edge_values(rng, in_fmt, shape):
    """Per element, one contributor's pattern from input_edge_patterns (the others small finite
    values, so a special is never masked by another): every lane's decoder meets a NaN whose
    fraction is 1, an infinity, the smallest subnormal and the largest finite value, on either
    port.  Element e takes pattern (e // 16 + k) % n (k drawn), so every 16 x n elements put
    each pattern in each lane once, carried by contributor 0 on the first pass, 1 on the next..."""
    contributors, elements = shape
    fmt_code = P.FORMAT_CODES[in_fmt]
    edges = input_edge_patterns(in_fmt)
    small = {}                  # the 51 small values, each rounded once
    out = np.zeros(shape, dtype=np.uint64)
    start = rng.randrange(len(edges))
    for e in range(elements):
        for c in range(contributors):
            key = (rng.randint(-8, 8), rng.choice((1, 2, 4)))
            if key not in small:
                small[key] = F.round_exact(in_fmt, Fraction(*key))
            out[c, e] = small[key]
        sweep, lane_range = divmod(e // P.RANGE_ELEMS, len(edges))
        out[sweep % contributors, e] = edges[(lane_range + start) % len(edges)]
    return out.astype(DTYPES[fmt_code])


ADDER_LANES = 256          # FP32_ARRIVAL's adder lanes: 16 banks x 16 lanes, element e in lane e % 256
ADDER_CASES = ("cancel", "near cancel", "align", "tie", "sticky", "overflow", "subnormal smallest",
               "subnormal tie", "subnormal difference", "sticky", "random")


def adder_stress_values(rng, in_fmt, shape, sticky_sweep=None):
    """Contributions that make FP32_ARRIVAL's adds decide something, per element (every element
    has its own adder lane, so a large E reaches every lane): exact and near cancellation (the
    sum has k leading zeros for any k, a long normalisation), operands a few binades apart
    (alignment, guard and sticky bits, rounding ties), sums past the largest finite value, and
    sums into the subnormal range (among them a normal beside a subnormal half its ulp, FP32 only),
    sums one sticky bit past a tie, at every alignment (twice in the sweep);
    either sign, in the input format's own precision.  The cases sweep the lanes (ADDER_CASES).
    sticky_sweep (FP32; None: two draws in five): every element is the sticky case instead."""
    contributors, elements = shape
    fmt_code = P.FORMAT_CODES[in_fmt]
    out = np.zeros(shape, dtype=np.uint64)
    if in_fmt == "int8":
        for e in range(elements):
            big = rng.choice((127, -128, rng.randint(-128, 127)))
            row = [big] + [rng.choice((-big if -128 <= -big <= 127 else 127, rng.randint(-3, 3), 1, -1))
                           for _ in range(contributors - 1)]
            for c, v in enumerate(row):
                out[c, e] = v & 0xFF
        return out.astype(DTYPES[fmt_code])
    ebits, mbits, bias, emin, emax = F.float_params(in_fmt)

    def value(m, e):
        return Fraction(m) * TWO ** e

    def finite(v):
        bits = F.round_exact(in_fmt, v)
        return bits if not isinstance(F.decode(in_fmt, bits), str) else _toward_zero(in_fmt, v)
    # element e has adder lane e % ADDER_LANES; its successive elements take the cases in turn, so
    # a lane meets every case (the subnormal ones each by name) once E >= ADDER_LANES * len(cases):
    # a fault in one lane's adder then shows whatever lane it is in
    cases = ADDER_CASES if in_fmt == "fp32" else tuple(c for c in ADDER_CASES if c != "subnormal tie")
    offset = rng.randrange(len(cases))
    # FP32 only, two draws in five: every element one sticky bit past a tie, the bit's distance
    # below the guard stepping through every position of the FP32 adder's shifted-out bits as the
    # elements pass each lane again (the 16 elements a lane gets at E = 4,096 take 16 of them)
    if sticky_sweep is None:
        sticky_sweep = in_fmt == "fp32" and rng.random() < 0.4
    elif sticky_sweep and in_fmt != "fp32":
        raise ValueError("adder_stress_values: the sticky sweep is FP32's (the narrow formats' bits all fit)")
    for e in range(elements):
        case = "sticky" if sticky_sweep else cases[(e // ADDER_LANES + offset) % len(cases)]
        sub = case.partition(" ")[2] if case.startswith("subnormal") else ""
        case = "subnormal" if sub else case
        exp = rng.randint(emin + 2, emax - mbits - 2) if case != "overflow" else emax - mbits
        m0 = rng.randint(1 << mbits, (2 << mbits) - 1) * rng.choice((1, -1))
        row = [value(m0, exp)]
        if case == "cancel":
            row.append(-row[0])
        elif case == "near cancel":           # a sum with k leading zeros: normalisation by k
            k = rng.randint(1, mbits)
            row.append(-value(m0, exp) + value(rng.choice((1, -1)) * rng.randint(1, (1 << (mbits + 1 - k)) - 1), exp))
        elif case == "align":                 # a few binades down: alignment, guard, sticky
            row.append(value(rng.randint(1, (2 << mbits) - 1) * rng.choice((1, -1)), exp - rng.randint(1, mbits + 3)))
        elif case == "sticky":
            # past a tie by one bit: the smaller operand d binades down (d <= mbits + 1) with its
            # guard bit set, its round bit clear and one more bit j places below the guard; only
            # the sticky (an or of every bit shifted out) tells the sum from a tie, so a sticky
            # that misses a bit position shows as an ulp
            if sticky_sweep:
                j = 3 + (e // ADDER_LANES + offset) % (mbits - 2)
                d = rng.randint(j + 1, mbits + 1)
            else:
                d = rng.randint(3, mbits + 1)
                j = rng.randint(2, d - 1) if d <= mbits else rng.randint(2, mbits)
            # bits above the guard: the smaller operand's top d binades down (none when the guard
            # bit is its top)
            kept = rng.getrandbits(mbits - d) | 1 << (mbits - d) if d <= mbits else 0
            small = value(kept, exp) + value(1, exp - 1) + value(1, exp - 1 - j)
            row[0] = value(m0 & ~1, exp) if m0 > 0 else -value(-m0 & ~1, exp)
            row.append(small * rng.choice((1, -1)))
        elif case == "tie":                   # exactly half an ulp of the larger operand
            row.append(value(rng.choice((1, -1)), exp - 1) if mbits >= 23 else value(rng.choice((1, 3)), exp - 2))
        elif case == "overflow":
            row[0] = value((2 << mbits) - 1, emax - mbits)
            row.append(value(rng.randint(1 << mbits, (2 << mbits) - 1), emax - mbits - rng.randint(0, mbits + 1)))
        elif case == "subnormal":             # two normals whose sum is below the smallest normal
            if sub == "smallest":             # exactly the smallest subnormal, either sign
                sign = rng.choice((1, -1))
                row = [sign * value((1 << mbits) + 1, emin - mbits), -sign * value(1 << mbits, emin - mbits)]
            elif sub == "tie":
                # a tie whose smaller operand is subnormal: a normal of biased exponent k (2 .. 24)
                # and exactly half its ulp, 2^(k - 151), which only a subnormal holds; rounding to
                # even decides, so the subnormal's guard and sticky bits must be exact
                k = rng.randint(2, 24)
                row = [value(m0, k - 150), value(rng.choice((1, -1)), k - 151)]
            else:
                row = [value(m0, emin - mbits),
                       -value(m0 - rng.choice((1, -1)) * rng.randint(1, 1 << mbits), emin - mbits)]
        # the other contributors: mostly zeros, which leave the running sum exact whatever the
        # arrival order, so the case's two operands still meet in one add
        while len(row) < contributors:
            row.append(value(rng.randint(0, (2 << mbits) - 1) * rng.choice((1, -1)),
                             exp - rng.randint(-2, mbits + 4)) if rng.random() < 0.2 else Fraction(0))
        rows = rng.sample(range(contributors), contributors)
        for c, v in zip(rows, row[:contributors]):
            out[c, e] = finite(v)
    return out.astype(DTYPES[fmt_code])


def overflow_values(rng, in_fmt, shape):
    """FP32_ARRIVAL contributions whose sum passes the largest finite FP32 value in every element,
    so each of the ADDER_LANES adder lanes (element e: lane e % ADDER_LANES) overflows once E >=
    ADDER_LANES: the largest finite value of the input format and a value of the same sign 0 ..
    mbits binades below its top binade (a carry out of the top exponent, or out of the rounding;
    FP32 or BF16, the formats whose range reaches FP32's top).  The other contributors give
    zeros, so the two meet in one add whatever the arrival order.  adder_stress_values meets the
    overflow in a lane only at E = 4,096 (its cases take turns per lane); a fault in one lane's
    overflow test survived 60 seeds of it."""
    if in_fmt not in ("fp32", "bf16"):
        raise ValueError("overflow_values: FP32 or BF16 input (the narrower formats' sums stay finite)")
    contributors, elements = shape
    _, mbits, _, _, emax = F.float_params(in_fmt)
    top = Fraction((2 << mbits) - 1) * TWO ** (emax - mbits)
    out = np.zeros(shape, dtype=np.uint64)
    for e in range(elements):
        sign = rng.choice((1, -1))
        other = Fraction(rng.randint(1 << mbits, (2 << mbits) - 1)) * TWO ** (emax - mbits - rng.randint(0, mbits))
        row = [sign * top, sign * other] + [Fraction(0)] * (contributors - 2)
        for c, v in zip(rng.sample(range(contributors), contributors), row):
            out[c, e] = F.round_exact(in_fmt, v)
    return out.astype(DTYPES[P.FORMAT_CODES[in_fmt]])


def subnormal_lane_values(rng, in_fmt, shape):
    """FP32_ARRIVAL contributions that put a subnormal beside a normal in one add, in every element,
    so each adder lane (element e: lane e % ADDER_LANES) aligns a subnormal against a normal once
    E >= ADDER_LANES: a normal of the input format in its lowest binades (within its significand's
    reach of the subnormals) and a subnormal of any significand, either sign each.  The subnormal's
    exponent field says 0 where its scale is the smallest normal's, so the adder aligns it one
    place less than the fields' difference; adder_stress_values has the case only in its
    "subnormal tie" turn (FP32 alone, at E = 4,096), and one lane's missing correction survived
    200 seeds.  FP32 or BF16 (their subnormals are FP32's); the other contributors give zeros."""
    if in_fmt not in ("fp32", "bf16"):
        raise ValueError("subnormal_lane_values: FP32 or BF16 input (the narrower formats have no FP32 subnormal)")
    contributors, elements = shape
    _, mbits, _, emin, _ = F.float_params(in_fmt)
    out = np.zeros(shape, dtype=np.uint64)
    for e in range(elements):
        normal = Fraction(rng.randint(1 << mbits, (2 << mbits) - 1)) * TWO ** (emin - mbits + rng.randint(0, mbits))
        sub = Fraction(rng.randint(1, (1 << mbits) - 1)) * TWO ** (emin - mbits)
        row = [normal * rng.choice((1, -1)), sub * rng.choice((1, -1))] + [Fraction(0)] * (contributors - 2)
        for c, v in zip(rng.sample(range(contributors), contributors), row):
            out[c, e] = F.round_exact(in_fmt, v)
    return out.astype(DTYPES[P.FORMAT_CODES[in_fmt]])


def exact_partial_values(rng, shape, kulisch_w=KULISCH_WIDTH_DEFAULT):
    """A C x E object array of EXACT partials (sum, flags), as child nodes of a reduction tree
    send them (a RESULT frame's EXACT values taken back in as DATA), per element one of:
    a child's sum of 1-8 random FP32 terms; sums past the W-bit register that wrap it several
    times, given to contributors in pairs that cancel to a small total (the row's wrap count
    goes out and back); sums on the edge of what a row takes (exact_input_limit(W): the last
    value in, the first out, which enters as NaN); and, now and then, a child's flags (NaN,
    +inf, -inf, or its overflow bit, which carries no information the sum lacks)."""
    from spec.formats import exact_input_limit
    from spec.frames import FLAG_NAN, FLAG_NEG_INF, FLAG_OVERFLOW, FLAG_POS_INF
    limit = exact_input_limit(kulisch_w)
    c_count, e_count = shape
    out = np.empty(shape, dtype=object)
    for e in range(e_count):
        kind = rng.choice(("child",) * 5 + ("wraps", "edge"))
        pair = rng.getrandbits(kulisch_w + rng.randrange(1, 11))
        for c in range(c_count):
            if kind == "child":
                total = 0
                for _ in range(rng.randint(1, 8)):
                    finite = rng.getrandbits(31) % INF_FP32         # any finite FP32 magnitude
                    term, _, _, _ = F.to_kulisch_term("fp32", finite | (rng.getrandbits(1) << 31))
                    total += term
            elif kind == "wraps":
                # contributors 0, 2, ... send +pair, 1, 3, ... -pair plus a little: the total is small
                total = pair if c % 2 == 0 else -pair + rng.randrange(-1000, 1000)
            else:
                total = rng.choice((limit - 1, -limit, limit, -limit - 1, limit - rng.randrange(1, 1 << 20),
                                    1 << (kulisch_w - 1), -(1 << (kulisch_w - 1)) - 1))
            flags = 0
            if rng.random() < 0.05:
                flags = rng.choice((FLAG_NAN, FLAG_POS_INF, FLAG_NEG_INF, FLAG_OVERFLOW, FLAG_POS_INF | FLAG_NEG_INF))
            out[c, e] = (total, flags)
    return out
