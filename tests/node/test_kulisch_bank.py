"""prism_kulisch_bank (one lane of the KULISCH_FIXED stores: carry-save rows, the merge resolving the
carries) against a deliberately plain reference: each row is one Python int, the extended sum
E = signed(state) + wraps * 2^W mod 2^(W + WB), and a merge reads (state, wraps) off E.  The golden
model (golden.arith.kulisch, wrap counting with an unbounded counter) checks the reference itself
wherever the WB-bit counter holds the wraps.

Every cycle both ports may contribute and a merge may be requested, with random and adversarial
traffic: long carry chains (-1 then +1, all-ones patterns), alternating signs of the largest terms,
sums wrapping past the top and the bottom (and, with EXACT words, the wrap counter itself), many
contributions to one row back to back (the bypass), first contributions that replace a row, merges
of rows only port A, only port B or both hold.  Every output bit is compared on the merge's cycle;
the default back end also replays the run on the converted Verilog and compares every output on
every cycle."""
import random

import pytest
from myhdl import Signal, block, instance, intbv

from cosim.sim import toolchain
from cosim.sim.tbutil import clock_gen, reset_pulse, sync_reset
from golden.arith.formats import WIDTH_BITS, to_kulisch_term
from golden.arith.kulisch import KulischAccumulator
from hdl.node.prism_kulisch_bank import (MERGE_LATENCY, prism_kulisch_bank, row_bits, row_to_state_wraps, row_value,
                                         segments)
from spec.formats import FMT_BF16, FMT_FP16, FMT_FP32, FMT_INT8, KULISCH_WRAP_BITS, exact_input_limit

WB = KULISCH_WRAP_BITS
FMT_CODE = {"int8": FMT_INT8, "fp16": FMT_FP16, "bf16": FMT_BF16, "fp32": FMT_FP32}
FP32_MAX, FP32_NMAX, FP32_MIN, FP32_NMIN = 0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001


def exact_word(width, total, flags):
    """The word prism_exact_operand forms for a partial: {-inf, +inf, nan, E} (E = total mod 2^(W+WB);
    a partial outside the rows' range is a NaN)."""
    ew = width + WB
    nan, pinf, ninf = flags & 1, flags >> 1 & 1, flags >> 2 & 1
    if not -exact_input_limit(width) <= total < exact_input_limit(width):
        return (1 | pinf << 1 | ninf << 2) << ew
    return (total & ((1 << ew) - 1)) | (nan | pinf << 1 | ninf << 2) << ew


class Reference:
    """Rows of both ports as plain ints (E, flags); the golden accumulators beside them."""

    def __init__(self, width, rows):
        self.w = width
        self.mask = (1 << (width + WB)) - 1
        self.e = [[0] * rows for _ in range(2)]
        self.flags = [[0] * rows for _ in range(2)]
        self.gold = [[KulischAccumulator(width) for _ in range(rows)] for _ in range(2)]

    def add(self, port, row, first, contribution):
        if first:
            self.e[port][row], self.flags[port][row] = 0, 0
            self.gold[port][row] = KulischAccumulator(self.w)
        kind = contribution[0]
        g = self.gold[port][row]
        if kind == "element":
            _, fmt, bits = contribution
            term, nan, pinf, ninf = to_kulisch_term(fmt, bits)
            self.e[port][row] = (self.e[port][row] + term) & self.mask
            self.flags[port][row] |= nan | pinf << 1 | ninf << 2
            g.add(fmt, bits)
        else:
            _, total, flags = contribution
            word = exact_word(self.w, total, flags)
            self.e[port][row] = (self.e[port][row] + word) & self.mask
            self.flags[port][row] |= word >> (self.w + WB)
            g.add_exact(total, flags)

    def merge(self, row, use_a, use_b):
        """(state, nan, +inf, -inf, overflow, wrap_sign, wraps) of the merged row."""
        e = ((self.e[0][row] if use_a else 0) + (self.e[1][row] if use_b else 0)) & self.mask
        fl = (self.flags[0][row] if use_a else 0) | (self.flags[1][row] if use_b else 0)
        state, wraps = row_to_state_wraps(e, self.w, WB)
        out = (state, fl & 1, fl >> 1 & 1, fl >> 2 & 1, int(wraps != 0), wraps >> (WB - 1), wraps)
        # the golden model agrees wherever the counter has not wrapped itself
        g = KulischAccumulator(self.w)
        if use_a:
            g.merge(self.gold[0][row])
        if use_b:
            g.merge(self.gold[1][row])
        if -(1 << (WB - 1)) <= g.wraps < (1 << (WB - 1)):
            gw = g.wraps & ((1 << WB) - 1)
            assert out == (g.state, g.nan, g.pos_inf, g.neg_inf, int(g.overflow), int(g.wraps < 0), gw)
        return out


def run_bank(backend, width, cycles, rows=4):
    """cycles: per cycle a dict with optional 'a'/'b': (row, contribution), 'm': row, 'exact', 'fmt',
    'clear' (a new operation: every row's next contribution is its first).  Returns (got, want) per merge."""
    clk, rst = Signal(bool(0)), sync_reset()
    fmt, exact = Signal(intbv(0)[2:]), Signal(bool(0))
    ports = [dict(valid=Signal(bool(0)), row=Signal(intbv(0)[8:]), first=Signal(bool(0)),
                  data=Signal(intbv(0)[32:]), xword=Signal(intbv(0)[width + WB + 3:])) for _ in range(2)]
    m_valid, m_row, m_use_a, m_use_b = Signal(bool(0)), Signal(intbv(0)[8:]), Signal(bool(0)), Signal(bool(0))
    o_state, o_wraps = Signal(intbv(0)[width:]), Signal(intbv(0)[WB:])
    o_flags = [Signal(bool(0)) for _ in range(5)]       # nan, +inf, -inf, overflow, wrap_sign
    results, done = [], [False]
    factory = toolchain.select(prism_kulisch_bank, backend)

    @block
    def bench():
        a, b = ports
        dut = factory(clk, rst, fmt, exact, a["valid"], a["row"], a["first"], a["data"], a["xword"],
                      b["valid"], b["row"], b["first"], b["data"], b["xword"], m_valid, m_row, m_use_a, m_use_b,
                      o_state, *o_flags, o_wraps, ROWS=rows, WRAP_BITS=WB)

        @instance
        def drive():
            ref = Reference(width, rows)
            written = [set(), set()]
            last_write = {}                 # (port, row) -> cycle of its last contribution
            pending_x = [0, 0]              # the EXACT word of each port's contribution of the last cycle
            due = {}                        # cycle -> expected merge outputs
            yield rst.negedge
            for n, cyc in enumerate(cycles + [{}] * (MERGE_LATENCY + 2)):
                yield clk.negedge
                if n in due:
                    got = (int(o_state), int(o_flags[0]), int(o_flags[1]), int(o_flags[2]), int(o_flags[3]),
                           int(o_flags[4]), int(o_wraps))
                    results.append((got, due.pop(n)))
                if cyc.get("clear"):
                    written = [set(), set()]
                if "exact" in cyc:
                    exact.next = cyc["exact"]
                if "fmt" in cyc:
                    fmt.next = FMT_CODE[cyc["fmt"]]
                for p, key in enumerate("ab"):
                    port = ports[p]
                    port["xword"].next = pending_x[p]
                    pending_x[p] = 0
                    port["valid"].next = key in cyc
                    if key in cyc:
                        row, contribution = cyc[key]
                        first = row not in written[p]
                        written[p].add(row)
                        last_write[(p, row)] = n
                        port["row"].next, port["first"].next = row, first
                        if contribution[0] == "element":
                            port["data"].next = contribution[2]
                        else:
                            port["data"].next = 0x3F800000 ^ n      # ignored under EXACT
                            pending_x[p] = exact_word(width, contribution[1], contribution[2])
                        ref.add(p, row, first, contribution)
                m_valid.next = "m" in cyc
                if "m" in cyc:
                    row = cyc["m"]
                    assert all(last_write.get((p, row), -9) <= n - 2 for p in range(2)), "merge too early"
                    use_a, use_b = row in written[0], row in written[1]
                    m_row.next, m_use_a.next, m_use_b.next = row, use_a, use_b
                    due[n + MERGE_LATENCY] = ref.merge(row, use_a, use_b)
            done[0] = not due
        return dut, clock_gen(clk), reset_pulse(clk, rst), drive

    toolchain.run(bench(), duration=10 * (len(cycles) + MERGE_LATENCY + 20), backend=backend)
    assert done[0], "test bench ran out of time"
    return results


def check(results):
    assert results, "no merge was checked"
    bad = [(i, got, want) for i, (got, want) in enumerate(results) if got != want]
    assert not bad, f"{len(bad)} of {len(results)} merges differ; first: {bad[0]}"


def element(rng, fmt):
    bits = rng.getrandbits(WIDTH_BITS[fmt])
    if fmt == "fp32" and rng.random() < 0.4:
        bits = rng.choice([FP32_MAX, FP32_NMAX, FP32_MIN, FP32_NMIN, 0x80000000, 0x7F800000, 0xFF800000,
                           0x7FC00001, rng.getrandbits(23), 0x7F000000 | rng.getrandbits(23)])
    return ("element", fmt, bits)


def mergeable(cycles, row):
    """No contribution to `row` in the last two cycles, the merge's own included (its read would
    miss it)."""
    return all(c.get(k, (None,))[0] != row for c in cycles[-2:] for k in "ab")


def random_cycles(rng, width, n, rows, exact_share=0.3):
    """Operations of random length, each element (one format) or EXACT, with merges of every row once
    its contributions are in; rows reused across operations (the first contribution replaces)."""
    cycles = []
    limit = exact_input_limit(width)
    while len(cycles) < n:
        is_exact = rng.random() < exact_share
        fmt = rng.choice(["int8", "fp16", "bf16", "fp32"])
        cycles.append({"clear": True, "exact": is_exact, "fmt": fmt})
        for _ in range(rng.randint(5, 60)):
            cyc = {}
            for key in "ab":
                if rng.random() < 0.8:
                    prev = [c[key][0] for c in cycles[-3:] if key in c]
                    row = prev[-1] if prev and rng.random() < 0.5 else rng.randrange(rows)
                    if is_exact:
                        total = rng.choice([rng.randrange(-limit, limit), rng.randrange(-limit, limit) >> rng.randrange(300),
                                            -1, 1, limit - 1, -limit, (1 << (width - 1)) - 1, -(1 << (width - 1)),
                                            limit, -limit - 1])
                        cyc[key] = (row, ("exact", total, rng.choice([0, 0, 0, 1, 2, 4, 8])))
                    else:
                        cyc[key] = (row, element(rng, fmt))
            if rng.random() < 0.3:
                row = rng.randrange(rows)
                if mergeable(cycles + [cyc], row):
                    cyc["m"] = row
            cycles.append(cyc)
        for row in range(rows):                 # end of the operation: merge every row
            cycles.append({})
            cycles.append({})
            cycles.append({"m": row})
    return cycles


@pytest.mark.parametrize("width", [320, 280])
def test_random_traffic_both_ports_and_merges(backend, width):
    rng = random.Random(width + 34)
    check(run_bank(backend, width, random_cycles(rng, width, 900, rows=4)))


def fp32_run(port_rows, seq):
    return [{k: (row, ("element", "fp32", bits)) for k, row in port_rows} for bits in seq]


@pytest.mark.parametrize("width", [320, 280])
def test_adversarial_carry_chains_and_wraps(backend, width):
    """-2^-149 into an empty row (E all ones) then +2^-149 (a carry through every segment), the
    largest terms alternating in sign and wrapping a 280-bit state past the top and the bottom,
    every contribution back to back on one row of both ports; merges of A only, B only, both."""
    cycles = [{"clear": True, "exact": False, "fmt": "fp32"}]
    cycles += fp32_run([("a", 0), ("b", 0)], [FP32_NMIN, FP32_MIN] * 6 + [FP32_NMIN] * 3)
    cycles += [{}, {}, {"m": 0}]
    cycles += fp32_run([("a", 0), ("b", 0)], [FP32_MIN] * 3 + [FP32_NMIN, FP32_MIN] * 2)
    cycles += [{}, {}, {"m": 0}]
    big = [FP32_MAX] * 9 + [FP32_NMAX] * 19 + [FP32_MAX] * 11 + [FP32_MIN, FP32_NMIN] * 3 + [0x80000000, FP32_MIN]
    cycles += fp32_run([("a", 1)], big)
    cycles += fp32_run([("b", 2)], [FP32_NMAX] * 9 + [FP32_MAX] * 3 + [FP32_NMAX] * 5 + [FP32_NMIN])
    cycles += fp32_run([("a", 3), ("b", 3)], [FP32_MAX, FP32_NMAX] * 5 + [FP32_MAX] * 8)
    cycles += [{}, {}, {"m": 1}, {"m": 2}, {"m": 3}, {"m": 0}]
    # a row replaced by its first contribution while the bypass holds another row's word
    cycles += [{"clear": True}]
    cycles += fp32_run([("a", 1), ("b", 1)], [FP32_NMAX])
    cycles += fp32_run([("a", 1), ("b", 2)], [FP32_NMIN, FP32_MIN])
    cycles += [{}, {}, {"m": 1}, {"m": 2}, {"m": 3}]
    results = run_bank(backend, width, cycles)
    check(results)
    if width == 280:
        assert any(w[4] for _, w in results) and any(w[4] and w[5] for _, w in results)   # wrapped both ways


@pytest.mark.parametrize("width", [320, 280])
def test_exact_words_wrap_the_state_and_the_counter(backend, width):
    """EXACT partials at the edge of the input range, added until the WB-bit wrap counter wraps
    itself (both ways): the row is the sum modulo 2^(W + WB), as the (state, wraps) rows were;
    out-of-range partials are NaN contributions; carry chains through the whole word."""
    limit = exact_input_limit(width)
    top = limit - 1
    cycles = [{"clear": True, "exact": True}]
    seq_a = [top] * 40 + [-limit] * 70 + [1, -1, -1]
    seq_b = [-1, 1] * 4 + [(1 << (width - 1)) - 1, 1, -(1 << (width - 1)), -1] * 3 + [limit, -limit - 1, 5]
    for k in range(max(len(seq_a), len(seq_b))):
        cyc = {}
        if k < len(seq_a):
            cyc["a"] = (k % 2, ("exact", seq_a[k], 0))
        if k < len(seq_b):
            cyc["b"] = (0, ("exact", seq_b[k], 2 if k == 3 else 0))
        cycles.append(cyc)
        if k % 17 == 16:
            cycles += [{}, {}, {"m": 0}, {"m": 1}]
    cycles += [{}, {}, {"m": 0}, {"m": 1}, {"m": 2}]
    check(run_bank(backend, width, cycles))


def test_row_layout():
    """Segments tile E; a row's value is its segments plus its pending carries."""
    for width in (320, 280):
        segs = segments(width, WB)
        assert segs[0][0] == 0 and all(a + n == b for (a, n), (b, _) in zip(segs, segs[1:]))
        assert segs[-1] == (width - 1, WB + 1) and all(n <= 32 for _, n in segs[:-1])
        ew = width + WB
        assert row_bits(width, WB) == ew + 3 + len(segs) - 1
        row = ((1 << ew) - 1) | 1 << (ew + 3) | 1 << ew     # -1 plus a carry into segment 1 (2^32), NaN
        assert row_value(row, width, WB) == ((1 << 32) - 1, 1, 0, 0)
