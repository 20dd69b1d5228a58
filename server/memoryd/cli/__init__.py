"""`memoryctl`, the command-line client of memoryd (see memoryd.cli.memoryctl)."""
