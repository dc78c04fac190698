"""ring_step_engine: paces a ring all-reduce's steps by its links' rates.

A ring is a chain: in every step each ring link moves one chunk, and step s+1
cannot start anywhere until step s has finished everywhere.  Here each link
moves CHUNK units per step at its rate (one unit = 1 Gb/s for one clock
cycle), all links start together, a link that has delivered its chunk waits,
and the step ends in the cycle the SLOWEST link delivers its last unit.  So a
step lasts

    T = ceil(CHUNK / min over links of rate)  cycles

and every link faster than the slowest spends T - ceil(CHUNK / its rate)
cycles of every step waiting (Section 6's "the fast participants idle, and
the idle time is exactly the imbalance").  step_tick is what
ring_allreduce_model counts and what the tracker samples.

Ports (the lane width is len(link_gbps) // MEMBERS; other widths from the signals):
    clk, rst            clock; synchronous reset (ResetSignal)
    start               a collective starts (clears every link's progress)
    running             the ring model's running flag: links move only while it is set
    link_gbps           MEMBERS lanes of LANE bits: each ring link's rate
    step_tick (out)     combinational: running, and in this cycle every link completes
                        its chunk (the step ends at the coming edge); 0 while not
                        running, which is also its power-up value
    step_cycles (out)   cycles the last completed step took (registered; saturating)
    c_step_wait (out)   link-cycles spent waiting for the slowest link since the last
                        start: in every running cycle, each link that delivered its
                        chunk in an earlier cycle of the step adds one (registered;
                        saturating); per step, the sum over links of T - ceil(CHUNK/rate)
    c_run_cycles (out)  cycles spent running since the last start (saturating)

Parameters:
    MEMBERS   ring links (>= 1); the lane width is len(link_gbps) // MEMBERS
    CHUNK     units per link per step (>= 1): a link at r Gb/s needs ceil(CHUNK / r)
              cycles.  A link at rate 0 never delivers, so the ring stalls (as a
              dead link stalls a real ring).

Timing: `start` at edge e0 (the ring model sets running at e0); the step's
cycles are the cycles after e0; the step ending in cycle T (step_tick high
in it) is counted by the ring model at the edge closing cycle T, which also
starts the next step.  Steps are back to back: the j-th tick is in the j*T-th
cycle after e0 while the rates are constant.
"""
from myhdl import Signal, always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg


@block
def ring_step_engine(clk, rst, start, running, link_gbps, step_tick, step_cycles, c_step_wait,
                     c_run_cycles, MEMBERS=pkg.ACC_PER_LEAF, CHUNK=1000):
    name = "ring_step_engine"
    if not isinstance(MEMBERS, int) or MEMBERS < 1:
        raise ValueError(f"{name}: MEMBERS must be a positive integer, got {MEMBERS!r}")
    if not isinstance(CHUNK, int) or CHUNK < 1:
        raise ValueError(f"{name}: CHUNK must be a positive integer, got {CHUNK!r}")
    if len(link_gbps) % MEMBERS:
        raise ValueError(f"{name}: link_gbps is {len(link_gbps)} bits, not {MEMBERS} whole lanes")
    LANE = len(link_gbps) // MEMBERS
    BUS = len(link_gbps)
    PW = CHUNK.bit_length()                      # progress: 0 .. CHUNK
    SW = max(PW, LANE) + 1                       # progress + rate
    PBUS = MEMBERS * PW
    PTOP = PBUS - PW
    STEP_MAX = (1 << len(step_cycles)) - 1
    WAIT_MAX = (1 << len(c_step_wait)) - 1
    RUN_MAX = (1 << len(c_run_cycles)) - 1
    WW = len(c_step_wait) + MEMBERS.bit_length() + 1
    CYC_W = len(step_cycles) + 1

    progress = Signal(intbv(0)[PBUS:])           # units each link has delivered this step
    cycles = Signal(intbv(0)[CYC_W:])            # cycles of the step in progress

    @always_comb
    def complete():
        rates = intbv(0)[BUS:]
        prog = intbv(0)[PBUS:]
        r = intbv(0)[LANE:]
        s = intbv(0)[SW:]
        done = intbv(0)[1:]
        rates[:] = link_gbps
        prog[:] = progress
        done[:] = 1
        for m in range(MEMBERS):
            r[:] = rates[LANE:0]
            rates[:] = rates >> LANE
            s[:] = prog[PW:0]
            prog[:] = prog >> PW
            s[:] = s + r
            if s < CHUNK:
                done[:] = 0
        if running and done == 1:
            step_tick.next = 1
        else:
            step_tick.next = 0

    @always_seq(clk.posedge, reset=rst)
    def advance():
        rates = intbv(0)[BUS:]
        prog = intbv(0)[PBUS:]
        out = intbv(0)[PBUS:]
        r = intbv(0)[LANE:]
        s = intbv(0)[SW:]
        waiting = intbv(0)[WW:]
        w = intbv(0)[WW:]
        rates[:] = link_gbps
        prog[:] = progress
        out[:] = 0
        waiting[:] = 0
        for m in range(MEMBERS):
            r[:] = rates[LANE:0]
            rates[:] = rates >> LANE
            s[:] = prog[PW:0]
            prog[:] = prog >> PW
            if s >= CHUNK:
                waiting[:] = waiting + 1        # delivered earlier: waiting for the slowest
            s[:] = s + r
            if s > CHUNK:
                s[:] = CHUNK
            out[:] = (out >> PW) | (s[PW:0] << PTOP)
        if start:
            progress.next = 0
            cycles.next = 0
            c_run_cycles.next = 0
            c_step_wait.next = 0
        elif running:
            if c_run_cycles < RUN_MAX:
                c_run_cycles.next = c_run_cycles + 1
            w[:] = c_step_wait + waiting
            if w > WAIT_MAX:
                w[:] = WAIT_MAX
            c_step_wait.next = w
            if step_tick:
                progress.next = 0
                cycles.next = 0
                if cycles + 1 > STEP_MAX:
                    step_cycles.next = STEP_MAX
                else:
                    step_cycles.next = cycles + 1
            else:
                progress.next = out
                if cycles < STEP_MAX:
                    cycles.next = cycles + 1

    return complete, advance
