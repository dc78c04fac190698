"""Protocol constants shared by the design, the references, the verification code and the tests.

Like a SystemVerilog package: constants only, never algorithms.  `hdl`, `golden`, `cosim` and the
tests import the names from here, so a format code, a header field position or a counter index is
written down once; the design and its references share these numbers but no code, so a golden
model stays independent of the design it checks.  This package imports nothing of the project.

    spec.formats   number format codes and widths, the Kulisch LSB exponent, shift and widths,
                   the canonical NaN and infinity bit patterns
    spec.frames    frame classes, opcodes, policies, reason codes, header field positions, the
                   EXACT value layout, counter indices, limits
    spec.fabric    the collective fabric: leaves, accelerators and uplinks per leaf, the link rate,
                   the flow tuple, the path modes, the efficiency lookup
    spec.cheader   `python -m spec.cheader` prints ckernels/prism_spec.h (the C view of the above)

In HDL import the names themselves (`from spec.formats import FMT_FP32`): MyHDL converts a
module-level integer as a literal, while an attribute (`formats.FMT_FP32`) inside a process
does not convert.
"""
