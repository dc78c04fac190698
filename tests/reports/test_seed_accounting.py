"""docs/seed_accounting.md accounts for every section of seeds 000, 002 and 004:
each section has a row with a status, a left-out section gives its reason, a
built one names a test, and every `file::name` the document names exists."""
import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "seed_accounting.md")

# The sections of each seed, as its text numbers them (seed 004 skips a number 4:
# its Panel 1 stands there, and Figure 11 follows it).
SECTIONS = {
    "000": ["intro"] + [str(i) for i in range(1, 22)],
    "002": [str(i) for i in range(1, 26)],
    "004": ["summary", "1", "2", "3.1", "3.2", "3.3", "4", "Figure 11", "5", "6", "7", "key numbers", "terms"],
}
STATUSES = ("done", "partial", "left out", "accounted", "open, issue 17")
REF = re.compile(r"`((?:tests|golden|cosim|hdl)/[\w/]+\.py)::(\w+)`")


def _text():
    with open(DOC, encoding="utf-8") as fh:
        return fh.read()


def _table_after(text, heading):
    """Rows (lists of cells) of the first table after `heading`."""
    part = text.split(heading, 1)[1]
    rows, started = [], False
    for line in part.splitlines():
        if line.startswith("|"):
            started = True
            if not re.fullmatch(r"\|[-|: ]+\|", line.strip()):        # not the separator row
                rows.append([c.strip() for c in line.strip().strip("|").split(" | ")])
        elif started:
            break
    return rows[1:]                      # without the header


def _names_defined(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and node in tree.body:
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and node in tree.body and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


@pytest.mark.parametrize("seed", sorted(SECTIONS))
def test_every_section_of_the_seed_has_a_row(seed):
    rows = _table_after(_text(), f"## Seed {seed}")
    assert [r[0] for r in rows] == SECTIONS[seed]
    for r in rows:
        assert len(r) == 5, r
        status = r[4]
        assert status.startswith(STATUSES), r
        if status.startswith("left out"):
            assert re.match(r"left out: \S", status), f"§{r[0]}: a left-out section says why"
        if status.startswith(("done", "partial")):
            assert re.search(r"`tests/[\w/]+\.py::test_\w+`", r[3]), f"§{r[0]}: a built section names a test"


def test_issue_17_items_are_accounted_each_with_its_files_and_tests():
    rows = _table_after(_text(), "## Issue 17, item by item")
    assert [r[0] for r in rows] == [str(i) for i in range(1, 8)]
    for r in rows:
        assert len(r) == 6, r
        assert r[-1].startswith(("done", "partial", "open, issue 17")), r
        if not r[-1].startswith("open"):
            assert re.search(r"`tests/[\w/]+\.py::test_\w+`", r[4]), f"item {r[0]}: names its tests"
            if r[1] != "all":
                assert REF.search(r[3]), f"item {r[0]}: names where it is built"


def test_every_named_file_and_name_exists():
    refs = REF.findall(_text())
    assert len(refs) > 100
    defined = {}
    missing = []
    for path, name in sorted(set(refs)):
        if not os.path.isfile(os.path.join(ROOT, path)):
            missing.append(f"{path} (no such file)")
            continue
        if path not in defined:
            defined[path] = _names_defined(path)
        if name not in defined[path]:
            missing.append(f"{path}::{name}")
    assert not missing, missing
