"""Generic-gate size of MyHDL blocks: convert, synthesise with yosys, count.

`synth_stats(block_func, *args, **kwargs)` converts the block for those
arguments (the co-simulation tool chain's cached build folder), runs
`yosys -p "read_verilog <block>.v; synth -top <block>; stat"` and returns
{"flops": flip-flop bits, "cells": all cells, "cell_types": {type: count}}.
The figures are for yosys' technology-independent gate library (1-bit
$_AND_/$_MUX_/$_DFF_... cells): a relative measure for comparing blocks and
parameter sets, not an FPGA or ASIC utilisation report.  The result is cached
beside the converted design, so a second call for the same design is free.

`python -m cosim.reports.size_report [name ...]` prints a Markdown table for the blocks
in REPORT_BLOCKS (or the named ones).
"""
import json
import os
import re
import subprocess
import sys

from myhdl import ResetSignal, Signal, intbv

from cosim.package.package_setup import Geometry, distributor_signals, package_signals
from cosim.sim.toolchain import block_function, build
from cosim.sim.vpi import ToolchainError, require_tool
from hdl.arith.auto_classifier import auto_classifier
from hdl.arith.fp32_add import fp32_add
from hdl.arith.fp32_arrival_lane import fp32_arrival_lane
from hdl.arith.fp32_round import fp32_round
from hdl.arith.kulisch_lane import kulisch_lane
from hdl.arith.kulisch_round import kulisch_round
from hdl.arith.number_decoder import number_decoder
from hdl.arith.reduce_slice import SliceInput, SliceReadout, reduce_slice
from hdl.common.axis_register import axis_register
from hdl.common.interface import AxiStream
from spec.formats import KULISCH_WIDTH_CHOICES, KULISCH_WIDTH_DEFAULT


def _sig(width):
    return Signal(bool(0)) if width == 1 else Signal(intbv(0)[width:])


def _clk_rst():
    return Signal(bool(0)), ResetSignal(0, active=1, isasync=False)


# ---------------------------------------------------------------------------
# BLOCKS IN THE REPORT: add yours here.
# name -> function returning (block function, positional args, keyword args);
# the function is only called when that row is computed (imports stay lazy).
# ---------------------------------------------------------------------------
def _fp32_add(latency, tag_width=16):
    clk, rst = _clk_rst()
    return fp32_add, (clk, rst, _sig(1), _sig(32), _sig(32), _sig(tag_width), _sig(1), _sig(32),
                      _sig(tag_width)), {"LATENCY": latency}


def _kulisch_round(width, latency=3, tag_width=16):
    clk, rst = _clk_rst()
    return kulisch_round, (clk, rst, _sig(1), _sig(width), _sig(1), _sig(1), _sig(1), _sig(1), _sig(1), _sig(3),
                           _sig(tag_width), _sig(1), _sig(32), _sig(width), _sig(4),
                           _sig(tag_width)), {"LATENCY": latency}


def _axis_register(width=64):
    clk, rst = _clk_rst()
    return axis_register, (clk, rst, AxiStream(width), AxiStream(width)), {}


def _package_block(name, **params):
    """Accelerator-package blocks at the geometry of the degraded-die scenario (4 dies, 16-entry job table)."""

    g = Geometry()
    func = block_function(name)
    if name == "work_distributor":
        return func, (), {**distributor_signals(g), **params}
    if name == "accelerator_package":
        return func, (), {**package_signals(g), **params}
    clk, rst = _clk_rst()
    if name == "service_rate_estimator":
        return func, (clk, rst, _sig(1), _sig(g.tgt_w), _sig(g.work_w), _sig(1), _sig(g.tgt_w), _sig(g.work_w),
                      _sig(g.n_tgt * g.cnt_w), _sig(g.n_tgt), _sig(g.n_tgt), _sig(g.n_tgt * g.rate_w), _sig(g.n_tgt),
                      *[_sig(g.n_tgt * g.stat_w) for _ in range(4)]), params
    if name == "shared_resource_arbiter":
        return func, (clk, rst, _sig(g.n_tgt * g.drate_w), _sig(g.n_tgt * g.drate_w), _sig(g.drate_w),
                      _sig(g.drate_w), _sig(g.n_tgt * g.drate_w), _sig(1), _sig(1), _sig(g.stat_w),
                      _sig(g.stat_w)), params
    if name == "package_assertion_monitor":
        return func, (clk, rst, _sig(1), _sig(1), _sig(g.slot_w), _sig(g.tgt_w), _sig(g.n_tgt), _sig(1),
                      _sig(g.slot_w), _sig(g.gen_w), _sig(g.n_job), _sig(g.n_job * g.gen_w),
                      _sig(g.n_job * g.epoch_w), _sig(g.n_tgt * g.owork_w), _sig(g.n_tgt * g.rate_w),
                      _sig(g.n_tgt), _sig(g.n_tgt * g.stat_w), _sig(g.n_tgt * g.stat_w),
                      *[_sig(1) for _ in range(7)]), params
    # compute_die_model
    return func, (clk, rst, _sig(1), _sig(g.tgt_w), _sig(g.slot_w), _sig(g.gen_w), _sig(g.work_w), _sig(1),
                  _sig(1), _sig(1), _sig(1), _sig(g.slot_w), _sig(g.gen_w), _sig(g.drate_w), _sig(g.drate_w),
                  _sig(g.drate_w), _sig(1), _sig(1)), params


def _number_decoder(width):
    return number_decoder, (_sig(32), _sig(2), _sig(width), _sig(1), _sig(1), _sig(1), _sig(32)), {}


def _kulisch_lane(width, rows, wrap_bits=16):
    clk, rst = _clk_rst()
    rb = max(1, (rows - 1).bit_length())
    return kulisch_lane, (clk, rst, _sig(1), _sig(rb), _sig(1), _sig(1), _sig(width), _sig(1), _sig(1), _sig(1),
                          _sig(wrap_bits), _sig(1), _sig(rb), _sig(width), _sig(1), _sig(1), _sig(1),
                          _sig(wrap_bits)), {"ROWS": rows}


def _fp32_arrival_lane(rows, latency=4):
    clk, rst = _clk_rst()
    rb = max(1, (rows - 1).bit_length())
    return fp32_arrival_lane, (clk, rst, _sig(1), _sig(1), _sig(rb), _sig(1), _sig(32), _sig(1), _sig(32)), \
        {"ROWS": rows, "LATENCY": latency}


def _auto_classifier():
    clk, rst = _clk_rst()
    return auto_classifier, (clk, rst, _sig(512), _sig(16), _sig(1), _sig(1), _sig(512), _sig(16), _sig(2), _sig(1),
                             _sig(1)), {}


def _fp32_round(tag_width=16):
    clk, rst = _clk_rst()
    return fp32_round, (clk, rst, _sig(1), _sig(32), _sig(3), _sig(tag_width), _sig(1), _sig(32),
                        _sig(tag_width)), {}


def _reduce_slice(width, capacity, paths):
    clk, rst = _clk_rst()
    return reduce_slice, (clk, rst, _sig(1), SliceInput(index_width=12), _sig(1), _sig(1), _sig(8),
                          SliceReadout(state_width=width, user_width=20), _sig(1)), {"CAPACITY": capacity, "PATHS": paths}


REPORT_BLOCKS = {
    "axis_register (64-bit)": lambda: _axis_register(64),
    "fp32_add (LATENCY 4, 16-bit tag)": lambda: _fp32_add(4),
    "fp32_add (LATENCY 3, 16-bit tag)": lambda: _fp32_add(3),
    "fp32_add (LATENCY 2, 16-bit tag)": lambda: _fp32_add(2),
    **{f"kulisch_round (W {w}, LATENCY 3, 16-bit tag)": (lambda w=w: _kulisch_round(w)) for w in KULISCH_WIDTH_CHOICES},
    "work_distributor (service-rate, 4 targets, 16 jobs)": lambda: _package_block("work_distributor", POLICY=1),
    "work_distributor (round-robin, 4 targets, 16 jobs)": lambda: _package_block("work_distributor", POLICY=0),
    "service_rate_estimator (4 targets, WINDOW 64)": lambda: _package_block("service_rate_estimator", WINDOW=64),
    "compute_die_model (QUEUE_DEPTH 8)": lambda: _package_block("compute_die_model", QUEUE_DEPTH=8),
    "shared_resource_arbiter (4 dies)": lambda: _package_block("shared_resource_arbiter"),
    "package_assertion_monitor (4 targets, 16 jobs)": lambda: _package_block("package_assertion_monitor"),
    "accelerator_package (4 dies, service-rate)": lambda: _package_block("accelerator_package", POLICY=1),
    **{f"number_decoder (W {w})": (lambda w=w: _number_decoder(w)) for w in KULISCH_WIDTH_CHOICES},
    **{f"kulisch_lane (W {w}, 4 rows, 16-bit wraps)": (lambda w=w: _kulisch_lane(w, 4)) for w in KULISCH_WIDTH_CHOICES},
    "fp32_arrival_lane (4 rows, LATENCY 4)": lambda: _fp32_arrival_lane(4),
    "auto_classifier (16 x FP32 tile)": _auto_classifier,
    "fp32_round (16-bit tag)": _fp32_round,
    f"reduce_slice (W {KULISCH_WIDTH_DEFAULT}, CAPACITY 64, Kulisch only)":
        lambda: _reduce_slice(KULISCH_WIDTH_DEFAULT, 64, "kulisch"),
    f"reduce_slice (W {KULISCH_WIDTH_DEFAULT}, CAPACITY 64, FP32 only)":
        lambda: _reduce_slice(KULISCH_WIDTH_DEFAULT, 64, "fp32"),
    # collective fabric (seed 000) at the seed's geometry: 32 ring links, 32 uplinks, 8 stripes
    "slowest_member_tracker (32 members)": lambda: _collective("slowest_member_tracker"),
    "ring_allreduce_model (32 links, N 1024)": lambda: _collective("ring_allreduce_model"),
    "stall_accountant (64-bit total)": lambda: _collective("stall_accountant"),
    "all_to_all_model (16-bit N)": lambda: _collective("all_to_all_model"),
    "striping_controller (32 members x 8 stripes)": lambda: _collective("striping_controller"),
    "load_aware_selector (32 paths)": lambda: _collective("load_aware_selector"),
    "ecmp_hash_unit (CRC-32, 32 paths, mod)": lambda: _collective("ecmp_hash_unit"),
    "collective_telemetry": lambda: _collective("collective_telemetry"),
    "collective_conformance_monitor (32 members, 32 paths, 8 stripes)":
        lambda: _collective("collective_conformance_monitor"),
}
# ---------------------------------------------------------------------------


def _collective(name):
    """Collective-fabric blocks (seed 000) with the seed's port widths, via the fabric's test sizes."""
    func = block_function(name)
    clk, rst = _clk_rst()
    m, p, s, w = 32, 32, 8, 16
    ports = {
        "slowest_member_tracker": (_sig(1), _sig(m * w), _sig(w), _sig(w), _sig(w), _sig(w), _sig(8), _sig(16),
                                   _sig(1), _sig(2), _sig(32), _sig(32)),
        "ring_allreduce_model": (_sig(1), _sig(1), _sig(m * w), _sig(w), _sig(8), *[_sig(32) for _ in range(5)],
                                 _sig(16), _sig(1), _sig(1), _sig(32)),
        "stall_accountant": (_sig(32), _sig(32), _sig(32), _sig(7), _sig(1), *[_sig(32) for _ in range(4)], _sig(16),
                             _sig(32), _sig(64)),
        "all_to_all_model": (_sig(3), _sig(16), _sig(32), _sig(32), _sig(8), _sig(32), _sig(32), _sig(32), _sig(16),
                             _sig(1), _sig(16)),
        "striping_controller": (_sig(1), _sig(32), _sig(m * s * w), _sig(32), _sig(m * w), _sig(w), _sig(8), _sig(1),
                                _sig(32), _sig(16), _sig(32)),
        "load_aware_selector": (_sig(1), _sig(32), _sig(w), _sig(1), _sig(8), _sig(w), _sig(1), _sig(8), _sig(p * w),
                                _sig(w), _sig(w), _sig(16), _sig(1), _sig(32), _sig(32), _sig(1), _sig(1)),
        "ecmp_hash_unit": (_sig(1), _sig(104), _sig(16), _sig(1), _sig(32), _sig(8), _sig(16)),
        "collective_telemetry": (_sig(1), _sig(w), _sig(w), _sig(8), _sig(32), _sig(32), _sig(32), _sig(32), _sig(16),
                                 _sig(w), _sig(1), _sig(3), _sig(32), _sig(32), _sig(w), _sig(16), _sig(8), _sig(16),
                                 _sig(16), _sig(32), _sig(w), _sig(1), _sig(3), _sig(16), _sig(4), _sig(1)),
    }
    if name == "all_to_all_model":
        return func, ports[name], {}
    if name == "collective_conformance_monitor":
        from hdl.fabric.fabric_buses import (AllToAll, FlowEvents, JobRateClaim, Placement, RateTracker, RingModel,
                                             SlowestMember, StallCost, Striping, TelemetryClaims)
        args = (clk, rst, RateTracker(members=m), SlowestMember(), RingModel(), AllToAll(), FlowEvents(),
                Placement(paths=p), Striping(members=m, stripes=s), TelemetryClaims(), JobRateClaim(), StallCost(),
                _sig(34), _sig(34))
        return func, args, {}
    return func, (clk, rst) + ports[name], {}


_STAT_FILE = "yosys_stat.json"
_FLOP = re.compile(r"^\$_(S?DFFE?|ALDFFE?|DFFSRE?|SDFFC?E)_")


def parse_stat(text):
    """Cell counts from yosys `stat` output: {"cells": n, "cell_types": {...}, "flops": bits}."""
    cells, types = None, {}
    for line in text.splitlines():
        m = re.match(r"\s*Number of cells:\s+(\d+)", line)
        if m:
            cells, types = int(m.group(1)), {}     # the last module listed is the top
            continue
        m = re.match(r"\s+(\$\S+)\s+(\d+)\s*$", line)
        if m and cells is not None:
            types[m.group(1)] = int(m.group(2))
    if cells is None:
        raise ValueError("no 'Number of cells' line in the yosys statistics")
    flops = sum(n for t, n in types.items() if _FLOP.match(t))
    return {"flops": flops, "cells": cells, "cell_types": types}


def synth_stats(block_func, *args, **kwargs):
    """Synthesise the converted block with yosys; {"flops", "cells", "cell_types"}."""
    folder, name, _ = build(block_func, *args, **kwargs)
    cached = os.path.join(folder, _STAT_FILE)
    if os.path.exists(cached):
        with open(cached) as fh:
            return json.load(fh)
    require_tool("yosys")
    stat_txt = os.path.join(folder, "yosys_stat.txt")
    script = f"read_verilog {name}.v; synth -top {name}; tee -q -o yosys_stat.txt stat"
    r = subprocess.run(["yosys", "-q", "-p", script], cwd=folder, capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(stat_txt):
        raise ToolchainError(f"yosys could not synthesise {folder}/{name}.v:\n{(r.stderr or r.stdout).strip()[-2000:]}")
    with open(stat_txt) as fh:
        stats = parse_stat(fh.read())
    with open(cached + ".tmp", "w") as fh:
        json.dump(stats, fh)
    os.replace(cached + ".tmp", cached)
    return stats


def markdown_table(names=None):
    names = list(REPORT_BLOCKS) if not names else names
    unknown = [n for n in names if n not in REPORT_BLOCKS]
    if unknown:
        raise KeyError(f"not in REPORT_BLOCKS: {', '.join(unknown)}")
    rows = ["| block | flip-flops | cells (yosys generic gates) |", "|---|---:|---:|"]
    for n in names:
        func, args, kwargs = REPORT_BLOCKS[n]()
        s = synth_stats(func, *args, **kwargs)
        rows.append(f"| {n} | {s['flops']} | {s['cells']} |")
    return "\n".join(rows)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        print(markdown_table(argv))
    except KeyError as e:
        print(f"size_report: {e.args[0]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
