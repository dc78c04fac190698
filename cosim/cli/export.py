"""`prism export BLOCK -o DIR`: a top-level block as one Verilog file for other flows, with a
README of its ports and parameters (the export itself: cosim/reports/export.py)."""
from cosim.cli import UsageError

ALL_OPTIONS = ("width", "capacity", "members", "stripes", "paths")


def add_parser(subparsers):
    p = subparsers.add_parser(
        "export", help="write a block's converted Verilog and a README of its ports, for other flows",
        description="Convert a top-level block to one Verilog file (DIR/<top>.v, top module <top>) and "
                    "write DIR/README.md with its parameters, ports and the checks it passed.")
    p.add_argument("block", nargs="?", metavar="BLOCK", help="block to export (see --list); 'node' is prism_node")
    p.add_argument("-o", "--output", metavar="DIR", help="output folder (created if needed)")
    p.add_argument("--list", action="store_true", help="list the exportable blocks and their options")
    p.add_argument("--width", type=int, help="node, reduce_slice: Kulisch width 320|280; axis_register: tdata bits")
    p.add_argument("--capacity", type=int, help="node, reduce_slice: element capacity")
    p.add_argument("--members", type=int, help="collective_fabric: ring members")
    p.add_argument("--stripes", type=int, help="collective_fabric: stripes per member")
    p.add_argument("--paths", type=int, help="collective_fabric: uplinks")
    p.add_argument("-P", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="another keyword parameter of the block (integer or text); see --list")
    p.add_argument("--no-check", action="store_true",
                   help="skip the iverilog -g2005/-g2012 and verilator --lint-only checks")
    return p


def _parse_value(text):
    try:
        return int(text, 0)
    except ValueError:
        return text


def resolve(args):
    """(block name, spec, size options, keyword parameters) from the parsed arguments, or UsageError."""
    from cosim.reports.export import ALIASES, BLOCKS, free_params  # deferred: see run
    name = ALIASES.get(args.block, args.block)
    if name not in BLOCKS:
        raise UsageError(f"unknown block {args.block!r}; choose one of {', '.join(BLOCKS)} (see --list)")
    spec = BLOCKS[name]
    opts = {}
    for o in ALL_OPTIONS:
        v = getattr(args, o)
        if v is None:
            if o in spec.options:
                opts[o] = spec.options[o][1]
            continue
        if o not in spec.options:
            takes = ", ".join(f"--{k}" for k in spec.options) or "no size options"
            raise UsageError(f"--{o} does not apply to {name} (it takes {takes})")
        if v <= 0:
            raise UsageError(f"--{o} must be a positive integer, got {v}")
        opts[o] = v
    params = dict(spec.params(opts)) if spec.params else {}
    free = free_params(spec)
    for item in args.param:
        key, eq, val = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise UsageError(f"-P {item!r}: write NAME=VALUE")
        if key not in free:
            known = ", ".join(free) or "none"
            raise UsageError(f"-P {key}: {name} has no such parameter (settable with -P: {known})")
        params[key] = _parse_value(val)
    return name, spec, opts, params


def run(args):
    # deferred: the signal sets of every exportable block load only when the command runs
    from cosim.reports.export import ExportError, export, list_text
    if args.list:
        print(list_text())
        return 0
    if not args.block:
        raise UsageError("name a block to export (see prism export --list)")
    if not args.output:
        raise UsageError("-o DIR is required")
    name, spec, opts, params = resolve(args)
    try:
        vpath, rpath, checks = export(name, spec, opts, params, args.output, check=not args.no_check)
    except ExportError as e:
        raise UsageError(str(e)) from None
    with open(vpath) as fh:
        n_lines = sum(1 for _ in fh)
    print(f"prism export: {vpath} ({n_lines} lines, top module {spec.top}), {rpath}")
    if checks is None:
        return 0
    failed = [c for c in checks if c["ok"] is False]
    print("checked: " + ", ".join(f"{c['mode']} " + ("ok" if c["ok"] else "not installed" if c["ok"] is None
                                                      else "FAILED") for c in checks))
    for c in failed:
        print(f"prism export: {c['mode']} failed: {c['detail']}")
    return 1 if failed else 0
