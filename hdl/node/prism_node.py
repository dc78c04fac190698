"""PRISM SINGLE collective node: two receive ports, two transmit ports.

Top level of the SINGLE node (docs/protocol.md is the wire contract).  Phases,
each a block of its own:

  1. prism_ingress (one per receive port): classification, three frame
     banks, drain path for unsupported traffic;
     prism_control: validation after TLAST (protocol order), admission (port 0
     first in a tie), duplicate detection;  prism_counters: event counters;
  2. prism_control: STAGE/COMMIT with the staged slot and atomic activation,
     ACK/NACK responses queued for TX port 0;
  3. prism_reader (one per receive port): NumberGroup reader + dispatcher by
     global element index: a whole beat per cycle (up to four 16-element
     ranges) under both policies;
  4. prism_kulisch_store: KULISCH_FIXED, per receive port four 16-lane Kulisch
     sub-stores (range % 4), merged when a range has all its contributors;
     prism_arrival_banks: FP32_ARRIVAL banked FP32 sums in admission order
     (sixteen 16-lane banks by range % 16, a whole beat of each port per cycle);
  5. prism_completion: contributions per range, completed ranges to readout;
     prism_readout: rounding to the result format, AUTO per tile;
  6. prism_result_sender: RESULT frames per 256-element block, groups joined
     across tiles, to the recipients mask;
  7. prism_egress: responses and RESULT frames share TX port 0, frame-atomic.

Ports (widths come from the signals; tdata must be 512 bits):
    clk, rst                                    clock; synchronous active-high reset (ResetSignal)
    s_axis_P_tdata/tvalid/tready/tlast          receive port P (P = 0, 1)
    m_axis_P_tdata/tvalid/tready/tlast          transmit port P
    counter_select                              6 bits: which counter (see prism_counters)
    counter_value                               out: 32 bits, the selected counter (1 cycle later)
    busy                                        out: an operation is in progress

Parameters:
    KULISCH_W   Kulisch accumulator width: 320 (default) or 280 (U280 build); others rejected
    CAPACITY    element capacity, a multiple of 32 in 32 .. 4096 (STAGE with a larger E: NACK BAD_COUNT)
"""
from myhdl import Signal, always, always_comb, block, intbv

from hdl.node.prism_arrival_banks import prism_arrival_banks
from hdl.node.prism_completion import prism_completion
from hdl.node.prism_control import prism_control
from hdl.node.prism_counters import prism_counters
from hdl.node.prism_egress import prism_egress
from hdl.node.prism_ingress import prism_ingress
from hdl.node.prism_kulisch_store import prism_kulisch_store
from hdl.node.prism_reader import prism_reader
from hdl.node.prism_readout import prism_readout
from hdl.node.prism_result_sender import prism_result_sender
from spec.formats import KULISCH_WIDTHS

HDR_BITS = 96


@block
def prism_node(clk, rst,
               s_axis_0_tdata, s_axis_0_tvalid, s_axis_0_tready, s_axis_0_tlast,
               s_axis_1_tdata, s_axis_1_tvalid, s_axis_1_tready, s_axis_1_tlast,
               m_axis_0_tdata, m_axis_0_tvalid, m_axis_0_tready, m_axis_0_tlast,
               m_axis_1_tdata, m_axis_1_tvalid, m_axis_1_tready, m_axis_1_tlast,
               counter_select, counter_value, busy,
               KULISCH_W=320, CAPACITY=4096):
    if KULISCH_W not in KULISCH_WIDTHS:
        raise ValueError(f"prism_node: KULISCH_W={KULISCH_W}; the node is built with 320 (default) or 280")
    if not (32 <= CAPACITY <= 4096 and CAPACITY % 32 == 0):
        raise ValueError(f"prism_node: CAPACITY={CAPACITY}; the stores hold 32 .. 4096 elements, "
                         "a multiple of 32")
    for name, sig in (("s_axis_0_tdata", s_axis_0_tdata), ("s_axis_1_tdata", s_axis_1_tdata),
                      ("m_axis_0_tdata", m_axis_0_tdata), ("m_axis_1_tdata", m_axis_1_tdata)):
        if len(sig) != 512:
            raise ValueError(f"prism_node: {name} is {len(sig)} bits; the protocol's beats are 512")

    def sig(width=None):
        return Signal(bool(0)) if width is None else Signal(intbv(0)[width:])

    insts = []
    # ---- phase 1: ingress per port ----
    room_ok = sig()
    frm = [dict(valid=sig(), header=sig(HDR_BITS), beats=sig(9), too_long=sig(), bank=sig(2)) for _ in range(2)]
    verdict = [dict(valid=sig(), admit=sig(), bank=sig(2)) for _ in range(2)]
    unsupported = [sig(), sig()]
    in_frame = [sig(), sig()]
    rd = [dict(avail=sig(), bank=sig(2), header=sig(HDR_BITS), release=sig(), raddr=sig(10), rdata=sig(512),
               next_avail=sig(), next_bank=sig(2), next_header=sig(HDR_BITS)) for _ in range(2)]
    s_axis = [(s_axis_0_tdata, s_axis_0_tvalid, s_axis_0_tready, s_axis_0_tlast),
              (s_axis_1_tdata, s_axis_1_tvalid, s_axis_1_tready, s_axis_1_tlast)]
    for p in range(2):
        f, v, r = frm[p], verdict[p], rd[p]
        insts.append(prism_ingress(clk, rst, *s_axis[p], room_ok, f["valid"], f["header"], f["beats"],
                                   f["too_long"], f["bank"], v["valid"], v["admit"], v["bank"], unsupported[p],
                                   in_frame[p], r["avail"], r["bank"], r["header"], r["release"], r["raddr"],
                                   r["rdata"], r["next_avail"], r["next_bank"], r["next_header"]))

    # ---- phases 1-2: validation, admission, CONTROL ----
    ev = [dict(valid=sig(), code=sig(4)) for _ in range(2)]
    resp_valid, resp_data, resp_pop = sig(), sig(44), sig()
    op_finished, clear, dp_idle = sig(), sig(), sig()
    act_policy, act_in_fmt, act_out_fmt = sig(2), sig(2), sig(3)
    act_count, act_contributors, act_expected = sig(13), sig(8), sig(4)
    act_recipients, act_op_id, act_generation, act_busy = sig(2), sig(8), sig(16), sig()
    ord_valid, ord_port, ord_pop = sig(), sig(), sig()
    insts.append(prism_control(clk, rst,
                               frm[0]["valid"], frm[0]["header"], frm[0]["beats"], frm[0]["too_long"], frm[0]["bank"],
                               frm[1]["valid"], frm[1]["header"], frm[1]["beats"], frm[1]["too_long"], frm[1]["bank"],
                               verdict[0]["valid"], verdict[0]["admit"], verdict[0]["bank"],
                               verdict[1]["valid"], verdict[1]["admit"], verdict[1]["bank"],
                               ev[0]["valid"], ev[0]["code"], ev[1]["valid"], ev[1]["code"],
                               resp_valid, resp_data, resp_pop, room_ok, op_finished, dp_idle, clear,
                               act_policy, act_in_fmt, act_out_fmt, act_count, act_contributors, act_expected,
                               act_recipients, act_op_id, act_generation, act_busy,
                               ord_valid, ord_port, ord_pop, CAPACITY=CAPACITY))

    # ---- phase 3: readers ----
    iss = [dict(valid=sig(), ready=sig(), row=sig(8), lanes=sig(64), data=sig(2048), last=sig(), may=sig(),
                start=sig(), active=sig(), seq=sig(4), lo=sig(9), hi=sig(9),
                next=sig(9), pend=sig(), pseq=sig(4), plo=sig(9), phi=sig(9)) for _ in range(2)]
    start_seq = sig(4)      # frames are numbered as they start (FP32_ARRIVAL: in admission order)
    for p in range(2):
        r, i = rd[p], iss[p]
        insts.append(prism_reader(clk, rst, r["avail"], r["bank"], r["header"], i["may"], r["release"],
                                  r["raddr"],
                                  r["rdata"], i["valid"], i["ready"], i["row"], i["lanes"], i["data"], i["last"],
                                  i["start"], start_seq, i["active"], i["seq"], i["lo"],
                                  i["hi"], i["next"], r["next_avail"], r["next_bank"], r["next_header"],
                                  i["pend"], i["pseq"], i["plo"], i["phi"]))
    may0, may1 = iss[0]["may"], iss[1]["may"]
    i0_valid, i0_ready, i0_start = iss[0]["valid"], iss[0]["ready"], iss[0]["start"]
    i1_valid, i1_ready, i1_start = iss[1]["valid"], iss[1]["ready"], iss[1]["start"]
    k0_valid, k1_valid = sig(), sig()
    arrival = sig()
    f0_ready, f1_ready = sig(), sig()

    @always_comb
    def dispatch():
        # KULISCH_FIXED: each port feeds its own store, never stalled.
        # FP32_ARRIVAL: frames start in admission order and feed the FP32 banks (prism_arrival_banks).
        if act_policy == 0:
            arrival.next = 0
            may0.next = 1
            may1.next = 1
            i0_ready.next = 1
            i1_ready.next = 1
            k0_valid.next = i0_valid
            k1_valid.next = i1_valid
            ord_pop.next = 0
        else:
            arrival.next = 1
            may0.next = ord_valid and not ord_port
            may1.next = ord_valid and ord_port
            i0_ready.next = f0_ready
            i1_ready.next = f1_ready
            k0_valid.next = 0
            k1_valid.next = 0
            ord_pop.next = i0_start or i1_start
    insts.append(dispatch)

    @always(clk.posedge)
    def number_starts():
        if rst:
            start_seq.next = 0
        elif i0_start or i1_start:
            start_seq.next = (start_seq + 1) % 16
    insts.append(number_starts)

    # ---- phase 4: accumulation ----
    W = KULISCH_W
    rows = CAPACITY // 16
    cmd_valid, cmd_row, cmd_ready = sig(), sig(8), sig()
    m_valid = sig()
    ko_valid, ko_row, ko_states, ko_flags = sig(), sig(8), sig(16 * W), sig(80)
    ev0_valid, ev0_row, ev0_n, ev1_valid, ev1_row, ev1_n = sig(), sig(8), sig(3), sig(), sig(8), sig(3)
    insts.append(prism_kulisch_store(clk, rst, clear, act_in_fmt, k0_valid, iss[0]["row"], iss[0]["lanes"],
                                     iss[0]["data"], k1_valid, iss[1]["row"], iss[1]["lanes"], iss[1]["data"],
                                     m_valid, cmd_row, ko_valid, ko_row, ko_states, ko_flags,
                                     ev0_valid, ev0_row, ev0_n, ev1_valid, ev1_row, ev1_n, ROWS=rows))
    f_cmd_valid, f_cmd_ready = sig(), sig()
    fe0_valid, fe0_row, fe0_n, fe1_valid, fe1_row, fe1_n = sig(), sig(8), sig(3), sig(), sig(8), sig(3)
    fo_valid, fo_row, fo_data = sig(), sig(8), sig(512)
    ports = []
    for p, ready in ((0, f0_ready), (1, f1_ready)):
        i = iss[p]
        ports += [i["valid"], ready, i["row"], i["lanes"], i["data"], i["active"], i["seq"], i["lo"], i["hi"],
                  i["next"], i["pend"], i["pseq"], i["plo"], i["phi"]]
    insts.append(prism_arrival_banks(clk, rst, clear, arrival, act_in_fmt, *ports, f_cmd_valid, cmd_row, f_cmd_ready,
                                     fe0_valid, fe0_row, fe0_n, fe1_valid, fe1_row, fe1_n, fo_valid, fo_row,
                                     fo_data, CAPACITY=CAPACITY))

    # ---- phase 5: completion, read-out ----
    e0_valid, e0_row, e0_n, e1_valid, e1_row, e1_n = sig(), sig(8), sig(3), sig(), sig(8), sig(3)
    ranges_done = sig(4)

    @always_comb
    def completion_events():
        if act_policy == 0:
            e0_valid.next = ev0_valid
            e0_row.next = ev0_row
            e0_n.next = ev0_n
            e1_valid.next = ev1_valid
            e1_row.next = ev1_row
            e1_n.next = ev1_n
            m_valid.next = cmd_valid
            f_cmd_valid.next = 0
            cmd_ready.next = 1
        else:
            e0_valid.next = fe0_valid
            e0_row.next = fe0_row
            e0_n.next = fe0_n
            e1_valid.next = fe1_valid
            e1_row.next = fe1_row
            e1_n.next = fe1_n
            m_valid.next = 0
            f_cmd_valid.next = cmd_valid
            cmd_ready.next = f_cmd_ready
    insts.append(completion_events)
    insts.append(prism_completion(clk, rst, clear, act_expected, e0_valid, e0_row, e0_n, e1_valid, e1_row, e1_n,
                                  cmd_valid, cmd_row, cmd_ready, ranges_done))

    w_valid, w_row, w_packed, w_fmt, w_exact = sig(), sig(8), sig(512), sig(3), sig(16 * (W + 5))
    insts.append(prism_readout(clk, rst, act_policy, act_out_fmt, act_count, ko_valid, ko_row, ko_states, ko_flags,
                               fo_valid, fo_row, fo_data, w_valid, w_row, w_packed, w_fmt, w_exact))

    # ---- phase 6: result sender ----
    res_valid, res_data, res_last, res_mask, res_ready, sender_idle = sig(), sig(512), sig(), sig(2), sig(), sig()
    insts.append(prism_result_sender(clk, rst, clear, act_count, act_op_id, act_generation, act_recipients,
                                     w_valid, w_row, w_packed, w_fmt, w_exact, res_valid, res_data, res_last,
                                     res_mask, res_ready, op_finished, sender_idle))
    rd0_avail, rd1_avail = rd[0]["avail"], rd[1]["avail"]
    iss0_active, iss1_active = iss[0]["active"], iss[1]["active"]

    @always_comb
    def datapath_idle():
        # nothing admitted waits or is read, no completed range waits for its read-out, no tile is
        # written, no RESULT frame is formed (the gaps between these stages are shorter than the
        # quiet time prism_control waits for after an ABORT)
        dp_idle.next = (not rd0_avail and not rd1_avail and not iss0_active and not iss1_active
                        and not cmd_valid and not w_valid and sender_idle)
    insts.append(datapath_idle)

    # ---- phase 7: egress ----
    sent_response, sent_result0, sent_result1 = sig(), sig(), sig()
    insts.append(prism_egress(clk, rst, resp_valid, resp_data, resp_pop, res_valid, res_data, res_last, res_mask,
                              res_ready, m_axis_0_tdata, m_axis_0_tvalid, m_axis_0_tready, m_axis_0_tlast,
                              m_axis_1_tdata, m_axis_1_tvalid, m_axis_1_tready, m_axis_1_tlast,
                              sent_response, sent_result0, sent_result1))

    # ---- counters ----
    results_sent = sig(2)

    @always_comb
    def result_events():
        results_sent.next = sent_result0 + sent_result1
        busy.next = act_busy
    insts.append(result_events)
    insts.append(prism_counters(clk, rst, ev[0]["valid"], ev[0]["code"], ev[1]["valid"], ev[1]["code"],
                                unsupported[0], unsupported[1], in_frame[0], in_frame[1], ranges_done,
                                results_sent, sent_response, counter_select, counter_value))
    return insts
