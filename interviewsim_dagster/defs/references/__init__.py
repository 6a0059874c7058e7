"""Evaluation artefacts derived from held-out answers; never shown to a generator."""
