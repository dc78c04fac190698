"""bench/plot_perf.py rewrites docs/perf.md from one benchmark run and keeps the sections it
does not write (the test suite's turnaround is written by hand)."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _plot_perf():
    spec = importlib.util.spec_from_file_location("plot_perf", os.path.join(ROOT, "bench", "plot_perf.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hand_written_sections_are_kept_in_their_place():
    keep = _plot_perf().keep_written_sections
    old = ("# Report\n\nintro\n\n## Goals\n\nold goals\n\n## Turnaround\n\nby hand\n\n"
           "## Memory\n\nold memory\n\n## Notes\n\nalso by hand\n")
    new = "# Report\n\nintro\n\n## Goals\n\nnew goals\n\n## Memory\n\nnew memory\n"
    assert keep(old, new) == ("# Report\n\nintro\n\n## Goals\n\nnew goals\n\n## Turnaround\n\nby hand\n\n"
                              "## Memory\n\nnew memory\n\n## Notes\n\nalso by hand\n\n")
    assert keep(new, new) == new                      # nothing written by hand: the report as it is


def test_the_projects_report_keeps_its_turnaround_section():
    keep = _plot_perf().keep_written_sections
    with open(os.path.join(ROOT, "docs", "perf.md")) as fh:
        text = fh.read()
    start, end = text.index("## The test suite's turnaround"), text.index("## Peak resident memory")
    assert keep(text, text[:start] + text[end:]) == text
