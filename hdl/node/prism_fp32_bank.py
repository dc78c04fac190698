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
    * otherwise port 1's range, the same way (the arbiter never gives both ports
      this bank in one cycle);
    * otherwise a read-out (rd_take with rd_row % BANKS == BANK): every lane
      hands out the row's sum and empties it.
Reservations: the lanes' adders hold a sum for FP32_LATENCY edges, so a range
touched by one of the last FP32_LATENCY operations is not free (p{P}_free,
rd_free low) and the arbiter holds the operation back.  Other ranges of the
bank enter every cycle.

Read-out latency is fixed: the 16 sums of a read taken at edge t are on o_data
from edge t + 3 (one cycle; o_valid marks it).  Outside that cycle o_data is
o_chain: the banks are chained (o_chain of bank b is o_data of bank b - 1), so
the last bank's o_data carries whichever bank is reading, without a wide
multiplexer over all banks' outputs (a compiled simulator evaluates one on
every cycle).

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
    rd_take, rd_row         a read-out of range rd_row is taken at this edge (8 bits)
    p{P}_free               out: the range of port P's group in this bank is not reserved
    rd_free                 out: range rd_row is not reserved
    o_chain                 the previous bank's o_data (512 bits; 0 for the first bank)
    o_valid, o_data         out: a read-out's 16 sums (lane i at [32i + 31 : 32i]; +0 where nothing
                            arrived) in the cycle o_valid is high, else o_chain
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, intbv, modbv

from hdl.arith.fp32_arrival_lane import fp32_arrival_lane

LANES = 16


@block
def prism_fp32_bank(clk, rst, clear, p0_take, p0_row, p0_lanes, p0_values, p1_take, p1_row, p1_lanes, p1_values,
                    rd_take, rd_row, p0_free, p1_free, rd_free, o_valid, o_chain, o_data,
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
                       ("o_chain", o_chain, 512)):
        if len(s) != w:
            raise ValueError(f"prism_fp32_bank: {name} is {len(s)} bits; it must be {w}")

    L = FP32_LATENCY                          # a range stays reserved for the last L operations
    BB = BANKS.bit_length() - 1               # bank-number bits
    RB = max(1, (ROWS - 1).bit_length())      # lane row-address bits
    E = 9                                     # reservation entry: valid | range

    op_lanes = Signal(intbv(0)[LANES:])       # lanes that take the operation at the next edge
    op_row = Signal(intbv(0)[RB:])
    op_read = Signal(bool(0))
    op_values = Signal(intbv(0)[512:])
    hist = Signal(modbv(0)[L * E:])           # the last L operations' ranges (newest lowest)
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

    @always_comb
    def reservations():
        k = modbv(0)[BB:]
        r = modbv(0)[8:]
        ent = intbv(0)[E:]
        f0 = bool(1)
        f1 = bool(1)
        fr = bool(1)
        k[:] = BANK - p0_row[BB:0]
        r[:] = p0_row + k
        for i in range(L):
            ent[:] = (hist >> (E * i)) & 0x1FF
            if ent[8] and ent[8:0] == r:
                f0 = False
        k[:] = BANK - p1_row[BB:0]
        r[:] = p1_row + k
        for i in range(L):
            ent[:] = (hist >> (E * i)) & 0x1FF
            if ent[8] and ent[8:0] == r:
                f1 = False
        for i in range(L):
            ent[:] = (hist >> (E * i)) & 0x1FF
            if ent[8] and ent[8:0] == rd_row:
                fr = False
        p0_free.next = f0
        p1_free.next = f1
        rd_free.next = fr

    @always(clk.posedge)
    def issue_operation():
        if rst:
            op_lanes.next = 0
            hist.next = 0
        else:
            k = modbv(0)[2:]
            kb = modbv(0)[BB:]
            r = modbv(0)[8:]
            ent = intbv(0)[E:]
            m = intbv(0)[64:]
            v = intbv(0)[2048:]
            take = bool(0)
            ent[:] = 0
            # the group's range in this bank: k = (BANK - row) mod BANKS, present when k < 4 and lane 16k is set
            if p0_take:
                kb[:] = BANK - p0_row[BB:0]
                if kb < 4:
                    k[:] = kb
                    m[:] = p0_lanes >> (k * 16)
                    if m[0]:
                        take = True
                        r[:] = p0_row + k
                        v[:] = p0_values >> (k * 512)
            if p1_take and not take:
                kb[:] = BANK - p1_row[BB:0]
                if kb < 4:
                    k[:] = kb
                    m[:] = p1_lanes >> (k * 16)
                    if m[0]:
                        take = True
                        r[:] = p1_row + k
                        v[:] = p1_values >> (k * 512)
            if take:
                op_lanes.next = m[LANES:0]
                op_values.next = v[512:0]
                op_row.next = r[8:BB]
                op_read.next = 0
                ent[8] = 1
                ent[8:0] = r
            elif rd_take and rd_row[BB:0] == BANK:
                op_lanes.next = 0xFFFF
                op_row.next = rd_row[8:BB]
                op_read.next = 1
                ent[8] = 1
                ent[8:0] = rd_row
            else:
                op_lanes.next = 0
            if ent[8] or hist != 0:
                hist.next = (hist << E) | ent

    @always_comb
    def chain_output():
        o_valid.next = lane0_valid
        if lane0_valid:
            o_data.next = sums
        else:
            o_data.next = o_chain

    insts += [reservations, issue_operation, chain_output]
    return insts
