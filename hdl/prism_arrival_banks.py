"""FP32_ARRIVAL accumulation of the node: two FP32 banks fed by both receive ports in admission order.

Phase 4 (online FP32 path) of the SINGLE node.  The FP32 running sums live in
two banks, each a 16-lane hdl/reduce_slice.py (PATHS="fp32": banked FP32 RAMs
updated through the pipelined hdl/fp32_add.py, with its per-lane reservations
against read-after-write hazards).  Range r lives in bank r % 2 at bank row
r // 2, so two ports feeding different ranges usually hit different banks and
both advance in the same cycle.

Admission order (docs/protocol.md): every element receives its contributions
in the order their frames were admitted.  The node starts frames in admission
order (its readers wait for their turn); this block keeps the order while two
started frames run at the same time:
  * the frame that started first is the *older* one; it never waits for the
    younger one;
  * the younger frame may issue range x only if the older frame does not
    still have x ahead of it (x outside the older frame's ranges, or already
    issued: older frames issue their ranges in increasing order);
  * the same holds against a frame that has started behind the other port's
    running one but has not issued anything yet (the reader's "pending"
    frame): when it is older, none of its ranges may be overtaken;
  * when both want the same bank in one cycle, the older frame gets it.
Within a bank, contributions enter in the order granted; the bank's
reservations make a later contribution to the same position wait for the
earlier one's sum.

Read-out: a completed range is read from its bank (the bank empties the row);
bank 0's answers take precedence on the shared read-out output, and each bank
answers in command order, so the row of an answer comes from a small
per-bank command FIFO.

Parameters:
    CAPACITY        elements held (multiple of 32, 32 .. 4096): each bank holds CAPACITY / 2
    FP32_LATENCY    fp32_add latency (1 .. 4)

Ports (widths from the signals):
    clk, rst                        clock; synchronous reset
    enable                          the active operation is FP32_ARRIVAL
    fmt                             input format code (2 bits)
    p{P}_valid, p{P}_ready (out)    (P = 0, 1) reader P's issue group handshake
    p{P}_row                        its range (8 bits)
    p{P}_packed, p{P}_count         the range's elements, natively packed (512 bits); their number (7 bits)
    p{P}_active, p{P}_seq           reader P has a frame with groups not yet taken; its start number
                                    (frames start in admission order; 4 bits, compared modulo 16)
    p{P}_lo, p{P}_hi, p{P}_next     that frame's ranges [lo, hi) and its lowest range not yet taken
    p{P}_pend, p{P}_pseq            reader P has started a second frame behind it, nothing taken yet;
                                    its start number
    p{P}_plo, p{P}_phi              that pending frame's ranges [plo, phi)
    cmd_valid, cmd_row              read out a completed range
    cmd_ready                       out: the command is taken
    ev0_valid, ev0_row              out: bank 0 took a range contribution (for completion tracking)
    ev1_valid, ev1_row              out: bank 1 took one
    o_valid, o_row, o_tile          out: a read-out range: its row and 16 FP32 sums (512 bits)
"""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

from hdl.reduce_slice import reduce_slice

QUEUE = 8      # read-out commands in flight per bank (> the slice's output queue + pipeline)


@block
def prism_arrival_banks(clk, rst, enable, fmt,
                        p0_valid, p0_ready, p0_row, p0_packed, p0_count, p0_active, p0_seq, p0_lo, p0_hi, p0_next,
                        p0_pend, p0_pseq, p0_plo, p0_phi,
                        p1_valid, p1_ready, p1_row, p1_packed, p1_count, p1_active, p1_seq, p1_lo, p1_hi, p1_next,
                        p1_pend, p1_pseq, p1_plo, p1_phi,
                        cmd_valid, cmd_row, cmd_ready, ev0_valid, ev0_row, ev1_valid, ev1_row,
                        o_valid, o_row, o_tile, KULISCH_W=320, CAPACITY=4096, FP32_LATENCY=4):
    if not (32 <= CAPACITY <= 4096 and CAPACITY % 32 == 0):
        raise ValueError(f"prism_arrival_banks: CAPACITY={CAPACITY}; two banks need a multiple of 32 in 32 .. 4096")
    if len(p0_packed) != 512 or len(p1_packed) != 512 or len(o_tile) != 512:
        raise ValueError("prism_arrival_banks: packed groups and o_tile are 512 bits")
    if len(p0_row) != 8 or len(cmd_row) != 8 or len(o_row) != 8:
        raise ValueError("prism_arrival_banks: rows are 8 bits")

    def sig(w=None):
        return Signal(bool(0)) if w is None else Signal(intbv(0)[w:])

    older = sig()                          # 0/1: which port's frame started first (when both run)
    go0, go1 = sig(), sig()                # port P's group is granted this cycle (if its bank is ready)
    b_valid = [sig(), sig()]
    b_ready = [sig(), sig()]
    b_data = [sig(512), sig(512)]
    b_index = [sig(12), sig(12)]            # element index of the range in its bank (row // 2 * 16)
    b_count = [sig(7), sig(7)]
    b_row = [sig(8), sig(8)]
    rd_valid = [sig(), sig()]
    rd_ready = [sig(), sig()]
    rd_range = [sig(8), sig(8)]
    out_data = [sig(512), sig(512)]
    out_state = [sig(KULISCH_W), sig(KULISCH_W)]
    out_user = [sig(8), sig(8)]
    out_last = [sig(), sig()]
    out_valid = [sig(), sig()]
    out_ready = [sig(), sig()]
    index_error = [sig(), sig()]
    insts = []
    for k in range(2):
        insts.append(reduce_slice(clk, rst, Signal(intbv(1)[2:]), b_data[k], b_valid[k], b_ready[k], b_index[k],
                                  b_count[k], fmt, rd_valid[k], rd_ready[k], rd_range[k], out_data[k],
                                  out_state[k], out_user[k], out_last[k], out_valid[k], out_ready[k],
                                  index_error[k], CAPACITY=CAPACITY // 2, FP32_LATENCY=FP32_LATENCY, PATHS="fp32"))
    bv0, bv1 = b_valid
    br0, br1 = b_ready
    bd0, bd1 = b_data
    bi0, bi1 = b_index
    bc0, bc1 = b_count
    bw0, bw1 = b_row
    rv0, rv1 = rd_valid
    rr0, rr1 = rd_ready
    rg0, rg1 = rd_range
    od0, od1 = out_data
    ov0, ov1 = out_valid
    ol0, ol1 = out_last
    ok0, ok1 = out_ready

    @always_comb
    def age():
        d = modbv(0)[4:]
        d[:] = p0_seq - p1_seq
        # port 0's frame started later (d in 1..7, modulo 16): port 1's frame is the older one
        older.next = d != 0 and d < 8

    @always_comb
    def arbitrate():
        ok_0 = bool(0)
        ok_1 = bool(0)
        d0 = modbv(0)[4:]
        d1 = modbv(0)[4:]
        # admission order between the two running frames: the younger waits while the older one
        # still has the younger one's range ahead of it
        ok_0 = bool(p0_valid)
        ok_1 = bool(p1_valid)
        if p0_active and p1_active:
            if older:
                if p0_row >= p1_lo and p0_row < p1_hi and p1_next <= p0_row:
                    ok_0 = False
            else:
                if p1_row >= p0_lo and p1_row < p0_hi and p0_next <= p1_row:
                    ok_1 = False
        # ... and while a pending frame of the other port, older than it, has the range at all
        d0[:] = p0_seq - p1_pseq           # 1..7: port 1's pending frame started before port 0's frame
        if p1_pend and d0 != 0 and d0 < 8 and p0_row >= p1_plo and p0_row < p1_phi:
            ok_0 = False
        d1[:] = p1_seq - p0_pseq
        if p0_pend and d1 != 0 and d1 < 8 and p1_row >= p0_plo and p1_row < p0_phi:
            ok_1 = False
        # one group per bank per cycle: the older frame first
        if ok_0 and ok_1 and p0_row[0] == p1_row[0]:
            if older and p1_active:
                ok_0 = False
            else:
                ok_1 = False
        go0.next = ok_0 and enable
        go1.next = ok_1 and enable

    @always_comb
    def route():
        v0 = bool(0)
        v1 = bool(0)
        # bank 0 (even ranges)
        if go0 and not p0_row[0]:
            bd0.next = p0_packed
            bc0.next = p0_count
            bi0.next = concat(p0_row[8:1], intbv(0)[4:])
            bw0.next = p0_row
            v0 = True
        else:
            bd0.next = p1_packed
            bc0.next = p1_count
            bi0.next = concat(p1_row[8:1], intbv(0)[4:])
            bw0.next = p1_row
            v0 = go1 and not p1_row[0]
        # bank 1 (odd ranges)
        if go0 and p0_row[0]:
            bd1.next = p0_packed
            bc1.next = p0_count
            bi1.next = concat(p0_row[8:1], intbv(0)[4:])
            bw1.next = p0_row
            v1 = True
        else:
            bd1.next = p1_packed
            bc1.next = p1_count
            bi1.next = concat(p1_row[8:1], intbv(0)[4:])
            bw1.next = p1_row
            v1 = go1 and p1_row[0]
        bv0.next = v0
        bv1.next = v1
        if p0_row[0]:
            p0_ready.next = go0 and br1
        else:
            p0_ready.next = go0 and br0
        if p1_row[0]:
            p1_ready.next = go1 and br1
        else:
            p1_ready.next = go1 and br0

    # ---- read-out ----
    rows0 = [Signal(intbv(0)[8:]) for _ in range(QUEUE)]
    rows1 = [Signal(intbv(0)[8:]) for _ in range(QUEUE)]
    wp0, rp0, wp1, rp1 = [Signal(modbv(0)[3:]) for _ in range(4)]

    @always_comb
    def commands():
        rg0.next = cmd_row[8:1]
        rg1.next = cmd_row[8:1]
        rv0.next = cmd_valid and enable and not cmd_row[0]
        rv1.next = cmd_valid and enable and cmd_row[0]
        if cmd_row[0]:
            cmd_ready.next = rr1
        else:
            cmd_ready.next = rr0
        ok0.next = 1
        ok1.next = not ov0
        if ov0:
            o_valid.next = 1
            o_tile.next = od0
            o_row.next = rows0[rp0]
        else:
            o_valid.next = ov1
            o_tile.next = od1
            o_row.next = rows1[rp1]

    @always(clk.posedge)
    def bookkeeping():
        if rst:
            wp0.next = 0
            rp0.next = 0
            wp1.next = 0
            rp1.next = 0
            ev0_valid.next = 0
            ev1_valid.next = 0
        else:
            if rv0 and rr0:
                rows0[wp0].next = cmd_row
                wp0.next = wp0 + 1
            if rv1 and rr1:
                rows1[wp1].next = cmd_row
                wp1.next = wp1 + 1
            if ov0 and ol0:
                rp0.next = rp0 + 1
            if ov1 and ol1 and not ov0:
                rp1.next = rp1 + 1
            # a contribution counts once its bank has taken it (read-outs queue behind it)
            ev0_valid.next = bv0 and br0
            ev0_row.next = bw0
            ev1_valid.next = bv1 and br1
            ev1_row.next = bw1

    insts += [age, arbitrate, route, commands, bookkeeping]
    return insts
