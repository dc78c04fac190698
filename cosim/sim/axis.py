"""AXI-Stream bus functional models for MyHDL test benches.

`AxisFrame` is the unit of comparison: a list of beats (ints of the bus width)
plus the cycle at which each beat was transferred.  `AxisSource` drives frames,
`AxisSink` accepts them (applying backpressure), `AxisMonitor` records frames
on a bus without driving it.  All three share one base and a `pause` generator:
a seeded random stream of booleans; where it yields True the source withholds
tvalid / the sink withholds tready for that cycle.

Timing, identical on both back ends: outputs change half a cycle after the
rising edge (at the falling edge) and handshakes are sampled at the rising
edge.  That keeps MyHDL-driven inputs and co-simulated outputs free of races.
"""
import collections
import random

from myhdl import block, instance


class AxisFrame:
    """One frame: `beats` (ints), optional per-beat `tuser`, and transfer `cycles`."""

    __slots__ = ("beats", "tuser", "cycles", "delay", "after")

    def __init__(self, beats, tuser=None, cycles=None, delay=0, after=None):
        self.beats = [int(b) for b in beats]
        self.tuser = None if tuser is None else [int(u) for u in tuser]
        self.cycles = cycles
        self.delay = delay   # idle cycles a source waits, after the previous frame, before this one
        # (stream index, n): the frame is not taken up before source `stream index` of the same
        # test has finished n frames (sent or cut short); its delay counts from then.  This
        # orders frames across streams (DATA after the COMMIT on the other port) whatever the
        # backpressure.  None: no condition.
        self.after = after

    def __eq__(self, other):
        return isinstance(other, AxisFrame) and self.beats == other.beats and (
            self.tuser is None or other.tuser is None or self.tuser == other.tuser)

    def __len__(self):
        return len(self.beats)

    def __repr__(self):
        head = ", ".join(f"{b:#x}" for b in self.beats[:3])
        more = f", ... ({len(self.beats)} beats)" if len(self.beats) > 3 else ""
        return f"AxisFrame([{head}{more}])"


def _random_pauses(probability, seed, burst):
    rng = random.Random(seed)
    while True:
        if probability > 0 and rng.random() < probability:
            for _ in range(rng.randint(1, burst)):
                yield True
        else:
            yield False


def _pauses(probability, seed, burst, windows=()):
    """The random pauses, with every draw in a window [start, end) forced to a pause (the
    random draws themselves unchanged, so a window alters only its own cycles)."""
    if not windows:
        yield from _random_pauses(probability, seed, burst)
        return
    for i, pause in enumerate(_random_pauses(probability, seed, burst)):
        yield pause or any(start <= i < end for start, end in windows)


class PausePattern:
    """Endless booleans: True (pause) with the given probability, in bursts of `burst` cycles.
    An iterator; `key` names the whole sequence, so a batched bench that writes it to a file
    can reuse the file's text for the same pattern (`fresh`: nothing taken from it yet)."""

    def __init__(self, probability, seed=0, burst=1, windows=()):
        windows = tuple((int(a), int(b)) for a, b in windows)
        self.key = (float(probability), seed, burst) + ((windows,) if windows else ())
        self._it = _pauses(probability, seed, burst, windows)
        self.fresh = True

    def __iter__(self):
        return self

    def __next__(self):
        self.fresh = False
        return next(self._it)


def pause_generator(probability, seed=0, burst=1, windows=()):
    """Endless booleans: True (pause) with the given probability, in bursts of `burst` cycles,
    and throughout each window (start, end) of draws (a PausePattern)."""
    return PausePattern(probability, seed, burst, windows)


class _AxisBase:
    def __init__(self, clk, tdata, tvalid, tready, tlast, tuser=None, pause=None, name="", rst=None):
        self.clk, self.tdata, self.tvalid, self.tready, self.tlast, self.tuser = clk, tdata, tvalid, tready, tlast, tuser
        self.pause = pause
        self.name = name
        self.rst = rst          # the link's reset (a ResetSignal): no beat moves while it is active
        self.cycle = 0

    def _paused(self):
        return next(self.pause) if self.pause is not None else False

    def _in_reset(self):
        return self.rst is not None and bool(self.rst == self.rst.active)


class AxisSource(_AxisBase):
    """Drives queued frames onto s_axis-style inputs of a design."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.queue = collections.deque()
        self.sent = []
        self.aborted = []
        self.beats_sent = 0
        self.peers = None       # every source of the test, by stream index (for AxisFrame.after)
        self.resets_done = None  # [number of mid-run resets over], shared by the test's sources

    def send(self, frame, delay=None):
        """Queue a frame; `delay` idle cycles (default: the frame's own) go before it."""
        frame = frame if isinstance(frame, AxisFrame) else AxisFrame(frame)
        if delay is not None:
            frame.delay = delay
        self.queue.append(frame)

    def idle(self):
        return not self.queue and not self._busy

    def frames_done(self):
        """Frames finished so far: sent in full or cut short by a reset."""
        return len(self.sent) + len(self.aborted)

    def _may_take(self, frame):
        if frame.after is None:
            return True
        stream, count = frame.after
        if stream == "reset":           # wait until `count` mid-run resets are over
            if self.resets_done is None:
                raise ValueError(f"{self.name or 'source'}: a frame waits for a reset but no reset counter is set")
            return self.resets_done[0] >= count
        if self.peers is None:
            raise ValueError(f"{self.name or 'source'}: a frame waits on another stream but no peers are set")
        return self.peers[stream].frames_done() >= count

    def abort(self):
        """Drop the frame in progress at the next falling edge (its link partner was reset)."""
        self._abort = True

    @block
    def inst(self):
        self._busy = False
        self._abort = False

        @instance
        def drive():
            frame, index, cycles, wait = None, 0, [], 0
            while True:
                yield self.clk.posedge
                self.cycle += 1
                if self.tvalid and self.tready and not self._in_reset():
                    cycles.append(self.cycle)
                    self.beats_sent += 1
                    index += 1
                    if index == len(frame.beats):
                        frame.cycles = cycles
                        self.sent.append(frame)
                        frame, index, cycles = None, 0, []
                yield self.clk.negedge
                # one pause draw per cycle, busy or not, so a pause pattern is a function of
                # the cycle number alone (the batched test bench replays it from a file)
                paused = self._paused()
                if self._abort:
                    if frame is not None and index > 0:
                        cut = AxisFrame(frame.beats[:index], cycles=cycles)
                        self.aborted.append(cut)
                        frame, index, cycles = None, 0, []
                    self._abort = False
                if frame is None and self.queue and self._may_take(self.queue[0]):
                    frame = self.queue.popleft()
                    wait = frame.delay
                self._busy = frame is not None
                if wait > 0:
                    wait -= 1
                    self.tvalid.next = 0
                elif frame is not None and not paused and not self._in_reset():
                    self.tdata.next = frame.beats[index]
                    self.tlast.next = index == len(frame.beats) - 1
                    if self.tuser is not None:
                        self.tuser.next = frame.tuser[index] if frame.tuser else 0
                    self.tvalid.next = 1
                else:
                    self.tvalid.next = 0
        return drive


class AxisSink(_AxisBase):
    """Accepts frames from m_axis-style outputs of a design, with optional backpressure."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.frames = []
        self.cut = []           # frames a reset cut short (their beats so far)
        self.beats_received = 0
        self._abort = False

    def abort(self):
        """Drop the frame being received (the design was reset in the middle of it)."""
        self._abort = True

    @block
    def inst(self):
        @instance
        def accept():
            beats, users, cycles = [], [], []
            while True:
                yield self.clk.posedge
                self.cycle += 1
                if self._abort:
                    if beats:
                        self.cut.append(AxisFrame(beats, None, cycles))
                    beats, users, cycles = [], [], []
                    self._abort = False
                if self.tvalid and self.tready and not self._in_reset():
                    beats.append(int(self.tdata))
                    users.append(int(self.tuser) if self.tuser is not None else 0)
                    cycles.append(self.cycle)
                    self.beats_received += 1
                    if self.tlast:
                        self.frames.append(AxisFrame(beats, users if self.tuser is not None else None, cycles))
                        beats, users, cycles = [], [], []
                yield self.clk.negedge
                self.tready.next = not self._paused()
        return accept


class AxisMonitor(_AxisBase):
    """Records every frame transferred on a bus; drives nothing."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.frames = []

    @block
    def inst(self):
        @instance
        def watch():
            beats, cycles = [], []
            while True:
                yield self.clk.posedge
                self.cycle += 1
                if self.tvalid and self.tready:
                    beats.append(int(self.tdata))
                    cycles.append(self.cycle)
                    if self.tlast:
                        self.frames.append(AxisFrame(beats, None, cycles))
                        beats, cycles = [], []
        return watch
