"""`PrismNodeEnv`: the whole verification component wired around one PRISM node in a cocotb test.

    env = await PrismNodeEnv.create(dut, kulisch_w=320)     # after starting dut.clk
    env.sink_pauses(0.3)
    ack = await env.request(protocol.Stage(...))            # STAGE, COMMIT: answered on TX port 0
    env.send(0, protocol.Data(...))
    await env.wait_idle()
    report = await env.check()                              # raises AssertionError on a mismatch

Two `PrismSource`s drive the receive ports, two `PrismSink`s take the transmit ports, four
`PrismMonitor`s watch all four and feed one `PrismScoreboard`; `check()` reads every counter
through `counter_select` / `counter_value`, judges the run and samples the functional
coverage.  Port names default to those of the node (docs/protocol.md, "Ports"); a design
with other names passes its own buses and signals.
"""
import cocotb
from cocotb.triggers import ClockCycles, FallingEdge, RisingEdge

from golden.node import protocol as P
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import BEAT_BITS, COUNTER_BITS, COUNTERS, MAX_CAPACITY
from cosim.node.node_harness import BUSY_STOP, COUNTER_HOLD, IDLE_STOP

from cosim.cocotb_vip.functional_coverage import NodeCoverage
from cosim.cocotb_vip.scoreboard import PrismScoreboard
from cosim.cocotb_vip.streams import (STREAM_SIGNALS, CycleClock, PrismMonitor, PrismSink, PrismSource,
                                      PrismStreamBus, random_pauses)


class PrismNodeEnv:
    """Sources, sinks, monitors, scoreboard and coverage around one node (build it with
    `await PrismNodeEnv.create(dut, ...)`).

    Attributes: `source[p]`, `sink[p]`, `rx_monitor[p]`, `tx_monitor[p]`, `scoreboard`,
    `responses` (CONTROL responses seen on TX port 0, decoded, in order), `report` and
    `coverage` of the last `check()`."""

    def __init__(self, dut, clk, rst, cycle_clock, rx_buses, tx_buses, kulisch_w, capacity,
                 counter_select, counter_value, busy):
        self.dut, self.clk, self.rst = dut, clk, rst
        self.cycle_clock = cycle_clock
        self.counter_select, self.counter_value, self.busy = counter_select, counter_value, busy
        ports = len(rx_buses)
        self.scoreboard = PrismScoreboard(kulisch_w=kulisch_w, capacity=capacity, ports=ports)
        self.source = [PrismSource(bus, clk, rst) for bus in rx_buses]
        self.sink = [PrismSink(bus, clk, rst) for bus in tx_buses]
        self.rx_monitor = [PrismMonitor(bus, clk, cycle_clock, rst, name=f"RX{p}", port=p, check_stalls=True)
                           for p, bus in enumerate(rx_buses)]
        self.tx_monitor = [PrismMonitor(bus, clk, cycle_clock, rst, name=f"TX{p}", port=p)
                           for p, bus in enumerate(tx_buses)]
        self.responses = []
        sb = self.scoreboard
        for p, mon in enumerate(self.rx_monitor):
            mon.frame_callbacks.append(lambda f, p=p: sb.input_frame(p, f))
            mon.cut_callbacks.append(lambda f, p=p: sb.input_cut(p, f))
            mon.error_callbacks.append(sb.protocol_error)
        for p, mon in enumerate(self.tx_monitor):
            mon.frame_callbacks.append(lambda f, p=p: sb.output_frame(p, f))
            mon.cut_callbacks.append(lambda f, p=p: sb.output_cut(p, f))
            mon.error_callbacks.append(sb.protocol_error)
        self.tx_monitor[0].frame_callbacks.append(self._note_response)
        self.report = self.coverage = None
        cocotb.start_soon(self._watch_reset())
        self.busy_changes = None
        if busy is not None:
            self.busy_changes = []
            cocotb.start_soon(self._watch_busy())

    @classmethod
    async def create(cls, dut, kulisch_w=KULISCH_WIDTH_DEFAULT, capacity=MAX_CAPACITY, clk=None, rst=None,
                     rx_prefixes=("s_axis_0", "s_axis_1"), tx_prefixes=("m_axis_0", "m_axis_1"),
                     rx_buses=None, tx_buses=None, counter_select="counter_select",
                     counter_value="counter_value", busy="busy", power_on_reset=4):
        """Build the environment around `dut`, whose clock must already run.

        kulisch_w, capacity: the node's build parameters (the RESULT header carries KULISCH_W;
        CAPACITY bounds a STAGE's element count).  clk, rst: handles (default dut.clk,
        dut.rst; rst is synchronous, active high).  rx_buses / tx_buses: PrismStreamBus per
        port, else found from rx_prefixes / tx_prefixes.  counter_select, counter_value,
        busy: names (or handles) of those ports; None when the design has none (then those
        checks are left out).  power_on_reset: edges to hold rst high first (0: none; the
        environment then waits until rst is low).  Ports looked up by name are checked first
        (present, with the node's widths): AssertionError names what does not fit."""
        by_name = [(prefix + "_" + signal, NODE_PORT_WIDTHS[signal]) for prefixes, buses in
                   ((rx_prefixes, rx_buses), (tx_prefixes, tx_buses)) if buses is None
                   for prefix in prefixes for signal in STREAM_SIGNALS]
        by_name += [(name, NODE_PORT_WIDTHS[role]) for role, name in
                    (("clk", "clk" if clk is None else None), ("rst", "rst" if rst is None else None),
                     ("counter_select", counter_select), ("counter_value", counter_value), ("busy", busy))
                    if isinstance(name, str)]
        problems = port_problems(dut, by_name)
        if problems:
            raise AssertionError(f"{dut._name} does not have the node's ports (docs/protocol.md, \"Ports\"): "
                                 + "; ".join(problems))
        clk = clk if clk is not None else dut.clk
        rst = rst if rst is not None else dut.rst
        counter_select, counter_value, busy = (getattr(dut, s) if isinstance(s, str) else s
                                               for s in (counter_select, counter_value, busy))
        rx_buses = rx_buses or [PrismStreamBus.from_prefix(dut, p) for p in rx_prefixes]
        tx_buses = tx_buses or [PrismStreamBus.from_prefix(dut, p) for p in tx_prefixes]
        # the inputs the components will drive, defined from the start (an X tready or tvalid
        # could reach the design's state before the components exist)
        for bus in rx_buses:
            bus.tvalid.value, bus.tlast.value, bus.tdata.value = 0, 0, 0
        for bus in tx_buses:
            bus.tready.value = 0
        if counter_select is not None:
            counter_select.value = 0
        if power_on_reset:
            rst.value = 1
            await ClockCycles(clk, power_on_reset)
            await FallingEdge(clk)
            rst.value = 0
        while _level(rst) != 0:
            await RisingEdge(clk)
        cycle_clock = CycleClock(clk)
        await cycle_clock.calibrate()
        return cls(dut, clk, rst, cycle_clock, rx_buses, tx_buses, kulisch_w, capacity,
                   counter_select, counter_value, busy)

    # --- stimulus -------------------------------------------------------------------------------
    def send(self, port, frame):
        """Queue a frame (a golden.node.protocol object or a list of beats) on receive port `port`."""
        self.source[port].send_frame_nowait(frame)

    async def request(self, frame, port=0, max_cycles=20000):
        """Send a CONTROL request and wait for the next CONTROL response (TX port 0 answers
        requests in processing order); returns it decoded (a protocol.Response)."""
        before = len(self.responses)
        self.send(port, frame)
        await self.wait_until(lambda: len(self.responses) > before, "a CONTROL response", max_cycles)
        return self.responses[before]

    def source_pauses(self, probability, seed=1):
        """Random pauses (tvalid low) on every receive port."""
        for p, s in enumerate(self.source):
            s.set_pause_generator(random_pauses(probability, seed * 16 + p))

    def sink_pauses(self, probability, seed=1, stall_every=0, stall_cycles=0):
        """Random backpressure (tready low) on every transmit port, plus long stalls."""
        for p, s in enumerate(self.sink):
            s.set_pause_generator(random_pauses(probability, seed * 16 + 8 + p, stall_every, stall_cycles))

    def clear_pauses(self):
        for d in self.source + self.sink:
            d.clear_pause_generator()
            d.pause = False

    async def reset(self, cycles=2):
        """Hold rst high for `cycles` rising edges (raised and released at falling edges); the
        scoreboard records it through the monitors like any other reset."""
        await FallingEdge(self.clk)
        self.rst.value = 1
        await ClockCycles(self.clk, cycles)
        await FallingEdge(self.clk)
        self.rst.value = 0

    # --- waiting ----------------------------------------------------------------------------------
    async def wait_until(self, condition, what, max_cycles=20000):
        """Until condition() holds (asked at every rising edge); AssertionError after max_cycles."""
        for _ in range(max_cycles):
            if condition():
                return
            await RisingEdge(self.clk)
        # what the scoreboard makes of the run so far usually says why the design stalled
        raise AssertionError(f"waiting for {what}: not within {max_cycles} cycles (cycle {self.cycle_clock.now()}); "
                             f"the scoreboard so far: {self.scoreboard.check().summary()}")

    async def wait_idle(self, quiet_cycles=IDLE_STOP, busy_quiet_cycles=BUSY_STOP, max_cycles=200000):
        """Until every queued frame has been sent and the design has settled: `quiet_cycles`
        edges with nothing moving or offered on a transmit port and `busy` low, or
        `busy_quiet_cycles` with nothing moving while busy (an operation waiting for
        contributions that never come; check() then judges busy).  The kit's own stop rule."""
        await self.wait_until(lambda: all(s.idle() for s in self.source), "every frame sent", max_cycles)
        quiet = 0
        for _ in range(max_cycles):
            await RisingEdge(self.clk)
            now = self.cycle_clock.now()
            offered = any(_level(bus.tvalid) != 0 for bus in (m.bus for m in self.tx_monitor))
            # a monitor may run after this coroutine at an edge: a beat counts at that edge or the next
            moved = any(m.last_beat_cycle is not None and m.last_beat_cycle >= now - 1
                        for m in self.tx_monitor + self.rx_monitor)
            quiet = 0 if moved else quiet + 1
            busy = self.busy is not None and _level(self.busy) != 0
            if (quiet >= quiet_cycles and not busy and not offered) or quiet >= busy_quiet_cycles:
                return
        raise AssertionError(f"the design did not settle within {max_cycles} cycles; the scoreboard so far: "
                             f"{self.scoreboard.check().summary()}")

    # --- counters and the verdict -------------------------------------------------------------------
    async def read_counters(self):
        """{counter_select: counter_value} for every selection, each held COUNTER_HOLD edges
        (a counter_value later than the one cycle docs/protocol.md promises reads the previous
        selection's).  Call it when nothing moves."""
        if self.counter_select is None:
            return None
        values = {}
        for sel in range(1 << len(self.counter_select)):
            self.counter_select.value = sel
            await ClockCycles(self.clk, COUNTER_HOLD)
            value = self.counter_value.value
            values[sel] = value.to_unsigned() if value.is_resolvable else -1
        self.counter_select.value = 0
        return values

    async def check(self, read_counters=True, raise_on_failure=True):
        """Judge everything the monitors saw so far (PrismScoreboard.check): every frame, and the
        counters (read now) and `busy` when the design has them; sample the coverage.  Call it
        after wait_idle().  Raises AssertionError with the first mismatches on a failure."""
        counters = await self.read_counters() if read_counters else None
        busy = None if self.busy is None else _level(self.busy) == 1
        report = self.scoreboard.check(counters=counters, busy_at_end=busy, cycles=self.cycle_clock.now(),
                                       busy_changes=self.busy_changes)
        report.coverage = NodeCoverage.of(report)
        self.report, self.coverage = report, report.coverage
        log = self.dut._log
        log.info(report.summary())
        log.info(report.coverage.summary_line())
        if raise_on_failure and not report.ok:
            raise AssertionError(report.summary())
        return report

    # --- internals ----------------------------------------------------------------------------------
    def _note_response(self, frame):
        if frame.beats and P.get_field(frame.beats[0], "class") == P.CLASS_CONTROL:
            try:
                self.responses.append(P.decode(frame.beats))
            except P.MalformedFrame:
                self.responses.append(None)         # the scoreboard reports it

    async def _watch_busy(self):
        """`busy` as sampled at each rising edge (the value a beat taken at that edge sees), at
        each change: the scoreboard judges it while RESULT frames leave and at each rise."""
        seen = False
        while True:
            await RisingEdge(self.clk)
            level = _level(self.busy) == 1
            if level != seen:
                self.busy_changes.append((self.cycle_clock.now(), level))
                seen = level

    async def _watch_reset(self):
        previous = _level(self.rst)
        while True:
            await self.rst.value_change
            level = _level(self.rst)
            if level == 1 and previous != 1:
                self.scoreboard.reset_at(self.cycle_clock.now())
            previous = level


# widths of the node's ports (docs/protocol.md, "Ports"), by signal or port name
NODE_PORT_WIDTHS = {"tdata": BEAT_BITS, "tvalid": 1, "tready": 1, "tlast": 1, "clk": 1, "rst": 1,
                    "counter_select": (COUNTERS - 1).bit_length(), "counter_value": COUNTER_BITS, "busy": 1}


def port_problems(dut, ports):
    """What does not fit among `ports` [(name, width)] of `dut`: missing ones, other widths."""
    missing, problems = [], []
    for name, width in ports:
        handle = dut._get(name)
        if handle is None:
            missing.append(name)
        elif len(handle) != width:
            problems.append(f"{name} has {len(handle)} bits, not {width}")
    return ([f"missing {', '.join(missing)}"] if missing else []) + problems


def _level(signal):
    value = signal.value
    return int(value) if value.is_resolvable else None
