"""collective_fabric's buses (MyHDL interfaces, hdl/common/interface.py).

Each converted port keeps the name it had as a flat signal: the bus's argument name is the
old prefix (`s_flow`, `ring`, `step`, ...) and its fields the rest, so the Verilog top level,
the property benches and the formal target see the same names.  The fabric's other ports
(one signal each, no shared prefix) stay plain.  Widths are arguments; W is the rate width
(16 bits in the fabric); the defaults are only what `Interface.field_names` builds.
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
