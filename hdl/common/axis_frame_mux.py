"""Two AXI-Streams into one, a whole frame at a time, round-robin between frames.

A receive port of a tree's inner node takes several streams (its children's links, and on
port 0 its CONTROL); the protocol's unit is the frame, so a frame, once begun, has the output
to itself until its last beat.  Between frames the input that was not served last wins when
both offer one, so neither input waits more than one frame of the other.  A tree of these
merges any number of streams.

Ports (widths come from the signals passed in; a bus converts to the ports `<bus>_<field>`):
    clk, rst                  clock; synchronous active-high reset (ResetSignal)
    s_axis_a, s_axis_b        input streams a and b (AxiStream with tlast; tdata as wide as m_axis's)
    m_axis                    the merged stream (AxiStream with tlast; registered: axis_register)

Latency: one cycle (the output register slice); one beat per cycle.
Guarantee: every beat taken leaves once, in order, and the beats of a frame leave together.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv

from hdl.common.axis_register import axis_register
from hdl.common.interface import AxiStream


@block
def axis_frame_mux(clk, rst, s_axis_a: AxiStream, s_axis_b: AxiStream, m_axis: AxiStream):
    width = len(m_axis.tdata)
    # the loop holds buses, not signals: a local bound to a signal would give it its name in the Verilog
    for name, bus in (("s_axis_a", s_axis_a), ("s_axis_b", s_axis_b)):
        if len(bus.tdata) != width:
            raise ValueError(f"axis_frame_mux: {name}_tdata is {len(bus.tdata)} bits, m_axis_tdata {width}; "
                             "they must match")

    in_frame = Signal(bool(0))      # a frame is passing: the grant holds until its last beat
    granted_b = Signal(bool(0))     # the frame passing is input b's
    served_b = Signal(bool(0))      # the last frame that passed was input b's
    pick_b = Signal(bool(0))        # input b has the output this cycle
    out_data = Signal(intbv(0)[width:])
    out_last, out_valid, out_ready = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))

    @always_comb
    def arbitrate():
        if in_frame:
            pick_b.next = granted_b
        else:
            pick_b.next = s_axis_b.tvalid and (not s_axis_a.tvalid or not served_b)

    @always_comb
    def select():
        if pick_b:
            out_data.next = s_axis_b.tdata
            out_last.next = s_axis_b.tlast
            out_valid.next = s_axis_b.tvalid
        else:
            out_data.next = s_axis_a.tdata
            out_last.next = s_axis_a.tlast
            out_valid.next = s_axis_a.tvalid
        s_axis_a.tready.next = out_ready and not pick_b
        s_axis_b.tready.next = out_ready and pick_b

    @always_seq(clk.posedge, reset=rst)
    def track():
        if out_valid and out_ready:
            if out_last:
                in_frame.next = 0
                served_b.next = pick_b
            else:
                in_frame.next = 1
                granted_b.next = pick_b

    out_slice = axis_register(clk=clk, rst=rst,
                              s_axis=AxiStream.wrap(tdata=out_data, tlast=out_last, tvalid=out_valid, tready=out_ready),
                              m_axis=m_axis)
    return arbitrate, select, track, out_slice
