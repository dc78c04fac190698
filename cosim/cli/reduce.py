"""`prism reduce`: reduce a C x E array of raw bit patterns over its rows with
one of the golden implementations (python, numba, c) or through the HDL
reduction slice (myhdl, icarus, or myhdl+icarus: the MyHDL run with its Verilog
replayed in batched Icarus and compared on every cycle), and save the result bits.

Files (see docs/arithmetic.md):
- INPUT.npy: C x E (contributions x elements) raw patterns: uint8 (int8),
  uint16 (fp16, bf16), uint32 (fp32); native int8 / float16 / float32 arrays
  are accepted and reinterpreted as bits (bf16 only as uint16).
- OUT.npy: result patterns.  exact: uint64 (E, 5), limb 0 least significant,
  the W-bit state sign-extended; int8/fp16/bf16/fp32: uint8/uint16/uint16/
  uint32 (E,); auto: uint32 (E,), each element's bits in its tile's format.
- <OUT stem>.flags.npy (kulisch): uint8 (E,) bit0 NaN, bit1 +inf, bit2 -inf,
  bit3 overflow.  <OUT stem>.wraps.npy (kulisch exact): int64 (E,) net wrap
  count (true sum = state + wraps * 2^W).  <OUT stem>.formats.npy (auto):
  uint8 per 16-element tile, int8=0 fp16=1 bf16=2 fp32=3.
"""
import hashlib
import os
import time

from cosim.cli import UsageError
from spec.formats import INPUT_FORMAT_CODES, KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY, POLICY_NAMES

HW_MAX_ELEMENTS = MAX_CAPACITY  # the slice's striped result store holds 4096 values
HW_IMPLS = ("myhdl", "icarus", "myhdl+icarus")   # myhdl+icarus: the MyHDL run, its Verilog replayed and compared


def add_parser(subparsers):
    p = subparsers.add_parser(
        "reduce", help="reduce a C x E array of bit patterns (golden models or the HDL slice)",
        description="Reduce the rows of INPUT.npy (C contributions x E elements, raw bit patterns) "
                    "and save the result bit patterns to OUT.npy.")
    p.add_argument("--policy", required=True, choices=tuple(POLICY_NAMES.values()))
    p.add_argument("--in-format", required=True, choices=tuple(INPUT_FORMAT_CODES))
    p.add_argument("--out-format", required=True, choices=("exact", "fp32", "bf16", "fp16", "int8", "auto"))
    p.add_argument("--impl", default="c", choices=("python", "numba", "c") + HW_IMPLS,
                   help="golden implementation, or the HDL slice on a simulator back end (default: c)")
    p.add_argument("--width", type=int, default=KULISCH_WIDTH_DEFAULT, choices=KULISCH_WIDTH_CHOICES,
                   help=f"Kulisch width in bits (default {KULISCH_WIDTH_DEFAULT})")
    p.add_argument("--order", default="sequential", choices=("sequential", "interleaved"),
                   help="how rows are fed to the HDL slice (myhdl/icarus); the golden models take rows "
                        "as the admission order")
    p.add_argument("input", metavar="INPUT.npy")
    p.add_argument("-o", "--output", required=True, metavar="OUT.npy")
    return p


def side_file(out_path, tag):
    stem = out_path[:-4] if out_path.endswith(".npy") else out_path
    return f"{stem}.{tag}.npy"


def load_array(path):
    import numpy as np
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise UsageError(f"cannot read {path}: no such file")
    except (OSError, ValueError, EOFError) as e:
        raise UsageError(f"cannot read {path} as a .npy array: {str(e).splitlines()[0] if str(e) else type(e).__name__}")


def save_array(path, arr):
    import numpy as np
    try:
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        np.save(path, arr)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror or e}")


def reduction_files(args):
    """(OUT path with .npy, the C x E bit patterns of IN) of `prism reduce` and `prism tree`, or a
    UsageError: a policy that cannot give the output format, a file that is no plain numeric array."""
    import numpy as np

    from golden.reduce import as_bit_patterns
    if args.policy == "fp32-arrival" and args.out_format == "exact":
        raise UsageError("--out-format exact needs --policy kulisch (fp32-arrival keeps no exact state)")
    out_path = args.output if args.output.endswith(".npy") else args.output + ".npy"
    raw = load_array(args.input)
    if not isinstance(raw, np.ndarray) or raw.dtype.hasobject or raw.dtype.names:
        raise UsageError(f"{args.input}: expected a plain numeric array")
    try:
        return out_path, as_bit_patterns(args.in_format, raw)
    except ValueError as e:
        raise UsageError(f"{args.input}: {e}") from None


def run(args):
    import numpy as np

    from golden.reduce import reduce  # deferred: numpy and the golden models load when it runs

    out_path, data = reduction_files(args)
    rows, cols = data.shape
    if args.policy == "fp32-arrival" and rows == 0:
        raise UsageError(f"{args.input}: fp32-arrival needs at least one contribution (row)")

    t0 = time.perf_counter()
    if args.impl in HW_IMPLS:
        if cols > HW_MAX_ELEMENTS:
            raise UsageError(f"{args.input}: E = {cols} elements exceeds the slice's {HW_MAX_ELEMENTS}-value "
                             f"result store (--impl {args.impl})")
        try:  # deferred: the simulators load only for the hardware implementations
            from cosim.arith.slice_reduce import reduce_through_hardware
        except ModuleNotFoundError as e:
            if e.name != "cosim.arith.slice_reduce":
                raise
            raise UsageError("--impl myhdl/icarus/myhdl+icarus needs the HDL slice (cosim/arith/slice_reduce.py)")
        try:
            result = reduce_through_hardware(args.policy, args.in_format, args.out_format, data,
                                             args.width, args.impl, args.order)
        except ValueError as e:
            raise UsageError(str(e).splitlines()[0])
    else:
        try:
            result = reduce(args.policy, args.in_format, args.out_format, data, impl=args.impl, width=args.width)
        except ValueError as e:
            raise UsageError(str(e).splitlines()[0])
    elapsed = time.perf_counter() - t0

    bits = np.ascontiguousarray(result.bits)
    save_array(out_path, bits)
    side = []
    if args.policy == "kulisch":
        save_array(side_file(out_path, "flags"), np.ascontiguousarray(result.flags, np.uint8))
        side.append("flags")
        if args.out_format == "exact":
            save_array(side_file(out_path, "wraps"), np.ascontiguousarray(result.wraps, np.int64))
            side.append("wraps")
    if args.out_format == "auto":
        save_array(side_file(out_path, "formats"), np.ascontiguousarray(result.auto_formats, np.uint8))
        side.append("formats")

    digest = hashlib.sha256(bits.tobytes()).hexdigest()[:16]
    flags = np.asarray(result.flags)
    counts = " ".join(f"{name}={int(np.count_nonzero(flags & (1 << i)))}"
                      for i, name in enumerate(("nan", "+inf", "-inf", "overflow")) if np.any(flags & (1 << i)))
    width = f" W={args.width}" if args.policy == "kulisch" else ""
    print(f"reduce {args.policy}{width} {args.in_format}->{args.out_format} impl={args.impl} "
          f"C×E={rows}x{cols} {elapsed:.3f}s sha256={digest}"
          + (f" {counts}" if counts else "") + f" -> {out_path}" + (f" (+{','.join(side)})" if side else ""))
    return 0
