"""One reduction API over three independent implementations.

    reduce(policy, in_fmt, out_fmt, data, impl="python", width=320) -> ReduceResult

- policy: "kulisch" (exact accumulation, rounded once) or "fp32-arrival"
  (one IEEE binary32 add per contribution, in row = admission order).
- in_fmt: "int8" | "fp16" | "bf16" | "fp32"; data: C x E array of raw bit
  patterns (uint8 / uint16 / uint32 by format; rows are contributions,
  columns are elements).
- out_fmt: "exact" (kulisch only) | "fp32" | "bf16" | "fp16" | "int8" | "auto".
- impl: "python" (the deliberately naive reference: Python ints and
  Fractions, one element at a time), "numba", "c".  Each implementation does
  its own accumulation AND its own rounding, so comparing them checks both.
- width: Kulisch register width, 320 or 280.

ReduceResult fields:
- bits: exact -> uint64 (E, 5), limb 0 least significant, the W-bit state
  sign-extended (an overflowed sum shows the state modulo 2^W);
  int8/fp16/bf16/fp32 -> uint8/uint16/uint16/uint32 (E,);
  auto -> uint32 (E,) holding each element's bits in its tile's format.
- flags: uint8 (E,): bit0 NaN seen, bit1 +inf seen, bit2 -inf seen,
  bit3 overflow (kulisch; always 0 for fp32-arrival).
- wraps: int64 (E,) net wrap count (kulisch; zeros for fp32-arrival).
- auto_formats: uint8 per 16-element tile, format codes int8=0 fp16=1
  bf16=2 fp32=3 (out_fmt == "auto"; else None).
"""
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from golden.arith.formats import FORMAT_CODE, FORMATS, WIDTH_BITS
from spec.formats import KULISCH_WIDTH_DEFAULT, KULISCH_WIDTHS
from spec.frames import POLICY_NAMES

POLICIES = tuple(POLICY_NAMES.values())     # kulisch, fp32-arrival
OUT_FORMATS = ("exact", "fp32", "bf16", "fp16", "int8", "auto")
IMPLS = ("python", "numba", "c")
LIMBS = 5

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32}


@dataclass
class ReduceResult:
    policy: str
    in_fmt: str
    out_fmt: str
    impl: str
    width: int
    bits: np.ndarray
    flags: np.ndarray
    wraps: np.ndarray
    auto_formats: Optional[np.ndarray] = None
    extra: dict = field(default_factory=dict)

    def same_as(self, other):
        """Bit-identical results (bits, flags, wraps, auto formats)."""
        return (self.bits.dtype == other.bits.dtype and np.array_equal(self.bits, other.bits)
                and np.array_equal(self.flags, other.flags) and np.array_equal(self.wraps, other.wraps)
                and ((self.auto_formats is None and other.auto_formats is None)
                     or (self.auto_formats is not None and other.auto_formats is not None
                         and np.array_equal(self.auto_formats, other.auto_formats))))


def as_bit_patterns(in_fmt, data):
    """The C x E array as the format's unsigned bit-pattern dtype.  Accepts the
    unsigned pattern dtype, or a same-width native dtype reinterpreted as bits
    (int8 for int8, float16 for fp16, float32/int32 for fp32); bf16 only as
    uint16.  ValueError otherwise."""
    if in_fmt not in FORMAT_CODE:
        raise ValueError(f"unknown input format {in_fmt!r}; expected one of {', '.join(FORMATS)}")
    a = np.asarray(data)
    want = np.dtype(_UINT[WIDTH_BITS[in_fmt]])
    native = {"int8": ("int8",), "fp16": ("float16", "int16"), "bf16": (), "fp32": ("float32", "int32")}[in_fmt]
    if a.dtype != want and a.dtype.name not in native:
        raise ValueError(f"{in_fmt} input must be {want.name}" + (f" (or {'/'.join(native)})" if native else "")
                         + f", got {a.dtype.name}")
    if a.ndim != 2:
        raise ValueError(f"input must be a 2-d C x E array (contributions x elements), got shape {a.shape}")
    return np.ascontiguousarray(a).view(want)


def out_dtype(out_fmt):
    return np.uint32 if out_fmt == "auto" else _UINT[WIDTH_BITS[out_fmt]]


def check_arguments(policy, out_fmt, width):
    """ValueError for a policy, result format or Kulisch width a reduction cannot have (shared
    with the hardware reduce, cosim/arith/slice_reduce.py)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")
    if out_fmt not in OUT_FORMATS:
        raise ValueError(f"unknown output format {out_fmt!r}; expected one of {', '.join(OUT_FORMATS)}")
    if width not in KULISCH_WIDTHS:
        raise ValueError(f"Kulisch width must be one of {KULISCH_WIDTHS}, got {width!r}")
    if policy == "fp32-arrival" and out_fmt == "exact":
        raise ValueError("out format 'exact' needs the kulisch policy (fp32-arrival has no exact state)")


def _validate(policy, in_fmt, out_fmt, impl, width):
    if impl not in IMPLS:
        raise ValueError(f"unknown implementation {impl!r}; expected one of {', '.join(IMPLS)}")
    check_arguments(policy, out_fmt, width)


def reduce(policy, in_fmt, out_fmt, data, impl="python", width=KULISCH_WIDTH_DEFAULT):
    """Reduce the rows of a C x E array of raw patterns; see the module docstring."""
    _validate(policy, in_fmt, out_fmt, impl, width)
    a = as_bit_patterns(in_fmt, data)
    if policy == "fp32-arrival" and a.shape[0] == 0:
        raise ValueError("fp32-arrival needs at least one contribution (row) per element")
    fn = {"python": _reduce_python, "numba": _reduce_numba, "c": _reduce_c}[impl]
    bits, flags, wraps, auto = fn(policy, in_fmt, out_fmt, a, width)
    return ReduceResult(policy, in_fmt, out_fmt, impl, width, bits, flags, wraps, auto)


# ---- python: the naive reference ------------------------------------------------

def _reduce_python(policy, in_fmt, out_fmt, a, width):
    from golden.arith.auto import auto_encode
    from golden.arith.fp32_arith import fp32_arrival_fold
    from golden.arith.kulisch import KulischAccumulator
    rows, cols = a.shape
    columns = a.T.tolist()
    flags = np.zeros(cols, np.uint8)
    wraps = np.zeros(cols, np.int64)
    if policy == "kulisch":
        accs = []
        for e, col in enumerate(columns):
            acc = KulischAccumulator(width)
            for b in col:
                acc.add(in_fmt, b)
            accs.append(acc)
            flags[e] = acc.flags
            wraps[e] = acc.wraps
        if out_fmt == "exact":
            return np.array([acc.exact_limbs() for acc in accs], np.uint64).reshape(cols, LIMBS), flags, wraps, None
        fp32 = [acc.result("fp32") for acc in accs] if out_fmt == "auto" else None
        if out_fmt != "auto":
            return np.array([acc.result(out_fmt) for acc in accs], out_dtype(out_fmt)), flags, wraps, None
    else:
        fp32 = [fp32_arrival_fold(in_fmt, col, "fp32") for col in columns]
        if out_fmt != "auto":
            from golden.arith.formats import fp32_to_format
            return np.array([fp32_to_format(out_fmt, x) for x in fp32], out_dtype(out_fmt)), flags, wraps, None
    bits, codes = auto_encode(fp32)
    return np.array(bits, np.uint32), flags, wraps, np.array(codes, np.uint8)


# ---- numba / C: same structure, different engines ------------------------------------

def _reduce_engine(k_mod, f_mod, policy, in_fmt, out_fmt, a, width):
    cols = a.shape[1]
    if policy == "kulisch":
        if out_fmt == "exact":
            limbs, wraps, flags = k_mod.kulisch_reduce(in_fmt, a, width)
            return limbs, flags, wraps, None
        if out_fmt != "auto":
            bits, wraps, flags = k_mod.kulisch_reduce_round(in_fmt, out_fmt, a, width)
            return bits.astype(out_dtype(out_fmt), copy=False), flags, wraps, None
        fp32, wraps, flags = k_mod.kulisch_reduce_round(in_fmt, "fp32", a, width)
    else:
        flags = np.zeros(cols, np.uint8)
        wraps = np.zeros(cols, np.int64)
        fp32 = f_mod.fp32_arrival_reduce(in_fmt, a)
        if out_fmt != "auto":
            return f_mod.fp32_to_format(out_fmt, fp32).astype(out_dtype(out_fmt)), flags, wraps, None
    codes, bits = f_mod.auto_classify(fp32)
    return bits, flags, wraps, codes


def _reduce_numba(policy, in_fmt, out_fmt, a, width):
    from golden.arith import fp32_numba, kulisch_numba
    return _reduce_engine(kulisch_numba, fp32_numba, policy, in_fmt, out_fmt, a, width)


def _reduce_c(policy, in_fmt, out_fmt, a, width):
    from golden.arith import kulisch_c as ck
    return _reduce_engine(ck, ck, policy, in_fmt, out_fmt, a, width)
