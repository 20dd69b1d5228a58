"""Security building blocks: settings of the auth, audit and quota sections, API-key
rings, TLS credentials, the audit log."""
