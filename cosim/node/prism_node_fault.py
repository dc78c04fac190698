"""Test-only: the PRISM node with one deliberately injected fault.

Bit 0 of 32-bit lane FAULT_LANE of every payload beat leaving TX port 0 is
inverted (header beats pass untouched).  For FP32 RESULT groups that lane holds
elements with index i % 16 == FAULT_LANE, so a scoreboard's first-mismatch
report must name the first such element, its range and that lane.  It exists
to prove the debugging path (reports, replay) finds a real fault; it is never
part of a product build.

Ports and parameters: those of `prism_node`, plus
    FAULT_LANE   0 .. 15: the 32-bit lane of TX0 payload beats to corrupt
"""
from myhdl import Signal, always, always_comb, block, intbv

from hdl.common.interface import AxiStream
from hdl.common.wiring import ports_of
from hdl.node.prism_node import prism_node
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY


@block
def prism_node_fault(clk, rst, s_axis_0: AxiStream, s_axis_1: AxiStream, m_axis_0: AxiStream, m_axis_1: AxiStream,
                     counter_select, counter_value, busy,
                     KULISCH_W=KULISCH_WIDTH_DEFAULT, CAPACITY=MAX_CAPACITY, FAULT_LANE=5):
    width = len(m_axis_0.tdata)
    if not 0 <= FAULT_LANE < width // 32:
        raise ValueError(f"prism_node_fault: FAULT_LANE={FAULT_LANE}; a {width}-bit beat has lanes 0..{width // 32 - 1}")
    inner_tdata = Signal(intbv(0)[width:])
    in_payload = Signal(bool(0))
    FLIP = 1 << (32 * FAULT_LANE)   # a plain int at block level converts to a sized literal

    # the node's transmit port 0 with its tdata taken before the fault
    inner_tx0 = AxiStream.wrap(tdata=inner_tdata, tlast=m_axis_0.tlast, tvalid=m_axis_0.tvalid,
                               tready=m_axis_0.tready)
    node = prism_node(**ports_of(prism_node, locals(), m_axis_0=inner_tx0), KULISCH_W=KULISCH_W, CAPACITY=CAPACITY)

    @always(clk.posedge)
    def track():
        if rst:
            in_payload.next = 0
        elif m_axis_0.tvalid and m_axis_0.tready:
            in_payload.next = not m_axis_0.tlast

    @always_comb
    def corrupt():
        if in_payload:
            m_axis_0.tdata.next = inner_tdata ^ FLIP
        else:
            m_axis_0.tdata.next = inner_tdata

    return node, track, corrupt
