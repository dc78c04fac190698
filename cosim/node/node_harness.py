"""Run a Scenario through the PRISM node and check it with the scoreboard.

Back ends:
    myhdl             the MyHDL node simulated by MyHDL
    icarus            the converted node co-simulated cycle by cycle (MyHDL <-> vvp)
    batch-icarus      the converted node under native vvp, stimulus from files (iverilog -g2005)
    batch-icarus-2012 the same compiled as SystemVerilog (iverilog -g2012, cocotb's mode)
    batch-verilator   the same test bench and files, compiled by Verilator

Every back end sees the same stimulus (frames, start delays, pause patterns
drawn from the scenario's seed) and reports the same things: the frames that
left each TX port with their cycles, the cycle at which every input frame's
last beat was accepted, the counters read at the end, and the cycles run.
"""
import bisect
import os
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from myhdl import ResetSignal, Signal, StopSimulation, block, delay, instance, intbv

from golden.node import protocol as P
from spec import frames as C

from cosim.sim import toolchain
from cosim.sim.axis import AxisFrame, AxisSink, AxisSource, pause_generator
from cosim.sim.batch import BatchDesign, ResetEvent, StreamStimulus
from cosim.node.dut import node_ports, node_signals  # noqa: F401 - node_signals: this module's callers import it here
from cosim.node.scoreboard import Mismatch, NodeScoreboard
from cosim.sim.tbutil import clock_gen, reset_pulse
from hdl.common.wiring import bundle
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY, RESPONSE_MARGIN

BACKENDS = ("myhdl", "icarus", "myhdl+icarus", "batch-icarus", "batch-icarus-2012", "batch-verilator")
RESET_CYCLES = 2
IDLE_STOP = 150            # quiet cycles (all input sent, node not busy, no output beat or valid) that end a run
BUSY_STOP = 4000           # quiet cycles that end a run although the node says it is busy (an operation
                           # waiting for contributions that never come); well above the longest internal
                           # stretch without an output beat (the ~600-cycle FP32_ARRIVAL drain)
COUNTER_HOLD = 2           # rising edges each counter_select is held while sweeping the counters: the
                           # value is read at the second, so a counter_value later than the one cycle
                           # docs/protocol.md promises reads the previous selection's


def counter_sweep_order():
    """The order the counters are read at the end of a run: by slot within a port's stride, so
    each selection past the last counter (which reads 0) follows a counter that is usually not
    0: a read that kept the previous selection's value shows."""
    return sorted(counter_names(), key=lambda sel: (sel % C.CTR_PORT_STRIDE, sel))


def counter_names():
    """counter_select index -> the golden model's counter name (per port P = 0, 1); every other
    selection of the 6-bit counter_select reads 0 (docs/protocol.md), named ("unused", index)."""
    names = {sel: (None, f"unused {sel}") for sel in range(1 << 6)}
    for p in range(2):
        base = C.CTR_PORT_STRIDE * p
        names[base + C.CTR_CONTROL] = (p, "control_accepted")
        names[base + C.CTR_ADMITTED] = (p, "data_accepted")
        for k, reason in enumerate(C.DROP_REASONS):
            names[base + C.CTR_DROP + k] = (p, f"dropped_{reason}")
        names[base + C.CTR_UNSUPPORTED] = (p, "unsupported")
        names[base + C.CTR_TRUNCATED] = (p, "truncated")
    names[C.CTR_RANGES] = (None, "ranges_completed")
    names[C.CTR_RESULTS] = (None, "results")
    names[C.CTR_RESPONSES] = (None, "responses")
    return names


@dataclass
class NodeRun:
    backend: str
    tx: Dict[int, List[AxisFrame]]
    rx: Dict[int, List[AxisFrame]]          # input frames, with the cycles their beats were accepted
    counters: Dict[tuple, int] = field(default_factory=dict)
    cycles: int = 0
    wall_seconds: float = 0.0
    resets: List[int] = field(default_factory=list)      # cycles at which mid-run resets rose
    busy_at_end: bool = False               # the node's `busy` output when the run ended
    truncated: Dict[int, int] = field(default_factory=dict)   # per receive port: frames a reset cut short
    rx_cut: Dict[int, List[int]] = field(default_factory=dict)  # per receive port: last beat cycle of each
    cut: Dict[int, List[AxisFrame]] = field(default_factory=dict)   # per transmit port: frames a reset cut
    max_cycles: int = 0                     # the run's cycle budget; a run that reached it never settled
    # (cycle, value) at each change of `busy`, as sampled at the edge (the batched back ends record
    # it; None: not recorded, and `busy` is then judged at the end of the run only)
    busy_changes: Optional[List[tuple]] = None
    # (cycle, what) for each link or `busy` found high at an edge right after one with rst high
    # (docs/protocol.md, "Reset and power-on"); None: not recorded (per-cycle back ends)
    reset_live: Optional[List[tuple]] = None

    def beats_in(self, port):
        return sum(len(f) for f in self.rx[port])


def pause_seeds(seed):
    return {"src": {p: seed * 8 + p for p in (0, 1)}, "sink": {p: seed * 8 + 4 + p for p in (0, 1)}}


def node_block(variant=None):
    """The node's MyHDL block; `variant` names a test-only variant in cosim/node/ (e.g. 'prism_node_fault')."""
    return toolchain.block_function(variant or "prism_node")


def run_node(scenario, backend="icarus", kulisch_w=KULISCH_WIDTH_DEFAULT, capacity=MAX_CAPACITY, max_cycles=200000, vcd=None,
             read_counters=True, variant=None, variant_params=None, dut=None, timeout=None):
    """Run the scenario; `variant`/`variant_params` select a test-only node variant, `dut` a
    Verilog design instead of the kit's node (cosim.node.dut.NodeDut; batched back ends only).
    timeout: wall-time limit of a batched simulator run, in seconds."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown back end {backend!r}; choose one of {', '.join(BACKENDS)}")
    params = dict(KULISCH_W=kulisch_w, CAPACITY=capacity, **(variant_params or {}))
    if backend.startswith("batch-"):
        return _run_batched(scenario, backend, params, max_cycles, vcd, read_counters, variant, dut, timeout)
    if dut is not None:
        raise ValueError(f"a Verilog design runs on the batched back ends (batch-icarus, batch-verilator), "
                         f"not {backend}")
    return _run_per_cycle(scenario, backend, params, max_cycles, vcd, read_counters, variant)


class NodeBench:
    """The node on a per-cycle back end (myhdl, icarus), an AXI-Stream source and sink on each port.

    Frames are queued with send(); run() simulates until a condition holds, then sweeps the
    counters.  run_node() drives a Scenario through it; tests build exchanges by hand with it.
    Pauses: a probability (or {port: probability}) per side, drawn from `seed` as the batched
    back ends draw them (pause_seeds)."""

    def __init__(self, backend="icarus", kulisch_w=KULISCH_WIDTH_DEFAULT, capacity=MAX_CAPACITY, src_pause=0.0, sink_pause=0.0, seed=1,
                 src_burst=1, sink_burst=1, variant=None, variant_params=None, sink_windows=None):
        self.backend = backend
        self.params = dict(KULISCH_W=kulisch_w, CAPACITY=capacity, **(variant_params or {}))
        self.variant = variant
        self.sig = sig = node_signals()
        self.clk, self.rst = sig["clk"], sig["rst"]
        seeds = pause_seeds(seed)
        per_port = lambda v, p: v.get(p, 0.0) if isinstance(v, dict) else v
        axis = lambda d, p: [sig[f"{d}_axis_{p}_{n}"] for n in ("tdata", "tvalid", "tready", "tlast")]
        self.src = [AxisSource(self.clk, *axis("s", p), rst=self.rst,
                               pause=pause_generator(per_port(src_pause, p), seeds["src"][p], src_burst))
                    for p in (0, 1)]
        self.sink = [AxisSink(self.clk, *axis("m", p), rst=self.rst,
                              pause=pause_generator(per_port(sink_pause, p), seeds["sink"][p], sink_burst,
                                                    window_draws((sink_windows or {}).get(p, ()))))
                     for p in (0, 1)]
        self.resets_done = [0]              # mid-run resets over (for frames that wait on one)
        for s in self.src:
            s.peers, s.resets_done = self.src, self.resets_done
        self.counters = {}                  # (port or None, golden counter name) -> value
        self.cycles = 0
        self.busy_at_end = False
        self.wall_seconds = 0.0

    def send(self, port, frame):
        """Queue a frame (an AxisFrame, a golden.node.protocol frame, or a list of beats) on RX `port`."""
        if not isinstance(frame, AxisFrame):
            frame = AxisFrame(frame.encode() if hasattr(frame, "encode") else list(frame))
        self.src[port].send(frame)

    def run(self, until, max_cycles=200000, read_counters=True, extra=(), vcd=None):
        """Run until `until(bench)` holds (asked after every rising edge) or for max_cycles, then
        read the counters (True: all of counter_names(); else the counter_select indices given).
        `extra`: factories of more test-bench blocks (a reset schedule, a mid-frame reset)."""
        names = counter_names()
        sweep = sorted(names) if read_counters is True else list(read_counters or ())
        factory = toolchain.select(node_block(self.variant), self.backend)
        sig, clk = self.sig, self.clk
        stopped = []

        @block
        def bench():
            dut = factory(**bundle(node_block(self.variant), sig), **self.params)

            @instance
            def supervise():
                for cycle in range(1, max_cycles + 1):
                    yield clk.posedge
                    self.cycles = cycle
                    if until(self):
                        break
                self.busy_at_end = bool(sig["busy"])    # signals are cleared when the run ends
                for sel in sweep:
                    yield clk.negedge
                    sig["counter_select"].next = sel
                    for _ in range(COUNTER_HOLD):
                        yield clk.posedge
                    self.counters[names[sel]] = int(sig["counter_value"])
                stopped.append(True)
                raise StopSimulation

            return (dut, clock_gen(clk), reset_pulse(clk, self.rst, RESET_CYCLES),
                    *[s.inst() for s in self.src], *[k.inst() for k in self.sink], supervise, *[make() for make in extra])

        t0 = time.perf_counter()
        try:
            with toolchain.waves(vcd):
                toolchain.run(bench(), backend=self.backend)
        except OSError:
            # MyHDL finalises a co-simulation once on StopSimulation and again in quit_sim()
            # (toolchain.run's finally): the second close fails harmlessly.
            if not stopped:
                raise
        self.wall_seconds = time.perf_counter() - t0
        return self

    def counter(self, name, port=0):
        """A counter read by the sweep, by its golden name; node-wide counters ignore `port`."""
        return self.counters[(None, name)] if (None, name) in self.counters else self.counters[(port, name)]

    def frames(self, port):
        """The frames TX `port` sent, decoded."""
        return [P.decode(f.beats) for f in self.sink[port].frames]

    def received(self, port):
        return len(self.sink[port].frames)


def _run_per_cycle(scenario, backend, params, max_cycles, vcd, read_counters, variant):
    extra_params = {k: v for k, v in params.items() if k not in ("KULISCH_W", "CAPACITY")}
    b = NodeBench(backend, params["KULISCH_W"], params["CAPACITY"], scenario.source_pause, scenario.sink_pause,
                  scenario.seed, scenario.source_burst, scenario.sink_burst, variant, extra_params,
                  scenario.sink_windows)
    sig, sources, sinks = b.sig, b.src, b.sink
    for p in (0, 1):
        for f in scenario.stream(p):
            sources[p].send(f)
    raised = []
    state = {"idle": 0, "quiet": 0}

    def until(bench):
        # the batched test bench's stop rule (cosim/sim/batch.py): every input sent, then quiet
        cycle = bench.cycles
        moving = any(sig[f"m_axis_{p}_tvalid"] and sig[f"m_axis_{p}_tready"] for p in (0, 1))
        done = all(sources[p].idle() for p in (0, 1)) and cycle > RESET_CYCLES + 1
        state["quiet"] = quiet = state["quiet"] + 1 if done and not moving else 0
        pending = any(sig[f"m_axis_{p}_tvalid"] for p in (0, 1))   # held behind a stalled sink
        state["idle"] = idle = state["idle"] + 1 if quiet and not sig["busy"] and not pending else 0
        return idle >= IDLE_STOP or quiet >= BUSY_STOP

    @block
    def mid_run_resets():
        @instance
        def schedule():
            # the batched test bench's schedule (cosim/sim/batch.py, ResetEvent), evaluated just after
            # each rising edge, once every monitor has counted that edge's beats
            clk, rst, cycle = sig["clk"], sig["rst"], 0
            events = [e if isinstance(e, ResetEvent) else ResetEvent("cycle", 0, int(e)) for e in scenario.resets]
            if all(e.source == "cycle" for e in events):
                events.sort(key=lambda e: e.delay)
            i, wait, left, held = 0, None, 0, False
            while True:
                yield clk.posedge
                cycle += 1
                yield delay(1)
                if cycle < RESET_CYCLES:        # the power-on reset
                    continue
                if held:
                    left -= 1
                    if left == 0:
                        rst.next = 0
                        held = False
                        b.resets_done[0] += 1
                    else:
                        continue
                if i < len(events) and wait is None:
                    e = events[i]
                    side, _, k = e.source.partition(" ")
                    if side == "cycle":
                        fire, start = cycle >= e.delay, 0
                    elif side == "in":
                        fire, start = sources[int(k)].frames_done() >= e.count, e.delay
                    else:
                        fire, start = sinks[int(k)].beats_received >= e.count, e.delay
                    if fire:
                        wait = start
                if wait is not None:
                    if wait > 0:
                        wait -= 1
                    else:
                        wait, i = None, i + 1
                        for src in sources:
                            src.abort()        # the link partners see the reset too
                        for snk in sinks:
                            snk.abort()
                        rst.next = 1
                        held, left = True, scenario.reset_hold
                        raised.append(cycle)
        return schedule

    b.run(until, max_cycles, read_counters=bool(read_counters), extra=[mid_run_resets], vcd=vcd)
    return NodeRun(backend, {p: sinks[p].frames for p in (0, 1)}, {p: sources[p].sent for p in (0, 1)},
                   b.counters, b.cycles, b.wall_seconds, raised, b.busy_at_end,
                   truncated={p: len(sources[p].aborted) for p in (0, 1)},
                   cut={p: sinks[p].cut for p in (0, 1)},
                   rx_cut={p: [f.cycles[-1] for f in sources[p].aborted] for p in (0, 1)}, max_cycles=max_cycles)


_designs = {}


def batch_design(simulator, kulisch_w=KULISCH_WIDTH_DEFAULT, capacity=MAX_CAPACITY, variant=None, **variant_params):
    """The node (or a variant) converted and compiled with the batched test bench, cached."""
    params = dict(KULISCH_W=kulisch_w, CAPACITY=capacity, **variant_params)
    key = (simulator, variant, tuple(sorted(params.items())), toolchain.hdl_source_digest(toolchain.block_module(variant or "prism_node").__name__),
           toolchain.rewriting())
    if key not in _designs:
        sig = node_signals()
        _designs[key] = BatchDesign(node_block(variant), **sig, **params,
                                    simulator=simulator, reset_cycles=RESET_CYCLES,
                                    counter_sweep=(counter_sweep_order(), COUNTER_HOLD))
    return _designs[key]


def dut_design(simulator, dut, kulisch_w):
    """A Verilog design (cosim.node.dut.NodeDut) with the batched test bench, cached; a design
    with a KULISCH_W parameter is built once per width."""
    width = kulisch_w if "KULISCH_W" in dut.parameters else dut.width
    key = ("dut", simulator, dut.sources, dut.top, dut.parameters, width, dut.capacity,
           tuple(os.path.getmtime(s) for s in dut.sources))
    if key not in _designs:
        _designs[key] = BatchDesign.from_verilog(dut.sources, dut.top, node_ports(), simulator=simulator,
                                                 reset_cycles=RESET_CYCLES,
                                                 counter_sweep=(counter_sweep_order(), COUNTER_HOLD),
                                                 instance_parameters=dut.instance_parameters(width))
    return _designs[key]


def _run_batched(scenario, backend, params, max_cycles, vcd, read_counters, variant, dut=None, timeout=None):
    extra = {k: v for k, v in params.items() if k not in ("KULISCH_W", "CAPACITY")}
    simulator = backend.split("-", 1)[1]
    if dut is not None:
        design = dut_design(simulator, dut, params["KULISCH_W"])
    else:
        design = batch_design(simulator, params["KULISCH_W"], params["CAPACITY"], variant, **extra)
    seeds = pause_seeds(scenario.seed)
    stim = {f"s_axis_{p}": StreamStimulus(scenario.stream(p),
                                          pause_generator(scenario.source_pause.get(p, 0.0), seeds["src"][p],
                                                          scenario.source_burst))
            for p in (0, 1)}
    sink = {f"m_axis_{p}": sink_pauses(scenario, p) for p in (0, 1)}
    res = design.run(stim, sink_pause=sink, max_cycles=max_cycles, idle_stop=IDLE_STOP, busy_stop=BUSY_STOP, vcd=vcd,
                     sweep_counters=read_counters, resets=scenario.resets, reset_hold=scenario.reset_hold,
                     plusargs=dut.plusargs if dut is not None else (), timeout=timeout)
    names = counter_names()
    rx, truncated, rx_cut = {}, {}, {}
    per_frame = design.input_frame_cycles(stim, res)
    for p in (0, 1):            # the last accepted beat before each abort marker
        rx_cut[p], prev = [], None
        for ev in res.input_beats.get(f"s_axis_{p}", []):
            if ev is None:
                rx_cut[p].append(prev)
            else:
                prev = ev[0]
    for p in (0, 1):
        frames = stim[f"s_axis_{p}"].frames
        rx[p] = []
        truncated[p] = 0
        for f, cyc in zip(frames, per_frame[f"s_axis_{p}"]):
            if cyc is not None:           # frames cut short by a reset never reached the node whole
                f.cycles = cyc
                rx[p].append(f)
            else:
                truncated[p] += 1
    counters = {names[k]: v for k, v in res.counters.items() if k in names}
    return NodeRun(backend, {p: res.frames[f"m_axis_{p}"] for p in (0, 1)}, rx, counters, res.cycles,
                   res.wall_seconds, list(res.resets), res.busy_at_end, truncated=truncated,
                   cut={p: res.cut_frames.get(f"m_axis_{p}", []) for p in (0, 1)}, rx_cut=rx_cut,
                   max_cycles=max_cycles, busy_changes=list(res.busy_changes), reset_live=list(res.reset_live))


def _counter_of(event):
    """The per-port counter a processed frame's outcome counts in."""
    if event["kind"] == "DATA":
        return "data_accepted" if event.get("verdict") == "admitted" else f"dropped_{event.get('verdict')}"
    if event["kind"] in ("STAGE", "COMMIT", "ABORT", "CONTROL"):
        return "control_accepted"
    return event["kind"]


def expected_counter(sb, run, port, name):
    """(lowest, highest) value counter `name` of `port` (None: node-wide) may hold after the run.

    Counters of events at the node's edge are exact: validation outcomes (the model, fed the
    frames in processing order), frames a reset cut (the input monitors), RESULT frames and
    responses sent (the output monitors: counted when taken on the wire).  `ranges_completed`
    counts an event inside the node: exact on a run without resets; after a reset, ranges
    admitted before it may or may not have been completed, so it lies between the ranges of
    the blocks whose RESULT frames were seen plus those of the last segment, and the model's
    count."""
    model = sb.model
    if name == "truncated":
        n = run.truncated.get(port, 0)
        return n, n
    if name == "results":
        n = sum(1 for p in run.tx for f in run.tx[p] if P.get_field(f.beats[0], "class") == P.CLASS_RESULT)
        return n, n
    if name == "responses":
        n = sum(1 for f in run.tx.get(0, []) if P.get_field(f.beats[0], "class") == P.CLASS_CONTROL)
        return n, n
    if name.startswith("unused "):
        return 0, 0
    if port is not None:
        n = model.counters[port][name]
        if run.resets:
            # frames a reset found held behind a COMMIT that waited for a drain: not counted
            maybe = sum(1 for ev in sb.possibly_held_at_reset(run.tx)
                        if ev["port"] == port and _counter_of(ev) == name)
            return n - maybe, n
        return n, n
    n = model.node_counters[name]
    if name == "ranges_completed" and run.resets:
        return sb.ranges_surely_completed(run.tx), n
    return n, n


def window_draws(windows):
    """Stall windows given in edges [first, end) as pause draws: the test benches draw the pause
    for edge c at draw c - 2 (sink_ready)."""
    return tuple((first - 2, end - 2) for first, end in windows)


def sink_pauses(scenario, port):
    """The pause pattern of TX `port`'s sink: the scenario's random stalls, drawn from its seed as
    every test bench draws them, and its fixed stall windows (Scenario.sink_windows)."""
    return pause_generator(scenario.sink_pause.get(port, 0.0), pause_seeds(scenario.seed)["sink"][port],
                           scenario.sink_burst, window_draws(scenario.sink_windows.get(port, ())))


def sink_ready(scenario, run):
    """ready(port, cycle): whether the test bench's sink on TX `port` took beats at that rising
    edge (its pause pattern, drawn from the scenario's seed as the test benches draw it)."""
    from itertools import islice
    pauses = {p: list(islice(sink_pauses(scenario, p), run.cycles + 2)) for p in (0, 1)}

    def ready(port, cycle):
        return cycle >= 2 and not (cycle - 2 < len(pauses[port]) and pauses[port][cycle - 2])
    return ready


def receive_stalls(scenario, run):
    """Mismatches for cycles in which the node held a receive port's tready low inside a frame
    while the source offered its next beat (docs/protocol.md, "Ports": once a frame's first beat
    is taken, the node takes each later beat in the cycle it is offered).  Which cycles the
    source offered nothing is known from the scenario: the test bench draws its pauses from the
    scenario's seed (pause_seeds), one draw per cycle, the draw for cycle c made at the falling
    edge two edges before."""
    from itertools import islice
    from cosim.node.scoreboard import Mismatch
    from cosim.sim.axis import pause_generator
    seeds = pause_seeds(scenario.seed)
    out = []
    for p in (0, 1):
        frames = [f for f in run.rx.get(p, []) if f.cycles and len(f.cycles) > 1]
        if not frames:
            continue
        last = max(f.cycles[-1] for f in frames)
        pause = list(islice(pause_generator(scenario.source_pause.get(p, 0.0), seeds["src"][p],
                                            scenario.source_burst), last))
        for f in frames:
            held = [c for a, b in zip(f.cycles, f.cycles[1:]) for c in range(a + 1, b) if c < 2 or not pause[c - 2]]
            if held:
                out.append(Mismatch("rx-stall", p, f"receive port {p} held tready low inside a frame at cycle "
                                                   f"{held[0]} ({len(held)} cycles in all) while its next beat was "
                                                   f"offered (frame header {f.beats[0]:#x}, beats at cycles "
                                                   f"{f.cycles[0]}..{f.cycles[-1]})", cycle=held[0]))
    return out


def transmit_stalls(scenario, run):
    """Mismatches for cycles in which the node offered nothing on a transmit port inside a RESULT
    frame of a Reduce (a frame sent on one port only) while that port's sink was ready: the
    sender forms a block's frame from its stores at one beat per cycle once the block is
    complete, and the egress reloads a port's register in the cycle its beat is taken, so a
    frame leaves at line rate whatever stalls came before (docs/protocol.md, "RESULT").  An
    AllReduce frame moves on both ports together, so a stall on one port holds the other: not
    judged here."""
    ready = sink_ready(scenario, run)

    key = _frame_key
    keys = {p: {key(f) for f in run.tx.get(p, []) + list(run.cut.get(p, [])) if f.beats}
            for p in (0, 1)}         # a frame a reset cut on the other port was sent on both
    out = []
    for p in (0, 1):
        for f in run.tx.get(p, []):
            if not f.cycles or len(f.cycles) < 2 or P.get_field(f.beats[0], "class") != P.CLASS_RESULT:
                continue
            if key(f) in keys[1 - p]:
                continue
            held = [c for a, b in zip(f.cycles, f.cycles[1:]) for c in range(a + 1, b) if ready(p, c)]
            if held:
                out.append(Mismatch("tx-stall", p, f"TX{p} offered no beat inside a RESULT frame at cycle {held[0]} "
                                                   f"({len(held)} cycles in all) while its sink was ready (op "
                                                   f"{P.get_field(f.beats[0], 'op_id')} offset "
                                                   f"{P.get_field(f.beats[0], 'offset')}, beats at cycles "
                                                   f"{f.cycles[0]}..{f.cycles[-1]})", cycle=held[0]))
                break
    return out


RESPONSE_READY = 3          # edges from a request's last beat until its response surely waits at TX port 0
                            # when no drain holds it (docs/protocol.md, "When": decided at T + 1, offered
                            # after T + 2, so taken at T + 3 at the earliest; the bound keeps an edge spare)


def _grant_edge_bound(ready, prev_last, start):
    """The earliest edge at which TX0's register could have been loaded with a frame's first beat,
    taken at edge `start`, after the previous frame's last beat left at edge `prev_last`: the
    register reloads in the cycle its beat is taken (not before `prev_last`), and a beat loaded
    before an edge at which the sink was ready would have been taken there (so not before the
    last such edge ahead of `start`; ready None: the sink's pattern is not known, and only the
    first bound holds)."""
    for edge in range(start - 1, prev_last, -1) if ready is not None else ():
        if ready(0, edge):
            return edge
    return prev_last


def tx0_arbitration(sb, run, ready=None):
    """TX port 0 alternates between CONTROL responses and RESULT frames when both wait
    (docs/protocol.md, "RESULT"): a RESULT frame that follows another on TX0 must not have been
    granted while a response waited.  Its grant came at an edge no earlier than
    _grant_edge_bound (the previous frame's last beat, and the sink's ready edges, which the
    test bench's pause pattern gives); a response surely waited from RESPONSE_READY edges after
    its request's last beat (unless a drain held the request) until it left.  So a response
    whose wait began by that bound and that left after the second frame was passed over.
    Judged by the port's own edges, not by when the frames were taken: a stalled sink holds a
    beat granted long before it leaves.  ready(port, edge): the sink's pattern (sink_ready), or
    None where it is not known (a cocotb bench's own sinks).  Checked between resets (a reset
    empties the response queue)."""
    from cosim.node.scoreboard import Mismatch
    held = sb.held_until(run.tx)
    bounds = [-1] + sorted(run.resets) + [float("inf")]
    requests = [ev for ev in sb.events if ev["kind"] in ("STAGE", "COMMIT", "ABORT", "CONTROL")]
    tx0 = [f for f in run.tx.get(0, []) if f.cycles]
    is_result = [P.get_field(f.beats[0], "class") == P.CLASS_RESULT for f in tx0]
    # RESULT frames back to back on TX0, the only places the round robin can have passed a response over
    result_pairs = [(a, b) for a, b, ra, rb in zip(tx0, tx0[1:], is_result, is_result[1:]) if ra and rb]
    for lo, hi in zip(bounds, bounds[1:]):
        reqs = [ev for ev in requests if lo < ev["cycle"] < hi]
        resps = [f for f, res in zip(tx0, is_result) if not res and lo < f.cycles[0] <= hi]
        waits = [(ev["cycle"] + RESPONSE_READY, ev["cycle"], resp.cycles[0])
                 for ev, resp in zip(reqs, resps) if id(ev) not in held]
        if not waits:
            continue
        for a, b in result_pairs:
            if not (lo < a.cycles[0] and b.cycles[-1] < hi):
                continue
            grant = _grant_edge_bound(ready, a.cycles[-1], b.cycles[0])
            for waiting, request, left in waits:
                if waiting <= grant and left > b.cycles[0]:
                    return [Mismatch("tx-arbitration", 0, f"a CONTROL response waited on TX0 from edge {waiting} "
                                                          f"(its request's last beat at {request}) when the RESULT "
                                                          f"frame taken from {b.cycles[0]} was granted (at edge "
                                                          f"{grant} or later) right after another RESULT frame "
                                                          f"(last beat at {a.cycles[-1]}); the response left at "
                                                          f"{left}", cycle=b.cycles[0])]
    return _tx0_result_waits(run)


def _frame_key(frame):
    """A frame's class, operation, generation and block: the same frame on both ports."""
    return tuple(P.get_field(frame.beats[0], name) for name in ("class", "op_id", "generation", "offset"))


def _tx0_result_waits(run):
    """The other half of TX0's round robin: while a RESULT frame waits for port 0, at most one
    CONTROL response goes first.  An AllReduce frame is offered to both ports at once, so its
    header waits for port 0 from before the cycle TX1 took it (a1); port 0's register is loaded
    only when its previous beat is taken, so every TX0 frame whose previous beat left at or
    after a1, and that leaves ahead of the RESULT header, was loaded while that header waited.
    Judged between resets."""
    bounds = [-1] + sorted(run.resets) + [float("inf")]
    tx0 = [f for f in run.tx.get(0, []) if f.cycles and f.beats]
    tx1 = [f for f in run.tx.get(1, []) if f.cycles and f.beats]
    for lo, hi in zip(bounds, bounds[1:]):
        seg0 = [f for f in tx0 if lo < f.cycles[0] and f.cycles[-1] < hi]
        at0 = {_frame_key(f): i for i, f in enumerate(seg0) if P.get_field(f.beats[0], "class") == P.CLASS_RESULT}
        for f1 in tx1:
            if not (lo < f1.cycles[0] < hi) or P.get_field(f1.beats[0], "class") != P.CLASS_RESULT:
                continue
            i = at0.get(_frame_key(f1))
            if i is None:
                continue
            a1 = f1.cycles[0]
            ahead = [seg0[j] for j in range(i - 1, 0, -1) if seg0[j - 1].cycles[-1] >= a1]
            if len(ahead) > 1:
                return [Mismatch("tx-arbitration", 0, f"a RESULT frame (op {P.get_field(f1.beats[0], 'op_id')} offset "
                                                      f"{P.get_field(f1.beats[0], 'offset')}) waited for TX0 from "
                                                      f"before cycle {a1}, when TX1 took its header, while "
                                                      f"{len(ahead)} CONTROL responses left TX0 ahead of it (cycles "
                                                      f"{', '.join(str(f.cycles[0]) for f in reversed(ahead))}); "
                                                      f"round robin lets one through", cycle=ahead[-2].cycles[0])]
    return []


LINE_RATE_SLACK = 0         # cycles a probe's frames may lose on a port against one beat per cycle


def check_line_rate(scenario, run):
    """The line-rate probe (cosim.node.regress.add_line_rate_probe): with no backpressure and
    nothing held, each port takes the probe's DATA frames at one beat per cycle, frame after
    frame (the frames go out back to back: every cycle from its first beat to its last is a
    beat).  Measured first on the node: no cycle lost on any probe of 400 seeds."""
    from cosim.node.scoreboard import Mismatch
    probe = getattr(scenario, "probe", None)
    if not probe or run.resets and max(run.resets) > min((f.cycles[0] for p in run.rx for f in run.rx[p]
                                                          if f.cycles and _is_probe(f, probe)), default=0):
        return []
    out = []
    for p in (0, 1):
        frames = [f for f in run.rx.get(p, []) if f.cycles and _is_probe(f, probe)]
        if not frames:
            continue
        beats = sum(len(f.cycles) for f in frames)
        span = frames[-1].cycles[-1] - frames[0].cycles[0] + 1
        if span - beats > LINE_RATE_SLACK:
            cycles = sorted(c for f in frames for c in f.cycles)
            gap = next(a for a, b in zip(cycles, cycles[1:]) if b != a + 1)
            why = "the node held tready low with a frame bank free and nothing held"
            earlier = [f.cycles[-1] for q in run.tx for f in run.tx[q] if f.cycles and f.beats
                       and P.get_field(f.beats[0], "class") == P.CLASS_RESULT
                       and (P.get_field(f.beats[0], "op_id"), P.get_field(f.beats[0], "generation"))
                       != (probe["op_id"], probe["generation"])]
            if earlier and max(earlier) >= frames[0].cycles[0]:
                # a COMMIT met in a drain is held, and its DATA frames wait with it (docs/protocol.md)
                why = (f"an earlier operation's RESULT frames went out until cycle {max(earlier)}, so the probe's "
                       f"COMMIT was held: the stimulus waited too short a time for the drain, not a node fault")
            out.append(Mismatch("line-rate", p, f"receive port {p} took the line-rate probe's {beats} beats in "
                                                f"{span} cycles (first lost cycle after {gap}): {why}"))
    return out


def _is_probe(frame, probe):
    head = frame.beats[0]
    return (P.get_field(head, "class") == P.CLASS_DATA and P.get_field(head, "op_id") == probe["op_id"]
            and P.get_field(head, "generation") == probe["generation"])


BUSY_AFTER_COMMIT = 2           # edges from a COMMIT's last beat to `busy` high (docs/protocol.md)


def busy_while_sending(run):
    """`busy` is high while an operation is open or draining, and falls when its drain ends, with
    at most the last two beats of the last RESULT frame still in the node (docs/protocol.md,
    "Operation lifetime"): so every beat of a RESULT frame but its last two is taken while `busy`
    is high.  Judged where the back end records `busy` (run.busy_changes)."""
    if run.busy_changes is None:
        return []
    changes = sorted(run.busy_changes)
    at = [c for c, _ in changes]

    def busy_at(cycle):
        i = bisect.bisect_right(at, cycle) - 1
        return i >= 0 and changes[i][1]
    out = []
    for p in (0, 1):
        for frame in run.tx[p]:
            if not frame.beats or P.get_field(frame.beats[0], "class") != P.CLASS_RESULT or not frame.cycles:
                continue
            low = next((c for c in frame.cycles[:-2] if not busy_at(c)), None)
            if low is not None:
                op_id, offset = P.get_field(frame.beats[0], "op_id"), P.get_field(frame.beats[0], "offset")
                out.append(Mismatch("busy", p, f"busy was low at cycle {low} while RESULT op {op_id} offset {offset} "
                                               f"was still being sent on TX{p} (beats at cycles "
                                               f"{frame.cycles[0]}..{frame.cycles[-1]})"))
                return out          # the first is enough: the rest follow from it
    return out


def busy_rises_with_commit(run):
    """`busy` rises only with a successful COMMIT: its last beat taken at edge T, `busy` is high
    from edge T + 2 (docs/protocol.md, "Operation lifetime"; a COMMIT held in a drain keeps it
    high, so it does not rise).  So every rise of `busy` comes two edges after a COMMIT's last beat
    on one of the receive ports: a rise with none there (work the node did for no operation, left
    over from before a reset, say) fails.  Judged where the back end records `busy`
    (run.busy_changes)."""
    if not run.busy_changes:
        return []
    commits = set()
    for p in (0, 1):
        for frame in run.rx.get(p, []):
            if (frame.beats and frame.cycles and P.get_field(frame.beats[0], "class") == C.CLASS_CONTROL
                    and P.get_field(frame.beats[0], "opcode") == C.OP_COMMIT):
                commits.add(frame.cycles[-1])
    was = False
    for cycle, value in sorted(run.busy_changes):
        if value and not was and cycle - BUSY_AFTER_COMMIT not in commits:
            return [Mismatch("busy-rise", 0, f"busy rose at cycle {cycle} with no COMMIT's last beat taken at cycle "
                                        f"{cycle - BUSY_AFTER_COMMIT} (busy rises {BUSY_AFTER_COMMIT} edges after "
                                        f"a successful COMMIT, and only then)")]
        was = bool(value)
    return []


ABORT_BUSY_FALL = 18            # edges from an ABORT's beat to `busy` low, nothing admitted left to
                                # process (docs/protocol.md, "Operation lifetime")


def busy_falls_after_abort(sb, run):
    """`busy` after an ABORT (docs/protocol.md, "Operation lifetime"): the ABORT's beat taken at
    edge T, `busy` falls 17 edges after the datapath became empty, so it is low from edge T + 18
    at the earliest, and exactly then when the datapath was empty at the ABORT: the aborted
    operation had admitted nothing and no RESULT frame (of an earlier operation, still in the
    egress) leaves at T or later.  Not judged where a reset comes before the fall or a COMMIT
    held in the drain keeps `busy` high into the next operation.  Judged where the back end
    records `busy` (run.busy_changes)."""
    if not run.busy_changes:
        return []
    from cosim.node.scoreboard import Mismatch
    changes = sorted(run.busy_changes)
    result_beats = sorted(c for p in run.tx for f in run.tx[p] if f.beats and f.cycles
                          and P.get_field(f.beats[0], "class") == P.CLASS_RESULT for c in f.cycles)
    commits = sorted(e["cycle"] for e in sb.events if e.get("kind") == "COMMIT" and e.get("verdict") == "OK")
    for e in sb.events:
        if e.get("kind") != "ABORT" or e.get("verdict") != "OK":
            continue
        t = e["cycle"]
        fall = next((c for c, v in changes if c > t and not v), None)
        if fall is None or any(t <= r <= fall for r in run.resets) or any(t < c < fall for c in commits):
            continue
        due = t + ABORT_BUSY_FALL
        op = e["op"]
        sending = bool(result_beats) and result_beats[-1] >= t
        empty = e["admitted_before"] == 0 and not sending
        if fall < due or (empty and fall != due):
            what = ("nothing admitted, no RESULT frame leaving" if empty else
                    f"{e['admitted_before']} frames admitted" + (", RESULT frames leaving" if sending else ""))
            return [Mismatch("busy", 0, f"busy fell at cycle {fall} after the ABORT of op {op.stage.op_id} taken at "
                                        f"cycle {t} ({what}): low from cycle {due} "
                                        f"{'exactly' if empty else 'at the earliest'}")]
    return []


def check_margin(scenario, run):
    """The admission rule at its edge (spec.frames, RESPONSE_MARGIN; docs/protocol.md, "Ports"):
    with RESPONSE_MARGIN entries of the response queue free and a frame bank free, a receive port
    takes a new frame's first beat when it is offered.  The aimed stimulus (Scenario.margin, from
    cosim.node.regress.add_response_margin) names a frame offered in that state, with TX0 stalled
    until edge `by`: it must have started before then (unless a reset came first)."""
    from cosim.node.scoreboard import Mismatch
    m = scenario.margin
    if not m or any(r <= m["by"] for r in run.resets):
        return []
    port = m["port"]
    index = next(i for i, f in enumerate(scenario.frames[port]) if f is m["frame"])
    got = run.rx.get(port, [])
    first = got[index].cycles[0] if index < len(got) and got[index].cycles else None
    if first is None or first >= m["by"]:
        return [Mismatch("rx-stall", port, f"receive port {port} held back frame {index} (header "
                                           f"{m['frame'].beats[0]:#x}) until "
                                           f"{'the end of the run' if first is None else f'cycle {first}'} "
                                           f"although the response queue had {RESPONSE_MARGIN} entries free: "
                                           f"it must take it before TX0's stall ends at cycle {m['by']}")]
    return []


def quiet_through_reset(run):
    """No beat can move while the node is reset: its s_axis_P_tready and m_axis_P_tvalid, and
    `busy`, are low at every edge E + 1 ... L + 1 of a reset held from edge E to edge L, the
    power-on reset included (docs/protocol.md, "Reset and power-on").  Judged where the back end
    records them (run.reset_live)."""
    if not run.reset_live:
        return []
    names = {"i": "s_axis_{}_tready", "o": "m_axis_{}_tvalid", "busy": "busy"}
    cycle, what = run.reset_live[0]
    side, k = what.split()
    signal = names[side].format(k)
    return [Mismatch("reset-links", int(k) if side != "busy" else 0,
                     f"{signal} was high at cycle {cycle}, the edge after one with rst high "
                     f"({len(run.reset_live)} such edge(s) and signals in the run)")]


def check(scenario, run, kulisch_w=KULISCH_WIDTH_DEFAULT, capacity=MAX_CAPACITY, read_counters=True):
    """Scoreboard verdict for a run: RESULT frames, CONTROL responses and counters (every one of
    them, unless the run was made with read_counters=False)."""
    sb = NodeScoreboard(capacity=capacity, kulisch_w=kulisch_w)
    for p in (0, 1):
        for f in run.rx[p]:
            sb.record_input(p, f)
    sb.resets = list(run.resets)
    ready = sink_ready(scenario, run)
    report = sb.compare(run.tx, ready=ready, cut_frames=run.cut)
    from cosim.node.scoreboard import Mismatch
    if read_counters:
        missing = sorted(set(counter_names().values()) - set(run.counters), key=lambda k: (k[0] is None, k))
        if missing:         # the sweep is part of every run: a counter not read is a failure, not a skip
            report.mismatches.append(Mismatch("counter", 0, f"{len(missing)} counters were not read at the end of "
                                              f"the run (first: {missing[0][1]})"))
        for (port, name), got in sorted(run.counters.items(), key=lambda kv: (kv[0][0] is None, kv[0])):
            low, high = expected_counter(sb, run, port, name)
            if not low <= got <= high:
                want = low if low == high else f"{low} .. {high}"
                report.mismatches.append(Mismatch("counter", port if port is not None else 0,
                                                  f"counter {name}{'' if port is None else f' (port {port})'}: "
                                                  f"expected {want}, got {got}", expected=want, actual=got))
    report.mismatches += receive_stalls(scenario, run)
    report.mismatches += transmit_stalls(scenario, run)
    report.mismatches += check_line_rate(scenario, run)
    report.mismatches += tx0_arbitration(sb, run, ready)
    report.mismatches += busy_while_sending(run)
    report.mismatches += busy_rises_with_commit(run)
    report.mismatches += busy_falls_after_abort(sb, run)
    report.mismatches += check_margin(scenario, run)
    report.mismatches += quiet_through_reset(run)
    if run.max_cycles and run.cycles >= run.max_cycles:
        report.mismatches.insert(0, Mismatch("timeout", 0, f"the run reached its budget of {run.max_cycles} cycles "
                                                           f"without settling (busy, or still sending)"))
    # end state: the node is busy exactly while the model still has an operation in progress
    op = sb.model.active
    open_op = op is not None and op.in_progress
    if run.busy_at_end != open_op:
        what = (f"operation {op.stage.op_id} still waits for contributions" if open_op
                else "no operation is in progress")
        report.mismatches.append(Mismatch("end-state", 0, f"busy at the end of the run: expected {int(open_op)} "
                                          f"({what}), got {int(run.busy_at_end)}",
                                          expected=int(open_op), actual=int(run.busy_at_end)))
    report.scoreboard = sb
    return report
