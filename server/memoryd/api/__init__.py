"""The gRPC edge: servicers, interceptors and the one place protobuf meets the domain."""
