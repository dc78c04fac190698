"""The shared-resource arbiter alone, on both back ends: bit-exact against the
plain-Python rule golden.package.resource_graph.allocate every cycle (grants,
saturation flags, saturating counters), for several crossing fractions; and the
properties the package relies on: a grant never exceeds what a die asked for
or its link allows, the pools are never overdrawn, and dies that all want more
than a pool holds share it equally."""
import random

import pytest
from myhdl import ResetSignal, Signal, intbv

from cosim.package.package_bench import pack, unpack
from cycle_driver import run_cycles
from golden.package import resource_graph as rg
from hdl.package.shared_resource_arbiter import shared_resource_arbiter

W, STAT_W = 6, 5      # small counters: saturation is reached


def arbiter_signals(n):
    u = lambda w: Signal(intbv(0)[w:])  # noqa: E731
    return dict(clk=Signal(bool(0)), rst=ResetSignal(1, active=1, isasync=False), want=u(n * W), link_rate=u(n * W),
                hbm_rate=u(W), d2d_rate=u(W), grant=u(n * W), hbm_saturated=Signal(bool(0)),
                d2d_saturated=Signal(bool(0)), hbm_sat_cyc=u(STAT_W), d2d_sat_cyc=u(STAT_W))


def run_arbiter(backend, n, cross, stim):
    """stim: per cycle (want list, link list, hbm, d2d); returns per-cycle sampled outputs."""
    s = arbiter_signals(n)
    steps = [dict(rst=0, want=pack(want, W), link_rate=pack(link, W), hbm_rate=hbm, d2d_rate=d2d)
             for want, link, hbm, d2d in stim]
    return run_cycles(backend, shared_resource_arbiter, s, steps,
                      lambda: (unpack(s["grant"].val, n, W), bool(s["hbm_saturated"]), bool(s["d2d_saturated"]),
                               int(s["hbm_sat_cyc"]), int(s["d2d_sat_cyc"])), lead=2, CROSS_SHIFT=cross)


def random_stim(seed, n, cycles):
    rng = random.Random(seed)
    top = (1 << W) - 1
    out = []
    for _ in range(cycles):
        kind = rng.random()
        want = [rng.choice([0, rng.randrange(top + 1), 8, top]) for _ in range(n)]
        link = [rng.choice([top, rng.randrange(top + 1), 3, 0]) for _ in range(n)]
        hbm = rng.choice([rng.randrange(top + 1), 20, 0, top]) if kind < 0.9 else top
        d2d = rng.choice([rng.randrange(top + 1), 12, 0, top])
        out.append((want, link, hbm, d2d))
    return out


@pytest.mark.parametrize("n,cross", [(4, 1), (3, 0), (2, 2), (4, None)])
def test_arbiter_matches_the_reference_every_cycle(backend, n, cross):
    stim = random_stim(n * 10 + (cross or 7), n, 300)
    got = run_arbiter(backend, n, cross, stim)
    top = (1 << STAT_W) - 1
    hc = dc = 0
    seen = {"hcut": 0, "dcut": 0, "short": 0}
    for cyc, ((want, link, hbm, d2d), (grant, hs, ds, hcnt, dcnt)) in enumerate(zip(stim, got)):
        ptr = cyc % n
        exp, ehs, eds = rg.allocate(want, link, hbm, d2d, cross, ptr)
        assert (grant, hs, ds) == (exp, ehs, eds), cyc
        assert (hcnt, dcnt) == (hc, dc), cyc          # counters show the previous cycles
        hc, dc = min(top, hc + ehs), min(top, dc + eds)
        seen["hcut"] += ehs
        seen["dcut"] += eds
        s = 0 if cross is None else cross
        caps = [min(w, lk << s) if cross is not None else w for w, lk in zip(want, link)]
        assert all(g <= c for g, c in zip(grant, caps))
        assert sum(grant) <= hbm and (cross is None or sum(grant) <= d2d << s)
        seen["short"] += any(g < c for g, c in zip(grant, caps))
    assert seen["hcut"] > 10 and seen["short"] > 10
    if cross is not None:
        assert seen["dcut"] > 10
    else:
        assert seen["dcut"] == 0
    assert hc == top                                      # the counter saturated, never wrapped


def test_equal_shares_when_every_die_wants_more():
    # The worked example: four dies asking 8/16 each, HBM 20/16: 5/16 each, every cycle,
    # whatever the rotation; HBM is the cut, D2D (24/16 of work) is not.
    for ptr in range(4):
        grants, hcut, dcut = rg.allocate([8] * 4, [255] * 4, 20, 12, 1, ptr)
        assert grants == [5] * 4 and hcut and not dcut
    # Twice the HBM: D2D binds at 6 each.
    assert rg.allocate([8] * 4, [255] * 4, 40, 12, 1, 0) == ([6] * 4, False, True)
    # Ample pools: each die gets what its compute asks (compute-bound), no cut.
    assert rg.allocate([8, 8, 4, 8], [255] * 4, 40, 24, 1, 0) == ([8, 8, 4, 8], False, False)
    # A die whose own link is narrow is capped alone; the HBM it leaves goes to the others
    # (one die per cycle, in rotation): HBM stays fully used.
    for p in range(4):
        grants, hcut, dcut = rg.allocate([8] * 4, [255, 255, 1, 255], 20, 12, 1, p)
        assert grants[2] == 2 and sum(grants) == 20 and all(5 <= grants[t] <= 8 for t in (0, 1, 3))


def test_rejects_impossible_parameters():
    s = arbiter_signals(4)
    with pytest.raises(ValueError, match="CROSS_SHIFT"):
        shared_resource_arbiter(**s, CROSS_SHIFT=-1)
    s["grant"] = Signal(intbv(0)[3 * W:])
    with pytest.raises(ValueError, match="grant"):
        shared_resource_arbiter(**s)
