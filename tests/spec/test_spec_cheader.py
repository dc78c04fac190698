"""ckernels/prism_spec.h is generated from spec/: the committed file must equal the generator's
output, a C compiler must read the same values back, and the C kernels must use its names rather
than write the constants again as literals."""
import glob
import math
import os
import re
import subprocess

import numpy as np

from spec import cheader
from spec import formats as SF
from spec import frames as S

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "ckernels", "prism_spec.h")


def test_committed_header_is_the_generators_output():
    with open(HEADER) as fh:
        committed = fh.read()
    assert committed == "\n".join(cheader.lines()) + "\n", \
        "ckernels/prism_spec.h is stale: run `python -m spec.cheader > ckernels/prism_spec.h`"
    assert "do not edit" in committed


def test_kernel_headers_include_it():
    with open(os.path.join(ROOT, "ckernels", "kulisch.h")) as fh:
        assert '#include "prism_spec.h"' in fh.read()


def test_c_sees_the_python_values(tmp_path):
    """Every name the header defines, evaluated by a C compiler: the derived expressions give
    spec's own constants (a canonical NaN built from the layout equals CANONICAL_NAN, ...)."""
    names = cheader.values()
    assert names["PRISM_NAN_FP32"] == SF.NAN_FP32 and names["PRISM_KULISCH_LSB_EXP"] == SF.KULISCH_LSB_EXP
    assert names["PRISM_FLAG_OVERFLOW"] == S.FLAG_OVERFLOW and names["PRISM_FMT_AUTO"] == SF.FMT_AUTO
    src = tmp_path / "probe.c"
    src.write_text('#include <stdio.h>\n#include "prism_spec.h"\nint main(void) {\n' + "".join(
        f'    printf("%lld\\n", (long long)({n}));\n' for n in names) + "    return 0;\n}\n")
    exe = tmp_path / "probe"
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", os.path.dirname(HEADER), str(src),
                    "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    assert dict(zip(names, (int(x) for x in out))) == names


def _bits(x, dtype):
    return int(np.array(x, dtype).view({2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]))


def test_header_only_names_from_ieee():
    """The names the header derives that spec does not hold, from numpy's view of IEEE 754."""
    v = cheader.values()
    for name, dt in (("FP16", np.float16), ("FP32", np.float32)):
        info = np.finfo(dt)
        assert v[f"PRISM_BIAS_{name}"] == info.maxexp - 1
        assert v[f"PRISM_SIGN_BIT_{name}"] == info.bits - 1 == _bits(-0.0, dt).bit_length() - 1
        # the largest subnormal: every fraction bit set, exponent zero; +inf: every exponent bit set
        assert v[f"PRISM_FRAC_MASK_{name}"] == _bits(info.smallest_normal - info.smallest_subnormal, dt)
        assert v[f"PRISM_EXP_MASK_{name}"] << v[f"PRISM_FRAC_BITS_{name}"] == _bits(np.inf, dt)
    # BF16 is FP32's top 16 bits
    assert v["PRISM_BIAS_BF16"] == v["PRISM_BIAS_FP32"] and v["PRISM_EXP_MASK_BF16"] == v["PRISM_EXP_MASK_FP32"]
    assert v["PRISM_FRAC_MASK_BF16"] == v["PRISM_FRAC_MASK_FP32"] >> 16 and v["PRISM_SIGN_BIT_BF16"] == 15
    tiny = float(np.finfo(np.float32).smallest_subnormal)              # 0.5 * 2^(1 - shift)
    assert v["PRISM_KULISCH_LSB_SHIFT"] == 1 - math.frexp(tiny)[1] and math.ldexp(tiny, 149) == 1.0
    assert all(v[f"PRISM_KULISCH_W{w}"] == w for w in SF.KULISCH_WIDTHS)


# ---- the kernels write protocol constants by their names, never as literals ----------------------

def _code(text):
    """C source with its comments and string literals (where numbers may be spelt out) blanked,
    line breaks kept so that line numbers stay."""
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\])*"', lambda m: re.sub(r"[^\n]", " ", m.group()), text,
                  flags=re.S)


def _hex(value):
    return rf"\b0[xX]0*{value:X}[uUlL]*\b"


# Any source: a canonical float NaN or infinity, or the Kulisch LSB shift (2^-149 as 149).
FLOAT_SPECIALS = {SF.CANONICAL_NAN[c] for c in SF.FLOAT_LAYOUT} | {SF.POS_INF[c] for c in SF.FLOAT_LAYOUT} | {
    SF.NEG_INF[c] for c in SF.FLOAT_LAYOUT}
EVERYWHERE = [(_hex(v), f"canonical special 0x{v:X}") for v in sorted(FLOAT_SPECIALS)] + [
    (rf"\b{-SF.KULISCH_LSB_EXP}\b", "the Kulisch LSB shift")]
# Sources of the number-format kernels (they include prism_spec.h) also: INT8's saturation patterns
# and the accumulator widths; elsewhere (ecmp.c's byte tables) those are ordinary bytes and numbers.
NUMBER_KERNELS = [(_hex(SF.POS_INF[SF.FMT_INT8]), "INT8 +inf (saturation) 0x7F"),
                  (_hex(SF.NEG_INF[SF.FMT_INT8]), "INT8 NaN / -inf 0x80")] + [
    (rf"\b{w}\b", f"the Kulisch width {w}") for w in SF.KULISCH_WIDTHS]


def protocol_literals(text, number_kernel):
    """(line, what) for every protocol constant written as a literal in C source `text`."""
    code = _code(text)
    found = []
    for pattern, what in EVERYWHERE + (NUMBER_KERNELS if number_kernel else []):
        for m in re.finditer(pattern, code, flags=re.I):
            found.append((code.count("\n", 0, m.start()) + 1, what))
    return sorted(found)


def _kernel_sources():
    folder = os.path.dirname(HEADER)
    paths = sorted(glob.glob(os.path.join(folder, "*.c")) + glob.glob(os.path.join(folder, "*.h")))
    texts = {os.path.basename(p): open(p).read() for p in paths if p != HEADER}
    # a number kernel includes prism_spec.h, itself or through one of our headers that does
    direct = {n for n, t in texts.items() if '#include "prism_spec.h"' in t}
    return {n: (t, n in direct or any(f'#include "{h}"' in t for h in direct)) for n, t in texts.items()}


def test_kernels_write_no_protocol_literal():
    sources = _kernel_sources()
    assert sources["kulisch.c"][1] and sources["kulisch.h"][1] and not sources["ecmp.c"][1]
    found = {name: protocol_literals(text, number) for name, (text, number) in sources.items()}
    assert not any(found.values()), f"use the PRISM_* names of prism_spec.h: {found}"


def test_the_literal_scan_finds_them():
    src = """/* 0x7FC00000u and 149 in a comment are fine */
    static const char *s = "0x7F800000 and 149";
    uint32_t a = 0x7fc00000u;
    int b = x + 149;
    int c = 0x80 | 0x7F;  int d = 1149 + 0x7FC000001;
    // 320 bits
    int w = 320;
    """
    assert protocol_literals(src, number_kernel=False) == [(3, "canonical special 0x7FC00000"),
                                                           (4, "the Kulisch LSB shift")]
    assert [w for _, w in protocol_literals(src, number_kernel=True)] == [
        "canonical special 0x7FC00000", "the Kulisch LSB shift", "INT8 +inf (saturation) 0x7F",
        "INT8 NaN / -inf 0x80", "the Kulisch width 320"]
