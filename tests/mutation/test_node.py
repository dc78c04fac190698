"""The engine on the kit's node: sites in every phase block, a choice of 200 spread over them, the
instrumented node under the hostile regression's batched test bench (-g2005 and -g2012): with no
select it sends the same frames on the same cycles as the node, and a mutant that breaks the
counters is told apart."""
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from cosim.mutation.instrument import instrument
from cosim.mutation.sites import KINDS, select


def test_every_phase_block_has_sites_of_every_kind(node):
    _, _, blocks, sites = node
    per_block = Counter(m.block for m in sites)
    assert set(per_block) == set(blocks.order)
    for block in blocks.order:
        kinds = {m.kind for m in sites if m.block == block}
        assert kinds >= {"operator", "constant", "condition"}, block
    assert {m.kind for m in sites} == set(KINDS)
    assert len(sites) > 50_000


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


def test_the_instrumented_node_is_the_node_until_a_mutant_is_selected(node, tmp_path):
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
