"""ecmp_hash_stream: ecmp_hash_unit behind AXI-Stream ports, with backpressure.

One beat in = one flow (its 104-bit canonical 5-tuple, collective_pkg.pack_tuple);
one beat out = {path, hash} for that flow, in order, tlast carried through.

ecmp_hash_unit has a fixed latency of 2 and cannot stall, so this wrapper never
stalls it either: results land in a 4-entry output FIFO, and s_axis_tready admits a
flow only if the FIFO can hold it even when the sink stops accepting at once,
i.e. when (FIFO occupancy + flows inside the hash unit) < 4.  s_axis_tready is a
register (low during reset; no combinational path from m_axis_tready).  With a sink that
always accepts, one flow per cycle goes through (occupancy 1 + 2 in flight = 3);
latency from an accepted input beat to m_axis_tvalid is 3 cycles.

Ports:
    clk, rst            clock; synchronous reset (ResetSignal)
    s_axis_tdata        a flow's 104-bit canonical 5-tuple (must be 104 bits)
    s_axis_tvalid       a flow is offered
    s_axis_tready (out) the flow is taken this cycle (registered state only)
    s_axis_tlast        frame marker, carried to m_axis_tlast with the flow
    m_axis_tdata (out)  {path, hash}: hash in bits 31:0, the path index in [0, PATHS)
                        above it; width 32 + P with P >= clog2(PATHS) (at least 1)
    m_axis_tvalid (out) m_axis_tdata holds a result
    m_axis_tready       the sink takes it this cycle
    m_axis_tlast (out)  the flow's s_axis_tlast

Parameters:
    PATHS       equal-cost paths, 1..65535 (as ecmp_hash_unit)
    PATH_MODE   "mod" or "mulhi" (as ecmp_hash_unit; both bit-exact against
                golden.fabric.ecmp.select_path)
"""
from myhdl import Signal, always_comb, always_seq, block, concat, intbv

from hdl.fabric import collective_pkg as pkg
from hdl.fabric.ecmp_hash_unit import ecmp_hash_unit

FIFO_DEPTH = 4      # = hash latency 2 + 2: full rate while admitting only what fits


@block
def ecmp_hash_stream(clk, rst, s_axis_tdata, s_axis_tvalid, s_axis_tready, s_axis_tlast,
                     m_axis_tdata, m_axis_tvalid, m_axis_tready, m_axis_tlast,
                     PATHS=pkg.UPLINKS_PER_LEAF, PATH_MODE="mod"):
    name = "ecmp_hash_stream"
    pkg.check_hash_params(PATHS, PATH_MODE, name)
    pkg.require_width(s_axis_tdata, pkg.TUPLE_BITS, name, "s_axis_tdata")
    DW = len(m_axis_tdata)
    PW = DW - 32
    if PW < 1 or (1 << PW) < PATHS:
        raise ValueError(f"{name}: m_axis_tdata is {DW} bits; it must be 32 + at least "
                         f"{pkg.clog2(PATHS)} bits to hold the hash and a path index for {PATHS} paths")
    EW = DW + 1                      # FIFO entry: {tlast, path, hash}

    # the hash unit's ports (w_ names: MyHDL flattens, a child's process variables must not be shadowed)
    w_take = Signal(bool(0))
    w_tlast_in = Signal(bool(0))
    w_valid_out = Signal(bool(0))
    w_hash = Signal(intbv(0)[32:])
    w_path = Signal(intbv(0)[PW:])
    w_tlast_out = Signal(bool(0))
    hasher = ecmp_hash_unit(clk, rst, w_take, s_axis_tdata, w_tlast_in, w_valid_out, w_hash, w_path,
                            w_tlast_out, PATHS=PATHS, PATH_MODE=PATH_MODE)

    w_ready = Signal(bool(0))
    w_inflight1 = Signal(bool(0))    # a flow is in the hash unit's first stage
    w_count = Signal(intbv(0, min=0, max=FIFO_DEPTH + 1))
    w_e1 = Signal(intbv(0)[EW:])     # FIFO entries behind the head (the head is m_axis_*)
    w_e2 = Signal(intbv(0)[EW:])
    w_e3 = Signal(intbv(0)[EW:])

    @always_comb
    def admit():
        w_take.next = s_axis_tvalid and w_ready
        w_tlast_in.next = s_axis_tlast

    @always_comb
    def ready_out():
        s_axis_tready.next = w_ready

    @always_seq(clk.posedge, reset=rst)
    def fifo():
        n = intbv(0)[3:]
        room = intbv(0)[4:]
        word = intbv(0)[EW:]
        n[:] = w_count
        w_inflight1.next = w_take
        if n != 0 and m_axis_tready:
            # pop: shift towards the head
            m_axis_tdata.next = w_e1[DW:0]
            m_axis_tlast.next = w_e1[DW]
            w_e1.next = w_e2
            w_e2.next = w_e3
            n[:] = n - 1
        if w_valid_out:
            word[:] = concat(w_tlast_out, w_path, w_hash)
            if n == 0:
                m_axis_tdata.next = word[DW:0]
                m_axis_tlast.next = word[DW]
            elif n == 1:
                w_e1.next = word
            elif n == 2:
                w_e2.next = word
            else:
                w_e3.next = word
            n[:] = n + 1
        w_count.next = n
        m_axis_tvalid.next = n != 0
        # next cycle's occupancy + flows in the hash unit (its stage 2 then holds this
        # cycle's stage 1); registered, so s_axis_tready is low in reset
        room[:] = n + w_take + w_inflight1
        w_ready.next = room < FIFO_DEPTH

    return hasher, admit, ready_out, fifo
