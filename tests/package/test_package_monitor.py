"""The package assertion monitor alone, on both back ends: its six failure
outputs and its armed output equal, every cycle, an independent Python
statement of the same properties (cosim.package.package_monitors.PropertyReference),
under random and adversarial inputs that make every property both hold and
fail many times, with resets in the middle."""
import random

import pytest
from myhdl import ResetSignal, Signal, intbv

from cosim.package.package_bench import FAIL_PORTS
from cosim.package.package_monitors import PropertyReference
from cycle_driver import run_cycles
from hdl.package.package_assertion_monitor import ASSERTIONS, package_assertion_monitor

N_TGT, TGT_W, SLOT_W, GEN_W, EPOCH_W = 3, 2, 3, 3, 2     # 3 targets on a 2-bit bus: target 3 is out of range
N_JOB = 1 << SLOT_W
OWORK_W, RATE_W, STAT_W = 8, 6, 10
BUDGET = 12
INPUTS = {"dispatch_fire": 1, "retry_fire": 1, "m_job_slot": SLOT_W, "m_job_target": TGT_W, "tgt_enable": N_TGT,
          "retire_fire": 1, "cmpl_slot": SLOT_W, "cmpl_gen": GEN_W, "job_live": N_JOB, "job_gen": N_JOB * GEN_W,
          "job_epoch": N_JOB * EPOCH_W, "outstanding_work": N_TGT * OWORK_W, "svc_rate": N_TGT * RATE_W,
          "rate_valid": N_TGT, "accepted_work": N_TGT * STAT_W, "completed_work": N_TGT * STAT_W}


def monitor_signals():
    s = {"clk": Signal(bool(0)), "rst": ResetSignal(1, active=1, isasync=False)}
    for name, w in INPUTS.items():
        s[name] = Signal(bool(0)) if w == 1 else Signal(intbv(0)[w:])
    for name in FAIL_PORTS + ("imbalance_armed",):
        s[name] = Signal(bool(0))
    return s


def _pack(vals, w):
    return sum(v << (w * i) for i, v in enumerate(vals))


def stimulus(seed, cycles):
    """Per cycle: (reset, {input: value}).  A job table evolves plausibly; every few
    cycles one thing is made wrong on purpose (stale or foreign completion, entry
    not cleared, retry with allocation, allocation over a live slot, epoch rewritten,
    dispatch to a disabled or absent target, spread beyond budget, miscounted work)."""
    rng = random.Random(seed)
    live, gens, epochs = [0] * N_JOB, [0] * N_JOB, [0] * N_JOB
    keep = None
    out = []
    for cyc in range(cycles):
        reset = cyc in (0, 1) or rng.random() < 0.01
        s = {}
        free = [j for j in range(N_JOB) if not live[j]]
        busy = [j for j in range(N_JOB) if live[j]]
        s["dispatch_fire"] = int(rng.random() < 0.35)
        s["m_job_slot"] = rng.choice(free) if free and rng.random() < 0.9 else rng.randrange(N_JOB)
        s["retry_fire"] = int(rng.random() < 0.15)
        if s["retry_fire"] and s["dispatch_fire"] and rng.random() < 0.7:
            s["dispatch_fire"] = 0                    # mostly a correct retry cycle
        enable = [1] * N_TGT if rng.random() < 0.7 else [rng.randrange(2) for _ in range(N_TGT)]
        s["tgt_enable"] = _pack(enable, 1)
        s["m_job_target"] = rng.choice([t for t in range(N_TGT) if enable[t]] or [0]) \
            if rng.random() < 0.9 else rng.randrange(1 << TGT_W)
        s["retire_fire"] = int(rng.random() < 0.35 and bool(busy))
        if busy and rng.random() < 0.85:
            slot = rng.choice(busy)
            s["cmpl_slot"], s["cmpl_gen"] = slot, gens[slot] if rng.random() < 0.9 else (gens[slot] - 1) % (1 << GEN_W)
        else:
            s["cmpl_slot"], s["cmpl_gen"] = rng.randrange(N_JOB), rng.randrange(1 << GEN_W)
        if rng.random() < 0.04 and busy:
            j = rng.choice(busy)
            epochs[j] = (epochs[j] + 1) % (1 << EPOCH_W)   # an epoch rewritten under a live job
        if keep is not None and rng.random() < 0.1:
            live[keep] = 1                                 # a retired entry left live
        s["job_live"], s["job_gen"], s["job_epoch"] = _pack(live, 1), _pack(gens, GEN_W), _pack(epochs, EPOCH_W)
        work = [rng.randrange(0, 20) for _ in range(N_TGT)]
        if rng.random() < 0.2:
            work[rng.randrange(N_TGT)] += rng.randrange(BUDGET - 2, BUDGET + 6)
        s["outstanding_work"] = _pack(work, OWORK_W)
        rates = [rng.choice([0, 20, 24, 15, 60, 63]) for _ in range(N_TGT)]
        s["svc_rate"] = _pack(rates, RATE_W)
        s["rate_valid"] = _pack([int(rng.random() < 0.8) for _ in range(N_TGT)], 1)
        top = (1 << STAT_W) - 1
        acc = [rng.randrange(40, 900) for _ in range(N_TGT)]
        cmp = [a - w if rng.random() < 0.95 else rng.randrange(0, top + 1) for a, w in zip(acc, work)]
        if rng.random() < 0.05:
            acc[0] = top                                   # saturated: no longer checked
        s["accepted_work"], s["completed_work"] = _pack(acc, STAT_W), _pack([max(0, c) for c in cmp], STAT_W)
        out.append((reset, s))
        # the table's next state
        keep = None
        if reset:
            live = [0] * N_JOB
            continue
        if s["retire_fire"] and live[s["cmpl_slot"]] and gens[s["cmpl_slot"]] == s["cmpl_gen"]:
            live[s["cmpl_slot"]] = 0
            keep = s["cmpl_slot"]
        if s["dispatch_fire"]:
            j = s["m_job_slot"]
            live[j], gens[j], epochs[j] = 1, (gens[j] + 1) % (1 << GEN_W), rng.randrange(1 << EPOCH_W)
    return out


def run_monitor(backend, stim):
    s = monitor_signals()
    steps = [{"rst": reset, **values} for reset, values in stim]
    return run_cycles(backend, package_assertion_monitor, s, steps,
                      lambda: {p: int(s[p].val) for p in FAIL_PORTS + ("imbalance_armed",)}, tail=True,
                      IMBALANCE_BUDGET=BUDGET, DEGRADE_SHIFT=2, CHECK_WORK=True)


def expected(stim):
    ref = PropertyReference(N_TGT, N_JOB, GEN_W, EPOCH_W, OWORK_W, RATE_W, STAT_W, BUDGET)
    want = [{p: 0 for p in FAIL_PORTS + ("imbalance_armed",)}]
    for reset, values in stim:
        if reset:
            ref.reset()
            want.append({p: 0 for p in FAIL_PORTS + ("imbalance_armed",)})
            continue
        fails, armed = ref.step(values)
        row = {p: int(fails[a]) for a, p in zip(ASSERTIONS, FAIL_PORTS)}
        row["imbalance_armed"] = int(armed)
        want.append(row)
    return want


@pytest.mark.parametrize("seed", [1, 2])
def test_monitor_matches_the_properties_every_cycle(backend, seed):
    stim = stimulus(seed, 700)
    got = run_monitor(backend, stim)
    want = expected(stim)
    # got[k] is sampled at edge k: it shows the checks of edge k-1
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g == w, (k, g, w)
    # every property both held and failed, many times
    for p in FAIL_PORTS + ("imbalance_armed",):
        ones = sum(r[p] for r in want)
        assert 5 <= ones <= len(want) - 5, (p, ones)


def test_rejects_impossible_parameters():
    s = monitor_signals()
    with pytest.raises(ValueError, match="IMBALANCE_BUDGET"):
        package_assertion_monitor(**s, IMBALANCE_BUDGET=-1)
    with pytest.raises(ValueError, match="DEGRADE_SHIFT"):
        package_assertion_monitor(**s, DEGRADE_SHIFT=0)
    s["job_live"] = Signal(intbv(0)[N_JOB + 1:])
    with pytest.raises(ValueError, match="job_live"):
        package_assertion_monitor(**s)
