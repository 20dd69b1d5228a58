"""After the adversarial and fuzzing suites: neither the daemon's log nor its audit log
holds a confidential or restricted memory's content, or any credential."""

from __future__ import annotations

import json
from pathlib import Path

from tests.security.conftest import FUZZER, SecurityDaemon


def read_all(paths: list[Path]) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in paths)


def test_logs_hold_no_secrets_or_credentials(
    security_daemon: SecurityDaemon, stopped_daemon_files: Path
) -> None:
    world = security_daemon.world
    audit_files = sorted((stopped_daemon_files / "audit").glob("*.jsonl"))
    assert audit_files, "the audit log was not written"
    audit = read_all(audit_files)
    logs = security_daemon.daemon.logs()
    lines = [line for line in audit.split("\n") if line]
    assert len(lines) > 100 and len(logs.splitlines()) > 100

    # Every event is a JSON object with the fields an auditor needs.
    events = [json.loads(line) for line in lines]
    assert all({"time", "operation", "outcome"} <= set(event) for event in events)
    denials = [e for e in events if e["outcome"] == "PERMISSION_DENIED"]
    assert denials and all(d.get("principal") and d.get("tenant") for d in denials)

    confidential = {secret for a in world.artifacts if a.level >= 3 for secret in a.secrets}
    every_secret = {secret for a in world.artifacts for secret in a.secrets}
    assert confidential
    credentials = {p.key.raw for p in world.principals} | {FUZZER.raw}
    for name, text in (("audit log", audit), ("daemon log", logs)):
        found = [s for s in every_secret if s in text]
        assert not found, f"{name} holds memory content: {found[:5]}"
        leaked = [c for c in credentials if c in text]
        assert not leaked, f"{name} holds {len(leaked)} credential(s)"
        assert "Bearer" not in text, f"{name} holds an authorization header"
