"""Property harnesses: MyHDL blocks that put a design beside the checks a formal
tool proves on it.

Each harness is converted by the project's tool chain (cosim/sim/toolchain.py) like
any block, so one converted file serves the proof (yosys reads it under a
generated formal top, cosim/formal/sby.py), the Icarus replay and the MyHDL
replay of a counterexample (cosim/formal/replay.py).  A harness has

* the design's inputs, plus any free inputs its checks need (a tracked beat is
  chosen by the environment: `track`),
* `prop_bad`: one bit per property, high in a cycle where the property fails
  (the formal top asserts each selected bit low),
* `env_ok`: one bit per environment rule, high while the inputs obey it (the
  formal top assumes the bits a job needs high),
* the design's own outputs, so a replay compares them cycle by cycle.

Blocks that carry their own hardware monitor (collective_fabric's conformance
monitor, the package assertion monitor) are harnessed with their monitor
outputs as `prop_bad`.

Checks are written as one clocked process that keeps the history (the previous
cycle's handshake and beat) and one combinational process that compares it with
the present cycle, so a failure is visible in the cycle it happens.
"""
from myhdl import Signal, always_comb, always_seq, block, concat, intbv, modbv

import hdl.arith.fp32_arrival_lane as lane_module
from hdl.common.axis_register import axis_register
from hdl.common.interface import AxiStream
from hdl.common.wiring import ports_of
from hdl.node.prism_buses import (ActiveOp, AdmissionOrder, BankRead, CounterEvent, Frame, PortStatus, Responses,
                                  ResultBeat, SentEvents, Verdict)
from hdl.node.prism_control import EV_ADMITTED, EV_CONTROL, prism_control
from hdl.node.prism_egress import prism_egress
from hdl.node.prism_fp32_bank import prism_fp32_bank
from hdl.node.prism_ingress import frame_digest, frame_digest_ahead, prism_ingress
from hdl.package.package_assertion_monitor import package_assertion_monitor
from hdl.package.service_rate_estimator import service_rate_estimator
from hdl.package.work_distributor import work_distributor
from spec.frames import (CLASS_CONTROL, CLASS_DATA, F_CLASS_END, F_CLASS_LSB, F_GENERATION_END, F_OP_ID_LSB,
                         F_OPCODE_END, F_OPCODE_LSB, F_REQUEST_OPCODE_END, F_REQUEST_OPCODE_LSB, OP_ABORT, OP_ACK,
                         OP_COMMIT)

# Header slices come from the protocol's field table (spec/frames.py); a frame's ids are its op_id
# and generation, adjacent fields read as one.
ID_BITS = F_GENERATION_END - F_OP_ID_LSB

# ---------------------------------------------------------------------------------------------
# One AXI-Stream output: tvalid held while stalled, tdata/tlast held while stalled.
# ---------------------------------------------------------------------------------------------

@block
def stream_output_rules(clk, rst, tdata, tlast, tvalid, tready, bad_valid, bad_data):
    """bad_valid: a beat offered and not taken at the last edge is no longer offered;
    bad_data: it is offered with other tdata/tlast.  A reset excuses both (it may drop a beat)."""
    width = len(tdata)
    stalled = Signal(bool(0))
    held_data = Signal(intbv(0)[width:])
    held_last = Signal(bool(0))

    @always_seq(clk.posedge, reset=rst)
    def history():
        stalled.next = tvalid and not tready
        held_data.next = tdata
        held_last.next = tlast

    @always_comb
    def check():
        bad_valid.next = stalled and not rst and not tvalid
        bad_data.next = stalled and not rst and tvalid and (tdata != held_data or tlast != held_last)

    return history, check


@block
def stream_input_rules(clk, rst, tdata, tlast, tvalid, tready, ok):
    """The source side's rule, as an environment: a beat offered and not taken stays offered
    with the same tdata/tlast (AXI-Stream: a source never withdraws or changes a waiting beat).
    The same rule as on an output, assumed instead of asserted."""
    withdrawn, changed = Signal(bool(0)), Signal(bool(0))
    rules = stream_output_rules(clk, rst, tdata, tlast, tvalid, tready, withdrawn, changed)

    @always_comb
    def check():
        ok.next = not (withdrawn or changed)

    return rules, check


@block
def beat_balance(clk, rst, in_valid, in_ready, out_valid, out_ready, count):
    """Beats in (in_valid and in_ready) minus beats out (out_valid and out_ready), counted at each
    edge and held at the ends of count's range: a checker's occupancy or balance, which stays
    visibly wrong once it ran off its range instead of wrapping back."""
    lo, hi = count.min, count.max - 1

    @always_seq(clk.posedge, reset=rst)
    def step():
        up = in_valid and in_ready
        down = out_valid and out_ready
        if up and not down:
            if count != hi:
                count.next = count + 1
        elif down and not up:
            if count != lo:
                count.next = count - 1

    return step


# ---------------------------------------------------------------------------------------------
# axis_register
# ---------------------------------------------------------------------------------------------
@block
def axis_register_no_skid(clk, rst, s_axis: AxiStream, m_axis: AxiStream):
    """Test only: the real slice with a beat arriving while its output waits hidden from it, so it
    is dropped while the source sees it taken (the bug a skid buffer exists to prevent).  The skid
    buffer then never fills, so the slice stays ready whenever it runs: always ready out of reset."""
    offered = Signal(bool(0))
    slice_ = axis_register(clk, rst, AxiStream.wrap(tdata=s_axis.tdata, tlast=s_axis.tlast, tvalid=offered,
                                                    tready=s_axis.tready), m_axis)

    @always_comb
    def drop():
        offered.next = s_axis.tvalid and not (m_axis.tvalid and not m_axis.tready)

    return slice_, drop


AXIS_REGISTER_PROPERTIES = (
    ("m_tvalid_held", "m_axis: tvalid stays high while the beat waits (tvalid && !tready |=> tvalid)"),
    ("m_tdata_held", "m_axis: tdata and tlast do not change while the beat waits"),
    ("no_duplicate", "no output beat without an accepted input beat still inside (count never below 0)"),
    ("no_loss", "at most 2 accepted beats inside the slice (a lost beat would leave the count behind)"),
    ("tracked_beat", "the tracked input beat leaves as the output beat its position names, same tdata/tlast"),
    ("input_live", "bounded liveness: the slice takes an offered input beat in every cycle after one in which its "
                   "output was free (nothing waiting, or tready high), from its first cycle out of reset"),
    ("output_live", "bounded liveness: a beat accepted at an edge is offered on m_axis from the next cycle until "
                    "it is taken (a beat inside the slice means m_axis_tvalid)"),
)
CAPACITY = 2          # beats the slice holds: its output register and its skid buffer


@block
def axis_register_harness(clk, rst, s_axis_tdata, s_axis_tlast, s_axis_tvalid, m_axis_tready, track,
                          s_axis_tready, m_axis_tdata, m_axis_tlast, m_axis_tvalid, prop_bad, env_ok,
                          VARIANT=""):
    """`track`: the environment marks one accepted input beat (the first one accepted with
    track high after reset); its data and position are remembered and checked at the output.
    Because the solver may choose any beat, this covers every beat: no beat is lost,
    duplicated or reordered.  VARIANT "no_skid": a test-only broken slice instead."""
    width = len(s_axis_tdata)
    if VARIANT not in ("", "no_skid"):
        raise ValueError(f"axis_register_harness: VARIANT={VARIANT!r}")
    dut_block = axis_register_no_skid if VARIANT == "no_skid" else axis_register
    dut = dut_block(**ports_of(axis_register, locals()))
    bad_valid, bad_data = Signal(bool(0)), Signal(bool(0))
    out_rules = stream_output_rules(clk, rst, m_axis_tdata, m_axis_tlast, m_axis_tvalid, m_axis_tready,
                                    bad_valid, bad_data)
    src_ok = Signal(bool(0))
    in_rules = stream_input_rules(clk, rst, s_axis_tdata, s_axis_tlast, s_axis_tvalid, s_axis_tready, src_ok)
    held_beats = Signal(intbv(0)[3:])         # accepted beats not yet sent (saturates at 7)
    tracking = Signal(bool(0))
    tracked_done = Signal(bool(0))
    ahead = Signal(intbv(0)[3:])          # beats in front of the tracked one
    tr_data = Signal(intbv(0)[width:])
    tr_last = Signal(bool(0))
    dup, lost, wrong = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    out_free = Signal(bool(0))                # at the last edge, out of reset, the output could move
    slow_in, slow_out = Signal(bool(0)), Signal(bool(0))
    occupancy = beat_balance(clk, rst, s_axis_tvalid, s_axis_tready, m_axis_tvalid, m_axis_tready, held_beats)

    @always_seq(clk.posedge, reset=rst)
    def liveness_history():
        out_free.next = not m_axis_tvalid or m_axis_tready

    @always_seq(clk.posedge, reset=rst)
    def track_beat():
        s_fire = s_axis_tvalid and s_axis_tready
        m_fire = m_axis_tvalid and m_axis_tready
        if tracking:
            if m_fire:
                if ahead == 0:
                    tracking.next = 0
                    tracked_done.next = 1
                else:
                    ahead.next = ahead - 1
        elif s_fire and track and not tracked_done:
            tracking.next = 1
            tr_data.next = s_axis_tdata
            tr_last.next = s_axis_tlast
            if m_fire and held_beats != 0:
                ahead.next = held_beats - 1
            else:
                ahead.next = held_beats

    @always_comb
    def check():
        m_fire = m_axis_tvalid and m_axis_tready
        dup.next = not rst and m_fire and held_beats == 0
        lost.next = not rst and held_beats > CAPACITY
        wrong.next = not rst and tracking and m_fire and ahead == 0 and \
            (m_axis_tdata != tr_data or m_axis_tlast != tr_last)
        slow_in.next = not rst and out_free and not s_axis_tready
        slow_out.next = not rst and held_beats != 0 and not m_axis_tvalid

    @always_comb
    def pack():
        prop_bad.next = concat(slow_out, slow_in, wrong, lost, dup, bad_data, bad_valid)
        env_ok.next = src_ok

    return dut, out_rules, in_rules, occupancy, liveness_history, track_beat, check, pack


# ---------------------------------------------------------------------------------------------
# prism_egress
# ---------------------------------------------------------------------------------------------
EGRESS_PROPERTIES = (
    ("tx0_tvalid_held", "TX port 0: tvalid stays high while the beat waits"),
    ("tx0_tdata_held", "TX port 0: tdata and tlast do not change while the beat waits"),
    ("tx1_tvalid_held", "TX port 1: tvalid stays high while the beat waits"),
    ("tx1_tdata_held", "TX port 1: tdata and tlast do not change while the beat waits"),
    ("response_only_tx0", "TX port 1 never carries a CONTROL response beat"),
    ("whole_frames_tx0", "TX port 0: no response beat inside a RESULT frame (between its first beat and TLAST)"),
    ("result_beats_tx0", "every RESULT beat masked for TX port 0 leaves it once: sent - accepted stays in -1..1"),
    ("result_beats_tx1", "every RESULT beat masked for TX port 1 leaves it once: sent - accepted stays in -1..1"),
    ("tracked_result_tx0", "the tracked RESULT beat, if masked for TX port 0, leaves it as the RESULT beat its "
                           "position names, with its tdata and tlast"),
    ("tracked_result_tx1", "the same on TX port 1"),
    ("result_live", "bounded liveness: a RESULT beat offered while every port of its mask takes beats is taken "
                    "(res_ready) within 2 cycles"),
    ("response_live", "bounded liveness: a response waiting while TX port 0 takes beats is popped within 2 cycles, "
                      "unless TX port 0 is inside a RESULT frame (frame-atomic: the protocol holds it)"),
)
# The environment (env_ok): the result sender holds res_valid/data/last/mask until res_ready; a
# response is held until resp_pop; RESULT beats carry their top data bit set (responses are
# zero-extended, so it is clear); res_mask is never 0 while res_valid


@block
def egress_tracked_port(clk, rst, mark, start_ahead, masked, port_fire, port_result, tdata, tlast, tr_data, tr_last,
                        pending, ahead, bad):
    """The tracked RESULT beat on one TX port: at `mark` (the beat's first cycle at the sender, so it
    has not been loaded yet) `start_ahead` RESULT beats for this port are in front of it; each RESULT
    beat that leaves the port takes one off, and the one that leaves with none in front must be it."""
    @always_seq(clk.posedge, reset=rst)
    def follow():
        if mark:
            pending.next = masked
            if port_fire and port_result and start_ahead != 0:
                ahead.next = start_ahead - 1
            else:
                ahead.next = start_ahead
        elif pending and port_fire and port_result:
            if ahead == 0:
                pending.next = 0
            else:
                ahead.next = ahead - 1

    @always_comb
    def check():
        bad.next = not rst and pending and ahead == 0 and port_fire and port_result and \
            (tdata != tr_data or tlast != tr_last)

    return follow, check


@block
def egress_result_count(clk, rst, sender_fire, masked, port_fire, port_result, diff, bad):
    """Accepted-minus-sent RESULT beats of one port (`diff`, a small signed count, -4..3): a port
    register holds one beat and may send it before the sender advances, so -1..1 is legal."""
    balance = beat_balance(clk, rst, sender_fire, masked, port_fire, port_result, diff)

    @always_comb
    def check():
        bad.next = not rst and (diff > 1 or diff < -1)

    return balance, check


@block
def prism_egress_harness(clk, rst, resp_valid, resp_data, res_valid, res_data, res_last, res_mask,
                         m_axis_0_tready, m_axis_1_tready, track,
                         resp_pop, res_ready, m_axis_0_tdata, m_axis_0_tvalid, m_axis_0_tlast,
                         m_axis_1_tdata, m_axis_1_tvalid, m_axis_1_tlast, sent_response, sent_result0,
                         sent_result1, prop_bad, env_ok):
    """`track`: the environment marks one RESULT beat (the first one offered for the first time with
    track high after reset); the checker follows it to each port of its mask (how many RESULT beats
    for that port are in front of it) and requires it to leave with its tdata and tlast.  The solver
    may choose any beat, so this covers every beat's data on both ports."""
    width = len(res_data)
    top = width - 1
    dut = prism_egress(clk=clk, rst=rst, responses=Responses.wrap(valid=resp_valid, data=resp_data, pop=resp_pop),
                       beats=ResultBeat.wrap(valid=res_valid, data=res_data, last=res_last, mask=res_mask,
                                             ready=res_ready),
                       m_axis_0=AxiStream.from_ports("m_axis_0", locals()),
                       m_axis_1=AxiStream.from_ports("m_axis_1", locals()),
                       sent=SentEvents.wrap(response=sent_response, result0=sent_result0, result1=sent_result1))
    b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11 = [Signal(bool(0)) for _ in range(len(EGRESS_PROPERTIES))]
    r0 = stream_output_rules(clk, rst, m_axis_0_tdata, m_axis_0_tlast, m_axis_0_tvalid, m_axis_0_tready, b0, b1)
    r1 = stream_output_rules(clk, rst, m_axis_1_tdata, m_axis_1_tlast, m_axis_1_tvalid, m_axis_1_tready, b2, b3)
    in_frame0 = Signal(bool(0))          # a RESULT beat without TLAST has left TX port 0
    sender_fire = Signal(bool(0))
    port0_fire, port1_fire = Signal(bool(0)), Signal(bool(0))
    port0_result, port1_result = Signal(bool(0)), Signal(bool(0))
    mask0, mask1 = Signal(bool(0)), Signal(bool(0))
    result_diff0, result_diff1 = Signal(intbv(0, min=-4, max=4)), Signal(intbv(0, min=-4, max=4))
    c0 = egress_result_count(clk, rst, sender_fire, mask0, port0_fire, port0_result, result_diff0, b6)
    c1 = egress_result_count(clk, rst, sender_fire, mask1, port1_fire, port1_result, result_diff1, b7)
    waiting_res = Signal(bool(0))
    held_res = Signal(intbv(0)[width + 3:])
    waiting_resp = Signal(bool(0))
    held_resp = Signal(intbv(0)[len(resp_data):])
    # the tracked RESULT beat
    tracking = Signal(bool(0))
    mark = Signal(bool(0))
    tr_data = Signal(intbv(0)[width:])
    tr_last = Signal(bool(0))
    tr_mask = Signal(intbv(0)[2:])
    start0, start1 = Signal(intbv(0)[2:]), Signal(intbv(0)[2:])
    pending0, pending1 = Signal(bool(0)), Signal(bool(0))
    ahead0, ahead1 = Signal(intbv(0)[2:]), Signal(intbv(0)[2:])
    t0 = egress_tracked_port(clk, rst, mark, start0, mask0, port0_fire, port0_result, m_axis_0_tdata, m_axis_0_tlast,
                             tr_data, tr_last, pending0, ahead0, b8)
    t1 = egress_tracked_port(clk, rst, mark, start1, mask1, port1_fire, port1_result, m_axis_1_tdata, m_axis_1_tlast,
                             tr_data, tr_last, pending1, ahead1, b9)
    # bounded liveness: a beat or response that could have moved in the last cycle and did not
    stuck_res, stuck_resp = Signal(bool(0)), Signal(bool(0))
    stuck_res_prev, stuck_resp_prev = Signal(bool(0)), Signal(bool(0))

    @always_comb
    def events():
        sender_fire.next = res_valid and res_ready
        port0_fire.next = m_axis_0_tvalid and m_axis_0_tready
        port1_fire.next = m_axis_1_tvalid and m_axis_1_tready
        port0_result.next = m_axis_0_tdata[top]
        port1_result.next = m_axis_1_tdata[top]
        mask0.next = res_mask[0]
        mask1.next = res_mask[1]
        # the beat's first cycle at the sender: it has not been loaded into a port yet
        mark.next = track and res_valid and not waiting_res and not tracking and not rst
        # accepted - sent of each port (the beats in front of a beat that is offered for the first time)
        start0.next = 1 if result_diff0 > 0 else 0
        start1.next = 1 if result_diff1 > 0 else 0
        stuck_res.next = res_valid and not res_ready and (not res_mask[0] or m_axis_0_tready) and \
            (not res_mask[1] or m_axis_1_tready)
        stuck_resp.next = resp_valid and not resp_pop and m_axis_0_tready and not in_frame0 and \
            not (m_axis_0_tvalid and m_axis_0_tdata[top] and not m_axis_0_tlast)

    @always_seq(clk.posedge, reset=rst)
    def history():
        if port0_fire:
            in_frame0.next = port0_result and not m_axis_0_tlast
        waiting_res.next = res_valid and not res_ready
        held_res.next = concat(res_mask, res_last, res_data)
        waiting_resp.next = resp_valid and not resp_pop
        held_resp.next = resp_data
        if mark:
            tracking.next = 1
            tr_data.next = res_data
            tr_last.next = res_last
            tr_mask.next = res_mask
        stuck_res_prev.next = stuck_res
        stuck_resp_prev.next = stuck_resp

    @always_comb
    def check():
        b4.next = not rst and port1_fire and not port1_result
        b5.next = not rst and port0_fire and in_frame0 and not port0_result
        b10.next = not rst and stuck_res_prev and stuck_res
        b11.next = not rst and stuck_resp_prev and stuck_resp

    @always_comb
    def environment():
        ok = True
        if res_valid and not res_data[top]:
            ok = False
        if res_valid and res_mask == 0:
            ok = False
        if not rst and waiting_res and not (res_valid and concat(res_mask, res_last, res_data) == held_res):
            ok = False
        if not rst and waiting_resp and not (resp_valid and resp_data == held_resp):
            ok = False
        env_ok.next = ok

    @always_comb
    def pack():
        prop_bad.next = concat(b11, b10, b9, b8, b7, b6, b5, b4, b3, b2, b1, b0)

    return dut, r0, r1, c0, c1, t0, t1, events, history, check, environment, pack


# ---------------------------------------------------------------------------------------------
# prism_ingress (the node's receive side)
# ---------------------------------------------------------------------------------------------
INGRESS_PROPERTIES = (
    ("frame_once", "a stored (CONTROL/DATA) frame gives exactly one frm_valid, in the cycle after its TLAST beat is "
                   "taken; any other class exactly one `unsupported` pulse"),
    ("frame_beats", "frm_beats counts exactly the beats taken for that frame (no beat lost or duplicated while "
                    "s_axis_tready is low)"),
    ("bank_free", "a completed frame's bank holds no other frame (none waiting for a verdict, none admitted)"),
    ("reader_queue", "the reader sees exactly the admitted frames' banks, in admission order, each once "
                     "(rd_avail and rd_bank follow the admissions and releases)"),
    ("beat_live", "bounded liveness: from the second cycle out of reset an offered beat is taken at once inside a "
                  "frame, as an unsupported frame's header, and as a stored frame's header when the bank to fill "
                  "(the next in round robin) holds no frame and room_ok is high"),
)
# The environment (env_ok): the source holds a waiting beat (AXI-Stream); the validation stage answers
# each completed frame once, oldest first (res_bank = the oldest frame without a verdict), in a later
# cycle than its frm_valid; the reader releases only what rd_avail offers


@block
def bank_fifo(clk, rst, push, push_val, pop, head, count, e0, e1, e2):
    """Three 2-bit entries (bank numbers) in order; pop takes the head.  A pop and a push in
    one cycle both happen.  e0..e2 are the entries (e0 = head); count says how many are valid."""
    q = Signal(intbv(0)[6:])
    n = Signal(intbv(0, min=0, max=4))

    @always_seq(clk.posedge, reset=rst)
    def step():
        qq = intbv(0)[6:]
        nn = intbv(0, min=0, max=5)
        v = intbv(0)[6:]
        qq[:] = q
        nn[:] = n
        if pop and nn != 0:
            qq[:] = qq >> 2
            nn[:] = nn - 1
        if push and nn != 3:
            v[:] = push_val
            qq[:] = qq | (v << (2 * nn))
            nn[:] = nn + 1
        q.next = qq
        n.next = nn

    @always_comb
    def out():
        head.next = q[2:0]
        e0.next = q[2:0]
        e1.next = q[4:2]
        e2.next = q[6:4]
        count.next = n

    return step, out


@block
def prism_ingress_harness(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tlast, room_ok, res_valid, res_admit,
                          res_bank, rd_release, mem_raddr, mem_raddr_hold, mem_advance,
                          s_axis_tready, frm_valid, frm_header, frm_beats, frm_too_long, frm_bank, unsupported,
                          in_frame, rd_avail, rd_bank, rd_header, rd_next_avail, rd_next_bank, rd_next_header,
                          mem_rdata, prop_bad, env_ok):
    bw = len(frm_beats)
    beat_max = (1 << bw) - 1
    frm = Frame(len(frm_header), len(frm_beats))      # its header digest stays inside the harness
    frm.valid, frm.header, frm.beats, frm.too_long, frm.bank = frm_valid, frm_header, frm_beats, frm_too_long, frm_bank
    dut = prism_ingress(
        clk=clk, rst=rst, s_axis=AxiStream.from_ports("s_axis", locals()), room_ok=room_ok,
        frame=frm,
        verdict=Verdict.wrap(valid=res_valid, admit=res_admit, bank=res_bank),
        status=PortStatus.wrap(unsupported=unsupported, in_frame=in_frame),
        bank_read=BankRead.wrap(avail=rd_avail, bank=rd_bank, header=rd_header, next_avail=rd_next_avail,
                                next_bank=rd_next_bank, next_header=rd_next_header, release=rd_release,
                                raddr=mem_raddr, raddr_hold=mem_raddr_hold, advance=mem_advance,
                                rdata=mem_rdata))
    src_ok = Signal(bool(0))
    in_rules = stream_input_rules(clk, rst, s_axis_tdata, s_axis_tlast, s_axis_tvalid, s_axis_tready, src_ok)
    frame_open = Signal(bool(0))
    stored = Signal(bool(0))
    count = Signal(intbv(0)[bw:])
    expect_frm, expect_uns = Signal(bool(0)), Signal(bool(0))
    expect_beats = Signal(intbv(0)[bw:])
    pend_push, pend_pop, adm_push, adm_pop = (Signal(bool(0)) for _ in range(4))
    pend_head, pend_n = Signal(intbv(0)[2:]), Signal(intbv(0, min=0, max=4))
    pend0, pend1, pend2 = (Signal(intbv(0)[2:]) for _ in range(3))
    adm_head, adm_n = Signal(intbv(0)[2:]), Signal(intbv(0, min=0, max=4))
    adm0, adm1, adm2 = (Signal(intbv(0)[2:]) for _ in range(3))
    pending = bank_fifo(clk, rst, pend_push, frm_bank, pend_pop, pend_head, pend_n, pend0, pend1, pend2)
    admitted = bank_fifo(clk, rst, adm_push, res_bank, adm_pop, adm_head, adm_n, adm0, adm1, adm2)
    b0, b1, b2, b3, b4 = (Signal(bool(0)) for _ in range(5))
    up = Signal(bool(0))                       # out of reset for a cycle (the ingress starts then)
    fill_bank = Signal(intbv(0)[2:])           # the bank the next stored frame fills: stored frames mod 3
    must_take = Signal(bool(0))                # an offered beat the ingress may not hold back

    @always_comb
    def fifo_events():
        pend_push.next = frm_valid
        pend_pop.next = res_valid
        adm_push.next = res_valid and res_admit
        adm_pop.next = rd_release

    @always_seq(clk.posedge, reset=rst)
    def frames():
        cls = intbv(0)[4:]
        cls[:] = s_axis_tdata[F_CLASS_END:F_CLASS_LSB]
        expect_frm.next = 0
        expect_uns.next = 0
        up.next = 1
        completes = False          # a stored frame's TLAST beat is taken: the next frame fills the next bank
        if s_axis_tvalid and s_axis_tready and s_axis_tlast:
            if frame_open:
                completes = bool(stored)
            else:
                completes = cls == CLASS_CONTROL or cls == CLASS_DATA
        if completes:
            if fill_bank == 2:
                fill_bank.next = 0
            else:
                fill_bank.next = fill_bank + 1
        if s_axis_tvalid and s_axis_tready:
            if not frame_open:
                is_stored = cls == CLASS_CONTROL or cls == CLASS_DATA
                stored.next = is_stored
                if s_axis_tlast:
                    expect_frm.next = is_stored
                    expect_uns.next = not is_stored
                    expect_beats.next = 1
                else:
                    frame_open.next = 1
                    count.next = 1
            else:
                if s_axis_tlast:
                    expect_frm.next = stored
                    expect_uns.next = not stored
                    frame_open.next = 0
                    if count != beat_max:
                        expect_beats.next = count + 1
                    else:
                        expect_beats.next = count
                elif count != beat_max:
                    count.next = count + 1

    @always_comb
    def check():
        in_pend = frm_bank == pend0 and pend_n >= 1 or frm_bank == pend1 and pend_n >= 2 or \
            frm_bank == pend2 and pend_n >= 3
        in_adm = frm_bank == adm0 and adm_n >= 1 or frm_bank == adm1 and adm_n >= 2 or \
            frm_bank == adm2 and adm_n >= 3
        b0.next = not rst and (frm_valid != expect_frm or unsupported != expect_uns)
        b1.next = not rst and frm_valid and frm_beats != expect_beats
        b2.next = not rst and frm_valid and (frm_bank == 3 or in_pend or in_adm)
        b3.next = not rst and (rd_avail != (adm_n != 0) or (rd_avail and rd_bank != adm_head))
        b4.next = not rst and must_take and not s_axis_tready

    @always_comb
    def liveness():
        cls = intbv(0)[4:]
        cls[:] = s_axis_tdata[F_CLASS_END:F_CLASS_LSB]
        busy = fill_bank == pend0 and pend_n >= 1 or fill_bank == pend1 and pend_n >= 2 or \
            fill_bank == pend2 and pend_n >= 3 or fill_bank == adm0 and adm_n >= 1 or \
            fill_bank == adm1 and adm_n >= 2 or fill_bank == adm2 and adm_n >= 3
        must_take.next = up and s_axis_tvalid and (frame_open or not (cls == CLASS_CONTROL or cls == CLASS_DATA) or
                                                   (room_ok and not busy))

    @always_comb
    def environment():
        ok = True
        if not src_ok:
            ok = False
        if res_valid and (pend_n == 0 or res_bank != pend_head):
            ok = False
        if rd_release and not rd_avail:
            ok = False
        env_ok.next = ok

    @always_comb
    def pack():
        prop_bad.next = concat(b4, b3, b2, b1, b0)

    return dut, in_rules, pending, admitted, fifo_events, frames, check, liveness, environment, pack


# ---------------------------------------------------------------------------------------------
# prism_fp32_bank (the node's FP32_ARRIVAL banks): reservations against read-after-write hazards,
# and the sums the lanes hand out, with the FP32 adder abstracted
# ---------------------------------------------------------------------------------------------
FP32_BANK_PROPERTIES = (
    ("no_raw_hazard", "no operation reaches the lanes for a range that one of the last FP32_LATENCY operations "
                      "touched (its sum is still in the adder: a read-after-write hazard)"),
    ("reservations_exact", "the bank's reservation bitmap (reserved) marks a range of the bank exactly when it "
                           "is one of the last FP32_LATENCY operations' (no needless stall: other ranges enter "
                           "every cycle)"),
    ("sums_exact", "every read-out gives o_valid exactly 3 cycles after it is taken, and a read-out of the tracked "
                   "range hands out on the tracked lane the sum of every value added to that lane since the last "
                   "read-out, clear or reset (no update lost, none counted twice)"),
)
# The environment (env_ok): the arbiter's contract (prism_arrival_banks): a port group or a read-out
# that uses this bank is taken only while its range is not reserved (reserved); never both ports' groups in this
# bank in one cycle (a read-out offered with a group that uses the bank is the bank's to drop); ranges below BANKS x
# ROWS; clear only with nothing in flight (no operation taken in the last FP32_LATENCY + 1 cycles);
# the tracked range is one of the bank's
STANDIN_WIDTH = 4           # bits of the stand-in adder's sums


@block
def int_add_standin(clk, rst, in_valid, in_a, in_b, in_tag, out_valid, out_result, out_tag, LATENCY=4, WIDTH=4):
    """A stand-in for fp32_add with its ports, its LATENCY and its valid/tag pipeline: out_result is
    (in_a + in_b) mod 2^WIDTH on the low WIDTH bits (the rest 0), LATENCY edges after in_valid.  An
    integer sum the solver can follow, where an FP32 sum would have to be bit-blasted; -0.0, the
    operand an empty row starts from (0x80000000), is its identity, as it is for fp32_add.  The
    pipeline is three shift registers, stage j (0: the first register) at bit j of `valids` and
    field j of `tags` and `sums`; as in fp32_add, a reset clears the valid flags only."""
    n = LATENCY
    tw = len(in_tag)
    mask = (1 << WIDTH) - 1
    valids = Signal(modbv(0)[n:])
    tags = Signal(modbv(0)[n * tw:])
    sums = Signal(modbv(0)[n * WIDTH:])

    @always_seq(clk.posedge, reset=None)
    def pipeline():
        s = modbv(0)[WIDTH:]
        s[:] = in_a[WIDTH:] + in_b[WIDTH:]
        if rst:
            valids.next = 0
        else:
            valids.next = (valids << 1) | in_valid
        tags.next = (tags << tw) | in_tag
        sums.next = (sums << WIDTH) | s

    @always_comb
    def outputs():
        out_valid.next = valids[n - 1]
        out_tag.next = tags[n * tw:(n - 1) * tw]
        out_result.next = sums[n * WIDTH:(n - 1) * WIDTH]

    return pipeline, outputs


def _standin_adder(extra):
    """fp32_add's signature, built as int_add_standin with EXTRA cycles of latency on top of the
    LATENCY the lane asks for (extra = 1: lanes one cycle slower than the bank's reservations)."""
    @block
    def fp32_add_standin(clk, rst, in_valid, in_a, in_b, in_tag, out_valid, out_result, out_tag, LATENCY=4):
        return int_add_standin(clk, rst, in_valid, in_a, in_b, in_tag, out_valid, out_result, out_tag,
                               LATENCY=LATENCY + extra, WIDTH=STANDIN_WIDTH)
    return fp32_add_standin


@block
def bank_group(row, lanes, in_bank, first, mask, BANK=1, BB=2):
    """A port's group (its first row, its lanes' mask) as bank BANK of 2**BB sees it: its range in
    this bank is row + kb, kb = (BANK - row) mod 2**BB (first); the bank takes part (in_bank) when
    kb < 4 and the group has that range's first lane; mask: the group's lanes in that range."""
    @always_comb
    def decode():
        kb = modbv(0)[BB:]
        r = modbv(0)[8:]
        m = intbv(0)[64:]
        kb[:] = BANK - row[BB:0]
        r[:] = row + kb
        m[:] = lanes >> (kb * 16)
        in_bank.next = kb < 4 and m[0] == 1
        first.next = r
        mask.next = m[16:0]

    return decode


@block
def prism_fp32_bank_harness(clk, rst, clear, p0_take, p0_row, p0_lanes, p0_value, p1_take, p1_row, p1_lanes,
                            p1_value, rd_take, rd_row, trk_row, trk_lane, reserved, o_valid, o_data,
                            prop_bad, env_ok, BANK=1, BANKS=4, ROWS=2, FP32_LATENCY=2, LANE_EXTRA=0):
    """One FP32 bank with its lanes, each lane's fp32_add replaced by int_add_standin (same ports,
    same latency, an integer sum of STANDIN_WIDTH bits): the bank is built while the lanes' module
    names the stand-in as its adder (the design's files are not touched), so the proof, the
    Icarus replay and the MyHDL replay all run the same abstraction.

    The checker works out from the inputs which operation the bank takes at each edge (port 0's
    range in this bank, else port 1's, else a read-out of this bank) and keeps the last FP32_LATENCY
    of them: a new operation on one of those ranges is a hazard.  It also follows one element, the
    tracked lane `trk_lane` of the tracked row `trk_row` (range trk_row x BANKS + BANK; free inputs
    held constant, so the solver picks any): the sum of the values added to it since the last
    read-out, clear or reset, which a read-out must hand out 3 cycles after it is taken.  Every
    element of a port's group carries the same free 32-bit value (p{P}_value), so the tracked lane
    gets it whenever the group's mask includes it.
    LANE_EXTRA: cycles added to the lanes' adders
    (1: the lanes one cycle slower than the reservation window, a broken variant)."""
    from myhdl import ConcatSignal
    L = FP32_LATENCY
    W = STANDIN_WIDTH
    BB = BANKS.bit_length() - 1
    LIMIT = BANKS * ROWS
    QUIET = L + 1                           # cycles without an operation before a clear
    values0 = ConcatSignal(*([p0_value] * 64))
    values1 = ConcatSignal(*([p1_value] * 64))
    real_adder = lane_module.fp32_add
    lane_module.fp32_add = _standin_adder(LANE_EXTRA)
    try:
        dut = prism_fp32_bank(**ports_of(prism_fp32_bank, locals(), p0_values=values0, p1_values=values1),
                              BANK=BANK, BANKS=BANKS, ROWS=ROWS, FP32_LATENCY=L)
    finally:
        lane_module.fp32_add = real_adder
    seen = Signal(modbv(0)[9 * L:])        # the checker's last L operations (valid | range), newest lowest
    in0, in1, in_rd = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))     # each uses this bank
    r0, r1 = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    m0, m1 = Signal(intbv(0)[16:]), Signal(intbv(0)[16:])                  # the group's lanes in this bank
    op_valid = Signal(bool(0))
    op_range = Signal(intbv(0)[8:])
    busy0, busy1, busy_rd = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    bad_hazard, bad_free, bad_sum = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    # the tracked element
    trk_range = Signal(intbv(0)[8:])
    trk_add = Signal(bool(0))              # this cycle's operation adds to it ...
    trk_value = Signal(intbv(0)[W:])       # ... this value
    trk_read = Signal(bool(0))             # this cycle's operation reads its range out
    rd_now = Signal(bool(0))               # this cycle's operation is a read-out (any range of the bank)
    exp_sum = Signal(modbv(0)[W:])         # its sum as of the operations taken so far
    exp_next = Signal(modbv(0)[W:])        # ... after this cycle's
    exp_line = Signal(modbv(0)[W * (L + 2):])   # exp_sum after each of the last L + 2 edges, newest lowest:
    #                                      the sum the row holds once the lanes have written them back
    rd_pipe = Signal(intbv(0)[3:])         # read-outs taken 1, 2, 3 cycles ago (bit 0: 1 cycle); read_line
    #                                        below says which were of the tracked range
    add_line = Signal(modbv(0)[L + 2:])    # the operations taken at each of the last L + 2 edges (newest at
    read_line = Signal(modbv(0)[L + 2:])   # bit 0): an add to the tracked element, a read-out of its range
    exp_pipe = Signal(modbv(0)[3 * W:])    # ... and the sum each must hand out
    since_op = Signal(intbv(15, min=0, max=16))  # cycles since an operation was last taken (saturating)
    n_adds = Signal(intbv(0)[2:])          # values in the tracked sum (saturating at 3)
    n_adds_next = Signal(intbv(0)[2:])
    many_pipe = Signal(intbv(0)[3:])       # read-outs of a tracked sum of two values or more
    lane_sum = Signal(intbv(0)[W:])        # o_data's tracked lane

    group0 = bank_group(p0_row, p0_lanes, in0, r0, m0, BANK=BANK, BB=BB)
    group1 = bank_group(p1_row, p1_lanes, in1, r1, m1, BANK=BANK, BB=BB)

    @always_comb
    def decode():
        in_rd.next = rd_row[BB:0] == BANK

    @always_comb
    def taken():
        if p0_take and in0:
            op_valid.next = 1
            op_range.next = r0
        elif p1_take and in1:
            op_valid.next = 1
            op_range.next = r1
        elif rd_take and in_rd:
            op_valid.next = 1
            op_range.next = rd_row
        else:
            op_valid.next = 0
            op_range.next = 0

    @always_comb
    def tracked():
        tr = intbv(0)[8:]
        tr[:] = trk_row * BANKS + BANK
        trk_range.next = tr
        trk_add.next = 0
        trk_read.next = 0
        rd_now.next = 0
        trk_value.next = 0
        if p0_take and in0:
            trk_add.next = r0 == tr and m0[trk_lane] == 1
            trk_value.next = p0_value[W:0]
        elif p1_take and in1:
            trk_add.next = r1 == tr and m1[trk_lane] == 1
            trk_value.next = p1_value[W:0]
        elif rd_take and in_rd:
            rd_now.next = 1
            trk_read.next = rd_row == tr

    @always_comb
    def expected():
        e = modbv(0)[W:]
        n = intbv(0)[2:]
        e[:] = exp_sum
        n[:] = n_adds
        if clear:
            e[:] = 0
            n[:] = 0
        if trk_read:
            e[:] = 0
            n[:] = 0
        elif trk_add:
            e[:] = e + trk_value
            if n != 3:
                n[:] = n + 1
        exp_next.next = e
        n_adds_next.next = n

    @always_comb
    def busy():
        ent = intbv(0)[9:]
        hit0 = bool(0)
        hit1 = bool(0)
        hit_rd = bool(0)
        for i in range(L):
            ent[:] = (seen >> (9 * i)) & 0x1FF
            if ent[8] and ent[8:0] == r0:
                hit0 = True
            if ent[8] and ent[8:0] == r1:
                hit1 = True
            if ent[8] and ent[8:0] == rd_row:
                hit_rd = True
        busy0.next = hit0
        busy1.next = hit1
        busy_rd.next = hit_rd

    @always_seq(clk.posedge, reset=rst)
    def history():
        ent = intbv(0)[9:]
        ent[:] = 0
        if op_valid:
            ent[8] = 1
            ent[8:0] = op_range
        seen.next = (seen << 9) | ent

    @always_seq(clk.posedge, reset=rst)
    def follow():
        e = modbv(0)[3 * W:]
        line = modbv(0)[W * (L + 2):]
        e[:] = exp_pipe << W
        line[:] = exp_line << W
        exp_sum.next = exp_next
        if clear:                   # nothing in flight (the environment's rule): every row is empty now
            exp_line.next = 0
            exp_pipe.next = e       # a read-out taken with the clear finds its row empty
        else:
            exp_line.next = line | exp_sum
            exp_pipe.next = e | exp_sum
        rd_pipe.next = concat(rd_pipe[2:0], rd_now)
        add_line.next = (add_line << 1) | trk_add
        read_line.next = (read_line << 1) | trk_read
        n_adds.next = n_adds_next
        many_pipe.next = concat(many_pipe[2:0], trk_read and n_adds >= 2 and not clear)
        if op_valid:
            since_op.next = 0
        elif since_op != 15:
            since_op.next = since_op + 1

    @always_comb
    def read_lane():
        lane_sum.next = (o_data >> (32 * trk_lane)) & ((1 << W) - 1)

    @always_comb
    def check():
        hazard = bool(0)
        if op_valid:
            if p0_take and in0:
                hazard = bool(busy0)
            elif p1_take and in1:
                hazard = bool(busy1)
            else:
                hazard = bool(busy_rd)
        bad_hazard.next = not rst and hazard
        bad_free.next = not rst and (reserved[r0[8:BB]] != busy0 or reserved[r1[8:BB]] != busy1 or
                                     (in_rd and reserved[rd_row[8:BB]] != busy_rd))
        bad_sum.next = not rst and (o_valid != rd_pipe[2] or
                                    (read_line[2] and lane_sum != exp_pipe[3 * W:2 * W]))

    @always_comb
    def environment():
        ok = True
        if p0_take and in0 and reserved[r0[8:BB]]:
            ok = False
        if p1_take and in1 and reserved[r1[8:BB]]:
            ok = False
        if p0_take and in0 and p1_take and in1:
            ok = False
        if rd_take and in_rd and reserved[rd_row[8:BB]]:
            ok = False
        if p0_take and in0 and r0 >= LIMIT:
            ok = False
        if p1_take and in1 and r1 >= LIMIT:
            ok = False
        if rd_take and in_rd and rd_row >= LIMIT:
            ok = False
        if clear and since_op < QUIET:
            ok = False
        if trk_row >= ROWS:
            ok = False
        env_ok.next = ok

    @always_comb
    def pack():
        prop_bad.next = concat(bad_sum, bad_free, bad_hazard)

    return (dut, group0, group1, decode, taken, tracked, expected, busy, history, follow, read_lane, check,
            environment, pack)


# ---------------------------------------------------------------------------------------------
# prism_control (the node's validation, admission and STAGE/COMMIT/ABORT)
# ---------------------------------------------------------------------------------------------
CONTROL_PROPERTIES = (
    ("verdict_order", "every verdict answers the oldest unanswered frame(s) in processing order (order of "
                      "completion, port 0 first in a tie), on that frame's port with its bank; no verdict "
                      "without a frame: a frame is answered once, so its bank is never admitted twice"),
    ("verdict_kind", "a CONTROL frame is never admitted (its bank is freed) and counts as CONTROL; a DATA frame "
                     "is admitted exactly when its counter event says admitted"),
    ("closed_after_reset", "after a reset no DATA frame is admitted until a COMMIT the node accepted (answered ACK) "
                           "has been processed"),
    ("closed_after_abort", "no DATA frame carrying the op_id and generation of an ABORT processed since the last "
                           "COMMIT the node accepted (answered ACK) is admitted (nothing enters the datapath for an "
                           "aborted operation)"),
    ("response_order", "every answered CONTROL frame queues exactly one response, in processing order, carrying "
                       "its request opcode and op_id/generation (the response each COMMIT's and ABORT's outcome "
                       "is read from)"),
    ("verdict_live", "bounded liveness: the oldest frame waiting for a verdict is answered in the cycle after it "
                     "completes, unless it is a COMMIT and the datapath is busy (the protocol holds it)"),
)
# The environment (env_ok): each port has at most three frames waiting for a verdict (its ingress has
# three banks: a frame completes only while fewer are waiting); the responses queued, plus one per
# CONTROL frame waiting or completing, stay within RESPONSES (16, the queue's size, is what the
# ingresses' room_ok guarantees); headers, beat counts, op_finished, dp_idle, resp_pop and ord_pop are
# free
CONTROL_DEPTH = 6          # frames waiting for a verdict at most: 3 banks x 2 ports
CE = 12 + ID_BITS          # checker entry: ids[35:12] one_beat[11] opcode[10:7] class[6:3] bank[2:1] port[0]
RQ = 16                    # the response queue's entries


@block
def control_entry(bank, header, beats, entry, PORT=0):
    """The checker's entry (CE bits) for a frame completing on port PORT: ids[35:12]
    one_beat[11] opcode[10:7] class[6:3] bank[2:1] port[0]."""
    @always_comb
    def arrival():
        e = intbv(0)[CE:]
        e[:] = 0
        e[0] = PORT
        e[3:1] = bank
        e[7:3] = header[F_CLASS_END:F_CLASS_LSB]
        e[11:7] = header[F_OPCODE_END:F_OPCODE_LSB]
        e[11] = beats == 1
        e[CE:12] = header[F_GENERATION_END:F_OP_ID_LSB]
        entry.next = e

    return arrival


@block
def prism_control_harness(clk, rst, f0_valid, f0_header, f0_beats, f0_too_long, f0_bank,
                          f1_valid, f1_header, f1_beats, f1_too_long, f1_bank, f0_next_header, f1_next_header,
                          resp_pop, op_finished, dp_idle, ord_pop,
                          r0_valid, r0_admit, r0_bank, r1_valid, r1_admit, r1_bank, ev0_valid, ev0_code,
                          ev1_valid, ev1_code, resp_valid, resp_data, room_ok, clear, act_policy, act_in_fmt,
                          act_exact_in, act_out_fmt, act_count, act_contributors, act_expected, act_recipients, act_op_id,
                          act_generation, act_busy, ord_valid, ord_port, prop_bad, env_ok, CAPACITY=32,
                          RESPONSES=RQ):
    """The checker keeps the frames waiting for a verdict in processing order (each frame's port,
    bank, class, opcode, one-beat flag and op_id/generation) and follows the verdicts: they must
    take the oldest frames, in order.

    A COMMIT's and an ABORT's outcome is what the node answers: ACK or NACK, in the response it
    queues for TX port 0.  The checker mirrors the response queue (one entry per answered CONTROL
    frame, in processing order: COMMIT, one-beat ABORT or other, and its op_id/generation) and
    reads each outcome when its response leaves the head (resp_valid and resp_pop).  It keeps the
    operation state as the responses resolved so far give it (`res_*`: no accepted COMMIT since
    the reset; the last ABORT, not followed by an accepted COMMIT of its op_id/generation).  A DATA
    frame is admitted correctly only if the responses ahead of it (resolved, or still queued)
    hold an accepted COMMIT since the reset, and, if the last ABORT ahead of it carries its
    op_id/generation, an accepted COMMIT of that op_id/generation after it.  Where the outcomes
    of the queued COMMITs decide, the admission waits (`sus_*`) with the set of COMMITs that
    could justify it, and fails when the last of them is refused (NACK): a refused COMMIT never
    reopens anything.  One such waiting admission is followed per property at a time (a later
    one admitted before it is judged is not checked).  (An operation is only ever reopened by a
    COMMIT of its own op_id/generation, so an admission after its ABORT needs one.)
    RESPONSES: the environment keeps the responses queued, plus one per CONTROL frame waiting or
    completing, within this many (RQ, the queue's size, is what the ingresses' room_ok guarantees;
    a smaller bound restricts the environment, for a faster proof)."""
    # the frames, with the header digest the ingress forms over a frame's beats
    f0, f1 = Frame(len(f0_header), len(f0_beats)), Frame(len(f1_header), len(f1_beats))
    f0.valid, f0.header, f0.beats, f0.too_long, f0.bank = f0_valid, f0_header, f0_beats, f0_too_long, f0_bank
    f1.valid, f1.header, f1.beats, f1.too_long, f1.bank = f1_valid, f1_header, f1_beats, f1_too_long, f1_bank
    digest0, digest1 = frame_digest(f0_header, f0), frame_digest(f1_header, f1)
    # the digest of the frame each port completes next, which the control reads a cycle ahead: from
    # a header the environment gives freely (the ingress gives the header of the frame it receives)
    ahead0, ahead1 = frame_digest_ahead(f0_next_header, f0), frame_digest_ahead(f1_next_header, f1)
    dut = prism_control(
        clk=clk, rst=rst,
        p0_frame=f0, p1_frame=f1,
        p0_verdict=Verdict.wrap(valid=r0_valid, admit=r0_admit, bank=r0_bank),
        p1_verdict=Verdict.wrap(valid=r1_valid, admit=r1_admit, bank=r1_bank),
        p0_event=CounterEvent.wrap(valid=ev0_valid, code=ev0_code),
        p1_event=CounterEvent.wrap(valid=ev1_valid, code=ev1_code),
        responses=Responses.wrap(valid=resp_valid, data=resp_data, pop=resp_pop), room_ok=room_ok,
        op_finished=op_finished, dp_idle=dp_idle,
        op=ActiveOp.wrap(clear=clear, policy=act_policy, in_fmt=act_in_fmt, exact_in=act_exact_in,
                         out_fmt=act_out_fmt, count=act_count,
                         contributors=act_contributors, expected=act_expected, recipients=act_recipients,
                         op_id=act_op_id, generation=act_generation, busy=act_busy),
        order=AdmissionOrder.wrap(valid=ord_valid, port=ord_port, valid2=Signal(bool(0)), port2=Signal(bool(0)),
                                  pop=ord_pop), CAPACITY=CAPACITY)
    QW = CE * CONTROL_DEPTH
    ENTRY = (1 << CE) - 1         # one entry's bits (the slot a frame is written to)
    IDS = (1 << ID_BITS) - 1
    waiting = Signal(intbv(0)[QW:])            # frames without a verdict, oldest lowest
    n_wait = Signal(intbv(0, min=0, max=8))
    n_wait0 = Signal(intbv(0, min=0, max=8))   # ... of port 0
    arrive0 = Signal(intbv(0)[CE:])
    arrive1 = Signal(intbv(0)[CE:])
    n_ans = Signal(intbv(0, min=0, max=3))     # verdicts this cycle
    # The response queue's mirror, oldest lowest: a COMMIT's response, a one-beat ABORT's, the ids.
    # Registered (`rq_*`), with this cycle's answered CONTROL frames (`*_now`: the block's queue in
    # this cycle), after this cycle's pop (`*_next`).
    rq_commit, rq_abort = Signal(intbv(0)[RQ:]), Signal(intbv(0)[RQ:])
    rq_ids = Signal(intbv(0)[ID_BITS * RQ:])
    n_rq = Signal(intbv(0, min=0, max=RQ + 3))
    rq_commit_now, rq_abort_now = Signal(modbv(0)[RQ:]), Signal(modbv(0)[RQ:])
    rq_ids_now = Signal(modbv(0)[ID_BITS * RQ:])
    n_rq_now = Signal(intbv(0, min=0, max=RQ + 3))
    rq_commit_next, rq_abort_next = Signal(modbv(0)[RQ:]), Signal(modbv(0)[RQ:])
    rq_ids_next = Signal(modbv(0)[ID_BITS * RQ:])
    n_rq_next = Signal(intbv(0, min=0, max=RQ + 3))
    # the operation state as the responses resolved so far give it
    res_closed, res_closed_next = Signal(bool(1)), Signal(bool(1))
    # the last ABORT processed (in processing order), its ids, and the queued COMMITs of those ids after
    # it (a mask of queue positions): it stays aborted unless one of them turns out accepted
    abt, abt_next = Signal(bool(0)), Signal(bool(0))
    abt_ids, abt_ids_next = Signal(intbv(0)[ID_BITS:]), Signal(intbv(0)[ID_BITS:])
    abt_cand, abt_cand_next = Signal(modbv(0)[RQ:]), Signal(modbv(0)[RQ:])
    # an admission waiting for the outcome of the queued COMMITs that could justify it (a mask of
    # queue positions, like the mirror: it shifts as responses leave)
    sus_r, sus_r_now, sus_r_next = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    mask_r, mask_r_now, mask_r_next = (Signal(modbv(0)[RQ:]) for _ in range(3))
    sus_a, sus_a_now, sus_a_next = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    mask_a, mask_a_now, mask_a_next = (Signal(modbv(0)[RQ:]) for _ in range(3))
    # ... with this cycle's answered frames (for the lemmas)
    cur_aborted = Signal(bool(0))
    cur_ids = Signal(intbv(0)[ID_BITS:])
    cur_cand = Signal(modbv(0)[RQ:])
    held = Signal(bool(0))                     # the oldest waiting frame is a COMMIT and the datapath is busy
    data_closed = Signal(bool(0))              # triggers: a DATA frame answered while no accepted COMMIT ...
    data_aborted = Signal(bool(0))             # ... one of an aborted operation answered
    bad_order, bad_kind, bad_reset, bad_abort, bad_resp, bad_live = (Signal(bool(0)) for _ in range(6))
    entry0 = control_entry(f0_bank, f0_header, f0_beats, arrive0, PORT=0)
    entry1 = control_entry(f1_bank, f1_header, f1_beats, arrive1, PORT=1)

    @always_comb
    def check():
        e = intbv(0)[CE:]
        n = intbv(0, min=0, max=3)
        order_bad = bool(0)
        kind_bad = bool(0)
        reset_bad = bool(0)
        abort_bad = bool(0)
        resp_bad = bool(0)
        t_closed = bool(0)
        t_aborted = bool(0)
        admit = bool(0)
        code = intbv(0)[4:]
        qc = modbv(0)[RQ:]
        qa = modbv(0)[RQ:]
        qi = modbv(0)[ID_BITS * RQ:]
        v = modbv(0)[ID_BITS * RQ:]
        nq = intbv(0, min=0, max=RQ + 3)
        sr = bool(0)
        mr = modbv(0)[RQ:]
        sa = bool(0)
        ma = modbv(0)[RQ:]
        ab = bool(0)
        abi = intbv(0)[ID_BITS:]
        cand = modbv(0)[RQ:]
        rc = bool(0)
        ack = bool(0)
        qc[:] = rq_commit
        qa[:] = rq_abort
        qi[:] = rq_ids
        nq[:] = n_rq
        sr = bool(sus_r)
        mr[:] = mask_r
        sa = bool(sus_a)
        ma[:] = mask_a
        rc = bool(res_closed)
        ab = bool(abt)
        abi[:] = abt_ids
        cand[:] = abt_cand
        n[:] = 0
        if r0_valid:
            n[:] = n + 1
        if r1_valid:
            n[:] = n + 1
        if ev0_valid != r0_valid or ev1_valid != r1_valid or n > n_wait:
            order_bad = True
        if n == 2:
            if waiting[0] == waiting[CE]:
                order_bad = True
            elif not waiting[0] and (waiting[3:1] != r0_bank or waiting[CE + 3:CE + 1] != r1_bank):
                order_bad = True
            elif waiting[0] and (waiting[3:1] != r1_bank or waiting[CE + 3:CE + 1] != r0_bank):
                order_bad = True
        if n == 1:
            if waiting[0] != r1_valid:
                order_bad = True
            elif r1_valid and waiting[3:1] != r1_bank:
                order_bad = True
            elif r0_valid and waiting[3:1] != r0_bank:
                order_bad = True
        # the answered frames in processing order
        w = modbv(0)[QW:]
        w[:] = waiting
        for i in range(2):
            if i < n:
                e[:] = w[CE:0]
                w[:] = w >> CE
                if e[0]:
                    admit = bool(r1_admit)
                    code[:] = ev1_code
                else:
                    admit = bool(r0_admit)
                    code[:] = ev0_code
                if e[7:3] == CLASS_CONTROL:
                    if admit or code != EV_CONTROL:
                        kind_bad = True
                    # its response joins the queue
                    if nq < RQ:
                        if e[11:7] == OP_COMMIT:
                            qc[nq] = 1
                        if e[11] and e[11:7] == OP_ABORT:
                            qa[nq] = 1
                        v[:] = e[CE:12]
                        qi[:] = (qi & ~(IDS << (ID_BITS * nq))) | (v << (ID_BITS * nq))
                        if e[11] and e[11:7] == OP_ABORT:
                            ab = True
                            abi[:] = e[CE:12]
                            cand[:] = 0
                        elif e[11:7] == OP_COMMIT and ab and e[CE:12] == abi:
                            cand[nq] = 1
                    nq[:] = nq + 1
                else:
                    if code == EV_CONTROL or admit != (code == EV_ADMITTED):
                        kind_bad = True
                    if rc:
                        t_closed = True
                    if ab and e[CE:12] == abi:
                        t_aborted = True
                    if admit:
                        # After the reset: an accepted COMMIT resolved, or one of the queued COMMITs
                        # ahead of it (the first to be refused... the last refusal fails it).
                        if rc:
                            if qc == 0:
                                reset_bad = True
                            elif not sr:
                                sr = True
                                mr[:] = qc
                        # The last ABORT ahead of it: if it carries its ids, a queued COMMIT of those
                        # ids after it must be accepted.
                        if ab and e[CE:12] == abi:
                            if cand == 0:
                                abort_bad = True
                            elif not sa:
                                sa = True
                                ma[:] = cand
        n_ans.next = n
        data_closed.next = t_closed
        data_aborted.next = t_aborted
        # the head of the response queue: one response per answered CONTROL frame, in order, with its
        # request opcode and op_id/generation
        if resp_valid != (nq != 0):
            resp_bad = True
        if resp_valid and ((resp_data[F_REQUEST_OPCODE_END:F_REQUEST_OPCODE_LSB] == OP_COMMIT) != qc[0] or
                           resp_data[F_GENERATION_END:F_OP_ID_LSB] != qi[ID_BITS:0] or
                           (qa[0] and resp_data[F_REQUEST_OPCODE_END:F_REQUEST_OPCODE_LSB] != OP_ABORT)):
            resp_bad = True
        rq_commit_now.next = qc
        rq_abort_now.next = qa
        rq_ids_now.next = qi
        n_rq_now.next = nq
        sus_r_now.next = sr
        mask_r_now.next = mr
        sus_a_now.next = sa
        mask_a_now.next = ma
        cur_aborted.next = ab
        cur_ids.next = abi
        cur_cand.next = cand
        # the head leaves: its outcome resolves
        if resp_valid and resp_pop and nq != 0:
            ack = resp_data[F_OPCODE_END:F_OPCODE_LSB] == OP_ACK
            if qc[0] and ack:
                rc = False
                if cand[0]:         # a COMMIT of the aborted ids after the ABORT was accepted
                    ab = False
                    cand[:] = 0
                if mr[0]:           # a COMMIT that justifies the waiting admission was accepted
                    sr = False
                if ma[0]:
                    sa = False
            qc[:] = qc >> 1
            cand[:] = cand >> 1
            qa[:] = qa >> 1
            qi[:] = qi >> ID_BITS
            mr[:] = mr >> 1
            ma[:] = ma >> 1
            nq[:] = nq - 1
            if sr and mr == 0:      # every COMMIT that could justify it was refused
                reset_bad = True
                sr = False
            if sa and ma == 0:
                abort_bad = True
                sa = False
        if not sr:
            mr[:] = 0
        if not sa:
            ma[:] = 0
        rq_commit_next.next = qc
        rq_abort_next.next = qa
        rq_ids_next.next = qi
        n_rq_next.next = nq
        res_closed_next.next = rc
        abt_next.next = ab
        abt_ids_next.next = abi
        abt_cand_next.next = cand
        sus_r_next.next = sr
        mask_r_next.next = mr
        sus_a_next.next = sa
        mask_a_next.next = ma
        bad_order.next = not rst and order_bad
        bad_kind.next = not rst and kind_bad
        bad_reset.next = not rst and reset_bad
        bad_abort.next = not rst and abort_bad
        bad_resp.next = not rst and resp_bad

    @always_comb
    def liveness():
        hold = bool(0)
        if n_wait != 0 and waiting[7:3] == CLASS_CONTROL and waiting[11] and waiting[11:7] == OP_COMMIT and act_busy:
            hold = True
        held.next = hold
        bad_live.next = not rst and n_wait != 0 and n_ans == 0 and not hold

    @always_seq(clk.posedge, reset=rst)
    def follow():
        q = modbv(0)[QW + 2 * CE:]
        e = intbv(0)[CE:]
        v = modbv(0)[QW + 2 * CE:]
        cnt = intbv(0, min=0, max=10)
        cnt0 = intbv(0, min=0, max=10)
        q[:] = waiting
        cnt[:] = n_wait
        cnt0[:] = n_wait0
        # the verdicts of this cycle take the oldest frames
        for i in range(2):
            if i < n_ans and cnt != 0:
                e[:] = q[CE:0]
                if not e[0] and cnt0 != 0:
                    cnt0[:] = cnt0 - 1
                q[:] = q >> CE
                cnt[:] = cnt - 1
        # this cycle's completed frames join them, port 0 first
        if f0_valid and cnt < CONTROL_DEPTH:
            v[:] = arrive0
            q[:] = (q & ~(ENTRY << (CE * cnt))) | (v << (CE * cnt))
            cnt[:] = cnt + 1
            cnt0[:] = cnt0 + 1
        if f1_valid and cnt < CONTROL_DEPTH:
            v[:] = arrive1
            q[:] = (q & ~(ENTRY << (CE * cnt))) | (v << (CE * cnt))
            cnt[:] = cnt + 1
        waiting.next = q[QW:]
        n_wait.next = cnt
        n_wait0.next = cnt0
        rq_commit.next = rq_commit_next
        rq_abort.next = rq_abort_next
        rq_ids.next = rq_ids_next
        n_rq.next = n_rq_next
        res_closed.next = res_closed_next
        abt.next = abt_next
        abt_ids.next = abt_ids_next
        abt_cand.next = abt_cand_next
        sus_r.next = sus_r_next
        mask_r.next = mask_r_next
        sus_a.next = sus_a_next
        mask_a.next = mask_a_next

    @always_comb
    def environment():
        ok = True
        control = intbv(0, min=0, max=CONTROL_DEPTH + 3)      # CONTROL frames waiting or arriving: each
        ww = modbv(0)[QW:]                                     # will queue a response
        control[:] = 0
        ww[:] = waiting
        for i in range(CONTROL_DEPTH):
            if i < n_wait and ww[7:3] == CLASS_CONTROL:
                control[:] = control + 1
            ww[:] = ww >> CE
        if f0_valid and f0_header[F_CLASS_END:F_CLASS_LSB] == CLASS_CONTROL:
            control[:] = control + 1
        if f1_valid and f1_header[F_CLASS_END:F_CLASS_LSB] == CLASS_CONTROL:
            control[:] = control + 1
        if f0_valid and n_wait0 >= 3:
            ok = False
        if f1_valid and n_wait - n_wait0 >= 3:
            ok = False
        if n_rq + control > RESPONSES:
            ok = False
        env_ok.next = ok

    @always_comb
    def pack():
        prop_bad.next = concat(bad_live, bad_resp, bad_abort, bad_reset, bad_kind, bad_order)

    return dut, digest0, digest1, ahead0, ahead1, entry0, entry1, check, liveness, follow, environment, pack


# ---------------------------------------------------------------------------------------------
# The package's work accounting: work_distributor + service_rate_estimator + the assertion monitor
# ---------------------------------------------------------------------------------------------
@block
def work_accounting_harness(clk, rst, s_axis_job_tdata, s_axis_job_tid, s_axis_job_tvalid, retry_valid, retry_slot,
                            tgt_ready, s_cmpl_valid, s_cmpl_slot, s_cmpl_gen, route_epoch, tgt_enable, tgt_stall,
                            s_axis_job_tready, retry_ready, m_job_valid, m_job_target, m_job_slot, m_job_gen,
                            m_job_tid, m_job_work, m_job_epoch, m_job_retry, dispatch_fire, retry_fire, retire_fire,
                            retire_target, retire_work, retire_tid, outstanding, outstanding_work, svc_rate,
                            rate_valid, accepted_work, completed_work, fail_work_conserved,
                            WINDOW=4):
    """accelerator_package's accounting loop without its die models: the distributor dispatches,
    the service-rate estimator counts accepted and retired work and feeds its rates back to the
    policy, and the package assertion monitor checks a_work_conserved (accepted - completed =
    outstanding work, per target, while neither counter saturates).  Completions are free (any
    slot and generation, any cycle: the dies, the completion arbiter and late duplicates from the
    transport are the environment).  As in accelerator_package, the estimator counts the
    distributor's retirements (the package fault retry_as_work, cosim/package/faults.py, makes it
    count transport retries as well)."""
    n_tgt = len(tgt_enable)
    slot_w, gen_w, epoch_w = len(m_job_slot), len(m_job_gen), len(m_job_epoch)
    n_job = 1 << slot_w
    chk_slot, chk_gen, chk_epoch = Signal(intbv(0)[slot_w:]), Signal(intbv(0)[gen_w:]), Signal(intbv(0)[epoch_w:])
    chk_live = Signal(bool(0))
    job_live = Signal(intbv(0)[n_job:])
    job_gen = Signal(intbv(0)[n_job * gen_w:])
    job_epoch = Signal(intbv(0)[n_job * epoch_w:])
    tgt_active = Signal(intbv(0)[n_tgt:])
    active_cyc = Signal(intbv(0)[len(accepted_work):])
    stall_cyc = Signal(intbv(0)[len(accepted_work):])
    # the monitor's other outputs (proved on work_distributor); names unlike the monitor's own
    # process variables (f_retire, armed, ...), which the converter's renaming would merge with them
    other_fail = [Signal(bool(0)) for _ in range(5)]
    other_armed = Signal(bool(0))
    dist = work_distributor(**ports_of(work_distributor, locals()))
    est = service_rate_estimator(
        clk, rst, dispatch_fire, m_job_target, m_job_work, retire_fire, retire_target, retire_work,
        outstanding, tgt_stall, tgt_active, svc_rate, rate_valid, accepted_work, completed_work, active_cyc,
        stall_cyc, WINDOW=WINDOW)
    mon = package_assertion_monitor(
        clk, rst, dispatch_fire, retry_fire, m_job_slot, m_job_target, tgt_enable, retire_fire, s_cmpl_slot,
        s_cmpl_gen, job_live, job_gen, job_epoch, outstanding_work, svc_rate, rate_valid, accepted_work,
        completed_work, *other_fail, fail_work_conserved, other_armed, CHECK_WORK=True)

    return dist, est, mon
