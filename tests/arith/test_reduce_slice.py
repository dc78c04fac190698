"""reduce_slice on both back ends: both policies against the golden models on
random and adversarial beat sequences (any start alignment, partial beats,
mixed formats, cancellation, extreme exponents, subnormals, specials, 280-bit
overflow) with random stalls on the input, command and output handshakes; the
documented throughput per format; FP32_ARRIVAL reservations; bad input."""
import random

import pytest
from myhdl import ResetSignal, Signal, intbv

from cosim.arith.slice_reduce import pack_beat, run_slice_beats
from golden.arith.formats import WIDTH_BITS, format_to_fp32
from golden.arith.fp32_arith import fp32_add
from golden.arith.kulisch import KulischAccumulator
from hdl.arith.reduce_slice import SliceInput, SliceReadout, reduce_slice

FORMATS = ("int8", "fp16", "bf16", "fp32")


def unpack(word, count, fmt):
    ew = WIDTH_BITS[fmt]
    return [(word >> (ew * k)) & ((1 << ew) - 1) for k in range(count)]


def reference(policy, beats, n, width=320):
    """Per element, in admission order: golden Kulisch accumulator or FP32 fold."""
    if policy == "kulisch":
        accs = [KulischAccumulator(width) for _ in range(n)]
        for word, index, count, fmt in beats:
            for k, b in enumerate(unpack(word, count, fmt)):
                accs[index + k].add(fmt, b)
        return [(a.state, a.flags, a.wraps) for a in accs]
    sums = [None] * n
    for word, index, count, fmt in beats:
        for k, b in enumerate(unpack(word, count, fmt)):
            x = format_to_fp32(fmt, b)
            sums[index + k] = x if sums[index + k] is None else fp32_add(sums[index + k], x)
    return [0 if s is None else s for s in sums]


def element(rng, fmt):
    """Random pattern biased towards extremes of the format."""
    ew = WIDTH_BITS[fmt]
    if fmt == "int8" or rng.random() < 0.4:
        return rng.getrandbits(ew)
    mbits = {"fp16": 10, "bf16": 7, "fp32": 23}[fmt]
    emax = (1 << (ew - 1 - mbits)) - 1
    sign = rng.getrandbits(1) << (ew - 1)
    r = rng.random()
    if r < 0.35:
        exp = emax - 1                       # largest binade: cancellation / overflow material
    elif r < 0.6:
        exp = 0                              # subnormals
    elif r < 0.66:
        exp = emax                           # inf / NaN
        return sign | (exp << mbits) | (rng.getrandbits(mbits) if rng.random() < 0.4 else 0)
    else:
        exp = rng.choice([1, 2, emax - 2])
    return sign | (exp << mbits) | rng.getrandbits(mbits)


def random_beats(rng, n_beats, n_elements, formats=FORMATS, cancel=True):
    beats = []
    for _ in range(n_beats):
        fmt = rng.choice(formats)
        per_beat = 512 // WIDTH_BITS[fmt]
        count = rng.randint(1, per_beat) if rng.random() < 0.5 else per_beat
        count = min(count, n_elements)
        index = rng.randrange(0, n_elements - count + 1)
        elems = [element(rng, fmt) for _ in range(count)]
        beats.append(pack_beat(fmt, elems, index))
        if cancel and rng.random() < 0.3:       # the exact negation later: sums cancel to the small rest
            if fmt == "int8":                   # two's-complement negation (-128 stays)
                neg = [(-(e - 256 if e & 0x80 else e)) & 0xFF for e in elems]
            else:                               # flip the sign bit
                neg = [e ^ (1 << (WIDTH_BITS[fmt] - 1)) for e in elems]
            beats.append(pack_beat(fmt, neg, index))
    return beats


@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
def test_slice_random_unaligned_beats_with_stalls(backend, policy):
    rng = random.Random(17 if policy == "kulisch" else 23)
    n = 64
    beats = random_beats(rng, 14 if backend == "myhdl" else 40, n)
    run = run_slice_beats(backend, policy, beats, n, capacity=128, src_pause=0.3, sink_pause=0.3, seed=4)
    assert run.values == reference(policy, beats, n)


def test_slice_kulisch_280_overflow_both_ways(backend):
    """The largest FP32 terms wrap a 280-bit state: element 0 ends above the range,
    element 1 below it, element 2 wraps up and back down to zero net wraps."""
    big, nbig = 0x7F7FFFFF, 0xFF7FFFFF
    beats = [pack_beat("fp32", [big, nbig, big] + [0x00000001] * 13, 0) for _ in range(9)]
    beats += [pack_beat("fp32", [big, nbig, nbig], 0) for _ in range(9)]
    beats += [pack_beat("bf16", [0x7F7F] * 32, 16) for _ in range(3)]
    run = run_slice_beats(backend, "kulisch", beats, 48, width=280, capacity=128, sink_pause=0.2, seed=1)
    want = reference("kulisch", beats, 48, width=280)
    assert run.values == want
    wraps = [w for _, _, w in want[:3]]
    assert wraps[0] > 0 and wraps[1] < 0 and wraps[2] == 0      # overflow both ways; one wraps up and back


def gaps(cycles):
    return [b - a for a, b in zip(cycles, cycles[1:])]


def test_slice_throughput_per_format(backend):
    """16 elements per cycle: FP32 one beat per cycle, FP16/BF16 one per 2 cycles, INT8
    one per 4 (s_axis_tready says so), with the format changing between segments."""
    rng = random.Random(3)
    segments = [("fp32", 8, 16), ("fp16", 4, 32), ("bf16", 3, 32), ("int8", 4, 64)]
    beats, spans = [], []
    for fmt, n_beats, per_beat in segments:
        first = len(beats)
        beats += [pack_beat(fmt, [element(rng, fmt) for _ in range(per_beat)], (per_beat * i) % 128)
                  for i in range(n_beats)]
        spans.append((fmt, first, len(beats)))
    run = run_slice_beats(backend, "kulisch", beats, 128, capacity=128)
    assert run.values == reference("kulisch", beats, 128)
    spacing = {"fp32": 1, "fp16": 2, "bf16": 2, "int8": 4}
    for fmt, first, last in spans:
        steady = gaps(run.accept_cycles[first:last])[-2:]     # after the two-entry buffer has filled
        assert steady == [spacing[fmt]] * 2, (fmt, run.accept_cycles)


def test_fp32_reservations_hold_only_conflicting_positions(backend):
    """FP32_ARRIVAL: independent positions enter every cycle; contributions to the SAME
    16 positions wait for the sum in the adder (FP32_LATENCY + 1 cycles apart);
    alternating two ranges overlaps the waits; unaligned beats that share no lane-row
    do not wait."""
    latency = 4
    rng = random.Random(8)
    fp = lambda n: [element(rng, "fp32") for _ in range(n)]
    segments = [[pack_beat("fp32", fp(16), 16 * i) for i in range(8)],            # ranges 0..7
                [pack_beat("fp32", fp(16), 0) for _ in range(5)],                   # range 0 again and again
                [pack_beat("fp32", fp(16), 32 + 16 * (i % 2)) for i in range(6)],   # ranges 2, 3 alternating
                [pack_beat("fp32", fp(16), 72), pack_beat("fp32", fp(8), 64), pack_beat("fp32", fp(8), 88)]]
    beats = [b for seg in segments for b in seg]
    run = run_slice_beats(backend, "fp32-arrival", beats, 128, capacity=128, fp32_latency=latency)
    assert run.values == reference("fp32-arrival", beats, 128)
    bounds = [0]
    for seg in segments:
        bounds.append(bounds[-1] + len(seg))
    g = [gaps(run.accept_cycles[a:b]) for a, b in zip(bounds, bounds[1:])]
    assert set(g[0]) == {1}
    assert g[1][-2:] == [latency + 1] * 2
    assert max(g[2][1:]) < latency + 1 and sum(g[2][-2:]) == latency + 1     # 2 beats per L+1 cycles
    assert set(g[3]) == {1}


def test_slice_out_of_range_elements_and_commands_flagged():
    beats = [pack_beat("fp32", [0x3F800000] * 16, 120),          # elements 120..135; capacity 128
             pack_beat("fp32", [0x40000000] * 4, 0),
             (pack_beat("int8", [1] * 64, 0)[0], 0, 65, "int8")]      # count above 64: dropped
    run = run_slice_beats("myhdl", "kulisch", beats, 128, capacity=128, extra_commands=[9],
                          allow_index_error=True)
    assert run.index_error
    good = [pack_beat("fp32", [0x3F800000] * 8, 120), beats[1]]
    assert run.values == reference("kulisch", good, 128)


def test_slice_rejects_bad_parameters():
    def sigs(state_bits=320, user_bits=20):
        b = lambda: Signal(bool(0))
        s = lambda n: Signal(intbv(0)[n:])
        return [b(), ResetSignal(0, active=1, isasync=False), b(), SliceInput(index_width=12), b(), b(), s(8),
                SliceReadout(state_width=state_bits, user_width=user_bits), b()]
    with pytest.raises(ValueError, match="CAPACITY=5000"):
        reduce_slice(*sigs(), CAPACITY=5000)
    with pytest.raises(ValueError, match="CAPACITY=40"):
        reduce_slice(*sigs(), CAPACITY=40)
    with pytest.raises(ValueError, match="KULISCH_W"):
        reduce_slice(*sigs(state_bits=200), CAPACITY=64)
    with pytest.raises(ValueError, match="wrap counter"):
        reduce_slice(*sigs(user_bits=5), CAPACITY=64)
    with pytest.raises(ValueError, match="PATHS"):
        reduce_slice(*sigs(), CAPACITY=64, PATHS="all")


def test_seed_result_store_figures():
    """Seed 003: 'maximum logical capacity is 4096 FP32 values (16 KiB); a 512-bit by
    256-word implementation may use eight RAMB36 blocks when mapped as 64-bit-wide
    physical banks' -- recomputed from the slice's constants."""
    from hdl.arith.reduce_slice import BEAT_BITS, LANES, MAX_CAPACITY
    store_bits = MAX_CAPACITY * 32
    assert store_bits // 8 == 16 * 1024
    words = store_bits // BEAT_BITS
    assert words == 256 and BEAT_BITS // 32 == LANES      # one word = one 16-lane FP32 range
    ramb36_depth_at_72_bits = 36 * 1024 // 72             # 512 x (64 data + 8 parity)
    assert words <= ramb36_depth_at_72_bits and BEAT_BITS // 64 == 8


@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
def test_slice_with_both_paths_built(backend, policy):
    """The node's build: both accumulation RAMs present, the policy input selects one."""
    rng = random.Random(31)
    beats = random_beats(rng, 6, 48, formats=("fp16", "fp32"), cancel=False)
    run = run_slice_beats(backend, policy, beats, 48, capacity=128, paths="both", sink_pause=0.2, seed=2)
    assert run.values == reference(policy, beats, 48)
