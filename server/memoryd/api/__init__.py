"""The gRPC adapter: each RPC's handler (api/rpc.py), the tables binding each RPC to its
operation and converters (api/binding.py, memory_rpcs.py, snapshot_lifecycle_rpcs.py),
and the one place protobuf meets the domain (api/convert)."""
