"""The node's converted Verilog, its block map and its mutation sites, found once for the folder
(reading the node's 140,000 lines takes a few seconds)."""
import gc

import pytest


@pytest.fixture(scope="session")
def node():
    from cosim.mutation.sites import find_sites
    from cosim.node.node_harness import batch_design
    from cosim.sim.codecov import DesignMap
    design = batch_design("icarus", 320)
    path = design.verilog_path
    with open(path) as fh:
        text = fh.read()
    blocks = DesignMap(path)
    blocks.phase_order()
    sites = find_sites(text, design_map=blocks)
    # the parsed node is about a million objects that live to the end of the session: out of the
    # collector's sight (each full collection walked them for 1.5 s)
    gc.freeze()
    return path, text, blocks, sites
