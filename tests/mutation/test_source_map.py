"""The MyHDL line of a converted node statement (cosim/mutation/source_map.py): signals, process
variables, conditions, a deep arrival-lane adder, an interface's field, a top-level assignment and
statements inside the functions MyHDL writes per call.  The node's cases are slow (its parse)."""
import os
import re

import pytest

from cosim.mutation.source_map import myhdl_source, split_label

# (a statement of the converted node, the Python file it comes from, what that Python line holds)
CASES = [
    ("prism_control0_resp_rp <= (prism_control0_resp_rp + 1);", "hdl/node/prism_control.py",
     "resp_rp.next = resp_rp + 1"),
    ("prism_control0_admit_control_r_end = ((prism_control0_admit_control_count + 15) >>> 4);",
     "hdl/node/prism_control.py", "r_end[:] = (count + 15) >> 4"),
    ("prism_counters0_mem[32] <= (prism_counters0_mem[32] + ranges_done);",
     "hdl/node/prism_counters.py", "+ ranges_done"),
    ("if ((ranges_done != 0)) begin", "hdl/node/prism_counters.py", "if ranges_done != 0:"),
    ("prism_ingress1_bank_read_release <= (prism_reader1_advance && (prism_reader1_state == 2));",
     "hdl/node/prism_reader.py", "bank_read.release.next = advance and state == LAST"),
    ("cmd_valid <= (prism_completion0_spare_valid || prism_completion0_pop);",
     "hdl/node/prism_completion.py", "cmd.valid.next = spare_valid or pop"),
    ("prism_arrival_banks0_prism_fp32_bank1_fp32_arrival_lane16_a_valid <=", "hdl/arith/fp32_arrival_lane.py",
     "a_valid.next ="),
    # inside the functions MyHDL writes for calls (MYHDL<n>_<name>): the Python function <name>
    ("sh = (ex - 1);", "hdl/arith/number_decoder.py", "sh[:] = ex - 1"),
    ("MYHDL*_element_fields = f;", "hdl/arith/number_decoder.py", "return f"),      # MyHDL numbers its calls
    ("special = (ex == 255);", "hdl/arith/number_decoder.py", "special = ex == 255"),
]


def _line_of(text, start):
    """The first line that starts with `start` (a `*` in it stands for a number)."""
    pattern = re.compile(r"\d+".join(re.escape(part) for part in start.split("*")))
    lines = text.split("\n")
    for n, line in enumerate(lines, 1):
        if pattern.match(line.strip()):
            return n
    pytest.fail(f"no line starts with {start!r} in the converted node")


@pytest.mark.slow
@pytest.mark.parametrize("statement, python_file, holds", CASES)
def test_a_node_statement_maps_to_its_myhdl_line(node, statement, python_file, holds):
    path, text, _, _ = node
    found = myhdl_source(path, _line_of(text, statement))
    assert found is not None and found[0] == python_file
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, found[0])) as fh:
        assert holds in fh.read().split("\n")[found[1] - 1]


@pytest.mark.slow
def test_lines_outside_processes_and_designs_without_a_raw_file(node, tmp_path):
    path, text, _, _ = node
    assert myhdl_source(path, 1) is None                          # a comment of the header
    copy = tmp_path / "prism_node.v"                              # no prism_node.raw.v beside it
    copy.write_text(text)
    assert myhdl_source(str(copy), _line_of(text, CASES[0][0])) is None


def test_labels_split_into_instance_chain_block_and_function():
    assert split_label("prism_control0_admit_control", "prism_node") == ("prism_control0_", "prism_control",
                                                                           "admit_control")
    chain, block, rest = split_label("prism_arrival_banks0_prism_fp32_bank8_fp32_arrival_lane143_fp32_add143_add",
                                     "prism_node")
    assert (block, rest) == ("fp32_add", "add") and chain.endswith("fp32_add143_")
    assert split_label("dispatch", "prism_node") == ("", "prism_node", "dispatch")
