"""The `prism` command.  Each sub-command lives in its own module of this package
and defines `add_parser(subparsers)` and `run(args) -> int`."""
import argparse
import importlib
import os
import sys

from cosim.sim.vpi import ToolchainError

SUBCOMMANDS = ("demo", "reduce", "tree", "regress", "replay", "mutate", "fabric", "package", "topo", "export",
               "formal", "synth")


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


def int_arg(name, text, lo, hi=None):
    """`text` as an integer in lo..hi (hi None: no upper bound), or a UsageError naming the
    option `name` as the user typed it ("--flows").  Underscores group digits (1_000_000)."""
    try:
        v = int(str(text).replace("_", ""))
    except (TypeError, ValueError):
        raise UsageError(f"{name} must be an integer, got {text!r}") from None
    if v < lo or (hi is not None and v > hi):
        raise UsageError(f"{name} must be in {lo}..{hi if hi is not None else 'any'}, got {v}")
    return v


def add_int_option(parser, name, default, lo, hi=None, help="", metavar="N", required=False):
    """Declare an integer argument with its range: main() turns it into an int with int_arg
    before the sub-command runs (bad input: one-line UsageError, exit status 2).  `name` is an
    option ("--flows") or a positional argument ("seed"); default None: left None when absent."""
    hint = f"{lo}..{hi if hi is not None else 'any'}" + ("" if default is None or required else f"; default {default}")
    help = f"{help} ({hint})" if help else f"({hint})"
    if name.startswith("-"):
        action = parser.add_argument(name, default=default, metavar=metavar, help=help, required=required)
    else:
        action = parser.add_argument(name, metavar=metavar, help=help)
    ranges = dict(parser.get_default("int_ranges") or {})
    ranges[action.dest] = (name if name.startswith("-") else name.upper(), lo, hi)
    parser.set_defaults(int_ranges=ranges)


def convert_int_options(args):
    """Every add_int_option argument of the parsed `args` as an int in its range, or UsageError."""
    for dest, (name, lo, hi) in (getattr(args, "int_ranges", None) or {}).items():
        if getattr(args, dest) is not None:
            setattr(args, dest, int_arg(name, getattr(args, dest), lo, hi))


def add_output_option(parser, default, what="output folder"):
    """The sub-commands' `-o/--output DIR` option (a folder, created by output_dir)."""
    parser.add_argument("-o", "--output", default=default, metavar="DIR",
                        help=f"{what} (created if missing; default {default})")


def output_dir(path):
    """Create the output folder `path` if missing and return it, or a UsageError: a file in the
    way, a folder that cannot be created or written."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"cannot create output folder {path!r}: a file of that name exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create output folder {path!r}: {e.strerror or e}") from None
    if not os.access(path, os.W_OK):
        raise UsageError(f"output folder {path!r} is not writable")
    return path


class _OneLineParser(argparse.ArgumentParser):
    """Argument errors as one line (`prog: error: ...`), exit status 2, no usage dump."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _available():
    mods = {}
    for name in SUBCOMMANDS:
        try:
            mods[name] = importlib.import_module(f"cosim.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"cosim.cli.{name}":
                raise
    return mods


def main(argv=None):
    mods = _available()
    parser = _OneLineParser(prog="prism", description="PRISM collective-node verification kit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for mod in mods.values():
        mod.add_parser(sub)
    args = parser.parse_args(argv)
    from cosim.sim.convert import collect_less_often
    collect_less_often()
    try:
        convert_int_options(args)
        return mods[args.command].run(args) or 0
    except (UsageError, ToolchainError) as e:
        # bad input, or a simulator or tool missing: one line saying what to do, exit status 2
        print(f"prism {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("prism: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
