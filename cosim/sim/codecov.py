"""Code coverage of a converted design under Verilator, summarised per block.

The coverage build of the batched test bench (cosim.sim.batch, variant "coverage") counts, for the
design only (the test bench is left out):

  line points     each straight run of statements in a process, and each arm of every
                  if / else / case (Verilator's v_line and v_branch points), with the source lines
                  it spans;
  toggle points   each bit of each signal up to 1,024 bits wide (Verilator counts its changes).

Every run writes its counts to a file of its own; `merge` adds them up with
`verilator_coverage --write`.  `summarise` then reports per block:

  lines      source lines of the design's `always` processes that ran at least once (a line is
             run when a point spanning it was hit; initial values and declarations not counted);
  branches   if / else / case arms taken at least once;
  toggles    signal bits seen going both ways (at least two changes: 0 -> 1 -> 0).

Which block a point belongs to: MyHDL converts a design into one flat module, but it names a
sub-block's signals, and the variables hoisted out of its processes, `<instance>_<name>`, the
instance being the block function's name and its index among siblings (prism_ingress0,
prism_control0, ...; nested instances add their own prefix after it), and it names every process
`<instance>_<function>` (the tool chain drops these names from the design but keeps MyHDL's
output as written beside it, `<name>.raw.v`).  A process belongs to the instance its name
carries (without that file: the instance whose names it assigns, most of them when a process
also drives a signal of a neighbour); a continuous assignment to the instance whose names it
assigns or, assigning a top-level name, to the one instance it reads from; a signal to its
prefix, or else to the block of the process driving it.  What remains is the top block's own
logic, reported as "<module> (top level)".
"""
import json
import os
import re
import subprocess
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

from cosim.sim.convert import hdl_modules
from cosim.sim.vpi import ToolchainError, require_tool

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DESIGN_FILE = "design.json"        # beside the run files: which design they measured
TOGGLED = 2                        # changes of a bit that show it going both ways


def block_names():
    """Names of the blocks in hdl/ (one block function per module, named after it)."""
    return sorted(hdl_modules())


# ---- reading Verilator's coverage files ----

@dataclass
class Point:
    kind: str                  # "line", "branch" or "toggle"
    file: str
    line: int
    comment: str               # statement kind (block, if, else, ...) or the signal bit (name[3])
    hierarchy: str
    lines: List[int]           # source lines the point spans (line and branch points)
    count: int


def _spans(text):
    out = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def read_points(path):
    """The points of a coverage data file (Verilator's `C '<key>' <count>` lines)."""
    points = []
    with open(path, encoding="latin-1") as fh:
        for line in fh:
            if not line.startswith("C '"):
                continue
            key, _, count = line[3:].rstrip("\n").rpartition("' ")
            fields = {}
            for item in key.split("\x01"):
                if item:
                    name, _, value = item.partition("\x02")
                    fields[name] = value
            page = fields.get("page", "")
            kind = page.split("/", 1)[0][2:] if page.startswith("v_") else page
            points.append(Point(kind, fields.get("f", ""), int(fields.get("l", 0) or 0), fields.get("o", ""),
                                fields.get("h", ""), _spans(fields.get("S", "")), int(count)))
    return points


def merge(files, out, chunk=200):
    """Add up the counts of coverage data files into `out` (kept and added to if it exists);
    returns `out`.  Files are merged in chunks so no command line grows too long."""
    require_tool("verilator_coverage")
    files = list(files)
    if not files and not os.path.exists(out):
        raise ToolchainError("no coverage data to merge")
    for i in range(0, max(len(files), 1), chunk):
        inputs = ([out] if os.path.exists(out) else []) + files[i:i + chunk]
        tmp = out + ".tmp"
        r = subprocess.run(["verilator_coverage", "--write", tmp] + inputs, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(tmp):
            raise ToolchainError(f"verilator_coverage could not merge {len(inputs)} files: "
                                 f"{(r.stderr or r.stdout).strip()[-1000:]}")
        os.replace(tmp, out)
    return out


# ---- which block each line and signal of the converted Verilog belongs to ----

_DECL = re.compile(r"^(?:input|output|reg|wire|integer)\b\s*(?:signed\s+)?(?:\[[^\]]*\]\s*)?(\w+)")
_LHS = re.compile(r"^\s*(?:assign\s+)?([A-Za-z_]\w*)\s*(?:\[[^;]*?\])?\s*<?=(?!=)", re.M)
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def _code(line):
    """A line without its trailing comment and blanks."""
    return line.split("//", 1)[0].rstrip()


@dataclass
class Statement:
    first: int                 # 1-based source lines
    last: int
    kind: str                  # "always", "assign" or "initial"
    block: str


class DesignMap:
    """Blocks of a converted design's statements and signals (see the module notes)."""

    def __init__(self, verilog_path, blocks=None):
        """blocks: names of block functions (default: the modules of hdl/)."""
        with open(verilog_path) as fh:
            lines = fh.read().split("\n")
        m = re.search(r"^module\s+(\w+)", "\n".join(lines[:200]), re.M)
        self.module = m.group(1) if m else os.path.splitext(os.path.basename(verilog_path))[0]
        self.top = f"{self.module} (top level)"
        names = sorted(blocks or block_names(), key=len, reverse=True)
        self._prefix = re.compile(r"^((?:%s)\d+)_" % "|".join(map(re.escape, names))) if names else None
        self.statements: List[Statement] = []
        self.order: List[str] = []              # blocks in the order the Verilog first uses them
        self.signal_block: Dict[str, str] = {}
        labels = self._process_labels(verilog_path, sum(1 for t in lines if t.startswith("always")))
        declared = []
        drivers = {}
        processes = 0
        i = 0
        while i < len(lines):
            text = lines[i]
            d = _DECL.match(text)
            if d:
                declared.append(d.group(1))
            kind = text.split(None, 1)[0] if text[:1].isalpha() else ""
            if kind in ("always", "initial", "assign"):
                j = i
                if kind == "assign" or (kind == "initial" and _code(text).endswith(";")):
                    while j < len(lines) - 1 and not _code(lines[j]).endswith(";"):
                        j += 1
                else:
                    j = i + 1
                    while j < len(lines) and lines[j] != "end":      # MyHDL closes a process at column 0
                        j += 1
                body = "\n".join(lines[i:j + 1])
                assigned = _LHS.findall(body if kind == "assign" else "\n".join(lines[i + 1:j + 1]))
                label = None
                if kind == "always":
                    label = labels[processes] if labels else None
                    processes += 1
                block = (self.instance(label) or self.top) if label else self._owner(kind, body, assigned)
                self.statements.append(Statement(i + 1, j + 1, kind, block))
                if block not in self.order and block != self.top and kind != "initial":
                    self.order.append(block)
                for name in assigned:
                    drivers.setdefault(name, block)
                i = j + 1
                continue
            i += 1
        for name in declared:
            self.signal_block[name] = self.instance(name) or drivers.get(name, self.top)
        self._line_block = {}
        for st in self.statements:
            for n in range(st.first, st.last + 1):
                self._line_block[n] = st
        self.order.append(self.top)             # the top level's own logic last

    @staticmethod
    def _process_labels(verilog_path, count):
        """MyHDL's name of each `always` process, `<instance>_<function>` (`<top>_<function>` for
        the top block's own), read from MyHDL's output as written (`<name>.raw.v` beside the
        design; the rewrite drops the names): None when that file is missing or does not
        have the same processes."""
        raw = os.path.splitext(verilog_path)[0] + ".raw.v"
        if not os.path.exists(raw):
            return None
        with open(raw) as fh:
            heads = [line for line in fh if line.startswith("always")]
        if len(heads) != count:
            return None
        labels = [re.search(r"\bbegin:\s*(\w+)", h) for h in heads]
        return [m.group(1) if m else None for m in labels]

    def phase_order(self, source=None):
        """The blocks in the order the top block's Python source calls their functions (the
        node's phases), instances of one function by index; the Verilog's order when there is
        no source in hdl/.  Returns the ordered list (also kept as `self.order`)."""
        if source is None:
            dotted = hdl_modules().get(self.module)
            source = os.path.join(_ROOT, *dotted.split(".")) + ".py" if dotted else ""
        path = source
        if not os.path.exists(path):
            return self.order
        with open(path) as fh:
            text = fh.read()
        text = re.sub(r'(\"\"\"|\'\'\').*?\1', "", text, flags=re.S)       # docstrings
        text = re.sub(r"#[^\n]*", "", text)                                      # comments
        calls = []
        for m in re.finditer(r"\b(\w+)\s*\(", text):
            if m.group(1) not in calls and m.group(1) != self.module:
                calls.append(m.group(1))

        def key(block):
            if block == self.top:
                return (2, 0, 0)
            m = re.match(r"^(.*?)(\d+)$", block)
            func, index = (m.group(1), int(m.group(2))) if m else (block, 0)
            return (0, calls.index(func), index) if func in calls else (1, 0, index)
        self.order = sorted(self.order, key=key)
        return self.order

    def instance(self, name):
        """The sub-block instance a MyHDL name carries as its prefix, or None."""
        m = self._prefix.match(name) if self._prefix else None
        return m.group(1) if m else None

    def _owner(self, kind, body, assigned):
        owners = Counter(filter(None, (self.instance(n) for n in assigned)))
        if owners:
            return owners.most_common(1)[0][0]
        if kind == "assign":       # an alias of a sub-block's value under a top-level name
            rhs = body.split("=", 1)[1] if "=" in body else ""
            read = set(filter(None, (self.instance(n) for n in _IDENT.findall(rhs))))
            if len(read) == 1:
                return read.pop()
        return self.top

    def statement_at(self, line) -> Optional[Statement]:
        return self._line_block.get(line)

    def block_of_signal(self, name):
        base = _IDENT.match(name)
        base = base.group(0) if base else name
        return self.signal_block.get(base) or self.instance(base) or self.top


# ---- summaries ----

@dataclass
class BlockCoverage:
    block: str
    lines_hit: int = 0
    lines: int = 0
    branches_hit: int = 0
    branches: int = 0
    toggles_hit: int = 0
    toggles: int = 0
    lines_never_run: List[int] = field(default_factory=list)
    processes: int = 0
    processes_never_run: int = 0          # no point of the process hit
    processes_partly_run: int = 0         # some of its lines never ran

    def add(self, other):
        for f in ("lines_hit", "lines", "branches_hit", "branches", "toggles_hit", "toggles", "processes",
                  "processes_never_run", "processes_partly_run"):
            setattr(self, f, getattr(self, f) + getattr(other, f))


def summarise(points, design: DesignMap, verilog_name=None):
    """Per block (in the design's order), then the total; only points of the design's own file."""
    name = verilog_name or f"{design.module}.v"
    rows = {b: BlockCoverage(b) for b in design.order}
    line_hits = {}              # source line -> hit by some point spanning it
    process_hits = {}           # first line of an always process -> any of its points hit
    for p in points:
        if os.path.basename(p.file) != name:
            continue
        if p.kind == "toggle":
            row = rows.setdefault(design.block_of_signal(p.comment), BlockCoverage(design.block_of_signal(p.comment)))
            row.toggles += 1
            row.toggles_hit += p.count >= TOGGLED
            continue
        if p.kind not in ("line", "branch"):
            continue
        st = design.statement_at(p.line)
        if st is None or st.kind != "always":
            continue                         # initial values, the power-on wake
        if p.kind == "branch":
            rows[st.block].branches += 1
            rows[st.block].branches_hit += p.count > 0
        process_hits[st.first] = process_hits.get(st.first, False) or p.count > 0
        for n in p.lines or [p.line]:
            line_hits[n] = line_hits.get(n, False) or p.count > 0
    partly = set()
    for n, hit in sorted(line_hits.items()):
        st = design.statement_at(n)
        if st is None or st.kind != "always":
            continue
        row = rows[st.block]
        row.lines += 1
        row.lines_hit += hit
        if not hit:
            row.lines_never_run.append(n)
            partly.add(st.first)
    for first, hit in process_hits.items():
        row = rows[design.statement_at(first).block]
        row.processes += 1
        row.processes_never_run += not hit
        row.processes_partly_run += hit and first in partly
    out = [r for r in rows.values() if r.lines or r.toggles or r.branches]
    total = BlockCoverage("total")
    for r in out:
        total.add(r)
    return out + [total]


def _ratio(hit, total):
    return f"{hit:,}/{total:,} ({100.0 * hit / total:.1f}%)" if total else "-"


def markdown(rows, title, note=""):
    lines = [f"## {title}", ""] + ([note, ""] if note else [])
    lines += ["| block | lines run | branches taken | toggles (both ways) | processes: never run / partly run / all |",
              "|---|---|---|---|---|"]
    for r in rows:
        name = f"**{r.block}**" if r.block == "total" else r.block
        lines.append(f"| {name} | {_ratio(r.lines_hit, r.lines)} | {_ratio(r.branches_hit, r.branches)} | "
                     f"{_ratio(r.toggles_hit, r.toggles)} | {r.processes_never_run:,} / {r.processes_partly_run:,} / "
                     f"{r.processes:,} |")
    return "\n".join(lines) + "\n"


def summary_line(rows, label):
    t = rows[-1]
    return (f"code coverage {label}: lines {_ratio(t.lines_hit, t.lines)}, branches "
            f"{_ratio(t.branches_hit, t.branches)}, toggles {_ratio(t.toggles_hit, t.toggles)}")


# ---- the report of a folder of runs (what `prism regress --code-coverage` writes) ----

def design_label(info):
    params = " ".join(f"{k}={v}" for k, v in sorted(info.get("parameters", {}).items()))
    return f"{info['module']}" + (f" ({params})" if params else "")


def runs_by_design(folder):
    """{design folder: (design info, [run files])} under a code_coverage(...) folder."""
    out = {}
    if not os.path.isdir(folder):
        return out
    for sub in sorted(os.listdir(folder)):
        path = os.path.join(folder, sub)
        info_path = os.path.join(path, DESIGN_FILE)
        if os.path.isdir(path) and os.path.exists(info_path):
            with open(info_path) as fh:
                info = json.load(fh)
            runs = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".dat") and f != "merged.dat")
            out[path] = (info, runs)
    return out


def fold(folder):
    """Fold the finished runs of every design under `folder` into the design's merged.dat and
    remove them (a long regression keeps one file per design, not one per run); returns
    {design folder: design info}, the info counting the runs merged so far."""
    designs = {}
    for path, (info, runs) in runs_by_design(folder).items():
        if runs:
            merge(runs, os.path.join(path, "merged.dat"))
            for f in runs:
                os.remove(f)
            info["runs"] = info.get("runs", 0) + len(runs)
            with open(os.path.join(path, DESIGN_FILE) + ".tmp", "w") as fh:
                json.dump(info, fh, indent=1)
            os.replace(os.path.join(path, DESIGN_FILE) + ".tmp", os.path.join(path, DESIGN_FILE))
        designs[path] = info
    return designs


def report(folder, out_folder, title="Code coverage (Verilator)"):
    """Fold the runs of every design under `folder`, write code-coverage.md and .json in
    `out_folder`; returns (markdown text, summary lines, runs merged)."""
    designs = {p: i for p, i in fold(folder).items() if os.path.exists(os.path.join(p, "merged.dat"))}
    if not designs:
        raise ToolchainError(f"no code coverage data in {folder}")
    md, summary, data = [f"# {title}", ""], [], []
    for path, info in designs.items():
        merged = os.path.join(path, "merged.dat")
        design = DesignMap(info["verilog"])
        design.phase_order()
        rows = summarise(read_points(merged), design)
        label = design_label(info)
        note = (f"{info.get('runs', 0)} runs merged; design `{os.path.basename(info['verilog'])}` "
                f"(converted Verilog in {os.path.dirname(info['verilog'])}); data {merged}")
        md.append(markdown(rows, label, note))
        summary.append(summary_line(rows, label))
        data.append({"design": label, "runs": info.get("runs", 0), "verilog": info["verilog"], "data": merged,
                     "blocks": [asdict(r) for r in rows]})
    os.makedirs(out_folder, exist_ok=True)
    text = "\n".join(md)
    with open(os.path.join(out_folder, "code-coverage.md"), "w") as fh:
        fh.write(text)
    with open(os.path.join(out_folder, "code-coverage.json"), "w") as fh:
        json.dump(data, fh, indent=1)
    return text, summary, sum(i.get("runs", 0) for i in designs.values())
