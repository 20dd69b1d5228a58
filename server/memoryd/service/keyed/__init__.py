"""Keyed memory: one last-write-wins slot per path, tombstones, provenance, history,
the key index and the on-disk mirror."""
