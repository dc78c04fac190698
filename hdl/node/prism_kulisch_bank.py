"""One lane of the node's KULISCH_FIXED stores: a port-local Kulisch RAM per receive port, and their merge.

The node keeps Kulisch stores per receive port so both ports accumulate at
line rate without sharing a RAM port; each store is split into four sub-stores
by range % 4 (hdl/node/prism_kulisch_store.py).  This block is lane l of one
sub-store S of both ports: RAM A (port 0) and RAM B (port 1), one row per range
of that sub-store (row k holds element 16 * (4k + S) + l).

The whole process body is skipped in a cycle without a contribution or merge
request, so an idle lane costs the simulators almost nothing.

Per cycle, independently:
  * port A: decode `a_data` (its exact term: the functions of
    hdl/arith/number_decoder.py, called inside this block's process so a lane
    stays one MyHDL process) and add it into
    row `a_row` of RAM A; `a_first` replaces the row instead (the first
    contribution since COMMIT, so no clearing pass is needed).  With `exact`
    (the operation's input is EXACT partials) the contribution is the Kulisch
    word `a_xword` instead, a partial as hdl/node/prism_exact_operand.py forms
    it (state, flags and wraps: the row keeps the partial's true sum), registered
    beside this lane's stage 1 and chosen at the adder's operand;
  * port B: the same on RAM B;
  * merge: read row `m_row` of both RAMs through a second read port (a
    completed range is never written again, so it cannot collide with the
    accumulation ports), add the states (mod 2^W, wrap counts summed plus the
    add's own wrap, flags ORed) and register the result on o_*; a RAM whose
    row was never written in this operation (`m_use_a`/`m_use_b` low) reads 0.

Block RAM: every RAM has one write port and one registered read port.  A
port's read-modify-write takes two stages: stage 0 reads the row (registered
read) while the element is decoded into its exact term; stage 1 adds and writes
the row back.  A contribution to the row written at the same edge as its read
takes the written word instead (a one-word bypass), so back-to-back
contributions to one row need no stall.  Each port's RAM is kept twice, written
alike: one copy for accumulation, one for the merge's read, so the merge never
takes a cycle from accumulation.  The merge reads at the edge of m_valid and
adds in the next cycle: o_* two cycles after m_valid.

Both adds (accumulation and merge) are the Kulisch word add of
hdl/arith/kulisch_lane.py (its function word_add_function), with wrap counting
as in golden.arith.kulisch: the true sum is state + wraps * 2^W; overflow <=>
wraps != 0, its sign is the true sum's.

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
                                Kulisch word (W + 3 + WRAP_BITS bits; read in stage 1)
    b_valid, b_row, b_first, b_data, b_xword  port 1, the same
    m_valid, m_row              merge request for a row
    m_use_a, m_use_b            that row holds a contribution in RAM A / RAM B
    o_state                     out: merged W-bit state (W = KULISCH_W), two cycles after m_valid
    o_nan, o_pos_inf, o_neg_inf out: merged specials flags
    o_overflow                  out: the merged wrap count is not 0
    o_wrap_sign                 out: the merged wrap count is negative
    o_wraps                     out: the merged wrap count (WRAP_BITS, two's complement): the
                                true sum is signed(o_state) + o_wraps * 2^W
"""
from myhdl import Signal, always, block, intbv, modbv

from hdl.arith.kulisch_lane import word_add_function
from hdl.arith.number_decoder import FIELD_NAN, FIELD_SIGN, FIELDS_WIDTH, element_fields, term_function
from spec.formats import KULISCH_WIDTHS, KULISCH_WRAP_BITS


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
    WORD = W + 3 + WB
    NAN_BIT, PINF_BIT, NINF_BIT, WRAP_LO = W, W + 1, W + 2, W + 3
    if len(a_xword) != WORD or len(b_xword) != WORD:
        raise ValueError(f"prism_kulisch_bank: a_xword/b_xword are Kulisch words of {WORD} bits")
    kulisch_term = term_function(W)
    kulisch_add = word_add_function(W, WB)

    # Each port's RAM is kept twice, both copies written alike: the accumulation reads one, the merge
    # the other, so every RAM has one write port and one registered read port (a block RAM's simple
    # dual-port mode) and the merge never takes a cycle from accumulation.
    ram_a = [Signal(modbv(0)[WORD:]) for _ in range(ROWS)]
    ram_b = [Signal(modbv(0)[WORD:]) for _ in range(ROWS)]
    ram_am = [Signal(modbv(0)[WORD:]) for _ in range(ROWS)]
    ram_bm = [Signal(modbv(0)[WORD:]) for _ in range(ROWS)]
    q_a, q_b = Signal(modbv(0)[WORD:]), Signal(modbv(0)[WORD:])           # accumulation read data
    q_am, q_bm = Signal(modbv(0)[WORD:]), Signal(modbv(0)[WORD:])         # merge read data
    # stage 1 of each port: the decoded term as a Kulisch word (flags set, wraps 0), waiting for its row
    s_a_valid, s_b_valid = Signal(bool(0)), Signal(bool(0))
    s_a_row, s_b_row = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    s_a_first, s_b_first = Signal(bool(0)), Signal(bool(0))
    s_a_word, s_b_word = Signal(modbv(0)[WORD:]), Signal(modbv(0)[WORD:])
    # the row each port wrote at the last edge: the RAM read beside that write misses it (bypass)
    l_a_valid, l_b_valid = Signal(bool(0)), Signal(bool(0))
    l_a_row, l_b_row = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
    l_a_word, l_b_word = Signal(modbv(0)[WORD:]), Signal(modbv(0)[WORD:])
    mg_valid = Signal(bool(0))                  # merge stage 1: rows read
    mg_use_a, mg_use_b = Signal(bool(0)), Signal(bool(0))

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
        if a_valid or b_valid or m_valid or s_a_valid or s_b_valid or mg_valid:
            # nothing to do in an idle cycle (the simulators run this process on every edge)
            f = intbv(0)[FIELDS_WIDTH:]
            w = modbv(0)[WORD:]
            old = modbv(0)[WORD:]
            new = modbv(0)[WORD:]
            go = bool(0)
            for port in range(2):
                # stage 1: add the term into the row read at the last edge (or written then: bypass)
                if port == 0:
                    go = bool(s_a_valid and not rst)
                    if exact:
                        w[:] = a_xword
                    else:
                        w[:] = s_a_word
                    if s_a_first:
                        old[:] = 0
                    elif l_a_valid and l_a_row == s_a_row:
                        old[:] = l_a_word
                    else:
                        old[:] = q_a
                else:
                    go = bool(s_b_valid and not rst)
                    if exact:
                        w[:] = b_xword
                    else:
                        w[:] = s_b_word
                    if s_b_first:
                        old[:] = 0
                    elif l_b_valid and l_b_row == s_b_row:
                        old[:] = l_b_word
                    else:
                        old[:] = q_b
                if go:
                    new[:] = kulisch_add(old, w)
                if port == 0:
                    l_a_valid.next = go
                    if go:
                        ram_a[s_a_row].next = new
                        ram_am[s_a_row].next = new
                        l_a_word.next = new
                        l_a_row.next = s_a_row
                else:
                    l_b_valid.next = go
                    if go:
                        ram_b[s_b_row].next = new
                        ram_bm[s_b_row].next = new
                        l_b_word.next = new
                        l_b_row.next = s_b_row
                # stage 0: decode the element into its exact term while its row is read
                if port == 0:
                    go = bool(a_valid and not rst)
                    if go:
                        f[:] = element_fields(a_data, fmt)
                        s_a_row.next = a_row
                        s_a_first.next = a_first
                    s_a_valid.next = go
                else:
                    go = bool(b_valid and not rst)
                    if go:
                        f[:] = element_fields(b_data, fmt)
                        s_b_row.next = b_row
                        s_b_first.next = b_first
                    s_b_valid.next = go
                if go and not exact:         # a partial's word comes formed, once per sub-store
                    w[:] = kulisch_term(f)
                    w[WRAP_LO:NAN_BIT] = f[FIELD_SIGN:FIELD_NAN]      # nan, +inf, -inf; wraps 0
                    if port == 0:
                        s_a_word.next = w
                    else:
                        s_b_word.next = w
            # merge of a completed row: read at the last edge from both merge copies, added now
            if mg_valid:
                if mg_use_a:
                    old[:] = q_am
                else:
                    old[:] = 0
                if mg_use_b:
                    w[:] = q_bm
                else:
                    w[:] = 0
                new[:] = kulisch_add(old, w)
                o_state.next = new[W:0]
                o_nan.next = new[NAN_BIT]
                o_pos_inf.next = new[PINF_BIT]
                o_neg_inf.next = new[NINF_BIT]
                o_overflow.next = new[WORD:WRAP_LO] != 0
                o_wrap_sign.next = new[WORD - 1]
                o_wraps.next = new[WORD:WRAP_LO]
            mg_valid.next = m_valid and not rst
            mg_use_a.next = m_use_a
            mg_use_b.next = m_use_b

    return ram_reads, accumulate_and_merge
