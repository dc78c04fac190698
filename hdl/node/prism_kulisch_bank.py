"""One lane of the node's KULISCH_FIXED stores: a port-local Kulisch RAM per receive port, and their merge.

The node keeps Kulisch stores per receive port so both ports accumulate at
line rate without sharing a RAM port; each store is split into four sub-stores
by range % 4 (hdl/node/prism_kulisch_store.py).  This block is lane l of one
sub-store S of both ports: RAM A (port 0) and RAM B (port 1), one row per range
of that sub-store (row k holds element 16 * (4k + S) + l).

The whole process body is skipped in a cycle without a contribution or merge
request, so an idle lane costs the simulators almost nothing.

What a row holds: the extended sum, in carry-save segments
------------------------------------------------------------
A Kulisch register of W bits with a WB-bit wrap counter (state, wraps: the true
sum is signed(state) + wraps * 2^W, golden.arith.kulisch) is the same
information as the (W + WB)-bit two's-complement integer

    E = signed(state) + wraps * 2^W   (mod 2^(W + WB)),
    state = E[W-1:0],   wraps = E[W+WB-1:W] + E[W-1]   (mod 2^WB),

and adding two such words is adding their E's modulo 2^(W + WB): the old
"add the states, count the add's own wrap, add the wrap counts" is one plain
modular add of sign-extended numbers (row_to_state_wraps below; the counter
wrapping itself included, so the results are bit for bit those of the word add
of hdl/arith/kulisch_lane.py; tests/node/test_kulisch_bank.py checks it against
the golden model).  A row never resolves that add's carries: E is kept as
segments (`segments`: SEG = 32 bits each from bit 0, then one segment of the
rest up to bit W - 2, then the top segment, bits W - 1 .. W + WB - 1, where the
merge reads the wrap count) plus one pending carry bit into every segment but
the lowest, the carry its lower neighbour produced at the row's last add.  The
row's value is

    E = X + C   (mod 2^(W + WB)),   X the segments side by side, C the carry bits at the segments' LSBs.

An add into a row is one add per segment (segment + the term's segment + the
segment's pending carry; its carry out becomes the next segment's pending
carry), so no carry crosses a segment boundary in the cycle of the add: the
deepest accumulation path is one 34-bit carry chain (the segment and its carry
in as a pair of low bits) behind two LUTs, whatever W; it was a W-bit chain,
after a W-bit negation of the term in the decode (28.5 LUT levels at W = 320,
now 5.75: `prism synth prism_kulisch_bank`).  Only the merge resolves the
carries, in its own pipeline stages.  A row is W + WB + 3 + (segments - 1) bits
(`row_bits`: 349 at W = 320, 308 at W = 280).

Per cycle, independently:
  * port A: decode `a_data` (the functions of hdl/arith/number_decoder.py,
    called inside this block's process so a lane stays one MyHDL process) and
    add it into row `a_row` of RAM A; `a_first` replaces the row instead (the
    first contribution since COMMIT, so no clearing pass is needed).  With
    `exact` (the operation's input is EXACT partials) the contribution is the
    word `a_xword` instead, a partial as hdl/node/prism_exact_operand.py forms
    it (its E and flags: the row keeps the partial's true sum), registered
    beside this lane's stage 1 and chosen at the adder's operand;
  * port B: the same on RAM B;
  * merge: read row `m_row` of both RAMs through a second read port (a
    completed range is never written again, so it cannot collide with the
    accumulation ports), add the two rows and resolve the carries (the true
    sums added, flags ORed) and register the result on o_*; a RAM whose row
    was never written in this operation (`m_use_a`/`m_use_b` low) reads 0.

Block RAM: every RAM has one write port and one registered read port.  A
port's read-modify-write takes two stages: stage 0 reads the row (registered
read) while the element is decoded (its significand shifted within a 56-bit
window by the low 5 bits of its shift, the 32-bit block of the rest one-hot);
stage 1 places the window in its block and the next (sign-filled and inverted
for a negative element, whose +1 is the lowest segment's carry in), adds and
writes the row back.  A
contribution to the row written at the same edge as its read takes the written
word instead (a one-word bypass, carry bits included; whether it applies is
decided in stage 0), so back-to-back contributions to one row need no stall.
Each port's RAM is kept twice, written alike: one copy for accumulation, one
for the merge's read, so the merge never takes a cycle from accumulation.

The merge, MERGE_LATENCY (3) edges from m_valid to o_*:
  edge 1  both rows read (registered reads);
  M1      per segment: A's segment + B's segment + A's pending carry (one chain each); B's
          pending carries and the segments' carries out wait beside the sums, at most two
          units per segment;
  M2      per segment both candidates, with and without a carry from below (carry-select:
          two chains); their carries out from each sum's two low bits, its waiting units and
          whether its other bits are all ones; the carry into every segment (a prefix over the
          segments, one short chain); the choice.  The top segment gives the wrap count for
          either carry in (one chain each, from M1's sum) and its zero test (logic on M1's
          sum), so o_* come straight from M2.
The latency is one cycle more than the single full-width add it replaced; the store's
`merged` pipeline follows MERGE_LATENCY.

Parameters:
    ROWS        rows per RAM (ranges held by the sub-store, 1 .. 256)
    WRAP_BITS   wrap counter width (KULISCH_WRAP_BITS: what EXACT partials need, see
                hdl/node/prism_exact_operand.py; elements alone need 6)

Ports (widths from the signals):
    clk, rst                    clock; synchronous reset (RAMs are not cleared; see a_first)
    fmt                         element format code (2 bits: int8 0, fp16 1, bf16 2, fp32 3)
    exact                       the contributions are EXACT partials (a_xword/b_xword), not elements
    a_valid, a_row, a_first     port 0 contribution: present, row (8 bits), first since COMMIT
    a_data                      its element, right-aligned in 32 bits
    a_xword                     the EXACT partial of the contribution taken at the last edge, as a
                                word {-inf, +inf, nan, E} (W + WB + 3 bits; read in stage 1)
    b_valid, b_row, b_first, b_data, b_xword  port 1, the same
    m_valid, m_row              merge request for a row
    m_use_a, m_use_b            that row holds a contribution in RAM A / RAM B
    o_state                     out: merged W-bit state (W = KULISCH_W), MERGE_LATENCY cycles after m_valid
    o_nan, o_pos_inf, o_neg_inf out: merged specials flags
    o_overflow                  out: the merged wrap count is not 0
    o_wrap_sign                 out: the merged wrap count is negative
    o_wraps                     out: the merged wrap count (WRAP_BITS, two's complement): the
                                true sum is signed(o_state) + o_wraps * 2^W
"""
from myhdl import Signal, always, block, concat, intbv, modbv

from hdl.arith.number_decoder import FIELD_NAN, FIELD_SIGN, FIELDS_WIDTH, element_fields
from spec.formats import KULISCH_WIDTHS, KULISCH_WRAP_BITS

MERGE_LATENCY = 3       # rising edges from m_valid to o_*: the read, then M1 and M2
SEG = 32                # segment width below bit W - 1, and the term's block size
WINDOW = 56             # a significand (24 bits) shifted by 0 .. 31


def segments(W, WB):
    """The carry-save segments of a row's E (W + WB bits), as (lsb, width), lowest first:
    SEG-bit segments from bit 0, one segment of the rest up to bit W - 2, and the top segment
    from bit W - 1 (the state's sign) to W + WB - 1, where the merge reads the wrap count."""
    full = (W - 1) // SEG
    segs = [(SEG * k, SEG) for k in range(full)]
    if SEG * full < W - 1:
        segs.append((SEG * full, W - 1 - SEG * full))
    segs.append((W - 1, WB + 1))
    return segs


def row_bits(W, WB):
    """Width of a row: E, the three flags, a pending carry per segment above the lowest."""
    return W + WB + 3 + len(segments(W, WB)) - 1


def row_value(row, W, WB):
    """(E, nan, +inf, -inf) of a row word (Python ints): E = X + C mod 2^(W + WB)."""
    EW = W + WB
    e = row & ((1 << EW) - 1)
    for j, (lsb, _) in enumerate(segments(W, WB)[1:]):
        if row >> (EW + 3 + j) & 1:
            e += 1 << lsb
    return e & ((1 << EW) - 1), row >> EW & 1, row >> (EW + 1) & 1, row >> (EW + 2) & 1


def row_to_state_wraps(e, W, WB):
    """(state, wraps) of an extended sum E (Python ints, wraps as WB-bit two's complement)."""
    state = e & ((1 << W) - 1)
    wraps = ((e >> W) + (e >> (W - 1) & 1)) & ((1 << WB) - 1)
    return state, wraps


@block
def prism_kulisch_bank(clk, rst, fmt, exact, a_valid, a_row, a_first, a_data, a_xword, b_valid, b_row, b_first,
                       b_data, b_xword, m_valid, m_row, m_use_a, m_use_b, o_state, o_nan, o_pos_inf, o_neg_inf,
                       o_overflow, o_wrap_sign, o_wraps, ROWS=256, WRAP_BITS=KULISCH_WRAP_BITS):
    W = len(o_state)
    if W not in KULISCH_WIDTHS:
        raise ValueError(f"prism_kulisch_bank: o_state is {W} bits; KULISCH_W is 320 or 280")
    if not 1 <= ROWS <= 256:
        raise ValueError(f"prism_kulisch_bank: ROWS={ROWS} must be 1 .. 256")
    if len(a_data) != 32 or len(b_data) != 32:
        raise ValueError("prism_kulisch_bank: a_data/b_data are 32-bit lane fields")
    if len(o_wraps) != WRAP_BITS:
        raise ValueError(f"prism_kulisch_bank: o_wraps is {len(o_wraps)} bits; WRAP_BITS={WRAP_BITS}")
    WB = WRAP_BITS
    EW = W + WB                         # the extended sum E
    XWORD = EW + 3
    if len(a_xword) != XWORD or len(b_xword) != XWORD:
        raise ValueError(f"prism_kulisch_bank: a_xword/b_xword are words of {XWORD} bits (E and three flags)")
    # a row and an EXACT word: E at [EW-1:0], then nan, +inf, -inf; a row then its pending carries
    SEGS = segments(W, WB)
    NSEG = len(SEGS)
    NFULL = NSEG - 2                    # SEG-bit segments, handled by a loop; then the middle and top ones
    MID_LO, MID_W = SEGS[NSEG - 2]
    TOP_LO, TOP_W = SEGS[NSEG - 1]
    MID_HI, TOP_HI = MID_LO + MID_W, TOP_LO + TOP_W
    assert MID_LO == SEG * NFULL and TOP_LO == MID_HI == W - 1 and TOP_HI == EW
    CY_LO = EW + 3                      # row bit CY_LO + j - 1: the pending carry into segment j >= 1
    RWORD = CY_LO + NSEG - 1
    NB = -(-EW // SEG)                  # SEG-bit blocks a term is placed in
    E_ONES = (1 << EW) - 1
    SEG_ONES = (1 << SEG) - 1
    MID_ONES = (1 << MID_W) - 1
    SEG_HIGH_ONES = (1 << (SEG - 2)) - 1
    TOP_HIGH_ONES = (1 << (TOP_W - 3)) - 1
    MID_HIGH_ONES = (1 << (MID_W - 2)) - 1

    # Each port's RAM is kept twice, both copies written alike: the accumulation reads one, the merge
    # the other, so every RAM has one write port and one registered read port (a block RAM's simple
    # dual-port mode) and the merge never takes a cycle from accumulation.
    ram_a = [Signal(modbv(0)[RWORD:]) for _ in range(ROWS)]
    ram_b = [Signal(modbv(0)[RWORD:]) for _ in range(ROWS)]
    ram_am = [Signal(modbv(0)[RWORD:]) for _ in range(ROWS)]
    ram_bm = [Signal(modbv(0)[RWORD:]) for _ in range(ROWS)]
    q_a, q_b = Signal(modbv(0)[RWORD:]), Signal(modbv(0)[RWORD:])         # accumulation read data
    q_am, q_bm = Signal(modbv(0)[RWORD:]), Signal(modbv(0)[RWORD:])       # merge read data
    # stage 1 of each port: the decoded element (its window, its block one-hot, its sign and flags),
    # waiting for its row, and where the row comes from (the RAM, the bypass, or nowhere: first)
    s_a_valid, s_b_valid = Signal(bool(0)), Signal(bool(0))
    s_a_row, s_b_row = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    s_a_win, s_b_win = Signal(modbv(0)[WINDOW:]), Signal(modbv(0)[WINDOW:])
    s_a_lo, s_b_lo = Signal(modbv(0)[NB:]), Signal(modbv(0)[NB:])       # the window's low half goes to block B
    s_a_neg, s_b_neg = Signal(bool(0)), Signal(bool(0))                 # a negative element: the term inverted, +1
    s_a_flags, s_b_flags = Signal(modbv(0)[3:]), Signal(modbv(0)[3:])
    s_a_by_l, s_b_by_l = Signal(bool(0)), Signal(bool(0))               # the row comes from the word written last
    s_a_by_q, s_b_by_q = Signal(bool(0)), Signal(bool(0))               # ... from the RAM read
    # the row each port wrote at the last edge: the RAM read beside that write misses it (bypass)
    l_a_word, l_b_word = Signal(modbv(0)[RWORD:]), Signal(modbv(0)[RWORD:])
    # merge stage M1: rows read
    mg_valid = Signal(bool(0))
    mg_use_a, mg_use_b = Signal(bool(0)), Signal(bool(0))
    # merge stage M2: per-segment sums of the two rows, the units each segment still has to take
    # (its carry from below, B's pending carry), the ORed flags
    m2_valid = Signal(bool(0))
    m2_sum = Signal(modbv(0)[EW:])
    m2_cy = Signal(modbv(0)[NSEG:])         # bit j: segment j - 1's carry out (bit 0 unused)
    m2_cb = Signal(modbv(0)[NSEG:])         # bit j: B's pending carry into segment j (bit 0 unused)
    m2_flags = Signal(modbv(0)[3:])

    @always(clk.posedge)
    def ram_reads():
        # registered read ports (never reset)
        if a_valid:
            q_a.next = ram_a[a_row]
        if b_valid:
            q_b.next = ram_b[b_row]
        if m_valid:
            q_am.next = ram_am[m_row]
            q_bm.next = ram_bm[m_row]

    @always(clk.posedge)
    def accumulate_and_merge():
        if a_valid or b_valid or m_valid or s_a_valid or s_b_valid or mg_valid or m2_valid:
            # nothing to do in an idle cycle (the simulators run this process on every edge)
            f = intbv(0)[FIELDS_WIDTH:]
            sig = modbv(0)[24:]
            sh = modbv(0)[9:]
            blk = modbv(0)[4:]
            win = modbv(0)[WINDOW:]
            onehot = modbv(0)[NB:]
            wlo = modbv(0)[SEG:]
            whi = modbv(0)[WINDOW - SEG:]
            t = modbv(0)[EW:]
            old = modbv(0)[RWORD:]
            row = modbv(0)[RWORD:]
            cin = modbv(0)[NSEG:]
            xa = modbv(0)[SEG:]
            xb = modbv(0)[SEG:]
            ssum = modbv(0)[SEG + 2:]
            ma = modbv(0)[MID_W:]
            mb = modbv(0)[MID_W:]
            msum = modbv(0)[MID_W + 2:]
            ta = modbv(0)[TOP_W:]
            tb = modbv(0)[TOP_W:]
            tsum = modbv(0)[TOP_W + 2:]
            tflags = modbv(0)[3:]
            xw = modbv(0)[EW + 3:]
            cy = modbv(0)[NSEG:]
            g = modbv(0)[NSEG:]
            h = modbv(0)[NSEG:]
            pre = modbv(0)[NSEG + 1:]
            cv = modbv(0)[NSEG:]
            z0w = modbv(0)[EW:]
            z1w = modbv(0)[EW:]
            sel = modbv(0)[EW:]
            ssum1 = modbv(0)[SEG + 2:]
            msum1 = modbv(0)[MID_W + 2:]
            tsum1 = modbv(0)[TOP_W + 2:]
            wr0 = modbv(0)[WB:]
            wr1 = modbv(0)[WB:]
            ones = modbv(0)[NSEG:]
            cb0 = bool(0)
            ov0 = bool(0)
            ov1 = bool(0)
            hi1 = bool(0)
            lo3 = modbv(0)[3:]
            go = bool(0)
            neg = bool(0)
            ci = bool(0)
            for port in range(2):
                # stage 1: place the window, add the term into the row read at the last edge (or
                # written then: bypass), segment by segment
                if port == 0:
                    go = bool(s_a_valid and not rst)
                    win[:] = s_a_win
                    onehot[:] = s_a_lo
                    neg = bool(s_a_neg)
                    if exact:
                        xw[:] = a_xword
                        tflags[:] = xw[EW + 3:EW]
                    else:
                        xw[:] = 0
                        tflags[:] = s_a_flags
                    if s_a_by_l:
                        old[:] = l_a_word
                    elif s_a_by_q:
                        old[:] = q_a
                    else:
                        old[:] = 0
                else:
                    go = bool(s_b_valid and not rst)
                    win[:] = s_b_win
                    onehot[:] = s_b_lo
                    neg = bool(s_b_neg)
                    if exact:
                        xw[:] = b_xword
                        tflags[:] = xw[EW + 3:EW]
                    else:
                        xw[:] = 0
                        tflags[:] = s_b_flags
                    if s_b_by_l:
                        old[:] = l_b_word
                    elif s_b_by_q:
                        old[:] = q_b
                    else:
                        old[:] = 0
                if go:
                    # the term: the EXACT word's E, or the element's window in its block and the
                    # one above, inverted for a negative element (its +1 enters as segment 0's carry)
                    wlo[:] = win[SEG:0]
                    whi[:] = win[WINDOW:SEG]
                    t[:] = xw[EW:0]
                    for blk_i in range(NB):
                        if onehot[blk_i]:
                            t[:] = t | (wlo << (SEG * blk_i))
                    for blk_i in range(1, NB):
                        if onehot[blk_i - 1]:
                            t[:] = t | (whi << (SEG * blk_i))
                    if neg:
                        t[:] = t ^ E_ONES
                    cin[:] = concat(old[RWORD:CY_LO], neg)
                    row[:] = 0
                    for k in range(NFULL):
                        xa[:] = old >> (SEG * k)
                        xb[:] = t >> (SEG * k)
                        # the segment's carry in enters as a pair of LSBs: one chain, no third operand
                        ci = bool(cin[k])
                        ssum[:] = concat(xa, ci) + concat(xb, ci)
                        row[:] = row | (ssum[SEG + 1:1] << (SEG * k))
                        row[CY_LO + k] = ssum[SEG + 1]
                    ma[:] = old[MID_HI:MID_LO]
                    mb[:] = t[MID_HI:MID_LO]
                    msum[:] = concat(ma, cin[NFULL]) + concat(mb, cin[NFULL])
                    row[MID_HI:MID_LO] = msum[MID_W + 1:1]
                    row[CY_LO + NFULL] = msum[MID_W + 1]
                    ta[:] = old[TOP_HI:TOP_LO]
                    tb[:] = t[TOP_HI:TOP_LO]
                    tsum[:] = concat(ta, cin[NFULL + 1]) + concat(tb, cin[NFULL + 1])
                    row[TOP_HI:TOP_LO] = tsum[TOP_W + 1:1]      # the top segment's carry out is dropped
                    row[EW + 3:EW] = old[EW + 3:EW] | tflags
                    if port == 0:
                        ram_a[s_a_row].next = row
                        ram_am[s_a_row].next = row
                        l_a_word.next = row
                    else:
                        ram_b[s_b_row].next = row
                        ram_bm[s_b_row].next = row
                        l_b_word.next = row
                # stage 0: decode the element while its row is read: the significand shifted by the
                # low five bits of its shift, the block of the rest one-hot; where the row will come from.
                # Only the valid bit depends on `go`: the rest is read only beside it, and registers
                # without a load condition keep that condition out of their inputs' logic.  (The
                # bypass choice needs no reset term: a reset in this cycle drops this contribution.)
                if port == 0:
                    go = bool(a_valid and not rst)
                    f[:] = element_fields(a_data, fmt)
                    s_a_row.next = a_row
                    s_a_by_l.next = s_a_valid and s_a_row == a_row and not a_first
                    s_a_by_q.next = not (s_a_valid and s_a_row == a_row) and not a_first
                    s_a_valid.next = go
                else:
                    go = bool(b_valid and not rst)
                    f[:] = element_fields(b_data, fmt)
                    s_b_row.next = b_row
                    s_b_by_l.next = s_b_valid and s_b_row == b_row and not b_first
                    s_b_by_q.next = not (s_b_valid and s_b_row == b_row) and not b_first
                    s_b_valid.next = go
                sig[:] = f[24:0]
                sh[:] = f[33:24]
                blk[:] = sh[9:5]
                if exact or f[FIELD_NAN] or f[FIELD_NAN + 1] or f[FIELD_NAN + 2]:
                    win[:] = 0          # an EXACT word's E is the term; a special's term is 0
                else:
                    win[:] = sig << sh[5:0]
                for blk_i in range(NB):
                    onehot[blk_i] = blk == blk_i
                neg = bool(f[FIELD_SIGN] and not exact)
                if port == 0:
                    s_a_win.next = win
                    s_a_lo.next = onehot
                    s_a_neg.next = neg
                    s_a_flags.next = f[FIELD_SIGN:FIELD_NAN]      # nan, +inf, -inf
                else:
                    s_b_win.next = win
                    s_b_lo.next = onehot
                    s_b_neg.next = neg
                    s_b_flags.next = f[FIELD_SIGN:FIELD_NAN]
            # merge M1 (rows read at the last edge): per segment A + B + A's pending carry
            if mg_valid:
                if mg_use_a:
                    old[:] = q_am
                else:
                    old[:] = 0
                if mg_use_b:
                    row[:] = q_bm
                else:
                    row[:] = 0
                cin[:] = concat(old[RWORD:CY_LO], False)
                t[:] = 0
                cy[:] = 0
                for k in range(NFULL):
                    xa[:] = old >> (SEG * k)
                    xb[:] = row >> (SEG * k)
                    ci = bool(cin[k])
                    ssum[:] = concat(xa, ci) + concat(xb, ci)
                    t[:] = t | (ssum[SEG + 1:1] << (SEG * k))
                    cy[k + 1] = ssum[SEG + 1]
                ma[:] = old[MID_HI:MID_LO]
                mb[:] = row[MID_HI:MID_LO]
                msum[:] = concat(ma, cin[NFULL]) + concat(mb, cin[NFULL])
                t[MID_HI:MID_LO] = msum[MID_W + 1:1]
                cy[NFULL + 1] = msum[MID_W + 1]
                ta[:] = old[TOP_HI:TOP_LO]
                tb[:] = row[TOP_HI:TOP_LO]
                tsum[:] = concat(ta, cin[NFULL + 1]) + concat(tb, cin[NFULL + 1])
                t[TOP_HI:TOP_LO] = tsum[TOP_W + 1:1]
                m2_sum.next = t
                m2_cy.next = cy
                m2_cb.next = concat(row[RWORD:CY_LO], False)
                m2_flags.next = old[EW + 3:EW] | row[EW + 3:EW]
            # merge M2: segment j still takes p_j = B's pending carry + segment j-1's carry out (0 .. 2)
            # and the carry from below, c_j (0 or 1).  Carry-select: both candidates u_j + p_j and
            # u_j + p_j + 1 are formed (one chain each); their carries out, g_j and h_j, need only
            # u_j's two low bits, p_j and whether u_j's other bits are all ones (logic, no chain), so
            # the carries into the segments (c_j+1 = g_j or h_j and c_j: the carries of the sum g + h,
            # one short chain) are ready with the candidates.  The top segment (bits W-1 .. W+WB-1) forms no candidates: the wrap count
            # E[W+WB-1:W] + E[W-1] is (top + 1) >> 1, so each choice of its carry in gives the wrap
            # count in one chain straight from u, and the state's bit W-1 is one XOR.
            if m2_valid:
                z0w[:] = 0
                z1w[:] = 0
                g[:] = 0
                h[:] = 0
                for k in range(NFULL):
                    xa[:] = m2_sum >> (SEG * k)
                    ci = bool(m2_cy[k])
                    cb0 = bool(m2_cb[k])
                    xb[:] = m2_cb[k]
                    ssum[:] = concat(xa, ci) + concat(xb, ci)
                    xb[:] = m2_cb[k] + 1
                    ssum1[:] = concat(xa, ci) + concat(xb, ci)
                    z0w[:] = z0w | (ssum[SEG + 1:1] << (SEG * k))
                    z1w[:] = z1w | (ssum1[SEG + 1:1] << (SEG * k))
                    ones[k] = xa[SEG:2] == SEG_HIGH_ONES
                    g[k] = ones[k] and xa[1] and ((xa[0] and (cb0 or ci)) or (cb0 and ci))
                    h[k] = ones[k] and ((xa[1] and (xa[0] or cb0 or ci)) or (xa[0] and cb0 and ci))
                ma[:] = m2_sum[MID_HI:MID_LO]
                ci = bool(m2_cy[NFULL])
                cb0 = bool(m2_cb[NFULL])
                mb[:] = m2_cb[NFULL]
                msum[:] = concat(ma, ci) + concat(mb, ci)
                mb[:] = m2_cb[NFULL] + 1
                msum1[:] = concat(ma, ci) + concat(mb, ci)
                z0w[MID_HI:MID_LO] = msum[MID_W + 1:1]
                z1w[MID_HI:MID_LO] = msum1[MID_W + 1:1]
                ones[NFULL] = ma[MID_W:2] == MID_HIGH_ONES
                g[NFULL] = ones[NFULL] and ma[1] and ((ma[0] and (cb0 or ci)) or (cb0 and ci))
                h[NFULL] = ones[NFULL] and ((ma[1] and (ma[0] or cb0 or ci)) or (ma[0] and cb0 and ci))
                pre[:] = g + h
                cv[:] = pre[NSEG:0] ^ g ^ h
                sel[:] = 0
                for k in range(NFULL):
                    if cv[k]:
                        sel[:] = sel | (SEG_ONES << (SEG * k))
                if cv[NFULL]:
                    sel[MID_HI:MID_LO] = MID_ONES
                z0w[:] = z0w ^ ((z0w ^ z1w) & sel)
                # the top segment: wraps = (u + p + c + 1) >> 1, its carry out dropped
                ta[:] = m2_sum[TOP_HI:TOP_LO]
                ci = bool(m2_cy[NFULL + 1])
                cb0 = bool(m2_cb[NFULL + 1])
                tb[:] = m2_cb[NFULL + 1] + 1
                tsum[:] = concat(ta, ci) + concat(tb, ci)
                tb[:] = m2_cb[NFULL + 1] + 2
                tsum1[:] = concat(ta, ci) + concat(tb, ci)
                wr0[:] = tsum[TOP_W + 1:2]
                wr1[:] = tsum1[TOP_W + 1:2]
                # the wrap count is 0 when u + r is 0 or 1 mod 2^(WB+1) (r = p + c + 1, 1 .. 4): u all
                # zeros or ones for r = 1, else u's bits above the lowest three all ones and those
                # three 8 - r or 9 - r.  Both choices' tests come from u, not from the counts: they
                # are ready before the carry into the top segment, which only chooses
                hi1 = ta[TOP_W:3] == TOP_HIGH_ONES
                lo3[:] = ta[3:0]
                if cb0 and ci:          # r = 3 without the carry in, 4 with it
                    ov0 = not (hi1 and (lo3 == 5 or lo3 == 6))
                    ov1 = not (hi1 and (lo3 == 4 or lo3 == 5))
                elif cb0 or ci:         # r = 2, 3
                    ov0 = not (hi1 and (lo3 == 6 or lo3 == 7))
                    ov1 = not (hi1 and (lo3 == 5 or lo3 == 6))
                else:                   # r = 1, 2
                    ov0 = not (ta == 0 or (hi1 and lo3 == 7))
                    ov1 = not (hi1 and (lo3 == 6 or lo3 == 7))
                o_overflow.next = (cv[NFULL + 1] and ov1) or (not cv[NFULL + 1] and ov0)
                if cv[NFULL + 1]:
                    z0w[TOP_LO] = not (ta[0] ^ cb0 ^ ci)
                    o_wraps.next = wr1
                    o_wrap_sign.next = wr1[WB - 1]
                else:
                    z0w[TOP_LO] = ta[0] ^ cb0 ^ ci
                    o_wraps.next = wr0
                    o_wrap_sign.next = wr0[WB - 1]
                o_state.next = z0w[W:0]
                o_nan.next = m2_flags[0]
                o_pos_inf.next = m2_flags[1]
                o_neg_inf.next = m2_flags[2]
            mg_valid.next = m_valid and not rst
            mg_use_a.next = m_use_a
            mg_use_b.next = m_use_b
            m2_valid.next = mg_valid and not rst

    return ram_reads, accumulate_and_merge
