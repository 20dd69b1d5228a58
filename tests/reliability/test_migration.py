"""Migration between backends: Export from LanceDB, Import into Qdrant (local mode on
disk), Export again, Import into a fresh LanceDB, and every record survives both hops."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from memoryd.cli.memoryctl import app as memoryctl
from memoryd.domain.models import Partition
from memoryd.domain.records import RecordKind
from tests.conftest import Daemon
from tests.integration.test_lifecycle import (
    NO_SCHEDULE,
    comparable,
    fresh_agent,
    populate_every_kind,
    read_partition,
)

QDRANT = {**NO_SCHEDULE, "MEMORYD_STORAGE__BACKEND": "qdrant"}


def ctl(address: str, *args: str) -> Any:
    env = {"MEMORYD_ADDRESS": address, "MEMORYD_AGENT": None, "COLUMNS": None}
    result = CliRunner().invoke(memoryctl, ["--timeout", "120", *args, "--json"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def records_of(path: Path) -> list[str]:
    """Every exported record except the header (which carries the export time),
    canonicalised and sorted: backends may list in different orders."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert "header" in lines[0]
    return sorted(json.dumps(line, sort_keys=True) for line in lines[1:])


def test_lancedb_to_qdrant_and_back_preserves_every_record(
    daemon_factory: Callable[..., Daemon], tmp_path: Path
) -> None:
    agent = fresh_agent()
    lance_source = daemon_factory(env=NO_SCHEDULE)
    lance_source.start()
    with lance_source.channel() as channel:
        populate_every_kind(channel, agent)
    first = tmp_path / "from-lancedb.jsonl"
    ctl(lance_source.address, "export", str(first), "--agent", agent)

    qdrant = daemon_factory(env=QDRANT)
    qdrant.start()
    imported = ctl(qdrant.address, "import", str(first))
    assert imported.get("rejected", []) == []
    second = tmp_path / "from-qdrant.jsonl"
    ctl(qdrant.address, "export", str(second), "--agent", agent)
    exported_once = records_of(first)
    assert len(exported_once) > 5
    assert records_of(second) == exported_once  # Qdrant holds exactly what LanceDB held

    lance_target = daemon_factory(env=NO_SCHEDULE)
    lance_target.start()
    back = ctl(lance_target.address, "import", str(second))
    assert back.get("rejected", []) == []
    assert lance_source.stop() == 0 and qdrant.stop() == 0 and lance_target.stop() == 0

    partition = Partition("default", agent)
    before = asyncio.run(read_partition(lance_source.data_dir, partition))
    after = asyncio.run(read_partition(lance_target.data_dir, partition))
    assert {k for k, rs in before[1].items() if rs} == set(RecordKind)
    assert [comparable(m) for m in after[0]] == [comparable(m) for m in before[0]]
    for kind in RecordKind:
        assert after[1][kind] == before[1][kind], kind
