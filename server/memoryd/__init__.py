"""memoryd: an agent-memory daemon serving gRPC Memory, Snapshot and Lifecycle services."""

__version__ = "0.1.0"
