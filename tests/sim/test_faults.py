"""Test-only faults as edits of the converted Verilog (cosim/sim/faults.py).

* An edit changes the text in exactly the places it expects (one by default); an anchor that
  is missing or found more often raises FaultAnchorError naming it; `within` confines an edit to
  one MyHDL process.
* A faulted block is built as the correct block's conversion with the fault's edits: its own
  build folder, the same MyHDL output elsewhere, a different behaviour in Icarus; MyHDL refuses
  to run it.
* Every catalogued fault of the fabric and the package still applies to today's converted
  designs (each at the configurations its tests and formal targets build), each edit changing
  its own place(s) only: an anchor that rots fails here, fast.  Under `-m slow` each faulted
  design also compiles with `iverilog -g2005`, `-g2012` and Verilator.
"""
import difflib
import os
import re

import pytest
from myhdl import ResetSignal, Signal, intbv

from cosim.fabric.fabric_properties import FabricConfig, fabric_params, fabric_signals
from cosim.fabric.faults import FABRIC_FAULTS
from cosim.formal.targets import get_target
from cosim.package.checked_work_distributor import checked_work_distributor
from cosim.package.faults import PACKAGE_FAULTS
from cosim.package.package_setup import Geometry, PackageSetup, checked_distributor_signals, package_signals
from cosim.sim import toolchain
from cosim.sim.faults import (Edit, Fault, FaultAnchorError, FaultNotInMyHDL, apply_edits, correct_block, fault_of,
                              process_span, with_fault)
from cosim.sim.vector_batch import VectorBench
from hdl.common.axis_register import axis_register
from hdl.fabric.collective_fabric import collective_fabric
from hdl.package.accelerator_package import accelerator_package
from hdl.package.work_distributor import POLICY_SERVICE_RATE

TEXT = """always @(a, b) begin: top_p0
    x = 1;
    y = 1;
end


always @(posedge clk) begin: top_p1
    x <= 1;
    if (z) begin
        w <= 0;
    end
end
"""


def changed_places(before, after):
    """The runs of lines that differ between two texts."""
    ops = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False).get_opcodes()
    return [op for op in ops if op[0] != "equal"]


def anchors(text, edit):
    """The (start, end) character spans of `text` the edit's anchor matches."""
    start, end = process_span(text, edit.within) if edit.within else (0, len(text))
    region = text[start:end]
    if edit.regex:
        spans = [m.span() for m in re.finditer(edit.find, region, re.MULTILINE)]
    else:
        spans, at = [], region.find(edit.find)
        while at >= 0:
            spans.append((at, at + len(edit.find)))
            at = region.find(edit.find, at + len(edit.find))
    return [(start + a, start + b) for a, b in spans]


def changed_only_at_its_anchor(before, after, edit):
    """A one-place edit changed the text it matched and left everything before and after it as it was."""
    (a, b), = anchors(before, edit)
    return after != before and after.startswith(before[:a]) and after.endswith(before[b:])


# ---------------------------------------------------------------------------------------------
# The edit
# ---------------------------------------------------------------------------------------------
def test_an_edit_changes_the_text_in_exactly_one_place():
    edit = Edit("    y = 1;\n", "    y = 0;\n")
    out = edit.apply(TEXT)
    assert len(changed_places(TEXT, out)) == 1 and "    y = 0;\n" in out and changed_only_at_its_anchor(TEXT, out, edit)
    edit = Edit(r"begin\n(\s*)w <= 0;", r"begin\n\1w <= 1;", regex=True)
    out = edit.apply(TEXT)
    assert len(changed_places(TEXT, out)) == 1 and "        w <= 1;" in out and changed_only_at_its_anchor(TEXT, out, edit)
    # the check used on the catalogues below can fail: a change away from the anchor
    assert not changed_only_at_its_anchor(TEXT, out.replace("x <= 1;", "x <= 2;"), edit)


def test_an_anchor_found_too_often_or_not_at_all_is_an_error():
    with pytest.raises(FaultAnchorError, match=r"'x = 1;' matches 0 times, expected 1"):
        Edit("x = 1;", "x = 0;").apply(TEXT.replace("x = 1;", "x = 2;"))
    with pytest.raises(FaultAnchorError, match="matches 2 times, expected 1"):
        Edit("x ", "v ").apply(TEXT)
    with pytest.raises(FaultAnchorError, match=r"/w <= \\d;/ matches 0 times"):
        Edit(r"w <= \d;", "w <= 2;", regex=True).apply(TEXT.replace("w <= 0;", "w <= a;"))
    # apply_edits names what the edits were for; a count > 1 is stated, then checked
    with pytest.raises(FaultAnchorError, match="fault F1 .blk.: edit 'q' matches 0 times"):
        Fault("F1", "blk", "bug", (Edit("x = 1;", "x = 2;"), Edit("q", "r"))).apply(TEXT)
    assert apply_edits(TEXT, [Edit(" = 1;", " = 2;", count=2)]).count(" = 2;") == 2


def test_an_edit_within_a_process_counts_only_there():
    # "x" is set in both processes: ambiguous in the text, once in each process
    out = Edit("x <= 1;", "x <= 0;", within="top_p1").apply(TEXT)
    assert "x = 1;" in out and "x <= 0;" in out and len(changed_places(TEXT, out)) == 1
    # the process's sensitivity list is part of it
    out = Edit(r"^always @\((.*)\) begin: top_p0$", r"always @(\1, c) begin: top_p0", regex=True,
               within="top_p0").apply(TEXT)
    assert "always @(a, b, c) begin: top_p0" in out
    with pytest.raises(FaultAnchorError, match="'w <= 0;' matches 0 times in process top_p0"):
        Edit("w <= 0;", "w <= 1;", within="top_p0").apply(TEXT)
    with pytest.raises(FaultAnchorError, match="process 'top_p2' found 0 times"):
        Edit("x", "y", within="top_p2").apply(TEXT)


def test_edits_may_depend_on_the_blocks_arguments():
    fault = Fault("W", "blk", "bug", lambda p: Edit("x = 1;", f"x = {p['WIDTH']};", within="top_p0"))
    assert "x = 7;" in fault.apply(TEXT, {"WIDTH": 7})
    assert fault.edits_for({"WIDTH": 7}) == (Edit("x = 1;", "x = 7;", within="top_p0"),)


# ---------------------------------------------------------------------------------------------
# A faulted block, built
# ---------------------------------------------------------------------------------------------
def _slice_signals(width=8):
    b = lambda: Signal(bool(0))  # noqa: E731
    return dict(clk=b(), rst=ResetSignal(0, active=1, isasync=False), s_axis_tdata=Signal(intbv(0)[width:]),
                s_axis_tlast=b(), s_axis_tvalid=b(), s_axis_tready=b(), m_axis_tdata=Signal(intbv(0)[width:]),
                m_axis_tlast=b(), m_axis_tvalid=b(), m_axis_tready=b())


FLIPS_DATA = Fault("flips_data", "axis_register", "a beat taken straight from the input has bit 0 inverted",
                   Edit("m_axis_tdata <= s_axis_tdata;", "m_axis_tdata <= (s_axis_tdata ^ 1);", within="step"))


def _raw(folder, name):
    with open(os.path.join(folder, name + ".raw.v")) as fh:
        return fh.read()


def test_a_faulted_block_is_the_correct_conversion_with_the_edit():
    faulted = with_fault(axis_register, FLIPS_DATA)
    assert fault_of(faulted) is FLIPS_DATA and correct_block(faulted) is axis_register and fault_of(axis_register) is None
    assert with_fault(axis_register, None) is axis_register
    good, name, _ = toolchain.build(axis_register, **_slice_signals())
    bad, bad_name, _ = toolchain.build(faulted, **_slice_signals())
    assert bad_name == name and bad != good and bad.endswith("-fault-flips_data")
    # MyHDL's output of the correct block, edited in one place (the raw text is what the passes rewrite)
    ops = changed_places(_raw(good, name), _raw(bad, name))
    assert [op[0] for op in ops] == ["replace"] and ops[0][2] - ops[0][1] == 1
    assert "(s_axis_tdata ^ 1)" in _raw(bad, name) and "(s_axis_tdata ^ 1)" in open(os.path.join(bad, name + ".v")).read()
    # and it behaves as the broken slice: bit 0 of every beat inverted, nothing else
    vectors = [dict(s_axis_tvalid=1, s_axis_tdata=d, s_axis_tlast=0, m_axis_tready=1) for d in (0x10, 0x21, 0x42, 0x83)]
    vectors.append(dict(s_axis_tvalid=0))
    runs = [VectorBench(block, **_slice_signals()).run(vectors).samples for block in (axis_register, faulted)]
    data = [[s["m_axis_tdata"] for s in r if s["m_axis_tvalid"]] for r in runs]
    assert data[0] == [0x10, 0x21, 0x42, 0x83] and data[1] == [0x11, 0x20, 0x43, 0x82]


def test_a_faulted_block_does_not_run_in_myhdl():
    faulted = with_fault(axis_register, FLIPS_DATA)
    with pytest.raises(FaultNotInMyHDL, match="flips_data exists only as converted Verilog"):
        faulted(**_slice_signals())
    for backend in ("myhdl", "myhdl+icarus"):
        with pytest.raises(FaultNotInMyHDL, match="use 'icarus'"):
            toolchain.select(faulted, backend)
    assert toolchain.select(faulted, "icarus").__name__ == "axis_register"


def test_a_rotten_anchor_fails_the_build_loudly():
    rotten = Fault("rotten", "axis_register", "bug", Edit("m_axis_tdata <= s_axis_tdata + 1;", "x"))
    with pytest.raises(FaultAnchorError, match="fault rotten .axis_register.: edit .* matches 0 times"):
        toolchain.build(with_fault(axis_register, rotten), **_slice_signals())


# ---------------------------------------------------------------------------------------------
# The catalogues against today's converted designs
# ---------------------------------------------------------------------------------------------
def _fabric(cfg):
    return collective_fabric, {**fabric_signals(cfg), **fabric_params(cfg)}


def _formal(target_name):
    t = get_target(target_name)
    return t.block(), {**t.signals(), **t.params}


DISTRIBUTOR_FAULTS = ("no_gen_check", "retry_as_job", "epoch_rewrite", "tie_lowest")
# (design, configuration, its arguments, the faults that apply to it): every design a test or a
# formal target builds with a fault, at the configurations they build
DESIGNS = {
    "collective_fabric, property bench": (lambda: _fabric(FabricConfig()), tuple(FABRIC_FAULTS)),
    "collective_fabric, formal target": (lambda: _formal("collective_fabric"), tuple(FABRIC_FAULTS)),
    "accelerator_package": (lambda: (accelerator_package, {**package_signals(Geometry()),
                                                           **PackageSetup(die_rate=(8,) * 4).params()}),
                            tuple(PACKAGE_FAULTS)),
    "checked_work_distributor, distributor bench": (
        lambda: (checked_work_distributor, dict(checked_distributor_signals(Geometry()), POLICY=POLICY_SERVICE_RATE,
                                                IMBALANCE_BUDGET=1 << 11)), DISTRIBUTOR_FAULTS),
    "checked_work_distributor, formal target": (lambda: _formal("work_distributor"), DISTRIBUTOR_FAULTS),
    "work_accounting_harness, formal target": (lambda: _formal("work_accounting"), ("retry_as_work",)),
}
CATALOGUE = {**FABRIC_FAULTS, **PACKAGE_FAULTS}


def _converted(design):
    block, arguments = DESIGNS[design][0]()
    folder, name, bound = toolchain.build(block, **arguments)
    return block, arguments, _raw(folder, name), bound.arguments


@pytest.mark.parametrize("design", list(DESIGNS))
def test_every_catalogued_fault_applies_to_todays_design(design):
    _, _, text, arguments = _converted(design)
    for name in DESIGNS[design][1]:
        fault = CATALOGUE[name]
        edits = fault.edits_for(arguments)
        assert edits, name
        after = text
        for edit in edits:
            before, after = after, edit.apply(after)
            # each edit changes the text where it is anchored (as often as it says), and nowhere else
            assert len(anchors(before, edit)) == edit.count and after != before, (name, edit)
            assert edit.count > 1 or changed_only_at_its_anchor(before, after, edit), (name, edit)
        assert after == fault.apply(text, arguments)


def test_the_catalogues_cover_every_property_and_assertion():
    from cosim.fabric.fabric_properties import PROPERTIES
    from hdl.package.package_assertion_monitor import ASSERTIONS
    assert sorted(FABRIC_FAULTS) == sorted(p.id for p in PROPERTIES)
    assert all(f.name == k and f.block and f.bug for k, f in CATALOGUE.items())
    formal = [f.design_fault.name for t in ("work_distributor", "work_accounting")
              for f in get_target(t).faults.values() if f.design_fault]
    assert sorted(formal) == sorted(PACKAGE_FAULTS)
    assert len(ASSERTIONS) == len(PACKAGE_FAULTS) + 1          # the sixth: the round-robin policy


@pytest.mark.slow
@pytest.mark.parametrize("design", list(DESIGNS))
def test_every_faulted_design_compiles_in_both_language_modes_and_verilator(design, compiles_everywhere):
    block, arguments, _, _ = _converted(design)
    for name in DESIGNS[design][1]:
        compiles_everywhere(with_fault(block, CATALOGUE[name]), **arguments)
