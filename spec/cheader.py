"""Print the C view of the spec: `python -m spec.cheader > ckernels/prism_spec.h`.

tests/spec/test_spec_cheader.py checks that the committed header equals this output, and that a C
compiler reads back every value this module computes, so the C kernels cannot drift from the
Python constants.  Names carry a PRISM_ prefix (C has one namespace).

The header is written like a hand-made numeric header (xsum's, say): a few primary definitions
(format codes, the float layouts, the LSB exponent, the widths, the flag bits) and every other
constant as a C expression of them, with its type; static assertions state the invariants the
kernels rely on.  So the canonical NaN of a format reads as "its +inf with the quiet bit" in C, and
the test that the expression equals spec.formats.CANONICAL_NAN checks the two definitions against
each other.
"""
import textwrap

from spec import formats, frames

FLOATS = (formats.FMT_FP16, formats.FMT_BF16, formats.FMT_FP32)


def _upper(code):
    return formats.FORMAT_NAMES[code].upper()


def definitions():
    """(C name, C expression, value) in header order, a None name for a comment line.

    The value is what the expression must evaluate to: spec's own constant where spec has one,
    otherwise computed here from spec's primary numbers."""
    defs = [(None, "number format codes (int): the codes on the wire", None)]
    for code, name in formats.FORMAT_NAMES.items():
        defs.append((f"PRISM_FMT_{name.upper()}", str(code), code))

    defs.append((None, "float layouts (int): exponent and fraction bits; bias, field masks (uint32_t, "
                       "right-aligned) and sign bit position derived", None))
    for code in FLOATS:
        f = _upper(code)
        ebits, fbits = formats.FLOAT_LAYOUT[code]
        defs += [(f"PRISM_EXP_BITS_{f}", str(ebits), ebits),
                 (f"PRISM_FRAC_BITS_{f}", str(fbits), fbits),
                 (f"PRISM_BIAS_{f}", f"((1 << (PRISM_EXP_BITS_{f} - 1)) - 1)", (1 << (ebits - 1)) - 1),
                 (f"PRISM_EXP_MASK_{f}", f"(((uint32_t)1 << PRISM_EXP_BITS_{f}) - 1)", (1 << ebits) - 1),
                 (f"PRISM_FRAC_MASK_{f}", f"(((uint32_t)1 << PRISM_FRAC_BITS_{f}) - 1)", (1 << fbits) - 1),
                 (f"PRISM_SIGN_BIT_{f}", f"(PRISM_EXP_BITS_{f} + PRISM_FRAC_BITS_{f})", ebits + fbits)]

    defs.append((None, "Kulisch accumulator: LSB weight 2^PRISM_KULISCH_LSB_EXP (int, negative); a finite "
                       "value's integer term is value * 2^PRISM_KULISCH_LSB_SHIFT; the accepted widths (int)", None))
    defs += [("PRISM_KULISCH_LSB_EXP", f"({formats.KULISCH_LSB_EXP})", formats.KULISCH_LSB_EXP),
             ("PRISM_KULISCH_LSB_SHIFT", "(-PRISM_KULISCH_LSB_EXP)", formats.KULISCH_LSB_SHIFT)]
    for w in formats.KULISCH_WIDTHS:
        defs.append((f"PRISM_KULISCH_W{w}", str(w), w))

    defs.append((None, "canonical NaN and infinities (uint32_t patterns, right-aligned): +inf is the all-ones "
                       "exponent, -inf adds the sign, the NaN the quiet bit (the top fraction bit)", None))
    for code in FLOATS:
        f = _upper(code)
        defs += [(f"PRISM_POS_INF_{f}", f"(PRISM_EXP_MASK_{f} << PRISM_FRAC_BITS_{f})", formats.POS_INF[code]),
                 (f"PRISM_NEG_INF_{f}", f"(PRISM_POS_INF_{f} | ((uint32_t)1 << PRISM_SIGN_BIT_{f}))",
                  formats.NEG_INF[code]),
                 (f"PRISM_NAN_{f}", f"(PRISM_POS_INF_{f} | ((uint32_t)1 << (PRISM_FRAC_BITS_{f} - 1)))",
                  formats.CANONICAL_NAN[code])]
    defs.append((None, "INT8 has no NaN or infinity: NaN and -inf give INT8_MIN (the integer indefinite), "
                       "+inf saturates to INT8_MAX; as uint8_t patterns in a uint32_t", None))
    i8 = formats.FMT_INT8
    defs += [("PRISM_POS_INF_INT8", "((uint32_t)(uint8_t)INT8_MAX)", formats.POS_INF[i8]),
             ("PRISM_NEG_INF_INT8", "((uint32_t)(uint8_t)INT8_MIN)", formats.NEG_INF[i8]),
             ("PRISM_NAN_INT8", "PRISM_NEG_INF_INT8", formats.CANONICAL_NAN[i8])]

    defs.append((None, "flag nibble of an exact value (int)", None))
    for name in ("FLAG_NAN", "FLAG_POS_INF", "FLAG_NEG_INF", "FLAG_OVERFLOW"):
        defs.append((f"PRISM_{name}", str(getattr(frames, name)), getattr(frames, name)))
    return defs


def values():
    """C name -> the value its expression must have."""
    return {name: value for name, _, value in definitions() if name}


def invariants():
    """(C condition, why) the kernels rely on, checked by the compiler wherever the header is included."""
    narrow, wide = (f"PRISM_KULISCH_W{w}" for w in (min(formats.KULISCH_WIDTHS), max(formats.KULISCH_WIDTHS)))
    return [
        ("PRISM_KULISCH_LSB_EXP == 1 - PRISM_BIAS_FP32 - PRISM_FRAC_BITS_FP32",
         "the LSB is the smallest FP32 subnormal"),
        ("1 - PRISM_BIAS_FP16 - PRISM_FRAC_BITS_FP16 >= PRISM_KULISCH_LSB_EXP"
         " && 1 - PRISM_BIAS_BF16 - PRISM_FRAC_BITS_BF16 >= PRISM_KULISCH_LSB_EXP",
         "every finite FP16 and BF16 value is a whole number of LSBs"),
        (f"{narrow} - 1 + PRISM_KULISCH_LSB_EXP > PRISM_BIAS_FP32 + 1",
         "a wrap of either width is beyond FP32's largest finite value (below 2^(bias+1))"),
        (f"{wide} % 64 == 0", "the wider width fills whole 64-bit limbs"),
        ("PRISM_SIGN_BIT_FP32 == 31 && PRISM_SIGN_BIT_FP16 == 15 && PRISM_SIGN_BIT_BF16 == 15",
         "the patterns fill their uint32_t / uint16_t containers"),
        ("PRISM_FMT_INT8 < PRISM_FMT_FP16 && PRISM_FMT_FP16 < PRISM_FMT_BF16 && PRISM_FMT_BF16 < PRISM_FMT_FP32",
         "element formats in the order AUTO tries them, FP32 the widest"),
    ]


def _comment(text):
    body = textwrap.wrap(text, 96)
    if len(body) == 1:
        return [f"/* {body[0]} */"]
    return [f"/* {body[0]}"] + [f" * {b}" for b in body[1:-1]] + [f" * {body[-1]} */"]


def lines():
    out = ["/* Generated by `python -m spec.cheader` from spec/formats.py and spec/frames.py:",
           " * do not edit; change spec/ and regenerate.  Primary numbers as literals, the others",
           " * derived from them; the static assertions at the end state what the kernels rely on. */",
           "#ifndef PRISM_SPEC_H",
           "#define PRISM_SPEC_H",
           "",
           "#include <stdint.h>"]
    for name, expr, _ in definitions():
        if name is None:
            out += [""] + _comment(expr)
        else:
            out.append(f"#define {name} {expr}")
    out += ["", "/* invariants */"]
    for cond, why in invariants():
        out.append(f'_Static_assert({cond}, "{why}");')
    out += ["", "#endif"]
    return out


if __name__ == "__main__":
    print("\n".join(lines()))
