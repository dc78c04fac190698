"""A cocotb verification component for the PRISM SINGLE node, for a cocotb test bench of your own.

Drop it into a cocotb test against any RTL with the node's ports (docs/protocol.md):

    from cosim.cocotb_vip import PrismNodeEnv, protocol
    env = await PrismNodeEnv.create(dut, kulisch_w=320)
    await env.request(protocol.Stage(...)); ...; await env.wait_idle(); await env.check()

- frames: `protocol` is golden/node/protocol.py, the kit's encoders and decoders
  (`Stage`, `Commit`, `Abort`, `Data`, `Result`, `Response`, `decode`), re-exported;
- `PrismStreamBus`, `PrismSource`, `PrismSink`, `PrismMonitor` (streams.py): cocotbext-axi's
  AxiStreamBus, AxiStreamSource, AxiStreamSink and AxiStreamMonitor with one PRISM frame per
  AxiStreamFrame;
- `PrismScoreboard` (scoreboard.py): the golden node model fed from the input monitors,
  every output frame, response and counter compared bit for bit;
- `NodeCoverage` (functional_coverage.py): the kit's functional cover points, sampled from
  the monitors;
- `PrismNodeEnv` (env.py): all of them wired around one node.

Named `cocotb_vip`, not `cocotb`: a folder called `cocotb` would be the real cocotb package for
any script run from `cosim/` or any tool that puts `cosim/` on the path, and reads as such.
examples/cocotb_node/ shows it in use; docs/cocotb.md describes it.
"""
from golden.node import protocol

from cosim.cocotb_vip.env import PrismNodeEnv
from cosim.cocotb_vip.functional_coverage import NodeCoverage
from cosim.cocotb_vip.scoreboard import VIP_MISMATCH_KINDS, PrismReport, PrismScoreboard
from cosim.cocotb_vip.streams import (CycleClock, PrismMonitor, PrismSink, PrismSource, PrismStreamBus,
                                      beats_of, random_pauses, to_axis_frame)

__all__ = ["protocol", "PrismNodeEnv", "NodeCoverage", "PrismReport", "PrismScoreboard", "VIP_MISMATCH_KINDS",
           "CycleClock", "PrismMonitor", "PrismSink", "PrismSource", "PrismStreamBus", "beats_of", "random_pauses",
           "to_axis_frame"]
