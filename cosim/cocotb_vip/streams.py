"""The node's four AXI4-Stream ports on cocotbext-axi, one PRISM frame per AxiStreamFrame.

Every stream is driven with one byte lane of 512 bits (`byte_lanes=1`), so an
`AxiStreamFrame`'s `tdata` is the frame's list of beats as integers, header first:
exactly what `golden.node.protocol` encodes and decodes.  (With cocotbext-axi's default
of 8-bit lanes every 512-bit beat would be split into 64 bytes and rebuilt again.)

- `PrismStreamBus`: the four signals of a port, found by name.
- `PrismSource` (an `AxiStreamSource`): sends protocol frames on a receive port.
- `PrismSink` (an `AxiStreamSink`): takes frames from a transmit port, with backpressure.
- `PrismMonitor` (an `AxiStreamMonitor`): watches any port without driving it and reports
  each frame with the cycle of every beat, frames a reset cut, and (on receive ports) cycles
  in which the design held `tready` low inside a frame.
- `CycleClock`: cycle numbers shared by all monitors.
"""
import random

from cocotb.triggers import RisingEdge
from cocotb.utils import get_sim_time
from cocotb_bus.bus import Bus
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamMonitor, AxiStreamSink, AxiStreamSource

from golden.node import protocol as P
from cosim.node.scoreboard import Mismatch
from cosim.sim.axis import AxisFrame

STREAM_SIGNALS = ("tdata", "tvalid", "tready", "tlast")


def beats_of(frame):
    """The beats of a protocol frame object (anything with `encode()`), an AxiStreamFrame, an
    AxisFrame or a list of beats."""
    if hasattr(frame, "encode"):
        return frame.encode()
    if isinstance(frame, (AxiStreamFrame, AxisFrame)):
        return list(frame.tdata if isinstance(frame, AxiStreamFrame) else frame.beats)
    return [int(b) for b in frame]


def to_axis_frame(frame):
    """An AxiStreamFrame for a PRISM frame: one tdata element per beat."""
    return AxiStreamFrame(beats_of(frame))


def random_pauses(probability, seed=0, stall_every=0, stall_cycles=0):
    """Endless pause pattern for `set_pause_generator`: each cycle paused with `probability`,
    plus a stall of `stall_cycles` about every `stall_every` cycles (0: none)."""
    rng = random.Random(seed)
    while True:
        if stall_every and rng.random() < 1.0 / stall_every:
            for _ in range(stall_cycles):
                yield True
        yield rng.random() < probability


class PrismStreamBus(AxiStreamBus):
    """One stream of the node: tdata, tvalid, tready and tlast, nothing else.

    `PrismStreamBus.from_prefix(dut, "s_axis_0")` finds `s_axis_0_tdata` ... by name.  A
    design with other names passes them: `PrismStreamBus(dut, signals={"tdata": "rx0_data",
    "tvalid": "rx0_valid", "tready": "rx0_ready", "tlast": "rx0_last"})`.  The signals are
    required and looked up directly (case-sensitive): cocotbext-axi otherwise searches for its
    optional ones (tkeep, tid, ...) by listing every object of the module, which on a flat
    converted design holds thousands."""
    _signals = list(STREAM_SIGNALS)
    _optional_signals = []

    def __init__(self, entity=None, prefix=None, signals=None, **kwargs):
        if signals is not None:
            missing = [s for s in STREAM_SIGNALS if s not in signals]
            if missing:
                raise ValueError(f"PrismStreamBus: no signal named for {', '.join(missing)}")
            Bus.__init__(self, entity, prefix, dict(signals), optional_signals=[], case_insensitive=False, **kwargs)
        else:
            super().__init__(entity, prefix, case_insensitive=False, **kwargs)


class CycleClock:
    """Cycle numbers from simulation time, so that every monitor numbers a beat alike whatever
    order cocotb wakes them in at an edge.  Rising edge k after `calibrate()` is cycle k; a
    reset raised between edges R and R + 1 (or at edge R itself, after it) is at cycle R, the
    numbering the kit's scoreboard uses (cosim/node/scoreboard.py)."""

    def __init__(self, clock):
        self.clock = clock
        self.period = None
        self.origin = None

    async def calibrate(self):
        """Measure the period from two rising edges; the second is cycle 0."""
        await RisingEdge(self.clock)
        first = get_sim_time("step")
        await RisingEdge(self.clock)
        self.origin = get_sim_time("step")
        self.period = self.origin - first

    def now(self):
        """The cycle of the current simulation time (the last rising edge at or before it)."""
        return (get_sim_time("step") - self.origin) // self.period


def _bit(signal):
    """0/1 of a one-bit signal, None when it is X or Z."""
    value = signal.value
    return int(value) if value.is_resolvable else None


class PrismSource(AxiStreamSource):
    """Sends PRISM frames on one receive port of the design (an AxiStreamSource of one 512-bit
    lane).  `send_frame_nowait(frame)` / `await send_frame(frame)` take a protocol object
    (`golden.node.protocol.Stage`, `Data`, ...) or a list of beats; pauses as in cocotbext-axi
    (`set_pause_generator(random_pauses(0.3))`)."""

    def __init__(self, bus, clock, reset=None, reset_active_level=True, **kwargs):
        super().__init__(bus, clock, reset, reset_active_level, byte_lanes=1, **kwargs)
        self.log.setLevel("ERROR")          # a reset flushing a frame in flight is a test's intent

    def send_frame_nowait(self, frame):
        self.send_nowait(to_axis_frame(frame))

    async def send_frame(self, frame):
        await self.send(to_axis_frame(frame))


class PrismSink(AxiStreamSink):
    """Takes frames from one transmit port of the design (an AxiStreamSink of one 512-bit
    lane), applying the pause generator as backpressure.  `await recv_frame()` gives the next
    frame decoded (`golden.node.protocol`); the scoreboard does not need it (it reads the
    monitors)."""

    def __init__(self, bus, clock, reset=None, reset_active_level=True, **kwargs):
        super().__init__(bus, clock, reset, reset_active_level, byte_lanes=1, **kwargs)
        self.log.setLevel("ERROR")

    async def recv_frame(self):
        frame = await self.recv(compact=False)
        return P.decode(list(frame.tdata))


class PrismMonitor(AxiStreamMonitor):
    """Watches one stream without driving it (an AxiStreamMonitor of one 512-bit lane).

    For every frame whose last beat moved it calls each of `frame_callbacks` with an
    `AxisFrame` (beats and the cycle of each, numbered by the shared `CycleClock`), and queues
    an AxiStreamFrame of the beats for `recv()` as cocotbext-axi does.  A frame a reset
    cuts goes to `cut_callbacks` instead.  `check_stalls` (receive ports): a cycle in which the
    design held tready low inside a frame while the next beat was offered is reported to
    `error_callbacks` as a Mismatch of kind "rx-stall" (docs/verification.md, "Receive ports"),
    and a handshake or taken tdata that is X or Z as kind "undefined"."""

    def __init__(self, bus, clock, cycle_clock, reset=None, reset_active_level=True, name="",
                 check_stalls=False, port=0, **kwargs):
        self.cycle_clock = cycle_clock
        self.name = name or bus._name or "stream"
        self.port = port
        self.check_stalls = check_stalls
        self.frame_callbacks, self.cut_callbacks, self.error_callbacks = [], [], []
        self.frames_seen = 0
        self.last_beat_cycle = None         # the last cycle a beat moved on this stream
        self._beats, self._cycles = [], []  # the frame in progress
        self._stalled = False
        super().__init__(bus, clock, reset, reset_active_level, byte_lanes=1, **kwargs)
        self.log.setLevel("ERROR")

    def _error(self, kind, message, cycle):
        for cb in self.error_callbacks:
            cb(Mismatch(kind, self.port, f"{self.name}: {message}", cycle=cycle))

    def _handle_reset(self, state):
        if state and self._beats:
            cut = AxisFrame(self._beats, cycles=self._cycles)
            for cb in self.cut_callbacks:
                cb(cut)
        if state:
            self._beats, self._cycles, self._stalled = [], [], False
        super()._handle_reset(state)

    async def _run(self):
        # cocotbext-axi's loop, recording beats as integers with their cycles, and stalls
        bus = self.bus
        edge = RisingEdge(self.clock)
        wake = self.wake_event.wait()
        undefined_reported = False
        while True:
            await edge
            valid, ready = _bit(bus.tvalid), _bit(bus.tready)
            if valid is None or ready is None:
                if not undefined_reported:
                    undefined_reported = True
                    self._error("undefined", f"tvalid={bus.tvalid.value} tready={bus.tready.value} at a rising "
                                             "edge out of reset", self.cycle_clock.now())
                continue
            if valid and ready:
                cycle = self.cycle_clock.now()
                data = bus.tdata.value
                if not data.is_resolvable:
                    self._error("undefined", f"a beat taken with tdata {data} (X or Z bits)", cycle)
                self._beats.append(data.to_unsigned() if data.is_resolvable else 0)
                self._cycles.append(cycle)
                self.last_beat_cycle = cycle
                self._stalled = False
                self.active = True
                if _bit(bus.tlast):
                    self._frame_done()
                continue
            if self.check_stalls and valid and self._beats and not self._stalled:
                self._stalled = True        # one report per stall
                self._error("rx-stall", f"tready held low inside a frame while its next beat was offered "
                                        f"(frame header {self._beats[0]:#x}, {len(self._beats)} beats taken)",
                            self.cycle_clock.now())
            self.active = bool(self._beats)
            self.wake_event.clear()
            await wake

    def _frame_done(self):
        frame = AxisFrame(self._beats, cycles=self._cycles)
        self._beats, self._cycles = [], []
        self.active = False
        self.frames_seen += 1
        for cb in self.frame_callbacks:
            cb(frame)
        self.queue.put_nowait(AxiStreamFrame(frame.beats))
        self.queue_occupancy_frames += 1
        self.queue_occupancy_bytes += len(frame.beats)
        self.active_event.set()
