"""Routing of one KULISCH_FIXED sub-store's inputs from the issue groups of both receive ports.

Part of phase 4 (hdl/node/prism_kulisch_store.py).  An issue group holds the
consecutive ranges row, row + 1, ... (up to four: one INT8 beat); range r
belongs to sub-store r % 4.  For sub-store SUB this block picks, per port, the
one range j of the group with (row + j) % 4 == SUB: its lane mask, its 16
element fields, its row in the sub-store (r // 4) and whether it is the range's
first contribution since COMMIT; and it passes on a merge request for a range
of this sub-store.  Purely combinational.

Parameters:
    SUB         the sub-store, 0 .. 3

Ports (widths from the signals):
    a_valid, a_row              port 0 issue group: present, first range (8 bits)
    a_lanes                     its 64-bit element mask (bit 16j + l: range row + j, lane l)
    a_data                      its 64 x 32-bit element fields (2048 bits)
    written_a                   256 bits: range r has a port 0 contribution since COMMIT
    b_valid, b_row, b_lanes, b_data, written_b   port 1, the same
    m_valid, m_row              merge request for range m_row (8 bits)
    a_go                        out: 16-bit lane mask of port 0's range for this sub-store (0: none)
    a_srow                      out: that range's row in the sub-store (range // 4; 8 bits)
    a_first                     out: no port 0 contribution to that range yet
    a_sdata                     out: its 16 x 32-bit element fields (512 bits)
    b_go, b_srow, b_first, b_sdata   out: port 1, the same
    s_mvalid                    out: m_valid for a range of this sub-store
"""
from myhdl import always_comb, block, modbv

LANES = 16
SUBS = 4


@block
def prism_kulisch_route(a_valid, a_row, a_lanes, a_data, written_a, b_valid, b_row, b_lanes, b_data, written_b,
                        m_valid, m_row, a_go, a_srow, a_first, a_sdata, b_go, b_srow, b_first, b_sdata, s_mvalid,
                        SUB=0):
    if not 0 <= SUB < SUBS:
        raise ValueError(f"prism_kulisch_route: SUB={SUB} must be 0 .. {SUBS - 1}")
    for name, s, w in (("a_row", a_row, 8), ("b_row", b_row, 8), ("m_row", m_row, 8), ("a_srow", a_srow, 8),
                       ("b_srow", b_srow, 8), ("a_lanes", a_lanes, LANES * SUBS), ("b_lanes", b_lanes, LANES * SUBS),
                       ("a_data", a_data, 32 * LANES * SUBS), ("b_data", b_data, 32 * LANES * SUBS),
                       ("written_a", written_a, 256), ("written_b", written_b, 256), ("a_go", a_go, LANES),
                       ("b_go", b_go, LANES), ("a_sdata", a_sdata, 32 * LANES), ("b_sdata", b_sdata, 32 * LANES)):
        if len(s) != w:
            raise ValueError(f"prism_kulisch_route: {name} is {len(s)} bits, must be {w}")
    a_l0, a_l1, a_l2, a_l3 = [a_lanes(LANES * j + LANES, LANES * j) for j in range(SUBS)]
    b_l0, b_l1, b_l2, b_l3 = [b_lanes(LANES * j + LANES, LANES * j) for j in range(SUBS)]
    a_d0, a_d1, a_d2, a_d3 = [a_data(512 * j + 512, 512 * j) for j in range(SUBS)]
    b_d0, b_d1, b_d2, b_d3 = [b_data(512 * j + 512, 512 * j) for j in range(SUBS)]
    S4 = SUB + SUBS

    @always_comb
    def route():
        da = modbv(0)[2:]
        db = modbv(0)[2:]
        ra = modbv(0)[8:]
        rb = modbv(0)[8:]
        da[:] = S4 - a_row[2:0]
        db[:] = S4 - b_row[2:0]
        ra[:] = a_row + da
        rb[:] = b_row + db
        a_srow.next = ra[8:2]
        b_srow.next = rb[8:2]
        a_first.next = not written_a[ra]
        b_first.next = not written_b[rb]
        if not a_valid:
            a_go.next = 0
            a_sdata.next = a_d0
        elif da == 0:
            a_go.next = a_l0
            a_sdata.next = a_d0
        elif da == 1:
            a_go.next = a_l1
            a_sdata.next = a_d1
        elif da == 2:
            a_go.next = a_l2
            a_sdata.next = a_d2
        else:
            a_go.next = a_l3
            a_sdata.next = a_d3
        if not b_valid:
            b_go.next = 0
            b_sdata.next = b_d0
        elif db == 0:
            b_go.next = b_l0
            b_sdata.next = b_d0
        elif db == 1:
            b_go.next = b_l1
            b_sdata.next = b_d1
        elif db == 2:
            b_go.next = b_l2
            b_sdata.next = b_d2
        else:
            b_go.next = b_l3
            b_sdata.next = b_d3
        s_mvalid.next = m_valid and m_row[2:0] == SUB

    return route
