"""Logic depth per pipeline stage of the node's deepest blocks, and what splitting them costs.

`python -m cosim.reports.stage_depth [--lanes N] [--skip-control]` synthesises, with the flow of
`prism synth` (cosim/reports/synth.py: synth_xilinx -family xcup, the same LUT-level measure, the
same cached figures):

* prism_control as the node instantiates it (KULISCH_W = 320): its deepest end points;
* prism_round16 as the node has it (three register stages, hdl/node/prism_round16.py), KULISCH_W = 320,
  with N lanes (default 1: the lanes are independent copies, so one lane has the block's depth and
  its per-lane registers; the full block, 16 lanes, costs yosys far more: docs/perf.md): the
  deepest path into each register stage, LUTs, flip-flops and the latency.  (The one- and
  two-stage rows of docs/hdl_sizes.md were measured on forms since removed: the git history has
  them.)

It prints Markdown tables; docs/hdl_sizes.md ("Logic depth per stage") holds the measured figures.
"""
import argparse
import sys

from cosim.reports import synth
from hdl.node.prism_round16 import STAGE_CHOICES, prism_round16
from spec.formats import KULISCH_WIDTH_DEFAULT

# register names of each stage of prism_round16 (hdl/node/prism_round16.py): stage 1 ends in s1_*,
# stage 2 in s2_*, the last stage in the outputs
_ROUND16_STAGE_OF = (("s1_", 1), ("s2_", 2), ("out_", None))


def round16_ports(lanes, tag_width, width=KULISCH_WIDTH_DEFAULT):
    from myhdl import ResetSignal, Signal, intbv

    def b():
        return Signal(bool(0))

    def u(w):
        return Signal(intbv(0)[w:])
    return [b(), ResetSignal(0, active=1, isasync=False), b(), b(), u(lanes * width), u(5 * lanes),
            u(32 * lanes), u(3), u(tag_width), b(), u(32 * lanes), u(tag_width)]


def _stage_of(end, stages):
    for prefix, stage in _ROUND16_STAGE_OF:
        if end.startswith(prefix):
            return stages if stage is None else stage
    return None


def measure_round16(lanes=1, stages_list=STAGE_CHOICES, tag_width=8, progress=None):
    """[{stages, lanes, resources, stage_depth: {stage: deepest end point}, seconds}]"""
    rows = []
    for stages in stages_list:
        if progress:
            progress(f"synthesising prism_round16 STAGES={stages}, {lanes} lane(s) (W {KULISCH_WIDTH_DEFAULT}) ...")
        fig = synth.synth_block(prism_round16, round16_ports(lanes, tag_width), {"STAGES": stages})
        per_stage = {}
        for d in fig["depth"]:
            st = _stage_of(d["end"], stages)
            if st is not None and (st not in per_stage or d["depth"] > per_stage[st]["depth"]):
                per_stage[st] = d
        rows.append({"stages": stages, "lanes": lanes, "resources": fig["resources"],
                     "stage_depth": per_stage, "seconds": fig["seconds"], "peak_mib": fig["peak_mib"]})
    return rows


def measure_control(progress=None):
    cap = synth.capture_phase_blocks(KULISCH_WIDTH_DEFAULT)
    func, args, kwargs, _, inst = cap["prism_control"]
    if progress:
        progress(f"synthesising prism_control (W {KULISCH_WIDTH_DEFAULT}) ...")
    return synth.synth_block(func, args, kwargs, instance=inst)


def round16_table(rows):
    out = ["| prism_round16 | lanes | latency (cycles) | deepest path per stage (LUT levels: LUTs + CARRY4, end point) "
           "| LUT | FF | yosys s |",
           "|---|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        parts = []
        for st in sorted(r["stage_depth"]):
            d = r["stage_depth"][st]
            parts.append(f"stage {st}: {d['depth']:g} ({d['luts']} + {d['carries']}, `{d['end']}`)")
        res = r["resources"]
        out.append(f"| STAGES = {r['stages']} | {r['lanes']} | {r['stages']} | {'; '.join(parts)} | "
                   f"{res['LUT']:,} | {res['FF']:,} | {r['seconds']} |")
    return "\n".join(out)


def control_table(fig, top=4):
    res = fig["resources"]
    out = [f"prism_control: {res['LUT']:,} LUT, {res['FF']:,} FF, {res['CARRY']:,} CARRY, {res['DSP']} DSP "
           f"(yosys {fig['seconds']} s, {fig['peak_mib']} MiB)", "",
           "| end point | LUT levels | LUTs | CARRY4 | from |", "|---|---:|---:|---:|---|"]
    for d in fig["depth"][:top]:
        out.append(f"| `{d['end']}` | {d['depth']:g} | {d['luts']} | {d['carries']} | `{d['start']}` |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m cosim.reports.stage_depth", description=__doc__.splitlines()[0])
    p.add_argument("--lanes", type=int, default=1, help="prism_round16 lanes to synthesise (1..16; default 1)")
    p.add_argument("--skip-control", action="store_true", help="do not synthesise prism_control")
    p.add_argument("--skip-round16", action="store_true", help="do not synthesise prism_round16")
    a = p.parse_args(argv)
    if not 1 <= a.lanes <= 16:
        p.error("--lanes: 1 .. 16")

    def progress(m):
        print(m, file=sys.stderr, flush=True)
    if not a.skip_control:
        print(control_table(measure_control(progress)))
        print()
    if not a.skip_round16:
        # the tag width of the node's first rounder (the read-out's Kulisch path)
        print(round16_table(measure_round16(a.lanes, progress=progress)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
