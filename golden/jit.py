"""Shared numba options: every JIT-compiled golden kernel uses `jit` from here,
so the project compiles with one set of flags (no fastmath: bit-exactness
forbids re-association; cached so the test suite pays compilation once).

Vector width: LLVM tunes recent Intel server cores to auto-vectorise 256 bits
wide even where AVX-512 is there; the golden kernels' element-wise loops
(Kulisch level sums, bounds, limb exports) run up to twice as fast 512 bits
wide, so on an AVX-512 host the compile target drops that preference (the
user's NUMBA_CPU_FEATURES, when set, wins).  Vector width never changes a
result: without fastmath every lane does the scalar operations, in order."""
import os

from numba import config, njit


def _prefer_full_width_vectors():
    if os.environ.get("NUMBA_CPU_FEATURES") or config.CPU_FEATURES is not None:
        return
    try:
        from numba.core.codegen import get_host_cpu_features
        features = get_host_cpu_features()
    except Exception:      # pragma: no cover - an LLVM without host introspection
        return
    if "+avx512f" in features.split(","):
        config.CPU_FEATURES = features + ",-prefer-256-bit"


_prefer_full_width_vectors()

JIT_OPTIONS = dict(nogil=True, cache=True, fastmath=False, error_model="numpy", boundscheck=False)


def _one_compilation_per_type(dispatcher):
    """Called from another kernel with a constant argument, a numba dispatcher compiles
    a copy specialised on that constant's value (Literal[int](0), Literal[int](64), ...),
    and every distinct constant a caller passes compiles the whole function again.
    Measured on the Kulisch kernels: 12 copies of the chunk kernel, 15 of a two-line
    helper, about 90 s of compilation per input type.  Typing every call with the
    arguments' plain types compiles each function once per type; LLVM still folds
    the constants where it inlines.  (Functions marked inline="always" are inlined
    by numba itself and never dispatch.)"""
    from numba.core import types

    typed = dispatcher.get_call_template

    def get_call_template(args, kws):
        return typed(tuple(types.unliteral(a) for a in args),
                     {k: types.unliteral(v) for k, v in kws.items()})
    dispatcher.get_call_template = get_call_template
    return dispatcher


def jit(*args, **overrides):
    """`@jit` or `@jit(parallel=True, ...)`: numba.njit with the project's options."""
    opts = {**JIT_OPTIONS, **overrides}
    if args and callable(args[0]) and len(args) == 1 and not overrides:
        return _one_compilation_per_type(njit(**opts)(args[0]))
    if args and callable(args[0]):
        return _one_compilation_per_type(njit(*args, **opts))
    return lambda f: _one_compilation_per_type(njit(*args, **opts)(f))
