"""Architecture contracts (.importlinter): the design never imports the golden models or the
verification code, the golden models never import the design or the verification code, and
the packages form layers without circles (the C kernels and spec, the shared constants, import
nothing of ours).  Inside the packages: hdl/common under hdl/arith under hdl/node; cosim/sim
under the subsystems' verification libraries under the `prism` command (cosim/cli); no circle
between the modules of any package.  An import inside a function counts like one at the top.

And no module of cosim reaches into another's private names (`from m import _x`, `m._x`); the
designs (hdl/) carry no test-only faults (those are edits of the converted Verilog on the
verification side: cosim/sim/faults.py)."""
import ast
import configparser
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("spec", "hdl", "golden", "cosim", "ckernels")
LINT = os.path.join(os.path.dirname(sys.executable), "lint-imports")


def _lint(cwd, env=None):
    return subprocess.run([LINT, "--no-cache"], cwd=cwd, capture_output=True, text=True, env=env)


def test_import_contracts_are_kept():
    out = _lint(ROOT)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "BROKEN" not in out.stdout and "7 kept, 0 broken" in out.stdout


def test_a_forbidden_import_breaks_a_contract(tmp_path):
    """The check can fail: a copy of the contracts over a design package that imports golden."""
    pkg = tmp_path / "hdl"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "leaky.py").write_text("from golden import protocol\n")
    for name in ("golden", "cosim", "ckernels", "spec"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "golden" / "protocol.py").write_text("")
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, ".importlinter"))
    only = configparser.ConfigParser()
    for section in ("importlinter", "importlinter:contract:design-stands-alone"):
        only[section] = config[section]
    with open(tmp_path / ".importlinter", "w") as fh:
        only.write(fh)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    out = _lint(tmp_path, env)
    assert out.returncode != 0
    assert "hdl.leaky -> golden.protocol" in out.stdout


# ---------------------------------------------------------------------------------------------
# Each contract can fail, on an import inside a function
# ---------------------------------------------------------------------------------------------
def _empty_tree(tmp_path):
    """Every module of the five packages, empty, and the contracts without their recorded
    exceptions (`ignore_imports`): what is left for a test to break."""
    for pkg in PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(ROOT, pkg)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            rel = os.path.relpath(folder, ROOT)
            os.makedirs(tmp_path / rel, exist_ok=True)
            for f in files:
                if f.endswith(".py"):
                    (tmp_path / rel / f).write_text("")
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, ".importlinter"))
    for section in config.sections():
        config.remove_option(section, "ignore_imports")
    with open(tmp_path / ".importlinter", "w") as fh:
        config.write(fh)


def _in_a_function(statement):
    return f"def later():\n    {statement}\n"


BROKEN = [
    # (contract, {module: source}, the import the report names)
    ("hdl-layers", {"hdl/common/leaky.py": _in_a_function("from hdl.arith import fp32_add")},
     "hdl.common.leaky -> hdl.arith.fp32_add"),
    ("hdl-layers", {"hdl/arith/leaky.py": _in_a_function("import hdl.node.prism_node")},
     "hdl.arith.leaky -> hdl.node.prism_node"),
    ("cosim-layers", {"cosim/sim/leaky.py": _in_a_function("from cosim.node import scoreboard")},
     "cosim.sim.leaky -> cosim.node.scoreboard"),
    ("cosim-layers", {"cosim/fabric/leaky.py": _in_a_function("from cosim.cli import fabric")},
     "cosim.fabric.leaky -> cosim.cli.fabric"),
    ("no-circles", {"cosim/sim/upper.py": "from cosim.sim import lower\n",
                    "cosim/sim/lower.py": _in_a_function("from cosim.sim import upper")},
     "No cycles are allowed in cosim.sim"),
    ("no-circles", {"cosim/package/package_batch.py": "from cosim.package import package_bench\n",
                    "cosim/package/package_bench.py": _in_a_function("from cosim.package import package_batch")},
     "No cycles are allowed in cosim.package"),
    ("design-stands-alone", {"hdl/node/leaky.py": _in_a_function("from golden.node import node_model")},
     "hdl.node.leaky -> golden.node.node_model"),
]


def test_the_contracts_hold_on_the_emptied_tree(tmp_path):
    """The ground the next test breaks: every module, emptied, keeps every contract."""
    _empty_tree(tmp_path)
    out = _lint(tmp_path, dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert out.returncode == 0 and "0 broken" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]


@pytest.mark.parametrize("contract,modules,names", BROKEN, ids=[f"{b[0]}-{sorted(b[1])[0]}" for b in BROKEN])
def test_an_import_inside_a_function_breaks_its_contract(tmp_path, contract, modules, names):
    """Each contract fails on a deliberate import written inside a function: import-linter reads
    every import of a module, wherever it stands, so hiding one in a function hides nothing."""
    _empty_tree(tmp_path)
    for path, text in modules.items():
        (tmp_path / path).write_text(text)
    out = subprocess.run([LINT, "--no-cache", "--contract", contract], cwd=tmp_path, capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=str(tmp_path)))
    assert out.returncode != 0 and "0 kept, 1 broken" in out.stdout, out.stdout[-3000:] + out.stderr[-2000:]
    assert names in out.stdout.replace("\n", " "), out.stdout[-3000:]


# ---------------------------------------------------------------------------------------------
# Private names stay in their module
# ---------------------------------------------------------------------------------------------
# Known and not yet fixed: each entry is removed with its import (none is left).
KNOWN_PRIVATE_USES = set()


def _modules(root, packages):
    out = {}
    for pkg in packages:
        for folder, dirs, files in os.walk(os.path.join(root, pkg)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for f in files:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(folder, f), root)[:-3].replace(os.sep, ".")
                    out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(folder, f)
    return out


def private_uses(root, packages=("cosim",), within=None):
    """`module: from other import _name` and `module: other._name` (other bound by an import) for
    every module of `packages` that reaches into another module of ours; `within`: the module
    names that count as ours (default: the modules of `packages`)."""
    mods = _modules(root, packages)
    ours = within or set(mods) | {m for m in _modules(root, PACKAGES)}
    found = set()
    for mod, path in mods.items():
        with open(path) as fh:
            tree = ast.parse(fh.read())
        bound = {}                       # name -> module of ours it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = mod.split(".")[: len(mod.split(".")) - node.level + path.endswith("__init__.py")]
                    base = ".".join(parts + ([base] if base else []))
                for a in node.names:
                    full = f"{base}.{a.name}"
                    if full in ours:
                        bound[a.asname or a.name] = full
                    elif base in ours and base != mod and a.name.startswith("_") and not a.name.startswith("__"):
                        found.add(f"{mod}: from {base} import {a.name}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in ours:
                        bound[a.asname or a.name] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, (ast.Name, ast.Attribute))):
                target = bound.get(ast.unparse(node.value))
                if target and target != mod:
                    found.add(f"{mod}: {target}.{node.attr}")
    return found


def test_no_module_of_cosim_uses_another_ones_private_names():
    found = private_uses(ROOT)
    assert found - KNOWN_PRIVATE_USES == set(), "make these names public, or move them: " + \
        "; ".join(sorted(found - KNOWN_PRIVATE_USES))
    assert KNOWN_PRIVATE_USES - found == set(), "fixed: remove from KNOWN_PRIVATE_USES: " + \
        "; ".join(sorted(KNOWN_PRIVATE_USES - found))


def test_the_private_name_check_can_fail(tmp_path):
    """Both forms, at the top and inside a function, are found; a module's own and a name of
    another project's are not."""
    pkg = tmp_path / "cosim"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "low.py").write_text("def _helper():\n    pass\n\n\ndef _other():\n    pass\n")
    (pkg / "sub" / "high.py").write_text(
        "import os\nfrom cosim.sub import low\nfrom . import low as l2\n\n\n"
        "def f():\n    from cosim.sub.low import _helper\n    return _helper, l2._other, os._exit\n\n\n"
        "def g():\n    return low._helper\n")
    assert private_uses(str(tmp_path)) == {"cosim.sub.high: from cosim.sub.low import _helper",
                                           "cosim.sub.high: cosim.sub.low._other",
                                           "cosim.sub.high: cosim.sub.low._helper"}


# ---------------------------------------------------------------------------------------------
# The design holds only the design
# ---------------------------------------------------------------------------------------------
FAULT_FREE_DESIGNS = ("hdl",)
FAULT_WORD = re.compile(r"(?<!DE)FAULT")     # FAULT, FAULT_*, NO_FAULT ...; not the DEFAULT of a name


def fault_mentions(root, folders=FAULT_FREE_DESIGNS):
    """`path:line` of every line of the design sources in `folders` that names a FAULT."""
    found = []
    for folder in folders:
        for base, dirs, files in os.walk(os.path.join(root, folder)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for f in sorted(files):
                path = os.path.join(base, f)
                with open(path, errors="replace") as fh:
                    found += [f"{os.path.relpath(path, root)}:{n}" for n, line in enumerate(fh, 1)
                              if FAULT_WORD.search(line)]
    return found


def test_the_designs_carry_no_test_faults():
    """A deliberate bug is a named edit of the converted Verilog (cosim/fabric/faults.py,
    cosim/package/faults.py, the formal targets' mutations in cosim/formal/targets.py), never a
    parameter of the design: no design source under hdl/ names a FAULT."""
    assert fault_mentions(ROOT) == []


def test_the_fault_check_can_fail(tmp_path):
    (tmp_path / "hdl" / "fabric").mkdir(parents=True)
    (tmp_path / "hdl" / "package").mkdir(parents=True)
    (tmp_path / "hdl" / "node").mkdir(parents=True)
    (tmp_path / "hdl" / "fabric" / "ok.py").write_text("W = 16\n")
    (tmp_path / "hdl" / "node" / "ok.py").write_text("from spec.formats import KULISCH_WIDTH_DEFAULT\n")
    (tmp_path / "hdl" / "node" / "leaky.py").write_text("def b(X=0, FAULT=FAULT_NONE):\n    pass\n")
    (tmp_path / "hdl" / "package" / "leaky.py").write_text("X = 1\n\ndef b(FAULT=0):\n    pass\n")
    assert fault_mentions(str(tmp_path)) == [os.path.join("hdl", "node", "leaky.py") + ":1",
                                             os.path.join("hdl", "package", "leaky.py") + ":3"]
