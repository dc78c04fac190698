"""Mutations: broken variants made on the verification side, as textual edits of a harness's
converted Verilog.

A design's own test-only FAULT parameters are one way to break it; they live in the design and
go away with it.  A mutation needs nothing from the design: it edits the Verilog that the tool
chain converted from the harness (the design and its checks, one module) before the formal
tools read it, and the Icarus replay of its counterexample runs the same edited text.

An edit is (text to find, replacement, number of matches expected).  The count is part of the
edit on purpose: if the converter's output changes so that an edit no longer matches (or
matches more than the one statement it was written for), the variant is an error, never a
silent copy of the correct design that "fails to fail".

    Edit("axis_register0_running <= 1;", "axis_register0_running <= 0;")    # exact text, once
    Edit(r"m_axis_1_tdata <= (\\w+);", r"m_axis_1_tdata <= (\\1 ^ 1);", regex=True)
"""
import re
from dataclasses import dataclass


class MutationError(ValueError):
    """An edit did not match the converted Verilog the expected number of times."""


@dataclass(frozen=True)
class Edit:
    find: str
    replace: str
    count: int = 1           # matches expected in the whole text
    regex: bool = False      # find is a regular expression (re.MULTILINE); replace may use \\1 ...

    def apply(self, text):
        if self.regex:
            pattern = re.compile(self.find, re.MULTILINE)
            n = len(pattern.findall(text))
            if n != self.count:
                raise MutationError(f"edit /{self.find}/ matches {n} times, expected {self.count}")
            return pattern.sub(self.replace, text)
        n = text.count(self.find)
        if n != self.count:
            raise MutationError(f"edit {self.find!r} matches {n} times, expected {self.count}")
        return text.replace(self.find, self.replace)


def apply_edits(text, edits, what=""):
    """`text` with every edit applied in order (each checked against its expected count)."""
    for e in edits:
        try:
            text = e.apply(text)
        except MutationError as err:
            raise MutationError(f"{what + ': ' if what else ''}{err}") from None
    return text
