"""Phase barrier of a multi-die package: a phase of `phase_jobs` jobs ends when
all of them have retired; then every die waits `barrier_cycles` cycles
(synchronisation) before the next phase may dispatch.  The slowest die is the
phase clock.

The block gates job acceptance (`accept_open`): open while the current phase
still has jobs to dispatch and no barrier is running, so the next phase's jobs
wait for the release.  It also measures each phase in hardware:

    phase cycles  = stream cycles + barrier cycles
    stream cycles = first cycle a job of the phase is offered while acceptance
                    is open .. the cycle its last job retires, inclusive

(the same definition the resource-graph model uses: phase = stream + barrier).

Ports (widths from the signals):
    clk, rst          clock; synchronous active-high reset (ResetSignal)
    phase_jobs        jobs per phase (0: accept nothing)
    barrier_cycles    barrier length in cycles (0: release as the last job retires)
    s_job_offer       a job is offered to the package this cycle (starts a phase)
    dispatch_fire     a job was accepted this cycle
    retire_fire       a job retired this cycle
    accept_open       out: the package may accept a job this cycle (registered)
    barrier_active    out: the barrier is running
    phase_done        out: one-cycle pulse in the first cycle after a barrier
    phases_done       out: phases completed since reset (modbv, wraps)
    phase_cycles      out: last completed phase's stream + barrier cycles (saturating)
    stream_cycles     out: last completed phase's stream cycles (saturating; width of phase_cycles)
"""
from myhdl import Signal, always_seq, block, intbv, modbv

IDLE, STREAM, BARRIER = 0, 1, 2


@block
def phase_barrier(clk, rst, phase_jobs, barrier_cycles, s_job_offer, dispatch_fire, retire_fire,
                  accept_open, barrier_active, phase_done, phases_done, phase_cycles, stream_cycles):
    name = "phase_barrier"
    jw = len(phase_jobs)
    bw = len(barrier_cycles)
    cw = len(phase_cycles)
    if len(stream_cycles) != cw:
        raise ValueError(f"{name}: stream_cycles ({len(stream_cycles)}) must be as wide as phase_cycles ({cw})")
    if cw < bw + 1:
        raise ValueError(f"{name}: phase_cycles is {cw} bits; it must exceed barrier_cycles ({bw} bits)")
    CYC_MAX = (1 << cw) - 1
    pw = len(phases_done)

    state = Signal(intbv(IDLE)[2:])
    dispatched = Signal(intbv(0)[jw:])
    retired = Signal(intbv(0)[jw:])
    cyc = Signal(intbv(0)[cw:])            # cycles of the current phase so far
    left = Signal(intbv(0)[bw:])           # barrier cycles still to run

    @always_seq(clk.posedge, reset=rst)
    def run():
        nd = intbv(0)[jw + 1:]
        nr = intbv(0)[jw + 1:]
        nc = intbv(0)[cw + 1:]
        ns = intbv(0)[2:]
        pc = modbv(0)[pw:]
        finish = False          # the phase ends at this edge
        pc[:] = phases_done + 1
        nd[:] = dispatched
        nr[:] = retired
        ns[:] = state
        if dispatch_fire:
            nd[:] = dispatched + 1
        if retire_fire:
            nr[:] = retired + 1
        nc[:] = cyc + 1
        if nc > CYC_MAX:
            nc[:] = CYC_MAX
        phase_done.next = 0
        if state == IDLE:
            if s_job_offer and accept_open:
                ns[:] = STREAM
                cyc.next = 1
        elif state == STREAM:
            cyc.next = nc[cw:]
            if nr >= phase_jobs:
                stream_cycles.next = nc[cw:]
                if barrier_cycles == 0:
                    finish = True
                else:
                    ns[:] = BARRIER
                    left.next = barrier_cycles
        else:
            cyc.next = nc[cw:]
            left.next = left - 1
            finish = left == 1
        if finish:
            ns[:] = IDLE
            phase_cycles.next = nc[cw:]
            phase_done.next = 1
            phases_done.next = pc
            nd[:] = 0
            nr[:] = 0
        state.next = ns
        dispatched.next = nd[jw:]
        retired.next = nr[jw:]
        barrier_active.next = ns == BARRIER
        accept_open.next = ns != BARRIER and nd < phase_jobs

    return run
