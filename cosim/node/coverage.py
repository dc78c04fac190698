"""Functional coverage of the node, sampled from what happened on the wire.

The cover points below are filled from a finished run: the frames the input and output
monitors saw (with their cycles), the resets, and the verdicts the scoreboard's golden
model gave the input frames in processing order.  Nothing is taken from the stimulus plan,
so a bin is hit only when the node really met that case (a reset planned for the drain
that came after the RESULT frames counts as "idle", not "draining").

A `Coverage` is a table of hit counts per (cover point, bin); coverages of many seeds,
worker processes or Dask workers merge by adding counts.  Every bin of every point is
defined up front (like cocotb-coverage's CoverPoint/CoverCross bins), so holes are the bins
with no hit and the percentage is hit bins over all bins.  Bins that cannot be reached
are listed in UNREACHABLE with the reason, and left out of the percentage.
"""
import json
from collections import Counter
from itertools import product

from golden.node import protocol as P
from spec.formats import KULISCH_WIDTHS
from spec.frames import MAX_CAPACITY

POLICIES = ("kulisch", "fp32-arrival")
IN_FORMATS = {"kulisch": ("int8", "fp16", "bf16", "fp32", "exact"),     # exact: a tree's partials
              "fp32-arrival": ("int8", "fp16", "bf16", "fp32")}
RESULT_FORMATS = {"kulisch": ("int8", "fp16", "bf16", "fp32", "exact", "auto"),
                  "fp32-arrival": ("int8", "fp16", "bf16", "fp32", "auto")}
E_BINS = ("1", "2-14", "15", "16", "17", "18-254", "255", "256", "257", f"258-{MAX_CAPACITY - 1}", str(MAX_CAPACITY))
STALL_BINS = ("none", "light (<50%)", "heavy (>=50%)", "long stall (>=100 cycles)")
EDGE_BINS = ("largest finite", "infinity", "NaN", "smallest normal", "subnormal", "smallest subnormal")
AUTO_EDGE_BINS = ["INT8 tile holding 127 or -128", "FP16 tile holding +-65504", "FP16 tile holding a subnormal",
                  "FP16 tile holding inf or NaN", "BF16 tile holding a value below FP16's range",
                  "FP32 tile holding a value with 12+ significant bits"]
RESET_PHASES = ("idle", "open, nothing admitted", "open, DATA admitted", "draining", "RX frame cut",
                "TX frame cut")

# every cover point and its bins, in report order
POINTS = {
    "operation: policy x input x result": [f"{p} {i}->{r}" for p in POLICIES for i in IN_FORMATS[p]
                                           for r in RESULT_FORMATS[p]],
    "operation: mode -> recipients": ["Reduce -> TX0", "Reduce -> TX1", "AllReduce -> TX0", "AllReduce -> TX1",
                                      "AllReduce -> TX0+TX1"],
    "operation: KULISCH_W x policy": [f"W={w} {p}" for w in sorted(KULISCH_WIDTHS) for p in POLICIES],
    "operation: element count E": list(E_BINS),
    "operation: contributors": [str(c) for c in range(1, 9)],
    "operation: contributor ids": ["0 .. C-1", "sparse"],
    "operation: receive port of each contributor": ["c on RX c % 2", "all on RX0", "all on RX1", "mixed"],
    "operation: DATA frames admitted": ["1", "2-3", "4-15", "16-63", "64+"],
    "operation: how it ended": ["complete", "aborted", "reset", "left open"],
    "DATA: verdict": ["admitted"] + list(P.DROP_REASONS),
    "DATA: duplicate": ["exact repeat", "partial overlap"],
    "DATA: full frame bank (1 + 256 beats)": ["INT8", "FP16/BF16", "FP32", "EXACT"],
    # EXACT partials taken in (a reduction tree's merge), per admitted value
    "DATA: EXACT partials": ["within the W-bit register", "beyond it (the row wraps)",
                             "the last value a row takes", "beyond what a row takes (a NaN)", "child's flags set"],
    "CONTROL: request -> response": ["STAGE ACK", "COMMIT ACK", "ABORT ACK", "CONTROL BAD_OPCODE",
                                     "CONTROL BAD_LENGTH", "STAGE BAD_POLICY", "STAGE BAD_FORMAT", "STAGE BAD_COUNT",
                                     "STAGE BAD_CONTRIBUTORS", "STAGE BAD_RECIPIENTS", "COMMIT NO_STAGED",
                                     "COMMIT STAGED_MISMATCH", "COMMIT BUSY", "ABORT NOT_OPEN",
                                     "ABORT ACTIVE_MISMATCH"],
    "STAGE: rules that combine two fields": ["Reduce to TX0+TX1: BAD_RECIPIENTS",
                                            "EXACT under FP32_ARRIVAL: BAD_FORMAT",
                                            "EXACT input under FP32_ARRIVAL: BAD_FORMAT"],
    # requests answered but whose responses had not left TX port 0 yet (the response queue)
    "CONTROL: responses waiting at once": ["1", "2-9", "10+"],
    "COMMIT ACK: while the previous operation drains (held)": ["held", "immediate"],
    "end window: request x TX backpressure": [f"{k} {s}" for k in ("STAGE", "COMMIT", "DATA", "ABORT")
                                              for s in ("no stall", "stalled")],
    "reset: phase x policy": ["idle"] + [f"{ph} {p}" for ph in RESET_PHASES[1:] for p in POLICIES],
    "reset: edges rst was held": ["1", "2"],
    # two FP32_ARRIVAL frames of one operation from different ports, the younger admitted while
    # the older still had ranges to add ahead of the younger's first: the younger must wait
    "FP32_ARRIVAL: a younger frame behind an older one on shared ranges": ["older on RX0", "older on RX1"],
    "reset: a staged operation discarded": ["staged, none open", "staged while another is open",
                                            "its COMMIT after the reset: NO_STAGED"],
    "ABORT: phase": ["ACK, nothing admitted", "ACK, DATA admitted", "ACK, blocks complete",
                     "NOT_OPEN, no operation", "NOT_OPEN, in the end window", "NOT_OPEN, after the drain",
                     "ACTIVE_MISMATCH"],
    "unsupported traffic: class": ["0", "3 (RESULT)", "4-15"],
    "frames lost to a reset": ["RX frame cut", "RX frame complete at the reset", "TX frame cut"],
    "TX backpressure in a RESULT frame": list(STALL_BINS),
    "RX gaps in a DATA frame": list(STALL_BINS),
    "RESULT: EXACT values": ["plain", "overflowed the W-bit accumulator", "special flags"],
    "RESULT: AUTO groups": ["INT8", "FP16", "BF16", "FP32", "group over several tiles"],
    # element values on the edges the rounding and the AUTO classifier decide, as they left the node
    "RESULT: values at the format's edges": [f"{f} {b}" for f in ("FP16", "BF16", "FP32")
                                             for b in EDGE_BINS] + ["INT8 127", "INT8 -128", "INT8 0"],
    "RESULT: AUTO tiles at a format's edge": AUTO_EDGE_BINS,
}

# bins that cannot be hit by any stimulus, with the reason (kept out of the percentage)
UNREACHABLE = {
    ("DATA: full frame bank (1 + 256 beats)", "INT8"):
        "256 INT8 payload beats hold 16,384 elements, more than CAPACITY (4,096): such a frame can "
        "only be dropped (bad_range); the largest admissible INT8 frame has 1 + 64 beats",
    ("DATA: full frame bank (1 + 256 beats)", "FP16/BF16"):
        "256 FP16/BF16 payload beats hold 8,192 elements, more than CAPACITY (4,096): the largest "
        "admissible frame has 1 + 128 beats",
}


def e_bin(e):
    if e in (1, 15, 16, 17, 255, 256, 257, MAX_CAPACITY):
        return str(e)
    return "2-14" if e < 15 else "18-254" if e < 255 else f"258-{MAX_CAPACITY - 1}"


def count_bin(n, edges=((1, "1"), (3, "2-3"), (15, "4-15"), (63, "16-63"))):
    for top, name in edges:
        if n <= top:
            return name
    return "64+"


def stall_bin(cycles):
    """Backpressure inside one frame, from the cycles its beats moved."""
    if len(cycles) < 2:
        return "none"
    gaps = [b - a - 1 for a, b in zip(cycles, cycles[1:])]
    if max(gaps) >= 100:
        return "long stall (>=100 cycles)"
    idle = sum(gaps)
    if idle == 0:
        return "none"
    return "light (<50%)" if idle < len(cycles) - 1 else "heavy (>=50%)"


def _float_class(fmt_name, bits):
    """The edge a float pattern sits on (one of EDGE_BINS), or None."""
    from golden.arith.formats import float_params
    ebits, mbits, _, _, _ = float_params(fmt_name)
    mag = bits & ((1 << (ebits + mbits)) - 1)
    exp, frac = mag >> mbits, mag & ((1 << mbits) - 1)
    if exp == (1 << ebits) - 1:
        return "NaN" if frac else "infinity"
    if mag == (((1 << ebits) - 2) << mbits) | ((1 << mbits) - 1):
        return "largest finite"
    if mag == 1 << mbits:
        return "smallest normal"
    if mag == 1:
        return "smallest subnormal"
    if exp == 0 and frac:
        return "subnormal"
    return None


def exact_input_bins(beats, kulisch_w):
    """Bins of "DATA: EXACT partials" an admitted EXACT DATA frame's values hit."""
    from spec.formats import exact_input_limit
    limit = exact_input_limit(kulisch_w)
    out = set()
    for total, flags in P.decode(beats).values:
        if flags:
            out.add("child's flags set")
        if total in (limit - 1, -limit):
            out.add("the last value a row takes")
        if not -limit <= total < limit:
            out.add("beyond what a row takes (a NaN)")
        elif -(1 << (kulisch_w - 1)) <= total < 1 << (kulisch_w - 1):
            out.add("within the W-bit register")
        else:
            out.add("beyond it (the row wraps)")
    return out


def value_edges(fmt, values):
    """Edge bins hit by a group's element values (RESULT: values at the format's edges)."""
    out = set()
    name = P.FORMAT_NAMES[fmt]
    for v in values:
        if fmt == P.FMT_INT8:
            b = {0x7F: "INT8 127", 0x80: "INT8 -128", 0: "INT8 0"}.get(v)
        elif fmt in (P.FMT_FP16, P.FMT_BF16, P.FMT_FP32):
            cls = _float_class(name, v)
            b = f"{name.upper()} {cls}" if cls else None
        else:
            b = None
        if b:
            out.add(b)
    return out


def auto_edges(groups):
    """AUTO tile edge bins of a RESULT frame's groups (one format per group, 16-element tiles)."""
    from golden.arith.formats import decode
    out = set()
    for fmt, values in groups:
        name = P.FORMAT_NAMES[fmt]
        for v in values:
            if fmt == P.FMT_INT8 and v in (0x7F, 0x80):
                out.add("INT8 tile holding 127 or -128")
            elif fmt == P.FMT_FP16:
                cls = _float_class("fp16", v)
                if cls == "largest finite":
                    out.add("FP16 tile holding +-65504")
                elif cls in ("subnormal", "smallest subnormal"):
                    out.add("FP16 tile holding a subnormal")
                elif cls in ("infinity", "NaN"):
                    out.add("FP16 tile holding inf or NaN")
            elif fmt == P.FMT_BF16:
                val = decode("bf16", v)
                if not isinstance(val, str) and val != 0 and abs(val) < 2 ** -24:
                    out.add("BF16 tile holding a value below FP16's range")
            elif fmt == P.FMT_FP32:
                frac = v & 0x7FFFFF
                if frac & 0x1FFF and (v >> 23) & 0xFF not in (0, 0xFF):
                    out.add("FP32 tile holding a value with 12+ significant bits")
    return out


class Coverage:
    def __init__(self, hits=None):
        self.hits = {point: Counter() for point in POINTS}
        for point, bins in (hits or {}).items():
            self.hits.setdefault(point, Counter()).update(bins)

    def hit(self, point, bin_):
        if bin_ not in POINTS[point]:
            raise KeyError(f"cover point {point!r} has no bin {bin_!r}")
        self.hits[point][bin_] += 1

    def merge(self, other):
        for point, bins in other.hits.items():
            self.hits.setdefault(point, Counter()).update(bins)
        return self

    def to_dict(self):
        return {point: dict(bins) for point, bins in self.hits.items() if bins}

    @classmethod
    def from_dict(cls, d):
        return cls(d)

    # -- closure --------------------------------------------------------------
    def holes(self):
        return {point: [b for b in bins if not self.hits[point][b] and (point, b) not in UNREACHABLE]
                for point, bins in POINTS.items()}

    def percent(self):
        total = sum(1 for point, bins in POINTS.items() for b in bins if (point, b) not in UNREACHABLE)
        hit = sum(1 for point, bins in POINTS.items() for b in bins
                  if (point, b) not in UNREACHABLE and self.hits[point][b])
        return 100.0 * hit / total, hit, total

    def summary_line(self):
        pct, hit, total = self.percent()
        n_holes = sum(len(h) for h in self.holes().values())
        return f"functional coverage {pct:.1f}% ({hit}/{total} bins){'' if not n_holes else f', {n_holes} holes'}"

    def markdown(self, title="Functional coverage"):
        pct, hit, total = self.percent()
        lines = [f"# {title}", "", f"{hit} of {total} bins hit: **{pct:.1f}%**.  Sampled from the monitors "
                 "(cosim/node/coverage.py): what the node met on the wire, not what the stimulus planned.", "",
                 "| cover point | bins hit | holes |", "|---|---|---|"]
        holes = self.holes()
        for point, bins in POINTS.items():
            reachable = [b for b in bins if (point, b) not in UNREACHABLE]
            n = sum(1 for b in reachable if self.hits[point][b])
            lines.append(f"| {point} | {n}/{len(reachable)} | {', '.join(holes[point]) or '–'} |")
        lines += ["", "## Hits per bin", ""]
        for point, bins in POINTS.items():
            lines.append(f"**{point}**: " + ", ".join(f"{b} {self.hits[point][b]}" for b in bins))
            lines.append("")
        if UNREACHABLE:
            lines += ["## Bins that cannot be reached", ""]
            lines += [f"- {point} / {b}: {why}" for (point, b), why in UNREACHABLE.items()]
        return "\n".join(lines) + "\n"

    def write(self, folder, stem="coverage"):
        import os
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{stem}.md"), "w") as fh:
            fh.write(self.markdown())
        pct, hit, total = self.percent()
        with open(os.path.join(folder, f"{stem}.json"), "w") as fh:
            json.dump({"percent": pct, "bins_hit": hit, "bins": total, "holes": self.holes(),
                       "hits": self.to_dict()}, fh, indent=1, sort_keys=True)


# -- sampling -------------------------------------------------------------------------

def _policy(op):
    return P.POLICY_NAMES[op.stage.policy]


def responses_waiting_at_most(events, tx, resets):
    """The response queue's deepest fill, from the monitors: requests processed (their last beat
    in; `events` from the scoreboard) against responses taken on TX0 (`tx`, the monitored frames
    per port), the count restarting at each reset (a reset empties the queue)."""
    marks = [(ev["cycle"], 1) for ev in events if ev["kind"] in ("STAGE", "COMMIT", "ABORT", "CONTROL")]
    marks += [(f.cycles[0], -1) for f in tx.get(0, []) if f.cycles and P.get_field(f.beats[0], "class") == P.CLASS_CONTROL]
    marks += [(r, 0) for r in resets]
    waiting = deepest = 0
    for _, step in sorted(marks, key=lambda m: (m[0], m[1])):
        waiting = 0 if step == 0 else max(0, waiting + step)
        deepest = max(deepest, waiting)
    return deepest


def sample(scenario, run, report):
    """The coverage of one finished run (report: the scoreboard's report, from check())."""
    cov = Coverage()
    sb = report.scoreboard
    events = sb.events
    resets = sorted(run.resets)
    tx = run.tx

    def results_of(op):
        st = op.stage
        return [f for p in tx for f in tx[p] if P.get_field(f.beats[0], "class") == P.CLASS_RESULT
                and (P.get_field(f.beats[0], "op_id"), P.get_field(f.beats[0], "generation")) == (st.op_id, st.generation)]

    # per committed operation: its parameters, how it ended, and its end window
    ops, window = [], {}
    for ev in events:
        if ev["kind"] == "COMMIT" and ev.get("verdict") == "OK":
            ops.append((ev["cycle"], ev["new_op"]))
    for i, (start, op) in enumerate(ops):
        st = op.stage
        cov.hit("operation: policy x input x result",
                f"{_policy(op)} {P.FORMAT_NAMES[st.in_format]}->{P.FORMAT_NAMES[st.result_format]}")
        mode = "AllReduce" if st.mode == P.MODE_ALLREDUCE else "Reduce"
        cov.hit("operation: mode -> recipients", f"{mode} -> {'+'.join(f'TX{p}' for p in (0, 1) if st.recipients >> p & 1)}")
        cov.hit("operation: KULISCH_W x policy", f"W={sb.kulisch_w} {_policy(op)}")
        cov.hit("operation: element count E", e_bin(st.count))
        cov.hit("operation: contributors", str(bin(st.contributors).count("1")))
        cov.hit("operation: contributor ids", "0 .. C-1" if st.contributors & (st.contributors + 1) == 0 else "sparse")
        port_of = {P.get_field(ev["header"], "contributor"): ev["port"] for ev in events
                   if ev["kind"] == "DATA" and ev.get("verdict") == "admitted" and ev.get("op") is op}
        if port_of:
            used = set(port_of.values())
            cov.hit("operation: receive port of each contributor",
                    f"all on RX{used.pop()}" if len(used) == 1 else
                    "c on RX c % 2" if all(p == c % 2 for c, p in port_of.items()) else "mixed")
        if op.frames_admitted:
            cov.hit("operation: DATA frames admitted", count_bin(op.frames_admitted))
        nxt = ops[i + 1][0] if i + 1 < len(ops) else None
        reset_hit = any(start < r and (nxt is None or r < nxt) for r in resets)
        if op.aborted:
            end = "aborted"
        elif reset_hit and (op.in_progress or len(results_of(op)) < len(op.blocks_sent) * bin(st.recipients).count("1")):
            end = "reset"
        elif not op.in_progress:
            end = "complete"
        else:
            end = "left open"
        cov.hit("operation: how it ended", end)

    # the cycle each operation ended (last admission or ABORT) and its drain window's end
    for ev in events:
        op = ev.get("op")
        if ev.get("ends_op"):
            outs = [f.cycles[-1] for f in results_of(op) if f.cycles]
            stalled = any(stall_bin(f.cycles) != "none" for f in results_of(op))
            window[id(op)] = (ev["cycle"], max(outs, default=ev["cycle"]), stalled)

    def in_window(ev):
        op = ev.get("op")
        if op is None or id(op) not in window:
            return None
        start, end, stalled = window[id(op)]
        return stalled if start < ev["cycle"] <= end else None

    admitted_ranges = {}
    for ev in events:
        kind = ev["kind"]
        if kind in ("reset", "lost"):
            continue
        verdict = ev.get("verdict")
        head = ev["header"]
        w = in_window(ev)
        if w is not None and kind in ("STAGE", "COMMIT", "DATA", "ABORT"):
            cov.hit("end window: request x TX backpressure", f"{kind} {'stalled' if w else 'no stall'}")
        if kind == "DATA":
            cov.hit("DATA: verdict", verdict)
            key = (id(ev.get("op")), P.get_field(head, "contributor"))
            span = (P.get_field(head, "offset"), P.get_field(head, "n"))
            if verdict == "admitted":
                admitted_ranges.setdefault(key, set()).add(span)
                fmt = P.get_field(head, "data_format")
                if ev["beats"] == 1 + P.MAX_PAYLOAD_BEATS:
                    cov.hit("DATA: full frame bank (1 + 256 beats)",
                            {P.FMT_INT8: "INT8", P.FMT_FP32: "FP32", P.FMT_EXACT: "EXACT"}.get(fmt, "FP16/BF16"))
                if fmt == P.FMT_EXACT and ev.get("frame"):
                    for b in exact_input_bins(ev["frame"], sb.kulisch_w):
                        cov.hit("DATA: EXACT partials", b)
            elif verdict == "duplicate":
                cov.hit("DATA: duplicate", "exact repeat" if span in admitted_ranges.get(key, ()) else "partial overlap")
        elif kind in ("STAGE", "COMMIT", "ABORT", "CONTROL"):
            name = f"{kind} ACK" if verdict == "OK" else f"{kind} {verdict}"
            if verdict == "BAD_LENGTH":
                name = "CONTROL BAD_LENGTH"
            cov.hit("CONTROL: request -> response", name)
            if kind == "STAGE" and verdict == "BAD_RECIPIENTS" and P.get_field(head, "recipients") == 0b11:
                cov.hit("STAGE: rules that combine two fields", "Reduce to TX0+TX1: BAD_RECIPIENTS")
            if (kind == "STAGE" and verdict == "BAD_FORMAT" and P.get_field(head, "result_format") == P.FMT_EXACT
                    and P.get_field(head, "policy") == P.POLICY_FP32_ARRIVAL):
                cov.hit("STAGE: rules that combine two fields", "EXACT under FP32_ARRIVAL: BAD_FORMAT")
            if (kind == "STAGE" and verdict == "BAD_FORMAT" and P.get_field(head, "in_format") == P.FMT_EXACT
                    and P.get_field(head, "policy") == P.POLICY_FP32_ARRIVAL
                    and P.get_field(head, "result_format") < P.FMT_EXACT):
                cov.hit("STAGE: rules that combine two fields", "EXACT input under FP32_ARRIVAL: BAD_FORMAT")
            if kind == "COMMIT" and verdict == "OK":
                prev = ev.get("op")
                held = prev is not None and id(prev) in window and ev["cycle"] <= window[id(prev)][1]
                cov.hit("COMMIT ACK: while the previous operation drains (held)", "held" if held else "immediate")
            if kind == "ABORT" and verdict != "BAD_LENGTH":
                op = ev.get("op")
                if verdict == "OK":
                    phase = ("ACK, blocks complete" if ev["blocks_before"] else
                             "ACK, DATA admitted" if ev["admitted_before"] else "ACK, nothing admitted")
                elif verdict == "ACTIVE_MISMATCH":
                    phase = "ACTIVE_MISMATCH"
                elif op is None:
                    phase = "NOT_OPEN, no operation"
                elif w is not None:
                    phase = "NOT_OPEN, in the end window"
                else:
                    phase = "NOT_OPEN, after the drain"
                cov.hit("ABORT: phase", phase)
        elif kind == "unsupported":
            cls = P.get_field(head, "class")
            cov.hit("unsupported traffic: class", "0" if cls == 0 else "3 (RESULT)" if cls == 3 else "4-15")

    deepest = responses_waiting_at_most(events, tx, resets)
    # every depth the queue went through on its way to the deepest
    for least, label in ((1, "1"), (2, "2-9"), (10, "10+")):
        if deepest >= least:
            cov.hit("CONTROL: responses waiting at once", label)

    if resets:
        cov.hit("reset: edges rst was held", str(getattr(scenario, "reset_hold", 2)))
    arrival = {}
    for ev in events:
        op = ev.get("op")
        if ev["kind"] == "DATA" and ev.get("verdict") == "admitted" and op is not None \
                and op.stage.policy == P.POLICY_FP32_ARRIVAL:
            arrival.setdefault(id(op), []).append(ev)
    for admitted in arrival.values():
        for older, younger in zip(admitted, admitted[1:]):
            if older["port"] == younger["port"]:
                continue
            per_beat = P.ELEMS_PER_BEAT[P.get_field(older["header"], "data_format")]
            # the older frame's reader issues a beat a cycle from its admission on, at best
            reached = P.get_field(older["header"], "offset") + per_beat * (younger["cycle"] - older["cycle"])
            older_end = P.get_field(older["header"], "offset") + P.get_field(older["header"], "n")
            young_lo = P.get_field(younger["header"], "offset")
            young_hi = young_lo + P.get_field(younger["header"], "n")
            if reached < young_hi and young_lo < older_end and young_lo >= reached:
                cov.hit("FP32_ARRIVAL: a younger frame behind an older one on shared ranges",
                        f"older on RX{older['port']}")

    # resets: the phase the node was in, from the monitors and the model state before it
    rx_cut = [c for p in (0, 1) for c in run.rx_cut.get(p, []) if c is not None]
    tx_cut = [f.cycles[-1] for p in (0, 1) for f in run.cut.get(p, []) if f.cycles]
    previous = 0
    for ev in events:
        if ev["kind"] == "lost":
            cov.hit("frames lost to a reset", "RX frame complete at the reset")
        if ev["kind"] != "reset":
            continue
        r, op = ev["cycle"], ev.get("op")
        pol = _policy(op) if op is not None else None
        phases = []
        if any(previous < c <= r for c in rx_cut):
            phases.append("RX frame cut")
        if any(previous < c <= r for c in tx_cut):
            phases.append("TX frame cut")
        if op is not None and ev["open"]:
            phases.append("open, DATA admitted" if ev["admitted_before"] else "open, nothing admitted")
        elif op is not None and id(op) in window and window[id(op)][0] < r and (
                window[id(op)][1] >= r or len(results_of(op)) < len(op.blocks_sent) * bin(op.stage.recipients).count("1")):
            phases.append("draining")
        if ev.get("staged") is not None:
            cov.hit("reset: a staged operation discarded",
                    "staged while another is open" if op is not None and ev["open"] else "staged, none open")
            staged = ev["staged"]
            later = next((e for e in events if e["cycle"] > r and e["kind"] == "COMMIT" and
                          (P.get_field(e["header"], "op_id"), P.get_field(e["header"], "generation")) ==
                          (staged.op_id, staged.generation)), None)
            if later is not None and later.get("verdict") == "NO_STAGED":
                cov.hit("reset: a staged operation discarded", "its COMMIT after the reset: NO_STAGED")
        if not phases or pol is None:
            cov.hit("reset: phase x policy", "idle")
        for ph in phases:
            if pol is not None:
                cov.hit("reset: phase x policy", f"{ph} {pol}")
        previous = r
    for c in rx_cut:
        cov.hit("frames lost to a reset", "RX frame cut")
    for c in tx_cut:
        cov.hit("frames lost to a reset", "TX frame cut")

    # backpressure and gaps as the monitors saw them
    for p in tx:
        for f in tx[p]:
            if P.get_field(f.beats[0], "class") == P.CLASS_RESULT and f.cycles:
                cov.hit("TX backpressure in a RESULT frame", stall_bin(f.cycles))
                try:
                    res = P.decode(f.beats)
                except P.MalformedFrame:
                    continue        # the scoreboard reports it ("malformed"); nothing to sample
                for g, (fmt, values) in enumerate(res.groups):
                    for b in value_edges(fmt, values):
                        cov.hit("RESULT: values at the format's edges", b)
                    if fmt == P.FMT_EXACT:
                        for total, flags in values:
                            cov.hit("RESULT: EXACT values", "special flags" if flags & 0x7 else
                                    "overflowed the W-bit accumulator" if flags & 0x8 else "plain")
                op_key = (res.op_id, res.generation)
                is_auto = any(o.stage.result_format == P.FMT_AUTO and (o.stage.op_id, o.stage.generation) == op_key
                              for _, o in ops)
                if is_auto:
                    for b in auto_edges(res.groups):
                        cov.hit("RESULT: AUTO tiles at a format's edge", b)
                    for fmt, values in res.groups:
                        cov.hit("RESULT: AUTO groups", P.FORMAT_NAMES[fmt].upper())
                        if len(values) > P.RANGE_ELEMS:
                            cov.hit("RESULT: AUTO groups", "group over several tiles")
    for p in run.rx:
        for f in run.rx[p]:
            if P.get_field(f.beats[0], "class") == P.CLASS_DATA and f.cycles:
                cov.hit("RX gaps in a DATA frame", stall_bin(f.cycles))
    return cov
