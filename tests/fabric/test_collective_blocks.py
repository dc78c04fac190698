"""The collective fabric's blocks, each against a Python reference written from
its documented behaviour, on both back ends; the seed's figures recomputed;
parameter checks at elaboration."""
import random

import pytest
from myhdl import ResetSignal, Signal, StopSimulation, block, instance, intbv

from cosim.sim import toolchain
from cosim.sim.tbutil import clock_gen, reset_pulse
from golden.fabric import ecmp
from hdl.fabric import collective_pkg as pkg
from hdl.fabric.all_to_all_model import all_to_all_model
from hdl.fabric.collective_telemetry import collective_telemetry
from hdl.fabric.load_aware_selector import load_aware_selector
from hdl.fabric.ring_allreduce_model import ring_allreduce_model
from hdl.fabric.slowest_member_tracker import slowest_member_tracker
from hdl.fabric.stall_accountant import stall_accountant
from hdl.fabric.striping_controller import striping_controller

W = 16


def sig(n):
    return Signal(bool(0)) if n == 1 else Signal(intbv(0)[n:])


def pack(lanes, w=W):
    return sum(v << (w * i) for i, v in enumerate(lanes))


def unpack(word, n, w=W):
    return [(word >> (w * i)) & ((1 << w) - 1) for i in range(n)]


def drive(backend, func, ports, inputs, vectors, clocked=True, **params):
    """Apply vectors[k] (input name -> value) at the k-th falling edge after reset and
    return, for each, every non-input port sampled at the following rising edge."""
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    kw = dict(ports)
    if clocked:
        kw.update(clk=clk, rst=rst)
    outs = [n for n in ports if n not in inputs]
    got = []
    factory = toolchain.select(func, backend)

    @block
    def bench():
        dut = factory(**kw, **params)

        @instance
        def stim():
            yield rst.negedge
            for vec in vectors:
                yield clk.negedge
                for n, v in vec.items():
                    ports[n].next = v
                yield clk.posedge
                got.append({n: int(ports[n]) for n in outs})
            raise StopSimulation()

        return dut, clock_gen(clk), reset_pulse(clk, rst), stim

    toolchain.run(bench(), backend=backend)
    return got


def sat(v, width):
    return min(v, (1 << width) - 1)


# ---------------------------------------------------------------- slowest_member_tracker
def test_tracker_matches_reference(backend):
    M = 8
    ports = dict(sample=sig(1), member_gbps=sig(M * W), min_gbps=sig(W), mean_gbps=sig(W), max_gbps=sig(W),
                 collective_gbps=sig(W), slowest_member=sig(3), mean_over_min_x10=sig(8),
                 mean_would_overstate=sig(1), reduction_op=sig(2), c_samples=sig(32), c_slowest_unchanged=sig(4))
    rng = random.Random(4)
    lanes_seq, vectors = [], []
    for k in range(160):
        if k < 30:
            lanes = [50, 40, 40, 90, 60, 70, 40, 80]              # pinned, ties: lowest index wins
        else:
            lanes = [rng.choice((0, 1, 65535, rng.randint(1, 100))) for _ in range(M)]
        lanes_seq.append(lanes)
        vectors.append(dict(member_gbps=pack(lanes), sample=int(k % 5 != 4)))
    got = drive(backend, slowest_member_tracker, ports, ("sample", "member_gbps"), vectors)
    samples = unchanged = prev = 0
    for vec, lanes, g in zip(vectors, lanes_seq, got):
        lo, mean = min(lanes), sum(lanes) // M
        idx = lanes.index(lo)
        assert (g["min_gbps"], g["mean_gbps"], g["max_gbps"], g["collective_gbps"]) == (lo, mean, max(lanes), lo)
        assert g["slowest_member"] == idx and g["reduction_op"] == pkg.RED_MIN
        assert g["mean_over_min_x10"] == (255 if lo == 0 else sat(mean * 10 // lo, 8))
        assert g["mean_would_overstate"] == int(mean > lo)
        assert (g["c_samples"], g["c_slowest_unchanged"]) == (samples, unchanged)
        if vec["sample"]:
            samples += 1
            unchanged = min(unchanged + 1, 15) if idx == prev else 0
            prev = idx
    assert max(g["c_slowest_unchanged"] for g in got) == 15      # saturated during the pinned run


def test_tracker_rejects_bad_widths():
    with pytest.raises(ValueError, match="whole number"):
        slowest_member_tracker(sig(1), ResetSignal(0, active=1, isasync=False), sig(1), sig(100), *[sig(W)] * 4,
                               sig(3), sig(16), sig(1), sig(2), sig(32), sig(32))
    with pytest.raises(ValueError, match="too narrow"):
        slowest_member_tracker(sig(1), ResetSignal(0, active=1, isasync=False), sig(1), sig(16 * W), *[sig(W)] * 4,
                               sig(3), sig(16), sig(1), sig(2), sig(32), sig(32))


# ---------------------------------------------------------------- ring_allreduce_model
def ring_ports(M):
    return dict(start=sig(1), step_tick=sig(1), link_gbps=sig(M * W), slowest_gbps=sig(W), pacing_member=sig(4),
                step_bytes_kb=sig(32), steps_total=sig(32), step_time_us=sig(32), collective_time_ms=sig(32),
                ideal_time_ms=sig(32), slowdown_x100=sig(16), running=sig(1), done=sig(1), c_steps_done=sig(32))


def test_ring_model_matches_reference(backend):
    M, N, S_MB, RATE = 6, 8, 8000, 100
    rng = random.Random(8)
    vectors, lanes_seq = [], []
    for k in range(120):
        lanes = [rng.choice((0, 100, rng.randint(1, 100))) for _ in range(M)] if k % 7 else [100] * M
        lanes_seq.append(lanes)
        vectors.append(dict(link_gbps=pack(lanes), start=int(k in (2, 40, 47, 90)), step_tick=int(rng.random() < 0.7)))
    got = drive(backend, ring_allreduce_model, ring_ports(M), ("start", "step_tick", "link_gbps"), vectors,
                PARTICIPANTS=N, S_MB=S_MB, RATE=RATE)
    steps, kb = 2 * (N - 1), S_MB * 1000 // N
    running = c = 0
    for vec, lanes, g in zip(vectors, lanes_seq, got):
        lo = min(lanes)
        assert (g["slowest_gbps"], g["pacing_member"]) == (lo, lanes.index(lo))
        assert (g["steps_total"], g["step_bytes_kb"]) == (steps, kb)
        assert g["ideal_time_ms"] == S_MB * 8 * steps // (N * RATE)
        big = (1 << 32) - 1
        assert g["step_time_us"] == (big if lo == 0 else kb * 8 // lo)
        assert g["collective_time_ms"] == (big if lo == 0 else S_MB * 8 * steps // (N * lo))
        assert g["slowdown_x100"] == (65535 if lo == 0 else RATE * 100 // lo)
        assert (g["running"], g["c_steps_done"]) == (running, c)
        if vec["start"]:
            running, c = 1, 0
        elif running and vec["step_tick"]:
            c += 1
            running = int(c < steps)
    assert sum(g["done"] for g in got) >= 2


def test_ring_model_reproduces_seed_figures():
    """S = 8 GB = 8 000 MB, N = 1 024: 2 046 steps, ideal 1.279 s (seed), and the
    slowdown is exactly k when the busiest uplink carries k ring flows."""
    M = 4
    for k in (1, 2, 3, 4, 6):
        vec = dict(link_gbps=pack([100, 100 // k, 100, 100]), start=0, step_tick=0)
        g = drive("myhdl", ring_allreduce_model, ring_ports(M), ("start", "step_tick", "link_gbps"), [vec],
                  S_MB=8000)[0]
        assert g["steps_total"] == 2046
        assert g["ideal_time_ms"] == 8000 * 8 * 2046 // (1024 * 100) == 1278      # seed: 1.279 s (rounded)
        if 100 % k == 0:
            assert g["slowdown_x100"] == 100 * k
            assert g["collective_time_ms"] == 8000 * 8 * 2046 // (1024 * (100 // k))


def test_ring_model_rejects_bad_parameters():
    p = ring_ports(4)
    with pytest.raises(ValueError, match="PARTICIPANTS"):
        ring_allreduce_model(sig(1), ResetSignal(0, active=1, isasync=False), **p, PARTICIPANTS=1)
    p["steps_total"] = sig(8)
    with pytest.raises(ValueError, match="steps_total"):
        ring_allreduce_model(sig(1), ResetSignal(0, active=1, isasync=False), **p)


# ---------------------------------------------------------------- stall_accountant
def stall_ports():
    return dict(ideal_time_ms=sig(32), actual_time_ms=sig(32), steps_per_run=sig(32), exposed_pct=sig(7),
                collective_done=sig(1), lost_ms_per_collective=sig(32), accel_seconds_lost=sig(32),
                wall_hours_per_run=sig(32), accel_hours_per_run=sig(32), slowdown_x100=sig(16),
                c_collectives=sig(32), c_accel_seconds_total=sig(64))


STALL_IN = ("ideal_time_ms", "actual_time_ms", "steps_per_run", "exposed_pct", "collective_done")


def test_stall_accountant_matches_reference(backend):
    rng = random.Random(3)
    vectors = [dict(ideal_time_ms=rng.choice((0, 1279, rng.getrandbits(20))),
                    actual_time_ms=rng.choice((4503, rng.getrandbits(32), rng.getrandbits(12))),
                    steps_per_run=rng.choice((100_000, rng.getrandbits(32))), exposed_pct=rng.randrange(128),
                    collective_done=rng.randrange(2)) for _ in range(150)]
    got = drive(backend, stall_accountant, stall_ports(), STALL_IN, vectors, ACCELERATORS=1024)
    n = total = 0
    for v, g in zip(vectors, got):
        lost = max(0, v["actual_time_ms"] - v["ideal_time_ms"]) * min(v["exposed_pct"], 100) // 100
        accel = lost * 1024 // 1000
        assert g["lost_ms_per_collective"] == sat(lost, 32)
        assert g["accel_seconds_lost"] == sat(accel, 32)
        assert g["wall_hours_per_run"] == sat(lost * v["steps_per_run"] // 3_600_000, 32)
        assert g["accel_hours_per_run"] == sat(lost * v["steps_per_run"] * 1024 // 3_600_000, 32)
        ideal = v["ideal_time_ms"]
        assert g["slowdown_x100"] == (100 if ideal == 0 else sat(v["actual_time_ms"] * 100 // ideal, 16))
        assert (g["c_collectives"], g["c_accel_seconds_total"]) == (n, total)
        if v["collective_done"]:
            n, total = n + 1, total + sat(accel, 32)


def test_stall_accountant_reproduces_seed_figures():
    """Section 7: 4.503 s against 1.279 s on 1 024 accelerators is 3 301
    accelerator-seconds per all-reduce and 91 705 accelerator-hours over 100 000 steps.
    The exact figure is 91 704.9, floored to 91 704 here (the seed rounds); the seed's
    own RTL, truncating wall hours first, would give 89 x 1 024 = 91 136."""
    v = dict(ideal_time_ms=1279, actual_time_ms=4503, steps_per_run=100_000, exposed_pct=100, collective_done=0)
    g = drive("myhdl", stall_accountant, stall_ports(), STALL_IN, [v], ACCELERATORS=1024)[0]
    assert g["lost_ms_per_collective"] == 3224
    assert g["accel_seconds_lost"] == 3224 * 1024 // 1000 == 3301
    assert g["accel_hours_per_run"] == 3224 * 100_000 * 1024 // 3_600_000 == 91704
    assert round(3224 * 100_000 * 1024 / 3_600_000) == 91705
    assert g["wall_hours_per_run"] == 89 and 89 * 1024 == 91136
    v["exposed_pct"] = 40                                     # bucketing hides time, not rate
    g40 = drive("myhdl", stall_accountant, stall_ports(), STALL_IN, [v], ACCELERATORS=1024)[0]
    assert g40["lost_ms_per_collective"] == 3224 * 40 // 100 and g40["slowdown_x100"] == g["slowdown_x100"]


# ---------------------------------------------------------------- all_to_all_model
def a2a_ports(pw=16):
    return dict(collective=sig(3), participants=sig(pw), flows_per_leaf_o=sig(32), flows_per_uplink=sig(32),
                efficiency_pct=sig(8), egress_mb=sig(32), ideal_ms=sig(32), time_ms=sig(32), slowdown_x100=sig(16),
                is_ecmp_best_case=sig(1), ring_flows_same_job=sig(16))


@pytest.mark.parametrize("backend", ["myhdl", "icarus"])     # combinational: no clock to record at
def test_all_to_all_model_matches_package(backend):
    rng = random.Random(6)
    # (Verilog evaluates a combinational block only on an input change, so the first
    # vector differs from the all-zero power-up inputs.)
    vectors = [dict(collective=c, participants=p) for c in range(1, 8) for p in (0, 1, 2, 3, 33, 1024, 3201, 65535)] + \
              [dict(collective=0, participants=p) for p in (0, 1, 2, 3, 33, 1024, 3201, 65535)] + \
              [dict(collective=rng.randrange(8), participants=rng.getrandbits(16)) for _ in range(40)]
    got = drive(backend, all_to_all_model, a2a_ports(), ("collective", "participants"), vectors, clocked=False,
                S_MB=1024, ACC_PER_LEAF=32, UPLINKS=32, RATE=100)
    for v, g in zip(vectors, got):
        n = max(1, v["participants"])
        flows = pkg.flows_per_leaf(v["collective"], n, 32)
        eff = pkg.efficiency_pct(flows, 32)
        eg = pkg.bytes_per_participant_mb(v["collective"], 1024, n)
        assert (g["flows_per_leaf_o"], g["flows_per_uplink"], g["efficiency_pct"]) == (flows, flows // 32, eff)
        assert (g["egress_mb"], g["ideal_ms"]) == (eg, eg * 8 // 100)
        assert g["time_ms"] == eg * 800 // (100 * eff) and g["slowdown_x100"] == 10000 // eff
        assert g["is_ecmp_best_case"] == int(flows // 32 > 100) and g["ring_flows_same_job"] == 32


def test_all_to_all_reproduces_seed_flow_counts():
    """32 accelerators per leaf, 1 024 participants: ring 32 flows per leaf at the
    28 % bucket, all-to-all 32 736 at 94 % (seed: 93.8 %; its six-entry table said 82)."""
    vecs = [dict(collective=pkg.COLL_ALLREDUCE, participants=1024), dict(collective=pkg.COLL_ALLTOALL, participants=1024)]
    ring, a2a = drive("myhdl", all_to_all_model, a2a_ports(), ("collective", "participants"), vecs, clocked=False)
    assert (ring["flows_per_leaf_o"], ring["efficiency_pct"]) == (32, 28)
    assert (a2a["flows_per_leaf_o"], a2a["flows_per_uplink"], a2a["efficiency_pct"]) == (32 * 1023, 1023, 94)
    assert a2a["is_ecmp_best_case"] == 1
    assert ring["egress_mb"] == 2 * 1023 * 1024 // 1024     # 2(N-1)/N x S, independent of N


# ---------------------------------------------------------------- striping_controller
def test_striping_matches_reference(backend):
    M, S = 4, 3
    ports = dict(chunk_start=sig(1), chunk_bytes=sig(32), stripe_gbps=sig(M * S * W), stripe_bytes=sig(32),
                 member_gbps=sig(M * W), collective_gbps=sig(W), pacing_member=sig(2), reassembly_required=sig(1),
                 reorder_depth_bytes=sig(32), connections_total=sig(16), c_chunks=sig(32))
    rng = random.Random(12)
    stripes_seq, vectors = [], []
    for k in range(120):
        st = [rng.choice((0, 65535, rng.randint(0, 100))) for _ in range(M * S)]
        stripes_seq.append(st)
        vectors.append(dict(stripe_gbps=pack(st), chunk_bytes=rng.choice((0, 1, 7, rng.getrandbits(32))),
                            chunk_start=rng.randrange(2)))
    got = drive(backend, striping_controller, ports, ("chunk_start", "chunk_bytes", "stripe_gbps"), vectors)
    chunks = 0
    for v, st, g in zip(vectors, stripes_seq, got):
        members = [min(65535, sum(st[m * S:(m + 1) * S])) for m in range(M)]
        assert unpack(g["member_gbps"], M) == members
        assert (g["collective_gbps"], g["pacing_member"]) == (min(members), members.index(min(members)))
        sb = -(-v["chunk_bytes"] // S)
        assert g["stripe_bytes"] == sat(sb, 32) and g["reorder_depth_bytes"] == sat(sb * (S - 1), 32)
        assert sb * S >= v["chunk_bytes"]                    # the stripes cover the chunk
        assert (g["reassembly_required"], g["connections_total"]) == (1, M * S)
        assert g["c_chunks"] == chunks
        chunks += v["chunk_start"]


# ---------------------------------------------------------------- load_aware_selector
SEL_IN = ("flow_start", "flow_hash", "declared_gbps", "flow_end", "ending_path", "ending_gbps", "load_aware_enable")


def selector_ports(paths):
    return dict(flow_start=sig(1), flow_hash=sig(32), declared_gbps=sig(W), flow_end=sig(1), ending_path=sig(4),
                ending_gbps=sig(W), load_aware_enable=sig(1), chosen_path=sig(4), path_load_gbps=sig(paths * W),
                busiest_gbps=sig(W), lightest_gbps=sig(W), imbalance_x10=sig(16), choice_was_hash=sig(1),
                c_flows_placed=sig(32), c_perfect_placements=sig(32), sticky_preserved=sig(1),
                accounting_error=sig(1))


@pytest.mark.parametrize("paths,mode", [(8, "mod"), (6, "mulhi"), (6, "mod")])
def test_selector_matches_reference(backend, paths, mode):
    rng = random.Random(paths)
    vectors = []
    for k in range(200):
        vectors.append(dict(flow_start=int(rng.random() < 0.5), flow_hash=rng.getrandbits(32),
                            declared_gbps=rng.choice((0, 100, 65535, rng.randint(1, 100))),
                            flow_end=int(k > 20 and rng.random() < 0.4), ending_path=rng.randrange(paths + 2),
                            ending_gbps=rng.randint(0, 150), load_aware_enable=int(k < 40 or rng.random() < 0.5)))
    got = drive(backend, load_aware_selector, selector_ports(paths), SEL_IN, vectors, PATH_MODE=mode)
    loads = [0] * paths
    placed = perfect = err = 0
    for v, g in zip(vectors, got):
        lo, hi = min(loads), max(loads)
        choice = loads.index(lo) if v["load_aware_enable"] else ecmp.select_path(v["flow_hash"], paths, mode)
        assert g["chosen_path"] == choice and g["choice_was_hash"] == 1 - v["load_aware_enable"]
        assert unpack(g["path_load_gbps"], paths) == loads
        assert (g["lightest_gbps"], g["busiest_gbps"]) == (lo, hi)
        assert g["imbalance_x10"] == (65535 if lo == 0 else sat(hi * 10 // lo, 16))
        assert (g["c_flows_placed"], g["c_perfect_placements"], g["accounting_error"]) == (placed, perfect, err)
        assert g["sticky_preserved"] == 1
        new = list(loads)
        if v["flow_start"]:
            placed += 1
            perfect += loads[choice] == 0
            if new[choice] + v["declared_gbps"] > 65535:
                err = 1
            new[choice] = min(65535, new[choice] + v["declared_gbps"])
        if v["flow_end"]:
            p = v["ending_path"]
            if p >= paths:
                err = 1
            elif new[p] >= v["ending_gbps"]:
                new[p] -= v["ending_gbps"]
            else:
                new[p], err = 0, 1
        loads = new
    assert err == 1 and perfect > paths


def test_selector_greedy_placement_is_perfect_for_flows_up_to_paths():
    """32 flows, 32 paths, load-aware: one flow per path, every placement perfect."""
    vectors = [dict(flow_start=1, flow_hash=k * 2654435761 % (1 << 32), declared_gbps=100, flow_end=0,
                    ending_path=0, ending_gbps=0, load_aware_enable=1) for k in range(32)] + \
              [dict(flow_start=0, flow_hash=0, declared_gbps=0, flow_end=0, ending_path=0, ending_gbps=0,
                    load_aware_enable=1)]
    ports = selector_ports(32)
    ports["chosen_path"], ports["ending_path"] = sig(5), sig(5)
    g = drive("myhdl", load_aware_selector, ports, SEL_IN, vectors)[-1]
    assert unpack(g["path_load_gbps"], 32) == [100] * 32
    assert g["c_perfect_placements"] == g["c_flows_placed"] == 32 and g["imbalance_x10"] == 10


# ---------------------------------------------------------------- collective_telemetry
TEL_IN = ("snapshot", "i_local_min_gbps", "i_local_mean_gbps", "i_slowest_member", "i_slowest_unchanged",
          "i_samples", "i_accel_seconds_lost", "i_flows_this_leaf", "i_busiest_uplink_flows", "i_job_min_gbps",
          "i_job_min_valid", "i_active_fix", "i_fix_attempts", "i_fix_successes")


def telemetry_ports():
    return dict(snapshot=sig(1), i_local_min_gbps=sig(W), i_local_mean_gbps=sig(W), i_slowest_member=sig(8),
                i_slowest_unchanged=sig(32), i_samples=sig(32), i_accel_seconds_lost=sig(32),
                i_flows_this_leaf=sig(32), i_busiest_uplink_flows=sig(16), i_job_min_gbps=sig(W),
                i_job_min_valid=sig(1), i_active_fix=sig(3), i_fix_attempts=sig(32), i_fix_successes=sig(32),
                o_local_min_gbps=sig(W), o_mean_over_min_x10=sig(16), o_slowest_member=sig(8),
                o_pinned_samples_pct=sig(8), o_imbalance_x10=sig(16), o_accel_seconds_lost=sig(32),
                o_job_min_gbps=sig(W), o_job_rate_claim=sig(1), o_active_fix=sig(3), o_fix_effective_pct=sig(8),
                o_caveats=sig(4), o_rate_claim_valid=sig(1))


def test_telemetry_matches_reference(backend):
    rng = random.Random(21)
    vectors = []
    for _ in range(150):
        samples = rng.choice((0, rng.getrandbits(32)))
        lo = rng.choice((0, rng.randint(1, 100)))
        vectors.append(dict(snapshot=int(rng.random() < 0.4), i_local_min_gbps=lo,
                            i_local_mean_gbps=rng.randint(lo, 65535) if rng.random() < 0.2 else rng.randint(lo, 120),
                            i_slowest_member=rng.getrandbits(8),
                            i_slowest_unchanged=rng.randint(0, samples) if samples else rng.getrandbits(32),
                            i_samples=samples, i_accel_seconds_lost=rng.getrandbits(32),
                            i_flows_this_leaf=rng.choice((0, 32, 224, 32736, rng.getrandbits(32))),
                            i_busiest_uplink_flows=rng.getrandbits(16), i_job_min_gbps=rng.randint(0, 130),
                            i_job_min_valid=rng.randrange(2), i_active_fix=rng.randrange(8),
                            i_fix_attempts=rng.choice((0, rng.getrandbits(32))),
                            i_fix_successes=rng.choice((0, rng.getrandbits(31)))))
    got = drive(backend, collective_telemetry, telemetry_ports(), TEL_IN, vectors, UPLINKS=32)
    few = pkg.few_flows_per_uplink(32) * 32
    assert few == 7 * 32                                       # ceil(2 ln 32) = 7, the seed's constant
    bank = dict(o_local_min_gbps=0, o_mean_over_min_x10=0, o_slowest_member=0, o_pinned_samples_pct=0,
                o_imbalance_x10=0, o_accel_seconds_lost=0, o_job_min_gbps=0, o_job_rate_claim=0, o_active_fix=0,
                o_fix_effective_pct=0, o_caveats=0, o_rate_claim_valid=0)
    for v, g in zip(vectors, got):
        assert g == bank
        if not v["snapshot"]:
            continue
        b = dict(bank)
        b.update(o_local_min_gbps=v["i_local_min_gbps"], o_slowest_member=v["i_slowest_member"],
                 o_accel_seconds_lost=v["i_accel_seconds_lost"], o_active_fix=v["i_active_fix"])
        if v["i_local_min_gbps"]:
            b["o_mean_over_min_x10"] = sat(v["i_local_mean_gbps"] * 10 // v["i_local_min_gbps"], 16)
        if v["i_samples"]:
            b["o_pinned_samples_pct"] = min(100, v["i_slowest_unchanged"] * 100 // v["i_samples"])
        if v["i_flows_this_leaf"]:
            b["o_imbalance_x10"] = sat(v["i_busiest_uplink_flows"] * 320 // v["i_flows_this_leaf"], 16)
        valid = v["i_job_min_valid"]
        b["o_job_rate_claim"] = valid
        b["o_job_min_gbps"] = min(v["i_job_min_gbps"], v["i_local_min_gbps"]) if valid else 0
        att = v["i_fix_attempts"]
        b["o_fix_effective_pct"] = min(100, v["i_fix_successes"] * 100 // att) if att else 0
        pinned = v["i_samples"] != 0 and 2 * v["i_slowest_unchanged"] > v["i_samples"]
        inert = v["i_active_fix"] != pkg.FIX_NONE and att != 0 and v["i_fix_successes"] == 0
        b["o_caveats"] = (1 - valid) | (pinned << 1) | ((v["i_flows_this_leaf"] < few) << 2) | (inert << 3)
        b["o_rate_claim_valid"] = valid
        bank = b


def test_few_flows_threshold_follows_uplinks():
    assert [pkg.few_flows_per_uplink(n) for n in (2, 8, 32, 64, 128)] == [2, 5, 7, 9, 10]


def test_efficiency_lookup_is_the_rounded_balls_in_bins_curve():
    """Every EFF_PCT entry -- the seed's six and the 94 % bucket added here -- is the
    golden model's lam / E[max load] at the bucket's flows per uplink (32 uplinks),
    rounded to whole per cent: 28.3 37.0 46.2 55.6 67.1 82.5 93.9."""
    from golden.fabric import fabric_math
    points = pkg.EFF_FPU_LIMITS + (1023,)                    # the last bucket's point: all-to-all, N = 1 024
    assert [round(100 * fabric_math.efficiency(f, 32)) for f in points] == list(pkg.EFF_PCT)
    # one table (spec.fabric.EFF_PCT), two lookups: the golden model's and the HDL's agree bucket for bucket
    for flows in (0, 31, 32, 63, 64, 200, 1000, 3200, 3232, 3233, 32736, 10**6):
        assert pkg.efficiency_pct(flows, 32) == fabric_math.eff_pct_lookup(flows, 32)


def _rst():
    return ResetSignal(0, active=1, isasync=False)


@pytest.mark.parametrize("case", ["selector_mode", "selector_index", "striping_bus", "telemetry_caveats",
                                  "a2a_eff", "stall_accel", "monitor_width"])
def test_impossible_parameters_rejected_at_elaboration(case):
    if case.startswith("selector"):
        p = selector_ports(8)
        kw = {}
        if case == "selector_mode":
            kw["PATH_MODE"] = "xor"
        else:
            p["chosen_path"] = sig(2)                        # cannot name 8 paths
        with pytest.raises(ValueError, match="PATH_MODE" if case == "selector_mode" else "too narrow"):
            load_aware_selector(sig(1), _rst(), **p, **kw)
    elif case == "striping_bus":
        with pytest.raises(ValueError, match="stripe_gbps"):
            striping_controller(sig(1), _rst(), sig(1), sig(32), sig(4 * W * 3 + W), sig(32), sig(4 * W), sig(W),
                                sig(2), sig(1), sig(32), sig(16), sig(32))
    elif case == "telemetry_caveats":
        p = telemetry_ports()
        p["o_caveats"] = sig(3)
        with pytest.raises(ValueError, match="o_caveats"):
            collective_telemetry(sig(1), _rst(), **p)
    elif case == "a2a_eff":
        p = a2a_ports()
        p["efficiency_pct"] = sig(6)                         # cannot hold 94
        with pytest.raises(ValueError, match="efficiency_pct"):
            all_to_all_model(**p)
    elif case == "stall_accel":
        with pytest.raises(ValueError, match="ACCELERATORS"):
            stall_accountant(sig(1), _rst(), **stall_ports(), ACCELERATORS=0)
    else:
        from hdl.common.wiring import bus_params
        from hdl.fabric.collective_conformance_monitor import collective_conformance_monitor
        ports = {n: cls() for n, cls in bus_params(collective_conformance_monitor).items()}
        ports["violations"], ports["violations_seen"] = sig(33), sig(34)
        with pytest.raises(ValueError, match="violations"):
            collective_conformance_monitor(sig(1), _rst(), **ports)
