"""collective_fabric's buses (MyHDL interfaces, hdl/common/interface.py), and the buses by
which collective_conformance_monitor watches the fabric's blocks.

Each converted port of collective_fabric keeps the name it had as a flat signal: the bus's
argument name is the old prefix (`s_flow`, `ring`, `step`, ...) and its fields the rest, so the
Verilog top level, the property benches and the formal target see the same names.  The fabric's
other ports (one signal each, no shared prefix) stay plain.  Widths are arguments; W is the
rate width (16 bits in the fabric); the defaults are only what `Interface.field_names` builds.

The monitor's buses (the second half of this file) group what it watches by the block that
produces it: `tracker`, `ring`, `a2a`, `flow`, `selector`, `striping`, `telemetry`, `stall`
(and `slowest`, `job_rate`, which are the fabric's own SlowestMember and JobRateClaim).  Their
default widths are the fabric's; the monitor reads every width from the signals it is given.
"""
from hdl.common.interface import Interface, bit, vec
from hdl.fabric import collective_pkg as pkg

W = 16


class FlowStart(Interface):
    """A flow starting (`s_flow`); it reaches the selector 2 cycles later (ecmp_hash_unit).

    valid       a flow starts this cycle
    tuple       its RoCEv2 5-tuple (104 bits)
    gbps        its declared rate (W bits)
    conn        its connection index m*STRIPES + s ("paths" only; the link table pins it)
    """

    def __init__(self, conn_width=1):
        self.valid = bit()
        self.tuple = vec(pkg.TUPLE_BITS)
        self.gbps = vec(W)
        self.conn = vec(conn_width)


class EndingFlow(Interface):
    """The flow that ends when `flow_end` is high (`ending`).

    path        its path (8 bits; "bench": from the port, "paths": the link table's)
    gbps        its declared rate (W bits; likewise)
    conn        its connection index ("paths" only: the table supplies path and rate)
    """

    def __init__(self, conn_width=1):
        self.path = vec(8)
        self.gbps = vec(W)
        self.conn = vec(conn_width)


class Chunk(Interface):
    """Striping chunk accounting, into striping_controller (`chunk`).

    start       a chunk starts
    bytes       its size in bytes (32 bits)
    """

    def __init__(self):
        self.start = bit()
        self.bytes = vec(32)


class JobMinimum(Interface):
    """The job-wide minimum rate imported into the telemetry (`job_min`).

    gbps        the minimum over the job's leaves (W bits)
    valid       the import is complete (every leaf reported)
    """

    def __init__(self):
        self.gbps = vec(W)
        self.valid = bit()


class Stripes(Interface):
    """The connections' rates, MEMBERS x STRIPES lanes of W bits, connection m*STRIPES + s in lane
    m*STRIPES + s (`stripe`).

    gbps        in: the stripe shares ("bench" only)
    rates       out: the rates the striping controller sums (the link table's in "paths", else `gbps`)
    """

    def __init__(self, lanes=1):
        self.gbps = vec(lanes * W)
        self.rates = vec(lanes * W)


class Ring(Interface):
    """The ring all-reduce (`ring`).

    start       in: start a ring all-reduce
    running     out: the ring model is running
    step        out: a ring step ends this cycle (the step engine's, or step_tick in "bench")
    steps_done  out: steps completed in the current collective (32 bits)
    """

    def __init__(self):
        self.start = bit()
        self.running = bit()
        self.step = bit()
        self.steps_done = vec(32)


class RingStep(Interface):
    """One ring step (`step`).

    tick        in: a ring step completed ("bench" only)
    cycles      out: the step engine's last step length in cycles ("paths"; else 0; 32 bits)
    wait        out: link-cycles spent waiting for the slowest link in it ("paths"; else 0; 32 bits)
    time_us     out: the ring model's step time in microseconds (32 bits)
    """

    def __init__(self):
        self.tick = bit()
        self.cycles = vec(32)
        self.wait = vec(32)
        self.time_us = vec(32)


class SlowestMember(Interface):
    """out: the slowest member tracker's verdict (`slowest`).

    member      the slowest member's index (8 bits)
    unchanged   samples in which it stayed the same member (32 bits)
    """

    def __init__(self):
        self.member = vec(8)
        self.unchanged = vec(32)


class JobRateClaim(Interface):
    """out: the telemetry's claim about the job's rate (`job_rate`).

    claim       the telemetry claims a job-wide rate (o_job_rate_claim)
    gbps        the claimed rate, the job minimum (W bits; o_job_min_gbps)
    """

    def __init__(self):
        self.claim = bit()
        self.gbps = vec(W)


# ---- what collective_conformance_monitor watches, one bus per block ---------------------------
class RateTracker(Interface):
    """The slowest member tracker's input and verdicts (`tracker`; properties A1-A6, B3, B6, F4).

    member_gbps         the rates it reduces (the ring's links): MEMBERS lanes of W bits, member m in lane m
    min_gbps            minimum over the members (W bits)
    mean_gbps           floor(sum / MEMBERS) (W bits)
    collective_gbps     the collective's rate, computed with reduction_op (W bits)
    mean_over_min_x10   floor(10 x mean / min), saturating (16 bits)
    reduction_op        the operator of collective_gbps (collective_pkg.RED_*, 2 bits)
    samples             samples since reset (32 bits; its c_samples)
    """

    def __init__(self, members=1):
        self.member_gbps = vec(members * W)
        self.min_gbps = vec(W)
        self.mean_gbps = vec(W)
        self.collective_gbps = vec(W)
        self.mean_over_min_x10 = vec(16)
        self.reduction_op = vec(2)
        self.samples = vec(32)


class RingModel(Interface):
    """The ring all-reduce model: its start and what it computes (`ring`; properties B1-B6).

    start           a ring all-reduce starts (the model's input)
    running         the model is running
    steps_done      steps completed in the current collective (32 bits; its c_steps_done)
    steps_total     2 (N - 1) (32 bits)
    step_bytes_kb   the chunk one step moves per link, S / N in KB (32 bits)
    step_time_us    one step's time at the slowest link's rate, in microseconds (32 bits)
    slowdown_x100   the collective's time over its ideal, x 100 (16 bits)
    """

    def __init__(self):
        self.start = bit()
        self.running = bit()
        self.steps_done = vec(32)
        self.steps_total = vec(32)
        self.step_bytes_kb = vec(32)
        self.step_time_us = vec(32)
        self.slowdown_x100 = vec(16)


class AllToAll(Interface):
    """The all-to-all model's inputs and verdicts (`a2a`; properties C1, C2, C5, C6).

    collective      the collective's kind (collective_pkg.COLL_*, 3 bits)
    participants    accelerators taking part (16 bits)
    flows_per_leaf  flows leaving this leaf (32 bits; its flows_per_leaf_o)
    efficiency_pct  the expected share of line rate at those flows, whole per cent (16 bits)
    """

    def __init__(self):
        self.collective = vec(3)
        self.participants = vec(16)
        self.flows_per_leaf = vec(32)
        self.efficiency_pct = vec(16)


class FlowEvents(Interface):
    """The flows the load-aware selector places and releases, its inputs (`flow`; properties C3, C4, D1-D6).

    start           a flow starts this cycle and is placed on selector.chosen_path
    hash            its 32-bit ECMP hash (ecmp_hash_unit's)
    declared_gbps   the rate it declares (W bits)
    end             a flow ends this cycle ...
    ending_path     ... on this path (8 bits) ...
    ending_gbps     ... having declared this rate (W bits)
    """

    def __init__(self):
        self.start = bit()
        self.hash = vec(32)
        self.declared_gbps = vec(W)
        self.end = bit()
        self.ending_path = vec(8)
        self.ending_gbps = vec(W)


class Placement(Interface):
    """The load-aware selector's mode and what it reports (`selector`; properties C3, C4, D1-D6).

    load_aware_enable   in: choose the cheapest path (else the hash's path)
    chosen_path         the path a flow starting this cycle is placed on (8 bits)
    path_load_gbps      declared load per path (registered): PATHS lanes of W bits, path p in lane p
    lightest_gbps       minimum path load (W bits)
    busiest_gbps        maximum path load (W bits)
    flows_placed        flows placed, saturating (32 bits; its c_flows_placed)
    perfect_placements  flows placed onto an empty path, saturating (32 bits; its c_perfect_placements)
    sticky_preserved    the selector's claim that no flow is ever moved
    """

    def __init__(self, paths=1):
        self.load_aware_enable = bit()
        self.chosen_path = vec(8)
        self.path_load_gbps = vec(paths * W)
        self.lightest_gbps = vec(W)
        self.busiest_gbps = vec(W)
        self.flows_placed = vec(32)
        self.perfect_placements = vec(32)
        self.sticky_preserved = bit()


class Striping(Interface):
    """The striping controller's input and verdicts (`striping`; properties E1-E5).

    stripe_gbps             the connections' rates it sums: MEMBERS x STRIPES lanes of W bits,
                            stripe s of member m in lane m*STRIPES + s
    member_gbps             each member's rate, the sum of its stripes (MEMBERS lanes of W bits)
    collective_gbps         the minimum over the members (W bits)
    stripe_bytes            bytes per stripe of the current chunk (32 bits)
    reorder_depth_bytes     stripe_bytes x (STRIPES - 1): one stripe lagging (32 bits)
    reassembly_required     STRIPES > 1
    connections_total       MEMBERS x STRIPES (16 bits)
    """

    def __init__(self, members=1, stripes=1):
        self.stripe_gbps = vec(members * stripes * W)
        self.member_gbps = vec(members * W)
        self.collective_gbps = vec(W)
        self.stripe_bytes = vec(32)
        self.reorder_depth_bytes = vec(32)
        self.reassembly_required = bit()
        self.connections_total = vec(16)


class TelemetryClaims(Interface):
    """The telemetry bank's snapshot and what it registers (`telemetry`; properties F1-F4; its
    claim of the job's rate is the fabric's JobRateClaim, `job_rate`).

    snapshot            in: the bank captures its inputs this cycle
    job_min_valid       the imported job-wide minimum is complete (its i_job_min_valid)
    local_min_gbps      this leaf's minimum as captured (W bits; o_local_min_gbps)
    rate_claim_valid    not LOCAL_ONLY: a rate figure may be called the job's (o_rate_claim_valid)
    caveats             o_caveats (4 bits; bit 1 PINNED: 2 x unchanged > samples)
    """

    def __init__(self):
        self.snapshot = bit()
        self.job_min_valid = bit()
        self.local_min_gbps = vec(W)
        self.rate_claim_valid = bit()
        self.caveats = vec(4)


class StallCost(Interface):
    """The stall accountant's price of the collective (`stall`; property F5).

    lost_ms_per_collective  milliseconds lost per collective (32 bits)
    accel_seconds_lost      accelerator-seconds lost per collective (32 bits)
    """

    def __init__(self):
        self.lost_ms_per_collective = vec(32)
        self.accel_seconds_lost = vec(32)
