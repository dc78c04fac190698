# The cocotb tests run inside a simulator, started by tests/node/test_cocotb_client.py through
# cocotb's runner; importing them outside one fails (no simulator), so pytest never collects them.
collect_ignore = ["test_node_cocotb.py"]
