"""Typed domain objects and the error hierarchy; no protobuf, no storage details."""
