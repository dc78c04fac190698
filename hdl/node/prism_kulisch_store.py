"""KULISCH_FIXED accumulation of the node: per receive port, four 16-lane Kulisch sub-stores, merged per range.

Phase 4 (exact path) of the SINGLE node.  Each receive port's reader issues one
issue group per cycle: the consecutive ranges of one 512-bit beat (up to 4
INT8, 2 FP16/BF16, 1 FP32 ranges; `a_*` from port 0, `b_*` from port 1).
Range r is held by sub-store r % 4 (row r // 4), so the up to four ranges of
a group always go to four different sub-stores; lane l of a range goes to lane
l of its sub-store (hdl/node/prism_kulisch_bank.py, one RAM per receive port;
hdl/node/prism_kulisch_route.py picks each sub-store's range out of a group).  Both
ports therefore accumulate a whole beat per cycle each, never stalling, and
both may hit the same range in the same cycle (port-local RAMs).  Which ranges
were written since the last COMMIT is kept here (one bit per range and port):
the first contribution replaces a row, so the stores need no clearing pass, and
the merge treats never-written rows as 0.

When a range has all its contributors (prism_completion), `m_valid`/`m_row`
merge the two port-local states of its 16 elements in its sub-store (a copy of
each RAM kept for the merge's read, so the merge does not take cycles from
accumulation); the merged states and flags appear on o_* two cycles later
(registered RAM read, then the add).  `ev_*` report each applied issue group
(its first range and number of ranges) two cycles after it was taken (after its
RAM writes, which take a read stage and an add stage), for completion tracking.

Parameters:
    ROWS        ranges held (CAPACITY / 16, 1 .. 256); each sub-store holds ceil(ROWS / 4) rows

Ports (widths from the signals; W = KULISCH_W = len(o_states) / 16):
    clk, rst                    clock; synchronous reset
    commit                      pulse: a new operation starts (forget written rows)
    fmt                         input format code (2 bits)
    a_valid, a_row              port 0 issue group: present, its first range (8 bits)
    a_lanes                     64-bit mask: bit e set = group element e present (range a_row + e // 16,
                                lane e % 16); elements are present from e = 0 up (prism_reader)
    a_data                      64 x 32-bit element fields, element e at [32e + 31 : 32e] (2048 bits)
    b_valid, b_row, b_lanes, b_data   port 1, the same
    m_valid, m_row              merge a completed range (8 bits)
    o_valid, o_row              out: merged range present (two cycles after m_valid), its row (8 bits)
    o_states                    out: 16 x W merged states, lane l at [W*l + W - 1 : W*l]
    o_flags                     out: 16 x 5 flags, lane l at [5l+4:5l] = {wrap_sign, overflow, -inf, +inf, nan}
    ev_a_valid, ev_a_row        out: a port 0 issue group has been applied; its first range (8 bits)
    ev_a_n                      out: its number of ranges (1 .. 4, 3 bits)
    ev_b_valid, ev_b_row, ev_b_n   out: the same for port 1
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, intbv, modbv

from hdl.node.prism_kulisch_bank import prism_kulisch_bank
from hdl.node.prism_kulisch_route import prism_kulisch_route
from spec.formats import KULISCH_WIDTHS

LANES = 16
SUBS = 4                # sub-stores per port: ranges of one beat (64 INT8 elements)
GROUP = LANES * SUBS    # elements of an issue group


@block
def prism_kulisch_store(clk, rst, commit, fmt, a_valid, a_row, a_lanes, a_data, b_valid, b_row, b_lanes, b_data,
                        m_valid, m_row, o_valid, o_row, o_states, o_flags, ev_a_valid, ev_a_row, ev_a_n,
                        ev_b_valid, ev_b_row, ev_b_n, ROWS=256):
    if len(o_states) % LANES:
        raise ValueError("prism_kulisch_store: o_states holds 16 lane states")
    W = len(o_states) // LANES
    if W not in KULISCH_WIDTHS:
        raise ValueError(f"prism_kulisch_store: lane states are {W} bits; KULISCH_W is 320 or 280")
    if len(o_flags) != 5 * LANES:
        raise ValueError("prism_kulisch_store: o_flags is 16 x 5 bits")
    if len(a_data) != 32 * GROUP or len(b_data) != 32 * GROUP or len(a_lanes) != GROUP or len(b_lanes) != GROUP:
        raise ValueError(f"prism_kulisch_store: a_data/b_data {32 * GROUP} bits, a_lanes/b_lanes {GROUP} bits")
    for name, s in (("a_row", a_row), ("b_row", b_row), ("m_row", m_row), ("o_row", o_row),
                    ("ev_a_row", ev_a_row), ("ev_b_row", ev_b_row)):
        if len(s) != 8:
            raise ValueError(f"prism_kulisch_store: {name} is 8 bits")
    if len(ev_a_n) != 3 or len(ev_b_n) != 3:
        raise ValueError("prism_kulisch_store: ev_a_n/ev_b_n are 3 bits")
    if not 1 <= ROWS <= 256:
        raise ValueError(f"prism_kulisch_store: ROWS={ROWS} must be 1 .. 256")
    SUB_ROWS = -(-ROWS // SUBS)

    written_a = Signal(intbv(0)[256:])
    written_b = Signal(intbv(0)[256:])
    m_sub = Signal(intbv(0)[2:])          # sub-store of the merge presented on o_*
    m_subrow = Signal(intbv(0)[8:])
    use_a, use_b = Signal(bool(0)), Signal(bool(0))
    # one stage more than the banks' inputs: the banks read their rows at the edge a group or a
    # merge is taken and write or add in the next cycle
    m1_valid, m1_row = Signal(bool(0)), Signal(intbv(0)[8:])
    e1_a_valid, e1_a_row, e1_a_n = Signal(bool(0)), Signal(intbv(0)[8:]), Signal(intbv(0)[3:])
    e1_b_valid, e1_b_row, e1_b_n = Signal(bool(0)), Signal(intbv(0)[8:]), Signal(intbv(0)[3:])

    @always_comb
    def merge_row():
        m_subrow.next = m_row[8:2]
        use_a.next = written_a[m_row]
        use_b.next = written_b[m_row]

    @always(clk.posedge)
    def step():
        wa = intbv(0)[256:]
        wb = intbv(0)[256:]
        r = modbv(0)[8:]
        na = intbv(0)[3:]
        nb = intbv(0)[3:]
        if rst:
            written_a.next = 0
            written_b.next = 0
            o_valid.next = 0
            ev_a_valid.next = 0
            ev_b_valid.next = 0
            m1_valid.next = 0
            e1_a_valid.next = 0
            e1_b_valid.next = 0
        else:
            wa[:] = written_a
            wb[:] = written_b
            na[:] = 0
            nb[:] = 0
            for j in range(SUBS):
                if a_lanes[LANES * j]:
                    na[:] = na + 1
                if b_lanes[LANES * j]:
                    nb[:] = nb + 1
            if commit:
                wa[:] = 0
                wb[:] = 0
            else:
                for j in range(SUBS):
                    if a_valid and a_lanes[LANES * j]:
                        r[:] = a_row + j
                        wa[r] = 1
                    if b_valid and b_lanes[LANES * j]:
                        r[:] = b_row + j
                        wb[r] = 1
            written_a.next = wa
            written_b.next = wb
            m1_valid.next = m_valid
            m1_row.next = m_row
            o_valid.next = m1_valid
            o_row.next = m1_row
            m_sub.next = m1_row[2:0]
            e1_a_valid.next = a_valid
            e1_a_row.next = a_row
            e1_a_n.next = na
            e1_b_valid.next = b_valid
            e1_b_row.next = b_row
            e1_b_n.next = nb
            ev_a_valid.next = e1_a_valid
            ev_a_row.next = e1_a_row
            ev_a_n.next = e1_a_n
            ev_b_valid.next = e1_b_valid
            ev_b_row.next = e1_b_row
            ev_b_n.next = e1_b_n

    insts = [merge_row, step]
    sub_states, sub_flags = [], []
    for S in range(SUBS):
        a_go, b_go = Signal(intbv(0)[LANES:]), Signal(intbv(0)[LANES:])
        a_srow, b_srow = Signal(intbv(0)[8:]), Signal(intbv(0)[8:])
        a_first, b_first = Signal(bool(0)), Signal(bool(0))
        a_sdata, b_sdata = Signal(intbv(0)[512:]), Signal(intbv(0)[512:])
        sm_valid = Signal(bool(0))
        insts.append(prism_kulisch_route(a_valid, a_row, a_lanes, a_data, written_a, b_valid, b_row, b_lanes, b_data,
                                         written_b, m_valid, m_row, a_go, a_srow, a_first, a_sdata, b_go, b_srow,
                                         b_first, b_sdata, sm_valid, SUB=S))
        states, flags = [], []
        for lane in range(LANES):
            st = Signal(intbv(0)[W:])
            nan, pinf, ninf, ovf, wsign = [Signal(bool(0)) for _ in range(5)]
            insts.append(prism_kulisch_bank(clk, rst, fmt, a_go(lane), a_srow, a_first,
                                            a_sdata(32 * lane + 32, 32 * lane), b_go(lane), b_srow, b_first,
                                            b_sdata(32 * lane + 32, 32 * lane), sm_valid, m_subrow, use_a, use_b,
                                            st, nan, pinf, ninf, ovf, wsign, ROWS=SUB_ROWS))
            states.append(st)
            flags.append([wsign, ovf, ninf, pinf, nan])     # most significant first
        sub_states.append(ConcatSignal(*reversed(states)))
        sub_flags.append(ConcatSignal(*[f for lane_flags in reversed(flags) for f in lane_flags]))
    st0, st1, st2, st3 = sub_states
    fl0, fl1, fl2, fl3 = sub_flags

    @always_comb
    def pack():
        if m_sub == 0:
            o_states.next = st0
            o_flags.next = fl0
        elif m_sub == 1:
            o_states.next = st1
            o_flags.next = fl1
        elif m_sub == 2:
            o_states.next = st2
            o_flags.next = fl2
        else:
            o_states.next = st3
            o_flags.next = fl3
    insts.append(pack)

    return insts
