"""Faster MyHDL elaboration: read each process function's source once, not once per instance.

MyHDL analyses every `@always` / `@always_comb` instance by re-reading and re-tokenising its
function's source (`myhdl._util._makeAST` through `inspect.getsource`).  The node builds 256
FP32 lanes from a handful of process functions and spent about 60 % of its elaboration there.
A function's source does not change within a process, so the dedented text, file and line
offset are kept per code object; every instance still gets its own freshly compiled AST
(MyHDL annotates the tree it is given).  `install()` is idempotent and leaves MyHDL untouched
if its internals are not the ones this was written against.
"""
import __future__
import ast
import inspect

import myhdl._instance as _instance
import myhdl._util as _util

_SOURCES = {}          # code object -> (dedented source, source file, line offset)
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag


def make_ast(func):
    """`myhdl._util._makeAST` with the source read once per code object."""
    code = func.__code__
    entry = _SOURCES.get(code)
    if entry is None:
        entry = (_util._dedent(inspect.getsource(func)), inspect.getsourcefile(func),
                 inspect.getsourcelines(func)[1] - 1)
        _SOURCES[code] = entry
    source, source_file, line_offset = entry
    tree = compile(source, filename="<unknown>", mode="exec",
                   flags=ast.PyCF_ONLY_AST | (code.co_flags & _FUTURE_FLAGS), dont_inherit=True)
    tree.sourcefile = source_file
    tree.lineoffset = line_offset
    return tree


def install():
    if getattr(_instance, "_makeAST", None) is getattr(_util, "_makeAST", None) and hasattr(_util, "_dedent"):
        _instance._makeAST = make_ast
