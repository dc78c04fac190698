"""Node performance: simulator speed per back end and the RTL's cycles per beat.

    bash run.sh bench bench/node/test_bench_node.py --benchmark-only

`extra_info` carries the figures that matter (cycles/s, beats/cycle); the
benchmark time itself is the wall time of one simulated collective.
"""
import pytest

from cosim.node.linerate import measure
from cosim.node.node_harness import batch_design, check, run_node
from cosim.node.scenarios import collective, demo_operation

# (back end, elements): the per-cycle back ends get a smaller collective
CASES = [("myhdl", 256), ("icarus", 256), ("icarus", 1024), ("batch-icarus", 1024), ("batch-icarus", 4096),
         ("batch-verilator", 1024), ("batch-verilator", 4096)]


def timed_batched_run(benchmark, simulator, sc, rounds, **run_kwargs):
    """Time the batched design's run of the scenario's streams (compiled and loaded outside the timing)."""
    from cosim.sim.batch import StreamStimulus
    design = batch_design(simulator)
    stim = {f"s_axis_{p}": StreamStimulus(sc.stream(p)) for p in (0, 1)}
    return benchmark.pedantic(design.run, args=(stim,), kwargs=run_kwargs, rounds=rounds, iterations=1)


@pytest.mark.parametrize("backend,elements", CASES, ids=[f"{b}-E{e}" for b, e in CASES])
def test_simulator_speed(benchmark, backend, elements):
    sc = collective(demo_operation("kulisch", elements=elements, contributors=4), seed=1)
    if backend.startswith("batch-"):
        batch_design(backend.split("-", 1)[1])          # compile outside the timing
    run = benchmark.pedantic(run_node, args=(sc, backend), kwargs={"read_counters": False}, rounds=1, iterations=1)
    assert check(sc, run).ok
    benchmark.extra_info.update(cycles=run.cycles, cycles_per_second=run.cycles / run.wall_seconds)


@pytest.mark.parametrize("capture", [True, False], ids=["captured", "bare"])
@pytest.mark.parametrize("simulator", ["icarus", "verilator"])
def test_batched_capture_overhead(benchmark, simulator, capture):
    """Batched run with every output beat written vs the bare simulator on the same stimulus."""
    sc = collective(demo_operation("kulisch", elements=4096, contributors=4), seed=1)
    res = timed_batched_run(benchmark, simulator, sc, 3, capture=capture, idle_stop=150)
    benchmark.extra_info.update(cycles=res.cycles, cycles_per_second=res.cycles / res.wall_seconds)


@pytest.mark.parametrize("simulator", ["icarus", "verilator"])
def test_batched_sustained(benchmark, simulator):
    """Four collectives back to back (E 4096, eight contributors each, ~6,000 cycles): the
    simulators' sustained speed, with their fixed start-up (test_batched_startup) amortised."""
    from cosim.node.scenarios import build
    ops = [demo_operation("kulisch", elements=4096, contributors=8, seed=k, op_id=k) for k in range(1, 5)]
    res = timed_batched_run(benchmark, simulator, build(ops, seed=1), 1, capture=False, idle_stop=150)
    benchmark.extra_info.update(cycles=res.cycles, cycles_per_second=res.cycles / res.wall_seconds)


@pytest.mark.parametrize("simulator", ["icarus", "verilator"])
def test_batched_startup(benchmark, simulator):
    """The fixed cost of one batched run: load the design and a collective's stimulus, run one cycle."""
    sc = collective(demo_operation("kulisch", elements=4096, contributors=4), seed=1)
    res = timed_batched_run(benchmark, simulator, sc, 3, capture=False, max_cycles=1)
    benchmark.extra_info.update(cycles=res.cycles, seconds=res.wall_seconds)


@pytest.mark.parametrize("same_range", [False, True], ids=["different-ranges", "same-range"])
@pytest.mark.parametrize("fmt", ["int8", "fp16", "bf16", "fp32"])
@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
def test_line_rate(benchmark, policy, fmt, same_range):
    r = benchmark.pedantic(measure, args=(policy, fmt, same_range), rounds=1, iterations=1)
    assert r["ok"]
    benchmark.extra_info.update(beats_per_cycle_port0=r["port0"], beats_per_cycle_port1=r["port1"],
                                drain_cycles=r["drain"], cycles=r["cycles"])
