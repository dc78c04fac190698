"""Faster MyHDL elaboration: read each process function's source once, not once per instance,
and find a block's or process's caller without building the whole call stack.

MyHDL analyses every `@always` / `@always_comb` instance by re-reading and re-tokenising its
function's source (`myhdl._util._makeAST` through `inspect.getsource`), and its converter does
the same for every call of a MyHDL function in a process.  The node builds 256
FP32 lanes from a handful of process functions and spent about 60 % of its elaboration there.
A function's source does not change within a process, so the dedented text, file and line
offset are kept per code object; every instance still gets its own freshly compiled AST
(MyHDL annotates the tree it is given).  `install()` is idempotent and leaves MyHDL untouched
if its internals are not the ones this was written against.

MyHDL also finds the function that creates each block and process with `inspect.stack()`,
which reads the source context of every frame on the stack: the node's 2,353 calls spent about
a third of its elaboration there.  `instance_call_info` and `block_call_info` walk the same
frames with `sys._getframe` and return the same `_CallInfo`.

Last, MyHDL compiles and walks each instance's tree (`_AttrRefTransformer`, `_SigNameVisitor`)
to find the signals it reads and drives: 3.0 of the node's 3.75 s of elaboration.  What that walk
finds depends only on the function and on the kind (signal, intbv, list of signals, enum,
function, other, or absent) of each name the function reads, so `analysed_instance_init` keeps it per function and
kinds and rebuilds the instance's tables from them, its sets in MyHDL's order (the node then
elaborates in 1.2 s, and its converted Verilog is byte for byte MyHDL's own under the same hash
seed).  A function that reads an attribute MyHDL would resolve into a new name (an interface's
signal) takes MyHDL's own walk.
"""
import __future__
import ast
import inspect
import sys
from types import FunctionType

import myhdl._always as _always
import myhdl._always_comb as _always_comb
import myhdl._always_seq as _always_seq
import myhdl._block as _block
import myhdl._instance as _instance
import myhdl._util as _util
import myhdl.conversion._analyze as _analyze
from myhdl._enum import EnumType
from myhdl._intbv import intbv
from myhdl._Signal import _isListOfSigs, _Signal

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


def _symdict(frame):
    symdict = dict(frame.f_globals)
    symdict.update(frame.f_locals)
    return symdict


def instance_call_info():
    """`myhdl._instance._getCallInfo` without `inspect.stack()`.  Frames: 0 this function, 1 the
    instantiator (`always`, `instance`, ...), 2 the block function, 3 its caller."""
    func = sys._getframe(2)
    caller = func.f_back
    modctxt = caller is not None and isinstance(caller.f_locals.get("self"), _block._Block)
    return _instance._CallInfo(func.f_code.co_name, modctxt, _symdict(func))


def block_call_info():
    """`myhdl._block._getCallInfo` without `inspect.stack()`.  Frames: 0 this function, 1 the
    block instance's constructor, 2 the decorator's call, 3 the function creating the instance
    (or a list comprehension inside it), 4 that function's caller."""
    func = sys._getframe(3)
    caller = func.f_back
    if func.f_code.co_name == "<listcomp>":     # Python 3's extra scope for a comprehension
        func, caller = caller, caller.f_back
    modctxt = caller is not None and isinstance(caller.f_locals.get("self"), _block._Block)
    return _block._CallInfo(func.f_code.co_name, modctxt, _symdict(func))


_ORIGINAL_CALL_INFO = {}


# attributes `myhdl._resolverefs._AttrRefTransformer` never resolves
_RESERVED_ATTRIBUTES = frozenset(('next', 'posedge', 'negedge', 'max', 'min', 'val', 'signed',
                                  'verilog_code', 'vhdl_code'))
_ABSENT, _SIGNAL, _INTBV, _SIGNAL_LIST, _ENUM, _FUNCTION, _OTHER = range(7)
_READS = {}            # code object -> (names the tree holds, (name, attribute) pairs)
_ANALYSES = {}         # (code object, kinds of those names) -> what MyHDL's walk found
_ORIGINAL_INSTANCE_INIT = []


class _AddOrder(set):
    """A set that remembers the order its members were first added in."""

    def __init__(self):
        super().__init__()
        self.order = []

    def add(self, member):
        if member not in self:
            self.order.append(member)
            super().add(member)


def _kind(symdict, name):
    if name not in symdict:
        return _ABSENT
    value = symdict[name]
    if isinstance(value, _Signal):
        return _SIGNAL
    if isinstance(value, intbv):
        return _INTBV
    if _isListOfSigs(value):
        return _SIGNAL_LIST
    if isinstance(value, EnumType):
        return _ENUM
    if isinstance(value, FunctionType):
        return _FUNCTION
    return _OTHER


def _reads(func):
    code = func.__code__
    reads = _READS.get(code)
    if reads is None:
        tree = make_ast(func)
        names = sorted({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)})
        attributes = sorted({(node.value.id, node.attr) for node in ast.walk(tree)
                             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                             and node.attr not in _RESERVED_ATTRIBUTES})
        reads = _READS[code] = (names, attributes)
    return reads


def _resolves_an_attribute(kinds, attributes):
    """Whether MyHDL's `_AttrRefTransformer` would rewrite `name.attribute` into a new name."""
    for name, attribute in attributes:
        kind = kinds[name]
        if kind in (_ABSENT, _ENUM, _FUNCTION):
            continue
        if kind == _SIGNAL and hasattr(_Signal, attribute):
            continue
        return True
    return False


def analysed_instance_init(self, genfunc, callinfo):
    """`myhdl._instance._Instantiator.__init__` with the tree walk kept per function and kinds."""
    self.genfunc = genfunc
    func = self.funcobj                 # the process function (an @always wrapper's own function)
    names, attributes = _reads(func)
    varnames = func.__code__.co_varnames
    symdict = {n: v for n, v in callinfo.symdict.items() if n not in varnames}
    kinds = {n: _kind(symdict, n) for n in names}      # every attribute's base is one of the names
    if _resolves_an_attribute(kinds, attributes):
        _ORIGINAL_INSTANCE_INIT[0](self, genfunc, callinfo)
        return
    self.callinfo = callinfo
    self.callername = callinfo.name
    self.modctxt = callinfo.modctxt
    self.gen = genfunc()
    self.symdict = symdict
    self.objlist = []                   # what MyHDL's attribute walk leaves: no name resolved
    key = (func.__code__, tuple(kinds[n] for n in names))
    found = _ANALYSES.get(key)
    if found is None:
        walk = _instance._SigNameVisitor(symdict)
        walk.inputs, walk.outputs, walk.inouts = _AddOrder(), _AddOrder(), _AddOrder()
        walk.visit(make_ast(func))
        found = _ANALYSES[key] = (walk.inputs.order, walk.outputs.order, walk.inouts.order,
                                  walk.embedded_func, tuple(walk.sigdict), tuple(walk.losdict))
    inputs, outputs, inouts, self.embedded_func, signals, signal_lists = found
    # set() of a list adds its members in order, as the walk did: the set iterates as MyHDL's
    # own would, so the converter writes sensitivity lists in the same order
    self.inputs, self.outputs, self.inouts = set(inputs), set(outputs), set(inouts)
    self.sigdict = {n: symdict[n] for n in signals}
    self.losdict = {n: symdict[n] for n in signal_lists}


def install():
    # the process trees, and the trees of the functions they call (read again by the converter)
    for module in (_instance, _analyze):
        if getattr(module, "_makeAST", None) is getattr(_util, "_makeAST", None) and hasattr(_util, "_dedent"):
            module._makeAST = make_ast
    # only where MyHDL's own function is installed (same function object in every module)
    original = _instance.__dict__.get("_getCallInfo")
    modules = (_instance, _always, _always_comb, _always_seq)
    if original is not None and all(getattr(m, "_getCallInfo", None) in (original, instance_call_info)
                                    for m in modules) and original is not instance_call_info:
        _ORIGINAL_CALL_INFO["instance"] = original
        for m in modules:
            m._getCallInfo = instance_call_info
    original = _block.__dict__.get("_getCallInfo")
    if original is not None and original is not block_call_info and hasattr(_block, "_CallInfo"):
        _ORIGINAL_CALL_INFO["block"] = original
        _block._getCallInfo = block_call_info
    original = _instance._Instantiator.__init__
    if original is not analysed_instance_init and hasattr(_instance, "_SigNameVisitor"):
        _ORIGINAL_INSTANCE_INIT[:] = [original]
        _instance._Instantiator.__init__ = analysed_instance_init


def fresh_block_names():
    """Forget the block names MyHDL handed out earlier in this process.

    MyHDL names each block instance from a per-function call counter and a process-wide set of
    names already used (`axis_register0`, then `axis_register0_0` once that is taken), so the
    converted Verilog of a design depended on what the process had elaborated before it: a
    register slice converted after another design came out as `axis_register0_0_skid_valid`
    instead of `axis_register0_skid_valid`, and everything that names the design's signals (formal
    properties, code-coverage maps, waves) broke.  Called before each top-level elaboration, it
    makes the names a function of the design alone.  Blocks already elaborated keep theirs."""
    import myhdl._simulator as _simulator
    _block._name_set.clear()
    for deco in _simulator._blocks:
        if hasattr(deco, "calls"):
            deco.calls = 0
