"""Studies on public data sets (their plans, runs and reports)."""
