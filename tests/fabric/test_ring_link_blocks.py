"""ring_link_rates and ring_step_engine alone, against Python references written from
their docstrings, with hostile stimulus (double placements, ends of connections
that are not placed, indices outside the table, rates of 0 and above the chunk,
starts in the middle of a step, resets in every phase); on MyHDL and batched Icarus
under -g2005 and -g2012 (cosim.sim.vector_batch), which must agree cycle for cycle."""
import random

import pytest
from myhdl import ResetSignal

from cosim.sim.vector_batch import VectorBench, run_myhdl
from hdl.fabric.ring_link_rates import ring_link_rates
from hdl.fabric.ring_step_engine import ring_step_engine
from test_collective_blocks import W, pack, sig, unpack


def clk_rst():
    return dict(clk=sig(1), rst=ResetSignal(0, active=1, isasync=False))


# ------------------------------------------------------------------ ring_link_rates
CONNS, PATHS, PW, CW = 6, 4, 3, 4


def table_ports():
    return dict(place=sig(1), place_conn=sig(CW), place_path=sig(PW), place_gbps=sig(W), end_valid=sig(1),
                end_conn=sig(CW), path_load_gbps=sig(PATHS * W), flow_end=sig(1), ending_path=sig(PW),
                ending_gbps=sig(W), conn_gbps=sig(CONNS * W), conn_path=sig(CONNS * PW), conns_placed=sig(4),
                table_error=sig(1))


TABLE_OUT = ["flow_end", "ending_path", "ending_gbps", "conn_gbps", "conn_path", "conns_placed", "table_error"]


def table_vectors(seed, n=400):
    rng = random.Random(seed)
    vecs = []
    for _ in range(n):
        vecs.append(dict(place=int(rng.random() < 0.4), place_conn=rng.choice((rng.randrange(CONNS), 7, 15)),
                         place_path=rng.choice((rng.randrange(PATHS), 5)),
                         place_gbps=rng.choice((100, 50, 1, 0, 65535, rng.getrandbits(16))),
                         end_valid=int(rng.random() < 0.3), end_conn=rng.choice((rng.randrange(CONNS), 9)),
                         path_load_gbps=pack([rng.choice((0, 50, 100, 150, 300, 65535, rng.getrandbits(16)))
                                              for _ in range(PATHS)])))
    return vecs


def table_reference(vectors, rate=100):
    """Samples the block must give: sample 0 at reset, sample j+1 after vector j."""
    placed, path, gbps = [0] * CONNS, [0] * CONNS, [0] * CONNS
    shares, err = [0] * CONNS, 0
    cur = dict(place=0, place_conn=0, place_path=0, place_gbps=0, end_valid=0, end_conn=0, path_load_gbps=0)
    out = []

    def sample():
        e = cur["end_conn"]
        ok = e < CONNS
        return dict(flow_end=int(cur["end_valid"] and ok and placed[e] == 1),
                    ending_path=path[e] if ok else 0, ending_gbps=gbps[e] if ok else 0,
                    conn_gbps=pack(shares), conn_path=pack(path, PW), conns_placed=sum(placed), table_error=err)

    out.append(sample())
    for v in vectors:
        # sample j + 1: vector j on the inputs, the registers as the edges before left them
        cur.update(v)
        out.append(sample())
        loads = unpack(cur["path_load_gbps"], PATHS)
        # the edge: shares from the current table and loads, then the table update
        shares = [gbps[c] * rate // max(loads[path[c]], rate) if placed[c] else 0 for c in range(CONNS)]
        if cur["place"] and (cur["place_conn"] >= CONNS or cur["place_path"] >= PATHS):
            err = 1
        if cur["end_valid"] and cur["end_conn"] < CONNS:
            placed[cur["end_conn"]] = 0
        if cur["place"] and cur["place_conn"] < CONNS and cur["place_path"] < PATHS:
            c = cur["place_conn"]
            if placed[c]:
                err = 1
            placed[c], path[c], gbps[c] = 1, cur["place_path"], cur["place_gbps"]
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_link_table_matches_reference_myhdl(seed):
    vecs = table_vectors(seed)
    got = run_myhdl(ring_link_rates, vecs, outputs=TABLE_OUT, **clk_rst(), **table_ports())
    ref = table_reference(vecs)
    assert got.samples == ref
    assert any(s["table_error"] for s in ref) and any(s["flow_end"] for s in ref)
    assert len({s["conn_gbps"] for s in ref}) > 50                     # the shares really move


@pytest.mark.parametrize("generation", ["2005", "2012"])
def test_link_table_batched_icarus_matches_reference(generation):
    vecs = table_vectors(1)
    bench = VectorBench(ring_link_rates, generation=generation, outputs=TABLE_OUT, **clk_rst(), **table_ports())
    assert bench.run(vecs).samples == table_reference(vecs)


def test_link_table_shares_are_the_seeds_one_over_k():
    """k connections that each declare the line rate, pinned to one uplink, get floor(100 / k)."""
    for k in range(1, 7):
        loads = pack([100 * k, 0, 0, 0])
        vecs = [dict(place=1, place_conn=c, place_path=0, place_gbps=100, path_load_gbps=loads) for c in range(k)]
        vecs += [dict(place=0), {}]
        got = run_myhdl(ring_link_rates, vecs, outputs=["conn_gbps"], **clk_rst(), **table_ports())
        assert unpack(got.samples[-1]["conn_gbps"], CONNS)[:k] == [100 // k] * k


def test_link_table_rejects_impossible_parameters():
    p = table_ports()
    with pytest.raises(ValueError, match="RATE"):
        ring_link_rates(**clk_rst(), **p, RATE=0)
    p["place_path"] = sig(1)
    with pytest.raises(ValueError, match="place_path"):
        ring_link_rates(**clk_rst(), **p)
    p = table_ports()
    p["conn_path"] = sig(CONNS * PW + 1)
    with pytest.raises(ValueError, match="conn_path"):
        ring_link_rates(**clk_rst(), **p)


# ------------------------------------------------------------------ ring_step_engine
M, CHUNK = 4, 300


def engine_ports():
    return dict(start=sig(1), running=sig(1), link_gbps=sig(M * W), step_tick=sig(1), step_cycles=sig(8),
                c_step_wait=sig(12), c_run_cycles=sig(10))


ENGINE_OUT = ["step_tick", "step_cycles", "c_step_wait", "c_run_cycles"]


def engine_vectors(seed, n=600):
    rng = random.Random(seed)
    vecs, rates, running = [], [100] * M, 0
    for i in range(n):
        v = {}
        if rng.random() < 0.02:
            rates = [rng.choice((0, 1, 7, 50, 100, 299, 300, 301, 65535)) for _ in range(M)]
            v["link_gbps"] = pack(rates)
        elif rng.random() < 0.05:
            rates = [rng.randint(1, 120) for _ in range(M)]
            v["link_gbps"] = pack(rates)
        v["start"] = int(rng.random() < 0.01)
        if rng.random() < 0.03:
            running ^= 1
        v["running"] = running
        vecs.append(v)
    return vecs


def engine_reference(vectors):
    cur = dict(start=0, running=0, link_gbps=0)
    prog, cyc = [0] * M, 0
    step_cycles = wait = run_cycles = 0
    out = []

    def tick():
        rates = unpack(cur["link_gbps"], M)
        return int(bool(cur["running"]) and all(p + r >= CHUNK for p, r in zip(prog, rates)))

    def sample():
        return dict(step_tick=tick(), step_cycles=step_cycles, c_step_wait=wait, c_run_cycles=run_cycles)

    out.append(sample())
    for v in vectors:
        # sample j + 1: vector j on the inputs, the registers as the edges before left them
        cur.update(v)
        out.append(sample())
        t = tick()
        rates = unpack(cur["link_gbps"], M)
        if cur["start"]:
            prog, cyc, run_cycles, wait = [0] * M, 0, 0, 0
        elif cur["running"]:
            run_cycles = min(run_cycles + 1, 1023)
            wait = min(wait + sum(1 for p in prog if p >= CHUNK), 4095)
            if t:
                prog, step_cycles, cyc = [0] * M, min(cyc + 1, 255), 0
            else:
                prog = [min(p + r, CHUNK) for p, r in zip(prog, rates)]
                cyc = min(cyc + 1, 255)
    return out


@pytest.mark.parametrize("seed", [3, 4])
def test_step_engine_matches_reference_myhdl(seed):
    vecs = engine_vectors(seed)
    got = run_myhdl(ring_step_engine, vecs, outputs=ENGINE_OUT, **clk_rst(), **engine_ports(), MEMBERS=M,
                    CHUNK=CHUNK)
    ref = engine_reference(vecs)
    assert got.samples == ref
    assert sum(s["step_tick"] for s in ref) > 20 and max(s["c_step_wait"] for s in ref) > 0


@pytest.mark.parametrize("generation", ["2005", "2012"])
def test_step_engine_batched_icarus_matches_reference(generation):
    vecs = engine_vectors(3)
    bench = VectorBench(ring_step_engine, generation=generation, outputs=ENGINE_OUT, **clk_rst(),
                        **engine_ports(), MEMBERS=M, CHUNK=CHUNK)
    assert bench.run(vecs).samples == engine_reference(vecs)


def test_step_engine_step_is_set_by_the_slowest_link():
    """Links at 100, 100, 100 and 100/k: a step takes ceil(300 / (100 // k)) cycles, and
    the three healthy links wait the rest of it."""
    for k in (1, 2, 3, 4):
        rates = [100, 100, 100 // k, 100]
        vecs = [dict(link_gbps=pack(rates), start=1, running=0), dict(start=0, running=1)] + [{}] * 60
        got = run_myhdl(ring_step_engine, vecs, outputs=ENGINE_OUT, **clk_rst(), **engine_ports(), MEMBERS=M,
                        CHUNK=CHUNK).samples
        t = -(-CHUNK // (100 // k))
        ticks = [i for i, s in enumerate(got) if s["step_tick"]]
        assert [b - a for a, b in zip(ticks, ticks[1:])] == [t] * (len(ticks) - 1)
        assert got[ticks[1] + 1]["step_cycles"] == t
        per_step = 3 * (t - 3)
        assert got[ticks[2] + 1]["c_step_wait"] - got[ticks[1] + 1]["c_step_wait"] == per_step


def test_step_engine_rejects_impossible_parameters():
    with pytest.raises(ValueError, match="CHUNK"):
        ring_step_engine(**clk_rst(), **engine_ports(), MEMBERS=M, CHUNK=0)
    with pytest.raises(ValueError, match="whole lanes"):
        ring_step_engine(**clk_rst(), **engine_ports(), MEMBERS=3, CHUNK=10)
