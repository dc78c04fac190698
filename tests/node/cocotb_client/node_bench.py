"""A cocotb + cocotbext-axi bench for the exported PRISM node, built from docs/protocol.md.

Drivers: an `AxiStreamSource` per receive port and an `AxiStreamSink` per
transmit port, each with a pause generator.  Monitors: one coroutine samples
every rising edge and records what the wire did -- the beats accepted on all
four streams, the frames whose last beat was accepted (so the processing
order of the document, port 0 first in a tie) and the frames a reset cut.
Scoreboard: every frame accepted is fed to `prism_reference.NodeModel` in
processing order; its CONTROL responses and RESULT blocks are compared with
the frames the sinks received, and its counters with the node's, read through
counter_select / counter_value.
"""
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

import prism_reference as R
import prism_wire as W

CLOCK_NS = 10


def pauses(rng, probability, stall_every=0, stall_cycles=0):
    """Pause pattern: each cycle paused with `probability`, plus a stall of `stall_cycles`
    every ~`stall_every` cycles (0: none)."""
    while True:
        if stall_every and rng.random() < 1.0 / stall_every:
            for _ in range(stall_cycles):
                yield True
        yield rng.random() < probability


class NodeStreamBus(AxiStreamBus):
    """One stream of the node: exactly the four signals of the document's port table.
    Named as required signals, found by direct look-up: cocotbext-axi looks for its optional
    ones (tkeep, tid, ...) by listing every object of the module, and the node's flat module
    holds thousands (most of the Python time of a short test)."""
    _signals = ["tdata", "tvalid", "tready", "tlast"]
    _optional_signals = []

    def __init__(self, entity=None, prefix=None, **kwargs):
        super().__init__(entity, prefix, case_insensitive=False, **kwargs)


def _int(signal, name):
    v = signal.value
    if not v.is_resolvable:
        raise AssertionError(f"{name} is {v} (not 0/1) at a rising edge")
    return int(v)


class NodeBench:
    def __init__(self, dut, seed=1, capacity=4096, kulisch_w=320):
        self.dut = dut
        self.log = dut._log
        self.rng = random.Random(seed)
        self.kulisch_w = kulisch_w
        self.model = R.NodeModel(capacity, kulisch_w)
        self.label = ""                     # what the test is doing, for failure messages
        self.cycle = 0
        self.last_beat = 0                  # last cycle a beat moved on any of the four streams
        self.in_partial = {0: [], 1: []}
        self.out_partial = {0: 0, 1: 0}
        self.accepted = []                  # (cycle, port, frame) in processing order
        self.out_frames = {0: [], 1: []}    # (cycle, frame) complete frames seen on each transmit port
        self.tx_cut = {0: 0, 1: 0}          # transmit frames cut by a reset
        self.verdicts = []                  # (cycle, port, frame, model verdict)
        self.discarded_results = []         # expected RESULT blocks a reset discarded before they left
        self.uncertain_ranges = 0           # completed ranges whose counting a reset may have cut short
        self.results_checked = {0: 0, 1: 0}   # RESULT frames per TX port already compared
        self.pending = {0: [], 1: []}          # expected RESULT blocks per TX port not yet compared
        self.n_model_results = 0
        self.n_resets = 0
        self.src = self.sink = None

    # outputs that must be 0/1 at every edge (tdata and tlast only matter while tvalid is high)
    CONTROL_OUTPUTS = ("s_axis_0_tready", "s_axis_1_tready", "m_axis_0_tvalid", "m_axis_1_tvalid", "busy",
                       "counter_value")

    @classmethod
    async def create(cls, dut, reset=True, **kw):
        """Start the clock and the drivers.  reset=False: the node runs from its power-on state
        (initial values) with rst low from time 0; otherwise rst is held for 4 edges first."""
        b = cls(dut, **kw)
        dut.rst.value = 1 if reset else 0
        dut.counter_select.value = 0
        for p in (0, 1):
            getattr(dut, f"s_axis_{p}_tvalid").value = 0
            getattr(dut, f"s_axis_{p}_tlast").value = 0
            getattr(dut, f"s_axis_{p}_tdata").value = 0
            getattr(dut, f"m_axis_{p}_tready").value = 0
        # the first rising edge comes after time 0, once every time-0 event has happened
        cocotb.start_soon(Clock(dut.clk, CLOCK_NS, unit="ns").start(start_high=False))
        await RisingEdge(dut.clk)
        if reset:
            await ClockCycles(dut.clk, 3)
            dut.rst.value = 0
            await ClockCycles(dut.clk, 2)
        undefined = [n for n in cls.CONTROL_OUTPUTS if not getattr(dut, n).value.is_resolvable]
        assert not undefined, (
            f"{', '.join(f'{n}={getattr(dut, n).value}' for n in undefined)} at the first rising edge "
            + ("after the reset" if reset else "after power-on (rst never asserted)")
            + ": outputs must be 0/1 from power-on (combinational logic waiting for a time-0 event?)")
        b.src = [AxiStreamSource(NodeStreamBus.from_prefix(dut, f"s_axis_{p}"), dut.clk, dut.rst,
                                 reset_active_level=True) for p in (0, 1)]
        b.sink = [AxiStreamSink(NodeStreamBus.from_prefix(dut, f"m_axis_{p}"), dut.clk, dut.rst,
                                reset_active_level=True) for p in (0, 1)]
        for d in b.src + b.sink:
            d.log.setLevel("ERROR")         # a reset flushing a frame is what the tests intend
        cocotb.start_soon(b._monitor())
        return b

    # ------------------------------------------------------------------------ wire
    def set_pauses(self, source=0.0, sink=0.0, stall_every=0, stall_cycles=0):
        """Random pauses on all four streams (probabilities per cycle)."""
        for d in self.src:
            d.set_pause_generator(pauses(random.Random(self.rng.random()), source))
        for d in self.sink:
            d.set_pause_generator(pauses(random.Random(self.rng.random()), sink, stall_every, stall_cycles))

    def clear_pauses(self):
        for d in self.src + self.sink:
            d.clear_pause_generator()
            d.pause = False

    async def _monitor(self):
        dut = self.dut
        ins = [(dut.s_axis_0_tvalid, dut.s_axis_0_tready, dut.s_axis_0_tlast, dut.s_axis_0_tdata),
               (dut.s_axis_1_tvalid, dut.s_axis_1_tready, dut.s_axis_1_tlast, dut.s_axis_1_tdata)]
        outs = [(dut.m_axis_0_tvalid, dut.m_axis_0_tready, dut.m_axis_0_tlast, dut.m_axis_0_tdata),
                (dut.m_axis_1_tvalid, dut.m_axis_1_tready, dut.m_axis_1_tlast, dut.m_axis_1_tdata)]
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            if _int(dut.rst, "rst"):
                for p in (0, 1):
                    if self.in_partial[p]:
                        self.model.counters[(p, "truncated")] += 1
                        self.in_partial[p] = []
                    if self.out_partial[p]:
                        self.tx_cut[p] += 1
                        self.out_partial[p] = 0
                continue
            for p, (valid, ready, last, data) in enumerate(ins):      # port 0 first: the tie rule
                if _int(valid, f"s_axis_{p}_tvalid") and _int(ready, f"s_axis_{p}_tready"):
                    self.in_partial[p].append(int(data.value))
                    self.last_beat = self.cycle
                    if _int(last, f"s_axis_{p}_tlast"):
                        frame, self.in_partial[p] = self.in_partial[p], []
                        self.accepted.append((self.cycle, p, frame))
                        self.verdicts.append((self.cycle, p, frame, self.model.process(p, frame)))
            for p, (valid, ready, last, data) in enumerate(outs):
                if _int(valid, f"m_axis_{p}_tvalid") and _int(ready, f"m_axis_{p}_tready"):
                    self.out_partial[p] += 1
                    self.last_beat = self.cycle
                    if _int(last, f"m_axis_{p}_tlast"):
                        self.out_partial[p] = 0

    def send(self, port, frame):
        self.src[port].send_nowait(AxiStreamFrame(W.to_bytes(frame)))

    def _drain_sinks(self):
        for p in (0, 1):
            while not self.sink[p].empty():
                f = self.sink[p].recv_nowait()
                self.out_frames[p].append((self.cycle, W.from_bytes(f.tdata)))

    def observed(self, port, cls):
        self._drain_sinks()
        return [f for _, f in self.out_frames[port] if W.classify(f) == cls]

    def responses(self):
        return [W.decode_response(f) for f in self.observed(0, W.CLASS_CONTROL)]

    # a wait fails when no beat has moved on any stream for this many cycles (the node is stuck),
    # or at its own cycle limit
    QUIET_LIMIT = 3000

    async def wait_until(self, condition, what, max_cycles=20000):
        start = self.cycle
        while True:
            self._drain_sinks()
            if condition():
                return
            quiet = self.cycle - max(self.last_beat, start)
            if quiet > self.QUIET_LIMIT or self.cycle - start > max_cycles:
                reason = (f"no beat moved on any stream for {quiet} cycles" if quiet > self.QUIET_LIMIT
                          else f"not within {max_cycles} cycles")
                raise AssertionError(
                    f"{self.label + ': ' if self.label else ''}waiting for {what}: {reason} "
                    f"(busy={self.dut.busy.value}, cycle {self.cycle}; received {len(self.responses())} of "
                    f"{len(self.model.responses)} expected responses, RESULT frames "
                    f"{[len(self.observed(p, W.CLASS_RESULT)) for p in (0, 1)]})")
            await RisingEdge(self.dut.clk)

    async def wait_responses(self, n=None, max_cycles=20000):
        """Until every CONTROL request processed so far (or `n` responses) has been answered."""
        n = len(self.model.responses) if n is None else n
        await self.wait_until(lambda: len(self.responses()) >= n, f"{n} CONTROL responses", max_cycles)
        return self.responses()[n - 1] if n else None

    async def request(self, frame, port=0, max_cycles=20000):
        """Send one CONTROL request and wait for its response; check it against the model."""
        before = len(self.model.responses)
        self.send(port, frame)
        await self.wait_until(lambda: len(self.model.responses) > before, "request accepted", max_cycles)
        await self.wait_responses(before + 1, max_cycles)
        got, want = self.responses()[before], self.model.responses[before]
        assert got == want, f"response {before}: node sent {got}, the protocol says {want}"
        return got

    # ------------------------------------------------------------------------ operations
    async def start_operation(self, op_id, generation, policy, in_fmt, out_fmt, count, contributors,
                              recipients, mode=W.ALLREDUCE, port=0):
        """STAGE + COMMIT, both answered ACK (COMMITs NACKed BUSY are sent again)."""
        r = await self.request(W.stage(op_id, generation, policy, in_fmt, out_fmt, count, contributors, recipients,
                                       mode), port)
        assert r.ack, f"STAGE answered {r}"
        for _ in range(200):
            r = await self.request(W.commit(op_id, generation), port)
            if r.ack:
                return self.model.active
            assert r.reason_name == "BUSY", f"COMMIT answered {r}"
            await ClockCycles(self.dut.clk, 20)
        raise AssertionError("COMMIT still BUSY after 200 attempts")

    def contribute(self, op, values, port_of=None, cut=None, order="shuffle"):
        """Send DATA frames: values[c] = the E patterns of contributor c.  Frames are cut at
        multiples of 16 elements (`cut`: max elements per frame, a multiple of 16)."""
        frames = []
        for c, vec in values.items():
            port = port_of(c) if port_of else c % 2
            step = cut or max(W.RANGE, (len(vec) + W.RANGE - 1) // W.RANGE * W.RANGE)
            for off in range(0, len(vec), step):
                frames.append((port, W.data(op.op_id, op.generation, c, op.in_fmt, off, vec[off:off + step])))
        if order == "shuffle":
            self.rng.shuffle(frames)
        for port, f in frames:
            self.send(port, f)
        return frames

    async def wait_sent(self, max_cycles=40000):
        """Until every frame handed to the sources has been accepted whole."""
        await self.wait_until(lambda: all(d.empty() and d.idle() for d in self.src) and
                              not any(self.in_partial.values()), "all frames sent", max_cycles)
        await ClockCycles(self.dut.clk, 2)       # the monitor has recorded the last edge

    async def wait_idle(self, max_cycles=40000):
        """Until every frame sent was processed and answered, every expected RESULT frame left, and busy is low."""
        await self.wait_sent(max_cycles)
        await self.wait_responses(max_cycles=max_cycles)
        self.check_responses()                   # a wrong answer fails now, not after a long wait
        self._sync_expected()
        want = {p: len(self.pending[p]) for p in (0, 1)}
        await self.wait_until(lambda: all(len(self._unchecked(p)) >= want[p] for p in (0, 1)),
                              f"RESULT frames (per TX port {want})", max_cycles)
        await self.wait_until(lambda: int(self.dut.busy.value) == 0, "busy low after the last RESULT frame",
                              max_cycles)
        await ClockCycles(self.dut.clk, 10)

    # ------------------------------------------------------------------------ scoreboard
    def _sync_expected(self):
        for e in self.model.results[self.n_model_results:]:
            for p in (0, 1):
                if e.op.recipients >> p & 1:
                    self.pending[p].append(e)
        self.n_model_results = len(self.model.results)

    def _unchecked(self, port):
        return self.observed(port, W.CLASS_RESULT)[self.results_checked[port]:]

    def check(self, check_w=False, cut_by_reset=False):
        """Compare the responses and RESULT frames received since the last check with the model.
        `cut_by_reset`: expected blocks that have not left are discarded instead of missing."""
        self._drain_sinks()
        self._sync_expected()
        self.check_responses()
        got_r, want_r = self.responses(), self.model.responses
        assert len(got_r) == len(want_r), (f"{len(got_r)} CONTROL responses received, {len(want_r)} expected; "
                                           f"missing: {[str(r) for r in want_r[len(got_r):][:4]]}")
        for p in (0, 1):
            frames = self._unchecked(p)
            self._compare_results(p, [W.decode_result(f) for f in frames], self.pending[p], check_w, cut_by_reset)
            self.results_checked[p] += len(frames)
            self.pending[p] = []
        strays = [(p, W.classify(f)) for p in (0, 1) for _, f in self.out_frames[p]
                  if W.classify(f) not in (W.CLASS_CONTROL, W.CLASS_RESULT) or
                  (p == 1 and W.classify(f) == W.CLASS_CONTROL)]
        assert not strays, f"frames that should not leave the node: (TX port, class) {strays}"

    def check_responses(self):
        """The responses received so far equal the protocol's, in order."""
        for i, (g, w) in enumerate(zip(self.responses(), self.model.responses)):
            assert g == w, f"response {i}: node sent {g}, the protocol says {w}"

    def _compare_results(self, port, decoded, want, check_w, cut_by_reset):
        by_key = {}
        for e in want:
            by_key[(e.op.op_id, e.op.generation, e.block)] = e
        keys = [(d.op_id, d.generation, d.block) for d in decoded]
        unknown = [k for k in keys if k not in by_key]
        assert not unknown and len(set(keys)) == len(keys), (
            f"TX port {port}: RESULT frames (op, generation, block) {keys}; expected {sorted(by_key)}")
        if not cut_by_reset:
            assert len(keys) == len(want), (
                f"TX port {port}: {len(keys)} RESULT frames {keys}, expected {len(want)}: {sorted(by_key)}")
        else:
            self.discarded_results.extend(e for k, e in by_key.items() if k not in keys)
        # blocks of one operation leave in any order, operations one after the other
        order = [self.model.operations.index(by_key[k].op) for k in keys]
        assert order == sorted(order), f"TX port {port}: RESULT frames of operations interleaved: {keys}"
        for d, k in zip(decoded, keys):
            self._compare_block(port, d, by_key[k], check_w)

    def _compare_block(self, port, got, exp, check_w):
        """One RESULT frame against its expected block; every difference is reported at once."""
        where = f"{self.label + ': ' if self.label else ''}TX port {port}, {exp.op}, block {exp.block}"
        problems = []
        if (got.offset, got.count) != (exp.offset, exp.count):
            problems.append(f"header offset/count {got.offset}/{got.count}, expected {exp.offset}/{exp.count}")
        if check_w and got.kulisch_w != self.kulisch_w:
            problems.append(f"header KULISCH_W field [104:96] is {got.kulisch_w}, the node is built with "
                            f"{self.kulisch_w}")
        got_groups = [(g.fmt, g.count) for g in got.groups]
        want_groups = [(f, len(v)) for f, v in exp.groups]
        if got_groups != want_groups:
            problems.append(f"groups (format, count) {got_groups}, expected {want_groups}")
        if any(g.fmt == W.EXACT for g in got.groups) and not 278 <= got.kulisch_w <= 508:
            problems.append(f"EXACT values with header KULISCH_W field {got.kulisch_w}: cannot tell the "
                            "accumulator's bits from the rest")
        contributions = exp.op.elements[exp.offset:exp.offset + exp.count]
        bad = []
        i = 0
        for g, (fmt, values) in zip(got.groups, exp.groups):
            for v_got, v_want in zip(g.values, values):
                inputs = [(W.FORMATS[f], hex(p)) for f, p in contributions[i]]
                if fmt == W.EXACT:
                    got_t = (v_got.sigma, v_got.nan, v_got.pos_inf, v_got.neg_inf, v_got.overflow)
                    wh = got.kulisch_w
                    # sigma is bits [507:0] whatever W ([W-1:0] the accumulator, [507:W] the rest); the
                    # overflow bit must say whether sigma fits the W bits the header names
                    if 278 <= wh <= 508 and v_got.overflow != (not -(1 << (wh - 1)) <= v_got.sigma < (1 << (wh - 1))):
                        bad.append(f"element {exp.offset + i}: overflow bit {int(v_got.overflow)} for sigma "
                                   f"{v_got.sigma:#x} and W = {wh} (header)")
                    if got_t != tuple(v_want):
                        bad.append(f"element {exp.offset + i}: sigma {v_got.sigma:#x} nan/+inf/-inf/overflow "
                                   f"{[int(x) for x in got_t[1:]]}, expected sigma {v_want[0]:#x} "
                                   f"{[int(x) for x in v_want[1:]]} (inputs {inputs})")
                elif v_got != v_want:
                    bad.append(f"element {exp.offset + i}: {W.FORMATS[fmt]} {v_got:#x}, expected {v_want:#x} "
                               f"(inputs in admission order {inputs})")
                i += 1
        if bad:
            problems.append(f"{len(bad)} wrong elements:\n    " + "\n    ".join(bad[:8]))
        last = got.groups[-1]
        if last.fmt != W.EXACT and exp.offset + exp.count == exp.op.count and last.count % W.RANGE:
            # lanes past E in the last range are sent as 0
            w, per = W.ELEMENT_BITS[last.fmt], W.PER_BEAT[last.fmt]
            pad = range(last.count, -(-last.count // W.RANGE) * W.RANGE)
            nonzero = [j for j in pad if W.bits(last.beats[j // per], w * (j % per) + w - 1, w * (j % per))]
            if nonzero:
                problems.append(f"lanes past E not 0 at group positions {nonzero}")
        assert not problems, f"{where}:\n  " + "\n  ".join(problems)

    async def read_counter(self, select):
        self.dut.counter_select.value = select
        await ClockCycles(self.dut.clk, 3)
        return _int(self.dut.counter_value, "counter_value")

    async def read_counters(self):
        return {name: await self.read_counter(sel) for name, sel in W.all_counter_selects().items()}

    async def wait_counter(self, name, value, max_cycles=20000):
        sel = W.all_counter_selects()[name]
        for _ in range(max_cycles // 3):
            if await self.read_counter(sel) >= value:
                return
        raise AssertionError(f"counter {name} did not reach {value} within {max_cycles} cycles")

    async def check_counters(self):
        """Every counter of the map equals the model's (sent-frame counters: what the monitors saw)."""
        got = await self.read_counters()
        want = dict(self.model.counters)
        seen = {p: len(self.observed(p, W.CLASS_RESULT)) for p in (0, 1)}
        bad = []
        for name, g in got.items():
            if name == "results_sent":
                lo = sum(seen.values())
                hi = lo + sum(self.tx_cut.values())
                if not lo <= g <= hi:
                    bad.append(f"results_sent {g}, {lo}..{hi} RESULT frames were sent (or cut by a reset)")
            elif name == "responses_sent":
                if g != len(self.responses()):
                    bad.append(f"responses_sent {g}, {len(self.responses())} responses were sent")
            elif name == "ranges_completed":
                if not want[name] - self.uncertain_ranges <= g <= want[name]:
                    bad.append(f"ranges_completed {g}, expected {want[name] - self.uncertain_ranges}..{want[name]}")
            elif g != want[name]:
                bad.append(f"{name}: node {g}, expected {want[name]}")
        unused = [s for s in (13, 14, 15, 29, 30, 31, 35, 48, 63)
                  if await self.read_counter(s) != 0]
        assert not unused, f"counter selections outside the map read non-zero: {unused}"
        assert not bad, "counters differ:\n  " + "\n  ".join(bad)
        return got

    async def reset(self, cycles=2):
        """Assert rst for `cycles` edges; the model forgets everything but the counters.
        Everything received so far is checked first; expected RESULT blocks that had not
        left are discarded (so does the node)."""
        self.check(cut_by_reset=True)
        op = self.model.active
        if op is not None:
            # ranges the model counted as completed but whose completion the reset may have cut
            lost = {e.block for e in self.discarded_results if e.op is op}
            self.uncertain_ranges += sum(1 for r in range(op.n_ranges) if op.range_complete(r) and
                                         (r * W.RANGE // W.BLOCK in lost or not op.block_complete(r * W.RANGE //
                                                                                                   W.BLOCK)))
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, cycles)
        self.dut.rst.value = 0
        self.model.reset()
        self.n_resets += 1
        await ClockCycles(self.dut.clk, 2)
        self._drain_sinks()


# ---------------------------------------------------------------------------- stimulus values
def patterns(rng, fmt, n, style):
    """n input patterns of `fmt`.  Styles: 'int' small integers, 'half' short binary fractions,
    'wide' random finite values over the whole range, 'any' random patterns (specials included)."""
    out = []
    w = W.ELEMENT_BITS[fmt]
    for _ in range(n):
        if style == "any" or (fmt != W.INT8 and style == "wide" and rng.random() < 0.02):
            p = rng.getrandbits(w)
        elif fmt == W.INT8:
            p = rng.randint(-60, 60) & 0xFF if style in ("int", "half") else rng.getrandbits(8)
        else:
            if style == "int":
                v = R.Fraction(rng.randint(-60, 60))
            elif style == "half":
                v = R.Fraction(rng.randint(-2000, 2000), 1 << rng.randint(1, 6))
            else:
                e_bits, f_bits = R.FLOAT_LAYOUT[fmt]
                p = rng.getrandbits(w)
                exp = (p >> f_bits) & ((1 << e_bits) - 1)
                if exp == (1 << e_bits) - 1:        # keep 'wide' finite
                    p &= ~(1 << f_bits)
                out.append(p)
                continue
            p = R.round_exact(fmt, v)
        out.append(p)
    return out


def special_patterns(fmt):
    """NaN, +inf, -inf, -0 of a float input format (INT8 has none)."""
    e_bits, f_bits = R.FLOAT_LAYOUT[fmt]
    top = ((1 << e_bits) - 1) << f_bits
    sign = 1 << (e_bits + f_bits)
    return {"nan": top | 1, "+inf": top, "-inf": sign | top, "-0": sign}
