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


def jit(*args, **overrides):
    """`@jit` or `@jit(parallel=True, ...)`: numba.njit with the project's options."""
    opts = {**JIT_OPTIONS, **overrides}
    if args and callable(args[0]) and len(args) == 1 and not overrides:
        return njit(**opts)(args[0])
    return njit(*args, **opts)
