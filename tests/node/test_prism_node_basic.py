"""PRISM SINGLE node (hdl/node/prism_node.py): basic exchanges, results and line rate.

On both back ends: CONTROL STAGE/COMMIT -> ACK and every NACK reason, DATA
validation counters, and 2-contributor AllReduce operations under
KULISCH_FIXED and FP32_ARRIVAL whose RESULT frames are checked bit for bit
against golden.reduce.  On Icarus only (cheaper per run than elaborating the
node in MyHDL): AUTO group joining, EXACT and specials at W = 320 and 280,
two-block Reduce under backpressure, a reset in the middle of a frame, and
receive line rate per port (cycle counts, not wall-clock time).  On batched
Verilator: the narrow formats at one beat per cycle (every lane busy, where
Icarus is slowest).
"""
import functools
import os
import random
import struct

import numpy as np
import pytest
from myhdl import ResetSignal, Signal, block, instance, intbv

from cosim.node import linerate
from cosim.sim import toolchain
from cosim.sim.axis import AxisFrame
from cosim.node.metrics import line_rate
from cosim.node.node_harness import NodeBench, check, run_node
from golden.node import protocol as P
from golden.reduce import reduce
from hdl.common.interface import AxiStream
from hdl.node.prism_node import prism_node
from spec.frames import MAX_CAPACITY


# The node's exchanges below run per cycle on the converted node (Icarus, 1-2 s each) in the
# default run, and on 'myhdl+icarus' (the MyHDL node replayed against its Verilog, 5-8 s each) in
# the slow set; test_backends_agree_cycle_for_cycle holds the MyHDL node against its Verilog cycle
# for cycle in the default run.  PRISM_TEST_BACKENDS, when set, chooses for this module too.
@pytest.fixture(params=os.environ["PRISM_TEST_BACKENDS"].split(",") if os.environ.get("PRISM_TEST_BACKENDS")
                else ["icarus", pytest.param("myhdl+icarus", marks=pytest.mark.slow)])
def backend(request):
    return request.param


def settled(b, quiet=12):
    """`until` condition: both sources idle and nothing sent for `quiet` cycles."""
    if not (b.src[0].idle() and b.src[1].idle()):
        b._idle_since = None
        return False
    if getattr(b, "_idle_since", None) is None:
        b._idle_since = b.cycles
    return b.cycles - b._idle_since >= quiet


def stage(op_id=1, gen=1, policy=P.POLICY_KULISCH, in_fmt=P.FMT_FP32, out_fmt=P.FMT_FP32,
          mode=P.MODE_ALLREDUCE, count=32, contributors=0b11, recipients=0b11):
    return P.Stage(op_id, gen, policy, in_fmt, out_fmt, mode, count, contributors, recipients)


def test_control_exchanges(backend):
    """STAGE/COMMIT -> ACK, every NACK reason in order, unsupported traffic drained, RESULT not accepted."""
    b = NodeBench(backend)
    requests = [
        (P.Commit(1, 1), P.NO_STAGED),
        (stage(op_id=7, gen=300), P.OK),
        (P.Commit(7, 300), P.OK),
        (stage(policy=2), P.BAD_POLICY),
        (stage(out_fmt=6), P.BAD_FORMAT),
        (stage(policy=P.POLICY_FP32_ARRIVAL, out_fmt=P.FMT_EXACT), P.BAD_FORMAT),
        (stage(count=0), P.BAD_COUNT),
        (stage(count=4097), P.BAD_COUNT),
        (stage(contributors=0), P.BAD_CONTRIBUTORS),
        (stage(recipients=0), P.BAD_RECIPIENTS),
        (stage(mode=P.MODE_REDUCE, recipients=3), P.BAD_RECIPIENTS),
        (stage(op_id=5, gen=9), P.OK),
        (P.Commit(5, 8), P.STAGED_MISMATCH),
        (P.Commit(5, 9), P.BUSY),          # op 7 is still in progress (no DATA has come)
    ]
    for req, _ in requests:
        b.send(0, req)
    want = [P.Response(reason == P.OK, req.op_id, req.generation, reason,
                       P.OP_STAGE if isinstance(req, P.Stage) else P.OP_COMMIT) for req, reason in requests]
    # on port 1, after port 0 is done: unsupported classes (drained, no response), a CONTROL frame
    # with a bad opcode and one longer than a beat
    b.send(1, AxisFrame([0x5, 1, 2], delay=100))
    b.send(1, P.Result(1, 1, 0, ((P.FMT_FP32, (1, 2)),)).encode())
    b.send(1, [P.set_field(P.Commit(3, 3).encode()[0], "opcode", 5)])
    b.send(1, stage(op_id=2, gen=2).encode() + [0])
    want += [P.Response(False, 3, 3, P.BAD_OPCODE, 5), P.Response(False, 2, 2, P.BAD_LENGTH, P.OP_STAGE)]
    b.run(lambda b: b.received(0) >= len(want), max_cycles=3000)
    assert b.frames(0) == want
    assert b.received(1) == 0
    assert b.counter("control_accepted", 0) == len(requests) and b.counter("control_accepted", 1) == 2
    assert b.counter("unsupported", 1) == 2
    assert b.counter("responses") == len(want)
    assert b.busy_at_end


@pytest.mark.slow      # a MyHDL node run (8 s); in the default run tests/node/test_node.py drops every
                       # malformed frame kind on batched Icarus under both policies
def test_data_drop_reasons(backend):
    b = NodeBench(backend)
    vals = tuple(range(16))
    b.send(0, P.Data(1, 1, 0, P.FMT_FP32, 0, vals))              # no operation
    b.send(0, stage(op_id=1, gen=1, count=32, contributors=0b01))
    b.send(0, P.Commit(1, 1))
    drops = [
        P.Data(2, 1, 0, P.FMT_FP32, 0, vals),                      # wrong_op
        P.Data(1, 2, 0, P.FMT_FP32, 0, vals),                      # stale_generation
        P.Data(1, 1, 1, P.FMT_FP32, 0, vals),                      # bad_contributor
        P.Data(1, 1, 0, P.FMT_FP16, 0, vals),                      # bad_format
        P.Data(1, 1, 0, P.FMT_FP32, 8, vals),                      # bad_range (offset)
        P.Data(1, 1, 0, P.FMT_FP32, 0, vals, n=32),                # bad_length
    ]
    for d in drops:
        b.send(0, d)
    b.send(0, [P.Data(1, 1, 0, P.FMT_FP32, 0, vals).encode()[0]] + [0] * 257)  # too_long
    b.send(0, P.Data(1, 1, 0, P.FMT_FP32, 16, vals))            # admitted
    b.send(0, P.Data(1, 1, 0, P.FMT_FP32, 16, vals))            # duplicate
    names = [f"dropped_{r}" for r in ("no_operation", "wrong_op", "stale_generation", "bad_contributor", "bad_format",
                                      "bad_range", "bad_length", "too_long", "duplicate")]
    names += ["data_accepted", "control_accepted"]
    b.run(settled, max_cycles=2500)
    for name in names:
        want = {"data_accepted": 1, "control_accepted": 2}.get(name, 1)
        assert b.counter(name) == want, name


def test_data_ranges_at_the_header_field_limits_are_dropped_and_counted(backend):
    """Offsets and lengths at the top of their header fields, from the highest contributor: the
    range end (offset + n) needs more bits than the range bookkeeping holds, and the last
    contributor's ranges would lie past the duplicate map.  Each frame is dropped as bad_range
    (no back end may stop on it), and a valid frame after them is still admitted."""
    b = NodeBench(backend)
    b.send(0, stage(op_id=1, gen=1, count=4096, contributors=0xFF))
    b.send(0, P.Commit(1, 1))
    top_offset = (1 << P.FIELDS["offset"][1]) - 16        # 8176
    edges = [(7, top_offset, 16), (7, 4096 - 16, 32), (7, 4080, (1 << P.FIELDS["n"][1]) - 1),
             (0, top_offset, 16)]
    for contributor, offset, n in edges:
        b.send(0, P.Data(1, 1, contributor, P.FMT_FP32, offset, tuple(range(16)), n=n))
    b.send(0, P.Data(1, 1, 7, P.FMT_FP32, 4096 - 16, tuple(range(16))))      # the last range: admitted
    b.run(settled, max_cycles=2500)
    assert b.counter("dropped_bad_range") + b.counter("dropped_bad_length") == len(edges)
    assert b.counter("data_accepted") == 1


# ---- arithmetic: small AllReduce operations checked against golden.reduce ----------------

FMT_NAME = P.FORMAT_NAMES
DTYPE = {P.FMT_INT8: np.uint8, P.FMT_FP16: np.uint16, P.FMT_BF16: np.uint16, P.FMT_FP32: np.uint32}


def random_values(rng, fmt, n):
    """Mixed-magnitude patterns with a few zeros, subnormals and negative zeros (no specials)."""
    w = P.ELEMENT_BITS[fmt]
    out = []
    for _ in range(n):
        r = rng.random()
        if fmt == P.FMT_INT8:
            out.append(rng.getrandbits(8))
        elif r < 0.05:
            out.append(1 << (w - 1))                                 # -0
        elif r < 0.10:
            out.append(rng.getrandbits(3))                           # subnormal / +0
        else:
            exp_bits = {P.FMT_FP16: 5, P.FMT_BF16: 8, P.FMT_FP32: 8}[fmt]
            mant = w - 1 - exp_bits
            e = rng.randint(1, (1 << exp_bits) - 2)
            out.append((rng.getrandbits(1) << (w - 1)) | (e << mant) | rng.getrandbits(mant))
    return out


def fp32_units(bits):
    """A finite FP32 value as an integer number of 2^-149 (0 for Inf and NaN)."""
    sign, exp, frac = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exp == 0xFF:
        return 0
    units = frac if exp == 0 else (frac | 0x800000) << (exp - 1)
    return -units if sign else units


def expected_result(policy, in_fmt, out_fmt, rows, op_id, gen, count, kulisch_w):
    """The RESULT frames (one per 256-element block) golden.reduce predicts."""
    data = np.array(rows, dtype=DTYPE[in_fmt])
    red = reduce("kulisch" if policy == P.POLICY_KULISCH else "fp32-arrival", FMT_NAME[in_fmt],
                 FMT_NAME[out_fmt], data, width=kulisch_w)
    frames = []
    for lo in range(0, count, 256):
        hi = min(lo + 256, count)
        groups = []
        for t in range(lo, hi, 16):
            tile = range(t, min(t + 16, hi))
            if out_fmt == P.FMT_EXACT:
                assert in_fmt == P.FMT_FP32, "EXACT expectations are computed for FP32 inputs"
                fmt = P.FMT_EXACT
                # an EXACT value is the exact sum of the finite inputs (units of 2^-149), computed
                # here from the bit patterns, with the flag nibble golden.reduce reports
                vals = [(sum(fp32_units(row[i]) for row in rows), int(red.flags[i])) for i in tile]
            else:
                fmt = int(red.auto_formats[t // 16]) if out_fmt == P.FMT_AUTO else out_fmt
                vals = [int(red.bits[i]) for i in tile]
            if groups and groups[-1][0] == fmt:
                groups[-1][1].extend(vals)
            else:
                groups.append((fmt, list(vals)))
        frames.append(P.Result(op_id, gen, lo, tuple((f, tuple(v)) for f, v in groups), kulisch_w))
    return frames


def run_allreduce(backend, policy, in_fmt, out_fmt, count=40, seed=5, kulisch_w=320, recipients=0b11,
                  split=32, sink_pause=0.0, src_pause=0.0, values=None, max_cycles=1500):
    """Contributor 0 on port 0 (one frame), contributor 1 on port 1 (two frames, split at `split`,
    sent after a delay so that admission order is: port 0's frame, then port 1's)."""
    rng = random.Random(seed)
    if values is None:
        c0, c1 = random_values(rng, in_fmt, count), random_values(rng, in_fmt, count)
    else:
        c0, c1 = values
    b = NodeBench(backend, kulisch_w=kulisch_w, sink_pause=sink_pause, src_pause=src_pause, seed=seed)
    mode = P.MODE_ALLREDUCE if recipients == 0b11 else P.MODE_REDUCE
    b.send(0, P.Stage(9, 77, policy, in_fmt, out_fmt, mode, count, 0b11, recipients))
    b.send(0, P.Commit(9, 77))
    b.send(0, P.Data(9, 77, 0, in_fmt, 0, tuple(c0)))
    b.send(1, AxisFrame(P.Data(9, 77, 1, in_fmt, 0, tuple(c1[:split])).encode(),
                        delay=40 + (count // 16) * (1 + 3 * int(src_pause > 0))))
    b.send(1, P.Data(9, 77, 1, in_fmt, split, tuple(c1[split:])))
    blocks = -(-count // 256)
    want_ports = [p for p in (0, 1) if recipients >> p & 1]
    b.run(lambda b: all(b.received(p) >= blocks + (2 if p == 0 else 0) for p in want_ports),
          max_cycles=max_cycles)
    want = expected_result(policy, in_fmt, out_fmt, [c0, c1], 9, 77, count, kulisch_w)
    return b, want, want_ports


@functools.lru_cache(maxsize=None)
def fp32_allreduce(backend, policy):
    """One simulation per (back end, policy), shared by the tests below (deterministic)."""
    return run_allreduce(backend, policy, P.FMT_FP32, P.FMT_FP32)


@pytest.mark.parametrize("policy", [P.POLICY_KULISCH, P.POLICY_FP32_ARRIVAL])
def test_fp32_allreduce_two_contributors(backend, policy):
    b, want, ports = fp32_allreduce(backend, policy)
    assert b.frames(0)[:2] == [P.Response(True, 9, 77, P.OK, P.OP_STAGE), P.Response(True, 9, 77, P.OK, P.OP_COMMIT)]
    for p in ports:
        got = [f for f in b.frames(p) if isinstance(f, P.Result)]
        assert got == want, f"port {p}"
    assert b.counter("ranges_completed") == 3
    assert b.counter("results") == 2
    assert b.counter("data_accepted", 0) == 1 and b.counter("data_accepted", 1) == 2
    assert not b.busy_at_end   # the operation has finished with its last RESULT frame


# FP32_ARRIVAL in the slow set (13 s of a MyHDL node): in the default run the myhdl+icarus back end
# holds its MyHDL source against the design cycle for cycle (test_fp32_allreduce_two_contributors)
@pytest.mark.parametrize("policy", [P.POLICY_KULISCH, pytest.param(P.POLICY_FP32_ARRIVAL, marks=pytest.mark.slow)])
def test_backends_agree_cycle_for_cycle(policy):
    """The converted design and the MyHDL block move every beat in the same cycle."""
    runs = {be: fp32_allreduce(be, policy)[0] for be in toolchain.PER_CYCLE_BACKENDS}
    for port in (0, 1):
        cycles = {be: [f.cycles for f in b.sink[port].frames] for be, b in runs.items()}
        beats = {be: [f.beats for f in b.sink[port].frames] for be, b in runs.items()}
        assert cycles["myhdl"] == cycles["icarus"] and beats["myhdl"] == beats["icarus"]
        ready = {be: [f.cycles for f in b.src[port].sent] for be, b in runs.items()}
        assert ready["myhdl"] == ready["icarus"]


def fp32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def auto_tiles_values(rng):
    """Five tiles (the last one partial) whose exact sums want INT8, INT8, FP16, FP32, BF16 tiles."""
    ints = [fp32_bits(float(rng.randint(-100, 100))) for _ in range(32)]
    halves = [fp32_bits(rng.randint(-900, 900) + 0.5) for _ in range(16)]
    wide = [fp32_bits(rng.uniform(-1, 1) * 3.1) for _ in range(16)]
    bf = [fp32_bits(float(2 ** 40 * (1 + rng.randint(0, 127) / 128))) for _ in range(8)]
    return ints + halves + wide + bf


@pytest.mark.parametrize("policy", [P.POLICY_KULISCH, P.POLICY_FP32_ARRIVAL])
def test_auto_joins_uniform_tiles(policy):
    backend = "icarus"
    rng = random.Random(3)
    c0 = auto_tiles_values(rng)
    c1 = [0] * len(c0)                       # +0: the sums are c0 exactly, on both policies
    b, want, ports = run_allreduce(backend, policy, P.FMT_FP32, P.FMT_AUTO, count=len(c0), values=(c0, c1),
                                   split=64)
    assert [g[0] for g in want[0].groups] == [P.FMT_INT8, P.FMT_FP16, P.FMT_FP32, P.FMT_BF16]
    assert [len(g[1]) for g in want[0].groups] == [32, 16, 16, 8]
    for p in ports:
        assert [f for f in b.frames(p) if isinstance(f, P.Result)] == want, f"port {p}"


# W = 280 in the slow set: a per-cycle Icarus build of its own (20 s); the default run meets W = 280
# in the trees of Icarus nodes and the EXACT-input merges
@pytest.mark.parametrize("kulisch_w,out_fmt", [(320, P.FMT_EXACT), pytest.param(280, P.FMT_EXACT, marks=pytest.mark.slow),
                                               (320, P.FMT_FP32), (320, P.FMT_INT8),
                                               pytest.param(280, P.FMT_FP16, marks=pytest.mark.slow), (320, P.FMT_AUTO)])
def test_kulisch_results_with_specials(kulisch_w, out_fmt):
    rng = random.Random(kulisch_w)
    c0 = random_values(rng, P.FMT_FP32, 48)
    c1 = random_values(rng, P.FMT_FP32, 48)
    c0[3], c1[5], c0[7], c1[7], c0[20] = 0x7F800000, 0xFF800000, 0x7F800000, 0xFF800000, 0x7FC00001
    c0[30] = c1[30] = 0x7F7FFFFF                 # the largest FP32, twice
    b, want, ports = run_allreduce("icarus", P.POLICY_KULISCH, P.FMT_FP32, out_fmt, count=48,
                                   values=(c0, c1), kulisch_w=kulisch_w)
    for p in ports:
        assert [f for f in b.frames(p) if isinstance(f, P.Result)] == want, f"port {p}"


@pytest.mark.parametrize("policy,in_fmt,out_fmt", [
    (P.POLICY_KULISCH, P.FMT_INT8, P.FMT_FP16),
    (P.POLICY_KULISCH, P.FMT_FP16, P.FMT_INT8),
    (P.POLICY_FP32_ARRIVAL, P.FMT_BF16, P.FMT_BF16),
    (P.POLICY_FP32_ARRIVAL, P.FMT_INT8, P.FMT_FP32),
])
def test_two_blocks_reduce_to_one_port_under_backpressure(policy, in_fmt, out_fmt):
    """E = 300: two RESULT blocks; Reduce to port 1 only; random pauses on sources and sinks."""
    per = P.ELEMS_PER_BEAT[in_fmt]
    split = 256 if per <= 64 else 128
    b, want, ports = run_allreduce("icarus", policy, in_fmt, out_fmt, count=300, recipients=0b10, split=split,
                                   sink_pause=0.3, src_pause=0.2, seed=11, max_cycles=2500)
    assert ports == [1]
    assert [f for f in b.frames(1) if isinstance(f, P.Result)] == want
    assert [type(f) for f in b.frames(0)] == [P.Response, P.Response]
    assert b.counter("results") == 2 and b.counter("ranges_completed") == 19


def ingress_rate(src):
    """Beats per cycle a source managed over its DATA frames, from their first to their last beat."""
    cycles = [c for f in src.sent if P.get_field(f.beats[0], "class") == P.CLASS_DATA for c in f.cycles]
    return len(cycles) / (cycles[-1] - cycles[0] + 1)


def run_line_rate(policy, layout, count=1024, contributors=8):
    """Back-to-back FP32 DATA frames on both ports.  layout 'same': port 0 carries contributors
    0..C/2-1 and port 1 the others, every frame covering all elements; 'split': every contributor
    sends the lower half of the vector on port 0 and the upper half on port 1 (so at any time the
    two ports feed different ranges).  Returns (bench, rate port 0, rate port 1, expected frames)."""
    rng = random.Random(17)
    rows = [random_values(rng, P.FMT_FP32, count) for _ in range(contributors)]
    b = NodeBench("icarus", seed=4)
    b.send(0, P.Stage(3, 4, policy, P.FMT_FP32, P.FMT_FP32, P.MODE_ALLREDUCE, count, (1 << contributors) - 1, 3))
    b.send(0, P.Commit(3, 4))
    half = count // 2
    order = []
    if layout == "same":
        for c in range(contributors):
            port = 0 if c < contributors // 2 else 1
            b.send(port, AxisFrame(P.Data(3, 4, c, P.FMT_FP32, 0, tuple(rows[c])).encode(), delay=20 if c in (0, contributors // 2) else 0))
    else:
        for c in range(contributors):
            b.send(0, AxisFrame(P.Data(3, 4, c, P.FMT_FP32, 0, tuple(rows[c][:half])).encode(), delay=20 if c == 0 else 0))
            b.send(1, AxisFrame(P.Data(3, 4, c, P.FMT_FP32, half, tuple(rows[c][half:])).encode(), delay=20 if c == 0 else 0))
    blocks = -(-count // 256)
    b.run(lambda b: b.received(0) >= blocks + 2 and b.received(1) >= blocks, max_cycles=3000)
    # admission order: the order the frames' last beats were taken (validation takes one cycle on
    # both ports), port 0 first in a tie; per element, its contributors in that order
    admitted = sorted((f.cycles[-1], port, P.get_field(f.beats[0], "contributor"))
                      for port in (0, 1) for f in b.src[port].sent
                      if P.get_field(f.beats[0], "class") == P.CLASS_DATA)
    if layout == "same":
        rows = [rows[c] for _, _, c in admitted]
    return b, ingress_rate(b.src[0]), ingress_rate(b.src[1]), rows


def test_kulisch_line_rate_both_ports():
    """KULISCH_FIXED: both ports take one beat per cycle over four back-to-back frames each (three frame
    banks per port, port-local stores, merge on a second read port)."""
    b, r0, r1, rows = run_line_rate(P.POLICY_KULISCH, "same")
    want = expected_result(P.POLICY_KULISCH, P.FMT_FP32, P.FMT_FP32, rows, 3, 4, 1024, 320)
    got0 = sorted((f for f in b.frames(0) if isinstance(f, P.Result)), key=lambda f: f.offset)
    got1 = sorted((f for f in b.frames(1) if isinstance(f, P.Result)), key=lambda f: f.offset)
    assert got0 == want and got1 == want
    print(f"KULISCH_FIXED beats/cycle: port 0 {r0:.3f}, port 1 {r1:.3f}")
    assert r0 == 1.0 and r1 == 1.0


@pytest.mark.parametrize("same_range", [False, True], ids=["different-ranges", "same-range"])
@pytest.mark.parametrize("policy,in_fmt,kulisch_w", [("kulisch", "int8", 320), ("kulisch", "bf16", 320),
                                                     # W = 280's Verilator build is in the slow set
                                                     pytest.param("kulisch", "int8", 280, marks=pytest.mark.slow),
                                                     ("fp32-arrival", "int8", 320),
                                                     ("fp32-arrival", "fp16", 320)])
def test_narrow_formats_at_one_beat_per_cycle(policy, in_fmt, same_range, kulisch_w):
    """INT8 / FP16 / BF16 input under both policies: back-to-back DATA frames on both ports are taken at
    one beat per cycle per port (the reader issues a whole beat, 4 or 2 ranges, per cycle; KULISCH_FIXED
    has four sub-stores per port, FP32_ARRIVAL sixteen banks shared in admission order), counted in
    simulated cycles; the results are bit-exact against the golden node model.
    E = 3992 in two frames per contributor (2000 + 1992 elements): both frames end in a partial beat, the
    second in a partial range, and the second frame's groups start at range 125, not on a multiple of 4.
    Eight contributors, four per port; 'different-ranges': port 1 sends its frames in reverse order."""
    elements = 3992
    sc = linerate.scenario(policy, in_fmt, same_range, elements=elements, seed=31, frame_elems=2000)
    op = sc.operations[0]
    assert [len(f.values) for f in op.data_frames(0)] == [2000, 1992]
    # batched Verilator: these runs keep every lane busy, where Icarus is about 9x slower (the
    # agreement tests of tests/node/test_regress.py hold the two simulators to each other)
    run = run_node(sc, "batch-verilator", kulisch_w=kulisch_w)
    report = check(sc, run, kulisch_w=kulisch_w)
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:8])
    assert report.elements_checked == 2 * elements
    lr = line_rate(run)
    beats = {p: lr.data_beats[p] for p in (0, 1)}
    assert beats[0] == beats[1] == 4 * sum(len(f.encode()) for f in op.data_frames(0))
    for p in (0, 1):
        assert lr.beats_per_cycle(p) == 1.0, f"port {p}: {lr.data_beats[p]} beats in {lr.data_cycles[p]} cycles"


@pytest.mark.parametrize("policy,in_fmt,frame_beats", [("kulisch", "fp32", 4), ("kulisch", "int8", 4),
                                                     ("fp32-arrival", "fp32", 8), ("fp32-arrival", "int8", 8)])
def test_short_frames_at_one_beat_per_cycle(policy, in_fmt, frame_beats):
    """The shortest frames the line rate holds for (docs/prism_node.md, "Line rate"): two contributors,
    one per port, 4,096 elements each in frames of `frame_beats` payload beats sent back to back over
    the same ranges; no cycle lost on either port, and the results bit-exact."""
    from cosim.node.scenarios import Operation, build, random_elements
    rng = random.Random(7)
    per_beat = P.ELEMS_PER_BEAT[P.FORMAT_CODES[in_fmt]]
    op = Operation(1, 5, policy, in_fmt, "fp32", random_elements(rng, in_fmt, (2, MAX_CAPACITY)),
                   frame_elems=frame_beats * per_beat)
    sc = build([op], seed=1)
    run = run_node(sc, "batch-verilator", kulisch_w=320)
    report = check(sc, run, kulisch_w=320)
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:8])
    frames = len(op.data_frames(0))
    assert frames == MAX_CAPACITY // (frame_beats * per_beat)
    lr = line_rate(run)
    for p in (0, 1):
        assert lr.data_beats[p] == frames * (frame_beats + 1)
        assert lr.beats_per_cycle(p) == 1.0, f"port {p}: {lr.data_beats[p]} beats in {lr.data_cycles[p]} cycles"


@pytest.mark.parametrize("layout", ["split", "same"])
def test_fp32_arrival_line_rate(layout):
    """FP32_ARRIVAL: two ports feeding different ranges ('split') each take one beat per cycle; feeding
    the same ranges ('same') too: the younger frame trails the older one by a few ranges (admission
    order, bank reservations) and then both advance every cycle."""
    b, r0, r1, rows = run_line_rate(P.POLICY_FP32_ARRIVAL, layout)
    want = expected_result(P.POLICY_FP32_ARRIVAL, P.FMT_FP32, P.FMT_FP32, rows, 3, 4, 1024, 320)
    for port in (0, 1):
        got = sorted((f for f in b.frames(port) if isinstance(f, P.Result)), key=lambda f: f.offset)
        assert got == want, f"port {port}"
    print(f"FP32_ARRIVAL {layout} beats/cycle: port 0 {r0:.3f}, port 1 {r1:.3f}")
    assert r0 == 1.0 and r1 == 1.0


def test_reset_mid_frame_leaves_nothing_half_admitted():
    """A reset while a DATA frame is half received: the frame is counted as truncated, its tail
    (first beat class 0) is drained as unsupported, and after a new STAGE/COMMIT only whole
    frames contribute."""
    rng = random.Random(23)
    count = 64
    c0, c1 = random_values(rng, P.FMT_FP32, count), random_values(rng, P.FMT_FP32, count)
    junk = random_values(rng, P.FMT_FP32, count)
    junk[32] &= ~0xF                      # beat 3's low nibble: the tail reads as an unsupported class
    b = NodeBench("icarus")
    b.send(0, stage(op_id=1, gen=1, count=count))
    b.send(0, P.Commit(1, 1))
    b.send(0, P.Data(1, 1, 0, P.FMT_FP32, 0, tuple(junk)))          # cut after 3 beats
    b.send(0, AxisFrame(stage(op_id=2, gen=5, count=count).encode(), delay=10))
    b.send(0, P.Commit(2, 5))
    b.send(0, P.Data(2, 5, 0, P.FMT_FP32, 0, tuple(c0)))
    b.send(1, AxisFrame(P.Data(2, 5, 1, P.FMT_FP32, 0, tuple(c1)).encode(), delay=80))
    src = b.src[0]

    @block
    def mid_frame_reset():
        @instance
        def pulse():
            while src.beats_sent < 2 + 3:        # STAGE, COMMIT, then 3 beats of the DATA frame
                yield b.clk.posedge
            yield b.clk.negedge
            b.rst.next = 1
            yield b.clk.posedge
            yield b.clk.posedge
            yield b.clk.negedge
            b.rst.next = 0
        return pulse

    b.run(lambda b: b.received(0) >= 5 and b.received(1) >= 1, max_cycles=1500, extra=[mid_frame_reset])
    want = expected_result(P.POLICY_KULISCH, P.FMT_FP32, P.FMT_FP32, [c0, c1], 2, 5, count, 320)
    for port in (0, 1):
        assert [f for f in b.frames(port) if isinstance(f, P.Result)] == want
    assert [f for f in b.frames(0) if isinstance(f, P.Response)] == [
        P.Response(True, 1, 1, P.OK, P.OP_STAGE), P.Response(True, 1, 1, P.OK, P.OP_COMMIT),
        P.Response(True, 2, 5, P.OK, P.OP_STAGE), P.Response(True, 2, 5, P.OK, P.OP_COMMIT)]
    assert b.counter("truncated") == 1 and b.counter("unsupported") == 1
    assert b.counter("data_accepted", 0) == 1 and b.counter("data_accepted", 1) == 1


@pytest.mark.parametrize("kwargs,match", [(dict(KULISCH_W=300), "KULISCH_W"), (dict(CAPACITY=8192), "CAPACITY"),
                                          (dict(CAPACITY=48 + 8), "CAPACITY")])
def test_bad_parameters_rejected_at_elaboration(kwargs, match):
    mk = lambda w=None: Signal(bool(0)) if w is None else Signal(intbv(0)[w:])
    ports = [mk(), ResetSignal(0, active=1, isasync=False), *(AxiStream(512) for _ in range(4)), mk(6), mk(32), mk()]
    with pytest.raises(ValueError, match=match):
        prism_node(*ports, **kwargs)
    narrow = list(ports)
    narrow[4] = AxiStream(256)
    with pytest.raises(ValueError, match="m_axis_0_tdata is 256 bits; the protocol's beats are 512"):
        prism_node(*narrow)


def test_same_cycle_frames_are_handled_port_0_first():
    """Frames whose last beats are taken in the same cycle: port 0's first.  Two STAGEs: port 1's
    replaces port 0's; a COMMIT on port 0 and a DATA frame for that operation on port 1: the DATA
    frame is validated against the operation the COMMIT has just activated."""
    b = NodeBench("icarus")
    b.send(0, stage(op_id=1, gen=1, count=16, contributors=0b1))
    b.send(1, stage(op_id=2, gen=2, count=16, contributors=0b1))
    b.send(0, AxisFrame(P.Commit(2, 2).encode(), delay=6))
    data = P.Data(2, 2, 0, P.FMT_FP32, 0, tuple(fp32_bits(float(k)) for k in range(16)))
    b.send(1, AxisFrame(data.encode(), delay=5))
    b.run(lambda b: b.received(0) >= 4, max_cycles=400)
    commit_cycle = b.src[0].sent[1].cycles[-1]
    data_cycle = b.src[1].sent[1].cycles[-1]
    assert commit_cycle == data_cycle           # the premise: both complete in one cycle
    assert b.src[0].sent[0].cycles == b.src[1].sent[0].cycles
    got = b.frames(0)
    assert got[:3] == [P.Response(True, 1, 1, P.OK, P.OP_STAGE), P.Response(True, 2, 2, P.OK, P.OP_STAGE),
                       P.Response(True, 2, 2, P.OK, P.OP_COMMIT)]
    assert b.counter("data_accepted", 1) == 1
    assert got[3] == P.Result(2, 2, 0, ((P.FMT_FP32, tuple(fp32_bits(float(k)) for k in range(16))),))


def test_operations_back_to_back_start_clean():
    """Three operations one after another (different policies, formats and sizes, E reusing and
    exceeding the previous one's ranges): each starts from cleared accumulators and bookkeeping."""
    rng = random.Random(31)
    ops = [(10, P.POLICY_KULISCH, P.FMT_FP32, P.FMT_FP32, 40),
           (11, P.POLICY_FP32_ARRIVAL, P.FMT_FP16, P.FMT_AUTO, 72),
           (12, P.POLICY_KULISCH, P.FMT_INT8, P.FMT_INT8, 20)]
    b = NodeBench("icarus", sink_pause=0.2, seed=8)
    wants = []
    for k, (op, policy, fin, fout, count) in enumerate(ops):
        c0, c1 = random_values(rng, fin, count), random_values(rng, fin, count)
        gap = 0 if k == 0 else 150
        b.send(0, AxisFrame(P.Stage(op, 1, policy, fin, fout, P.MODE_ALLREDUCE, count, 0b11, 0b11).encode(), delay=gap))
        b.send(0, P.Commit(op, 1))
        b.send(0, P.Data(op, 1, 0, fin, 0, tuple(c0)))
        b.send(1, AxisFrame(P.Data(op, 1, 1, fin, 0, tuple(c1)).encode(), delay=gap + 30))
        wants += expected_result(policy, fin, fout, [c0, c1], op, 1, count, 320)
    b.run(lambda b: b.received(0) >= 9 and b.received(1) >= 3, max_cycles=1500)
    assert [f for f in b.frames(0) if isinstance(f, P.Response)] == [
        P.Response(True, op, 1, P.OK, opc) for op, *_ in ops for opc in (P.OP_STAGE, P.OP_COMMIT)]
    for port in (0, 1):
        assert [f for f in b.frames(port) if isinstance(f, P.Result)] == wants, f"port {port}"


@pytest.mark.parametrize("kwargs,match", [(dict(BANKS=32), "BANKS=32"), (dict(BANKS=2), "BANKS=2"),
                                          (dict(BANK=16), "BANK=16"), (dict(ROWS=17), "ROWS=17"),
                                          (dict(FP32_LATENCY=5), "FP32_LATENCY=5")])
def test_fp32_bank_rejects_impossible_parameters(kwargs, match):
    """A bank must own whole groups' ranges (a group of up to 4 ranges needs 4 distinct banks), hold at
    most 256 ranges in all, and use an adder latency fp32_add supports."""
    from hdl.node.prism_fp32_bank import prism_fp32_bank
    mk = lambda w=None: Signal(bool(0)) if w is None else Signal(intbv(0)[w:])
    ports = [mk(), ResetSignal(0, active=1, isasync=False), mk()]
    for _ in range(2):
        ports += [mk(), mk(8), mk(64), mk(2048)]
    ports += [mk(), mk(8), mk(16), mk(), mk(512)]
    with pytest.raises(ValueError, match=match):
        prism_fp32_bank(*ports, **kwargs)
