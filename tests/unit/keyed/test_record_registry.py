"""build_record_store: one record store per storage backend name."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.storage import RECORD_BACKENDS, RecordStore, build_record_store
from memoryd.storage.lancedb.records import LanceDBRecordStore
from memoryd.storage.memory_records import InMemoryRecordStore


def test_backends(tmp_path: Path) -> None:
    lance = build_record_store("lancedb", data_dir=tmp_path)
    assert isinstance(lance, LanceDBRecordStore)
    assert lance.path == tmp_path / "lancedb"  # beside the memories table
    assert isinstance(build_record_store("memory", data_dir=tmp_path), InMemoryRecordStore)
    for name in RECORD_BACKENDS:
        assert isinstance(build_record_store(name, data_dir=tmp_path), RecordStore)


def test_unknown_backend(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown storage backend 'nope'"):
        build_record_store("nope", data_dir=tmp_path)
