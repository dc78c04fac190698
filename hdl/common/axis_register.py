"""AXI-Stream register slice (skid buffer): full throughput, registered outputs.

Cuts the combinational ready/valid path between two stream stages, as every
pipeline boundary in the node needs, while still moving one beat per cycle.

Ports (widths come from the signals passed in):
    clk, rst          clock; synchronous active-high reset (ResetSignal)
    s_axis_tdata      input beat data (any width)
    s_axis_tlast      input end-of-frame marker
    s_axis_tvalid     input beat present
    s_axis_tready     out: slice can take an input beat this cycle
    m_axis_tdata      output beat data (width of s_axis_tdata)
    m_axis_tlast      output end-of-frame marker
    m_axis_tvalid     out: output beat present
    m_axis_tready     downstream takes the output beat this cycle

Guarantee: every beat accepted (tvalid & tready on s_axis) leaves once, in order.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv


@block
def axis_register(clk, rst, s_axis_tdata, s_axis_tlast, s_axis_tvalid, s_axis_tready,
                  m_axis_tdata, m_axis_tlast, m_axis_tvalid, m_axis_tready):
    if len(m_axis_tdata) != len(s_axis_tdata):
        raise ValueError(f"axis_register: m_axis_tdata is {len(m_axis_tdata)} bits, "
                         f"s_axis_tdata {len(s_axis_tdata)}; they must match")
    width = len(s_axis_tdata)
    skid_data = Signal(intbv(0)[width:])
    skid_last = Signal(bool(0))
    skid_valid = Signal(bool(0))
    out_valid = Signal(bool(0))
    running = Signal(bool(0))  # low in reset: no beat is taken while the slice is being reset

    @always_seq(clk.posedge, reset=rst)
    def step():
        running.next = 1
        # An input beat is taken when s_axis_tready is high: running and the skid buffer empty.
        if out_valid and not m_axis_tready:
            # Output stalled: park an arriving beat in the skid buffer.
            if s_axis_tvalid and running and not skid_valid:
                skid_data.next = s_axis_tdata
                skid_last.next = s_axis_tlast
                skid_valid.next = 1
        else:
            if skid_valid:
                m_axis_tdata.next = skid_data
                m_axis_tlast.next = skid_last
                out_valid.next = 1
                skid_valid.next = 0
            elif s_axis_tvalid and running:
                m_axis_tdata.next = s_axis_tdata
                m_axis_tlast.next = s_axis_tlast
                out_valid.next = 1
            else:
                out_valid.next = 0

    @always_comb
    def outputs():
        s_axis_tready.next = running and not skid_valid
        m_axis_tvalid.next = out_valid

    return step, outputs
