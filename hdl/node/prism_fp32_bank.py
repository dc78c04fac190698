"""One FP32_ARRIVAL bank of the node: 16 lanes of running FP32 sums for the ranges r with r % BANKS == BANK.

Part of phase 4 (online FP32 path) of the SINGLE node; hdl/node/prism_arrival_banks.py
builds BANKS of these and decides, each cycle, which port group and which
read-out each bank takes.  Range r lives in bank r % BANKS at bank row
r // BANKS; its element i % 16 in lane i % 16 (hdl/arith/fp32_arrival_lane.py: a RAM
row per range, one pipelined IEEE binary32 add per cycle).

An issue group of a port holds the ranges row .. row + n - 1 (n = 1 .. 4, a
whole beat); this bank owns at most one of them, the one with
(row + k) % BANKS == BANK, k < n.  Each edge the bank performs at most one
operation, registered here and handed to all 16 lanes the next edge:
    * port 0's range, when port 0's group is taken (p0_take) and holds one;
    * port 1's range, the same way;
    * a read-out (rd_take with rd_row % BANKS == BANK: the read-out is offered)
      unless a port's group takes the bank at the same edge: every lane hands
      out the row's sum and empties it.
The arbiter's contract (prism_arrival_banks): it never gives both ports' groups
this bank at one edge, and it takes a group or offers a read-out only while its
range is not reserved.

Logic depth: each take input reaches only its own registers' reset or enable:
the operation is registered per source (port 0, port 1, read-out), each source
loading its share decoded from the row and lanes alone (its range's row, one
hot and binary, its lanes, its values) when its take is high and 0 otherwise;
the operation the lanes see is the OR of the three (at most one is non-zero; a
read-out offered with a group is dropped there).  Each port's values are
registered on their own (512 bits each) and picked by the source afterwards, so
a value passes one LUT before its register.

Reservations: the lanes' adders hold a sum for FP32_LATENCY edges, so a range
touched by one of the last FP32_LATENCY operations is reserved and the arbiter
holds the operation back.  Other ranges of the bank enter every cycle.  The
ranges of the last FP32_LATENCY operations are the newest (the source
registers) and the ones before it (hist_old); their bitmap over the bank's
rows (reserved, bit x: range x * BANKS + BANK) is the OR of the source
registers' one-hot rows and a registered bitmap of hist_old, so it comes
straight from registers and the arbiter looks a range up in it beside its
other terms.

Parameters:
    BANK            this bank's number (0 .. BANKS - 1)
    BANKS           the number of banks (a power of two, 4 .. 16); an issue group never
                    needs one bank twice because it holds at most 4 ranges
    ROWS            ranges held (rows per lane; 1 .. 16)
    FP32_LATENCY    fp32_add latency (1 .. 4)

Ports (widths from the signals):
    clk, rst                clock; synchronous reset: empties the pipeline and every range
    clear                   pulse: a new operation starts, every range is emptied (nothing in flight)
    p{P}_take               (P = 0, 1) port P's issue group is taken at this edge
    p{P}_row                its first range (8 bits)
    p{P}_lanes              its element mask (64 bits, bit e: range row + e // 16, lane e % 16)
    p{P}_values             its elements widened exactly to FP32 (64 x 32 bits, element e at [32e + 31 : 32e])
    rd_take, rd_row         a read-out of range rd_row is offered at this edge (8 bits)
    reserved                out: bit x: range x * BANKS + BANK is reserved (256 / BANKS bits)
    o_valid, o_data         out: a read-out's 16 sums (lane i at [32i + 31 : 32i]; +0 where nothing
                            arrived) in the cycle o_valid is high, else 0
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, concat, intbv, modbv

from hdl.arith.fp32_arrival_lane import fp32_arrival_lane

LANES = 16


@block
def prism_fp32_bank(clk, rst, clear, p0_take, p0_row, p0_lanes, p0_values, p1_take, p1_row, p1_lanes, p1_values,
                    rd_take, rd_row, reserved, o_valid, o_data,
                    BANK=0, BANKS=16, ROWS=16, FP32_LATENCY=4):
    if BANKS not in (4, 8, 16):
        raise ValueError(f"prism_fp32_bank: BANKS={BANKS}; a power of two in 4 .. 16 (a group holds up to 4 ranges)")
    if not 0 <= BANK < BANKS:
        raise ValueError(f"prism_fp32_bank: BANK={BANK} must be in 0 .. BANKS - 1 = {BANKS - 1}")
    if not 1 <= ROWS <= 256 // BANKS:
        raise ValueError(f"prism_fp32_bank: ROWS={ROWS} must be in 1 .. {256 // BANKS} (256 ranges over {BANKS} banks)")
    if FP32_LATENCY not in (1, 2, 3, 4):
        raise ValueError(f"prism_fp32_bank: FP32_LATENCY={FP32_LATENCY}; fp32_add supports 1 .. 4")
    for name, s, w in (("p0_row", p0_row, 8), ("p1_row", p1_row, 8), ("rd_row", rd_row, 8),
                       ("p0_lanes", p0_lanes, 64), ("p1_lanes", p1_lanes, 64),
                       ("p0_values", p0_values, 2048), ("p1_values", p1_values, 2048), ("o_data", o_data, 512),
                       ("reserved", reserved, 1 << (9 - BANKS.bit_length()))):
        if len(s) != w:
            raise ValueError(f"prism_fp32_bank: {name} is {len(s)} bits; it must be {w}")

    L = FP32_LATENCY                          # a range stays reserved for the last L operations
    BB = BANKS.bit_length() - 1               # bank-number bits
    HB = 8 - BB                               # range bits above the bank number (the range's row)
    NR = 1 << HB                              # rows a range number can name (the bitmap's size)
    RB = max(1, (ROWS - 1).bit_length())      # lane row-address bits
    E = 9                                     # reservation entry: valid | range
    OLD = max(1, L - 1)                       # entries kept before the newest (hist_old; unused when L = 1)

    # The operation taken at an edge, registered per source (port 0, port 1, read-out): each source's
    # registers load its decoded share when its take is high and clear otherwise, so the take drives the
    # registers' reset and enable alone; the operation is their OR (at most one is non-zero).
    s0, s1, sr = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))        # the source's operation was taken
    rd_op = Signal(bool(0))                   # the read-out was taken: offered (sr) and no group took the bank
    void = Signal(bool(0))                    # the last edge was a reset: the operation taken at it is dropped
    lanes0, lanes1 = Signal(intbv(0)[LANES:]), Signal(intbv(0)[LANES:])   # its lanes
    rows0, rows1, rows_rd = (Signal(intbv(0)[HB:]) for _ in range(3))    # its range's row
    hot0, hot1, hot_rd = (Signal(intbv(0)[NR:]) for _ in range(3))       # the same row, one-hot
    op_values0 = Signal(intbv(0)[512:])       # port 0's values for this bank, registered when it takes them
    op_values1 = Signal(intbv(0)[512:])
    # the operation handed to the lanes (combinational, from the registers above)
    op_lanes = Signal(intbv(0)[LANES:])       # lanes that take the operation
    op_row = Signal(intbv(0)[RB:])
    op_read = Signal(bool(0))
    op_values = Signal(intbv(0)[512:])        # the operation's values (port 1's when s1)
    # reservations: the last L operations are the one just taken and the L - 1 before it (hist_old)
    hist_old = Signal(modbv(0)[OLD * E:])     # the L - 1 operations before the newest (newest lowest)
    hist = Signal(modbv(0)[L * E:])           # the last L operations' ranges, valid | range (newest lowest)
    resv_old = Signal(intbv(0)[NR:])          # bit x: range x * BANKS + BANK is one of hist_old's
    resv = Signal(intbv(0)[NR:])              # bit x: range x * BANKS + BANK is one of hist's (reserved)
    # each port's share of its group, decoded from the row and lanes alone (no take)
    in0, in1 = Signal(bool(0)), Signal(bool(0))                 # the group holds a range of this bank
    hi0, hi1 = Signal(intbv(0)[HB:]), Signal(intbv(0)[HB:])      # that range's row (0 when in{P} is low)
    m0, m1 = Signal(intbv(0)[LANES:]), Signal(intbv(0)[LANES:])  # its lanes (0 when in{P} is low)
    rd_mine = Signal(bool(0))                 # rd_row is a range of this bank
    hi_rd = Signal(intbv(0)[HB:])             # its row (0 when not rd_mine)
    oh0, oh1, oh_rd = (Signal(intbv(0)[NR:]) for _ in range(3))          # those rows, one-hot (0: none)
    lane_valid = []
    lane_value = []
    insts = []
    for lane in range(LANES):
        rv, rval = Signal(bool(0)), Signal(intbv(0)[32:])
        insts.append(fp32_arrival_lane(clk, rst, clear, op_lanes(lane), op_row, op_read, op_values(32 * lane + 32, 32 * lane),
                                       rv, rval, ROWS=ROWS, LATENCY=L))
        lane_valid.append(rv)
        lane_value.append(rval)
    sums = ConcatSignal(*reversed(lane_value))
    lane0_valid = lane_valid[0]

    def share(row, lanes):
        """A port's group as this bank sees it: {in bank (1), its range's row (HB), its lanes (16)}, 0 when
        the group has no range here.  Its range here is row + kb, kb = (BANK - row) mod BANKS, when kb < 4
        and lane 16 kb is set."""
        kb = modbv(0)[BB:]
        m = intbv(0)[64:]
        hi = modbv(0)[HB:]
        g = intbv(0)[1 + HB + LANES:]
        kb[:] = BANK - row[BB:0]
        hi[:] = row[8:BB]
        if row[BB:0] > BANK:
            hi[:] = hi + 1
        m[:] = 0
        if kb < 4:
            m[:] = lanes >> (kb * 16)
        g[:] = 0
        if m[0]:
            g[1 + HB + LANES - 1] = 1
            g[LANES + HB:LANES] = hi
            g[LANES:0] = m[LANES:0]
        return g

    @always_comb
    def decode():
        g = intbv(0)[1 + HB + LANES:]
        o0 = intbv(0)[NR:]
        o1 = intbv(0)[NR:]
        o2 = intbv(0)[NR:]
        hr = intbv(0)[HB:]
        g[:] = share(p0_row, p0_lanes)
        in0.next = g[HB + LANES]
        hi0.next = g[HB + LANES:LANES]
        m0.next = g[LANES:0]
        for x in range(NR):
            o0[x] = g[HB + LANES] and g[HB + LANES:LANES] == x
        g[:] = share(p1_row, p1_lanes)
        in1.next = g[HB + LANES]
        hi1.next = g[HB + LANES:LANES]
        m1.next = g[LANES:0]
        for x in range(NR):
            o1[x] = g[HB + LANES] and g[HB + LANES:LANES] == x
        hr[:] = 0
        if rd_row[BB:0] == BANK:
            hr[:] = rd_row[8:BB]
        for x in range(NR):
            o2[x] = rd_row[BB:0] == BANK and rd_row[8:BB] == x
        rd_mine.next = rd_row[BB:0] == BANK
        hi_rd.next = hr
        oh0.next = o0
        oh1.next = o1
        oh_rd.next = o2

    # one clocked process per take: the take selects between the decoded share and 0
    @always(clk.posedge)
    def take_port0():
        if p0_take:
            s0.next = in0
            lanes0.next = m0
            rows0.next = hi0
            hot0.next = oh0
        else:
            s0.next = 0
            lanes0.next = 0
            rows0.next = 0
            hot0.next = 0

    @always(clk.posedge)
    def take_port1():
        if p1_take:
            s1.next = in1
            lanes1.next = m1
            rows1.next = hi1
            hot1.next = oh1
        else:
            s1.next = 0
            lanes1.next = 0
            rows1.next = 0
            hot1.next = 0

    @always(clk.posedge)
    def take_read():
        if rd_take:
            sr.next = rd_mine
            rows_rd.next = hi_rd
            hot_rd.next = oh_rd
        else:
            sr.next = 0
            rows_rd.next = 0
            hot_rd.next = 0

    @always(clk.posedge)
    def reset_edge():
        void.next = rst

    @always(clk.posedge)
    def take_values():
        # each port's values for this bank: element 16 kb + i of the group to lane i (loaded whenever the
        # port's group is taken; used only when the group holds a range of this bank)
        k = modbv(0)[2:]
        v = intbv(0)[2048:]
        if p0_take:
            k[:] = BANK - p0_row[2:0]
            v[:] = p0_values >> (k * 512)
            op_values0.next = v[512:0]
        if p1_take:
            k[:] = BANK - p1_row[2:0]
            v[:] = p1_values >> (k * 512)
            op_values1.next = v[512:0]

    @always_comb
    def read_taken():
        # a read-out offered to this bank is taken unless a port's group took the bank at the same edge
        rd_op.next = sr and not s0 and not s1

    @always_comb
    def operation():
        ln = intbv(0)[LANES:]
        hi = intbv(0)[HB:]
        ent = intbv(0)[E:]
        ln[:] = lanes0 | lanes1
        if rd_op:
            ln[:] = 0xFFFF
        if void:
            ln[:] = 0
        op_lanes.next = ln
        hi[:] = rows0 | rows1
        if rd_op:
            hi[:] = hi | rows_rd
        op_row.next = hi[RB:0]
        op_read.next = rd_op
        if s1:
            op_values.next = op_values1
        else:
            op_values.next = op_values0
        ent[:] = 0
        if (s0 or s1 or rd_op) and not void:
            ent[8] = 1
            ent[8:BB] = hi
            ent[BB:0] = BANK
        if L > 1:
            hist.next = concat(hist_old[(L - 1) * E:], ent)
        else:
            hist.next = ent
        # (hot_rd is non-zero only when a read-out was offered: it counts unless a group took the bank)
        if void:
            resv.next = resv_old
        elif s0 or s1:
            resv.next = resv_old | hot0 | hot1
        else:
            resv.next = resv_old | hot_rd

    @always(clk.posedge)
    def history():
        old = intbv(0)[E:]
        rv = intbv(0)[NR:]
        if rst:
            hist_old.next = 0
            resv_old.next = 0
        else:
            # the history shifts the newest operation in; its bitmap is made from registers only
            hist_old.next = hist[OLD * E:]
            for x in range(NR):
                rv[x] = 0
                if L > 1:
                    if (hot0[x] or hot1[x] or (hot_rd[x] and rd_op)) and not void:
                        rv[x] = 1
                    for i in range(L - 2):
                        old[:] = (hist_old >> (E * i)) & 0x1FF
                        if old[8] and old[BB:0] == BANK and old[8:BB] == x:
                            rv[x] = 1
            resv_old.next = rv

    @always_comb
    def read_out():
        o_valid.next = lane0_valid
        o_data.next = sums
        reserved.next = resv

    insts += [decode, read_taken, take_port0, take_port1, take_read, reset_edge, take_values, operation, history, read_out]
    return insts
