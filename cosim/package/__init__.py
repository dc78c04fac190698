"""The package's verification library: a run's setup and record, batched runs, monitors, benchmarks, the report of
`prism package`."""
