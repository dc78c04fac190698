"""Routing of one receive port's issue group to one KULISCH_FIXED sub-store.

Part of phase 4 (hdl/node/prism_kulisch_store.py, which builds one per port and
sub-store).  An issue group holds the consecutive ranges row, row + 1, ... (up
to four: one INT8 beat); range r belongs to sub-store r % 4.  For sub-store SUB
this block picks the one range j of the group with (row + j) % 4 == SUB: its
lane mask, its 16 element fields, its row in the sub-store (r // 4) and whether
it is the port's first contribution to the range since COMMIT.  Purely
combinational.

Parameters:
    SUB         the sub-store, 0 .. 3

Ports (buses in hdl/node/prism_buses.py; widths from the signals):
    group       IssueGroup of the port (valid, row 8 bits, lanes 64, data 2048 are read)
    written     256 bits: range r has a contribution of this port since COMMIT
    sub         out: SubStorePort, the group's range for this sub-store (go 16 bits, srow 8, sdata 512)
"""
from myhdl import always_comb, block, modbv

LANES = 16
SUBS = 4


@block
def prism_kulisch_route(group, written, sub, SUB=0):
    if not 0 <= SUB < SUBS:
        raise ValueError(f"prism_kulisch_route: SUB={SUB} must be 0 .. {SUBS - 1}")
    for name, s, w in (("group.row", group.row, 8), ("sub.srow", sub.srow, 8), ("group.lanes", group.lanes, LANES * SUBS),
                       ("group.data", group.data, 32 * LANES * SUBS), ("written", written, 256),
                       ("sub.go", sub.go, LANES), ("sub.sdata", sub.sdata, 32 * LANES)):
        if len(s) != w:
            raise ValueError(f"prism_kulisch_route: {name} is {len(s)} bits, must be {w}")
    S4 = SUB + SUBS
    # constant slices inside the process, not shadow signals: a bus that is a port of the converted
    # top (prism synth converts this block alone) gets no names for shadow signals of its fields

    @always_comb
    def pick_range():
        d = modbv(0)[2:]
        r = modbv(0)[8:]
        d[:] = S4 - group.row[2:0]
        r[:] = group.row + d
        sub.srow.next = r[8:2]
        sub.first.next = not written[r]
        if not group.valid:
            sub.go.next = 0
            sub.sdata.next = group.data[512:0]
        elif d == 0:
            sub.go.next = group.lanes[16:0]
            sub.sdata.next = group.data[512:0]
        elif d == 1:
            sub.go.next = group.lanes[32:16]
            sub.sdata.next = group.data[1024:512]
        elif d == 2:
            sub.go.next = group.lanes[48:32]
            sub.sdata.next = group.data[1536:1024]
        else:
            sub.go.next = group.lanes[64:48]
            sub.sdata.next = group.data[2048:1536]

    return pick_range
