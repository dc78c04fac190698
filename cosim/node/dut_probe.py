"""A Verilog node's KULISCH_W, found by running it (`prism regress --dut`, cosim/node/dut.py): one
KULISCH_FIXED operation of one range, whose RESULT header carries the width.  Above the harness
that runs it, as cosim/node/dut.py is below it."""
import numpy as np

from cosim.node.dut import DutError, NodeDut
from cosim.node.node_harness import run_node
from cosim.node.scenarios import Operation, build
from golden.node import protocol as P
from spec.formats import KULISCH_WIDTH_DEFAULT, KULISCH_WIDTHS


def probe_width(dut, backend="batch-icarus"):
    """KULISCH_W of a design built with one width: one KULISCH_FIXED operation of one range,
    whose RESULT header carries the width (docs/protocol.md, "RESULT")."""
    op = Operation(1, 1, "kulisch", "fp32", "fp32", np.zeros((1, 16), dtype=np.uint32), recipients=0b01)
    sc = build([op], seed=1)
    try:
        run = run_node(sc, backend, kulisch_w=KULISCH_WIDTH_DEFAULT, capacity=dut.capacity, dut=dut, max_cycles=20000,
                       read_counters=False)
    except Exception as e:  # noqa: BLE001 - a design that does not compile or run: say so in one line
        raise DutError(f"{dut.label}: the probe run failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}") \
            from e
    for frame in run.tx.get(0, []):
        head = frame.beats[0]
        if P.get_field(head, "class") == P.CLASS_RESULT:
            w = P.get_field(head, "kulisch_w")
            if w in KULISCH_WIDTHS:
                return w
            raise DutError(f"{dut.label}: the probe's RESULT header says KULISCH_W {w}, not 320 or 280: "
                           f"give --width")
    raise DutError(f"{dut.label}: the probe operation (STAGE, COMMIT, one DATA range) gave no RESULT frame on "
                   f"TX port 0 (sent: {sum(len(v) for v in run.tx.values())} frames): give --width, or check the "
                   f"design with `prism replay`")


def resolve_width(dut, backend="batch-icarus"):
    """The NodeDut with its width known where it is fixed: given, a parameter (None: per seed),
    or probed."""
    if dut.width is not None or "KULISCH_W" in dut.parameters:
        return dut
    width = probe_width(dut, backend)
    return NodeDut(dut.sources, dut.top, width, dut.capacity, dut.parameters, dut.plusargs)
