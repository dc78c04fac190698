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

Ports (widths from the signals):
    clk, rst            clock; synchronous active-high reset
    resp_valid          a CONTROL response waits (TX port 0)
    resp_data           its header: response fields [43:0], zero-extended to the beat
    resp_pop            out: the response is taken this cycle
    res_valid           the result sender presents a beat
    res_data            the beat (width of m_axis_0_tdata)
    res_last            it ends its frame
    res_mask            2 bits: bit p set: the beat goes out of TX port p
    res_ready           out: every masked port has taken the beat (the sender advances)
    m_axis_P_tdata/tvalid/tready/tlast   (P = 0, 1) transmit streams
    sent_response       out: pulse, a response beat was taken on TX port 0 (tvalid and tready)
    sent_result0        out: pulse, a RESULT frame's last beat was taken on TX port 0
    sent_result1        out: pulse, same for TX port 1
                        (counted on the wire, so a frame a reset cuts is never counted)

Parameters:
    FAULT               test-only deliberate bug, FAULT_NONE (default) in every real use:
                        FAULT_NO_FRAME_LOCK  port 0 forgets that it is inside a RESULT frame, so a
                        response may be sent between two beats of the frame (the formal proof of
                        whole frames on TX port 0 must fail on it)
"""
from myhdl import Signal, always, always_comb, block

GRANT_RESPONSE, GRANT_RESULT = 0, 1
FAULT_NONE, FAULT_NO_FRAME_LOCK = 0, 1
FAULTS = {"none": FAULT_NONE, "no_frame_lock": FAULT_NO_FRAME_LOCK}


@block
def prism_egress(clk, rst, resp_valid, resp_data, resp_pop, res_valid, res_data, res_last, res_mask, res_ready,
                 m_axis_0_tdata, m_axis_0_tvalid, m_axis_0_tready, m_axis_0_tlast,
                 m_axis_1_tdata, m_axis_1_tvalid, m_axis_1_tready, m_axis_1_tlast,
                 sent_response, sent_result0, sent_result1, FAULT=FAULT_NONE):
    if FAULT not in FAULTS.values():
        raise ValueError(f"prism_egress: FAULT={FAULT!r} is not one of {sorted(FAULTS.values())}")
    width = len(m_axis_0_tdata)
    if len(m_axis_1_tdata) != width or len(res_data) != width:
        raise ValueError("prism_egress: m_axis_0_tdata, m_axis_1_tdata and res_data must be equally wide")
    if len(resp_data) > width:
        raise ValueError("prism_egress: resp_data is wider than a beat")
    if len(res_mask) != 2:
        raise ValueError("prism_egress: res_mask has one bit per transmit port (2)")

    out0_valid, out1_valid = Signal(bool(0)), Signal(bool(0))
    taken0, taken1 = Signal(bool(0)), Signal(bool(0))   # this beat already loaded for port p
    locked0 = Signal(bool(0))       # port 0 is inside a RESULT frame
    result0 = Signal(bool(0))       # port 0's register holds a RESULT beat (else a response)
    last_grant = Signal(bool(0))    # round robin on port 0 between frames
    load0_resp, load0_res, load1_res = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    ready = Signal(bool(0))

    @always_comb
    def arbitrate():
        free0 = not out0_valid or m_axis_0_tready
        free1 = not out1_valid or m_axis_1_tready
        want0 = res_valid and res_mask[0] and not taken0
        want1 = res_valid and res_mask[1] and not taken1
        res_wins = False
        if locked0 and FAULT != FAULT_NO_FRAME_LOCK:
            res_wins = True
        elif want0 and resp_valid:
            res_wins = last_grant == GRANT_RESPONSE
        else:
            res_wins = want0
        l0_res = free0 and want0 and res_wins
        l0_resp = free0 and resp_valid and not res_wins
        l1_res = free1 and want1
        load0_resp.next = l0_resp
        load0_res.next = l0_res
        load1_res.next = l1_res
        ready.next = res_valid and (not res_mask[0] or taken0 or l0_res) and (not res_mask[1] or taken1 or l1_res)

    @always_comb
    def outputs():
        resp_pop.next = load0_resp
        res_ready.next = ready
        m_axis_0_tvalid.next = out0_valid
        m_axis_1_tvalid.next = out1_valid

    @always(clk.posedge)
    def step():
        if rst:
            out0_valid.next = 0
            out1_valid.next = 0
            taken0.next = 0
            taken1.next = 0
            locked0.next = 0
            last_grant.next = 0
            sent_response.next = 0
            sent_result0.next = 0
            sent_result1.next = 0
        else:
            # what the link partners took at this edge
            sent_response.next = out0_valid and m_axis_0_tready and not result0
            sent_result0.next = out0_valid and m_axis_0_tready and result0 and m_axis_0_tlast
            sent_result1.next = out1_valid and m_axis_1_tready and m_axis_1_tlast
            if load0_resp:
                m_axis_0_tdata.next = resp_data
                m_axis_0_tlast.next = 1
                out0_valid.next = 1
                result0.next = 0
                last_grant.next = GRANT_RESPONSE
            elif load0_res:
                m_axis_0_tdata.next = res_data
                m_axis_0_tlast.next = res_last
                out0_valid.next = 1
                result0.next = 1
                locked0.next = not res_last
                last_grant.next = GRANT_RESULT
            elif m_axis_0_tready:
                out0_valid.next = 0
            if load1_res:
                m_axis_1_tdata.next = res_data
                m_axis_1_tlast.next = res_last
                out1_valid.next = 1
            elif m_axis_1_tready:
                out1_valid.next = 0
            if ready:
                taken0.next = 0
                taken1.next = 0
            else:
                if load0_res:
                    taken0.next = 1
                if load1_res:
                    taken1.next = 1

    return arbitrate, outputs, step
