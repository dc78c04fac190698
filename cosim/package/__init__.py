"""The package's verification library: batched runs, monitors, benchmarks."""
