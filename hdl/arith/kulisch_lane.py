"""Kulisch lane accumulator: a RAM of exact W-bit states, one read-modify-write per cycle.

One lane serves many elements: each row of the RAM is the exact accumulator of
one element position (in the slice: the element of range `row` in this lane).
A row holds the W-bit two's-complement state (LSB weight 2^-149), the three
sticky specials flags (nan, +inf, -inf) and the net wrap counter.

Every cycle the lane takes one operation on one row:

    new = old + operand      (op_accumulate = 1)
    new = operand            (op_accumulate = 0: clear the row, or load it)

and, with op_read, hands out the row's OLD contents on the rd_* outputs.  So
  * adding a decoded term: accumulate=1, operand = term + flags, wraps 0;
  * merging a port-local state: accumulate=1, operand = that state + flags + wraps
    (the merge is the same adder: state + state, wrap counts summed, flags ORed);
  * read-out and clear in one go: read=1, accumulate=0, operand 0;
  * clearing a row: accumulate=0, operand 0.

Wrap counting (see the golden model): the add is modulo 2^W; when both
addends have the same sign and the sum's sign differs, the add wrapped: +1 past
the top (non-negative addends), -1 past the bottom.  new_wraps = old_wraps +
operand_wraps + that carry, modulo 2^len(op_wraps).  The true sum is
state_signed + wraps * 2^W; overflow <=> wraps != 0, its sign is the true sum's.

Pipeline: the operation is registered at the rising edge together with a
synchronous RAM read; one cycle later the new value is formed and written back
and rd_* carry the old contents (latency 2 rising edges from op to rd_valid).
A read-after-write bypass forwards the value being written to an operation on
the same row in the next cycle, so back-to-back updates of one row need no
stall: one operation per cycle sustained, whatever the row sequence.

Parameters:
    ROWS   number of rows (>= 1, <= 2^len(op_row)); op_row must be < ROWS when
           op_valid is high (the caller maps element indices onto rows).

Ports (widths come from the signals):
    clk, rst                        clock; synchronous active-high reset (clears the
                                    pipeline, not the RAM: clear rows with operations)
    op_valid                        an operation is present this cycle
    op_row                          row address
    op_accumulate                   1: add the operand to the row; 0: replace the row
    op_read                         1: present the row's old contents on rd_*
    op_state                        operand state, W bits (two's complement)
    op_nan, op_pos_inf, op_neg_inf  operand flags
    op_wraps                        operand net wrap count, two's complement (its width
                                    sets the counter width; 0 for a decoded term)
    rd_valid                        out: rd_* hold the old contents of a read row
    rd_row                          out: which row (width of op_row)
    rd_state                        out: W bits (width of op_state)
    rd_nan, rd_pos_inf, rd_neg_inf  out: flags
    rd_wraps                        out: wrap count (width of op_wraps), two's complement

The wrap counter must be wide enough never to wrap itself: the number of
operations on a row between clears stays below 2^(len(op_wraps)-1).
"""
from myhdl import Signal, always, block, intbv, modbv


def word_add_function(W, WB):
    """The MyHDL function (old, operand) -> old + operand on Kulisch words of W + 3 + WB bits
    (state | nan | +inf | -inf | wraps): the W-bit states added modulo 2^W, the wrap counts summed
    plus the add's own wrap, the flags ORed.  (Its variables avoid SystemVerilog keywords
    such as `new`: a Verilog function keeps their names.)  This lane uses it; the node's Kulisch
    banks (hdl/node/prism_kulisch_bank.py) hold the same (state, wraps) as one (W + WB)-bit sum in
    carry-save form instead, whose adds give bit for bit the results of this one."""
    NAN, PINF, NINF, WRAP_LO, TOP = W, W + 1, W + 2, W + 3, W + 3 + WB
    SIGN = W - 1
    MINUS_ONE = (1 << WB) - 1

    def kulisch_add(old, opnd):
        a = modbv(0)[W:]
        b = modbv(0)[W:]
        total = modbv(0)[W:]
        wraps = modbv(0)[WB:]
        word = modbv(0)[TOP:]
        a[:] = old[W:0]
        b[:] = opnd[W:0]
        total[:] = a + b
        wraps[:] = old[TOP:WRAP_LO] + opnd[TOP:WRAP_LO]
        if a[SIGN] == b[SIGN] and total[SIGN] != a[SIGN]:
            if b[SIGN]:
                wraps[:] = wraps + MINUS_ONE
            else:
                wraps[:] = wraps + 1
        word[:] = total
        word[TOP:WRAP_LO] = wraps
        word[NAN] = old[NAN] or opnd[NAN]
        word[PINF] = old[PINF] or opnd[PINF]
        word[NINF] = old[NINF] or opnd[NINF]
        return word
    return kulisch_add


@block
def kulisch_lane(clk, rst, op_valid, op_row, op_accumulate, op_read, op_state, op_nan, op_pos_inf,
                 op_neg_inf, op_wraps, rd_valid, rd_row, rd_state, rd_nan, rd_pos_inf, rd_neg_inf, rd_wraps,
                 ROWS=256):
    width = len(op_state)
    wrap_width = len(op_wraps)
    row_width = len(op_row)
    if width < 2:
        raise ValueError(f"kulisch_lane: op_state is {width} bits; it needs at least 2")
    if len(rd_state) != width:
        raise ValueError(f"kulisch_lane: rd_state is {len(rd_state)} bits, op_state {width}; they must match")
    if len(rd_wraps) != wrap_width or wrap_width < 2:
        raise ValueError(f"kulisch_lane: op_wraps/rd_wraps are {wrap_width}/{len(rd_wraps)} bits; "
                         "they must match and be at least 2 bits")
    if len(rd_row) != row_width:
        raise ValueError(f"kulisch_lane: rd_row is {len(rd_row)} bits, op_row {row_width}; they must match")
    if not 1 <= ROWS <= (1 << row_width):
        raise ValueError(f"kulisch_lane: ROWS={ROWS} must be in 1..{1 << row_width} (2^len(op_row))")

    # RAM word: wraps | neg_inf | pos_inf | nan | state
    word_width = width + 3 + wrap_width
    NAN_BIT, PINF_BIT, NINF_BIT, WRAP_LO = width, width + 1, width + 2, width + 3
    kulisch_add = word_add_function(width, wrap_width)

    ram = [Signal(modbv(0)[word_width:]) for _ in range(ROWS)]
    s1_valid = Signal(bool(0))
    s1_row = Signal(modbv(0)[row_width:])
    s1_accumulate = Signal(bool(0))
    s1_read = Signal(bool(0))
    s1_operand = Signal(modbv(0)[word_width:])
    s1_old = Signal(modbv(0)[word_width:])

    @always(clk.posedge)
    def read_modify_write():
        new_word = modbv(0)[word_width:]
        operand = modbv(0)[word_width:]

        # Stage 2: form the new row contents and write them back (idle lanes skip the adder).
        if s1_valid:
            if s1_accumulate:
                new_word[:] = kulisch_add(s1_old, s1_operand)
            else:
                new_word[:] = s1_operand
            if not rst:
                ram[s1_row].next = new_word
            if s1_read:
                rd_row.next = s1_row
                rd_state.next = s1_old[width:0]
                rd_nan.next = s1_old[NAN_BIT]
                rd_pos_inf.next = s1_old[PINF_BIT]
                rd_neg_inf.next = s1_old[NINF_BIT]
                rd_wraps.next = s1_old[word_width:WRAP_LO]
        rd_valid.next = s1_valid and s1_read and not rst

        # Stage 1: register the operation and read its row (bypassing the write above).
        s1_valid.next = op_valid and not rst
        if op_valid:
            operand[:] = op_state
            operand[NAN_BIT] = op_nan
            operand[PINF_BIT] = op_pos_inf
            operand[NINF_BIT] = op_neg_inf
            operand[WRAP_LO + wrap_width:WRAP_LO] = op_wraps
            s1_row.next = op_row
            s1_accumulate.next = op_accumulate
            s1_read.next = op_read
            s1_operand.next = operand
            if s1_valid and s1_row == op_row:
                s1_old.next = new_word
            else:
                s1_old.next = ram[op_row]

    return read_modify_write
