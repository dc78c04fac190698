"""The node's sixteen-lane rounder (hdl/node/prism_round16.py) against the golden model, on both back ends.

prism_round16 has its own datapath (a segmented leading-one search, a normalising shift split
across two register stages, the +1 of a negative value's magnitude folded into the rounding), so
this bench checks its arithmetic as well as the way the lanes are put together: the lane packing,
the specials and overflow flags of the Kulisch path, the FP32 path's decoding and sign of zero,
one format per tile, a result every cycle, each LATENCY cycles after its tile, and idle cycles in
between taken by no stage.  Expected values: the Kulisch path as test_kulisch_round (the golden
accumulator's result), the FP32 path golden.arith.formats.fp32_to_format.
"""
import random

import pytest
from myhdl import ResetSignal, Signal, always, block, instance, intbv

import test_kulisch_round as tkr
from cosim.sim import toolchain
from cosim.sim.tbutil import clock_gen, reset_pulse
from golden.arith import formats
from hdl.node.prism_round16 import LANES, prism_round16

FORMATS = ["int8", "fp16", "bf16", "fp32"]
CODES = {**{f: formats.FORMAT_CODE[f] for f in FORMATS}, "exact": 4, "reserved7": 7}
NAMES = {code: name for name, code in CODES.items()}
LATENCY = 3                  # prism_round16's register stages (STAGES, the read-out's ROUND_STAGES)


def run_round16(backend, tiles, width):
    """tiles: [(from_fp32, fmt, lanes)] with lanes 16 Items (Kulisch) or 16 FP32 patterns.
    Returns the 16 rounded patterns of each tile, in order, each LATENCY cycles after its input."""
    mask = (1 << width) - 1
    stimulus = []
    for i, (fp32, fmt, lanes) in enumerate(tiles):
        values = flags = words = 0
        for lane, x in enumerate(lanes):
            if fp32:
                words |= x << (32 * lane)
            else:
                values |= (x.value & mask) << (width * lane)
                f = (x.nan, x.pos_inf, x.neg_inf, x.overflow, x.wrap_negative)
                flags |= sum(int(bool(b)) << k for k, b in enumerate(f)) << (5 * lane)
        stimulus.append((1, fp32, CODES[fmt], values, flags, words, i))
    seen = run_cycles(backend, stimulus, width)
    got = [(tag, bits) for valid, bits, tag in seen if valid]
    assert [t for t, _ in got] == list(range(len(tiles))), "one result per tile, in order, every cycle"
    assert [valid for valid, _, _ in seen[LATENCY:len(tiles) + LATENCY]] == [1] * len(tiles)
    return [[(b >> (32 * lane)) & 0xFFFFFFFF for lane in range(LANES)] for _, b in got]


def expected(fp32, fmt, x, width):
    if fmt not in formats.FORMATS:
        return 0                                     # EXACT and reserved codes: no rounded pattern
    if fp32:
        return formats.fp32_to_format(fmt, x)
    return tkr.golden_expect(tkr.Item(x.value, fmt, x.nan, x.pos_inf, x.neg_inf, x.overflow,
                                      x.wrap_negative), width)[0]


def check(backend, tiles, width):
    compare(tiles, run_round16(backend, tiles, width), width)


def compare(tiles, outs, width):
    """tiles: [(from_fp32, fmt, lanes)]; outs: each tile's 16 rounded patterns."""
    bad = []
    for (fp32, fmt, lanes), out in zip(tiles, outs):
        for lane, (x, bits) in enumerate(zip(lanes, out)):
            exp = expected(fp32, fmt, x, width)
            if bits != exp:
                bad.append(f"{fmt} lane {lane} {'fp32 %08X' % x if fp32 else x}: got {bits:08X}, expected {exp:08X}")
    assert not bad, f"{len(bad)} wrong; first: {bad[:4]}"


def fp32_patterns(rng):
    """Zeros, subnormals, normals near every format's rounding thresholds, specials, random."""
    fixed = [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
             0x7F800000, 0xFF800000, 0x7FC00000, 0xFF800001, 0x477FE000, 0x477FF000, 0x477FEFFF,
             0x33800000, 0x33000000, 0x33000001, 0xB3000001, 0x3F000000, 0x3FC00000, 0x40200000,
             0x42FE0000, 0x42FF0000, 0xC3000000, 0xC3008000, 0x7F7F8000, 0x7F7F7FFF, 0x38800000]
    return fixed + [rng.getrandbits(32) for _ in range(100)]


def tiles_of(items, fp32, fmts, rng):
    rng.shuffle(items)
    tiles = []
    for k in range(0, len(items) - LANES + 1, LANES):
        tiles.append((fp32, fmts[(k // LANES) % len(fmts)], items[k:k + LANES]))
    return tiles


@pytest.mark.parametrize("width", [320, 280])
def test_kulisch_lanes_adversarial_and_flags(backend, width):
    rng = random.Random(width)
    items = tkr.adversarial_items(width, rng)
    items = rng.sample(items, 640 if backend == "icarus" else 3200) + tkr.flag_items(width, rng)
    check(backend, tiles_of(items, False, list(CODES), rng), width)


# half an ulp of each format below the leading one (places): where its rounding happens
TIE_PLACE = {"fp32": 24, "bf16": 8, "fp16": 11}


def leading_one_tiles(width, rng):
    """Tiles with the leading one at every place p in every format: 2^p or 2^(p+1) - 1 (all ones:
    a negative one carries into the next binade), and a tie at the format's rounding place (a
    random value for INT8); each positive and negative."""
    fmts = ["int8", "fp16", "bf16", "fp32"]
    per_format = {fmt: [] for fmt in fmts}
    for p in range(width - 1):
        one = 1 << p
        for fmt in fmts:
            vals = [2 * one - 1 if (p + len(fmt)) % 2 else one]
            tie = TIE_PLACE.get(fmt)
            if tie is not None and p > tie:
                half = 1 << (p - tie)
                lsb = (2 * half if 2 * half < one else 0) * rng.getrandbits(1)       # ties to even and odd
                low = rng.randrange(half) if rng.random() < 0.5 else 0           # a tie or just above it
                vals.append(one | lsb | half | low)
            else:
                vals.append(one + rng.randrange(one))
            per_format[fmt] += [tkr.Item(v, fmt) for x in vals for v in (x, -x)]
    tiles = []
    for fmt, items in per_format.items():
        rng.shuffle(items)
        tiles += [(False, fmt, items[k:k + LANES]) for k in range(0, len(items) - LANES + 1, LANES)]
    rng.shuffle(tiles)
    return tiles


@pytest.mark.parametrize("width", [320, 280])
def test_kulisch_lanes_every_leading_one_place(backend, width):
    """Every place of the leading one (each segment of the search, each place in it), in every format."""
    check(backend, leading_one_tiles(width, random.Random(width + 1)), width)


def test_fp32_lanes_every_format(backend):
    rng = random.Random(5)
    pats = fp32_patterns(rng)
    tiles = []
    for fmt in list(CODES):
        tiles += tiles_of(list(pats), True, [fmt], rng)
    check(backend, tiles, 320)


def run_cycles(backend, stimulus, width):
    """Drive one input set per cycle (stimulus: [(in_valid, from_fp32, format code, values, flags,
    fp32 words, tag)]) into prism_round16; return what the outputs hold at every rising edge from
    the first input on: [(out_valid, out_bits, out_tag)]."""
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    in_valid, from_fp32, out_valid = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    in_values, in_flags = Signal(intbv(0)[LANES * width:]), Signal(intbv(0)[LANES * 5:])
    in_fp32, out_bits = Signal(intbv(0)[512:]), Signal(intbv(0)[512:])
    in_format = Signal(intbv(0)[3:])
    in_tag, out_tag = Signal(intbv(0)[12:]), Signal(intbv(0)[12:])
    seen = []
    started = [False]
    dut_factory = toolchain.select(prism_round16, backend)

    @block
    def bench():
        dut = dut_factory(clk, rst, in_valid, from_fp32, in_values, in_flags, in_fp32, in_format, in_tag,
                          out_valid, out_bits, out_tag)

        @instance
        def drive():
            yield rst.negedge
            for valid, fp32, code, values, flags, words, tag in stimulus:
                yield clk.negedge
                started[0] = True
                in_valid.next, from_fp32.next, in_format.next, in_tag.next = valid, fp32, code, tag
                in_values.next, in_flags.next, in_fp32.next = values, flags, words
            for _ in range(4):
                yield clk.negedge
                in_valid.next = 0

        @always(clk.posedge)
        def sample():
            if started[0]:
                seen.append((int(out_valid), int(out_bits), int(out_tag)))

        return dut, clock_gen(clk), reset_pulse(clk, rst), drive, sample

    toolchain.run(bench(), duration=10 * (len(stimulus) + 10), backend=backend)
    return seen


def idle_stimulus(width, rng, n):
    """n cycles: tiles of adversarial and flagged Kulisch values and of FP32 patterns near every
    format's rounding thresholds, in every format code (EXACT and a reserved one included), with
    idle cycles in between whose inputs are random (a stage must not take them).  Returns the
    stimulus of run_cycles and the tiles presented, [(from_fp32, fmt, lanes)] in order."""
    mask = (1 << width) - 1
    items = rng.sample(tkr.adversarial_items(width, rng), 6 * LANES) + rng.sample(tkr.flag_items(width, rng), 2 * LANES)
    pats = fp32_patterns(rng)
    codes = list(CODES.values())
    out, tiles = [], []
    for cycle in range(n):
        valid = rng.random() < 0.7
        fp32 = rng.random() < 0.4
        code = rng.choice(codes)
        xs = [rng.choice(items) for _ in range(LANES)]
        words = [rng.choice(pats) for _ in range(LANES)]
        values = flags = 0
        for lane, x in enumerate(xs):
            values |= (x.value & mask) << (width * lane)
            f = (x.nan, x.pos_inf, x.neg_inf, x.overflow, x.wrap_negative)
            flags |= sum(int(bool(b)) << k for k, b in enumerate(f)) << (5 * lane)
        out.append((int(valid), int(fp32), code, values, flags,
                    sum(w << (32 * lane) for lane, w in enumerate(words)), cycle & 0xFFF))
        if valid:
            tiles.append((fp32, NAMES[code], words if fp32 else xs))
    return out, tiles


def test_idle_cycles_between_tiles_are_taken_by_no_stage(backend):
    """out_valid is in_valid LATENCY cycles later, nothing comes out in the first LATENCY cycles,
    and each tile's results and tag are its own (the golden model's), whatever the idle cycles
    between the tiles present."""
    width = 320
    stim, tiles = idle_stimulus(width, random.Random(43), 60)
    seen = run_cycles(backend, stim, width)
    assert len(seen) >= len(stim) + LATENCY
    assert [v for v, _, _ in seen[:LATENCY]] == [0] * LATENCY
    assert [v for v, _, _ in seen[LATENCY:len(stim) + LATENCY]] == [s[0] for s in stim]
    got = [(bits, tag) for v, bits, tag in seen if v]
    assert [tag for _, tag in got] == [s[6] for s in stim if s[0]]
    compare(tiles, [[(b >> (32 * lane)) & 0xFFFFFFFF for lane in range(LANES)] for b, _ in got], width)


@pytest.mark.parametrize("stages", [0, 1, 2, 4, "3"])
def test_stages_other_than_three_are_rejected(stages):
    sig = lambda w: Signal(intbv(0)[w:])
    with pytest.raises(ValueError, match="STAGES"):
        prism_round16(Signal(bool(0)), ResetSignal(0, active=1, isasync=False), Signal(bool(0)), Signal(bool(0)),
                      sig(16 * 320), sig(80), sig(512), sig(512 // 512 * 3), sig(4), Signal(bool(0)), sig(512),
                      sig(4), STAGES=stages)
