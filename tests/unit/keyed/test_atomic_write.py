"""tree.atomic_write: a file replaced in one step (swapped with the new one where the
system can, renamed over otherwise), nothing left behind."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from memoryd.service.keyed import tree
from memoryd.service.keyed.tree import TMP_PREFIX, atomic_write


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.fixture
def swaps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The results of every renameat2 call atomic_write makes."""
    real = tree._RENAMEAT2
    if real is None:
        pytest.skip("no renameat2 here")
    calls: list[int] = []

    def counted(*args: object) -> int:
        assert real is not None
        result = real(*args)
        calls.append(result)
        return result

    monkeypatch.setattr(tree, "_RENAMEAT2", counted)
    return calls


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_linux_swaps_an_existing_file_and_removes_the_old_one(
    tmp_path: Path, swaps: list[int]
) -> None:
    path = tmp_path / "index" / "user" / "name.json"
    atomic_write(path, "first\n")  # nothing to swap with: renamed
    assert path.read_text() == "first\n" and swaps == [-1]
    with open(path) as old:
        atomic_write(path, "second\n")
        assert swaps == [-1, 0]  # swapped
        # A reader of the old file keeps its whole text; the old file is gone.
        assert old.read() == "first\n" and os.fstat(old.fileno()).st_nlink == 0
    assert path.read_text() == "second\n"
    assert _names(path.parent) == ["name.json"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


@pytest.mark.parametrize("swap", ["system's", "none"])
def test_replaces_and_creates_without_leftovers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    if swap == "none":
        monkeypatch.setattr(tree, "_RENAMEAT2", None)
    path = tmp_path / "a" / "b.json"
    for text in ("one\n", "two\n", "three\n"):
        atomic_write(path, text)
        assert path.read_text() == text
        assert _names(path.parent) == ["b.json"]
        assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_failed_write_leaves_the_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "k.json"
    atomic_write(path, "kept\n")

    def refuse(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(tree.os, "chmod", refuse)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, "lost\n")
    assert path.read_text() == "kept\n"
    assert not [n for n in _names(tmp_path) if n.startswith(TMP_PREFIX)]
