"""Post-processing of MyHDL's Verilog output for simulator speed.

MyHDL names every process (`always ... begin: LABEL`) and declares the
process's variables inside that named block.  Icarus runs a named block as a
scope of its own: every activation forks into it and joins back, which costs
about as much again as a small process body (docs/perf.md, "Tool-chain
settings, measured").  The node has hundreds of clocked processes, so this is
most of its idle simulation time.

`hoist_block_locals` moves each named block's declarations to module level
under a unique name (`<label>_<variable>`), renames the variable inside that
block only, and drops the label when nothing refers to it (`disable`).
Verilog block-local variables are static, so the behaviour is unchanged: they
keep their value between activations either way, and MyHDL initialises every
variable at the top of the process.  Waveforms show the hoisted variables as
ordinary module registers.

`hoist_block_locals(text, share=True)` (the Icarus build only) goes further:
the processes share their variables, one module register per type and
position (the first 8-bit variable of every process is one register, ...).
Icarus's code generator looks up each referenced signal by a linear scan of
its scope's names in sorted order, so one flat module with a register per
process variable compiles in time quadratic in their number; sharing cuts
the node's names by almost half, and naming the shared ones to sort first
(`Vshared_...`: capitals sort before MyHDL's lower-case names) cuts the
compile further (figures: docs/perf.md).  Sharing is
safe because a MyHDL variable lives for one activation of its process: the
converted process assigns it before reading it, every activation, and an
`always` body without a delay or an event control runs to its end before
any other process runs.  A process with a timing control keeps its own
names.  Neither Verilator nor synthesis gets shared variables (both would
see one register driven by many processes); MyHDL's own waveforms show no
process variables either, and Icarus's show the shared registers.
"""
import collections
import re

_HEAD = re.compile(r"^(always\b.*|initial\b.*)\bbegin:\s*(\w+)\s*$")
_DECL = re.compile(r"^\s+(reg|integer)\b([^;]*?)\b(\w+)\s*;\s*$")


_TIMING_CONTROL = re.compile(r"[@#]|\bwait\b")


def _type_key(kind, middle):
    """`reg [8-1:0]` -> `r8`, `reg signed [16-1:0]` -> `s16`, `integer` -> `i`, `reg` -> `r1`,
    `reg [1-1:0]` -> `r1v`."""
    width = re.search(r"\[(\d+)-1:0\]", middle)
    if kind == "integer":
        return "i"
    if width is None and middle.strip():
        return None                                   # a layout MyHDL does not write: keep own names
    # a one-bit vector (`reg [1-1:0]`, which a bit select may index) never shares a scalar's register
    return ("s" if "signed" in middle else "r") + (width.group(1) + ("v" if width.group(1) == "1" else "")
                                                   if width else "1")


def hoist_block_locals(text, share=False):
    lines = text.split("\n")
    taken = set(re.findall(r"\b[A-Za-z_]\w*\b", text))
    disabled = set(re.findall(r"\bdisable\s+(\w+)", text))
    shared = {}                                        # type key -> its shared registers, in order
    out = []
    i = 0

    def fresh(name):
        while name in taken:
            name += "_"
        taken.add(name)
        return name

    while i < len(lines):
        m = _HEAD.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        label = m.group(2)
        j = i + 1
        decls = []
        while j < len(lines):
            d = _DECL.match(lines[j])
            if not d:
                break
            decls.append(d)
            j += 1
        k = j
        while k < len(lines) and lines[k] != "end":     # MyHDL closes a process at column 0
            k += 1
        if k == len(lines):                               # not MyHDL's layout: leave it alone
            out.append(lines[i])
            i += 1
            continue
        body = lines[j:k]
        sharing = share and m.group(1).startswith("always") and not any(_TIMING_CONTROL.search(b) for b in body)
        renames = {}
        per_type = collections.Counter()
        for d in decls:
            kind, middle, var = d.group(1), d.group(2), d.group(3)
            key = _type_key(kind, middle) if sharing else None
            if key is None:
                new = fresh(f"{label}_{var}")
                out.append(f"{kind}{middle}{new};".replace("  ", " "))
            else:
                regs = shared.setdefault(key, [])
                if per_type[key] == len(regs):
                    regs.append(fresh(f"Vshared_{key}_{len(regs)}"))
                    out.append(f"{kind}{middle}{regs[-1]};".replace("  ", " "))
                new = regs[per_type[key]]
                per_type[key] += 1
            renames[var] = new
        if renames:
            # one pass over the body for all its variables; not inside a sized literal:
            # `b1` must not rewrite 1'b1, nor `hff` 8'hff
            pattern = re.compile(r"(?<![\w$'])(" + "|".join(map(re.escape, renames)) + r")(?![\w$])")
            body = [pattern.sub(lambda v: renames[v.group(1)], line) for line in body]
        head = lines[i] if label in disabled else re.sub(r"\bbegin:\s*\w+\s*$", "begin", lines[i])
        out.append(head)
        out.extend(body)
        out.append("end")
        i = k + 1
    return "\n".join(out)


# ---- part-select assigns of one wire -> one concatenation ----
#
# MyHDL converts a ConcatSignal (and a signal built from slices) into one
# continuous assign per part: `assign w[16-1:0] = a;`, `assign w[32-1:16] = 'b0;` ...
# Icarus resolves a net with several part drivers bit by bit through its
# strength-aware concatenation (`set_bit`, `reduce4`, `concat8`: over half the
# node's simulation time); one `assign w = {..., a};` is a plain vector copy.

_WIDTH_DECL = re.compile(r"^\s*(input|output|wire|reg)\s+(?:signed\s+)?(?:\[(\d+)(-1)?:0\]\s+)?(\w+)\s*(?:=[^;]*)?;\s*$")
_PART_ASSIGN = re.compile(r"^assign (\w+)\[(\d+)(?:-1:(\d+))?\] = (.+);\s*$")
_FULL_ASSIGN = re.compile(r"^assign (\w+) = ")


def _rhs_width(rhs, widths):
    """Width of a part's right-hand side, or None when it cannot be told for sure."""
    m = re.fullmatch(r"(\w+)\[(\d+)-1:(\d+)\]", rhs)
    if m:
        return int(m.group(2)) - int(m.group(3))
    m = re.fullmatch(r"(\w+)\[(\d+):(\d+)\]", rhs)
    if m:
        return int(m.group(2)) - int(m.group(3)) + 1
    if re.fullmatch(r"\w+\[\d+\]", rhs):
        return 1
    m = re.fullmatch(r"(\d+)'[bdhoBDHO][0-9a-fA-F_]+", rhs)
    if m:
        return int(m.group(1))
    if re.fullmatch(r"[A-Za-z_]\w*", rhs):
        return widths.get(rhs)
    return None


def coalesce_part_assigns(text):
    """Replace the part assigns of a wire by one concatenation when they cover the wire
    exactly once, every part's width is known and equals its slot, and nothing else drives
    the wire; anything else is left as it is.  Unsized binary constants become sized."""
    lines = text.split("\n")
    widths, regs = {}, set()
    for line in lines:
        m = _WIDTH_DECL.match(line)
        if m:
            kind, msb, minus_one, name = m.groups()
            widths[name] = 1 if msb is None else int(msb) + (0 if minus_one else 1)
            if kind == "reg":
                regs.add(name)
    full = {m.group(1) for m in map(_FULL_ASSIGN.match, lines) if m}
    parts = {}                                    # wire -> [(line index, lo, width, rhs)]
    for i, line in enumerate(lines):
        m = _PART_ASSIGN.match(line)
        if not m:
            continue
        name, a, b, rhs = m.group(1), int(m.group(2)), m.group(3), m.group(4).strip()
        lo, width = (int(b), a - int(b)) if b is not None else (a, 1)
        lit = re.fullmatch(r"'b([01]+)", rhs)
        if lit:
            rhs = f"{width}'b{lit.group(1)}"
        parts.setdefault(name, []).append((i, lo, width, rhs))
    drop, replace = set(), {}
    for name, ps in parts.items():
        if name in regs or name in full or name not in widths:
            continue
        ps_sorted = sorted(ps, key=lambda p: p[1])
        at, ok = 0, True
        for _, lo, width, rhs in ps_sorted:
            if lo != at or width <= 0 or _rhs_width(rhs, widths) != width:
                ok = False
                break
            at += width
        if not ok or at != widths[name]:
            continue
        first = min(p[0] for p in ps)
        replace[first] = f"assign {name} = {{{', '.join(p[3] for p in reversed(ps_sorted))}}};"
        drop.update(p[0] for p in ps if p[0] != first)
    return "\n".join(replace.get(i, line) for i, line in enumerate(lines) if i not in drop)


# ---- Icarus only: a wide concatenation as a process ----
#
# Even a single `assign w = {a, b, ...};` costs Icarus one `set_bit` per bit of
# a part whenever the part changes (its concatenation functor works bit by
# bit); a process computing the same concatenation copies whole words.  The
# process evaluates once at time 0 and then after every change of a source, so
# it holds the same value as the continuous assign at every time step:
#     always begin w = {a, b}; @(a or b); end
# (unlike `always @*`, which would leave w unknown until a source first
# changes).  Verilator compiles continuous assigns well and would turn such a
# process into a coroutine, so this form is produced for Icarus only.

_CONCAT_ASSIGN = re.compile(r"^assign (\w+) = \{(.+)\};\s*$")
_CONCAT_PART = re.compile(r"([A-Za-z_]\w*)(\[\d+(?:-1)?(?::\d+)?\])?|\d+'[bdhoBDHO][0-9a-fA-F_]+")


def procedural_concats(text):
    lines = text.split("\n")
    converted = {}
    for i, line in enumerate(lines):
        m = _CONCAT_ASSIGN.match(line)
        if not m:
            continue
        parts = [p.strip() for p in m.group(2).split(",")]
        if len(parts) < 2 or not all(_CONCAT_PART.fullmatch(p) for p in parts):
            continue
        sources = []
        for p in parts:
            name = re.match(r"[A-Za-z_]\w*", p)
            if name and name.group(0) not in sources:
                sources.append(name.group(0))
        if not sources:                                  # constant: nothing would ever trigger it
            continue
        converted[m.group(1)] = i
        lines[i] = f"always begin {m.group(1)} = {{{m.group(2)}}}; @({' or '.join(sources)}); end"
    if converted:
        decl = re.compile(rf"^wire\b(.*?)\b({'|'.join(map(re.escape, converted))})\s*;\s*$")
        for i, line in enumerate(lines):
            m = decl.match(line)
            if m:
                lines[i] = f"reg{m.group(1)}{m.group(2)};"
    return "\n".join(lines)


# ---- Icarus only: one process per clock edge ----
#
# MyHDL writes a clocked process per `@always(clk.posedge)` (the node has 1,702
# of them), and every edge wakes each one as a thread of its own.  A single
# process that runs their bodies one after another does the same work: the
# bodies assign signals only through non-blocking assignments, so none sees
# another's writes before the edge's update phase whatever their order, and
# their variables are assigned before they are read in each activation (see
# hoist_block_locals).  A body keeps its label where a `disable` names it, as a
# block of its own inside the merged process.  Bodies with a timing control, and
# groups of one, stay as they are.  Measured on the node (batched Icarus, 8 seeds):
# 341 -> 390 cycles/s.  Verilator and synthesis keep one process per block.

_CLOCKED_HEAD = re.compile(r"^always @\(((?:posedge|negedge) \w+(?:(?:,| or) (?:posedge|negedge) \w+)*)\) "
                           r"begin(?::\s*(\w+))?\s*$")


def merge_clocked_processes(text):
    """One `always` per distinct edge list; returns (text, processes merged)."""
    lines = text.split("\n")
    groups = {}                                 # edge list -> [(label, body lines)]
    out = []
    i = 0
    while i < len(lines):
        m = _CLOCKED_HEAD.match(lines[i])
        k = i + 1
        while m and k < len(lines) and lines[k] != "end":     # MyHDL closes a process at column 0
            k += 1
        if not m or k == len(lines) or any(_TIMING_CONTROL.search(b) for b in lines[i + 1:k]):
            out.append(lines[i])
            i += 1
            continue
        groups.setdefault(m.group(1), []).append((m.group(2), lines[i + 1:k]))
        i = k + 1
    merged, count = [], 0
    for edges, bodies in groups.items():
        if len(bodies) == 1:
            label, body = bodies[0]
            merged += [f"always @({edges}) begin" + (f": {label}" if label else "")] + body + ["end", ""]
            continue
        count += len(bodies)
        merged.append(f"always @({edges}) begin")
        for label, body in bodies:
            merged.append("    begin" + (f": {label}" if label else ""))
            merged += ["    " + line if line else line for line in body]
            merged.append("    end")
        merged += ["end", ""]
    if not merged:
        return text, 0
    end = max(j for j, line in enumerate(out) if line.startswith("endmodule"))
    return "\n".join(out[:end] + merged + out[end:]), count


# ---- every combinational process runs once at power-on ----
#
# MyHDL turns `@always_comb` into `always @(a, b) begin ... end` and gives its
# targets a declaration initialiser (`reg x = 0`).  Such a process first runs
# when one of its inputs changes.  Under Verilog-2005 rules Icarus treats the
# initialisers of its inputs as time-0 events, so it runs at time 0; under
# SystemVerilog rules (`iverilog -g2012`, the mode cocotb uses, and commercial
# simulators in SV mode) an initialiser is no event, and a process whose inputs
# keep their initial values never runs: its outputs keep their declared 0
# whatever the logic says.  As in Yosys's Verilog back end and sv2v, each
# combinational process gets one more input, a register that changes once at
# time 0 through a non-blocking assignment (after every process has reached its
# event control), so every one of them runs at power-on in every simulator and
# language mode.  Synthesis ignores it (the register is constant, read by no logic).

TIME0 = "prism_time0"
_COMB_HEAD = re.compile(r"^(\s*always\s*@\()([^)]*)(\)\s*begin\b.*)$")


def wake_at_time0(text):
    """Add the time-0 trigger to every combinational process (an `always @(...)` without an
    edge).  Returns (text, number of processes changed)."""
    lines = text.split("\n")
    changed = 0
    for i, line in enumerate(lines):
        m = _COMB_HEAD.match(line)
        if not m or re.search(r"\b(posedge|negedge)\b", m.group(2)) or m.group(2).strip() in ("", "*"):
            continue
        lines[i] = f"{m.group(1)}{m.group(2)}, {TIME0}{m.group(3)}"
        changed += 1
    if not changed:
        return text, 0
    for i, line in enumerate(lines):
        if line.strip() == ");":                  # end of the module's port list
            lines[i + 1:i + 1] = ["", f"reg {TIME0};  // changes once at time 0: wakes the combinational processes",
                                  "// verilator lint_off INITIALDLY",
                                  f"initial {TIME0} <= 1'b0;  // non-blocking: every process waits at its event control by then",
                                  "// verilator lint_on INITIALDLY"]
            break
    else:
        raise ValueError("wake_at_time0: no module port list found")
    return "\n".join(lines), changed


# --- output registers start at their initial value --------------------------------------------
# MyHDL writes the initial value of every internal register into its declaration, but not of the
# top module's outputs: a registered output (a counter read-out, a transmit register) is x until
# its first clock edge.  A real device powers up with its registers at their initial values (the
# FPGA bitstream's init), so the converted module does the same for its output registers.

_OUTPUT_DECL = re.compile(r"^output\s+(?:signed\s+)?(?:\[[^\]]+\]\s+)?(\w+)\s*;\s*$")
_REG_DECL = re.compile(r"^(reg\s+(?:signed\s+)?(?:\[[^\]]+\]\s+)?(\w+))\s*;\s*$")


def initialise_output_regs(text, initial):
    """Give each top-level `output ... reg` without an initialiser its initial value.
    `initial` maps port names to integers (the ports' initial values); ports not in it start at
    0.  Returns (text, number of declarations changed).  Only the first module (the top, as
    MyHDL writes it) is touched."""
    lines = text.split("\n")
    outputs, changed = set(), 0
    for i, line in enumerate(lines):
        if line.startswith("endmodule"):
            break
        m = _OUTPUT_DECL.match(line)
        if m:
            outputs.add(m.group(1))
            continue
        m = _REG_DECL.match(line)
        if m and m.group(2) in outputs:
            value = int(initial.get(m.group(2), 0))
            if value < 0:
                raise ValueError(f"initialise_output_regs: {m.group(2)} has a negative initial value")
            lines[i] = f"{m.group(1)} = {value};"
            changed += 1
    return "\n".join(lines), changed


# MyHDL initialises a memory (a list of signals) with a loop in an initial block:
#     integer INITIALIZE_<MEM>_i;
#     initial begin
#         for(INITIALIZE_<MEM>_i=0; ...; ...) begin
#             <mem>[INITIALIZE_<MEM>_i] = 0;
#         end
#     end
_ZERO_MEMORY_INIT = re.compile(
    r"^integer (INITIALIZE_\w+_i);\ninitial begin\n\s*for\(\1=0; \1<\d+; \1=\1\+1\) begin\n"
    r"\s*\w+\[\1\] = 0;\n\s*end\nend\n", re.M)


def drop_zero_memory_init(text):
    """(text, n): the Verilog without MyHDL's loops that set a memory to 0 at time 0, each
    replaced by as many empty lines (line numbers, which coverage points name, stay).

    For Verilator builds made with `--x-initial fast` only: its constructor already sets
    every variable, memories included, to 0 (VL_ZERO_RESET), and it unrolls each loop into
    one assignment per word and row, which made the node's one time-0 function 365,000 lines
    of C++ (more than two minutes of compiling on its own).  Loops that set other values stay."""
    return _ZERO_MEMORY_INIT.subn(lambda m: "\n" * m.group(0).count("\n"), text)


# --- a function's return ------------------------------------------------------------------------
# MyHDL writes a function's `return x` as `NAME = x; disable LABEL;` inside `begin: LABEL`.  As the
# last statement of the function the disable does nothing, and Yosys (0.23) cannot parse `disable`:
# a design that calls a MyHDL function (the arithmetic of hdl/arith) would not synthesise.

_FUNC_DISABLE = re.compile(r"^\s*disable\s+(\w+)\s*;\s*$")
_FUNC_LABEL = re.compile(r"^begin:\s*(\w+)\s*$")


def function_returns(text):
    """Drop each `disable LABEL;` that is the last statement of a function (followed by `end` and
    `endfunction`), and the label when nothing else names it.  Returns (text, disables dropped)."""
    lines = text.split("\n")
    dropped = set()
    out = []
    for i, line in enumerate(lines):
        m = _FUNC_DISABLE.match(line)
        if m and lines[i + 1:i + 3] == ["end", "endfunction"]:
            dropped.add(m.group(1))
            continue
        out.append(line)
    still = set(re.findall(r"\bdisable\s+(\w+)", "\n".join(out)))
    out = ["begin" if (m := _FUNC_LABEL.match(line)) and m.group(1) in dropped - still else line for line in out]
    return "\n".join(out), len(dropped)
