"""Logging (and, later, metrics) set-up; objects are created in app wiring, never globally."""
