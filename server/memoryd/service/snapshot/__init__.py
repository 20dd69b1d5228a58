"""What an agent run starts with: token-budgeted snapshots and the default read over
keyed memory."""
