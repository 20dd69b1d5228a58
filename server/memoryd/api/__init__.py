"""The gRPC adapter: each RPC's handler (api/rpc.py), servicers that convert onto the
operation layer, and the one place protobuf meets the domain (api/convert)."""
