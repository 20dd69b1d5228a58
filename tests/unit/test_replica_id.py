"""A replica's id (datadir.replica_id): the same across restarts on one data dir,
another for a copy of the directory at another path, a fresh one for a damaged file."""

from __future__ import annotations

import shutil
from pathlib import Path

from memoryd.datadir import REPLICA_ID_FILE, replica_id


def test_the_same_data_dir_keeps_its_id(tmp_path: Path) -> None:
    first = replica_id(tmp_path)
    assert replica_id(tmp_path) == first
    assert (tmp_path / REPLICA_ID_FILE).exists()


def test_a_copy_of_the_data_dir_elsewhere_is_another_replica(tmp_path: Path) -> None:
    original, copy = tmp_path / "a", tmp_path / "b"
    original.mkdir()
    mine = replica_id(original)
    shutil.copytree(original, copy)  # the same kept id: a cloned volume
    assert replica_id(copy) != mine
    assert replica_id(original) == mine


def test_a_damaged_id_file_is_replaced(tmp_path: Path) -> None:
    (tmp_path / REPLICA_ID_FILE).write_text("not an id")
    first = replica_id(tmp_path)
    assert replica_id(tmp_path) == first
    assert (tmp_path / REPLICA_ID_FILE).read_text().strip() != "not an id"
