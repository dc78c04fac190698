"""golden.jit: the project's numba options, and one compilation per argument type."""
import numpy as np

from golden.jit import jit


@jit(cache=False)
def _scaled(x, k):
    return x * k


@jit(cache=False)
def _caller(x):
    # three different constants: numba's own dispatch would compile three copies of _scaled,
    # one per Literal[int] value
    return _scaled(x, 2) + _scaled(x, 3) + _scaled(x, 5)


def test_a_kernel_called_with_constants_compiles_once_per_type():
    assert _caller(np.int64(7)) == 70
    assert len(_scaled.signatures) == 1
    assert _caller(7.0) == 70.0                  # another argument type: one more copy
    assert len(_scaled.signatures) == 2


def test_the_project_options_reach_numba():
    assert _scaled.targetoptions["nogil"] and not _scaled.targetoptions.get("fastmath", False)
    assert _scaled.targetoptions.get("boundscheck") is False
