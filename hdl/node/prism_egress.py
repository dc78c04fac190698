"""PRISM egress: CONTROL responses and RESULT frames onto the two transmit ports.

Phase 7 of the SINGLE node.  TX port 0 carries CONTROL responses (one beat
each) and RESULT frames; TX port 1 carries RESULT frames only.  Arbitration on
port 0 is frame-atomic: once a RESULT frame's first beat has gone out, port 0
stays with it until its TLAST; between frames a response and a RESULT frame
take turns (round robin), so neither can starve the other.

The result sender presents each beat once with a port mask (both bits for an
AllReduce to both ports).  A beat is loaded into each masked port's output
register as soon as that port can take it, independently per port; the sender
moves on (`res_ready`) in the cycle the last masked port takes it.  So a
stalled port delays the other by at most a beat of buffering, and no beat is
sent twice or lost.

Outputs are registered (one beat register per port), with full throughput:
a port register reloads in the cycle its beat is taken.

Ports (buses in hdl/node/prism_buses.py and hdl/common/interface.py; widths from the signals):
    clk, rst            clock; synchronous active-high reset
    responses           Responses: a CONTROL response waits for TX port 0 (data: response fields [43:0],
                        zero-extended to the beat); out: pop, the response is taken this cycle
    beats               ResultBeat from the result sender (data as wide as m_axis_0_tdata; mask bit p set:
                        the beat goes out of TX port p); out: ready, every masked port has taken the beat
    m_axis_P            transmit port P (P = 0, 1): AxiStream with tlast, tdata as wide as beats.data
    sent                out: SentEvents, pulses: a response beat / a RESULT frame's last beat was taken
                        (tvalid and tready) on TX port 0, a RESULT frame's last beat on TX port 1
                        (counted on the wire, so a frame a reset cuts is never counted)
"""
from myhdl import Signal, always, always_comb, block

from hdl.common.interface import AxiStream

GRANT_RESPONSE, GRANT_RESULT = 0, 1


@block
def prism_egress(clk, rst, responses, beats, m_axis_0: AxiStream, m_axis_1: AxiStream, sent):
    width = len(m_axis_0.tdata)
    if len(m_axis_1.tdata) != width or len(beats.data) != width:
        raise ValueError("prism_egress: m_axis_0_tdata, m_axis_1_tdata and beats.data must be equally wide")
    if len(responses.data) > width:
        raise ValueError("prism_egress: responses.data is wider than a beat")
    if len(beats.mask) != 2:
        raise ValueError("prism_egress: beats.mask has one bit per transmit port (2)")

    out0_valid, out1_valid = Signal(bool(0)), Signal(bool(0))
    taken0, taken1 = Signal(bool(0)), Signal(bool(0))   # this beat already loaded for port p
    locked0 = Signal(bool(0))       # port 0 is inside a RESULT frame
    result0 = Signal(bool(0))       # port 0's register holds a RESULT beat (else a response)
    last_grant = Signal(bool(0))    # round robin on port 0 between frames (not reset: any start is fair)
    load0_resp, load0_res, load1_res = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    ready = Signal(bool(0))

    @always_comb
    def arbitrate():
        free0 = not out0_valid or m_axis_0.tready
        free1 = not out1_valid or m_axis_1.tready
        want0 = beats.valid and beats.mask[0] and not taken0
        want1 = beats.valid and beats.mask[1] and not taken1
        res_wins = False
        if locked0:
            res_wins = True
        elif want0 and responses.valid:
            res_wins = last_grant == GRANT_RESPONSE
        else:
            res_wins = want0
        l0_res = free0 and want0 and res_wins
        l0_resp = free0 and responses.valid and not res_wins
        l1_res = free1 and want1
        load0_resp.next = l0_resp
        load0_res.next = l0_res
        load1_res.next = l1_res
        ready.next = beats.valid and (not beats.mask[0] or taken0 or l0_res) and (not beats.mask[1] or taken1 or l1_res)

    @always_comb
    def drive_handshakes():
        responses.pop.next = load0_resp
        beats.ready.next = ready
        m_axis_0.tvalid.next = out0_valid
        m_axis_1.tvalid.next = out1_valid

    @always(clk.posedge)
    def load_ports():
        if rst:
            out0_valid.next = 0
            out1_valid.next = 0
            taken0.next = 0
            taken1.next = 0
            locked0.next = 0
            sent.response.next = 0
            sent.result0.next = 0
            sent.result1.next = 0
        else:
            # what the link partners took at this edge
            sent.response.next = out0_valid and m_axis_0.tready and not result0
            sent.result0.next = out0_valid and m_axis_0.tready and result0 and m_axis_0.tlast
            sent.result1.next = out1_valid and m_axis_1.tready and m_axis_1.tlast
            if load0_resp:
                m_axis_0.tdata.next = responses.data
                m_axis_0.tlast.next = 1
                out0_valid.next = 1
                result0.next = 0
                last_grant.next = GRANT_RESPONSE
            elif load0_res:
                m_axis_0.tdata.next = beats.data
                m_axis_0.tlast.next = beats.last
                out0_valid.next = 1
                result0.next = 1
                locked0.next = not beats.last
                last_grant.next = GRANT_RESULT
            elif m_axis_0.tready:
                out0_valid.next = 0
            if load1_res:
                m_axis_1.tdata.next = beats.data
                m_axis_1.tlast.next = beats.last
                out1_valid.next = 1
            elif m_axis_1.tready:
                out1_valid.next = 0
            if ready:
                taken0.next = 0
                taken1.next = 0
            else:
                if load0_res:
                    taken0.next = 1
                if load1_res:
                    taken1.next = 1

    return arbitrate, drive_handshakes, load_ports
