"""ring_link_rates: each ring connection's rate, from the load on the uplink it
is pinned to.

The collision mechanism of the chapter in one block.  A connection is placed
once, when it starts (ECMP stickiness), and keeps its path for its life; the
table here remembers that path and the rate the connection declared.  Its rate
is then set by the load on that path: while the path is not oversubscribed the
connection gets what it declared; once the declared load exceeds the line rate,
the path is shared in proportion to the declared rates,

    share = floor(declared x RATE / max(load on its path, RATE)).

With every ring connection declaring the line rate (a ring link is a greedy
flow), k connections pinned to one uplink get floor(RATE / k) each -- the
seed's "one uplink carries k flows, so the ring runs at 100/k".  The ring's
member rates are the sums of their connections' shares (striping_controller),
and the collective's rate is their minimum (slowest_member_tracker).

Ports (W = lane width = len(place_gbps); widths from the signals):
    clk, rst            clock; synchronous reset (ResetSignal)
    place               a connection is placed this cycle (the selector's flow_start) ...
    place_conn          ... this connection (index < CONNS) ...
    place_path          ... on this path ...
    place_gbps          ... having declared this rate                        (W bits)
    end_valid           a connection ends this cycle ...
    end_conn            ... this one (ignored unless it is placed)
    path_load_gbps      PATHS lanes of W bits: the selector's declared load per path
                        (PATHS = len(path_load_gbps) // W)
    flow_end (out)      end_valid for a placed connection: drives the selector's flow_end
    ending_path (out)   the ending connection's recorded path  (combinational lookup,
    ending_gbps (out)   the rate it declared                    so the selector removes
                                                                exactly what was added)
    conn_gbps (out)     CONNS lanes of W bits: each connection's share, registered (0 for
                        a connection not placed); CONNS = len(conn_gbps) // W
    conn_path (out)     CONNS lanes of len(place_path) bits: each connection's path
    conns_placed (out)  connections placed now
    table_error (out)   sticky: a connection placed again while placed, or an index or
                        path outside the table (the selector's load would then leak)

Timing: a placement or end at the rising edge e updates the table at e; the
selector updates the path loads at the same edge, and every share is
recomputed from the table and the loads at each edge, so conn_gbps reflects a
placement from edge e + 1 on.  Placing and ending the same connection in one
cycle re-places it (the end is applied first).

Parameters:
    RATE    line rate in Gb/s (>= 1), the uplink's capacity

Every output is registered (no combinational output depends on power-up state,
except ending_path / ending_gbps / flow_end, which follow their inputs and the
table registers and read 0 for the power-up inputs as they should).
"""
from myhdl import Signal, always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg


@block
def ring_link_rates(clk, rst, place, place_conn, place_path, place_gbps, end_valid, end_conn,
                    path_load_gbps, flow_end, ending_path, ending_gbps, conn_gbps, conn_path,
                    conns_placed, table_error, RATE=pkg.RATE_GBPS):
    name = "ring_link_rates"
    if not isinstance(RATE, int) or RATE < 1:
        raise ValueError(f"{name}: RATE must be a positive integer, got {RATE!r}")
    W = len(place_gbps)
    if RATE >= (1 << W):
        raise ValueError(f"{name}: RATE={RATE} does not fit in {W}-bit lanes")
    PATHS = pkg.lanes(path_load_gbps, W, name, "path_load_gbps")
    CONNS = pkg.lanes(conn_gbps, W, name, "conn_gbps")
    PW = len(place_path)
    pkg.require_index_width(place_path, PATHS, name, "place_path")
    pkg.require_width(ending_path, PW, name, "ending_path")
    pkg.require_width(ending_gbps, W, name, "ending_gbps")
    pkg.require_width(conn_path, CONNS * PW, name, "conn_path")
    pkg.require_index_width(place_conn, CONNS, name, "place_conn")
    pkg.require_index_width(end_conn, CONNS, name, "end_conn")
    if CONNS >= (1 << len(conns_placed)):
        raise ValueError(f"{name}: conns_placed is too narrow for {CONNS}")
    CW = max(len(place_conn), len(end_conn))
    GBUS, PBUS = CONNS * W, CONNS * PW
    GTOP, PTOP = GBUS - W, PBUS - PW
    LANE_MASK, PATH_MASK = (1 << W) - 1, (1 << PW) - 1
    NUM_W = W + RATE.bit_length()
    CNT_W = len(conns_placed)

    # the table: per connection, its path (the conn_path output itself), its declared rate,
    # and whether it is placed
    t_gbps = Signal(intbv(0)[GBUS:])
    t_placed = Signal(intbv(0)[CONNS:])

    @always_comb
    def lookup():
        sel = intbv(0)[CW + 1:]
        sel[:] = end_conn
        if end_valid and sel < CONNS and t_placed[sel[CW:0]]:
            flow_end.next = 1
        else:
            flow_end.next = 0
        if sel < CONNS:
            ending_path.next = (conn_path >> (sel * PW)) & PATH_MASK
            ending_gbps.next = (t_gbps >> (sel * W)) & LANE_MASK
        else:
            ending_path.next = 0
            ending_gbps.next = 0

    @always_seq(clk.posedge, reset=rst)
    def update():
        paths_in = intbv(0)[PBUS:]
        gbps_in = intbv(0)[GBUS:]
        paths_out = intbv(0)[PBUS:]
        gbps_out = intbv(0)[GBUS:]
        shares = intbv(0)[GBUS:]
        placed = intbv(0)[CONNS:]
        p = intbv(0)[PW:]
        d = intbv(0)[W:]
        load = intbv(0)[W:]
        den = intbv(0)[W:]
        num = intbv(0)[NUM_W:]
        share = intbv(0)[W:]
        count = intbv(0)[CNT_W:]
        err = intbv(0)[1:]
        err[:] = 0
        count[:] = 0
        paths_in[:] = conn_path
        gbps_in[:] = t_gbps
        placed[:] = t_placed
        paths_out[:] = 0
        gbps_out[:] = 0
        shares[:] = 0
        if place and (place_conn >= CONNS or place_path >= PATHS):
            err[:] = 1
        for c in range(CONNS):
            p[:] = paths_in[PW:0]
            paths_in[:] = paths_in >> PW
            d[:] = gbps_in[W:0]
            gbps_in[:] = gbps_in >> W
            # the share from the CURRENT table and loads (a placement shows from the next edge)
            if placed[c]:
                load[:] = (path_load_gbps >> (p * W)) & LANE_MASK
                if load > RATE:
                    den[:] = load
                else:
                    den[:] = RATE
                num[:] = d * RATE
                share[:] = num // den
            else:
                share[:] = 0
            shares[:] = (shares >> W) | (share << GTOP)
            # the table update: an end first, then a placement (a re-placement)
            if end_valid and end_conn == c:
                placed[c] = 0
            if place and place_conn == c and place_path < PATHS:
                if placed[c]:
                    err[:] = 1
                placed[c] = 1
                p[:] = place_path
                d[:] = place_gbps
            paths_out[:] = (paths_out >> PW) | (p << PTOP)
            gbps_out[:] = (gbps_out >> W) | (d << GTOP)
            if placed[c]:
                count[:] = count + 1
        t_gbps.next = gbps_out
        t_placed.next = placed
        conn_gbps.next = shares
        conn_path.next = paths_out
        conns_placed.next = count
        if err:
            table_error.next = 1

    return lookup, update
