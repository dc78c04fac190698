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

from hdl.common.wiring import ports_of
from hdl.node.prism_node import prism_node
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY


@block
def prism_node_fault(clk, rst,
                     s_axis_0_tdata, s_axis_0_tvalid, s_axis_0_tready, s_axis_0_tlast,
                     s_axis_1_tdata, s_axis_1_tvalid, s_axis_1_tready, s_axis_1_tlast,
                     m_axis_0_tdata, m_axis_0_tvalid, m_axis_0_tready, m_axis_0_tlast,
                     m_axis_1_tdata, m_axis_1_tvalid, m_axis_1_tready, m_axis_1_tlast,
                     counter_select, counter_value, busy,
                     KULISCH_W=KULISCH_WIDTH_DEFAULT, CAPACITY=MAX_CAPACITY, FAULT_LANE=5):
    width = len(m_axis_0_tdata)
    if not 0 <= FAULT_LANE < width // 32:
        raise ValueError(f"prism_node_fault: FAULT_LANE={FAULT_LANE}; a {width}-bit beat has lanes 0..{width // 32 - 1}")
    inner_tdata = Signal(intbv(0)[width:])
    in_payload = Signal(bool(0))
    FLIP = 1 << (32 * FAULT_LANE)   # a plain int at block level converts to a sized literal

    node = prism_node(**ports_of(prism_node, locals(), m_axis_0_tdata=inner_tdata),
                      KULISCH_W=KULISCH_W, CAPACITY=CAPACITY)

    @always(clk.posedge)
    def track():
        if rst:
            in_payload.next = 0
        elif m_axis_0_tvalid and m_axis_0_tready:
            in_payload.next = not m_axis_0_tlast

    @always_comb
    def corrupt():
        if in_payload:
            m_axis_0_tdata.next = inner_tdata ^ FLIP
        else:
            m_axis_0_tdata.next = inner_tdata

    return node, track, corrupt
