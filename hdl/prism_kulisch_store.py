"""KULISCH_FIXED accumulation of the node: one 16-lane Kulisch store per receive port, merged per range.

Phase 4 (exact path) of the SINGLE node.  Each receive port's reader issues one
16-element range per cycle (`a_*` from port 0, `b_*` from port 1); lane l of
the range goes to lane l of that port's store (hdl/prism_kulisch_bank.py), so
both ports accumulate in parallel at one range per cycle each, never stalling.
Which rows were written since the last COMMIT is kept here (one bit per row
and port): the first contribution replaces a row, so the stores need no
clearing pass, and the merge treats never-written rows as 0.

When a range has all its contributors (prism_completion), `m_valid`/`m_row`
merge the two port-local states of its 16 elements (a second read port, so the
merge does not take cycles from accumulation); the merged states and flags
appear on o_* one cycle later.  `ev_*` report each applied range contribution
one cycle after it was taken (after its RAM write), for completion tracking.

Parameters:
    ROWS        ranges held (CAPACITY / 16, 1 .. 256)

Ports (widths from the signals; W = KULISCH_W = len(o_states) / 16):
    clk, rst                    clock; synchronous reset
    commit                      pulse: a new operation starts (forget written rows)
    fmt                         input format code (2 bits)
    a_valid, a_row, a_lanes     port 0 issue group: present, range (8 bits), 16-bit lane mask
    a_data                      16 x 32-bit lane fields (512 bits)
    b_valid, b_row, b_lanes, b_data   port 1, the same
    m_valid, m_row              merge a completed range
    o_valid, o_row              out: merged range present (one cycle after m_valid), its row
    o_states                    out: 16 x W merged states, lane l at [W*l + W - 1 : W*l]
    o_flags                     out: 16 x 5 flags, lane l at [5l+4:5l] = {wrap_sign, overflow, -inf, +inf, nan}
    ev_a_valid, ev_a_row        out: a port 0 range contribution has been applied
    ev_b_valid, ev_b_row        out: the same for port 1
"""
from myhdl import ConcatSignal, Signal, always, always_comb, block, intbv

from hdl.prism_kulisch_bank import prism_kulisch_bank

LANES = 16


@block
def prism_kulisch_store(clk, rst, commit, fmt, a_valid, a_row, a_lanes, a_data, b_valid, b_row, b_lanes, b_data,
                        m_valid, m_row, o_valid, o_row, o_states, o_flags, ev_a_valid, ev_a_row, ev_b_valid,
                        ev_b_row, ROWS=256):
    if len(o_states) % LANES:
        raise ValueError("prism_kulisch_store: o_states holds 16 lane states")
    W = len(o_states) // LANES
    if W not in (280, 320):
        raise ValueError(f"prism_kulisch_store: lane states are {W} bits; KULISCH_W is 320 or 280")
    if len(o_flags) != 5 * LANES:
        raise ValueError("prism_kulisch_store: o_flags is 16 x 5 bits")
    if len(a_data) != 512 or len(b_data) != 512 or len(a_lanes) != LANES or len(b_lanes) != LANES:
        raise ValueError("prism_kulisch_store: a_data/b_data 512 bits, a_lanes/b_lanes 16 bits")
    if not 1 <= ROWS <= 256:
        raise ValueError(f"prism_kulisch_store: ROWS={ROWS} must be 1 .. 256")

    written_a = Signal(intbv(0)[256:])
    written_b = Signal(intbv(0)[256:])
    a_go, b_go = Signal(intbv(0)[LANES:]), Signal(intbv(0)[LANES:])
    a_first, b_first = Signal(bool(0)), Signal(bool(0))
    use_a, use_b = Signal(bool(0)), Signal(bool(0))

    @always_comb
    def control():
        if a_valid:
            a_go.next = a_lanes
        else:
            a_go.next = 0
        if b_valid:
            b_go.next = b_lanes
        else:
            b_go.next = 0
        a_first.next = not written_a[a_row]
        b_first.next = not written_b[b_row]
        use_a.next = written_a[m_row]
        use_b.next = written_b[m_row]

    @always(clk.posedge)
    def step():
        wa = intbv(0)[256:]
        wb = intbv(0)[256:]
        if rst:
            written_a.next = 0
            written_b.next = 0
            o_valid.next = 0
            ev_a_valid.next = 0
            ev_b_valid.next = 0
        else:
            wa[:] = written_a
            wb[:] = written_b
            if commit:
                wa[:] = 0
                wb[:] = 0
            else:
                if a_valid:
                    wa[a_row] = 1
                if b_valid:
                    wb[b_row] = 1
            written_a.next = wa
            written_b.next = wb
            o_valid.next = m_valid
            o_row.next = m_row
            ev_a_valid.next = a_valid
            ev_a_row.next = a_row
            ev_b_valid.next = b_valid
            ev_b_row.next = b_row

    banks = []
    states, flags = [], []
    for lane in range(LANES):
        st = Signal(intbv(0)[W:])
        nan, pinf, ninf, ovf, wsign = [Signal(bool(0)) for _ in range(5)]
        banks.append(prism_kulisch_bank(clk, rst, fmt, a_go(lane), a_row, a_first, a_data(32 * lane + 32, 32 * lane),
                                        b_go(lane), b_row, b_first, b_data(32 * lane + 32, 32 * lane),
                                        m_valid, m_row, use_a, use_b, st, nan, pinf, ninf, ovf, wsign, ROWS=ROWS))
        states.append(st)
        flags.append([wsign, ovf, ninf, pinf, nan])     # most significant first
    states_cat = ConcatSignal(*reversed(states))
    flags_cat = ConcatSignal(*[f for lane_flags in reversed(flags) for f in lane_flags])

    @always_comb
    def pack():
        o_states.next = states_cat
        o_flags.next = flags_cat

    return control, step, banks, pack
