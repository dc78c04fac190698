"""KULISCH_FIXED accumulation of the node: per receive port, four 16-lane Kulisch sub-stores, merged per range.

Phase 4 (exact path) of the SINGLE node.  Each receive port's reader issues one
issue group per cycle: the consecutive ranges of one 512-bit beat (up to 4
INT8, 2 FP16/BF16, 1 FP32 ranges; `p0_group` from port 0, `p1_group` from port 1).
Range r is held by sub-store r % 4 (row r // 4), so the up to four ranges of
a group always go to four different sub-stores; lane l of a range goes to lane
l of its sub-store (hdl/node/prism_kulisch_bank.py, one RAM per receive port;
hdl/node/prism_kulisch_route.py picks each sub-store's range out of a group).  Both
ports therefore accumulate a whole beat per cycle each, never stalling, and
both may hit the same range in the same cycle (port-local RAMs).  Which ranges
were written since the last COMMIT is kept here (one bit per range and port):
the first contribution replaces a row, so the stores need no clearing pass, and
the merge treats never-written rows as 0.  A range counts as written when a
group ends it (`ends`): an element group holds all 16 lanes of its ranges, an
EXACT frame gives a range one lane per beat, and each of those beats must still
replace its lane's row.

When a range has all its contributors (prism_completion), `merge_valid`/`merge_row`
merge the two port-local states of its 16 elements in its sub-store (a copy of
each RAM kept for the merge's read, so the merge does not take cycles from
accumulation); the merged states and flags appear on `merged` MERGE_LATENCY (3)
cycles later (registered RAM read, then the banks' two merge stages: the rows
are kept in carry-save form and the merge resolves their carries,
hdl/node/prism_kulisch_bank.py).  `p0_events`/`p1_events` report each applied issue group
(its first range and number of ranges) two cycles after it was taken (after its
RAM writes, which take a read stage and an add stage), for completion tracking.

Parameters:
    ROWS        ranges held (CAPACITY / 16, 1 .. 256); each sub-store holds ceil(ROWS / 4) rows

Ports (buses in hdl/node/prism_buses.py; W = KULISCH_W = len(merged.states) / 16):
    clk, rst                    clock; synchronous reset
    op                          ActiveOp: clear (pulse, a new operation starts: forget written rows),
                                in_fmt (element format code, 2 bits) and exact_in (EXACT partials) are read
    p0_group, p1_group          IssueGroup of port 0, 1 as the store sees it (valid only under
                                KULISCH_FIXED; row, lanes, data, ends read; the store never stalls, ready unused)
    merge_valid, merge_row      merge a completed range (8 bits)
    merged                      out: MergedRange, MERGE_LATENCY cycles after merge_valid
    p0_events, p1_events        out: RangeEvents, port 0's / port 1's issue group has been applied
                                (n: the ranges it ended)
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, intbv, modbv

from hdl.node.prism_buses import SubStorePort
from hdl.node.prism_exact_operand import prism_exact_operand
from hdl.node.prism_kulisch_bank import MERGE_LATENCY, prism_kulisch_bank
from hdl.node.prism_kulisch_route import prism_kulisch_route
from spec.formats import KULISCH_WIDTHS

LANES = 16
SUBS = 4                # sub-stores per port: ranges of one beat (64 INT8 elements)
GROUP = LANES * SUBS    # elements of an issue group


@block
def prism_kulisch_store(clk, rst, op, p0_group, p1_group, merge_valid, merge_row, merged, p0_events, p1_events,
                        ROWS=256):
    if len(merged.states) % LANES:
        raise ValueError("prism_kulisch_store: merged.states holds 16 lane states")
    W = len(merged.states) // LANES
    if W not in KULISCH_WIDTHS:
        raise ValueError(f"prism_kulisch_store: lane states are {W} bits; KULISCH_W is 320 or 280")
    if len(merged.flags) != 5 * LANES:
        raise ValueError("prism_kulisch_store: merged.flags is 16 x 5 bits")
    if len(merged.wraps) % LANES:
        raise ValueError("prism_kulisch_store: merged.wraps holds 16 lane wrap counts")
    WB = len(merged.wraps) // LANES
    for name, s, w in (("p0_group.data", p0_group.data, 32 * GROUP), ("p1_group.data", p1_group.data, 32 * GROUP),
                       ("p0_group.lanes", p0_group.lanes, GROUP), ("p1_group.lanes", p1_group.lanes, GROUP),
                       ("p0_group.row", p0_group.row, 8), ("p1_group.row", p1_group.row, 8),
                       ("p0_group.ends", p0_group.ends, SUBS), ("p1_group.ends", p1_group.ends, SUBS),
                       ("merge_row", merge_row, 8), ("merged.row", merged.row, 8),
                       ("p0_events.row", p0_events.row, 8), ("p1_events.row", p1_events.row, 8),
                       ("p0_events.n", p0_events.n, 3), ("p1_events.n", p1_events.n, 3)):
        if len(s) != w:
            raise ValueError(f"prism_kulisch_store: {name} is {len(s)} bits; it must be {w}")
    if not 1 <= ROWS <= 256:
        raise ValueError(f"prism_kulisch_store: ROWS={ROWS} must be 1 .. 256")
    SUB_ROWS = -(-ROWS // SUBS)

    written_p0 = Signal(intbv(0)[256:])
    written_p1 = Signal(intbv(0)[256:])
    m_sub = Signal(intbv(0)[2:])          # sub-store of the merge presented on `merged`
    m_subrow = Signal(intbv(0)[8:])
    m_subs = Signal(intbv(0)[SUBS:])      # bit S: merge_valid for a range of sub-store S
    use_p0, use_p1 = Signal(bool(0)), Signal(bool(0))
    # a merge's row travels beside the banks' merge pipeline (MERGE_LATENCY - 1 stages here, then
    # merged.*); an issue group's events one stage more than the banks' inputs: the banks read
    # their rows at the edge a group is taken and add and write in the next cycle
    MD = MERGE_LATENCY - 1
    md_valid, md_rows = Signal(modbv(0)[MD:]), Signal(modbv(0)[8 * MD:])     # youngest at the low end
    e1_p0_valid, e1_p0_row, e1_p0_n = Signal(bool(0)), Signal(intbv(0)[8:]), Signal(intbv(0)[3:])
    e1_p1_valid, e1_p1_row, e1_p1_n = Signal(bool(0)), Signal(intbv(0)[8:]), Signal(intbv(0)[3:])

    @always_comb
    def merge_row_select():
        m_subrow.next = merge_row[8:2]
        use_p0.next = written_p0[merge_row]
        use_p1.next = written_p1[merge_row]
        for S in range(SUBS):
            m_subs.next[S] = merge_valid and merge_row[2:0] == S

    @always(clk.posedge)
    def track_written():
        wa = intbv(0)[256:]
        wb = intbv(0)[256:]
        r = modbv(0)[8:]
        na = intbv(0)[3:]
        nb = intbv(0)[3:]
        if rst:
            # written_p0/p1 are not reset: every operation's op.clear empties them before its
            # first contribution, and a merge between a reset and that clear belongs to no
            # operation (what it reads is never sent)
            merged.valid.next = 0
            p0_events.valid.next = 0
            p1_events.valid.next = 0
            md_valid.next = 0
            e1_p0_valid.next = 0
            e1_p1_valid.next = 0
        else:
            wa[:] = written_p0
            wb[:] = written_p1
            na[:] = 0
            nb[:] = 0
            for j in range(SUBS):
                if p0_group.ends[j]:
                    na[:] = na + 1
                if p1_group.ends[j]:
                    nb[:] = nb + 1
            if op.clear:
                wa[:] = 0
                wb[:] = 0
            else:
                for j in range(SUBS):
                    if p0_group.valid and p0_group.ends[j]:
                        r[:] = p0_group.row + j
                        wa[r] = 1
                    if p1_group.valid and p1_group.ends[j]:
                        r[:] = p1_group.row + j
                        wb[r] = 1
            written_p0.next = wa
            written_p1.next = wb
            md_valid.next = (md_valid << 1) | merge_valid
            md_rows.next = (md_rows << 8) | merge_row
            merged.valid.next = md_valid[MD - 1]
            merged.row.next = md_rows[8 * MD:8 * MD - 8]
            m_sub.next = md_rows[8 * MD - 6:8 * MD - 8]
            e1_p0_valid.next = p0_group.valid
            e1_p0_row.next = p0_group.row
            e1_p0_n.next = na
            e1_p1_valid.next = p1_group.valid
            e1_p1_row.next = p1_group.row
            e1_p1_n.next = nb
            p0_events.valid.next = e1_p0_valid
            p0_events.row.next = e1_p0_row
            p0_events.n.next = e1_p0_n
            p1_events.valid.next = e1_p1_valid
            p1_events.row.next = e1_p1_row
            p1_events.n.next = e1_p1_n

    insts = [merge_row_select, track_written]
    sub_states, sub_flags, sub_wraps = [], [], []
    for S in range(SUBS):
        p0_sub, p1_sub = SubStorePort(), SubStorePort()
        insts.append(prism_kulisch_route(group=p0_group, written=written_p0, sub=p0_sub, SUB=S))
        insts.append(prism_kulisch_route(group=p1_group, written=written_p1, sub=p1_sub, SUB=S))
        # an EXACT group holds one partial for one lane: its word is formed (and registered) once for
        # the 16 lanes, which take it at their adders in stage 1
        p0_xword, p1_xword = Signal(modbv(0)[W + 3 + WB:]), Signal(modbv(0)[W + 3 + WB:])
        insts.append(prism_exact_operand(clk=clk, beat=p0_sub.sdata, word=p0_xword, WRAP_BITS=WB))
        insts.append(prism_exact_operand(clk=clk, beat=p1_sub.sdata, word=p1_xword, WRAP_BITS=WB))
        states, flags, wraps = [], [], []
        for lane in range(LANES):
            st = Signal(intbv(0)[W:])
            nan, pinf, ninf, ovf, wsign = [Signal(bool(0)) for _ in range(5)]
            wr = Signal(intbv(0)[WB:])
            insts.append(prism_kulisch_bank(
                clk=clk, rst=rst, fmt=op.in_fmt, exact=op.exact_in,
                a_valid=p0_sub.go(lane), a_row=p0_sub.srow, a_first=p0_sub.first,
                a_data=p0_sub.sdata(32 * lane + 32, 32 * lane), a_xword=p0_xword,
                b_valid=p1_sub.go(lane), b_row=p1_sub.srow, b_first=p1_sub.first,
                b_data=p1_sub.sdata(32 * lane + 32, 32 * lane), b_xword=p1_xword,
                m_valid=m_subs(S), m_row=m_subrow, m_use_a=use_p0, m_use_b=use_p1,
                o_state=st, o_nan=nan, o_pos_inf=pinf, o_neg_inf=ninf, o_overflow=ovf, o_wrap_sign=wsign,
                o_wraps=wr, ROWS=SUB_ROWS, WRAP_BITS=WB))
            states.append(st)
            flags.append([wsign, ovf, ninf, pinf, nan])     # most significant first
            wraps.append(wr)
        sub_states.append(ConcatSignal(*reversed(states)))
        sub_flags.append(ConcatSignal(*[f for lane_flags in reversed(flags) for f in lane_flags]))
        sub_wraps.append(ConcatSignal(*reversed(wraps)))
    st0, st1, st2, st3 = sub_states
    fl0, fl1, fl2, fl3 = sub_flags
    wr0, wr1, wr2, wr3 = sub_wraps

    @always_comb
    def select_merged():
        if m_sub == 0:
            merged.states.next = st0
            merged.flags.next = fl0
            merged.wraps.next = wr0
        elif m_sub == 1:
            merged.states.next = st1
            merged.flags.next = fl1
            merged.wraps.next = wr1
        elif m_sub == 2:
            merged.states.next = st2
            merged.flags.next = fl2
            merged.wraps.next = wr2
        else:
            merged.states.next = st3
            merged.flags.next = fl3
            merged.wraps.next = wr3
    insts.append(select_merged)

    return insts
