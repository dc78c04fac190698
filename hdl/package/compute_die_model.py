"""Behavioural model of one compute die as a distributor target: a job queue
served at the rate the package's shared resources grant, up to the die's own
compute rate, one completion per finished job.

The die takes jobs addressed to it (s_job_valid and s_job_target == TARGET_ID)
into a FIFO.  Each cycle it asks for service (`want`, in 2**-RATE_FRAC work
units): its compute rate while a job is in service, no more than the head job
still needs when nothing is queued behind it.  The package's resource arbiter
answers with `grant` (<= want; tie it to `want` for a die with private,
unlimited memory), and the head job advances by the grant.  Service carries
between back-to-back jobs; a finished job offers a completion naming its slot
and generation.  rate == 0 models a hung die: it accepts jobs until its queue
is full and never finishes them.  Transport retries (s_job_retry) of a job it
already holds are dropped: they are not new work.

`stall` reports a cycle in which the die holds work and something downstream of
its compute held it back: a grant below what its compute would use (HBM or
die-to-die bandwidth, or its own link), or a finished job whose completion
cannot be handed over because the previous one has not been taken (one
completion register: the die keeps computing while one completion waits).  A die that is merely slow (a low `rate`) does not
stall: it is busy computing.  This is the discriminator the service-rate
estimator counts (stall_cyc).

Ports (widths from the signals):
    clk, rst         clock; synchronous active-high reset (ResetSignal)
    s_job_valid      a job is offered on the shared dispatch bus
    s_job_target     its destination; the die takes it only if it equals TARGET_ID
    s_job_slot       job-table slot (SLOT_W bits)
    s_job_gen        generation of that slot's use (GEN_W bits)
    s_job_work       work units (WORK_W bits, > 0)
    s_job_retry      the offer is a transport retry (accepted and dropped)
    s_job_ready      out: this die can take a job this cycle (queue not full)
    m_cmpl_valid     out: a finished job's completion is offered
    m_cmpl_ready     the completion is taken
    m_cmpl_slot      out: slot of the finished job
    m_cmpl_gen       out: generation of the finished job
    rate             compute rate in 2**-RATE_FRAC work units per cycle
    want             out: service asked for this cycle (width of `rate`)
    grant            service granted this cycle (width of `rate`; a grant above
                     `want` is clamped to `want`)
    stall            out: holds work and was held back downstream this cycle
    busy             out: a job is queued or in service

Parameters:
    TARGET_ID    this die's index on the dispatch bus (0 <= TARGET_ID < 2**TGT_W)
    QUEUE_DEPTH  jobs the die can hold (power of two, >= 2)
    RATE_FRAC    fraction bits of `rate`, `want` and `grant` (>= 0)
"""
from myhdl import Signal, always_comb, always_seq, block, intbv, modbv


@block
def compute_die_model(clk, rst, s_job_valid, s_job_target, s_job_slot, s_job_gen, s_job_work, s_job_retry,
                      s_job_ready, m_cmpl_valid, m_cmpl_ready, m_cmpl_slot, m_cmpl_gen, rate, want, grant,
                      stall, busy, TARGET_ID=0, QUEUE_DEPTH=8, RATE_FRAC=4):
    name = "compute_die_model"
    tgt_w = len(s_job_target)
    if not isinstance(TARGET_ID, int) or not 0 <= TARGET_ID < (1 << tgt_w):
        raise ValueError(f"{name}: TARGET_ID={TARGET_ID!r} is not addressable by {tgt_w}-bit s_job_target")
    if not isinstance(QUEUE_DEPTH, int) or QUEUE_DEPTH < 2 or QUEUE_DEPTH & (QUEUE_DEPTH - 1):
        raise ValueError(f"{name}: QUEUE_DEPTH={QUEUE_DEPTH!r}; it must be a power of two >= 2")
    if not isinstance(RATE_FRAC, int) or RATE_FRAC < 0:
        raise ValueError(f"{name}: RATE_FRAC={RATE_FRAC!r}; it must be an integer >= 0")
    if len(m_cmpl_slot) != len(s_job_slot) or len(m_cmpl_gen) != len(s_job_gen):
        raise ValueError(f"{name}: m_cmpl_slot/m_cmpl_gen must match s_job_slot/s_job_gen widths")
    if len(want) != len(rate) or len(grant) != len(rate):
        raise ValueError(f"{name}: want ({len(want)}) and grant ({len(grant)}) must be as wide as rate "
                         f"({len(rate)})")
    slot_w, gen_w, work_w, rate_w = len(s_job_slot), len(s_job_gen), len(s_job_work), len(rate)
    ptr_w = QUEUE_DEPTH.bit_length()          # one extra bit tells full from empty
    idx_w = ptr_w - 1
    credit_w = max(work_w + RATE_FRAC, rate_w) + 2

    q_slot = [Signal(intbv(0)[slot_w:]) for _ in range(QUEUE_DEPTH)]
    q_gen = [Signal(intbv(0)[gen_w:]) for _ in range(QUEUE_DEPTH)]
    q_work = [Signal(intbv(0)[work_w:]) for _ in range(QUEUE_DEPTH)]
    wr_ptr = Signal(modbv(0)[ptr_w:])
    rd_ptr = Signal(modbv(0)[ptr_w:])
    credit = Signal(intbv(0)[credit_w:])     # service received by the head job so far
    done_valid = Signal(bool(0))
    done_slot = Signal(intbv(0)[slot_w:])
    done_gen = Signal(intbv(0)[gen_w:])
    space = Signal(bool(0))
    held = Signal(bool(0))                   # work queued, completion port blocked
    blocked = Signal(bool(0))                # a finished job's completion is not taken this cycle
    want_i = Signal(intbv(0)[rate_w:])

    @always_comb
    def status():
        diff = modbv(0)[ptr_w:]
        diff[:] = wr_ptr - rd_ptr
        # rst is read so this is evaluated again at reset release (no reliance on time 0).
        space.next = diff != QUEUE_DEPTH and not rst
        busy.next = diff != 0 or done_valid
        m_cmpl_valid.next = done_valid
        m_cmpl_slot.next = done_slot
        m_cmpl_gen.next = done_gen

    @always_comb
    def ready_out():
        s_job_ready.next = space

    @always_comb
    def hand_over():
        blocked.next = done_valid and not m_cmpl_ready

    @always_comb
    def ask():
        # Service wanted: the compute rate, capped by the head job's remaining need when
        # nothing behind it could use the surplus (it is the only job queued), or when a
        # finished job's completion is still waiting (the head job may finish, not hand over).
        need = intbv(0)[credit_w:]
        full = intbv(0)[credit_w:]
        head = intbv(0)[idx_w:]
        nx = modbv(0)[ptr_w:]
        w = intbv(0)[rate_w:]
        head[:] = rd_ptr[idx_w:]
        nx[:] = rd_ptr + 1
        full[:] = q_work[head] << RATE_FRAC
        need[:] = 0
        if full > credit:
            need[:] = full - credit
        w[:] = 0
        if rd_ptr != wr_ptr and not rst:
            if (nx == wr_ptr or blocked) and need < rate:
                w[:] = need[rate_w:]
            else:
                w[:] = rate
        want_i.next = w
        want.next = w
        # a finished job that cannot hand over its completion: the die waits
        held.next = rd_ptr != wr_ptr and blocked and need == 0 and not rst

    @always_comb
    def stall_out():
        stall.next = held or grant < want_i

    @always_seq(clk.posedge, reset=rst)
    def serve():
        need = intbv(0)[credit_w:]
        c = intbv(0)[credit_w:]
        g = intbv(0)[rate_w:]
        head = intbv(0)[idx_w:]
        tail = intbv(0)[idx_w:]
        rp = modbv(0)[ptr_w:]
        nx = modbv(0)[ptr_w:]
        rp[:] = rd_ptr
        nx[:] = rd_ptr + 1
        head[:] = rd_ptr[idx_w:]
        tail[:] = wr_ptr[idx_w:]
        if grant < want_i:
            g[:] = grant
        else:
            g[:] = want_i
        if s_job_valid and space and s_job_target == TARGET_ID and not s_job_retry:
            q_slot[tail].next = s_job_slot
            q_gen[tail].next = s_job_gen
            q_work[tail].next = s_job_work
            wr_ptr.next = wr_ptr + 1
        if done_valid and m_cmpl_ready:
            done_valid.next = 0
        if rp != wr_ptr:
            need[:] = q_work[head] << RATE_FRAC
            c[:] = credit + g
            # A finished job waits while the previous completion has not been taken
            # (its credit stays at the job's need: want is capped so it never exceeds it).
            if c >= need and not blocked:
                done_valid.next = 1
                done_slot.next = q_slot[head]
                done_gen.next = q_gen[head]
                rd_ptr.next = rd_ptr + 1
                c[:] = c - need              # surplus carries into the next job
                if nx == wr_ptr:
                    c[:] = 0                 # nothing queued behind: the surplus is idle time
            credit.next = c
        else:
            credit.next = 0

    return status, ready_out, hand_over, ask, stall_out, serve
