"""PRISM operation context: CONTROL (STAGE/COMMIT/ABORT) and DATA validation/admission.

Phase 2 of the SINGLE node, plus the validation and admission step of phase 1.
Both live in one process because they read and write the same context in one
order (docs/protocol.md, "Processing order"): frames are processed in the
order their last beats were accepted, port 0 first in a tie, each against the
state the earlier ones left.

Each cycle takes the completed frames (the ingress pulses) in that order and
answers them in the same edge:

  * CONTROL: STAGE fills the staged slot (replacing a staged operation) after
    the checks BAD_POLICY, BAD_FORMAT, BAD_COUNT, BAD_CONTRIBUTORS,
    BAD_RECIPIENTS, in that order; COMMIT activates the staged operation
    atomically (NO_STAGED, STAGED_MISMATCH, BUSY); ABORT ends the open operation
    (NOT_OPEN, ACTIVE_MISMATCH); other opcodes BAD_OPCODE; a request longer than
    one beat BAD_LENGTH.  Each request queues exactly one ACK/NACK response for
    TX port 0 (16-entry queue; the ingress holds new headers back while fewer
    than `RESPONSE_MARGIN` entries are free).
  * DATA: the nine validation rules in protocol order; the first failing rule
    is the drop reason (a counter event).  Admission marks the frame's ranges
    in the per-contributor duplicate map (8 x 256 range bits) and counts them.
    Under FP32_ARRIVAL the admitting port is appended to the admission-order
    queue, which the node uses to feed the FP32 banks in admission order.

Operation lifetime (docs/protocol.md, "Operation lifetime").  An operation is
*open* from its COMMIT until the admission that gives its last range all its
contributors (the admitted (contributor, range) pairs reach contributors x
ranges), or until an ABORT of it.  The datapath is *busy* from the COMMIT
until the operation's last RESULT frame is queued (`op_finished`), or, after an
ABORT, until the datapath has been quiet (`dp_idle`) for ABORT_QUIET cycles:
everything admitted before the ABORT has then been accumulated and every
block it completed queued.  A COMMIT that passes its checks while the
datapath is busy is *held*: it and every frame after it wait in a small queue
(HOLD_DEPTH entries; the three frame banks per port bound what can be
waiting) and are processed in order once the datapath is free.  So every
answer depends only on the processing order, never on timing, which is what
lets the transaction-level model predict it.

Structure (logic depth).  One verdict per port per cycle means at most two frames are
processed in a cycle: the first candidate in processing order (the oldest waiting frame, else
port 0's, else port 1's frame of this cycle) and the one after it, if it is on the other port
and the first was not held.  Both are picked up front from the hold queue's count and the valid
pulses alone.  Every candidate's checks start from registers: the ingress hands each frame over
with its header's digest (offset + n, the beats it needs, its ranges and their 256-bit mask),
the hold queue keeps the digest with the frame, and the queue shifts, so its two oldest entries
are its first two slots.  The checks that read the context are formed a cycle ahead: the
ingress registers the digest of the frame it receives at its header beat (a frame of two or
more beats completes a cycle later at the earliest), and the control checks that frame, and
every waiting frame, against the duplicate map (its contributor's row ANDed with its mask),
against each operation the edge can leave active or staged (the range rule: the active and the
staged operation, each candidate's STAGE), and for overlap with each candidate (same
contributor, intersecting [r_first, r_end)).  In the frame's cycle its duplicate check is the
early one, less a clear of the map, or an overlap with a candidate the last edge admitted; its
range rule is the early one for the operation the edge left.  A one-beat frame (never admitted)
has the range rule its drop reason reads formed in its cycle.  The checks are packed by
candidate, each ending in the flags the walk needs (a request that passes its own checks, its
reason and event code as the first frame, a DATA frame admissible against the active and the
staged operation, closing it); the two frames' pair sum against `pairs_left` (checked bit by bit
with the carry the equality implies) and their overlap are formed for each pair of candidates.
The walk selects them (explicit multiplexers).  The operation ends when an admission's pairs
equal `pairs_left`, the pairs it still needs (a register; `st_pairs` holds the staged
operation's, formed at STAGE).  Of the second frame's outcomes only whether the operation is
open for it (`open_1`) is late: every value it decides (the hold queue, whose slot i takes
waiting frame i + d for the d frames answered; the map; the pairs left; the order queue; the
verdicts and events; the open flag) is formed for both cases from values formed beside the walk
(no adder follows a verdict), and open_1 selects last.

`op.clear` pulses when a COMMIT activates an operation and when an ABORT's drain
is over: the datapath forgets the previous operation (accumulators, counts,
result bookkeeping).

Ports (buses in hdl/node/prism_buses.py; widths from the signals):
    clk, rst                    clock; synchronous active-high reset
    p0_frame, p1_frame          Frame: a stored frame from ingress 0, 1 (headers equally wide, >= 96 bits;
                                beat counts equally wide)
    p0_verdict, p1_verdict      out: Verdict for a frame of port 0, 1 (frees or queues its bank)
    p0_event, p1_event          out: CounterEvent of that verdict: 0 CONTROL answered, 1 DATA admitted,
                                2 + k drop reason k (too_long ... duplicate)
    responses                   Responses: out: the head of the response queue (44-bit response header);
                                in: pop, the egress has taken the head
    room_ok                     out: the response queue has RESPONSE_MARGIN entries free (spec.frames)
    op_finished                 pulse: the active operation's last RESULT frame is queued
    dp_idle                     the datapath holds no work (admitted frames, groups, ranges,
                                tiles or RESULT frames in progress); watched after an ABORT
    op                          out: ActiveOp, the active operation (valid while op.busy; op.expected is
                                the popcount of the set, 4 bits; op.count 13 bits, op.contributors 8);
                                op.clear pulses when the datapath forgets the previous operation;
                                op.busy: an operation is open or its datapath is busy (the node's `busy`)
    order                       AdmissionOrder: out: the oldest admitted FP32_ARRIVAL frame not yet fed
                                (valid, its port) and the one behind it (valid2, port2); in: pop, that
                                frame started at the last edge (readers start frames in admission order)

Parameters:
    CAPACITY    element capacity of the node (1 .. 4096); STAGE with E > CAPACITY is BAD_COUNT
"""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

from hdl.node.prism_buses import FRAME_END_BITS, NR_BITS, ROW_BITS

from spec.formats import FMT_AUTO, FMT_EXACT
from spec.frames import (ACTIVE_MISMATCH, BAD_CONTRIBUTORS, BAD_COUNT, BAD_FORMAT, BAD_LENGTH, BAD_OPCODE,
                         BAD_POLICY, BAD_RECIPIENTS, BUSY, CLASS_CONTROL, CTR_ADMITTED,
                         CTR_CONTROL, CTR_DROP, DROP_REASONS, F_CLASS_END, F_CLASS_LSB, F_CONTRIBUTOR_END,
                         F_CONTRIBUTOR_LSB, F_CONTRIBUTORS_END, F_CONTRIBUTORS_LSB, F_COUNT_END, F_COUNT_LSB,
                         F_DATA_FORMAT_END, F_DATA_FORMAT_LSB, F_GENERATION_END, F_GENERATION_LSB,
                         F_IN_FORMAT_END, F_IN_FORMAT_LSB, F_MODE_LSB, F_N_END, F_N_LSB, F_OFFSET_END,
                         F_OFFSET_LSB, F_OP_ID_END, F_OP_ID_LSB, F_OPCODE_END, F_OPCODE_LSB, F_POLICY_END,
                         F_POLICY_LSB, F_RECIPIENTS_END, F_RECIPIENTS_LSB, F_RESULT_FORMAT_END,
                         F_RESULT_FORMAT_LSB, HDR_BITS, MAX_CAPACITY, MAX_CONTRIBUTORS, MAX_RANGES, NO_STAGED, NOT_OPEN,
                         OK, OP_ABORT, OP_ACK, OP_COMMIT, OP_NACK, OP_STAGE, POLICY_FP32_ARRIVAL,
                         RESPONSE_BITS, RESPONSE_MARGIN, RESPONSE_QUEUE_DEPTH, STAGED_MISMATCH)

# A validation event's code is the per-port counter it counts (spec.frames, "counters").
EV_CONTROL, EV_ADMITTED = CTR_CONTROL, CTR_ADMITTED
DROP_TOO_LONG, DROP_NO_OPERATION, DROP_WRONG_OP, DROP_STALE, DROP_CONTRIBUTOR, DROP_FORMAT, \
    DROP_RANGE, DROP_LENGTH, DROP_DUPLICATE = range(CTR_DROP, CTR_DROP + len(DROP_REASONS))
ORDER_DEPTH = 8
HOLD_DEPTH = 8          # frames waiting behind a held COMMIT: at most 3 banks x 2 ports
ABORT_QUIET = 16        # quiet cycles that end an ABORT's drain: more than the longest stretch
                        # with work in flight but none of dp_idle's signals high (the read-out
                        # pipeline between a range leaving the completion FIFO and its tile: up to
                        # 10 cycles, measured with the three-stage rounders; a store's range event
                        # waits a cycle more in prism_completion's input register)


def control_reason(short, is_stage, stage_reason, is_commit, staged, ids_staged, is_abort, is_open, ids_active):
    """A CONTROL request's reason (OK or the NACK's), from its checks and the context before it: the
    staged slot's validity, whether the operation is open, the request's ids against the staged and
    the active operation's."""
    reason = intbv(0)[8:]
    reason[:] = OK
    if not short:
        reason[:] = BAD_LENGTH
    elif is_stage:
        reason[:] = stage_reason
    elif is_commit:
        if not staged:
            reason[:] = NO_STAGED
        elif not ids_staged:
            reason[:] = STAGED_MISMATCH
        elif is_open:
            reason[:] = BUSY
    elif is_abort:
        if not is_open:
            reason[:] = NOT_OPEN
        elif not ids_active:
            reason[:] = ACTIVE_MISMATCH
    else:
        reason[:] = BAD_OPCODE
    return reason


def data_rules(hdr, word, too_long, short, frame_end, length_bad, ranges, sel):
    """A DATA frame's rules against one operation (`word`, its STAGE header), all but the duplicate
    check, as {whether they all pass, the event code of the first that fails in protocol order
    (EV_ADMITTED if none)}.  The range rule is the one formed a cycle ahead against the operation
    `sel` names (bit 0, 1, else 2 of `ranges`); a one-beat frame's (never admitted: only its drop
    reason reads the range rule) completes in its header's cycle, so its rule is formed here."""
    checks = intbv(0)[5:]
    code = intbv(0)[4:]
    contributor = intbv(0)[3:]
    fmt = intbv(0)[3:]
    offset = intbv(0)[14:]
    n = intbv(0)[14:]
    count = intbv(0)[14:]
    range_bad = bool(0)
    range_bad_1 = bool(0)
    rules_ok = bool(0)
    contributor[:] = hdr[F_CONTRIBUTOR_END:F_CONTRIBUTOR_LSB]
    fmt[:] = hdr[F_DATA_FORMAT_END:F_DATA_FORMAT_LSB]
    offset[:] = hdr[F_OFFSET_END:F_OFFSET_LSB]
    n[:] = hdr[F_N_END:F_N_LSB]
    count[:] = word[F_COUNT_END:F_COUNT_LSB]
    if sel == 0:
        range_bad = not ranges[0]
    elif sel == 1:
        range_bad = not ranges[1]
    else:
        range_bad = not ranges[2]
    range_bad_1 = n == 0 or offset[4:0] != 0 or frame_end > count or (n[4:0] != 0 and frame_end != count)
    if too_long:
        code[:] = DROP_TOO_LONG
    elif hdr[F_OP_ID_END:F_OP_ID_LSB] != word[F_OP_ID_END:F_OP_ID_LSB]:
        code[:] = DROP_WRONG_OP
    elif hdr[F_GENERATION_END:F_GENERATION_LSB] != word[F_GENERATION_END:F_GENERATION_LSB]:
        code[:] = DROP_STALE
    elif not word[F_CONTRIBUTORS_LSB + contributor]:
        code[:] = DROP_CONTRIBUTOR
    elif fmt != word[F_IN_FORMAT_END:F_IN_FORMAT_LSB]:
        code[:] = DROP_FORMAT
    elif short:
        # a one-beat frame fails the length rule (its need1 is 0) unless n is 0, and then the range
        # rule
        if range_bad_1:
            code[:] = DROP_RANGE
        else:
            code[:] = DROP_LENGTH
    elif range_bad:
        code[:] = DROP_RANGE
    elif length_bad:
        code[:] = DROP_LENGTH
    else:
        code[:] = EV_ADMITTED
    # the same rules as one flat condition (the verdict needs whether they all pass, not which fails
    # first)
    rules_ok = (not too_long and hdr[F_OP_ID_END:F_OP_ID_LSB] == word[F_OP_ID_END:F_OP_ID_LSB]
                and hdr[F_GENERATION_END:F_GENERATION_LSB] == word[F_GENERATION_END:F_GENERATION_LSB]
                and word[F_CONTRIBUTORS_LSB + contributor]
                and fmt == word[F_IN_FORMAT_END:F_IN_FORMAT_LSB] and not range_bad and not length_bad
                and not short)
    checks[4] = rules_ok
    checks[4:0] = code
    return checks


@block
def prism_control(clk, rst, p0_frame, p1_frame, p0_verdict, p1_verdict, p0_event, p1_event, responses, room_ok,
                  op_finished, dp_idle, op, order, CAPACITY=MAX_CAPACITY):
    if not 1 <= CAPACITY <= MAX_CAPACITY:
        raise ValueError(f"prism_control: CAPACITY={CAPACITY}; the node holds 1 .. {MAX_CAPACITY} elements")
    hdr_width = len(p0_frame.header)
    if hdr_width < HDR_BITS or len(p1_frame.header) != hdr_width:
        raise ValueError(f"prism_control: p0_frame.header/p1_frame.header must be equally wide, >= {HDR_BITS} bits")
    if len(responses.data) != RESPONSE_BITS:
        raise ValueError(f"prism_control: responses.data is the {RESPONSE_BITS}-bit response header")
    beat_width = len(p0_frame.beats)
    if len(p1_frame.beats) != beat_width:
        raise ValueError("prism_control: p0_frame.beats/p1_frame.beats must be equally wide")
    if len(op.count) != 13 or len(op.contributors) != 8 or len(op.expected) != 4:
        raise ValueError("prism_control: op.count 13, op.contributors 8, op.expected 4 bits")

    MAP_BITS = MAX_CONTRIBUTORS * MAX_RANGES
    CAP_HI, CAP_MID, CAP_LO = CAPACITY >> 12, (CAPACITY >> 6) & 63, CAPACITY & 63
    # a waiting frame: {overlaps, ranges, dup, span, need1, r_end, nr, frame_end, port, bank, too_long, beats,
    # header[HDR_BITS-1:0]}
    H_BEATS, H_LONG = HDR_BITS, HDR_BITS + beat_width
    H_BANK, H_PORT = H_LONG + 1, H_LONG + 3
    H_FE = H_PORT + 1
    H_NR = H_FE + FRAME_END_BITS
    H_RE = H_NR + NR_BITS
    H_NEED = H_RE + ROW_BITS + 1
    H_SPAN = H_NEED + FRAME_END_BITS
    H_PD = H_SPAN + MAX_RANGES
    H_R, H_OV = H_PD + 1, H_PD + 5
    HOLD_W = H_OV + 4

    resp_mem = [Signal(intbv(0)[RESPONSE_BITS:]) for _ in range(RESPONSE_QUEUE_DEPTH)]
    resp_rp = Signal(modbv(0)[4:])
    resp_wp = Signal(modbv(0)[4:])
    resp_count = Signal(intbv(0, min=0, max=RESPONSE_QUEUE_DEPTH + 1))

    st_valid = Signal(bool(0))
    st_word = Signal(intbv(0)[HDR_BITS:])       # the staged STAGE header (fields read by constant slices)
    act_word = Signal(intbv(0)[HDR_BITS:])
    op_open = Signal(bool(0))             # the active operation admits DATA
    dp_busy = Signal(bool(0))             # the datapath works for the active operation
    aborting = Signal(bool(0))            # ... which was aborted: its drain ends after ABORT_QUIET quiet cycles
    quiet = Signal(intbv(0, min=0, max=ABORT_QUIET + 1))
    # (contributor, range) pairs the open operation still needs (contributors x ranges, less those
    # admitted): the operation ends when an admission's pairs are all that is left
    pairs_left = Signal(modbv(0)[12:])
    st_pairs = Signal(modbv(0)[12:])      # contributors x ranges of the staged operation
    dup_map = Signal(intbv(0)[MAP_BITS:])   # bit 256*c + r: contributor c has contributed range r
    # The checks a cycle ahead.  The duplicate check: the frame each port is receiving against
    # the map as registered (pd0, pd1), and what the last edge changed in the map (cleared it:
    # clr_last; which of that cycle's four candidates it admitted: adm_last).  A frame's check
    # against the map now is its check against the map a cycle ago, less what was cleared, or its
    # ranges overlapping an admitted candidate's (each waiting frame keeps its overlap with each
    # candidate of the last cycle; pr0_ov, pr1_ov for the frames completing).  The range rule
    # against each operation the last edge could leave active or staged: the active and the staged
    # operation and the first and the second candidate's STAGE, of the last cycle (kept in each
    # waiting frame; pr0_r, pr1_r for the frames completing), and which the edge left (act_sel:
    # the active one, the staged one, the first candidate's; st_sel: the staged one, the first or
    # the second candidate's).
    pd0 = Signal(bool(0))
    pd1 = Signal(bool(0))
    clr_last = Signal(bool(0))
    adm_last = Signal(intbv(0)[4:])
    pr0_r = Signal(intbv(0)[4:])
    pr0_ov = Signal(intbv(0)[4:])
    pr1_r = Signal(intbv(0)[4:])
    pr1_ov = Signal(intbv(0)[4:])
    act_sel = Signal(intbv(0)[2:])
    st_sel = Signal(intbv(0)[2:])
    # admitted FP32_ARRIVAL frames not yet started, oldest first: at most 3 banks x 2 ports
    ord_bits = Signal(intbv(0)[ORDER_DEPTH:])
    ord_rp = Signal(modbv(0)[3:])
    ord_count = Signal(intbv(0, min=0, max=ORDER_DEPTH + 1))
    ord_next = Signal(modbv(1)[3:])         # the queue's second entry: ord_rp + 1 (the pointers are not reset)
    # frames waiting behind a held COMMIT, oldest first
    hold_mem = [Signal(intbv(0)[HOLD_W:]) for _ in range(HOLD_DEPTH)]
    hold_count = Signal(intbv(0, min=0, max=HOLD_DEPTH + 1))
    hold_head0 = Signal(intbv(0)[HOLD_W:])
    hold_head1 = Signal(intbv(0)[HOLD_W:])

    @always_comb
    def operation_outputs():
        responses.valid.next = resp_count != 0
        room_ok.next = resp_count <= RESPONSE_QUEUE_DEPTH - RESPONSE_MARGIN
        op.policy.next = act_word[F_POLICY_END:F_POLICY_LSB]
        op.in_fmt.next = act_word[F_IN_FORMAT_LSB + 2:F_IN_FORMAT_LSB]
        op.exact_in.next = act_word[F_IN_FORMAT_LSB + 2]      # code 4, the only accepted code with bit 2
        op.out_fmt.next = act_word[F_RESULT_FORMAT_END:F_RESULT_FORMAT_LSB]
        op.count.next = act_word[F_COUNT_END:F_COUNT_LSB]
        op.contributors.next = act_word[F_CONTRIBUTORS_END:F_CONTRIBUTORS_LSB]
        op.recipients.next = act_word[F_RECIPIENTS_END:F_RECIPIENTS_LSB]
        op.op_id.next = act_word[F_OP_ID_END:F_OP_ID_LSB]
        op.generation.next = act_word[F_GENERATION_END:F_GENERATION_LSB]
        op.busy.next = op_open or dp_busy
        order.valid.next = ord_count != 0
        order.port.next = ord_bits[ord_rp]
        order.valid2.next = ord_count > 1
        order.port2.next = ord_bits[ord_next]

    @always_comb
    def count_contributors():
        # two halves of four (a LUT each) and one add
        lo = intbv(0)[3:]
        hi = intbv(0)[3:]
        n = intbv(0)[4:]
        lo[:] = (act_word[F_CONTRIBUTORS_LSB] + act_word[F_CONTRIBUTORS_LSB + 1] + act_word[F_CONTRIBUTORS_LSB + 2]
                 + act_word[F_CONTRIBUTORS_LSB + 3])
        hi[:] = (act_word[F_CONTRIBUTORS_LSB + 4] + act_word[F_CONTRIBUTORS_LSB + 5]
                 + act_word[F_CONTRIBUTORS_LSB + 6] + act_word[F_CONTRIBUTORS_LSB + 7])
        n[:] = lo + hi
        op.expected.next = n

    @always_comb
    def read_queue_heads():
        responses.data.next = resp_mem[resp_rp]
        hold_head0.next = hold_mem[0]
        hold_head1.next = hold_mem[1]

    @always(clk.posedge)
    def precheck():
        # each port's frame being received (its digest registered from its header beat) against
        # the map as registered: a cycle later, when the frame completes, the walk corrects it for
        # what that edge changed
        cmap = intbv(0)[MAP_BITS:]
        row = intbv(0)[MAX_RANGES:]
        cmap[:] = dup_map >> (p0_frame.next_c * MAX_RANGES)
        row[:] = cmap[MAX_RANGES:0]
        pd0.next = (row & p0_frame.next_span) != 0
        cmap[:] = dup_map >> (p1_frame.next_c * MAX_RANGES)
        row[:] = cmap[MAX_RANGES:0]
        pd1.next = (row & p1_frame.next_span) != 0

    @always(clk.posedge)
    def admit_control():
        # the operation context: read from the registers, updated frame by frame, written back
        staged = intbv(0)[HDR_BITS:]
        st_ok = bool(0)
        staged_pairs = modbv(0)[12:]
        active = intbv(0)[HDR_BITS:]
        is_open = bool(0)
        is_busy = bool(0)
        is_aborting = bool(0)
        qt = intbv(0, min=0, max=ABORT_QUIET + 1)
        dmap = intbv(0)[MAP_BITS:]
        left = modbv(0)[12:]
        # the queues: responses, admission order, frames held behind a COMMIT
        resp = intbv(0)[RESPONSE_BITS:]
        wp = modbv(0)[4:]
        rc = intbv(0, min=0, max=RESPONSE_QUEUE_DEPTH + 3)
        ob = intbv(0)[ORDER_DEPTH:]
        orp = modbv(0)[3:]
        oc = intbv(0, min=0, max=ORDER_DEPTH + 2)
        hc = intbv(0, min=0, max=HOLD_DEPTH + 3)
        hc_c = modbv(0)[4:]
        hc_o = modbv(0)[4:]
        slot = intbv(0)[HOLD_W:]
        slot_c = intbv(0)[HOLD_W:]
        slot_o = intbv(0)[HOLD_W:]
        # one candidate's fields and checks (every candidate in turn)
        entry = intbv(0)[HOLD_W:]
        hdr = intbv(0)[HDR_BITS:]
        too_long = bool(0)
        beats = intbv(0)[beat_width:]
        cls = intbv(0)[4:]
        reason = intbv(0)[8:]
        code = intbv(0)[4:]
        recip = intbv(0)[2:]
        members = intbv(0)[4:]
        m_lo = intbv(0)[3:]
        m_hi = intbv(0)[3:]
        pairs = modbv(0)[12:]
        count = intbv(0)[14:]
        contributor = intbv(0)[3:]
        offset = intbv(0)[14:]
        n = intbv(0)[14:]
        frame_end = intbv(0)[14:]
        need1 = intbv(0)[FRAME_END_BITS:]
        length_bad = bool(0)
        checks = intbv(0)[5:]
        r_first = intbv(0)[9:]
        # modbv: a hostile header's range end (offset + n up to 16,382) and STAGE count (up to 8,191)
        # wrap in 9 bits, and its mask shifted by the contributor runs past the map, as in the
        # Verilog; only a frame that passed the range rule has its mask read, only a staged
        # operation's pairs
        r_end = modbv(0)[9:]
        mask = modbv(0)[MAP_BITS:]
        map_dup = bool(0)
        span = intbv(0)[MAX_RANGES:]
        # each waiting entry's and this cycle's frames' duplicate check against the map as registered
        # (hold slots 0 .. HOLD_DEPTH - 1, then port 0's and port 1's frame)
        cpd = intbv(0)[HOLD_DEPTH + 2:]
        old_pd = bool(0)
        ovc = intbv(0)[4:]
        adm = intbv(0)[4:]
        c_cnt = intbv(0)[52:]
        cr = intbv(0)[31:]
        rok = bool(0)
        part = bool(0)
        r_act = bool(0)
        r_st = bool(0)
        r_cand = intbv(0)[4:]
        rbits = intbv(0)[4:]
        r_src = intbv(0)[4 * (HOLD_DEPTH + 2):]
        ov_src = intbv(0)[4 * (HOLD_DEPTH + 2):]
        # every candidate's results, by candidate (bit s, or field s of a packed vector)
        c_port = intbv(0)[4:]
        c_long = intbv(0)[4:]
        c_ctl = intbv(0)[4:]
        c_short = intbv(0)[4:]
        c_stage = intbv(0)[4:]
        c_commit = intbv(0)[4:]
        c_abort = intbv(0)[4:]
        c_ids_staged = intbv(0)[4:]
        c_ids_active = intbv(0)[4:]
        c_admit_active = intbv(0)[4:]
        c_admit_staged = intbv(0)[4:]
        c_closes = intbv(0)[4:]
        c_closes_fresh = intbv(0)[4:]
        c_stage_go = intbv(0)[4:]
        c_commit_go = intbv(0)[4:]
        c_abort_go = intbv(0)[4:]
        c_fok = intbv(0)[4:]
        c_dadm = intbv(0)[4:]
        c_dadm_close = intbv(0)[4:]
        c_dadm_st = intbv(0)[4:]
        c_dadm_st_close = intbv(0)[4:]
        c_fadm = intbv(0)[4:]
        c_fclose = intbv(0)[4:]
        cand_valid = bool(0)
        c_bo = intbv(0)[4:]
        s_dadm_st_close = bool(0)
        s_dadm_close = bool(0)
        both_once = bool(0)
        c_freason = intbv(0)[32:]
        c_fcode = intbv(0)[16:]
        s_code_o = intbv(0)[4:]
        s_code_c = intbv(0)[4:]
        stage_ok = bool(0)
        cap_over = bool(0)
        is_ctl = bool(0)
        short = bool(0)
        stage_go = bool(0)
        commit_go = bool(0)
        abort_go = bool(0)
        c_bank = intbv(0)[8:]
        c_reason = intbv(0)[32:]
        c_pairs = intbv(0)[48:]
        c_code_active = intbv(0)[16:]
        c_code_staged = intbv(0)[16:]
        c_range = intbv(0)[124:]        # {contributor, r_first, r_end, nr} (31 bits) per candidate
        pick = intbv(0)[124:]
        nr = intbv(0)[10:]
        # the two frames processed this cycle (at most), picked before the walk
        e_p0 = intbv(0)[HOLD_W:]
        e_p1 = intbv(0)[HOLD_W:]
        first_src = intbv(0)[2:]
        second_src = intbv(0)[2:]
        first_valid = bool(0)
        second_valid = bool(0)
        # their checks, selected from the candidates' (f_: the first frame, s_: the second)
        f_hdr = intbv(0)[HDR_BITS:]
        f_port = bool(0)
        f_bank = intbv(0)[2:]
        f_long = bool(0)
        f_ctl = bool(0)
        f_ctl_short = bool(0)
        f_is_stage = bool(0)
        f_is_commit = bool(0)
        f_is_abort = bool(0)
        f_stage_reason = intbv(0)[8:]
        f_pairs = modbv(0)[12:]
        f_ids_staged = bool(0)
        f_ids_active = bool(0)
        f_code_active = intbv(0)[4:]
        f_admit_active = bool(0)
        f_closes = bool(0)
        f_c = intbv(0)[3:]
        f_rf = intbv(0)[9:]
        f_re = intbv(0)[9:]
        f_nr = intbv(0)[10:]
        s_hdr = intbv(0)[HDR_BITS:]
        s_port = bool(0)
        s_bank = intbv(0)[2:]
        s_long = bool(0)
        s_ctl = bool(0)
        s_ctl_short = bool(0)
        s_is_stage = bool(0)
        s_is_commit = bool(0)
        s_is_abort = bool(0)
        s_stage_reason = intbv(0)[8:]
        s_pairs = modbv(0)[12:]
        s_ids_staged = bool(0)
        s_ids_active = bool(0)
        s_code_active = intbv(0)[4:]
        s_admit_active = bool(0)
        s_code_staged = intbv(0)[4:]
        s_admit_staged = bool(0)
        s_closes = bool(0)
        s_closes_fresh = bool(0)
        f_stage_go = bool(0)
        f_commit_go = bool(0)
        f_abort_go = bool(0)
        f_fok = bool(0)
        f_dadm = bool(0)
        f_dadm_close = bool(0)
        f_closing = bool(0)
        s_stage_go = bool(0)
        s_commit_go = bool(0)
        s_abort_go = bool(0)
        s_dadm = bool(0)
        s_dadm_st = bool(0)
        s_ok = bool(0)
        df = bool(0)
        ds_c = bool(0)
        hb = modbv(0)[4:]
        hb1 = modbv(0)[4:]
        hb2 = modbv(0)[4:]
        sq0 = intbv(0)[HOLD_W:]
        sq1 = intbv(0)[HOLD_W:]
        sq2 = intbv(0)[HOLD_W:]
        s_c = intbv(0)[3:]
        s_rf = intbv(0)[9:]
        s_re = intbv(0)[9:]
        s_nr = intbv(0)[10:]
        both_nr = modbv(0)[12:]
        nr_x = intbv(0)[10:]
        nr_y = intbv(0)[10:]
        left_2 = modbv(0)[12:]
        c_left_2 = intbv(0)[48:]
        c_both_eq = intbv(0)[4:]
        pair_ix = modbv(0)[2:]
        both_eq = bool(0)
        cr_x = intbv(0)[31:]
        sx = modbv(0)[12:]
        sy = modbv(0)[12:]
        cy = modbv(0)[12:]
        ck = modbv(0)[12:]
        cr_y = intbv(0)[31:]
        c_ovl = intbv(0)[4:]
        left_f = modbv(0)[12:]
        left_s = modbv(0)[12:]
        left_fs = modbv(0)[12:]
        fresh_s = modbv(0)[12:]
        slot_a = modbv(0)[3:]
        slot_b = modbv(0)[3:]
        oc_1 = modbv(0)[4:]
        oc_2 = modbv(0)[4:]
        ocn = modbv(0)[4:]
        f_push = bool(0)
        s_push = bool(0)
        # the walk's outcome
        f_reason = intbv(0)[8:]
        f_code = intbv(0)[4:]
        f_admit = bool(0)
        f_stage = bool(0)
        f_activate = bool(0)
        f_abort = bool(0)
        f_held = bool(0)
        open_1 = bool(0)
        s_go = bool(0)
        s_reason = intbv(0)[8:]
        s_code = intbv(0)[4:]
        s_admit = bool(0)
        s_stage = bool(0)
        s_activate = bool(0)
        s_abort = bool(0)
        s_held = bool(0)
        s_abort_o = bool(0)
        s_admit_o = bool(0)
        s_act_c = bool(0)
        x_o1 = bool(0)
        x_o0 = bool(0)
        fmask = intbv(0)[MAP_BITS:]
        smask = intbv(0)[MAP_BITS:]
        dmap_o = intbv(0)[MAP_BITS:]
        dmap_c = intbv(0)[MAP_BITS:]
        left_o = modbv(0)[12:]
        left_c = modbv(0)[12:]
        ocn_o = modbv(0)[4:]
        ocn_c = modbv(0)[4:]
        s_push_o = bool(0)
        adm_o = intbv(0)[4:]
        adm_c = intbv(0)[4:]
        b_old = bool(0)
        b_fs = bool(0)
        b_f = bool(0)
        b_s = bool(0)
        s_close_o = bool(0)
        overlap = bool(0)
        rules_ok = bool(0)
        f_control = bool(0)
        f_commit_ok = bool(0)
        s_control = bool(0)
        s_commit_ok = bool(0)
        st_ok_1 = bool(0)
        ids_staged_1 = bool(0)
        ids_active_1 = bool(0)
        busy_1 = bool(0)
        if rst:
            st_valid.next = 0
            op_open.next = 0
            dp_busy.next = 0
            aborting.next = 0
            quiet.next = 0
            resp_rp.next = 0
            resp_wp.next = 0
            resp_count.next = 0
            p0_verdict.valid.next = 0
            p1_verdict.valid.next = 0
            p0_event.valid.next = 0
            p1_event.valid.next = 0
            op.clear.next = 0
            # the two queues' read pointers are not reset: a queue is its count of entries from
            # its read pointer on (the write slot is pointer + count), so with no entries any
            # pointer is an empty queue
            ord_count.next = 0
            hold_count.next = 0
            clr_last.next = 0
            adm_last.next = 0
        else:
            staged[:] = st_word
            st_ok = bool(st_valid)
            staged_pairs[:] = st_pairs
            active[:] = act_word
            is_open = bool(op_open)
            is_busy = bool(dp_busy)
            is_aborting = bool(aborting)
            qt[:] = quiet
            left[:] = pairs_left
            dmap[:] = dup_map
            wp[:] = resp_wp
            rc[:] = resp_count
            ob[:] = ord_bits
            orp[:] = ord_rp
            oc[:] = ord_count
            hc[:] = hold_count
            op.clear.next = 0
            p0_verdict.valid.next = 0
            p1_verdict.valid.next = 0
            p0_event.valid.next = 0
            p1_event.valid.next = 0

            # end of the datapath's work for the active operation
            if op_finished:
                is_busy = False
            if is_aborting:
                if dp_idle:
                    if qt == ABORT_QUIET - 1:
                        is_busy = False
                        is_aborting = False
                        qt[:] = 0
                        op.clear.next = 1
                    else:
                        qt[:] = qt + 1
                else:
                    qt[:] = 0
            if responses.pop and rc != 0:
                resp_rp.next = resp_rp + 1
                rc[:] = rc - 1
            if order.pop and oc != 0:
                orp[:] = orp + 1
                oc[:] = oc - 1

            # The candidates in processing order: the two oldest waiting frames, then this cycle's
            # frames (port 0 first).  At most one verdict per port per cycle, so at most two frames
            # are processed: the first candidate and the one after it (if it is on the other port
            # and the first was not held).  Both are picked here from the queue's count and the
            # valid pulses alone.  A frame of this cycle that is not processed waits, in order.
            e_p0[:] = concat(pr0_ov, pr0_r, pd0, p0_frame.span, p0_frame.need1, p0_frame.r_end, p0_frame.nr,
                             p0_frame.frame_end, False, p0_frame.bank, p0_frame.too_long, p0_frame.beats,
                             p0_frame.header[HDR_BITS:0])
            e_p1[:] = concat(pr1_ov, pr1_r, pd1, p1_frame.span, p1_frame.need1, p1_frame.r_end, p1_frame.nr,
                             p1_frame.frame_end, True, p1_frame.bank, p1_frame.too_long, p1_frame.beats,
                             p1_frame.header[HDR_BITS:0])
            # The duplicate checks: each entry's check against the map a cycle ago (kept in the
            # entry, pd0/pd1 for this cycle's frames), less a clear, or an overlap (same contributor,
            # intersecting [r_first, r_end), formed a cycle ago) with a candidate the last edge
            # admitted.  (Only a frame that passes the range rule has its check read; its ranges are
            # then exactly its interval.)
            for j in range(HOLD_DEPTH + 2):
                if j < HOLD_DEPTH:
                    entry[:] = hold_mem[j]
                elif j == HOLD_DEPTH:
                    entry[:] = e_p0
                else:
                    entry[:] = e_p1
                old_pd = bool(entry[H_PD])
                ovc[:] = entry[HOLD_W:H_OV]
                cpd[j] = (old_pd and not clr_last) or (ovc & adm_last) != 0
            e_p0[H_PD] = cpd[HOLD_DEPTH]
            e_p1[H_PD] = cpd[HOLD_DEPTH + 1]

            first_valid = False
            second_valid = False
            if hc >= 1:
                first_valid = True
                first_src[:] = 0
                if hc >= 2:
                    second_valid = True
                    second_src[:] = 1
                elif p0_frame.valid:
                    second_valid = True
                    second_src[:] = 2
                elif p1_frame.valid:
                    second_valid = True
                    second_src[:] = 3
            elif p0_frame.valid:
                first_valid = True
                first_src[:] = 2
                if p1_frame.valid:
                    second_valid = True
                    second_src[:] = 3
            elif p1_frame.valid:
                first_valid = True
                first_src[:] = 3

            # Every candidate's checks, the four in parallel with the pick, against the context
            # as registered: a DATA frame's rules against the active operation (and, for the
            # second frame, against the staged one, which a COMMIT before it activates), a
            # CONTROL frame's against the staged and active ids.  The walk below only selects.
            for s in range(4):
                if s == 0:
                    entry[:] = hold_head0
                elif s == 1:
                    entry[:] = hold_head1
                elif s == 2:
                    entry[:] = e_p0
                else:
                    entry[:] = e_p1
                hdr[:] = entry[HDR_BITS:0]
                beats[:] = entry[H_LONG:H_BEATS]
                too_long = bool(entry[H_LONG])
                cls[:] = hdr[F_CLASS_END:F_CLASS_LSB]
                # CONTROL: a STAGE's rules (they read no context) and the pairs its operation
                # would count
                count[:] = hdr[F_COUNT_END:F_COUNT_LSB]
                recip[:] = hdr[F_RECIPIENTS_END:F_RECIPIENTS_LSB]
                # count > CAPACITY in pieces of at most six bits (a LUT each, no carry chain)
                cap_over = count[13:12] > CAP_HI or (count[13:12] == CAP_HI and (
                    count[12:6] > CAP_MID or (count[12:6] == CAP_MID and count[6:0] > CAP_LO)))
                reason[:] = OK
                if hdr[F_POLICY_END:F_POLICY_LSB] > POLICY_FP32_ARRIVAL:
                    reason[:] = BAD_POLICY
                elif hdr[F_RESULT_FORMAT_END:F_RESULT_FORMAT_LSB] > FMT_AUTO or (
                        hdr[F_RESULT_FORMAT_END:F_RESULT_FORMAT_LSB] == FMT_EXACT
                        and hdr[F_POLICY_END:F_POLICY_LSB] == POLICY_FP32_ARRIVAL):
                    reason[:] = BAD_FORMAT
                elif hdr[F_IN_FORMAT_END:F_IN_FORMAT_LSB] > FMT_EXACT or (
                        hdr[F_IN_FORMAT_END:F_IN_FORMAT_LSB] == FMT_EXACT
                        and hdr[F_POLICY_END:F_POLICY_LSB] == POLICY_FP32_ARRIVAL):
                    reason[:] = BAD_FORMAT      # EXACT partials merge into Kulisch rows only
                elif count == 0 or cap_over:
                    reason[:] = BAD_COUNT
                elif hdr[F_CONTRIBUTORS_END:F_CONTRIBUTORS_LSB] == 0:
                    reason[:] = BAD_CONTRIBUTORS
                elif recip == 0 or (not hdr[F_MODE_LSB] and recip == 3):
                    reason[:] = BAD_RECIPIENTS
                # the same rules as one flat condition (the walk needs whether they pass; the reason
                # only goes into the response)
                stage_ok = (hdr[F_POLICY_END:F_POLICY_LSB] <= POLICY_FP32_ARRIVAL
                            and hdr[F_RESULT_FORMAT_END:F_RESULT_FORMAT_LSB] <= FMT_AUTO
                            and not (hdr[F_RESULT_FORMAT_END:F_RESULT_FORMAT_LSB] == FMT_EXACT
                                     and hdr[F_POLICY_END:F_POLICY_LSB] == POLICY_FP32_ARRIVAL)
                            and hdr[F_IN_FORMAT_END:F_IN_FORMAT_LSB] <= FMT_EXACT
                            and not (hdr[F_IN_FORMAT_END:F_IN_FORMAT_LSB] == FMT_EXACT
                                     and hdr[F_POLICY_END:F_POLICY_LSB] == POLICY_FP32_ARRIVAL)
                            and count != 0 and not cap_over
                            and hdr[F_CONTRIBUTORS_END:F_CONTRIBUTORS_LSB] != 0
                            and recip != 0 and (hdr[F_MODE_LSB] or recip != 3))
                # its contributors counted as two halves of four (a LUT each) and one add
                m_lo[:] = (hdr[F_CONTRIBUTORS_LSB] + hdr[F_CONTRIBUTORS_LSB + 1] + hdr[F_CONTRIBUTORS_LSB + 2]
                           + hdr[F_CONTRIBUTORS_LSB + 3])
                m_hi[:] = (hdr[F_CONTRIBUTORS_LSB + 4] + hdr[F_CONTRIBUTORS_LSB + 5] + hdr[F_CONTRIBUTORS_LSB + 6]
                           + hdr[F_CONTRIBUTORS_LSB + 7])
                members[:] = m_lo + m_hi
                r_end[:] = (count + 15) >> 4
                pairs[:] = members * r_end
                # DATA: its elements, ranges and their bits in the duplicate map
                contributor[:] = hdr[F_CONTRIBUTOR_END:F_CONTRIBUTOR_LSB]
                offset[:] = hdr[F_OFFSET_END:F_OFFSET_LSB]
                # the header's digest, formed by the ingress before the frame's last beat (meaningful
                # for frames of two or more beats: a one-beat DATA frame fails the range rule)
                frame_end[:] = entry[H_NR:H_FE]
                nr[:] = entry[H_RE:H_NR]
                r_end[:] = entry[H_NEED:H_RE]
                need1[:] = entry[H_SPAN:H_NEED]
                length_bad = beats != need1
                r_first[:] = offset[13:4]
                # Duplicate: the frame's ranges against the map as registered, formed a cycle
                # ahead and corrected for the last edge (above)
                if s == 0:
                    map_dup = bool(cpd[0])
                elif s == 1:
                    map_dup = bool(cpd[1])
                elif s == 2:
                    map_dup = bool(cpd[HOLD_DEPTH])
                else:
                    map_dup = bool(cpd[HOLD_DEPTH + 1])
                # the DATA rules in protocol order, but the open operation's (the walk's): against
                # the active operation (its range rule formed a cycle ahead for the operation the
                # last edge left active); the duplicate check against the map as registered (the
                # deepest rule) decides last
                rbits[:] = entry[H_OV:H_R]
                checks[:] = data_rules(hdr, act_word, too_long, beats == 1, frame_end, length_bad, rbits, act_sel)
                rules_ok = bool(checks[4])
                code[:] = checks[4:0]
                if rules_ok and map_dup:
                    code[:] = DROP_DUPLICATE
                # every candidate's results, packed by candidate (selected below by index: a
                # balanced multiplexer, not a chain of four)
                c_port[s] = entry[H_PORT]
                c_long[s] = too_long
                c_ctl[s] = cls == CLASS_CONTROL
                c_short[s] = beats == 1
                c_stage[s] = hdr[F_OPCODE_END:F_OPCODE_LSB] == OP_STAGE
                c_commit[s] = hdr[F_OPCODE_END:F_OPCODE_LSB] == OP_COMMIT
                c_abort[s] = hdr[F_OPCODE_END:F_OPCODE_LSB] == OP_ABORT
                c_ids_staged[s] = st_word[F_GENERATION_END:F_OP_ID_LSB] == hdr[F_GENERATION_END:F_OP_ID_LSB]
                c_ids_active[s] = act_word[F_GENERATION_END:F_OP_ID_LSB] == hdr[F_GENERATION_END:F_OP_ID_LSB]
                c_admit_active[s] = rules_ok and not map_dup
                c_closes[s] = nr == pairs_left
                c_closes_fresh[s] = nr == st_pairs
                c_bank[:] = concat(entry[H_PORT:H_BANK], c_bank[8:2])
                c_reason[:] = concat(reason, c_reason[32:8])
                c_pairs[:] = concat(pairs, c_pairs[48:12])
                c_code_active[:] = concat(code, c_code_active[16:4])
                c_range[:] = concat(contributor, r_first, r_end, nr, c_range[124:31])
                c_cnt[:] = concat(hdr[F_COUNT_END:F_COUNT_LSB], c_cnt[52:13])
                # the same rules against the staged operation (a COMMIT as the first frame
                # activates it and empties the map), for the second frame
                checks[:] = data_rules(hdr, st_word, too_long, beats == 1, frame_end, length_bad, rbits >> 1, st_sel)
                c_admit_staged[s] = checks[4]
                code[:] = checks[4:0]
                c_code_staged[:] = concat(code, c_code_staged[16:4])
                # the flags the walk reads, each formed here from registers (the walk only selects
                # them): a CONTROL request that passes its own checks (a STAGE's rules; a COMMIT's
                # ids against the staged operation, an ABORT's against the active one), whether it
                # is answered OK as the first frame; a DATA frame that passes every rule against the
                # active operation (and closes it), against the staged one
                is_ctl = cls == CLASS_CONTROL
                short = beats == 1
                stage_go = is_ctl and short and hdr[F_OPCODE_END:F_OPCODE_LSB] == OP_STAGE and stage_ok
                commit_go = (is_ctl and short and hdr[F_OPCODE_END:F_OPCODE_LSB] == OP_COMMIT
                             and st_word[F_GENERATION_END:F_OP_ID_LSB] == hdr[F_GENERATION_END:F_OP_ID_LSB])
                abort_go = (is_ctl and short and hdr[F_OPCODE_END:F_OPCODE_LSB] == OP_ABORT
                            and act_word[F_GENERATION_END:F_OP_ID_LSB] == hdr[F_GENERATION_END:F_OP_ID_LSB])
                c_stage_go[s] = stage_go
                c_commit_go[s] = commit_go
                c_abort_go[s] = abort_go
                c_fok[s] = stage_go or (commit_go and st_valid and not op_open) or (abort_go and op_open)
                c_dadm[s] = not is_ctl and rules_ok and not map_dup
                c_dadm_close[s] = not is_ctl and rules_ok and not map_dup and nr == pairs_left
                c_dadm_st[s] = not is_ctl and c_admit_staged[s]
                c_dadm_st_close[s] = not is_ctl and c_admit_staged[s] and nr == st_pairs
                # ... as the first frame (valid, the operation open)
                if s == 0:
                    cand_valid = hc >= 1
                elif s == 1:
                    cand_valid = hc >= 2
                elif s == 2:
                    cand_valid = bool(p0_frame.valid)
                else:
                    cand_valid = bool(p1_frame.valid)
                c_fadm[s] = cand_valid and op_open and not is_ctl and rules_ok and not map_dup
                c_fclose[s] = cand_valid and op_open and not is_ctl and rules_ok and not map_dup and nr == pairs_left
                # as the first frame: a CONTROL request's reason, a DATA frame's event code
                reason[:] = control_reason(short, hdr[F_OPCODE_END:F_OPCODE_LSB] == OP_STAGE, reason,
                                           hdr[F_OPCODE_END:F_OPCODE_LSB] == OP_COMMIT, st_valid,
                                           st_word[F_GENERATION_END:F_OP_ID_LSB] == hdr[F_GENERATION_END:F_OP_ID_LSB],
                                           hdr[F_OPCODE_END:F_OPCODE_LSB] == OP_ABORT, op_open,
                                           act_word[F_GENERATION_END:F_OP_ID_LSB] == hdr[F_GENERATION_END:F_OP_ID_LSB])
                c_freason[:] = concat(reason, c_freason[32:8])
                if is_ctl:
                    code[:] = EV_CONTROL
                elif not op_open:
                    if too_long:
                        code[:] = DROP_TOO_LONG
                    else:
                        code[:] = DROP_NO_OPERATION
                else:
                    code[:] = c_code_active[16:12]
                c_fcode[:] = concat(code, c_fcode[16:4])
            # the two frames' results
            if first_src == 0:
                f_hdr[:] = hold_head0[HDR_BITS:0]
            elif first_src == 2:
                f_hdr[:] = p0_frame.header[HDR_BITS:0]
            else:
                f_hdr[:] = p1_frame.header[HDR_BITS:0]
            if second_src == 1:
                s_hdr[:] = hold_head1[HDR_BITS:0]
            elif second_src == 2:
                s_hdr[:] = p0_frame.header[HDR_BITS:0]
            else:
                s_hdr[:] = p1_frame.header[HDR_BITS:0]
            f_port = bool(c_port[first_src])
            f_long = bool(c_long[first_src])
            f_ctl = bool(c_ctl[first_src])
            f_ctl_short = bool(c_short[first_src])
            f_is_stage = bool(c_stage[first_src])
            f_is_commit = bool(c_commit[first_src])
            f_is_abort = bool(c_abort[first_src])
            f_ids_staged = bool(c_ids_staged[first_src])
            f_ids_active = bool(c_ids_active[first_src])
            f_admit_active = bool(c_admit_active[first_src])
            f_closes = bool(c_closes[first_src])
            s_port = bool(c_port[second_src])
            s_long = bool(c_long[second_src])
            s_ctl = bool(c_ctl[second_src])
            s_ctl_short = bool(c_short[second_src])
            s_is_stage = bool(c_stage[second_src])
            s_is_commit = bool(c_commit[second_src])
            s_is_abort = bool(c_abort[second_src])
            s_ids_staged = bool(c_ids_staged[second_src])
            s_ids_active = bool(c_ids_active[second_src])
            s_admit_active = bool(c_admit_active[second_src])
            s_admit_staged = bool(c_admit_staged[second_src])
            s_closes = bool(c_closes[second_src])
            s_closes_fresh = bool(c_closes_fresh[second_src])
            f_stage_go = bool(c_stage_go[first_src])
            f_commit_go = bool(c_commit_go[first_src])
            f_abort_go = bool(c_abort_go[first_src])
            f_fok = bool(c_fok[first_src])
            f_dadm = bool(c_dadm[first_src])
            f_dadm_close = bool(c_dadm_close[first_src])
            s_stage_go = bool(c_stage_go[second_src])
            s_commit_go = bool(c_commit_go[second_src])
            s_abort_go = bool(c_abort_go[second_src])
            s_dadm = bool(c_dadm[second_src])
            s_dadm_st = bool(c_dadm_st[second_src])
            s_dadm_st_close = bool(c_dadm_st_close[second_src])
            s_dadm_close = bool(c_dadm_close[second_src])
            if first_src == 0:
                pick[:] = c_bank[2:0]
            elif first_src == 2:
                pick[:] = c_bank[6:4]
            else:
                pick[:] = c_bank[8:6]
            f_bank[:] = pick[2:0]
            if second_src == 1:
                pick[:] = c_bank[4:2]
            elif second_src == 2:
                pick[:] = c_bank[6:4]
            else:
                pick[:] = c_bank[8:6]
            s_bank[:] = pick[2:0]
            if first_src == 0:
                pick[:] = c_reason[8:0]
            elif first_src == 2:
                pick[:] = c_reason[24:16]
            else:
                pick[:] = c_reason[32:24]
            f_stage_reason[:] = pick[8:0]
            if second_src == 1:
                pick[:] = c_reason[16:8]
            elif second_src == 2:
                pick[:] = c_reason[24:16]
            else:
                pick[:] = c_reason[32:24]
            s_stage_reason[:] = pick[8:0]
            if first_src == 0:
                pick[:] = c_pairs[12:0]
            elif first_src == 2:
                pick[:] = c_pairs[36:24]
            else:
                pick[:] = c_pairs[48:36]
            f_pairs[:] = pick[12:0]
            if second_src == 1:
                pick[:] = c_pairs[24:12]
            elif second_src == 2:
                pick[:] = c_pairs[36:24]
            else:
                pick[:] = c_pairs[48:36]
            s_pairs[:] = pick[12:0]
            if first_src == 0:
                pick[:] = c_code_active[4:0]
            elif first_src == 2:
                pick[:] = c_code_active[12:8]
            else:
                pick[:] = c_code_active[16:12]
            f_code_active[:] = pick[4:0]
            if second_src == 1:
                pick[:] = c_code_active[8:4]
            elif second_src == 2:
                pick[:] = c_code_active[12:8]
            else:
                pick[:] = c_code_active[16:12]
            s_code_active[:] = pick[4:0]
            if second_src == 1:
                pick[:] = c_code_staged[8:4]
            elif second_src == 2:
                pick[:] = c_code_staged[12:8]
            else:
                pick[:] = c_code_staged[16:12]
            s_code_staged[:] = pick[4:0]
            if first_src == 0:
                pick[:] = c_range[31:0]
            elif first_src == 2:
                pick[:] = c_range[93:62]
            else:
                pick[:] = c_range[124:93]
            f_nr[:] = pick[10:0]
            f_re[:] = pick[19:10]
            f_rf[:] = pick[28:19]
            f_c[:] = pick[31:28]
            if second_src == 1:
                pick[:] = c_range[62:31]
            elif second_src == 2:
                pick[:] = c_range[93:62]
            else:
                pick[:] = c_range[124:93]
            s_nr[:] = pick[10:0]
            s_re[:] = pick[19:10]
            s_rf[:] = pick[28:19]
            s_c[:] = pick[31:28]

            # the two frames' pairs against those left and their overlap, for each pair of candidates
            # the two can be (the first candidate 0, the second 1, 2 or 3; or 2 and 3), selected by
            # the pick
            for s2 in range(4):
                if s2 == 0:
                    cr_x[:] = c_range[31:0]
                    cr_y[:] = c_range[62:31]
                elif s2 == 1:
                    cr_x[:] = c_range[31:0]
                    cr_y[:] = c_range[93:62]
                elif s2 == 2:
                    cr_x[:] = c_range[31:0]
                    cr_y[:] = c_range[124:93]
                else:
                    cr_x[:] = c_range[93:62]
                    cr_y[:] = c_range[124:93]
                nr_x[:] = cr_x[10:0]
                nr_y[:] = cr_y[10:0]
                both_nr[:] = nr_x + nr_y
                # nr_x + nr_y == pairs_left without a carry chain: each bit of the sum checked with
                # the carry into it that the equality implies (a LUT each, then a reduction)
                sx[:] = nr_x
                sy[:] = nr_y
                cy[:] = (sx & sy) | ((sx | sy) & ~pairs_left)
                ck[:] = sx ^ sy ^ pairs_left ^ (cy << 1)
                # and whether their ranges overlap (same contributor, intersecting intervals)
                c_ovl[s2] = cr_x[31:28] == cr_y[31:28] and cr_x[28:19] < cr_y[19:10] and cr_y[28:19] < cr_x[19:10]
                c_bo[s2] = ck == 0 and not bool(c_ovl[s2])
                left_2[:] = pairs_left - both_nr
                c_both_eq[s2] = ck == 0
                c_left_2[:] = concat(left_2, c_left_2[48:12])
            if first_src == 0:
                pair_ix[:] = second_src - 1
            else:
                pair_ix[:] = 3
            both_eq = bool(c_both_eq[pair_ix])
            overlap = bool(c_ovl[pair_ix])
            both_once = bool(c_bo[pair_ix])       # the two close the operation, not overlapping
            if pair_ix == 0:
                left_fs[:] = c_left_2[12:0]
            elif pair_ix == 1:
                left_fs[:] = c_left_2[24:12]
            elif pair_ix == 2:
                left_fs[:] = c_left_2[36:24]
            else:
                left_fs[:] = c_left_2[48:36]

            # The walk: the first frame against the context as registered, the second against
            # the context the first leaves, both read from the checks above.  Where the first
            # frame's outcome decides (its COMMIT activating the staged operation, its DATA frame
            # admitted and closing the operation), the second's candidates were formed for each
            # case and the outcome selects one last.
            # the first frame's reason (a CONTROL request) or event code, formed for each candidate
            if first_src == 0:
                pick[:] = c_freason[8:0]
            elif first_src == 2:
                pick[:] = c_freason[24:16]
            else:
                pick[:] = c_freason[32:24]
            f_reason[:] = OK
            if first_valid and f_ctl:
                f_reason[:] = pick[8:0]
            if first_src == 0:
                f_code[:] = c_fcode[4:0]
            elif first_src == 2:
                f_code[:] = c_fcode[12:8]
            else:
                f_code[:] = c_fcode[16:12]
            # the outcomes as flat conditions, each a selected flag and the context
            f_stage = first_valid and f_stage_go
            f_commit_ok = first_valid and f_commit_go and st_ok and not is_open
            f_held = f_commit_ok and is_busy    # held until the previous operation's drain is over
            f_activate = f_commit_ok and not is_busy
            f_abort = first_valid and f_abort_go and is_open
            f_admit = bool(c_fadm[first_src])
            f_closing = bool(c_fclose[first_src])
            # the operation is open for the second frame: reopened by the first's COMMIT, else
            # open unless the first aborted it or gave its last range all its contributors
            open_1 = f_activate or (is_open and not f_abort and not f_closing)
            s_go = second_valid and not f_held and s_port != f_port
            # the staged operation and the datapath as the first frame leaves them
            st_ok_1 = f_stage or (st_ok and not f_activate)
            ids_staged_1 = (f_stage and f_hdr[F_GENERATION_END:F_OP_ID_LSB] == s_hdr[F_GENERATION_END:F_OP_ID_LSB]) or (
                not f_stage and s_ids_staged)
            ids_active_1 = (f_activate and s_ids_staged) or (not f_activate and s_ids_active)
            busy_1 = is_busy or f_activate
            s_reason[:] = OK
            s_code[:] = EV_CONTROL
            if s_go and s_ctl:
                s_reason[:] = control_reason(s_ctl_short, s_is_stage, s_stage_reason, s_is_commit, st_ok_1, ids_staged_1,
                                             s_is_abort, open_1, ids_active_1)
            elif s_go:
                if not open_1:
                    if s_long:
                        s_code[:] = DROP_TOO_LONG
                    else:
                        s_code[:] = DROP_NO_OPERATION
                elif f_activate:
                    s_code[:] = s_code_staged
                elif f_admit and overlap and s_admit_active:
                    # a duplicate of the ranges the first frame admitted in this cycle (same
                    # contributor, overlapping intervals; both passed the range rule)
                    s_code[:] = DROP_DUPLICATE
                else:
                    s_code[:] = s_code_active
            s_control = s_go and s_ctl and s_ctl_short
            s_stage = s_go and s_stage_go
            # a COMMIT after the first frame's STAGE checks its ids against that STAGE's
            if f_stage:
                s_commit_ok = s_control and s_is_commit and ids_staged_1
            else:
                s_commit_ok = s_go and s_commit_go and st_ok and not f_activate
            s_held = s_commit_ok and busy_1 and not open_1
            s_activate = s_commit_ok and not busy_1 and not open_1
            s_abort = s_control and s_is_abort and ids_active_1 and open_1
            s_ok = s_stage or (s_commit_ok and not open_1) or s_abort
            # (s_admit_o: admitted when the operation is open for it; closed, it is not)
            if f_activate:
                s_admit_o = s_go and s_dadm_st
            else:
                s_admit_o = s_go and s_dadm and not (f_admit and overlap)
            s_admit = s_admit_o and open_1

            # The context the two frames leave, in their order.  The pair counts and order-queue
            # slots each outcome needs are formed beside the walk; the outcome selects one.
            left_f[:] = pairs_left - f_nr
            left_s[:] = pairs_left - s_nr
            fresh_s[:] = st_pairs - s_nr
            slot_a[:] = orp + oc
            slot_b[:] = slot_a + 1
            f_push = f_admit and act_word[F_POLICY_END:F_POLICY_LSB] == POLICY_FP32_ARRIVAL
            s_push = s_admit and ((f_activate and st_word[F_POLICY_END:F_POLICY_LSB] == POLICY_FP32_ARRIVAL) or
                                  (not f_activate and act_word[F_POLICY_END:F_POLICY_LSB] == POLICY_FP32_ARRIVAL))
            for i in range(ORDER_DEPTH):
                # each slot's value for each pair of pushes, formed first; the pushes select last
                # (the first frame's push leaves no activation before the second's)
                b_old = bool(ob[i])
                if slot_b == i:
                    b_fs = s_port
                elif slot_a == i:
                    b_fs = f_port
                else:
                    b_fs = b_old
                if slot_a == i:
                    b_f = f_port
                else:
                    b_f = b_old
                if (f_activate and orp == i) or (not f_activate and slot_a == i):
                    b_s = s_port
                else:
                    b_s = b_old
                if f_push and s_push:
                    ob[i] = b_fs
                elif f_push:
                    ob[i] = b_f
                elif s_push:
                    ob[i] = b_s
            if f_stage:
                staged[:] = f_hdr
                st_ok = True
                staged_pairs[:] = f_pairs
            if f_activate:
                active[:] = staged
                st_ok = False
                is_busy = True
                op.clear.next = 1
            if f_abort:
                is_aborting = True
                qt[:] = 0
            if s_stage:
                staged[:] = s_hdr
                st_ok = True
                staged_pairs[:] = s_pairs
            if s_activate:
                active[:] = staged
                st_ok = False
                is_busy = True
                op.clear.next = 1
            if s_abort:
                is_aborting = True
                qt[:] = 0
            # The operation is open after the two frames: if open for the second, unless it aborts
            # the operation or its admission closes it (its pairs are all that is left, after the
            # first's COMMIT: all of them, or admission: less the first's); if closed for it, when
            # its COMMIT activates the staged operation.  Formed for both cases, open_1 selects.
            s_abort_o = s_control and s_is_abort and ids_active_1
            # (x_o1, x_o0: open, with the two frames' pairs closing it or not)
            s_act_c = s_commit_ok and not busy_1
            x_o1 = not s_abort_o and not (s_go and ((f_activate and s_dadm_st_close) or (
                not f_activate and ((f_admit and s_dadm) or (not f_admit and s_dadm_close)))))
            x_o0 = not s_abort_o and not (s_go and ((f_activate and s_dadm_st_close) or (
                not f_activate and not f_admit and s_dadm_close)))
            if open_1:
                if both_once:
                    is_open = x_o1
                else:
                    is_open = x_o0
            else:
                is_open = s_act_c
            # The pairs still needed and the order queue's count: each outcome's value formed
            # beside the walk (from the registers), the outcome selects (one-hot, OR-ed: no
            # adder after the verdicts)
            # (formed for the operation open for the second frame and closed: then it is not
            # admitted and its COMMIT may activate the staged operation; open_1 selects last)
            s_push_o = s_admit_o and ((f_activate and st_word[F_POLICY_END:F_POLICY_LSB] == POLICY_FP32_ARRIVAL) or
                                      (not f_activate and act_word[F_POLICY_END:F_POLICY_LSB] == POLICY_FP32_ARRIVAL))
            left_o[:] = 0
            if s_admit_o and f_activate:
                left_o[:] = left_o | fresh_s
            if s_admit_o and f_admit:
                left_o[:] = left_o | left_fs
            if s_admit_o and not f_activate and not f_admit:
                left_o[:] = left_o | left_s
            if not s_admit_o and f_admit:
                left_o[:] = left_o | left_f
            if not s_admit_o and f_activate:
                left_o[:] = left_o | st_pairs
            if not s_admit_o and not f_admit and not f_activate:
                left_o[:] = left_o | pairs_left
            if s_act_c:
                left_c[:] = staged_pairs
            elif f_admit:
                left_c[:] = left_f
            else:
                left_c[:] = pairs_left
            if open_1:
                left[:] = left_o
            else:
                left[:] = left_c
            oc_1[:] = oc + 1
            oc_2[:] = oc + 2
            ocn_o[:] = 0
            if f_push and s_push_o:
                ocn_o[:] = ocn_o | oc_2
            if (f_push and not s_push_o) or (s_push_o and not f_push and not f_activate):
                ocn_o[:] = ocn_o | oc_1
            if not f_push and not s_push_o and not f_activate:
                ocn_o[:] = ocn_o | oc
            if f_activate and s_push_o:
                ocn_o[:] = ocn_o | 1
            if s_act_c:
                ocn_c[:] = 0
            elif f_push:
                ocn_c[:] = oc_1
            else:
                ocn_c[:] = oc
            if open_1:
                oc[:] = ocn_o
            else:
                oc[:] = ocn_c
            # admission marks the frame's ranges in the map (the masks as computed for the checks)
            for s in range(4):
                if s == 0:
                    entry[:] = hold_head0
                elif s == 1:
                    entry[:] = hold_head1
                elif s == 2:
                    entry[:] = e_p0
                else:
                    entry[:] = e_p1
                hdr[:] = entry[HDR_BITS:0]
                contributor[:] = hdr[F_CONTRIBUTOR_END:F_CONTRIBUTOR_LSB]
                span[:] = entry[H_PD:H_SPAN]
                mask[:] = span << (contributor * MAX_RANGES)
                if s == first_src:
                    fmask[:] = mask
                if s == second_src:
                    smask[:] = mask
            # (formed for the operation open for the second frame and closed: then it is not
            # admitted and its COMMIT may activate the staged operation, emptying the map)
            if f_activate:
                dmap_o[:] = 0
            else:
                dmap_o[:] = dup_map
            if f_admit:
                dmap_o[:] = dmap_o | fmask
            if s_admit_o:
                dmap_o[:] = dmap_o | smask
            if s_act_c:
                dmap_c[:] = 0
            elif f_admit:
                dmap_c[:] = dup_map | fmask
            else:
                dmap_c[:] = dup_map
            if open_1:
                dmap[:] = dmap_o
            else:
                dmap[:] = dmap_c

            # the frames answered: the first unless held; the second when the operation is open for
            # it, else unless it is a COMMIT held (ds_c)
            df = first_valid and not f_held
            ds_c = s_go and not (s_commit_ok and busy_1)
            # the responses (one per CONTROL frame answered) and the verdicts
            if first_valid and not f_held:
                if f_ctl:
                    resp[:] = concat(f_hdr[F_OPCODE_END:F_OPCODE_LSB], f_reason, f_hdr[F_GENERATION_END:F_OP_ID_LSB],
                                     intbv(OP_ACK)[4:], intbv(CLASS_CONTROL)[4:])
                    if not f_fok:
                        resp[F_OPCODE_END:F_OPCODE_LSB] = OP_NACK
                    resp_mem[wp].next = resp
                    wp[:] = wp + 1
                    rc[:] = rc + 1
                if f_port:
                    p1_verdict.bank.next = f_bank
                else:
                    p0_verdict.bank.next = f_bank
            if s_go and not s_held:
                if s_ctl:
                    resp[:] = concat(s_hdr[F_OPCODE_END:F_OPCODE_LSB], s_reason, s_hdr[F_GENERATION_END:F_OP_ID_LSB],
                                     intbv(OP_ACK)[4:], intbv(CLASS_CONTROL)[4:])
                    if not s_ok:
                        resp[F_OPCODE_END:F_OPCODE_LSB] = OP_NACK
                    resp_mem[wp].next = resp
                    wp[:] = wp + 1
                    rc[:] = rc + 1
                if s_port:
                    p1_verdict.bank.next = s_bank
                else:
                    p0_verdict.bank.next = s_bank
            # The verdicts and their events: the second frame's formed for the operation closed and
            # open for it (answered or held; its code), open_1 selects last.
            if s_ctl:
                s_code_o[:] = EV_CONTROL
                s_code_c[:] = EV_CONTROL
            else:
                if s_long:
                    s_code_c[:] = DROP_TOO_LONG
                else:
                    s_code_c[:] = DROP_NO_OPERATION
                if f_activate:
                    s_code_o[:] = s_code_staged
                elif f_admit and overlap and s_admit_active:
                    s_code_o[:] = DROP_DUPLICATE
                else:
                    s_code_o[:] = s_code_active
            if open_1:
                if s_go and s_port:
                    p1_event.valid.next = 1
                    p1_event.code.next = s_code_o
                    p1_verdict.valid.next = 1
                    p1_verdict.admit.next = s_admit_o
                elif df and f_port:
                    p1_event.valid.next = 1
                    p1_event.code.next = f_code
                    p1_verdict.valid.next = 1
                    p1_verdict.admit.next = f_admit
                if s_go and not s_port:
                    p0_event.valid.next = 1
                    p0_event.code.next = s_code_o
                    p0_verdict.valid.next = 1
                    p0_verdict.admit.next = s_admit_o
                elif df and not f_port:
                    p0_event.valid.next = 1
                    p0_event.code.next = f_code
                    p0_verdict.valid.next = 1
                    p0_verdict.admit.next = f_admit
            else:
                # (the second frame is not admitted: the operation is closed for it)
                if ds_c and s_port:
                    p1_event.valid.next = 1
                    p1_event.code.next = s_code_c
                    p1_verdict.valid.next = 1
                    p1_verdict.admit.next = 0
                elif df and f_port:
                    p1_event.valid.next = 1
                    p1_event.code.next = f_code
                    p1_verdict.valid.next = 1
                    p1_verdict.admit.next = f_admit
                if ds_c and not s_port:
                    p0_event.valid.next = 1
                    p0_event.code.next = s_code_c
                    p0_verdict.valid.next = 1
                    p0_verdict.admit.next = 0
                elif df and not f_port:
                    p0_event.valid.next = 1
                    p0_event.code.next = f_code
                    p0_verdict.valid.next = 1
                    p0_verdict.admit.next = f_admit
            # The frames waiting in processing order are the queue's entries, then this cycle's
            # frames (port 0's first); the two processed (at most) are the first two of them, so
            # the first d answered (d = 0, 1 or 2) leave and the rest wait: slot i takes waiting
            # frame i + d.  Of the two verdicts only the second depends on whether the operation is
            # open for it (a COMMIT that passes its checks is held while it is closed and the
            # datapath busy), and that is known last: the next slots and count are formed for both
            # cases (closed, open), and open_1 selects.  (No adder after the verdicts: the counts
            # are formed from the registered count and this cycle's frames.)
            # The checks a cycle ahead, for every waiting frame and each port's frame completing
            # next cycle: the range rule against each operation the edge can leave active or
            # staged (the active one, the staged one, the first and the second candidate's STAGE;
            # act_sel and st_sel name the ones it leaves), and whether its ranges overlap each
            # candidate's.
            for j in range(HOLD_DEPTH + 4):
                if j < HOLD_DEPTH + 2:
                    if j < HOLD_DEPTH:
                        entry[:] = hold_mem[j]
                    elif j == HOLD_DEPTH:
                        entry[:] = e_p0
                    else:
                        entry[:] = e_p1
                    hdr[:] = entry[HDR_BITS:0]
                    offset[:] = hdr[F_OFFSET_END:F_OFFSET_LSB]
                    n[:] = hdr[F_N_END:F_N_LSB]
                    frame_end[:] = entry[H_NR:H_FE]
                    rok = n != 0 and offset[4:0] == 0
                    part = n[4:0] != 0
                    contributor[:] = hdr[F_CONTRIBUTOR_END:F_CONTRIBUTOR_LSB]
                    r_first[:] = offset[13:4]
                    r_end[:] = entry[H_NEED:H_RE]
                elif j == HOLD_DEPTH + 2:
                    frame_end[:] = p0_frame.next_fe
                    rok = bool(p0_frame.next_rok)
                    part = bool(p0_frame.next_part)
                    contributor[:] = p0_frame.next_c
                    r_first[:] = p0_frame.next_rf
                    r_end[:] = p0_frame.next_re
                else:
                    frame_end[:] = p1_frame.next_fe
                    rok = bool(p1_frame.next_rok)
                    part = bool(p1_frame.next_part)
                    contributor[:] = p1_frame.next_c
                    r_first[:] = p1_frame.next_rf
                    r_end[:] = p1_frame.next_re
                count[:] = act_word[F_COUNT_END:F_COUNT_LSB]
                r_act = rok and frame_end <= count and (not part or frame_end == count)
                count[:] = st_word[F_COUNT_END:F_COUNT_LSB]
                r_st = rok and frame_end <= count and (not part or frame_end == count)
                for s2 in range(4):
                    if s2 == 0:
                        count[:] = c_cnt[13:0]
                        cr[:] = c_range[31:0]
                    elif s2 == 1:
                        count[:] = c_cnt[26:13]
                        cr[:] = c_range[62:31]
                    elif s2 == 2:
                        count[:] = c_cnt[39:26]
                        cr[:] = c_range[93:62]
                    else:
                        count[:] = c_cnt[52:39]
                        cr[:] = c_range[124:93]
                    r_cand[s2] = rok and frame_end <= count and (not part or frame_end == count)
                    ovc[s2] = contributor == cr[31:28] and r_first < cr[19:10] and cr[28:19] < r_end
                # {the second candidate's, the first's, the staged, the active operation's}
                rbits[:] = concat(bool(r_cand[second_src]), bool(r_cand[first_src]), r_st, r_act)
                if j < HOLD_DEPTH + 2:
                    for b in range(4):
                        r_src[4 * j + b] = rbits[b]
                        ov_src[4 * j + b] = ovc[b]
                elif j == HOLD_DEPTH + 2:
                    pr0_r.next = rbits
                    pr0_ov.next = ovc
                else:
                    pr1_r.next = rbits
                    pr1_ov.next = ovc
            for b in range(4):
                e_p0[H_R + b] = r_src[4 * HOLD_DEPTH + b]
                e_p1[H_R + b] = r_src[4 * HOLD_DEPTH + 4 + b]
                e_p0[H_OV + b] = ov_src[4 * HOLD_DEPTH + b]
                e_p1[H_OV + b] = ov_src[4 * HOLD_DEPTH + 4 + b]
            if p0_frame.valid and p1_frame.valid:
                hb[:] = hc + 2
            elif p0_frame.valid or p1_frame.valid:
                hb[:] = hc + 1
            else:
                hb[:] = hc
            hb1[:] = hb - 1
            hb2[:] = hb - 2
            for i in range(HOLD_DEPTH):
                for t in range(3):
                    # waiting frame i + t (an entry that stays takes its duplicate check against the
                    # map as registered)
                    # (its checks a cycle ahead as formed above)
                    if i + t < hc:
                        if i + t < HOLD_DEPTH:
                            slot[:] = hold_mem[i + t]
                            slot[H_PD] = cpd[i + t]
                            for b in range(4):
                                slot[H_R + b] = r_src[4 * (i + t) + b]
                                slot[H_OV + b] = ov_src[4 * (i + t) + b]
                    elif i + t == hc and p0_frame.valid:
                        slot[:] = e_p0
                    else:
                        slot[:] = e_p1
                    if t == 0:
                        sq0[:] = slot
                    elif t == 1:
                        sq1[:] = slot
                    else:
                        sq2[:] = slot
                if s_go:
                    slot_o[:] = sq2
                elif df:
                    slot_o[:] = sq1
                else:
                    slot_o[:] = sq0
                if ds_c:
                    slot_c[:] = sq2
                elif df:
                    slot_c[:] = sq1
                else:
                    slot_c[:] = sq0
                if open_1:
                    hold_mem[i].next = slot_o
                else:
                    hold_mem[i].next = slot_c
            if s_go:
                hc_o[:] = hb2
            elif df:
                hc_o[:] = hb1
            else:
                hc_o[:] = hb
            if ds_c:
                hc_c[:] = hb2
            elif df:
                hc_c[:] = hb1
            else:
                hc_c[:] = hb
            if open_1:
                hc[:] = hc_o
            else:
                hc[:] = hc_c

            st_word.next = staged
            st_valid.next = st_ok
            st_pairs.next = staged_pairs
            act_word.next = active
            op_open.next = is_open
            dp_busy.next = is_busy
            aborting.next = is_aborting
            quiet.next = qt
            pairs_left.next = left
            dup_map.next = dmap
            # what this edge changes in the map, for the checks a cycle ahead
            clr_last.next = f_activate or s_activate
            # which operations the edge leaves active and staged (for the range rules formed ahead)
            if f_activate:
                act_sel.next = 1
            elif open_1:
                act_sel.next = 0
            elif s_commit_ok and not busy_1:
                if f_stage:
                    act_sel.next = 2
                else:
                    act_sel.next = 1
            else:
                act_sel.next = 0
            if s_stage:
                st_sel.next = 2
            elif f_stage:
                st_sel.next = 1
            else:
                st_sel.next = 0
            for s2 in range(4):
                adm_o[s2] = (f_admit and first_src == s2) or (s_admit_o and second_src == s2)
                adm_c[s2] = f_admit and not s_act_c and first_src == s2
            if open_1:
                adm_last.next = adm_o
            else:
                adm_last.next = adm_c
            resp_wp.next = wp
            resp_count.next = rc
            ord_bits.next = ob
            ord_rp.next = orp
            ord_next.next = orp + 1
            ord_count.next = oc
            hold_count.next = hc

    return operation_outputs, count_contributors, read_queue_heads, precheck, admit_control
