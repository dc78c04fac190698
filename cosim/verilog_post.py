"""Post-processing of MyHDL's Verilog output for simulator speed.

MyHDL names every process (`always ... begin: LABEL`) and declares the
process's variables inside that named block.  Icarus runs a named block as a
scope of its own: every activation forks into it and joins back, which costs
about as much again as a small process body (measured: 128 idle clocked
processes, 2.1 us per activation named, 1.2 us unnamed).  The node has
hundreds of clocked processes, so this is most of its idle simulation time.

`hoist_block_locals` moves each named block's declarations to module level
under a unique name (`<label>_<variable>`), renames the variable inside that
block only, and drops the label when nothing refers to it (`disable`).
Verilog block-local variables are static, so the behaviour is unchanged: they
keep their value between activations either way, and MyHDL initialises every
variable at the top of the process.  Waveforms show the hoisted variables as
ordinary module registers.
"""
import re

_HEAD = re.compile(r"^(always\b.*|initial\b.*)\bbegin:\s*(\w+)\s*$")
_DECL = re.compile(r"^\s+(reg|integer)\b([^;]*?)\b(\w+)\s*;\s*$")


def hoist_block_locals(text):
    lines = text.split("\n")
    taken = set(re.findall(r"\b[A-Za-z_]\w*\b", text))
    disabled = set(re.findall(r"\bdisable\s+(\w+)", text))
    out = []
    i = 0
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
        for d in decls:
            kind, middle, var = d.group(1), d.group(2), d.group(3)
            new = f"{label}_{var}"
            while new in taken:
                new += "_"
            taken.add(new)
            out.append(f"{kind}{middle}{new};".replace("  ", " "))
            pattern = re.compile(rf"\b{re.escape(var)}\b")
            body = [pattern.sub(new, line) for line in body]
        head = lines[i] if label in disabled else re.sub(r"\bbegin:\s*\w+\s*$", "begin", lines[i])
        out.append(head)
        out.extend(body)
        out.append("end")
        i = k + 1
    return "\n".join(out)
