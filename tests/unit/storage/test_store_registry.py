"""build_store picks the backend by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.storage import BACKENDS, Store, build_store
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.memory import InMemoryStore


def test_lancedb_lives_under_data_dir(tmp_path: Path) -> None:
    store = build_store("lancedb", data_dir=tmp_path, dimension=8)
    assert isinstance(store, LanceDBStore)
    assert isinstance(store, Store)
    assert (store.path, store.dimension, store.name) == (tmp_path / "lancedb", 8, "lancedb")


def test_memory(tmp_path: Path) -> None:
    store = build_store("memory", data_dir=tmp_path, dimension=8)
    assert isinstance(store, InMemoryStore)
    assert isinstance(store, Store)
    assert store.name == "memory"


def test_unknown_backend_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="known backends: lancedb, memory"):
        build_store("qdrant-typo", data_dir=tmp_path, dimension=8)


def test_every_configurable_backend_is_registered() -> None:
    from typing import get_args

    from memoryd.storage.settings import StoreBackend

    assert set(get_args(StoreBackend)) <= set(BACKENDS)


@pytest.mark.parametrize("dimension", [0, -1])
def test_dimension_must_be_positive(tmp_path: Path, dimension: int) -> None:
    for name in BACKENDS:
        with pytest.raises(ValueError):
            build_store(name, data_dir=tmp_path, dimension=dimension)
