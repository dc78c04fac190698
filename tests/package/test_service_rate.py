"""The service-rate estimator on both back ends: bit-exact against the plain
Python reference every cycle (including counter saturation), and the semantic
properties the dispatch policy relies on."""
import random

import pytest
from myhdl import ResetSignal, Signal, block, instance, intbv

from cosim.sim import toolchain
from cosim.package.package_bench import run_until_done
from cosim.package.package_monitors import unpack
from cosim.sim.tbutil import clock_gen, reset_pulse
from golden.package.service_rate import ServiceRateReference
from hdl.package.service_rate_estimator import service_rate_estimator


def estimator_signals(n_tgt, tgt_w, work_w, cnt_w, rate_w, stat_w):
    u = lambda w: Signal(intbv(0)[w:])  # noqa: E731
    return dict(clk=Signal(bool(0)), rst=ResetSignal(0, active=1, isasync=False),
                dispatch_fire=Signal(bool(0)), dispatch_target=u(tgt_w), dispatch_work=u(work_w),
                retire_fire=Signal(bool(0)), retire_target=u(tgt_w), retire_work=u(work_w),
                outstanding=u(n_tgt * cnt_w), tgt_stall=u(n_tgt), tgt_active=u(n_tgt),
                svc_rate=u(n_tgt * rate_w), rate_valid=u(n_tgt),
                accepted_work=u(n_tgt * stat_w), completed_work=u(n_tgt * stat_w),
                active_cyc=u(n_tgt * stat_w), stall_cyc=u(n_tgt * stat_w))


def run_estimator(backend, stimulus, *, n_tgt=4, tgt_w=2, work_w=6, cnt_w=4, rate_w=8, stat_w=16, window=8):
    """stimulus: per cycle (outstanding list, dispatch (t, w) or None, retire (t, w) or None
    [, per-target stall bits]).  Returns per-cycle sampled outputs
    [(svc_rate, accepted, completed, active, stall, rate_valid)] and the reference's values
    for the same cycles."""
    s = estimator_signals(n_tgt, tgt_w, work_w, cnt_w, rate_w, stat_w)
    ref = ServiceRateReference(n_tgt, window, stat_w, rate_w)
    got, want = [], []
    state = {"drv": 0, "smp": 0}
    factory = toolchain.select(service_rate_estimator, backend)

    def outputs():
        return (unpack(s["svc_rate"].val, n_tgt, rate_w),
                unpack(s["accepted_work"].val, n_tgt, stat_w), unpack(s["completed_work"].val, n_tgt, stat_w),
                unpack(s["active_cyc"].val, n_tgt, stat_w), unpack(s["stall_cyc"].val, n_tgt, stat_w),
                unpack(s["rate_valid"].val, n_tgt, 1))

    @block
    def bench():
        dut = factory(**s, WINDOW=window)

        @instance
        def drive():
            while True:
                yield s["clk"].negedge
                if s["rst"]:
                    continue
                k = state["drv"]
                state["drv"] += 1
                if k >= len(stimulus):
                    s["dispatch_fire"].next = 0
                    s["retire_fire"].next = 0
                    continue
                outs, disp, ret, *stall = stimulus[k]
                s["tgt_stall"].next = sum(1 << t for t, b in enumerate(stall[0] if stall else ()) if b)
                s["outstanding"].next = sum(o << (cnt_w * t) for t, o in enumerate(outs))
                s["dispatch_fire"].next = disp is not None
                if disp is not None:
                    s["dispatch_target"].next, s["dispatch_work"].next = disp[0], disp[1]
                s["retire_fire"].next = ret is not None
                if ret is not None:
                    s["retire_target"].next, s["retire_work"].next = ret[0], ret[1]

        @instance
        def sample():
            while True:
                yield s["clk"].posedge
                if s["rst"] or state["drv"] == 0 or state.get("finished"):
                    continue
                k = state["smp"]
                state["smp"] += 1
                if k > 0:
                    # Outputs after k edges against the reference after k steps.
                    got.append(outputs())
                    want.append((list(ref.svc_rate), list(ref.accepted), list(ref.completed),
                                 list(ref.active_cyc), list(ref.stall_cyc), [int(v) for v in ref.rate_valid]))
                if k == len(stimulus):
                    state["finished"] = True
                    continue
                outs, disp, ret, *stall = stimulus[k]
                act = unpack(s["tgt_active"].val, n_tgt, 1)
                assert act == [int(o != 0) for o in outs]
                ref.step(outs, disp, ret, stall[0] if stall else None)

        return dut, clock_gen(s["clk"]), reset_pulse(s["clk"], s["rst"]), drive, sample

    run_until_done(bench(), backend, state, len(stimulus) + 16)
    return got, want, ref


def random_stimulus(rng, cycles, n_tgt=4, work_w=6, cnt_w=4, idle_p=0.3, stall_p=0.4):
    stim = []
    for _ in range(cycles):
        outs = [0 if rng.random() < idle_p else rng.randrange(1, 1 << cnt_w) for _ in range(n_tgt)]
        disp = (rng.randrange(n_tgt), rng.randrange(1, 1 << work_w)) if rng.random() < 0.6 else None
        busy = [t for t in range(n_tgt) if outs[t]]
        ret = (rng.choice(busy), rng.randrange(1, 1 << work_w)) if busy and rng.random() < 0.5 else None
        stall = [rng.random() < stall_p for _ in range(n_tgt)]
        stim.append((outs, disp, ret, stall))
    return stim


def test_estimator_matches_reference_every_cycle(backend):
    stim = random_stimulus(random.Random(3), 400)
    got, want, ref = run_estimator(backend, stim)
    assert len(got) == len(stim)
    assert got == want
    assert all(r > 0 for r in ref.svc_rate)          # every target published at least one window
    assert all(ref.rate_valid) and got[0][5] == [0] * 4
    assert all(0 < s < a for s, a in zip(ref.stall_cyc, ref.active_cyc))


def test_counters_saturate_instead_of_wrapping(backend):
    # 6-bit counters and 5-bit rates saturate within a few dozen cycles.
    stim = random_stimulus(random.Random(5), 300, idle_p=0.1, stall_p=0.9)
    got, want, ref = run_estimator(backend, stim, rate_w=6, stat_w=7, window=16)
    assert got == want
    assert max(ref.accepted) == (1 << 7) - 1 and max(ref.stall_cyc) == (1 << 7) - 1
    assert max(ref.svc_rate) == (1 << 6) - 1
    # Saturated totals never go back down (wrapping would).
    for k in range(1, 5):
        for a, b in zip(got, got[1:]):
            assert all(y >= x for x, y in zip(a[k], b[k]))


def test_rate_is_per_active_cycle_and_held_while_idle():
    # Target 0 busy every cycle, target 1 busy every other cycle; both retire 2 units
    # per 4 active cycles.  An elapsed-time rate would halve target 1's figure.
    stim = []
    act1 = 0
    for c in range(200):
        busy1 = c % 2 == 0
        ret = None
        if c % 4 == 3:
            ret = (0, 2)
        elif busy1:
            act1 += 1
            if act1 % 4 == 0:
                ret = (1, 2)
        # target 0 reports a downstream stall every third cycle, target 1 never
        stim.append(([1, 1 if busy1 else 0, 0, 0], None, ret, [c % 3 == 0, False, True, True]))
    # Then both idle for a while: rates must be held, not decay to "unknown".
    stim += [([0, 0, 0, 0], None, None, [True] * 4)] * 40
    got, want, ref = run_estimator("myhdl", stim, window=8)
    assert got == want
    rate, _, completed, active, stall, valid = got[-1]
    assert rate[0] == rate[1] == 4                  # 4 units per 8 active cycles
    assert active[1] == 100 and active[0] == 200
    # stall counts the targets' reports in active cycles only (not "nothing retired")
    assert stall[0] == 67 and stall[1] == 0 and stall[2] == stall[3] == 0
    assert rate[2] == rate[3] == 0 and valid == [1, 1, 0, 0]      # never active: unknown


def test_window_sees_a_recent_degradation():
    # 100 good windows, then the target halves: the next window already shows it.
    stim = []
    for c in range(800):
        per = 4 if c < 640 else 8
        stim.append(([1, 0, 0, 0], None, (0, 4) if c % per == per - 1 else None))
    got, _, ref = run_estimator("myhdl", stim, window=16)
    rates = [g[0][0] for g in got]
    assert rates[630] == 16 and rates[-1] == 8
    # An all-time average over the same counters would still report ~14 per 16 cycles.
    assert ref.completed[0] * 16 // ref.active_cyc[0] >= 14


def test_rejects_impossible_parameters():
    s = estimator_signals(4, 2, 6, 4, 8, 16)
    with pytest.raises(ValueError, match="WINDOW"):
        service_rate_estimator(**s, WINDOW=1)
    s = estimator_signals(4, 2, 6, 4, 8, 16)
    s["stall_cyc"] = Signal(intbv(0)[4 * 15:])
    with pytest.raises(ValueError, match="equal widths"):
        service_rate_estimator(**s)
    s = estimator_signals(4, 1, 6, 4, 8, 16)
    with pytest.raises(ValueError, match="address"):
        service_rate_estimator(**s)
