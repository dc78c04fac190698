"""AXI-Stream register slice (skid buffer): full throughput, registered outputs.

Cuts the combinational ready/valid path between two stream stages, as every
pipeline boundary in the node needs, while still moving one beat per cycle.

Ports (widths come from the signals passed in: tdata of any width, the same on both
streams; a bus converts to the ports `<bus>_<field>`: s_axis_tdata, s_axis_tlast,
s_axis_tvalid, s_axis_tready, and m_axis_... likewise):
    clk, rst          clock; synchronous active-high reset (ResetSignal)
    s_axis            input stream (AxiStream with tlast)
    m_axis            output stream (AxiStream with tlast)

Guarantee: every beat accepted (tvalid & tready on s_axis) leaves once, in order.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv

from hdl.common.interface import AxiStream


@block
def axis_register(clk, rst, s_axis: AxiStream, m_axis: AxiStream):
    if len(m_axis.tdata) != len(s_axis.tdata):
        raise ValueError(f"axis_register: m_axis_tdata is {len(m_axis.tdata)} bits, "
                         f"s_axis_tdata {len(s_axis.tdata)}; they must match")
    width = len(s_axis.tdata)
    skid_data = Signal(intbv(0)[width:])
    skid_last = Signal(bool(0))
    skid_valid = Signal(bool(0))
    out_valid = Signal(bool(0))
    running = Signal(bool(0))  # low in reset: no beat is taken while the slice is being reset

    @always_seq(clk.posedge, reset=rst)
    def step():
        running.next = 1
        # An input beat is taken when s_axis_tready is high: running and the skid buffer empty.
        if out_valid and not m_axis.tready:
            # Output stalled: park an arriving beat in the skid buffer.
            if s_axis.tvalid and running and not skid_valid:
                skid_data.next = s_axis.tdata
                skid_last.next = s_axis.tlast
                skid_valid.next = 1
        else:
            if skid_valid:
                m_axis.tdata.next = skid_data
                m_axis.tlast.next = skid_last
                out_valid.next = 1
                skid_valid.next = 0
            elif s_axis.tvalid and running:
                m_axis.tdata.next = s_axis.tdata
                m_axis.tlast.next = s_axis.tlast
                out_valid.next = 1
            else:
                out_valid.next = 0

    @always_comb
    def outputs():
        s_axis.tready.next = running and not skid_valid
        m_axis.tvalid.next = out_valid

    return step, outputs
