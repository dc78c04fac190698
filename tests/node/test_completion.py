"""prism_completion against a reference tracker, cycle by cycle: the counts per range, the order
completed ranges enter the read-out FIFO (port 0's in increasing order, then port 1's others),
a range both ports hit counted twice, `ranges_done` on the second edge after the completing
events and the head `cmd` (a register) on the third, back-pressure on the head, op.clear and
reset."""
import random
from collections import deque

import pytest
from myhdl import Signal, intbv

from cosim.sim import toolchain
from cosim.sim.pipeline import run_per_cycle
from hdl.node.prism_buses import ActiveOp, RangeEvents, ReadoutCmd
from hdl.node.prism_completion import prism_completion


class Tracker:
    """The block's behaviour, one edge at a time: contributions counted per range (4 bits),
    a range entering the FIFO when its count reaches `expected`.  The events and `expected` are
    registered before they are counted, and the FIFO's head moves into the `cmd` register when
    that is empty or taken."""

    def __init__(self):
        self.counts = {}
        self.fifo = deque()
        self.done = 0
        self.head = None                # the cmd register's range (None: not valid)
        self.events = ((0, 0, 1), (0, 0, 1))
        self.expected = 0

    def outputs(self):
        return (self.head is not None, self.head, self.done)

    def edge(self, rst, clear, expected, ev0, ev1, ready):
        (v0, r0, n0), (v1, r1, n1) = self.events
        counted_expected = self.expected
        self.events = ((0, 0, 1), (0, 0, 1)) if rst or clear else (ev0, ev1)
        self.expected = expected
        self.done = 0
        if rst or clear:
            if clear and not rst:
                self.counts = {}        # a reset leaves the counts: an op.clear comes before any event
            self.fifo.clear()
            self.head = None
            return
        if self.head is None or ready:
            self.head = self.fifo.popleft() if self.fifo else None
        rows0 = [(r0 + j) % 256 for j in range(min(n0, 4))] if v0 else []
        rows1 = [(r1 + j) % 256 for j in range(min(n1, 4))] if v1 else []
        hits = [(r, 2 if r in rows1 else 1) for r in rows0] + [(r, 1) for r in rows1 if r not in rows0]
        for r, inc in hits:
            c = self.counts.get(r, 0) + inc
            self.counts[r] = c % 16
            if c == counted_expected:
                self.fifo.append(r)
                self.done += 1


def keep_the_ready_contract(cycles):
    """The read-out's side of cmd's handshake: ready high whenever cmd is empty (prism_arrival_banks
    keeps it so, and the block takes the ready as "empty or taken").  When cmd is empty comes from
    the reference, which the block must match on every cycle anyway."""
    ref, out = Tracker(), []
    for cycle in cycles:
        if ref.head is None:
            cycle = cycle[:5] + (1,)
        out.append(cycle)
        ref.edge(*cycle)
    return out


def run(cycles, backend):
    """cycles: [(rst, clear, expected, (valid, row, n) of port 0, of port 1, ready)] from edge 1 on;
    returns [(valid, row or None, ranges_done)] after each edge, with the reference's."""
    cycles = keep_the_ready_contract(cycles)
    clk, rst = Signal(bool(0)), Signal(bool(0))
    op, ev0, ev1, cmd = ActiveOp(), RangeEvents(), RangeEvents(), ReadoutCmd()
    done = Signal(intbv(0)[4:])

    def load(cycle):
        r, clear, expected, e0, e1, ready = cycle
        rst.next, op.clear.next, op.expected.next, cmd.ready.next = r, clear, expected, ready
        for ev, (v, row, n) in ((ev0, e0), (ev1, e1)):
            ev.valid.next, ev.row.next, ev.n.next = v, row, n

    got = run_per_cycle(toolchain.select(prism_completion, backend), (clk, rst, op, ev0, ev1, cmd, done), clk, cycles,
                        load, lambda: (bool(cmd.valid), int(cmd.row) if cmd.valid else None, int(done)), backend,
                        registered=True)
    ref, want = Tracker(), []
    for cycle in cycles:
        ref.edge(*cycle)
        want.append(ref.outputs())
    return got, want


IDLE = (0, 0, 1)


def operation_cycles(rng, rows, expected, ready_p):
    """An operation over ranges 0 .. rows - 1, each receiving `expected` contributions from events
    of 1 .. 4 consecutive ranges on either port (both ports on one range in a cycle included)."""
    left = {r: expected for r in range(rows)}
    out = [(0, 1, expected, IDLE, IDLE, 0)]
    while any(left.values()) or rng.random() < 0.9:
        events, taken = [], set()
        for _ in (0, 1):
            open_rows = [r for r in range(rows) if left[r] > (1 if r in taken else 0)]
            if not open_rows or rng.random() < 0.25:
                events.append((0, rng.randrange(256), rng.randint(1, 4)))
                continue
            start = rng.choice(open_rows)
            n = 1
            while (n < 4 and start + n < rows and left[start + n] > (1 if start + n in taken else 0)
                   and rng.random() < 0.7):
                n += 1
            for r in range(start, start + n):
                left[r] -= 1
                taken.add(r)
            events.append((1, start, n))
        out.append((0, 0, expected, events[0], events[1], int(rng.random() < ready_p)))
        if not any(left.values()) and rng.random() < 0.5:
            break
    return out


def test_ranges_complete_in_order_with_their_count(backend):
    rng = random.Random(7)
    cycles = []
    for rows, expected, ready_p in [(40, 1, 0.5), (64, 3, 0.9), (20, 8, 0.2), (256, 2, 0.7), (33, 5, 1.0)]:
        cycles += operation_cycles(rng, rows, expected, ready_p)
        cycles += [(0, 0, expected, IDLE, IDLE, 1)] * 4
    got, want = run(cycles, backend)
    assert got == want
    assert sum(d for _, _, d in got) == 40 + 64 + 20 + 256 + 33


def test_a_cycles_completions_enter_port_0s_first_in_increasing_order(backend):
    e = (0, 0, 2)
    ops = [
        (0, 1, 1, IDLE, IDLE, 0),
        (0, 0, 1, (1, 20, 3), (1, 5, 2), 0),           # 20, 21, 22, then 5, 6
        (0, 0, 1, (1, 255, 3), IDLE, 0),               # 255, 0, 1: port 0's order across the wrap
        (0, 0, 1, IDLE, IDLE, 1), (0, 0, 1, IDLE, IDLE, 1), (0, 0, 1, IDLE, IDLE, 1),
        (0, 0, 1, IDLE, IDLE, 1), (0, 0, 1, IDLE, IDLE, 1), (0, 0, 1, IDLE, IDLE, 1),
        (0, 0, 1, IDLE, IDLE, 1), (0, 0, 1, IDLE, IDLE, 1), (0, 0, 1, IDLE, IDLE, 1),
        (0, 1, 2, IDLE, IDLE, 0),
        (0, 0, 2, (1, 250, 4), (1, 252, 4), 1),        # 252, 253 hit twice: complete
        (0, 0, 2, (1, 250, 2), (1, 254, 2), 1),        # 250, 251, then 254, 255
        (0, 0, 2, e, e, 1), (0, 0, 2, e, e, 1), (0, 0, 2, e, e, 1), (0, 0, 2, e, e, 1), (0, 0, 2, e, e, 1),
        (0, 0, 2, e, e, 1), (0, 0, 2, e, e, 1), (0, 0, 2, e, e, 1),
    ]
    got, want = run(ops, backend)
    assert got == want
    taken = [got[i - 1][1] for i in range(1, len(ops)) if ops[i][5] and got[i - 1][0]]
    assert taken == [20, 21, 22, 5, 6, 255, 0, 1, 252, 253, 250, 251, 254, 255]
    assert [d for _, _, d in got][:4] == [0, 0, 5, 3]          # counted at the second edge after the events
    assert [d for _, _, d in got][12:16] == [0, 0, 2, 4]


def test_clear_and_reset_empty_the_fifo(backend):
    rng = random.Random(11)
    cycles = operation_cycles(rng, 48, 2, 0.1)
    cycles = cycles[:len(cycles) // 2] + [(0, 1, 4, (1, 3, 4), (1, 3, 4), 1)]     # events at a clear: dropped
    cycles += operation_cycles(rng, 48, 4, 0.1)[1:]
    cut = len(cycles) - 5
    cycles = cycles[:cut] + [(1, 0, 4, (1, 7, 2), IDLE, 1), (1, 0, 4, IDLE, IDLE, 0)]
    cycles += operation_cycles(rng, 30, 1, 0.6)
    got, want = run(cycles, backend)
    assert got == want


@pytest.mark.parametrize("seed", [1, 2])
def test_any_events_count_like_the_reference(backend, seed):
    """Events with no regard to a range's expected count (counts wrap at 16), short operations."""
    rng = random.Random(seed)
    cycles, quiet = [], True
    for _ in range(600):
        r = rng.random() < 0.01
        clear = rng.random() < 0.03
        quiet = (quiet or r) and not (clear and not r)
        if clear:
            expected = rng.randint(1, 8) if rng.random() < 0.9 else rng.randint(0, 15)
        elif not cycles:
            expected = 1
        else:
            expected = cycles[-1][2]

        def event():
            if quiet or rng.random() < 0.3:
                return (0, rng.randrange(256), rng.randint(1, 4))
            return (1, rng.randrange(256) if rng.random() < 0.5 else rng.randrange(8), rng.randint(1, 4))
        cycles.append((int(r), int(clear), expected, event(), event(), int(rng.random() < 0.5)))
    got, want = run(cycles, backend)
    assert got == want


def test_the_verilog_compiles_everywhere(compiles_everywhere):
    text = compiles_everywhere(prism_completion, Signal(bool(0)), Signal(bool(0)), ActiveOp(), RangeEvents(),
                               RangeEvents(), ReadoutCmd(), Signal(intbv(0)[4:]))
    assert "fifo7" in text
