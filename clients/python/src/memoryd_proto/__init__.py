"""Generated protobuf and gRPC code for memoryd.v1 (do not edit)."""
