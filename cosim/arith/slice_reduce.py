"""Reduce a C x E array of raw bit patterns through the hardware slice.

`reduce_through_hardware(policy, in_fmt, out_fmt, data, width, backend, order)`
is the hardware counterpart of `golden.reduce.reduce` and returns the same
`ReduceResult`.  It runs the MyHDL blocks (backend "myhdl"), their converted
Verilog under Icarus ("icarus"), or the MyHDL blocks with each run replayed on the
Verilog and compared ("myhdl+icarus"), as a sequence of test benches, each with one
block on the simulator, the values of one pass feeding the next:

  1. hdl/arith/reduce_slice.py: every contributor's row is cut into 512-bit
     NumberGroup beats (64 INT8, 32 FP16/BF16 or 16 FP32 elements) and
     admitted in `order`; then every range is read out (exact states + flags,
     or FP32 sums).  Arrays longer than the slice's capacity (4096 elements)
     are reduced in chunks of 4096, the way a node frees completed ranges.
  2. rounding to the RESULT format: hdl/arith/kulisch_round.py for exact states,
     hdl/arith/fp32_round.py for FP32 sums (to FP32 first when out_fmt is "auto");
  3. AUTO only: hdl/arith/auto_classifier.py over each 16-element FP32 tile, then
     hdl/arith/fp32_round.py re-encodes every element in its tile's format.

order:
    "sequential"   contributor 0's whole row, then contributor 1's, ... (admission
                   order = row order)
    "interleaved"  beat b of every contributor before beat b+1 (row order per
                   element is the same, so the result must be the same; it keeps
                   the FP32 reservations busy)

`run_slice(...)` is the lower-level driver (pass 1 only), used by the tests to
add random stalls on every handshake and to count cycles.
"""
import time

import numpy as np
from myhdl import ResetSignal, Signal, StopSimulation, block, instance, intbv

from cosim.sim import toolchain
from cosim.sim.axis import pause_generator
from cosim.sim.pipeline import offer, run_pipeline
from cosim.sim.tbutil import clock_gen, reset_pulse
from golden.arith.formats import FORMAT_CODE, WIDTH_BITS
from golden.reduce import ReduceResult, check_arguments
from hdl.arith.auto_classifier import auto_classifier
from hdl.arith.fp32_round import fp32_round
from hdl.arith.kulisch_round import kulisch_round
from hdl.arith.reduce_slice import SliceInput, SliceReadout, reduce_slice
from spec.formats import KULISCH_WIDTH_DEFAULT
from spec.frames import MAX_CAPACITY, POLICY_NAMES

POLICIES = {name: code for code, name in POLICY_NAMES.items()}
OUT_FORMATS = ("exact", "fp32", "bf16", "fp16", "int8", "auto")
ORDERS = ("sequential", "interleaved")
LANES = 16
INDEX_BITS = 12
WRAP_BITS = 16


class SliceRun:
    """Pass-1 output: per element (state, flags, wraps) for Kulisch or FP32 bits, plus cycle counts."""

    def __init__(self, values, cycles, accept_cycles, index_error, elaborate_seconds=0.0, sim_seconds=0.0):
        self.elaborate_seconds = elaborate_seconds      # building the test bench (and, for icarus, the design)
        self.sim_seconds = sim_seconds                  # running it
        self.values = values
        self.cycles = cycles
        self.accept_cycles = accept_cycles
        self.index_error = index_error


def _capacity_for(elements):
    """Smallest power-of-two capacity >= elements (>= 128): few distinct builds to cache."""
    return min(MAX_CAPACITY, max(128, 1 << max(0, (elements - 1).bit_length())))


def _beats(data, in_fmt, order):
    """[(tdata, index, count, fmt)] in admission order for a C x E array (one chunk)."""
    ew = WIDTH_BITS[in_fmt]
    per_beat = 512 // ew
    c, e = data.shape
    rows = []
    for r in range(c):
        row = [int(v) for v in data[r]]
        rows.append([pack_beat(in_fmt, row[start:start + per_beat], start) for start in range(0, e, per_beat)])
    if order == "sequential":
        return [b for beats in rows for b in beats]
    out = []
    for i in range(len(rows[0]) if rows else 0):
        out += [beats[i] for beats in rows]
    return out


def pack_beat(fmt, elements, index):
    """One input beat: (tdata, global index of element 0, element count, format)."""
    ew = WIDTH_BITS[fmt]
    if not 1 <= len(elements) <= 512 // ew:
        raise ValueError(f"a {fmt} beat holds 1..{512 // ew} elements, not {len(elements)}")
    word = 0
    for k, v in enumerate(elements):
        word |= (int(v) & ((1 << ew) - 1)) << (ew * k)
    return word, index, len(elements), fmt


def run_slice(backend, policy, in_fmt, data, width=KULISCH_WIDTH_DEFAULT, order="sequential", capacity=None, **kwargs):
    """Pass 1: admit the C x E array `data` into a reduce_slice and read every range
    (see run_slice_beats for the keyword arguments and the result)."""
    data = np.asarray(data)
    c, e = data.shape
    if capacity is None:
        capacity = _capacity_for(e)
    if e > capacity:
        raise ValueError(f"{e} elements do not fit the slice's capacity {capacity}")
    return run_slice_beats(backend, policy, _beats(data, in_fmt, order), e, width=width, capacity=capacity, **kwargs)


def run_slice_beats(backend, policy, beats, n_elements, width=KULISCH_WIDTH_DEFAULT, capacity=64, src_pause=0.0,
                    sink_pause=0.0, cmd_pause=None, seed=0, fp32_latency=4, paths=None, wrap_bits=WRAP_BITS,
                    extra_commands=(), allow_index_error=False):
    """Admit `beats` ([(tdata, index, count, fmt)], admission order) into a reduce_slice,
    then read out every range holding elements 0 .. n_elements-1 (plus `extra_commands`,
    raw range numbers sent first after the beats).  Random pauses on the input stream,
    the command stream and m_axis_tready.

    Returns SliceRun: .values per element, for "kulisch" (state, flags, wraps) (flags = nan |
    +inf << 1 | -inf << 2 | overflow << 3 as golden.arith.kulisch; wraps the signed net wrap
    count), for "fp32-arrival" the FP32 pattern; .cycles (cycle of the last read-out
    beat), .accept_cycles (cycle of every input transfer), .index_error."""
    n_ranges = -(-n_elements // LANES)
    pol = POLICIES[policy]
    if paths is None:
        paths = "kulisch" if pol == 0 else "fp32"
    if cmd_pause is None:
        cmd_pause = src_pause

    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    policy_sig = Signal(bool(pol))
    s_data = Signal(intbv(0)[512:])
    s_valid, s_ready = Signal(bool(0)), Signal(bool(0))
    s_index = Signal(intbv(0)[INDEX_BITS:])
    s_count = Signal(intbv(0)[7:])
    s_format = Signal(intbv(0)[2:])
    cmd_valid, cmd_ready = Signal(bool(0)), Signal(bool(0))
    cmd_range = Signal(intbv(0)[8:])
    m_data = Signal(intbv(0)[512:])
    m_state = Signal(intbv(0)[width:])
    m_user = Signal(intbv(0)[4 + wrap_bits:])
    m_last, m_valid, m_ready = Signal(bool(0)), Signal(bool(0)), Signal(bool(0))
    index_error = Signal(bool(0))

    out_beats = []
    accept_cycles = []
    commands = list(extra_commands) + list(range(n_ranges))
    status = {"done": False, "cycles": 0, "stalls": 0, "cycle": 0, "index_error": False}
    src_p, snk_p, cmd_p = (pause_generator(src_pause, seed), pause_generator(sink_pause, seed + 1),
                           pause_generator(cmd_pause, seed + 2))
    expected_beats = n_ranges * (LANES if pol == 0 else 1)
    factory = toolchain.select(reduce_slice, backend)

    @block
    def bench():
        # the buses' fields in their classes' order, the order of the converted ports
        s_axis = SliceInput.wrap(tdata=s_data, tvalid=s_valid, tready=s_ready, index=s_index, count=s_count,
                                 format=s_format)
        m_axis = SliceReadout.wrap(tdata=m_data, tuser=m_user, tlast=m_last, tvalid=m_valid, tready=m_ready,
                                   tstate=m_state)
        dut = factory(clk, rst, policy_sig, s_axis, cmd_valid, cmd_ready, cmd_range, m_axis, index_error,
                      CAPACITY=capacity, FP32_LATENCY=fp32_latency, PATHS=paths)

        def load_beat(beat):
            word, index, count, fmt = beat
            s_data.next, s_index.next, s_count.next, s_format.next = word, index, count, FORMAT_CODE[fmt]

        def stalled():
            status["stalls"] += 1

        def load_command(r):
            cmd_range.next = r

        @instance
        def feed():
            yield rst.negedge
            yield offer(clk, s_valid, s_ready, beats, load_beat, src_p,
                        accepted=lambda: accept_cycles.append(status["cycle"]), stalled=stalled)
            yield offer(clk, cmd_valid, cmd_ready, commands, load_command, cmd_p)

        @instance
        def drain():
            while True:
                yield clk.posedge
                status["cycle"] += 1
                status["index_error"] = bool(index_error)     # (signals are cleared when the run ends)
                if m_valid and m_ready:
                    out_beats.append((int(m_data), int(m_state), int(m_user), bool(m_last)))
                    if len(out_beats) == expected_beats:
                        status["done"], status["cycles"] = True, status["cycle"]
                        raise StopSimulation()
                yield clk.negedge
                m_ready.next = not next(snk_p)

        return dut, clock_gen(clk), reset_pulse(clk, rst), feed, drain

    sub_beats = sum(-(-cnt // LANES) for _, _, cnt, _ in beats)
    budget = (sub_beats + len(commands) * (LANES + 8) + 50) * (1 + fp32_latency * (pol == 1))
    budget = int(budget / max(0.05, 1 - max(src_pause, sink_pause, cmd_pause))) + 100
    t0 = time.perf_counter()
    top = bench()
    t1 = time.perf_counter()
    toolchain.run(top, duration=10 * budget, backend=backend)
    t2 = time.perf_counter()
    if not status["done"]:
        raise RuntimeError(f"reduce_slice produced {len(out_beats)} of {expected_beats} read-out beats "
                           f"within {budget} cycles")
    if status["index_error"] and not allow_index_error:
        raise RuntimeError("reduce_slice flagged an index error")
    values = []
    if pol == 0:
        for r in range(n_ranges):
            group = out_beats[LANES * r:LANES * (r + 1)]
            if not group[-1][3] or any(b[3] for b in group[:-1]):
                raise RuntimeError(f"reduce_slice: tlast misplaced in the read-out of range {r}")
            for b in group:
                w = b[2] >> 4
                values.append((b[1], b[2] & 0xF, w - (1 << wrap_bits) if w >> (wrap_bits - 1) else w))
    else:
        for r in range(n_ranges):
            word = out_beats[r][0]
            if not out_beats[r][3]:
                raise RuntimeError(f"reduce_slice: tlast missing on the FP32 read-out of range {r}")
            values += [(word >> (32 * k)) & 0xFFFFFFFF for k in range(LANES)]
    return SliceRun(values[:n_elements], status["cycles"], accept_cycles, status["index_error"], t1 - t0, t2 - t1)


def _by_tag(block_func, got, n):
    """Pipeline outputs (cosim.sim.pipeline.run_pipeline) back in item order, by their tags."""
    results = [None] * n
    for value, tag, _, _ in got:
        results[tag] = value
    if any(r is None for r in results):
        raise RuntimeError(f"{block_func.__name__}: {sum(r is None for r in results)} results missing")
    return results


RUN_TAIL = 16           # cycles run after the last item, past either rounder's latency


def _tag_bits(n):
    return max(1, (max(1, n) - 1).bit_length())


def round_states(backend, items, width=KULISCH_WIDTH_DEFAULT):
    """[(state, flags5, fmt_code)] -> rounded patterns through hdl/arith/kulisch_round.py
    (flags5: nan, +inf, -inf, overflow, wrap count negative)."""
    tw = _tag_bits(len(items))
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    s = dict(v=Signal(bool(0)), value=Signal(intbv(0)[width:]), nan=Signal(bool(0)), pinf=Signal(bool(0)),
             ninf=Signal(bool(0)), ovf=Signal(bool(0)), wneg=Signal(bool(0)), fmt=Signal(intbv(0)[3:]),
             tag=Signal(intbv(0)[tw:]), ov=Signal(bool(0)), bits=Signal(intbv(0)[32:]),
             oval=Signal(intbv(0)[width:]), oflags=Signal(intbv(0)[4:]), otag=Signal(intbv(0)[tw:]))

    def load(item):
        state, flags, fmt = item
        s["value"].next, s["fmt"].next = state, fmt
        for bit, name in enumerate(("nan", "pinf", "ninf", "ovf", "wneg")):
            s[name].next = bool(flags >> bit & 1)

    ports = (clk, rst, s["v"], s["value"], s["nan"], s["pinf"], s["ninf"], s["ovf"], s["wneg"], s["fmt"],
             s["tag"], s["ov"], s["bits"], s["oval"], s["oflags"], s["otag"])
    got = run_pipeline(toolchain.select(kulisch_round, backend), ports, {}, clk, rst, s["v"], s["ov"], items, load,
                       lambda: int(s["bits"]), backend, RUN_TAIL, in_tag=s["tag"], out_tag=s["otag"])
    return _by_tag(kulisch_round, got, len(items))


def round_fp32(backend, items):
    """[(fp32_bits, fmt_code)] -> patterns in that format through hdl/arith/fp32_round.py."""
    tw = _tag_bits(len(items))
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    v, bits, fmt, tag = Signal(bool(0)), Signal(intbv(0)[32:]), Signal(intbv(0)[3:]), Signal(intbv(0)[tw:])
    ov, obits, otag = Signal(bool(0)), Signal(intbv(0)[32:]), Signal(intbv(0)[tw:])

    def load(item):
        bits.next, fmt.next = item

    got = run_pipeline(toolchain.select(fp32_round, backend), (clk, rst, v, bits, fmt, tag, ov, obits, otag), {},
                       clk, rst, v, ov, items, load, lambda: int(obits), backend, RUN_TAIL, in_tag=tag, out_tag=otag)
    return _by_tag(fp32_round, got, len(items))


def run_classifier(backend, tiles, src_pause=0.0, sink_pause=0.0, seed=0):
    """(tile, keep) pairs through hdl/arith/auto_classifier.py, with random pauses on either side;
    returns [(data, keep, format code)] in output order."""
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    s_data, m_data = Signal(intbv(0)[512:]), Signal(intbv(0)[512:])
    s_keep, m_keep = Signal(intbv(0)[16:]), Signal(intbv(0)[16:])
    m_user = Signal(intbv(0)[2:])
    s_valid, s_ready, m_valid, m_ready = (Signal(bool(0)) for _ in range(4))
    out = []
    sp, kp = pause_generator(src_pause, seed), pause_generator(sink_pause, seed + 1)
    factory = toolchain.select(auto_classifier, backend)

    @block
    def bench():
        dut = factory(clk, rst, s_data, s_keep, s_valid, s_ready, m_data, m_keep, m_user, m_valid, m_ready)

        def load(item):
            tile, keep = item
            s_data.next = sum(int(v) << (32 * k) for k, v in enumerate(tile))
            s_keep.next = keep

        @instance
        def drive():
            yield rst.negedge
            yield offer(clk, s_valid, s_ready, tiles, load, sp)

        @instance
        def sink():
            while True:
                yield clk.posedge
                if m_valid and m_ready:
                    out.append((int(m_data), int(m_keep), int(m_user)))
                yield clk.negedge
                m_ready.next = not next(kp)
        return dut, clock_gen(clk), reset_pulse(clk, rst), drive, sink

    per_tile = 5 if src_pause or sink_pause else 2          # cycles a tile may take, pauses included
    toolchain.run(bench(), duration=10 * (20 + per_tile * len(tiles)), backend=backend)
    return out


def classify_tiles(backend, fp32_values):
    """Format code per 16-element tile through hdl/arith/auto_classifier.py."""
    tiles = [fp32_values[i:i + LANES] for i in range(0, len(fp32_values), LANES)]
    codes = [code for _, _, code in run_classifier(backend, [(t, (1 << len(t)) - 1) for t in tiles])]
    if len(codes) != len(tiles):
        raise RuntimeError(f"auto_classifier returned {len(codes)} of {len(tiles)} tiles")
    return codes


def _check(policy, in_fmt, out_fmt, data, width, backend, order):
    check_arguments(policy, out_fmt, width)
    if in_fmt not in FORMAT_CODE:
        raise ValueError(f"unknown input format {in_fmt!r}; choose one of {', '.join(FORMAT_CODE)}")
    if backend not in toolchain.BACKENDS:
        raise ValueError(f"unknown back end {backend!r}; choose one of {', '.join(toolchain.BACKENDS)}")
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; choose one of {', '.join(ORDERS)}")
    data = np.asarray(data)
    if data.ndim != 2 or data.shape[0] < 1 or data.shape[1] < 1:
        raise ValueError(f"data must be a non-empty C x E array, got shape {data.shape}")
    if np.any(data.astype(np.int64) >> WIDTH_BITS[in_fmt]) or np.any(data.astype(np.int64) < 0):
        raise ValueError(f"data holds values that are not {WIDTH_BITS[in_fmt]}-bit {in_fmt} patterns")
    return data


def reduce_through_hardware(policy, in_fmt, out_fmt, data, width=KULISCH_WIDTH_DEFAULT, backend="myhdl",
                            order="sequential"):
    """The hardware counterpart of golden.reduce.reduce (same arguments and ReduceResult)."""
    data = _check(policy, in_fmt, out_fmt, data, width, backend, order)
    c, e = data.shape
    values = []
    for start in range(0, e, MAX_CAPACITY):
        chunk = data[:, start:start + MAX_CAPACITY]
        values += run_slice(backend, policy, in_fmt, chunk, width=width, order=order).values

    n_limbs = -(-width // 64)
    flags = np.zeros(e, dtype=np.uint8)
    wraps = np.zeros(e, dtype=np.int64)
    auto_formats = None
    if policy == "kulisch":
        flags[:] = [f for _, f, _ in values]
        wraps[:] = [w for _, _, w in values]
        if out_fmt == "exact":
            bits = np.zeros((e, n_limbs), dtype=np.uint64)
            for i, (state, _, _) in enumerate(values):
                signed = state - (1 << width) if state >> (width - 1) else state
                x = signed & ((1 << (64 * n_limbs)) - 1)
                bits[i] = [(x >> (64 * k)) & 0xFFFFFFFFFFFFFFFF for k in range(n_limbs)]
            return ReduceResult(policy, in_fmt, out_fmt, backend, width, bits, flags, wraps, None)
        target = "fp32" if out_fmt == "auto" else out_fmt
        rounded = round_states(backend, [(s, f | (w < 0) << 4, FORMAT_CODE[target]) for s, f, w in values], width)
    else:
        rounded = list(values)
        if out_fmt not in ("fp32", "auto"):
            rounded = round_fp32(backend, [(v, FORMAT_CODE[out_fmt]) for v in values])
    if out_fmt == "auto":
        codes = classify_tiles(backend, rounded)
        rounded = round_fp32(backend, [(v, codes[i // LANES]) for i, v in enumerate(rounded)])
        auto_formats = np.array(codes, dtype=np.uint8)
        dtype = np.uint32
    else:
        dtype = {"fp32": np.uint32, "bf16": np.uint16, "fp16": np.uint16, "int8": np.uint8}[out_fmt]
    return ReduceResult(policy, in_fmt, out_fmt, backend, width, np.array(rounded, dtype=dtype), flags, wraps,
                        auto_formats)
