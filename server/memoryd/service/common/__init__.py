"""What every feature service uses: validation, pagination, quotas, token counts, the
optional LLM client, write batching, per-scope locks, partition leases, conditional
record writes and store scans."""
