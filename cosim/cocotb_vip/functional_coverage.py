"""Functional coverage of the node in a cocotb test: the kit's cover points, sampled from the
monitors.

The cover points and their bins are those of the kit's regressions (cosim/node/coverage.py:
operations by policy x input x result format, mode and recipients, E, contributors,
how operations ended; DATA verdicts and duplicates; every CONTROL request -> response;
held COMMITs and the end window; resets by phase; unsupported classes; frames lost to
resets; backpressure and gaps inside frames; EXACT, AUTO and edge values in RESULT frames).
They are filled from what happened on the wire, as the scoreboard's model judged it, never
from what the test planned, so coverages of different tests, seeds or simulations add up.
"""
from cosim.node.coverage import POINTS, UNREACHABLE, Coverage, sample

__all__ = ["NodeCoverage", "POINTS", "UNREACHABLE"]


class NodeCoverage(Coverage):
    """Hit counts per (cover point, bin) of cosim.node.coverage.POINTS.  `of(report)` samples a
    checked run; `merge(other)` adds another's; `holes()`, `percent()`, `summary_line()`,
    `markdown()` and `write(folder)` report it."""

    @classmethod
    def of(cls, report):
        """The coverage of one checked run (a PrismReport from PrismScoreboard.check())."""
        return cls(sample(None, report.run, report).hits)
