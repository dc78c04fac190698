"""cosim.fabric.fabric_rtl: the report's RTL figures come from our blocks, and the register
count it reports is what yosys infers from the same Verilog."""
import subprocess

import pytest

from cosim.fabric import fabric_rtl
from cosim.sim import toolchain
from hdl.fabric import collective_pkg as pkg


@pytest.mark.parametrize("name", ["slowest_member_tracker", "ring_allreduce_model", "load_aware_selector",
                                  "ring_link_rates", "ring_step_engine", "stall_accountant"])
def test_register_count_equals_yosys_flip_flops(name, tmp_path):
    func, widths, clocked, params = fabric_rtl.register_blocks()[name]
    folder, module, _ = toolchain.build(func, **fabric_rtl._sigs(widths, clocked), **params)
    stat = tmp_path / "stat.txt"
    subprocess.run(["yosys", "-q", "-p", f"read_verilog {module}.v; hierarchy -top {module}; proc; opt_clean; "
                                         f"tee -q -o {stat} stat -width"], cwd=folder, check=True)
    bits = 0
    for line in stat.read_text().splitlines():
        m = fabric_rtl._YOSYS_DFF.match(line)
        if m:
            bits += int(m.group(1)) * int(m.group(2))
    assert bits > 0 and fabric_rtl.register_bits(name) == bits


def test_rtl_figures_are_the_blocks_arithmetic():
    ring = fabric_rtl.ring_model([[100] * 32, [25] + [100] * 31])
    assert ring[0]["ideal_time_ms"] == 8000 * 8 * 2046 // (1024 * 100) == 1278
    assert ring[1]["collective_time_ms"] == 8000 * 8 * 2046 // (1024 * 25) and ring[1]["slowdown_x100"] == 400
    stall = fabric_rtl.stall([(1279, 4503, 100_000, 100)])[0]
    assert (stall["accel_seconds_lost"], stall["accel_hours_per_run"]) == (3301, 3224 * 100_000 * 1024 // 3_600_000)
    a2a = fabric_rtl.all_to_all([(pkg.COLL_ALLTOALL, 1024), (pkg.COLL_ALLTOALL, 22)])
    assert [o["efficiency_pct"] for o in a2a] == [94, 82]


def test_clocked_register_count_reads_declarations():
    text = "\n".join(["reg [7:0] a;", "reg b = 0;", "reg [16-1:0] c;", "output [3:0] d;", "reg [3:0] d;",
                      "always @(a) begin", "    c <= a;", "end",
                      "always @(posedge clk) begin", "    if ((a <= 3)) begin", "        b <= 1;",
                      "        d[2] <= 1;", "    end", "end", "endmodule"])
    assert fabric_rtl.clocked_register_bits(text) == 1 + 4
