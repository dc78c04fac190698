"""cosim.sim.vector_batch: any block driven by per-cycle input vectors in native vvp
gives the same samples as the MyHDL block under the same protocol; bad vectors are
refused with a clear message before anything runs."""
import random

import pytest
from myhdl import ResetSignal, Signal, intbv

from cosim.sim.vector_batch import VectorBench, run_myhdl
from hdl.fabric import collective_pkg as pkg
from hdl.fabric.all_to_all_model import all_to_all_model
from hdl.fabric.ring_allreduce_model import ring_allreduce_model

W, M = 16, 4


def sig(n):
    return Signal(bool(0)) if n == 1 else Signal(intbv(0)[n:])


def ring_ports():
    return dict(clk=sig(1), rst=ResetSignal(0, active=1, isasync=False), start=sig(1), step_tick=sig(1),
                link_gbps=sig(M * W), slowest_gbps=sig(W), pacing_member=sig(2), step_bytes_kb=sig(32),
                steps_total=sig(32), step_time_us=sig(32), collective_time_ms=sig(32), ideal_time_ms=sig(32),
                slowdown_x100=sig(16), running=sig(1), done=sig(1), c_steps_done=sig(32))


RING_OUT = ["slowest_gbps", "pacing_member", "step_time_us", "collective_time_ms", "slowdown_x100", "running",
            "done", "c_steps_done"]


def ring_vectors(seed=1, n=300):
    rng = random.Random(seed)
    return [dict(start=int(rng.random() < 0.05), step_tick=rng.randrange(2), link_gbps=rng.getrandbits(M * W))
            if rng.random() < 0.7 else {} for _ in range(n)]          # {}: every input keeps its value


@pytest.mark.parametrize("generation", ["2005", "2012"])
def test_clocked_block_batched_equals_myhdl(generation):
    vecs = ring_vectors()
    ref = run_myhdl(ring_allreduce_model, vecs, outputs=RING_OUT, PARTICIPANTS=16, **ring_ports())
    got = VectorBench(ring_allreduce_model, generation=generation, outputs=RING_OUT, PARTICIPANTS=16,
                      **ring_ports()).run(vecs)
    assert got.samples == ref.samples and len(got.samples) == len(vecs) + 1
    assert sum(s["done"] for s in ref.samples) >= 2


def test_combinational_block_without_clock():
    ports = dict(collective=sig(3), participants=sig(16), flows_per_leaf_o=sig(32), flows_per_uplink=sig(32),
                 efficiency_pct=sig(8), egress_mb=sig(32), ideal_ms=sig(32), time_ms=sig(32), slowdown_x100=sig(16),
                 is_ecmp_best_case=sig(1), ring_flows_same_job=sig(16))
    outs = [n for n in ports if n not in ("collective", "participants")]
    vecs = [dict(collective=c, participants=p) for c in (pkg.COLL_ALLREDUCE, pkg.COLL_ALLTOALL) for p in (2, 1024)]
    got = VectorBench(all_to_all_model, **ports).run(vecs)
    ref = run_myhdl(all_to_all_model, vecs, outputs=outs, **ports)
    assert got.samples == ref.samples
    assert [s["efficiency_pct"] for s in got.samples[1:]] == [28, 28, 28, 94]


def test_bad_vectors_are_refused():
    bench = VectorBench(ring_allreduce_model, max_vectors=8, PARTICIPANTS=16, **ring_ports())
    with pytest.raises(ValueError, match="no input"):
        bench.run([dict(step_tock=1)])
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        bench.run([dict(link_gbps=1 << 64)])
    with pytest.raises(ValueError, match="capacity"):
        bench.run([{}] * 9)
    with pytest.raises(ValueError, match="simulator"):
        VectorBench(ring_allreduce_model, simulator="xcelium", **ring_ports())
    with pytest.raises(ValueError, match="no output"):
        VectorBench(ring_allreduce_model, outputs=["nope"], **ring_ports())
