"""The node's verification library: scenarios, harness, scoreboard, functional coverage, regressions, figures, the fault variant;
what `prism demo`, `prism regress` and `prism replay` compute (report, seeds)."""
