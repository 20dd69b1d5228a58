"""Governance on a real daemon (api_key mode) through the Python client: personal data
and secrets are masked for a low-clearance reader in Recall, GetMemory, ListMemories,
BuildSnapshot, DefaultRead and Export while stored intact (an admin's export has them),
and the opt-in read trail names who read which ids, never the content."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd.security.masking import Masker
from memoryd.security.settings import CustomMaskingRule, MaskingSettings
from memoryd_client import JsonText, MemorydClient
from tests.conftest import Daemon
from tests.security.support import KeySpec, api_key_config, write_config

READER = KeySpec("reader-key-71b3", "reader", "acme", "*", "internal", ("read", "write"))
ADMIN = KeySpec("admin-key-5c0e", "admin", "acme", "*", "internal", ("read", "write", "admin"))
TRUSTED = KeySpec("trusted-key-a9d2", "trusted", "acme", "*", "confidential", ("read",))
SECRET_TEXT = (
    "Alice's email is alice@example.com, her card is 4111 1111 1111 1111 "
    "and the deploy key is sk-proj-AbCdEfGhIjKlMnOp1234"
)
RAW = ("alice@example.com", "4111 1111 1111 1111", "sk-proj-AbCdEfGhIjKlMnOp1234")
#: Polling deadline for the audit writer thread; not a performance assertion.
AUDIT_DEADLINE_S = 20.0


def test_builtin_and_custom_rules() -> None:
    masker = Masker(
        MaskingSettings(
            enabled=True,
            custom=[CustomMaskingRule(name="ticket", pattern=r"TCK-\d{5}", replacement="[ticket]")],
        )
    )
    text = (
        "Call +1 415-555-0100 or 13800138000, SSN 123-45-6789, id 11010519491231002X, "
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789ab, password: hunter2, TCK-12345; "
        "the meeting on 2026-02-23 at 10:00 costs 3200 euros."
    )
    masked = masker.mask(text)
    for raw in ("415-555-0100", "13800138000", "123-45-6789", "11010519491231002X", "ghp_"):
        assert raw not in masked
    assert "hunter2" not in masked and "[ticket]" in masked
    assert "2026-02-23 at 10:00 costs 3200 euros" in masked  # dates and amounts stay
    with pytest.raises(ValueError, match="RE2"):
        CustomMaskingRule(name="bad", pattern=r"(a)\1")  # backreferences are not linear


def _client(daemon: Daemon, key: KeySpec) -> MemorydClient:
    return MemorydClient(daemon.address, api_key=key.raw)


def _audit_lines(data_dir: Path, wanted: Callable[[dict[str, object]], bool]) -> list[dict]:  # type: ignore[type-arg]
    deadline = time.monotonic() + AUDIT_DEADLINE_S
    while True:
        path = data_dir / "audit" / "audit.jsonl"
        lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
        found = [line for line in lines if wanted(line)]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_masked_for_a_low_clearance_reader_intact_for_an_admin_export(
    daemon_factory: Callable[..., Daemon], tmp_path: Path
) -> None:
    config = api_key_config(
        [READER, ADMIN, TRUSTED],
        masking={"enabled": True, "unmasked_clearance": "confidential"},
        audit={"read_trail": True},
    )
    daemon = daemon_factory(config_file=write_config(tmp_path / "memoryd.yaml", config))
    daemon.start()
    with _client(daemon, ADMIN) as admin, _client(daemon, READER) as reader:
        stored = admin.remember("ops", SECRET_TEXT, tags=["pinned"]).memory
        admin.set_memory(
            "ops",
            "/user/contact",
            {"summary": "Reach Alice at alice@example.com"},
            source={"kind": "user"},
        )
        admin.set_working_memory(
            "ops", JsonText('{"contact": "alice@example.com", "price": 1.50}'), thread_id="t1"
        )

        seen = [
            reader.recall("ops", "Alice email card deploy key")[0].memory.content,
            reader.get("ops", stored.id).content,
            reader.list("ops")[0].content,
            reader.build_snapshot("ops", trigger="deploy key").text,
            reader.default_read("ops").text,
        ]
        reader_export = "".join(str(r) for r in reader.export("ops"))
        for text in [*seen, reader_export]:
            assert "[email]" in text or "[card]" in text, text
            assert not any(raw in text for raw in RAW), text
        assert "[secret]" in seen[0] and "[card]" in seen[0]
        # Working memory's stored text is masked too, the rest of it as written.
        [working] = [
            r.working_memory.working_memory.content_json
            for r in reader.export("ops")
            if r.WhichOneof("record") == "working_memory"
        ]
        assert working == '{"contact":"[email]","price":1.50}'

        admin_export = "".join(str(r) for r in admin.export("ops"))
        assert all(raw in admin_export for raw in RAW)  # a backup restores what was stored
    with _client(daemon, TRUSTED) as trusted:
        assert trusted.get("ops", stored.id).content == SECRET_TEXT  # cleared: unmasked

    # The read trail: who read which ids, and never what.
    reads = _audit_lines(
        daemon.data_dir,
        lambda line: (
            line.get("operation") == "MemoryService.GetMemory" and line.get("principal") == "reader"
        ),
    )
    assert reads and reads[0]["ids"] == [stored.id] and reads[0]["agent"] == "ops"
    recalls = _audit_lines(
        daemon.data_dir, lambda line: line.get("operation") == "MemoryService.Recall"
    )
    assert recalls and stored.id in recalls[0]["ids"]
    for operation in ("SnapshotService.BuildSnapshot", "SnapshotService.DefaultRead"):
        assert _audit_lines(daemon.data_dir, lambda line, op=operation: line["operation"] == op)
    exports = _audit_lines(
        daemon.data_dir, lambda line: line.get("operation") == "LifecycleService.Export"
    )
    assert any(stored.id in line["ids"] for line in exports)
    audit_text = (daemon.data_dir / "audit" / "audit.jsonl").read_text()
    assert "alice" not in audit_text.lower() and "4111" not in audit_text
