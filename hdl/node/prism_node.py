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

Ports (widths come from the signals; tdata must be 512 bits; each stream is an AxiStream
with tlast, hdl/common/interface.py, converted to the ports s_axis_P_tdata, s_axis_P_tlast,
s_axis_P_tvalid, s_axis_P_tready and m_axis_P_... likewise):
    clk, rst                                    clock; synchronous active-high reset (ResetSignal)
    s_axis_P                                    receive port P (P = 0, 1)
    m_axis_P                                    transmit port P
    counter_select                              6 bits: which counter (see prism_counters)
    counter_value                               out: 32 bits, the selected counter (1 cycle later)
    busy                                        out: an operation is in progress

The blocks are wired by keyword with the typed buses of hdl/node/prism_buses.py
(one class per bus, documented field by field); a bus of one receive port is
`p0_<bus>` / `p1_<bus>`.

Parameters:
    KULISCH_W   Kulisch accumulator width: 320 (default) or 280 (U280 build); others rejected
    CAPACITY    element capacity, a multiple of 32 in 32 .. 4096 (STAGE with a larger E: NACK BAD_COUNT)
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, intbv

from hdl.common.interface import AxiStream
from hdl.node.prism_arrival_banks import prism_arrival_banks
from hdl.node.prism_buses import (ActiveOp, AdmissionOrder, BankRead, CounterEvent, Fp32Range, Frame, FrameOrder,
                                  IssueGroup, MergedRange, PortStatus, RangeEvents, ReadoutCmd, Responses,
                                  ResultBeat, SentEvents, Tile, Verdict)
from hdl.node.prism_completion import prism_completion
from hdl.node.prism_control import prism_control
from hdl.node.prism_counters import prism_counters
from hdl.node.prism_egress import prism_egress
from hdl.node.prism_ingress import prism_ingress
from hdl.node.prism_kulisch_store import prism_kulisch_store
from hdl.node.prism_reader import prism_reader
from hdl.node.prism_readout import prism_readout
from hdl.node.prism_result_sender import prism_result_sender
from spec.formats import KULISCH_WIDTH_DEFAULT, KULISCH_WIDTHS
from spec.frames import HDR_BITS, MAX_CAPACITY


@block
def prism_node(clk, rst, s_axis_0: AxiStream, s_axis_1: AxiStream, m_axis_0: AxiStream, m_axis_1: AxiStream,
               counter_select, counter_value, busy, KULISCH_W=KULISCH_WIDTH_DEFAULT, CAPACITY=MAX_CAPACITY):
    if KULISCH_W not in KULISCH_WIDTHS:
        raise ValueError(f"prism_node: KULISCH_W={KULISCH_W}; the node is built with 320 (default) or 280")
    if not (32 <= CAPACITY <= MAX_CAPACITY and CAPACITY % 32 == 0):
        raise ValueError(f"prism_node: CAPACITY={CAPACITY}; the stores hold 32 .. {MAX_CAPACITY} elements, "
                         "a multiple of 32")
    for name, bus in (("s_axis_0", s_axis_0), ("s_axis_1", s_axis_1), ("m_axis_0", m_axis_0), ("m_axis_1", m_axis_1)):
        if len(bus.tdata) != 512:
            raise ValueError(f"prism_node: {name}_tdata is {len(bus.tdata)} bits; the protocol's beats are 512")

    def sig(width=None):
        return Signal(bool(0)) if width is None else Signal(intbv(0)[width:])

    insts = []
    # ---- phase 1: ingress per port ----
    room_ok = sig()
    p0_frame, p1_frame = Frame(HDR_BITS), Frame(HDR_BITS)
    p0_verdict, p1_verdict = Verdict(), Verdict()
    p0_status, p1_status = PortStatus(), PortStatus()
    p0_bank_read, p1_bank_read = BankRead(HDR_BITS), BankRead(HDR_BITS)
    insts.append(prism_ingress(clk=clk, rst=rst, s_axis=s_axis_0, room_ok=room_ok, frame=p0_frame, verdict=p0_verdict,
                               status=p0_status, bank_read=p0_bank_read))
    insts.append(prism_ingress(clk=clk, rst=rst, s_axis=s_axis_1, room_ok=room_ok, frame=p1_frame, verdict=p1_verdict,
                               status=p1_status, bank_read=p1_bank_read))

    # ---- phases 1-2: validation, admission, CONTROL ----
    p0_event, p1_event = CounterEvent(), CounterEvent()
    responses = Responses()
    op = ActiveOp()
    order = AdmissionOrder()
    op_finished, dp_idle = sig(), sig()
    insts.append(prism_control(clk=clk, rst=rst, p0_frame=p0_frame, p1_frame=p1_frame, p0_verdict=p0_verdict,
                               p1_verdict=p1_verdict, p0_event=p0_event, p1_event=p1_event, responses=responses,
                               room_ok=room_ok, op_finished=op_finished, dp_idle=dp_idle, op=op, order=order,
                               CAPACITY=CAPACITY))

    # ---- phase 3: readers ----
    p0_group, p1_group = IssueGroup(), IssueGroup()
    p0_order, p1_order = FrameOrder(), FrameOrder()
    start_seq = sig(4)      # frames are numbered as they start (FP32_ARRIVAL: in admission order) ...
    seq_in = sig(4)         # ... counting the one whose start (a reader's register) is not yet in start_seq
    insts.append(prism_reader(clk=clk, rst=rst, bank_read=p0_bank_read, group=p0_group, order=p0_order,
                              seq_in=seq_in))
    insts.append(prism_reader(clk=clk, rst=rst, bank_read=p1_bank_read, group=p1_group, order=p1_order,
                              seq_in=seq_in))
    # the Kulisch store's view of each port's group: valid only under KULISCH_FIXED
    k0_valid, k1_valid = sig(), sig()
    p0_kgroup = IssueGroup.wrap(valid=k0_valid, ready=p0_group.ready, row=p0_group.row, lanes=p0_group.lanes,
                                data=p0_group.data, last=p0_group.last, ends=p0_group.ends)
    p1_kgroup = IssueGroup.wrap(valid=k1_valid, ready=p1_group.ready, row=p1_group.row, lanes=p1_group.lanes,
                                data=p1_group.data, last=p1_group.last, ends=p1_group.ends)
    arrival = sig()
    # prism_arrival_banks' readies start at what they are while it is disabled (at power-on): no
    # combinational value may wait for a time-0 event
    f0_ready, f1_ready = Signal(bool(1)), Signal(bool(1))

    @always_comb
    def dispatch():
        # KULISCH_FIXED: each port feeds its own store, never stalled.
        # FP32_ARRIVAL: frames start in admission order and feed the FP32 banks (prism_arrival_banks).
        if op.policy == 0:
            arrival.next = 0
            p0_order.may_start.next = 1
            p1_order.may_start.next = 1
            k0_valid.next = p0_group.valid
            k1_valid.next = p1_group.valid
        else:
            arrival.next = 1
            # the readers' starts are registers: the queue drops a started frame one edge later, and the
            # entry behind it is the head meanwhile
            if p0_order.start or p1_order.start:
                p0_order.may_start.next = order.valid2 and not order.port2
                p1_order.may_start.next = order.valid2 and order.port2
            else:
                p0_order.may_start.next = order.valid and not order.port
                p1_order.may_start.next = order.valid and order.port
            k0_valid.next = 0
            k1_valid.next = 0
        # the admission-order queue holds FP32_ARRIVAL frames only: under KULISCH_FIXED it is
        # empty, and a pop of an empty queue is ignored
        order.pop.next = p0_order.start or p1_order.start
        seq_in.next = (start_seq + (p0_order.start or p1_order.start)) % 16
        # prism_arrival_banks' ready is 1 while it is disabled (KULISCH_FIXED): no choice here behind
        # its grant
        p0_group.ready.next = f0_ready
        p1_group.ready.next = f1_ready
    insts.append(dispatch)

    @always(clk.posedge)
    def number_starts():
        # not reset: only the differences of start numbers given after the last reset are read
        # (the readers' and banks' numbers travel with valid bits that a reset clears)
        if p0_order.start or p1_order.start:
            start_seq.next = (start_seq + 1) % 16
    insts.append(number_starts)

    # ---- phase 4: accumulation ----
    cmd = ReadoutCmd()                  # prism_completion's head, to the active policy's store
    merge_valid = sig()
    merged = MergedRange(KULISCH_W)
    p0_kevents, p1_kevents = RangeEvents(), RangeEvents()
    insts.append(prism_kulisch_store(clk=clk, rst=rst, op=op, p0_group=p0_kgroup, p1_group=p1_kgroup,
                                     merge_valid=merge_valid, merge_row=cmd.row, merged=merged,
                                     p0_events=p0_kevents, p1_events=p1_kevents, ROWS=CAPACITY // 16))
    f_cmd_valid, f_cmd_ready = sig(), Signal(bool(1))
    p0_fevents, p1_fevents = RangeEvents(), RangeEvents()
    fp32 = Fp32Range()
    insts.append(prism_arrival_banks(
        clk=clk, rst=rst, clear=op.clear, enable=arrival, fmt=op.in_fmt,
        p0_valid=p0_group.valid, p0_ready=f0_ready, p0_row=p0_group.row, p0_lanes=p0_group.lanes,
        p0_data=p0_group.data, p0_active=p0_order.active, p0_seq=p0_order.seq, p0_lo=p0_order.lo,
        p0_hi=p0_order.hi, p0_next=p0_order.next_range, p0_pend=p0_order.pend, p0_pseq=p0_order.pseq,
        p0_plo=p0_order.plo, p0_phi=p0_order.phi,
        p1_valid=p1_group.valid, p1_ready=f1_ready, p1_row=p1_group.row, p1_lanes=p1_group.lanes,
        p1_data=p1_group.data, p1_active=p1_order.active, p1_seq=p1_order.seq, p1_lo=p1_order.lo,
        p1_hi=p1_order.hi, p1_next=p1_order.next_range, p1_pend=p1_order.pend, p1_pseq=p1_order.pseq,
        p1_plo=p1_order.plo, p1_phi=p1_order.phi,
        cmd_valid=f_cmd_valid, cmd_row=cmd.row, cmd_ready=f_cmd_ready,
        ev0_valid=p0_fevents.valid, ev0_row=p0_fevents.row, ev0_n=p0_fevents.n,
        ev1_valid=p1_fevents.valid, ev1_row=p1_fevents.row, ev1_n=p1_fevents.n,
        o_valid=fp32.valid, o_row=fp32.row, o_tile=fp32.tile, CAPACITY=CAPACITY))

    # ---- phase 5: completion, read-out ----
    p0_events, p1_events = RangeEvents(), RangeEvents()
    ranges_done = sig(4)

    @always_comb
    def route_completion():
        # the active policy's store feeds completion tracking and takes its read-out commands (the
        # condition is written in each statement: a shared local would keep Verilator from splitting
        # the process, and the read-out handshake with prism_arrival_banks would become a loop)
        p0_events.valid.next = p0_kevents.valid if op.policy == 0 else p0_fevents.valid
        p0_events.row.next = p0_kevents.row if op.policy == 0 else p0_fevents.row
        p0_events.n.next = p0_kevents.n if op.policy == 0 else p0_fevents.n
        p1_events.valid.next = p1_kevents.valid if op.policy == 0 else p1_fevents.valid
        p1_events.row.next = p1_kevents.row if op.policy == 0 else p1_fevents.row
        p1_events.n.next = p1_kevents.n if op.policy == 0 else p1_fevents.n
        merge_valid.next = cmd.valid if op.policy == 0 else 0
        f_cmd_valid.next = 0 if op.policy == 0 else cmd.valid
        cmd.ready.next = f_cmd_ready         # 1 while prism_arrival_banks is disabled (KULISCH_FIXED)
    insts.append(route_completion)
    insts.append(prism_completion(clk=clk, rst=rst, op=op, p0_events=p0_events, p1_events=p1_events, cmd=cmd,
                                  ranges_done=ranges_done))

    tiles = Tile(KULISCH_W)
    insts.append(prism_readout(clk=clk, rst=rst, policy=op.policy, out_fmt=op.out_fmt, count=op.count,
                               k_valid=merged.valid, k_row=merged.row, k_states=merged.states,
                               k_flags=merged.flags, k_wraps=merged.wraps, f_valid=fp32.valid, f_row=fp32.row, f_tile=fp32.tile,
                               w_valid=tiles.valid, w_row=tiles.row, w_packed=tiles.packed, w_fmt=tiles.fmt,
                               w_exact=tiles.exact))

    # ---- phase 6: result sender ----
    beats = ResultBeat()
    sender_idle = sig()
    insts.append(prism_result_sender(clk=clk, rst=rst, op=op, tiles=tiles, beats=beats, op_finished=op_finished,
                                     idle=sender_idle))

    @always_comb
    def datapath_idle():
        # nothing admitted waits or is read, no completed range waits for its read-out, no tile is
        # written, no RESULT frame is formed (the gaps between these stages are shorter than the
        # quiet time prism_control waits for after an ABORT)
        dp_idle.next = (not p0_bank_read.avail and not p1_bank_read.avail and not p0_order.active
                        and not p1_order.active and ranges_done == 0 and not cmd.valid and not tiles.valid
                        and sender_idle)
    insts.append(datapath_idle)

    # ---- phase 7: egress ----
    sent = SentEvents()
    insts.append(prism_egress(clk=clk, rst=rst, responses=responses, beats=beats, m_axis_0=m_axis_0,
                              m_axis_1=m_axis_1, sent=sent))

    # ---- counters ----
    results_sent = sig(2)

    # busy: an operation is open or draining (op.busy).  Work in flight in the datapath's stages
    # (an issue group, a range event, a merge, a read-out, a completed range, a tile) raises it
    # too: in the node as designed such work only exists while op.busy is high, since a reset
    # empties every stage at its first edge, so busy is op.busy; a stage whose valid outlived a
    # reset would show as busy rising without a COMMIT, which the regression checks
    # (node_harness.busy_rises_with_commit).
    in_flight = ConcatSignal(p0_group.valid, p1_group.valid, p0_kevents.valid, p1_kevents.valid, merged.valid,
                             p0_fevents.valid, p1_fevents.valid, fp32.valid, cmd.valid, ranges_done, tiles.valid)

    @always_comb
    def count_results():
        results_sent.next = sent.result0 + sent.result1
        busy.next = op.busy or in_flight != 0
    insts.append(count_results)
    insts.append(prism_counters(clk=clk, rst=rst, p0_event=p0_event, p1_event=p1_event, p0_status=p0_status,
                                p1_status=p1_status, ranges_done=ranges_done, results_sent=results_sent,
                                response_sent=sent.response, counter_select=counter_select,
                                counter_value=counter_value))
    return insts
