"""Faults: deliberate bugs made on the verification side, as named edits of a design's
converted Verilog.

The design holds only the design.  A broken variant, made to show that a check catches what it
must (a property fires, an assertion fails, a proof finds a counterexample), is a `Fault`: its
name, the block whose logic it breaks, the bug in words, and the edits that turn the Verilog
MyHDL converted from the correct design into the broken one.  Each subsystem keeps its
catalogue beside its harness (cosim/fabric/faults.py, cosim/package/faults.py).

    F5 = Fault("F5", "stall_accountant", "divides by 1 024",
               Edit("t1 = (t1 / 1000);", "t1 = (t1 / 1024);", within="stall_accountant0_price"))
    bench = VectorBench(with_fault(collective_fabric, F5), **signals, **params)

`with_fault(block, fault)` is a block that cosim.sim.convert.build converts as the correct block
and then edits, once, where MyHDL's Verilog is written (before the rewrite passes): every back
end that builds through it runs the broken design (the Icarus co-simulation, batched Icarus and
Verilator, the formal tools).  MyHDL cannot run it: the fault exists only in the Verilog.

An edit is (text to find, replacement, matches expected: one by default), the text exact or a
regular expression, in the whole text or `within` one process (the block MyHDL labels
`<instance>_<process>`, its sensitivity list included).  The count is part of the edit on
purpose: if the converter's output or the design changes so that an anchor no longer matches
(or matches more than the one statement it was written for), applying the fault raises
FaultAnchorError; it never builds a silent copy of the correct design that "fails to fail".
Edits that depend on the design's parameters (a literal the converter computed from them) are
given as a function of the block's bound arguments ({name: value}, signals included).  The
formal targets' mutations of a converted harness are edits too (cosim/formal/targets.py).
"""
import re
from dataclasses import dataclass
from typing import Callable, Tuple, Union


class FaultAnchorError(ValueError):
    """An edit did not match the converted Verilog the number of times it expects."""


class FaultNotInMyHDL(TypeError):
    """A faulted block was asked to elaborate in MyHDL, where the fault does not exist."""


def process_span(text, label):
    """(start, end) of the MyHDL process whose block is labelled `label` (`... begin: <label>`,
    from the start of that line, its sensitivity list included, to its closing `end` at the
    first column); FaultAnchorError unless exactly one block has that label."""
    marker = f"begin: {label}\n"
    n = text.count(marker)
    if n != 1:
        raise FaultAnchorError(f"process {label!r} found {n} times, expected 1")
    at = text.index(marker)
    end = text.find("\nend\n", at)
    if end < 0:
        raise FaultAnchorError(f"process {label!r} has no closing 'end'")
    return text.rfind("\n", 0, at) + 1, end + len("\nend\n")


@dataclass(frozen=True)
class Edit:
    find: str
    replace: str
    count: int = 1           # matches expected (in the whole text, or in the process `within`)
    regex: bool = False      # find is a regular expression (re.MULTILINE); replace may use \\1 ...
    within: str = ""         # confine the edit to one process: the label of its named block

    def apply(self, text):
        if self.within:
            start, end = process_span(text, self.within)
            return text[:start] + self._apply(text[start:end]) + text[end:]
        return self._apply(text)

    def _apply(self, text):
        where = f" in process {self.within}" if self.within else ""
        if self.regex:
            pattern = re.compile(self.find, re.MULTILINE)
            n = len(pattern.findall(text))
            if n != self.count:
                raise FaultAnchorError(f"edit /{self.find}/ matches {n} times{where}, expected {self.count}")
            return pattern.sub(self.replace, text)
        n = text.count(self.find)
        if n != self.count:
            raise FaultAnchorError(f"edit {self.find!r} matches {n} times{where}, expected {self.count}")
        return text.replace(self.find, self.replace)


def apply_edits(text, edits, what=""):
    """`text` with every edit applied in order (each checked against its expected count)."""
    for e in edits:
        try:
            text = e.apply(text)
        except FaultAnchorError as err:
            raise FaultAnchorError(f"{what + ': ' if what else ''}{err}") from None
    return text


Edits = Union[Tuple[Edit, ...], Callable[[dict], Tuple[Edit, ...]]]


@dataclass(frozen=True)
class Fault:
    """A named deliberate bug: the block whose logic it breaks, what the broken design does, and
    the edits of the converted Verilog that make it (a tuple, or a function of the block's bound
    arguments that returns one)."""
    name: str
    block: str
    bug: str
    edits: Edits

    def __post_init__(self):
        if not re.fullmatch(r"\w+", self.name):       # it names the faulted design's build folder
            raise ValueError(f"fault name {self.name!r}: letters, digits and underscores only")

    def edits_for(self, arguments=None):
        """The edits for a block bound to `arguments` ({name: value})."""
        edits = self.edits(dict(arguments or {})) if callable(self.edits) else self.edits
        return (edits,) if isinstance(edits, Edit) else tuple(edits)

    def apply(self, text, arguments=None):
        """The converted Verilog `text` with this fault (FaultAnchorError if an anchor is not
        found exactly as often as its edit expects)."""
        return apply_edits(text, self.edits_for(arguments), f"fault {self.name} ({self.block})")


class FaultedBlock:
    """A MyHDL block with a fault: built by cosim.sim.convert.build as the block's Verilog with the
    fault's edits.  It has the block's name and signature (`func`), so every builder keys and binds
    it like the block; elaborating it in MyHDL raises FaultNotInMyHDL."""

    def __init__(self, block_func, fault):
        if isinstance(block_func, FaultedBlock):
            raise ValueError(f"{block_func.func.__name__} already has fault {block_func.fault.name}")
        self.block = block_func
        self.fault = fault
        self.func = getattr(block_func, "func", block_func)
        self.__name__ = self.func.__name__

    def __call__(self, *args, **kwargs):
        raise FaultNotInMyHDL(f"{self.__name__} with fault {self.fault.name} exists only as converted Verilog: "
                              "run it on a Verilog back end (Icarus co-simulation, batched Icarus or Verilator)")

    def __repr__(self):
        return f"with_fault({self.__name__}, {self.fault.name})"


def with_fault(block_func, fault):
    """`block_func` broken by `fault` (a Fault), or `block_func` itself when fault is None."""
    return block_func if fault is None else FaultedBlock(block_func, fault)


def fault_of(block_func):
    """The Fault of a faulted block, None for any other block."""
    return block_func.fault if isinstance(block_func, FaultedBlock) else None


def correct_block(block_func):
    """The block without its fault (itself if it has none)."""
    return block_func.block if isinstance(block_func, FaultedBlock) else block_func
