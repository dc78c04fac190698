"""Shared-resource arbiter of a multi-die package: HBM and die-to-die (D2D)
bandwidth granted to the compute dies cycle by cycle.

Every work unit a die serves streams one unit through HBM, and a fraction
2**-CROSS_SHIFT of it crosses a die boundary over the D2D transport (the
design notes' "half the work crosses" is CROSS_SHIFT = 1).  Per cycle:

    HBM      hbm_rate work units, package-wide (does not grow with die count)
    D2D      d2d_rate crossing units, package-wide: d2d_rate << CROSS_SHIFT
             work units' worth of crossing traffic
    link t   die t's own D2D link, link_rate[t] crossing units: a die whose
             link trained narrow (or is retraining) is capped by it

The dies ask (`want`, from compute_die_model); die t can use
cap[t] = min(want[t], its link).  The arbiter grants in two passes, the way a
fair memory controller shares bandwidth:

    1. every die gets min(cap, HBM / N_TGT, D2D / N_TGT): an equal share;
    2. in rotating order from `ptr` (advancing every cycle), each die takes
       what it still can from what pass 1 left.

So dies that all want more than the pools hold get equal shares, and a die
that wants less leaves its share to the others.

`hbm_saturated` / `d2d_saturated` say that this cycle some die got less than
its cap and that pool is used up: the resource bound the package.  Their
saturating cycle counts tell which shared node binds (the diagnosis of a phase
that is slow on every die).  golden.package.resource_graph.allocate is the same rule
in plain Python; the two match bit for bit.

All rates are in 2**-RATE_FRAC units per cycle (the caller's fixed point; the
arbiter never needs the fraction).

Ports (widths from the signals; N_TGT = len(want) // len(hbm_rate)):
    clk, rst        clock; synchronous active-high reset (ResetSignal)
    want            per-die service asked, packed N_TGT x W (die t in bits
                    [(t+1)*W-1 : t*W]); W = len(hbm_rate)
    link_rate       per-die D2D link rate in crossing units, packed N_TGT x W
    hbm_rate        HBM service per cycle, work units (W bits)
    d2d_rate        D2D service per cycle, crossing units (W bits)
    grant           out: per-die grant, packed N_TGT x W; grant[t] <= want[t]
    hbm_saturated   out: HBM cut some die's grant this cycle
    d2d_saturated   out: the package D2D cut some die's grant this cycle
    hbm_sat_cyc     out: saturating count of hbm_saturated cycles (STAT_W bits)
    d2d_sat_cyc     out: saturating count of d2d_saturated cycles (width of hbm_sat_cyc)

Parameters:
    CROSS_SHIFT  a fraction 2**-CROSS_SHIFT of the work crosses a die boundary
                 (integer >= 0), or None: nothing crosses (a one-die package;
                 link_rate and d2d_rate are ignored)
"""
from myhdl import Signal, always_comb, always_seq, block, intbv


@block
def shared_resource_arbiter(clk, rst, want, link_rate, hbm_rate, d2d_rate, grant,
                            hbm_saturated, d2d_saturated, hbm_sat_cyc, d2d_sat_cyc, CROSS_SHIFT=1):
    name = "shared_resource_arbiter"
    w = len(hbm_rate)
    if CROSS_SHIFT is not None and (not isinstance(CROSS_SHIFT, int) or CROSS_SHIFT < 0):
        raise ValueError(f"{name}: CROSS_SHIFT={CROSS_SHIFT!r}; use an integer >= 0 or None (nothing crosses)")
    if len(d2d_rate) != w:
        raise ValueError(f"{name}: d2d_rate is {len(d2d_rate)} bits; it must match hbm_rate ({w})")
    if len(want) % w or len(want) // w < 1:
        raise ValueError(f"{name}: want is {len(want)} bits, not a whole number of {w}-bit dies")
    n_tgt = len(want) // w
    for sig, label in ((grant, "grant"), (link_rate, "link_rate")):
        if len(sig) != len(want):
            raise ValueError(f"{name}: {label} is {len(sig)} bits; it must be N_TGT x W = {len(want)}")
    if len(d2d_sat_cyc) != len(hbm_sat_cyc):
        raise ValueError(f"{name}: hbm_sat_cyc and d2d_sat_cyc must have the same width")
    shift = 0 if CROSS_SHIFT is None else CROSS_SHIFT
    crossing = CROSS_SHIFT is not None
    ptr_w = max(1, (n_tgt - 1).bit_length())
    aw = w + shift + n_tgt.bit_length() + 1        # room for every sum below
    stat_w = len(hbm_sat_cyc)
    STAT_MAX = (1 << stat_w) - 1
    tot = len(want)
    wide = n_tgt * aw

    ptr = Signal(intbv(0)[ptr_w:])
    hsat = Signal(bool(0))
    dsat = Signal(bool(0))

    @always_comb
    def allocate():
        h = intbv(0)[aw:]
        d = intbv(0)[aw:]
        fh = intbv(0)[aw:]
        fd = intbv(0)[aw:]
        cap = intbv(0)[aw:]
        g = intbv(0)[aw:]
        x = intbv(0)[aw:]
        lk = intbv(0)[aw:]
        tmp = intbv(0)[wide:]
        cand = intbv(0)[ptr_w + 1:]
        caps = intbv(0)[n_tgt * aw:]
        first = intbv(0)[tot:]
        out = intbv(0)[tot:]
        short = False
        out[:] = 0
        first[:] = 0
        caps[:] = 0
        h[:] = hbm_rate
        d[:] = d2d_rate << shift
        fh[:] = h // n_tgt
        fd[:] = d // n_tgt
        # pass 1: an equal share of every pool, up to the die's cap
        for t in range(n_tgt):
            tmp[:] = want >> (w * t)
            cap[:] = tmp[w:]
            if crossing:
                tmp[:] = link_rate >> (w * t)
                lk[:] = tmp[w:]
                lk[:] = lk << shift
                if lk < cap:
                    cap[:] = lk
            caps[:] = caps | (cap << (aw * t))
            g[:] = cap
            if fh < g:
                g[:] = fh
            if crossing and fd < g:
                g[:] = fd
            h[:] = h - g
            if crossing:
                d[:] = d - g
            first[:] = first | (g << (w * t))
        # pass 2: what is left, in rotating order from ptr
        for k in range(n_tgt):
            cand[:] = ptr + k
            if cand >= n_tgt:
                cand[:] = cand - n_tgt
            tmp[:] = caps >> (aw * cand)
            cap[:] = tmp[aw:]
            tmp[:] = first >> (w * cand)
            g[:] = tmp[w:]
            x[:] = cap - g
            if h < x:
                x[:] = h
            if crossing and d < x:
                x[:] = d
            h[:] = h - x
            if crossing:
                d[:] = d - x
            g[:] = g + x
            if g < cap:
                short = True
            out[:] = out | (g << (w * cand))
        grant.next = out
        hsat.next = short and h == 0
        dsat.next = short and crossing and d == 0
        hbm_saturated.next = short and h == 0
        d2d_saturated.next = short and crossing and d == 0

    @always_seq(clk.posedge, reset=rst)
    def rotate():
        if ptr == n_tgt - 1:
            ptr.next = 0
        else:
            ptr.next = ptr + 1
        if hsat and hbm_sat_cyc != STAT_MAX:
            hbm_sat_cyc.next = hbm_sat_cyc + 1
        if dsat and d2d_sat_cyc != STAT_MAX:
            d2d_sat_cyc.next = d2d_sat_cyc + 1

    return allocate, rotate
