"""The engine on the kit's node: sites in every phase block (inside MyHDL's functions too), a choice
of 200 spread over them, the instrumented node under the hostile regression's batched test bench
(-g2005 and -g2012): with no select it sends the same frames on the same cycles as the node, and a
mutant that breaks the counters is told apart; equivalent survivors of a campaign proved, the ones
that only move outputs in time not.  Node-scale: all marked slow (the node's parse and sites
alone take 10 to 15 s)."""
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from cosim.mutation.instrument import instrument
from cosim.mutation.sites import KINDS, select


@pytest.mark.slow
def test_every_phase_block_has_sites_of_every_kind(node):
    _, _, blocks, sites = node
    per_block = Counter(m.block for m in sites)
    assert set(per_block) == set(blocks.order)
    for block in blocks.order:
        kinds = {m.kind for m in sites if m.block == block}
        assert kinds >= {"operator", "constant", "condition"}, block
    assert {m.kind for m in sites} == set(KINDS)
    assert len(sites) > 50_000


@pytest.mark.slow
def test_a_choice_of_200_is_spread_over_every_block(node):
    _, _, blocks, sites = node
    chosen = select(sites, 200, seed=1)
    assert [m.id for m in chosen] == list(range(1, 201))
    per_block = Counter(m.block for m in chosen)
    assert set(per_block) == set(blocks.order)
    assert max(per_block.values()) - min(per_block.values()) <= 1        # every block has enough sites
    assert len({m.kind for m in chosen}) == 4
    assert select(sites, 200, seed=1) == chosen


def _run(scenario, backend, dut):
    from cosim.node.node_harness import run_node
    r = run_node(scenario, backend, kulisch_w=320, dut=dut)
    return ({p: [(f.beats, f.cycles) for f in fs] for p, fs in r.tx.items()},
            {p: [f.cycles for f in fs] for p, fs in r.rx.items()}, r.counters, r.cycles, r.resets, r.busy_at_end)


@pytest.mark.slow
def test_the_instrumented_node_is_the_node_until_a_mutant_is_selected(node, tmp_path):
    """Two Icarus builds of the instrumented node and four regression runs (about a minute)."""
    from cosim.node.dut import load_dut                      # a Verilog file as the node under test
    from cosim.node.regress import random_scenario
    path, text, _, sites = node
    chosen = select(sites, 200, seed=1)
    counters = next(m for m in sites if m.kind == "stuck" and m.original.startswith("counter_value <=")
                    and "mem[counter_select]" in m.original)
    chosen.append(replace(counters, id=201))                 # the counter read-out keeps its reset value
    instrumented = tmp_path / "prism_node.v"
    instrumented.write_text(instrument(text, chosen))
    assert instrumented.read_text().count("\n") == text.count("\n")
    dut = load_dut([str(instrumented)], width=320)
    scenario = random_scenario(1)
    backends = ("batch-icarus", "batch-icarus-2012")         # iverilog -g2005 and -g2012
    from cosim.node.node_harness import dut_design
    from cosim.sim.batch import builds_on_first_run
    with builds_on_first_run():                              # the files written one design at a time,
        designs = [dut_design(b.split("-", 1)[1], dut, 320) for b in backends]
    with ThreadPoolExecutor(2) as pool:                      # the two compiled side by side; runs one
        list(pool.map(lambda d: d.executable(), designs))    # at a time (they share a work folder)
    mutant0 = [_run(scenario, b, dut) for b in backends]
    for backend, got in zip(backends, mutant0):
        assert got == _run(scenario, backend, None), backend
    broken = _run(scenario, "batch-icarus", dut.with_plusargs("+prism_mutant=201"))
    assert broken[2] != mutant0[0][2] and broken[0] == mutant0[0][0]      # counters differ, frames do not


@pytest.mark.slow
def test_verilator_takes_the_instrumented_node(node, tmp_path):
    """Verilator's lint passes on the instrumented node, and its batched build (about 30 s at -O0)
    with no select sends what the node sends."""
    import subprocess
    from cosim.node.dut import load_dut
    from cosim.node.regress import random_scenario
    path, text, _, sites = node
    instrumented = tmp_path / "prism_node.v"
    instrumented.write_text(instrument(text, select(sites, 200, seed=2)))
    lint = subprocess.run(["verilator", "--lint-only", "-Wno-fatal", "-Wno-WIDTH", "--top-module", "prism_node",
                           str(instrumented)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stderr[-2000:]
    dut = load_dut([str(instrumented)], width=320)
    scenario = random_scenario(1)
    assert _run(scenario, "batch-verilator", dut) == _run(scenario, "batch-verilator", None)


def _site(sites, statement, change):
    """The one site of `change` in the statement; where the statement holds that change twice, the
    first (leftmost) of them."""
    found = [m for m in sites if statement in m.original and m.change.startswith(change)]
    assert found and len({m.statement_line for m in found}) == 1, (statement, change, len(found))
    return min(found, key=lambda m: m.column)


@pytest.mark.slow
def test_function_sites_take_the_block_of_the_process_calling_them(node):
    _, text, blocks, sites = node
    inside = [m for m in sites if m.function]
    # (the rounders call none since their rewrite, the Kulisch banks only element_fields since their
    # carry-save rows, lanes 16-63 of a port's decoders none since their half and INT8-only decoders)
    assert len({m.function for m in inside}) > 200 and len(inside) > 15_000
    name = next(m.function for m in inside if m.function.endswith("_element_fields"))    # MyHDL numbers them
    add = [m for m in inside if m.function == name]
    caller = next(line for line, t in enumerate(text.split("\n"), 1) if f"= {name}(" in t)
    assert add and {m.block for m in add} == {blocks.statement_at(caller).block}
    assert not any(m.kind == "stuck" for m in inside)


# statements of the node that survived a 200-seed campaign (prism mutate --mutants 200 --seeds 200)
PROVED = [
    # in the `else` of `if (prism_readout0_auto_classifier0_m_axis_tready)`: that tready is `1'd1`
    ("prism_readout0_prism_round161_magnitude_stage_ovf = (prism_readout0_prism_round161_magnitude_stage_fl[3] != 0)",
     "`!=` -> `==`", "unobservable"),
    # MyHDL's `if TERM:` with TERM False: the term it computes is read by nobody
    ("if (1'b0) begin\n        prism_arrival_banks0_number_decoder1_term", "condition", "unobservable"),
    # the leading one of an 11-bit value is at most bit 10: the sign bits shift out of the 24 kept
    ("prism_arrival_banks0_number_decoder1_decode_norm = ($signed({1'b0, prism_arrival_banks0_number_decoder1_decode_short_mag",
     "`1'b0` -> `1'b1`", "process"),
]
TIMING = [
    ("prism_egress0_last_grant <= 0", "stuck"),                       # the egress round robin
    ("assign room_ok = ", "`<=` -> `<`"),                             # the response queue's margin
]


@pytest.mark.slow
@pytest.mark.parametrize("statement, change, method", PROVED, ids=["dead-branch", "if-1b0", "shifted-out"])
def test_equivalent_survivors_of_the_node_are_proved(node, statement, change, method):
    from cosim.mutation.equivalence import prove_equivalent
    _, text, _, sites = node
    if statement.startswith("if (1'b0)"):                 # the `if` is the site: find it by what it guards
        at = text.index(statement)
        m = next(m for m in sites if m.start == at + 4 and m.kind == "condition" and m.form == "condition")
    else:
        m = _site(sites, statement, change)
    v = prove_equivalent(text, None, m, timeout=60)
    assert v.equivalent is True and v.method == method, v


@pytest.mark.slow
@pytest.mark.parametrize("statement, change", TIMING, ids=["round-robin", "queue-margin"])
def test_survivors_that_move_outputs_in_time_are_not_proved(node, statement, change):
    from cosim.mutation.equivalence import prove_equivalent
    _, text, _, sites = node
    lines = text.split("\n")
    # a continuous assignment's site holds only its expression: find it by its line
    m = next(m for m in sites if statement in lines[m.line - 1] and m.change.startswith(change))
    assert prove_equivalent(text, None, m, timeout=20).equivalent is not True
