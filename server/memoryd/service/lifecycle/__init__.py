"""Whole-agent operations: stats, archive and restore, prune, reset, compact,
consolidate, maintenance, export and import, re-embed."""
