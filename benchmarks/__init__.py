"""Benchmarks: speed and memory goals are measured here, printed as numbers and ratios (never timed unit tests)."""
