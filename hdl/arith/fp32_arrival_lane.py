"""FP32_ARRIVAL lane: a RAM of running FP32 sums, updated through the pipelined fp32_add.

One lane serves many element positions (one RAM row each).  Each cycle it
takes one operation:

    add   (op_read = 0): row <- row + op_value, one IEEE binary32 add; the first
          contribution to an empty row initialises it (it is added to -0.0,
          which leaves every value unchanged, -0 included, and makes any NaN
          the canonical 0x7FC00000 like every other NaN result);
    read  (op_read = 1): hand out the row's sum on rd_value (+0 for an empty
          row) and empty the row.

Which rows hold a sum is kept in a register of ROWS bits beside the RAM, not
in the RAM: `rst` and `clear` empty every row at once (the RAM's contents are
then never read), so a reset in the middle of an operation leaves no partial
sum behind, and the RAM needs no clearing pass and no reset (it can be a
block RAM).

Pipeline: the operation is registered at the rising edge with a synchronous
RAM read, goes through fp32_add (LATENCY cycles), and its result is written
back the edge after fp32_add's out_valid.  A read travels the same pipeline
and empties its row when it leaves, so there is at most one RAM write per
edge.  A write-back that coincides with a new operation's read of the same
row is bypassed.

Hazard (the caller's duty, checked by the slice's per-lane reservations): an
operation issued at edge t must not touch a row that an operation issued at
edges t-LATENCY .. t-1 touched (that sum is still in the adder).
Independent rows may enter every cycle.

rd_valid/rd_value follow a read operation by 2 rising edges (op captured,
then rd registered); rd_value is 0 in every cycle rd_valid is low.

Parameters:
    ROWS      rows in the RAM (1 .. 2^len(op_row)); op_row < ROWS when op_valid
    LATENCY   fp32_add's latency (1..4, see hdl/arith/fp32_add.py)

Ports (widths come from the signals):
    clk, rst      clock; synchronous active-high reset (ResetSignal): empties the
                  pipeline and every row (operations in flight are dropped)
    clear         pulse: empty every row (the caller issues it with nothing in flight)
    op_valid      an operation is present
    op_row        row address
    op_read       1: read-and-empty the row; 0: add op_value into it
    op_value      32-bit FP32 operand (the element widened exactly to FP32)
    rd_valid      out: rd_value holds a read row's sum
    rd_value      out: 32-bit FP32 sum (0 while rd_valid is low)
"""
from myhdl import Signal, always, always_comb, block, concat, intbv, modbv

from hdl.arith.fp32_add import fp32_add

NEG_ZERO = 0x80000000


@block
def fp32_arrival_lane(clk, rst, clear, op_valid, op_row, op_read, op_value, rd_valid, rd_value, ROWS=256, LATENCY=4):
    row_width = len(op_row)
    if not 1 <= ROWS <= (1 << row_width):
        raise ValueError(f"fp32_arrival_lane: ROWS={ROWS} must be in 1..{1 << row_width} (2^len(op_row))")
    if len(op_value) != 32 or len(rd_value) != 32:
        raise ValueError("fp32_arrival_lane: op_value and rd_value must be 32 bits (binary32)")
    tag_width = row_width + 1                 # read flag | row

    ram = [Signal(modbv(0)[32:]) for _ in range(ROWS)]
    ram_q = Signal(modbv(0)[32:])             # the RAM's registered read port
    filled = Signal(intbv(0)[ROWS:])          # row r holds a sum
    a_valid = Signal(bool(0))
    a_tag = Signal(modbv(0)[tag_width:])
    a_from_ram = Signal(bool(0))              # operand A is the RAM's read data (else a_other)
    a_other = Signal(modbv(0)[32:])           # operand A when not from the RAM: a bypassed sum, or -0
    a_sum = Signal(modbv(0)[32:])             # adder operand A: the row's sum, or -0 for an empty row
    a_value = Signal(modbv(0)[32:])
    a_filled = Signal(bool(0))
    add_valid = Signal(bool(0))
    add_result = Signal(modbv(0)[32:])
    add_tag = Signal(modbv(0)[tag_width:])

    adder = fp32_add(clk, rst, a_valid, a_sum, a_value, a_tag, add_valid, add_result, add_tag, LATENCY=LATENCY)

    @always(clk.posedge)
    def ram_port():
        # a plain simple-dual-port RAM (block RAM or LUT RAM): one write, one registered read; never reset
        if add_valid and not add_tag[row_width]:
            ram[add_tag[row_width:0]].next = add_result
        if op_valid:
            ram_q.next = ram[op_row]

    @always_comb
    def operand():
        if a_from_ram:
            a_sum.next = ram_q
        else:
            a_sum.next = a_other

    @always(clk.posedge)
    def issue_and_track():
        # an idle lane (nothing entering, in flight or leaving, no reset or clear) skips everything:
        # most lanes are idle most cycles, and the simulator pays for every statement of every lane
        if rst or clear or op_valid or a_valid or add_valid or rd_valid:
            rows = intbv(0)[ROWS:]
            tag = modbv(0)[tag_width:]
            back = bool(0)          # the row written back this edge holds a sum afterwards
            rows[:] = filled
            # write-back of the sum that leaves the adder (a read empties its row instead; ram_port writes)
            if add_valid:
                tag[:] = add_tag
                back = not add_tag[row_width]
                rows[tag[row_width:0]] = back

            rd_valid.next = a_valid and a_tag[row_width] and not rst
            # rd_value is 0 whenever rd_valid is low (a bank ORs its lanes' read-outs with the others')
            if a_valid and a_tag[row_width] and a_filled and not rst:
                rd_value.next = a_sum
            else:
                rd_value.next = 0

            a_valid.next = op_valid and not rst
            # the operand is captured whatever op_valid says (it is read only with a_valid): its register
            # needs no enable of its own
            a_value.next = op_value
            if op_valid:
                a_tag.next = concat(op_read, op_row)
                if add_valid and tag[row_width:0] == op_row:
                    # the RAM read misses this edge's write-back: bypass it
                    a_filled.next = back
                    a_from_ram.next = 0
                    if back:
                        a_other.next = add_result
                    else:
                        a_other.next = NEG_ZERO
                else:
                    a_filled.next = filled[op_row]
                    a_from_ram.next = filled[op_row]
                    a_other.next = NEG_ZERO
            if rst or clear:
                filled.next = 0
            else:
                filled.next = rows

    return adder, ram_port, operand, issue_and_track
