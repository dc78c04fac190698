"""ckernels/prism_spec.h is generated from spec/: the committed file must equal the generator's
output, and a C compiler must read the same values back."""
import os
import shutil
import subprocess

import pytest

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


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_c_sees_the_python_values(tmp_path):
    names = {"PRISM_FMT_FP32": SF.FMT_FP32, "PRISM_FMT_AUTO": SF.FMT_AUTO,
             "PRISM_KULISCH_LSB_EXP": SF.KULISCH_LSB_EXP, "PRISM_NAN_FP32": SF.NAN_FP32,
             "PRISM_NEG_INF_BF16": SF.NEG_INF_BF16, "PRISM_NAN_FP16": SF.NAN_FP16,
             "PRISM_POS_INF_INT8": SF.INF_INT8, "PRISM_FLAG_OVERFLOW": S.FLAG_OVERFLOW}
    src = tmp_path / "probe.c"
    src.write_text('#include <stdio.h>\n#include "prism_spec.h"\nint main(void) {\n' + "".join(
        f'    printf("%lld\\n", (long long)({n}));\n' for n in names) + "    return 0;\n}\n")
    exe = tmp_path / "probe"
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Werror", "-I", os.path.dirname(HEADER), str(src), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    assert [int(x) for x in out] == list(names.values())
