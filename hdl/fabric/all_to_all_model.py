"""all_to_all_model: the same job, the same fabric, the opposite end of the
ECMP efficiency curve.

A ring produces N flows; an all-to-all N(N-1).  With about a thousand flows
per uplink the balls-in-bins imbalance is small (the law of large numbers is
the all-to-all's load balancer); with one per uplink it is 3.5x.  The block
evaluates the package's flow count, volume and efficiency lookup for the
collective named on its input, so one instance shows both ends of the curve.

Ports (all combinational; widths from the signals):
    collective              collective_e (collective_pkg.COLL_*, 3 bits)
    participants            N, the job's participant count at run time (values
                            below 1 are taken as 1)
    flows_per_leaf_o (out)  collective_pkg.flows_per_leaf(collective, N, ACC_PER_LEAF):
                            ACC_PER_LEAF x (N-1) for all-to-all, ACC_PER_LEAF otherwise
    flows_per_uplink (out)  floor(flows / UPLINKS)
    efficiency_pct (out)    collective_pkg.efficiency_pct(flows, UPLINKS) (whole per cent)
    egress_mb (out)         collective_pkg.bytes_per_participant_mb(collective, S_MB, N)
    ideal_ms (out)          floor(egress_mb x 8 / RATE)
    time_ms (out)           floor(egress_mb x 8 x 100 / (RATE x efficiency)) -- exact
    slowdown_x100 (out)     floor(10 000 / efficiency) = 100 x time / ideal, exact
    is_ecmp_best_case (out) more than 100 flows per uplink
    ring_flows_same_job (out) ACC_PER_LEAF: the same job's ring all-reduce, for contrast
Every numeric output saturates at all ones if its value does not fit.

Parameters:
    S_MB          per-participant volume in MB (>= 1)
    ACC_PER_LEAF  accelerators per leaf (>= 1)
    UPLINKS       uplinks per leaf (>= 1)
    RATE          line rate in Gb/s (>= 1)

Fixed from the seed's simplifications: N is an input (the seed's compile-time
PARTICIPANTS cannot follow a job restarted on a different participant set); the
lookup's top bucket is split at 100 flows per uplink so 32 736 flows read 94 %
(the seed's own 93.8 %) rather than the 82 % of 3 200 flows; times are computed
from exact products.  The seed's unused `start`, `clk` and `rst` are dropped.
Not fixed: all flows are taken as simultaneously active; incast is not modelled.
"""
from myhdl import always_comb, block, intbv

from hdl.fabric import collective_pkg as pkg


@block
def all_to_all_model(collective, participants, flows_per_leaf_o, flows_per_uplink, efficiency_pct,
                     egress_mb, ideal_ms, time_ms, slowdown_x100, is_ecmp_best_case,
                     ring_flows_same_job, S_MB=1024, ACC_PER_LEAF=pkg.ACC_PER_LEAF,
                     UPLINKS=pkg.UPLINKS_PER_LEAF, RATE=pkg.RATE_GBPS):
    name = "all_to_all_model"
    for pname, v in (("S_MB", S_MB), ("ACC_PER_LEAF", ACC_PER_LEAF), ("UPLINKS", UPLINKS), ("RATE", RATE)):
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name}: {pname} must be a positive integer, got {v!r}")
    pkg.require_width(collective, pkg.COLLECTIVE_BITS, name, "collective")
    pkg.require_width(efficiency_pct, 7, name, "efficiency_pct", at_least=True)
    if ACC_PER_LEAF >= (1 << len(ring_flows_same_job)):
        raise ValueError(f"{name}: ring_flows_same_job is too narrow for {ACC_PER_LEAF}")
    E0, E1, E2, E3, E4, E5, E6 = pkg.EFF_PCT
    L0, L1, L2, L3, L4, L5 = pkg.EFF_FPU_LIMITS
    ALLREDUCE, ALLGATHER, ALLTOALL = pkg.COLL_ALLREDUCE, pkg.COLL_ALLGATHER, pkg.COLL_ALLTOALL
    NW = len(participants)
    FW = NW + ACC_PER_LEAF.bit_length() + 1
    WIDE = FW + S_MB.bit_length() + 24
    NUM_W = NW + 2 + (2 * S_MB).bit_length()
    TT_W = (2 * S_MB * 800).bit_length() + 1
    MX = {p: (1 << len(s)) - 1 for p, s in (("f", flows_per_leaf_o), ("fpu", flows_per_uplink),
                                            ("eg", egress_mb), ("id", ideal_ms), ("t", time_ms),
                                            ("sl", slowdown_x100))}
    F_MAX, FPU_MAX, EG_MAX, ID_MAX, T_MAX, SL_MAX = (MX[k] for k in ("f", "fpu", "eg", "id", "t", "sl"))

    @always_comb
    def model():
        n = intbv(0)[NW + 1:]
        flows = intbv(0)[FW:]
        fpu = intbv(0)[FW:]
        eff = intbv(0)[8:]
        t = intbv(0)[WIDE:]
        eg = intbv(0)[WIDE:]
        num = intbv(0)[NUM_W:]
        tt = intbv(0)[TT_W:]
        if participants < 1:
            n[:] = 1
        else:
            n[:] = participants
        # Flows leaving ONE leaf, which is what the uplink group sees.
        if collective == ALLTOALL:
            flows[:] = (n - 1) * ACC_PER_LEAF
        else:
            flows[:] = ACC_PER_LEAF
        fpu[:] = flows // UPLINKS
        if fpu <= L0:
            eff[:] = E0
        elif fpu <= L1:
            eff[:] = E1
        elif fpu <= L2:
            eff[:] = E2
        elif fpu <= L3:
            eff[:] = E3
        elif fpu <= L4:
            eff[:] = E4
        elif fpu <= L5:
            eff[:] = E5
        else:
            eff[:] = E6
        # Bytes per participant: 2(N-1)/N x S for the ring, (N-1)/N x S to gather or exchange.
        if collective == ALLREDUCE:
            num[:] = (n - 1) * (2 * S_MB)
            eg[:] = num // n
        elif collective == ALLGATHER or collective == ALLTOALL:
            num[:] = (n - 1) * S_MB
            eg[:] = num // n
        else:
            eg[:] = S_MB
        if flows > F_MAX:
            flows[:] = F_MAX
        flows_per_leaf_o.next = flows
        if fpu > FPU_MAX:
            flows_per_uplink.next = FPU_MAX
        else:
            flows_per_uplink.next = fpu
        efficiency_pct.next = eff
        if eg > EG_MAX:
            egress_mb.next = EG_MAX
        else:
            egress_mb.next = eg
        t[:] = eg * 8
        t[:] = t // RATE
        if t > ID_MAX:
            t[:] = ID_MAX
        ideal_ms.next = t
        tt[:] = eg * 800
        tt[:] = tt // (RATE * eff)
        if tt > T_MAX:
            tt[:] = T_MAX
        time_ms.next = tt
        t[:] = 10000 // eff
        if t > SL_MAX:
            t[:] = SL_MAX
        slowdown_x100.next = t
        is_ecmp_best_case.next = fpu > L5
        ring_flows_same_job.next = ACC_PER_LEAF

    return model
