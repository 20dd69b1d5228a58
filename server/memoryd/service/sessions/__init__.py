"""Sessions (short-term memory): message logs, the fixed zone, token-budgeted windows,
summaries and extraction into long-term memory."""
