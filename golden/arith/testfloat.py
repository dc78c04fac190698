"""Reader for Berkeley TestFloat 3 vector files (`testfloat_gen` output, gzip).

The vectors the tests use ship with the project in `tests/data/testfloat` (see
the README there for how they were generated).  The environment variable
PRISM_TESTVECTORS names another directory of such files to use instead.
"""
import gzip
import os

ENV_VAR = "PRISM_TESTVECTORS"


def testfloat_dir():
    d = os.environ.get(ENV_VAR)
    if d:
        return d
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "tests", "data", "testfloat")


def vector_path(name):
    """Path of e.g. "f32_add.level1.rne" (".txt.gz" added); FileNotFoundError
    with the searched location if absent."""
    path = os.path.join(testfloat_dir(), name + ".txt.gz")
    if not os.path.exists(path):
        raise FileNotFoundError(f"TestFloat vectors {name!r} not found at {path} (set {ENV_VAR})")
    return path


def read_vectors(name, limit=None):
    """List of tuples of ints: operands..., expected result, exception flags."""
    out = []
    with gzip.open(vector_path(name), "rt") as f:
        for i, line in enumerate(f):
            if limit is not None and i >= limit:
                break
            out.append(tuple(int(x, 16) for x in line.split()))
    return out
