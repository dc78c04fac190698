"""A reduction tree's link: a child node's RESULT frames become DATA frames for its parent.

A RESULT frame of one NumberGroup is, beat for beat, the DATA frame that carries the same
elements (docs/protocol.md, "EXACT input": "A child's EXACT RESULT group can be sent on as
DATA beat for beat; only the header changes"; an FP32 group is packed as FP32 DATA is).  The
link rewrites the header and passes the payload through:

    RESULT header                          DATA header sent on
    class 3                                class 2 (DATA), opcode 0
    op_id, generation                      the same: one collective has one (op_id, generation)
                                           across its tree
    group 0's format                       data format
    offset, element count                  the same
    groups, KULISCH_W, group descriptors   not sent (reserved bits of DATA are sent as 0)
                                           contributor = CONTRIBUTOR, the child's place at its parent

Any other frame (a RESULT of several groups, which an AUTO result may be; a group format
DATA cannot carry; a response; anything that is not RESULT) is consumed whole and counted in
`dropped`, never sent on: a parent never sees half a frame or a frame it would misread.

Ports (widths come from the signals; the beats are 512 bits; a bus converts to the ports
`<bus>_<field>`):
    clk, rst             clock; synchronous active-high reset (ResetSignal)
    s_axis               the child's transmit port, its RESULT frames (AxiStream with tlast)
    m_axis               the DATA frames to the parent, or to a frame multiplexer in front of it
                         (AxiStream with tlast; registered: axis_register)
    dropped              out: frames consumed and not sent on, counted modulo 2^len(dropped)

Parameters:
    CONTRIBUTOR   the child's contributor id at its parent, 0 .. MAX_CONTRIBUTORS - 1

Latency: one cycle (the output register slice); one beat per cycle.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv, modbv

from hdl.common.axis_register import axis_register
from hdl.common.interface import AxiStream
from spec.formats import DATA_FORMATS
from spec.frames import (BEAT_BITS, CLASS_DATA, CLASS_RESULT, F_CLASS_END, F_CLASS_LSB, F_CONTRIBUTOR_END,
                         F_CONTRIBUTOR_LSB, F_DATA_FORMAT_END, F_DATA_FORMAT_LSB, F_GENERATION_END,
                         F_GROUPS_END, F_GROUPS_LSB, F_N_END, F_N_LSB, F_OFFSET_END, F_OFFSET_LSB, F_OP_ID_LSB,
                         GROUP_DESC_LSB, GROUP_FORMAT_BITS, MAX_CONTRIBUTORS)

# the formats a DATA frame carries (docs/protocol.md, "DATA"): the element formats and EXACT
LAST_DATA_FORMAT = max(DATA_FORMATS)
if sorted(DATA_FORMATS) != list(range(LAST_DATA_FORMAT + 1)):
    raise ValueError("prism_tree_link: the DATA formats must be the codes 0 .. N (one comparison tells them)")
GROUP0_FORMAT_END = GROUP_DESC_LSB + GROUP_FORMAT_BITS


@block
def prism_tree_link(clk, rst, s_axis: AxiStream, m_axis: AxiStream, dropped, CONTRIBUTOR=0):
    if not 0 <= CONTRIBUTOR < MAX_CONTRIBUTORS:
        raise ValueError(f"prism_tree_link: CONTRIBUTOR={CONTRIBUTOR}; a parent takes contributors "
                         f"0 .. {MAX_CONTRIBUTORS - 1}")
    # the loop holds buses, not signals: a local bound to a signal would give it its name in the Verilog
    for name, bus in (("s_axis", s_axis), ("m_axis", m_axis)):
        if len(bus.tdata) != BEAT_BITS:
            raise ValueError(f"prism_tree_link: {name}_tdata is {len(bus.tdata)} bits; the protocol's beats are "
                             f"{BEAT_BITS}")
    if len(dropped) < 1:
        raise ValueError("prism_tree_link: dropped must be a counter of at least one bit")
    count_bits = len(dropped)

    in_frame = Signal(bool(0))      # a frame's header has been taken and its last beat not yet
    forwarding = Signal(bool(0))    # the frame in progress is sent on (else consumed and counted)
    running = Signal(bool(0))       # low in reset: no beat is taken while the link is being reset
    header_ok = Signal(bool(0))     # the beat offered now is a header the parent can take as DATA
    passing = Signal(bool(0))       # the beat offered now goes to the parent
    out_data = Signal(intbv(0)[BEAT_BITS:])
    out_valid, out_ready = Signal(bool(0)), Signal(bool(0))

    @always_comb
    def classify():
        header_ok.next = (s_axis.tdata[F_CLASS_END:F_CLASS_LSB] == CLASS_RESULT
                          and s_axis.tdata[F_GROUPS_END:F_GROUPS_LSB] == 1
                          and s_axis.tdata[GROUP0_FORMAT_END:GROUP_DESC_LSB] <= LAST_DATA_FORMAT)

    @always_comb
    def route():
        if in_frame:
            passing.next = forwarding
        else:
            passing.next = header_ok
        if passing:
            s_axis.tready.next = running and out_ready
        else:
            s_axis.tready.next = running            # a dropped frame is consumed at line rate
        out_valid.next = s_axis.tvalid and running and passing

    @always_comb
    def rewrite():
        word = intbv(0)[BEAT_BITS:]
        if in_frame:
            word[:] = s_axis.tdata
        else:
            word[:] = 0
            word[F_CLASS_END:F_CLASS_LSB] = CLASS_DATA
            word[F_GENERATION_END:F_OP_ID_LSB] = s_axis.tdata[F_GENERATION_END:F_OP_ID_LSB]
            word[F_CONTRIBUTOR_END:F_CONTRIBUTOR_LSB] = CONTRIBUTOR
            word[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB] = s_axis.tdata[GROUP0_FORMAT_END:GROUP_DESC_LSB]
            word[F_OFFSET_END:F_OFFSET_LSB] = s_axis.tdata[F_OFFSET_END:F_OFFSET_LSB]
            word[F_N_END:F_N_LSB] = s_axis.tdata[F_N_END:F_N_LSB]
        out_data.next = word

    @always_seq(clk.posedge, reset=rst)
    def track():
        running.next = 1
        count = modbv(0)[count_bits:]
        if s_axis.tvalid and running and (out_ready or not passing):
            in_frame.next = not s_axis.tlast
            if not in_frame:
                forwarding.next = header_ok
                if not header_ok:
                    count[:] = dropped + 1
                    dropped.next = count

    out_slice = axis_register(clk=clk, rst=rst,
                              s_axis=AxiStream.wrap(tdata=out_data, tlast=s_axis.tlast, tvalid=out_valid,
                                                    tready=out_ready),
                              m_axis=m_axis)
    return classify, route, rewrite, track, out_slice
