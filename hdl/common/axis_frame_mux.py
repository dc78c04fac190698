"""Two AXI-Streams into one, a whole frame at a time, round-robin between frames.

A receive port of a tree's inner node takes several streams (its children's links, and on
port 0 its CONTROL); the protocol's unit is the frame, so a frame, once begun, has the output
to itself until its last beat.  Between frames the input that was not served last wins when
both offer one, so neither input waits more than one frame of the other.  A tree of these
merges any number of streams.

Ports (widths come from the signals passed in):
    clk, rst                  clock; synchronous active-high reset (ResetSignal)
    s_axis_a_tdata/tvalid     input a: beat data, beat present
    s_axis_a_tready           out: input a's beat is taken
    s_axis_a_tlast            input a: end of frame
    s_axis_b_*                input b, likewise
    m_axis_tdata/tvalid       out: the merged stream (registered: axis_register)
    m_axis_tready             downstream takes the beat
    m_axis_tlast              out: end of frame

Latency: one cycle (the output register slice); one beat per cycle.
Guarantee: every beat taken leaves once, in order, and the beats of a frame leave together.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv

from hdl.common.axis_register import axis_register


@block
def axis_frame_mux(clk, rst, s_axis_a_tdata, s_axis_a_tvalid, s_axis_a_tready, s_axis_a_tlast,
                   s_axis_b_tdata, s_axis_b_tvalid, s_axis_b_tready, s_axis_b_tlast,
                   m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast):
    width = len(m_axis_tdata)
    for name, sig in (("s_axis_a_tdata", s_axis_a_tdata), ("s_axis_b_tdata", s_axis_b_tdata)):
        if len(sig) != width:
            raise ValueError(f"axis_frame_mux: {name} is {len(sig)} bits, m_axis_tdata {width}; they must match")

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
            pick_b.next = s_axis_b_tvalid and (not s_axis_a_tvalid or not served_b)

    @always_comb
    def select():
        if pick_b:
            out_data.next = s_axis_b_tdata
            out_last.next = s_axis_b_tlast
            out_valid.next = s_axis_b_tvalid
        else:
            out_data.next = s_axis_a_tdata
            out_last.next = s_axis_a_tlast
            out_valid.next = s_axis_a_tvalid
        s_axis_a_tready.next = out_ready and not pick_b
        s_axis_b_tready.next = out_ready and pick_b

    @always_seq(clk.posedge, reset=rst)
    def track():
        if out_valid and out_ready:
            if out_last:
                in_frame.next = 0
                served_b.next = pick_b
            else:
                in_frame.next = 1
                granted_b.next = pick_b

    out_slice = axis_register(clk=clk, rst=rst, s_axis_tdata=out_data, s_axis_tlast=out_last,
                              s_axis_tvalid=out_valid, s_axis_tready=out_ready, m_axis_tdata=m_axis_tdata,
                              m_axis_tlast=m_axis_tlast, m_axis_tvalid=m_axis_tvalid, m_axis_tready=m_axis_tready)
    return arbitrate, select, track, out_slice
