"""Personalities as partitions: registered from the corpus folder, split chronologically."""
