"""The node's verification library: scenarios, harness, scoreboard, functional coverage, regressions, figures, the fault variant."""
