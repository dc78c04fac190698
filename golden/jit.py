"""Shared numba options: every JIT-compiled golden kernel uses `jit` from here,
so the project compiles with one set of flags (no fastmath: bit-exactness
forbids re-association; cached so the test suite pays compilation once)."""
from numba import njit

JIT_OPTIONS = dict(nogil=True, cache=True, fastmath=False, error_model="numpy", boundscheck=False)


def jit(*args, **overrides):
    """`@jit` or `@jit(parallel=True, ...)`: numba.njit with the project's options."""
    opts = {**JIT_OPTIONS, **overrides}
    if args and callable(args[0]) and len(args) == 1 and not overrides:
        return njit(**opts)(args[0])
    return njit(*args, **opts)
