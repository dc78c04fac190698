"""The accelerator package's buses (MyHDL interfaces, hdl/common/interface.py).

accelerator_package and the distributor's test harness (checked_work_distributor) take them
as ports.  Each converted port keeps the name it had as a flat signal: the bus's argument name
is the old prefix (`m_job`, `retire`, `fail`, ...) and its fields the rest, so the Verilog
top level, the test benches and the formal harnesses see the same names.  Widths are
arguments; the defaults are only what `Interface.field_names` builds.

The job stream offered to the distributor is an AxiStream (hdl/common/interface.py) without
tlast: `s_axis_job` = tdata (work units), tid (semantic job id), tvalid, tready.
"""
from hdl.common.interface import Interface, bit, vec


class RetryRequest(Interface):
    """A transport retry: re-send the live job in a job-table slot (`retry`).

    valid       a retry is requested
    slot        the job-table slot to re-send (SLOT_W bits)
    ready       out: the request is consumed this cycle (re-sent, or dropped: the slot is no longer live)
    """

    def __init__(self, slot_width=1):
        self.valid = bit()
        self.slot = vec(slot_width)
        self.ready = bit()


class Completion(Interface):
    """A completion naming one use of a job-table slot (`s_cmpl`, `s_late_cmpl`, `cmpl`); always accepted.

    valid       a completion arrives this cycle
    slot        the job-table slot it names (SLOT_W bits)
    gen         the generation of that slot's use it names (GEN_W bits)
    """

    def __init__(self, slot_width=1, gen_width=1):
        self.valid = bit()
        self.slot = vec(slot_width)
        self.gen = vec(gen_width)


class JobDispatch(Interface):
    """out: the dispatch bus, a job (new or retried) sent to a target (`m_job`).

    valid       a job is offered to `target` (with strobes=True)
    target      destination target (TGT_W bits, N_TGT <= 2**TGT_W)
    slot        its job-table slot (SLOT_W bits)
    gen         the generation of that slot's current use (GEN_W bits)
    tid         semantic job id (JOB_W bits, carried unchanged from s_axis_job_tid)
    work        work units (WORK_W bits)
    epoch       route epoch the job was dispatched under (EPOCH_W bits)
    retry       the offer is a transport retry of a live job (with strobes=True)

    The distributor's own port has the strobes; the package shows dispatch_fire and
    retry_fire instead (its dies take every offer they are sent).
    """

    def __init__(self, tgt_width=1, slot_width=1, gen_width=1, tid_width=1, work_width=1, epoch_width=1,
                 strobes=True):
        if strobes:
            self.valid = bit()
        self.target = vec(tgt_width)
        self.slot = vec(slot_width)
        self.gen = vec(gen_width)
        self.tid = vec(tid_width)
        self.work = vec(work_width)
        self.epoch = vec(epoch_width)
        if strobes:
            self.retry = bit()


class Retirement(Interface):
    """out: a completion retired a live job (`retire`).

    fire        a job is retired this cycle
    target      the target it ran on (TGT_W bits)
    work        its work units (WORK_W bits; only with work_width given)
    tid         its semantic job id (JOB_W bits)
    """

    def __init__(self, tgt_width=1, tid_width=1, work_width=None):
        self.fire = bit()
        self.target = vec(tgt_width)
        if work_width is not None:
            self.work = vec(work_width)
        self.tid = vec(tid_width)

    @classmethod
    def field_names(cls):
        return tuple(vars(cls(work_width=1)))


class JobCheck(Interface):
    """A debug read port into the distributor's job table (`chk`).

    slot        in: the entry to read (SLOT_W bits)
    live        out: its live bit
    gen         out: its generation (GEN_W bits)
    epoch       out: its route epoch (EPOCH_W bits)
    """

    def __init__(self, slot_width=1, gen_width=1, epoch_width=1):
        self.slot = vec(slot_width)
        self.live = bit()
        self.gen = vec(gen_width)
        self.epoch = vec(epoch_width)


class JobTable(Interface):
    """out: the whole job table, as the package assertion monitor reads it (`job`).

    live        every entry's live bit (N_JOB bits, slot j in bit j)
    gen         every entry's generation, packed N_JOB x GEN_W
    epoch       every entry's route epoch, packed N_JOB x EPOCH_W
    """

    def __init__(self, n_job=2, gen_width=1, epoch_width=1):
        self.live = vec(n_job)
        self.gen = vec(n_job * gen_width)
        self.epoch = vec(n_job * epoch_width)


class PackageFailures(Interface):
    """out: the package assertions, one bit each, high in the cycle after a failing edge (`fail`);
    package_assertion_monitor states each.

    retire_once             a_retire_once: a job retired twice, or by another use of its slot
    retry_creates_no_job    a_retry_creates_no_job: a retry created a job
    route_epoch_stable      a_route_epoch_stable: a live job's route epoch changed
    no_dispatch_to_disabled  a_no_dispatch_to_disabled: work sent to a disabled target
    bounded_imbalance       a_bounded_imbalance: no target degraded, outstanding work too uneven
    work_conserved          a_work_conserved: accepted - completed != outstanding work
    """

    def __init__(self):
        self.retire_once = bit()
        self.retry_creates_no_job = bit()
        self.route_epoch_stable = bit()
        self.no_dispatch_to_disabled = bit()
        self.bounded_imbalance = bit()
        self.work_conserved = bit()

    def bits(self):
        """The six bits in the monitor's port order."""
        return [s for _, s in self.fields()]


class SharedResource(Interface):
    """A bandwidth the dies share (`hbm`, `d2d`).

    rate        in: its service, units per cycle in 2**-RATE_FRAC (DRATE_W bits)
    sat_cyc     out: cycles in which it ran out (the dies wanted more than `rate`)
    """

    def __init__(self, rate_width=1, count_width=1):
        self.rate = vec(rate_width)
        self.sat_cyc = vec(count_width)


class DieStatus(Interface):
    """The compute dies, one lane per die (`die`; die t in the lane starting at bit t x width).

    rate        in: each die's compute rate, packed N_TGT x DRATE_W (0: a hung die)
    busy        out: the die holds a job (N_TGT bits)
    stall       out: the die is held back downstream (N_TGT bits)
    """

    def __init__(self, n_tgt=1, rate_width=1):
        self.rate = vec(n_tgt * rate_width)
        self.busy = vec(n_tgt)
        self.stall = vec(n_tgt)
