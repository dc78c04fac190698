"""collective_declaration_table: a leaf's record of what the collectives passing through it
have declared, and the placement decision each flow start gets from it.

Seed 000 §14: the collective library knows that "these N flows belong to one collective and
will all run for the job's duration"; the fabric otherwise has to infer it.  The library
sends a declaration word (spec.fabric.DECL_FIELDS; docs/fabric_declaration.md) when a phase
of a job starts and when it ends; this block keeps the active ones, one slot per job, and
judges every flow by the job id it carries:

* within its job's declaration (the job is declared and has started fewer flows than it
  declared): place it load-aware, against the DECLARED rate -- the rate a greedy placement
  needs and a flow's own header does not carry;
* beyond it (the job already started every flow it declared), or of a job with no active
  declaration: place it by its hash, against the rate the flow itself claims (flow_gbps,
  often 0).  Greedy least-loaded placement is the right answer for long-lived, equal,
  simultaneous flows -- a declared collective -- and not for traffic nobody described.

It also publishes what the declarations add up to (declared_load_gbps: the sum of flows x
rate over the active jobs, what the selector's path loads should reach once every declared
flow is placed) and counts flows within, beyond and without a declaration.

Timing: a declaration takes effect at the rising edge that samples it (the decision outputs
show it from the next cycle); a flow start in the same cycle is judged against the table
before that edge.  A START for a job that is already active re-declares it in its slot and
restarts its flow count at zero; an END frees the slot.  A word is rejected -- the table
unchanged, decl_error set -- if its version is not DECL_VERSION, its op is neither START nor
END, its kind is reserved, a START declares no flow, a zero rate or fewer than 2
participants, a START finds no free slot, or an END names a job that is not active.

Ports (W = len(place_gbps); widths from the signals):
    clk, rst                clock; synchronous reset (ResetSignal)
    decl_valid              a declaration word arrives this cycle
    decl_word               the word: len(decl_word) == DECL_BITS (104)
    flow_start              a flow starts this cycle (counted against its job at the edge)
    flow_job                the job id the flow carries               (DECL_WIDTHS["job"] bits)
    flow_gbps               the rate the flow itself claims, 0 if none         (W bits)
    place_gbps (out)        the rate to place it against: its job's declared rate
                            within the declaration, else flow_gbps             (W bits)
    place_load_aware (out)  place it load-aware (within its job's declaration); else by hash
    flow_declared (out)     its job has an active declaration
    over_declaration (out)  its job has already started every flow it declared
    jobs_active (out)       active declarations (registered); must hold JOBS
    declared_load_gbps (out) sum over active jobs of flows x rate, saturating (registered)
    c_declared_flows (out)  flow starts within a declaration (saturating)
    c_over_declaration (out) flow starts beyond their job's declaration (saturating)
    c_undeclared_flows (out) flow starts of a job with no active declaration (saturating)
    decl_error (out)        sticky: a declaration word was rejected

Parameters:
    JOBS        slots: jobs declared at once at this leaf (1..64)

golden.fabric.declaration.DeclarationTableModel is the bit-exact reference.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg
from spec.fabric import (DECL_BITS, DECL_KIND_TREE, DECL_OFFSETS, DECL_OP_END, DECL_OP_START, DECL_VERSION,
                         DECL_WIDTHS)


@block
def collective_declaration_table(clk, rst, decl_valid, decl_word, flow_start, flow_job, flow_gbps, place_gbps,
                                 place_load_aware, flow_declared, over_declaration, jobs_active,
                                 declared_load_gbps, c_declared_flows, c_over_declaration, c_undeclared_flows,
                                 decl_error, JOBS=4):
    name = "collective_declaration_table"
    if not isinstance(JOBS, int) or not 1 <= JOBS <= 64:
        raise ValueError(f"{name}: JOBS must be an integer in 1..64, got {JOBS!r}")
    W = len(place_gbps)
    JW, FW, RW, PW = (DECL_WIDTHS[f] for f in ("job", "flows", "rate_gbps", "participants"))
    pkg.require_width(decl_word, DECL_BITS, name, "decl_word")
    pkg.require_width(flow_job, JW, name, "flow_job")
    pkg.require_width(flow_gbps, W, name, "flow_gbps")
    pkg.require_width(place_gbps, RW, name, "place_gbps", at_least=True)   # a declared rate must fit
    if (1 << len(jobs_active)) <= JOBS:
        raise ValueError(f"{name}: jobs_active is {len(jobs_active)} bits, too narrow to count {JOBS} jobs")
    for port, sig in (("decl_valid", decl_valid), ("flow_start", flow_start), ("place_load_aware", place_load_aware),
                      ("flow_declared", flow_declared), ("over_declaration", over_declaration),
                      ("decl_error", decl_error)):
        pkg.require_width(sig, 1, name, port)

    # the word's fields: [lo, hi) bit ranges from spec.fabric
    def field(f):
        return DECL_OFFSETS[f], DECL_OFFSETS[f] + DECL_WIDTHS[f]
    VER_LO, VER_HI = field("version")
    OP_LO, OP_HI = field("op")
    KIND_LO, KIND_HI = field("kind")
    JOB_LO, JOB_HI = field("job")
    PART_LO, PART_HI = field("participants")
    FLOWS_LO, FLOWS_HI = field("flows")
    RATE_LO, RATE_HI = field("rate_gbps")
    LW = FW + RW                                    # flows x rate of one job
    STARTED_MAX = (1 << FW) - 1
    SUM_W = LW + JOBS.bit_length()                  # the sum over every slot, before saturation
    LOAD_MAX = (1 << len(declared_load_gbps)) - 1
    DECLARED_MAX = (1 << len(c_declared_flows)) - 1
    OVER_MAX = (1 << len(c_over_declaration)) - 1
    UNDECLARED_MAX = (1 << len(c_undeclared_flows)) - 1
    IDX_W = max(1, (JOBS - 1).bit_length())
    JBUS, RBUS, FBUS, LBUS = JOBS * JW, JOBS * RW, JOBS * FW, JOBS * LW
    JTOP, RTOP, FTOP, LTOP = JBUS - JW, RBUS - RW, FBUS - FW, LBUS - LW

    # the table, one lane per slot: active, job id, declared rate, declared flows, flows
    # started in this phase, and flows x rate (computed once, when declared)
    t_active = Signal(intbv(0)[JOBS:])
    t_job = Signal(intbv(0)[JBUS:])
    t_rate = Signal(intbv(0)[RBUS:])
    t_flows = Signal(intbv(0)[FBUS:])
    t_started = Signal(intbv(0)[FBUS:])
    t_load = Signal(intbv(0)[LBUS:])
    # the flow inputs' job: found, in which slot, beyond its declaration
    hit = Signal(bool(0))
    hit_slot = Signal(intbv(0)[IDX_W:])
    hit_over = Signal(bool(0))

    @always_comb
    def judge():
        jobs_in = intbv(0)[JBUS:]
        rates_in = intbv(0)[RBUS:]
        flows_in = intbv(0)[FBUS:]
        started_in = intbv(0)[FBUS:]
        slot = intbv(0)[IDX_W:]
        rate = intbv(0)[RW:]
        jobs_in[:] = t_job
        rates_in[:] = t_rate
        flows_in[:] = t_flows
        started_in[:] = t_started
        found = False
        over = False
        slot[:] = 0
        rate[:] = 0
        for i in range(JOBS):
            # the lowest slot holding the job (a job is never in two: START re-uses its slot)
            if not found and t_active[i] and jobs_in[JW:0] == flow_job:
                found = True
                slot[:] = i
                rate[:] = rates_in[RW:0]
                if started_in[FW:0] >= flows_in[FW:0]:
                    over = True
            jobs_in[:] = jobs_in >> JW
            rates_in[:] = rates_in >> RW
            flows_in[:] = flows_in >> FW
            started_in[:] = started_in >> FW
        hit.next = found
        hit_slot.next = slot
        hit_over.next = over
        flow_declared.next = found
        over_declaration.next = found and over
        if found and not over:
            place_load_aware.next = 1
            place_gbps.next = rate
        else:
            place_load_aware.next = 0
            place_gbps.next = flow_gbps

    @always_seq(clk.posedge, reset=rst)
    def keep():
        ver = intbv(0)[VER_HI - VER_LO:]
        op = intbv(0)[OP_HI - OP_LO:]
        kind = intbv(0)[KIND_HI - KIND_LO:]
        d_job = intbv(0)[JW:]
        d_parts = intbv(0)[PW:]
        d_flows = intbv(0)[FW:]
        d_rate = intbv(0)[RW:]
        d_load = intbv(0)[LW:]
        same_i = intbv(0)[IDX_W:]
        free_i = intbv(0)[IDX_W:]
        target = intbv(0)[IDX_W:]
        jobs_in = intbv(0)[JBUS:]
        rates_in = intbv(0)[RBUS:]
        flows_in = intbv(0)[FBUS:]
        started_in = intbv(0)[FBUS:]
        loads_in = intbv(0)[LBUS:]
        active = intbv(0)[JOBS:]
        jobs_out = intbv(0)[JBUS:]
        rates_out = intbv(0)[RBUS:]
        flows_out = intbv(0)[FBUS:]
        started_out = intbv(0)[FBUS:]
        loads_out = intbv(0)[LBUS:]
        j = intbv(0)[JBUS:]
        r = intbv(0)[RBUS:]
        f = intbv(0)[FBUS:]
        s = intbv(0)[FBUS:]
        ld = intbv(0)[LBUS:]
        total = intbv(0)[SUM_W:]
        count = intbv(0)[IDX_W + 2:]
        ver[:] = decl_word[VER_HI:VER_LO]
        op[:] = decl_word[OP_HI:OP_LO]
        kind[:] = decl_word[KIND_HI:KIND_LO]
        d_job[:] = decl_word[JOB_HI:JOB_LO]
        d_parts[:] = decl_word[PART_HI:PART_LO]
        d_flows[:] = decl_word[FLOWS_HI:FLOWS_LO]
        d_rate[:] = decl_word[RATE_HI:RATE_LO]
        d_load[:] = d_flows * d_rate
        ok = False
        if ver == DECL_VERSION and kind <= DECL_KIND_TREE:
            if op == DECL_OP_END:
                ok = True
            elif op == DECL_OP_START and d_flows != 0 and d_rate != 0 and d_parts >= 2:
                ok = True
        # where the word goes: the job's own slot, else the lowest free one
        jobs_in[:] = t_job
        same = False
        same_i[:] = 0
        free = False
        free_i[:] = 0
        for i in range(JOBS):
            if t_active[i]:
                if not same and jobs_in[JW:0] == d_job:
                    same = True
                    same_i[:] = i
            elif not free:
                free = True
                free_i[:] = i
            jobs_in[:] = jobs_in >> JW
        if same:
            target[:] = same_i
        else:
            target[:] = free_i
        if decl_valid:
            if not ok or (op == DECL_OP_START and not same and not free) or (op == DECL_OP_END and not same):
                decl_error.next = 1
        # every slot: a flow start counts against its job, then the word (if accepted) lands
        jobs_in[:] = t_job
        rates_in[:] = t_rate
        flows_in[:] = t_flows
        started_in[:] = t_started
        loads_in[:] = t_load
        active[:] = t_active
        jobs_out[:] = 0
        rates_out[:] = 0
        flows_out[:] = 0
        started_out[:] = 0
        loads_out[:] = 0
        total[:] = 0
        count[:] = 0
        for i in range(JOBS):
            j[:] = jobs_in[JW:0]
            r[:] = rates_in[RW:0]
            f[:] = flows_in[FW:0]
            s[:] = started_in[FW:0]
            ld[:] = loads_in[LW:0]
            jobs_in[:] = jobs_in >> JW
            rates_in[:] = rates_in >> RW
            flows_in[:] = flows_in >> FW
            started_in[:] = started_in >> FW
            loads_in[:] = loads_in >> LW
            if flow_start and hit and hit_slot == i and s < STARTED_MAX:
                s[:] = s + 1
            if decl_valid and ok:
                if op == DECL_OP_START and (same or free) and target == i:
                    active[i] = 1
                    j[:] = d_job
                    r[:] = d_rate
                    f[:] = d_flows
                    s[:] = 0
                    ld[:] = d_load
                elif op == DECL_OP_END and same and same_i == i:
                    active[i] = 0
            if active[i]:
                total[:] = total + ld
                count[:] = count + 1
            jobs_out[:] = (jobs_out >> JW) | (j << JTOP)
            rates_out[:] = (rates_out >> RW) | (r << RTOP)
            flows_out[:] = (flows_out >> FW) | (f << FTOP)
            started_out[:] = (started_out >> FW) | (s << FTOP)
            loads_out[:] = (loads_out >> LW) | (ld << LTOP)
        t_active.next = active
        t_job.next = jobs_out
        t_rate.next = rates_out
        t_flows.next = flows_out
        t_started.next = started_out
        t_load.next = loads_out
        jobs_active.next = count
        if total > LOAD_MAX:
            declared_load_gbps.next = LOAD_MAX
        else:
            declared_load_gbps.next = total
        if flow_start:
            if not hit:
                if c_undeclared_flows < UNDECLARED_MAX:
                    c_undeclared_flows.next = c_undeclared_flows + 1
            elif hit_over:
                if c_over_declaration < OVER_MAX:
                    c_over_declaration.next = c_over_declaration + 1
            elif c_declared_flows < DECLARED_MAX:
                c_declared_flows.next = c_declared_flows + 1

    return judge, keep
