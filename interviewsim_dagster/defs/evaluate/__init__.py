"""Automation conditions (re-score when a judge changes) and the invalid-output-rate check."""
