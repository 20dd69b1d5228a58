"""MCP adapter: the tool table's tools, resources and a prompt over the operation layer (Streamable HTTP in the daemon) or over gRPC (the stdio bridge)."""
