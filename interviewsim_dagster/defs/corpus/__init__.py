"""Personalities as partitions: registered from the corpus folder by a sensor."""
