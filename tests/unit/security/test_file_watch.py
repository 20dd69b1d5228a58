"""FileWatcher: a replaced or rewritten file triggers one callback; nothing else does."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from memoryd.security.file_watch import FileWatcher, signature

INTERVAL = 0.01


async def settle() -> None:
    """Several polls' worth of time (for what must NOT happen)."""
    await asyncio.sleep(INTERVAL * 10)


async def until(condition: Callable[[], bool]) -> None:
    """For what must happen: poll it, with a generous deadline for a busy machine."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(INTERVAL)
    raise AssertionError("not reached")


async def test_replaced_and_rewritten_files_are_noticed_once(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text("[1]")
    calls: list[str] = []
    watcher = FileWatcher(path, INTERVAL, lambda: calls.append(path.read_text()))
    watcher.start()
    try:
        await settle()
        assert calls == []  # unchanged: nothing
        tmp = tmp_path / "keys.tmp"
        tmp.write_text("[2]")
        tmp.replace(path)  # atomic replace: a new inode
        await until(lambda: len(calls) == 1)
        await settle()
        assert calls == ["[2]"]
        path.write_text("[3, 3]")  # rewritten in place: another size
        await until(lambda: len(calls) == 2)
        assert calls == ["[2]", "[3, 3]"]
        path.unlink()  # mid-swap: not a change to act on
        await settle()
        assert len(calls) == 2
        path.write_text("[4]")
        await until(lambda: len(calls) == 3)
        await settle()
        assert calls[-1] == "[4]" and len(calls) == 3
    finally:
        await watcher.close()


async def test_mark_means_an_explicit_reload_is_not_repeated(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text("a")
    calls: list[int] = []
    watcher = FileWatcher(path, INTERVAL, lambda: calls.append(1))
    watcher.start()
    try:
        path.write_text("bb")
        watcher.mark()  # e.g. SIGHUP reloaded it first
        await settle()
        assert calls == []
    finally:
        await watcher.close()


def test_signature_follows_symlinks(tmp_path: Path) -> None:
    (tmp_path / "v1").write_text("one")
    (tmp_path / "v2").write_text("two")
    link = tmp_path / "keys.json"
    link.symlink_to("v1")
    before = signature(link)
    tmp = tmp_path / "link.tmp"
    tmp.symlink_to("v2")
    os.replace(tmp, link)
    assert before is not None and signature(link) not in (None, before)
    assert signature(tmp_path / "missing") is None
