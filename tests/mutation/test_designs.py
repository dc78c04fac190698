"""The engine on the kit's other converted designs (the fabric's collective_fabric and the
package's accelerator_package, built as `prism export` builds them) and on a user's Verilog:
sites in every sub-block, the instrumented design compiled in both Icarus modes, select 0 the
original and select K mutant K under random stimulus."""
import os

import pytest

import randbench
from cosim.mutation.instrument import apply, instrument
from cosim.mutation.sites import find_sites, select


@pytest.fixture(scope="module", params=["collective_fabric", "accelerator_package"])
def design(request):
    from cosim.reports.export import BLOCKS
    from cosim.sim import toolchain
    from cosim.sim.codecov import DesignMap
    spec = BLOCKS[request.param]
    opts = {k: v[1] for k, v in spec.options.items()}
    folder, module, _ = toolchain.build(toolchain.block_function(spec.top), **spec.signals(opts),
                                        **(spec.params(opts) if spec.params else {}))
    path = os.path.join(folder, module + ".v")
    with open(path) as fh:
        text = fh.read()
    blocks = DesignMap(path)
    return text, blocks, find_sites(text, design_map=blocks)


def test_sites_in_every_sub_block(design):
    _, blocks, sites = design
    sub_blocks = [b for b in blocks.order if b != blocks.top]
    assert sub_blocks and set(sub_blocks) <= {m.block for m in sites}


@pytest.mark.parametrize("generation", ["-g2005", "-g2012"])
def test_select_0_is_the_design_and_select_k_is_mutant_k(design, generation, tmp_path):
    text, _, sites = design
    chosen = select(sites, 6, seed=11)
    folder = str(tmp_path)
    bench = randbench.testbench(text, cycles=150)
    base = randbench.run_icarus(folder, text, bench, generation, name="original")
    (tmp_path / "inst.v").write_text(instrument(text, chosen))
    exe = randbench.compile_design(str(tmp_path / "inst.v"), str(tmp_path / "tb.v"), str(tmp_path / "inst.vvp"),
                                   generation)
    assert randbench.simulate(exe) == base
    for m in chosen:
        want = randbench.run_icarus(folder, apply(text, m), bench, generation, name="mutant")
        assert randbench.simulate(exe, [f"+prism_mutant={m.id}"]) == want, m.description


USER_RTL = """
`timescale 1ns/1ps
`default_nettype none
// a user's RTL: ANSI ports with parameters, always @*, a case statement, a sub-module instance
module fifo_ctrl #(parameter integer DEPTH = 4, localparam AW = 2) (
    input  wire clk, input wire rst,
    input  wire push, input wire pop,
    output reg  [AW:0] level = 0, output wire full, output wire empty, output logic [7:0] seen
);
    wire bump;
    pulse u_pulse (.clk(clk), .d(push), .q(bump));
    assign full = (level == DEPTH); assign empty = (level == 0);
    reg [1:0] op;
    always @* begin
        op = 2'b00;
        if (push && !full) op[0] = 1'b1;
        if (pop && !empty) op[1] = 1'b1;
    end
    always @(posedge clk) begin
        if (rst) level <= 0;
        else case (op)
            2'b01: level <= level + 1'b1;
            2'b10: level <= level - 1'b1;
            default: level <= level;
        endcase
    end
    always @(posedge clk) seen <= rst ? 8'd0 : seen + {7'd0, bump};
endmodule
module pulse (input wire clk, input wire d, output reg q = 0);
    always @(posedge clk) q <= d;
endmodule
"""


def test_a_users_rtl(tmp_path):
    sites = find_sites(USER_RTL)                     # the top module: the one no other instantiates
    assert {m.module for m in sites} == {"fifo_ctrl"} and {m.block for m in sites} == {"fifo_ctrl"}
    assert {m.kind for m in sites} == {"operator", "constant", "condition", "stuck"}
    assert not any("u_pulse" in m.original for m in sites)                            # no instance
    assert not any(m.change.startswith(("`2'b01`", "`2'b10`")) for m in sites)          # no case label
    bench = randbench.testbench(USER_RTL, module="fifo_ctrl", cycles=120)
    folder = str(tmp_path)
    base = randbench.run_icarus(folder, USER_RTL, bench, name="original")
    (tmp_path / "inst.v").write_text(instrument(USER_RTL, sites))
    exe = randbench.compile_design(str(tmp_path / "inst.v"), str(tmp_path / "tb.v"), str(tmp_path / "inst.vvp"))
    assert randbench.simulate(exe) == base
    killed = 0
    for m in sites:
        got = randbench.simulate(exe, [f"+prism_mutant={m.id}"])
        assert got == randbench.run_icarus(folder, apply(USER_RTL, m), bench, name="mutant"), m.description
        killed += got != base
    assert killed > len(sites) // 2
