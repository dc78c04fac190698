"""ECMP hashing + path selection, golden models against the HDL: flows per second,
implementation x size.

    python -m pytest bench/fabric/test_bench_ecmp_hdl.py --benchmark-only

Every case takes the same random RoCEv2 flow set (CRC-32 over the 5-tuple, 32
uplinks, "mod"):

    python / numba / c   golden.fabric.ecmp.bin_flows_ref, golden.fabric.ecmp_numba.bin_flows,
                         golden.fabric.ecmp_c.bin_flows (hash + bin per source leaf)
    myhdl                ecmp_hash_unit simulated by MyHDL, one flow per cycle
    icarus               the same, converted and co-simulated per cycle
    vvp / verilator      ecmp_hash_stream (the hash unit behind AXI-Stream) in the
                         batched file-driven test bench (cosim.sim.batch), every result
                         written back and checked

Every HDL case checks its results bit for bit against the C kernel.  Timings are
end to end (stimulus generation, simulator start, parsing the results); for the
batched runs `extra_info["sim_only_flows_per_s"]` gives the simulator process alone.
The batched test bench holds at most cosim.sim.batch.MAX_BEATS beats per run, so larger
sets run as several runs of one compiled simulator (their times add up).
The per-cycle simulators run only the small size (~0.6 ms per co-simulated cycle).
"""
import numpy as np
import pytest
from myhdl import ResetSignal, Signal, intbv

from golden.fabric import ecmp_c as c_ecmp
from cosim.sim import toolchain
from cosim.sim.axis import AxisFrame
from cosim.sim.batch import MAX_BEATS, BatchDesign, StreamStimulus
from cosim.sim.pipeline import run_pipeline
from golden.fabric import ecmp, ecmp_numba
from hdl.fabric.ecmp_hash_stream import ecmp_hash_stream
from hdl.fabric.ecmp_hash_unit import ecmp_hash_unit

from test_bench_ecmp import flows

PATHS = 32
SIZES = (10_000, 100_000)


def tuple_words(fs):
    """The flows' 104-bit canonical 5-tuples (collective_pkg.pack_tuple layout)."""
    return [(int(a) << 72) | (int(b) << 40) | (int(sp) << 24) | (int(dp) << 8) | int(pr)
            for a, b, sp, dp, pr in zip(fs.src_ip, fs.dst_ip, fs.src_port, fs.dst_port, fs.proto)]


def expected_words(fs):
    h = c_ecmp.hash_flows(fs, "crc32").astype(np.uint64)
    return [int(x) for x in ((h % np.uint64(PATHS)) << np.uint64(32)) | h]


def per_cycle(backend, words):
    """Drive the hash unit one flow per cycle; return [(path << 32) | hash] in order."""
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    s_valid, m_valid, s_user, m_user = (Signal(bool(0)) for _ in range(4))
    s_tuple, m_hash, m_path = Signal(intbv(0)[104:]), Signal(intbv(0)[32:]), Signal(intbv(0)[5:])
    factory = toolchain.select(ecmp_hash_unit, backend)

    def load(w):
        s_tuple.next = w

    ports = (clk, rst, s_valid, s_tuple, s_user, m_valid, m_hash, m_path, m_user)
    got = run_pipeline(factory, ports, dict(PATHS=PATHS), clk, rst, s_valid, m_valid, words, load,
                       lambda: (int(m_path) << 32) | int(m_hash), backend,
                       latency=2, stop_when_done=True)
    return [w for w, *_ in got]


_DESIGNS = {}


def stream_design(simulator):
    if simulator not in _DESIGNS:
        b = lambda: Signal(bool(0))
        sig = (b(), ResetSignal(0, active=1, isasync=False), Signal(intbv(0)[104:]), b(), b(), b(),
               Signal(intbv(0)[37:]), b(), b(), b())
        _DESIGNS[simulator] = BatchDesign(ecmp_hash_stream, *sig, simulator=simulator, PATHS=PATHS)
    return _DESIGNS[simulator]


def batched(design, words, sim_seconds):
    out = []
    for k in range(0, len(words), MAX_BEATS):
        chunk = words[k:k + MAX_BEATS]
        res = design.run({"s_axis": StreamStimulus([AxisFrame(chunk)])}, max_cycles=len(chunk) + 1000,
                         idle_stop=20)
        sim_seconds.append(res.wall_seconds)
        out += [b for f in res.frames["m_axis"] for b in f.beats]
    return out


GOLDEN = {
    "c": lambda fs: c_ecmp.bin_flows(fs, PATHS, "crc32", n_groups=32),
    "numba": lambda fs: ecmp_numba.bin_flows(fs, PATHS, "crc32", n_groups=32),
    "python": lambda fs: ecmp.bin_flows_ref(fs, PATHS, "crc32", n_groups=32),
}
PER_CYCLE = ("myhdl", "icarus")
BATCHED = ("vvp", "verilator")
CASES = [(i, s) for i in GOLDEN for s in SIZES] + [(i, SIZES[0]) for i in PER_CYCLE] + \
        [(i, s) for i in BATCHED for s in SIZES]


@pytest.mark.parametrize("impl,size", CASES, ids=[f"{i}-{s}" for i, s in CASES])
def test_bench_flows_per_second(benchmark, impl, size):
    fs = flows(size)
    info = benchmark.extra_info
    if impl in GOLDEN:
        GOLDEN[impl](flows(100))                       # warm the JIT / tables
        if impl == "python":
            counts = benchmark.pedantic(GOLDEN[impl], (fs,), rounds=1, iterations=1)
        else:
            counts = benchmark(GOLDEN[impl], fs)
        assert int(np.asarray(counts).sum()) == size
    else:
        words, want = tuple_words(fs), expected_words(fs)
        if impl in PER_CYCLE:
            per_cycle(impl, tuple_words(flows(100)))   # build / convert outside the timing
            got = benchmark.pedantic(per_cycle, (impl, words), rounds=1, iterations=1)
        else:
            design = stream_design("icarus" if impl == "vvp" else impl)
            batched(design, tuple_words(flows(100)), [])
            sim = []
            got = benchmark.pedantic(batched, (design, words, sim), rounds=2, iterations=1)
            info["sim_only_flows_per_s"] = size / (sum(sim) / 2)
        assert got == want
    info["flows_per_s"] = size / benchmark.stats.stats.min
