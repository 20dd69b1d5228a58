"""The file layout of keyed memory, for shell tools (``ls``, ``grep``, ``jq``, ``cat``).

One directory per partition holds:
- ``log.jsonl``: one envelope per write, in version order, tombstones included;
- ``state.jsonl``: the latest valid, unexpired state of every key, in key order;
- ``index/<key path>.json``: one file per valid, unexpired key, its segments as
  written (UTF-8: ``index/user/calendar/2026-02-23_10-00_牙科复诊.json``), only "/",
  "\\", "%", "~", control characters and a leading "." %XX-encoded and long ones
  shortened (service/keyed/keys.py), so ``ls index/user/calendar/`` and
  ``jq .content.summary index/user/calendar/*.json`` work and no key can name a file
  outside ``index/``. A key's directory stays when the key is deleted or expires.

An envelope is one line of JSON: ``{"key", "ts", "version", "valid", "source",
"content"}``, the content embedded as the writer's JSON text. Both the daemon's live
mirror (key_mirror.py) and ``memoryctl export-tree`` write this layout, with the
functions here.
"""

from __future__ import annotations

import ctypes
import errno
import os
import tempfile
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from memoryd.domain import json_text
from memoryd.domain.keyed import KeyEntry
from memoryd.domain.models import Partition
from memoryd.service.keyed.docs import envelope_source
from memoryd.service.keyed.keys import InvalidKey, file_segment, key_file_path

LOG_FILE, STATE_FILE, INDEX_DIR = "log.jsonl", "state.jsonl", "index"
#: Prefix of the temporary files of atomic replacement (never a key's file name:
#: those never start with ".").
TMP_PREFIX = ".tmp-"


def ts_text(when: datetime) -> str:
    """RFC 3339 in UTC with "Z", fractions as protobuf's JSON has them (none, 3 or 6
    digits), so the CLI's export and the daemon's mirror write the same text."""
    utc = when.astimezone(UTC) if when.tzinfo is not None else when.replace(tzinfo=UTC)
    base = utc.strftime("%Y-%m-%dT%H:%M:%S")
    micros = utc.microsecond
    if micros == 0:
        return base + "Z"
    if micros % 1000 == 0:
        return f"{base}.{micros // 1000:03d}Z"
    return f"{base}.{micros:06d}Z"


def envelope_line(entry: KeyEntry) -> str:
    """One write as a JSONL line (newline included); the content verbatim."""
    head = json_text.dumps(
        {
            "key": entry.key,
            "ts": ts_text(entry.updated_at),
            "version": entry.version,
            "valid": entry.valid,
            "source": envelope_source(entry.source),
        }
    )
    content = entry.content_json if entry.valid else "null"
    return f'{head[:-1]},"content":{content}}}\n'


def partition_dir(root: Path, partition: Partition) -> Path:
    """``<root>/<tenant>/<agent>``, each id encoded as one file name (never "." or
    "..", never containing "/")."""
    return (
        root
        / file_segment(partition.tenant_id, leaf=False)
        / file_segment(partition.agent_id, leaf=False)
    )


def index_file(index_root: Path, key: str) -> Path:
    """Where KEY's file goes: inside ``index_root``, or ValueError. Checked on the
    path's text: a relative path of names (never "", "." or "..", none containing a
    separator) stays below its root, and the daemon makes no links below it (resolving
    the path on disk cost two thirds of a mirrored write)."""
    try:
        relative = key_file_path(key)
    except InvalidKey as exc:
        raise ValueError(f"key {key!r} {exc}") from None
    names = relative.parts
    if relative.is_absolute() or any(n in ("", ".", "..") or os.sep in n for n in names):
        raise ValueError(f"key {key!r} would be written outside {index_root}")
    return index_root / relative


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename: a reader sees the old file or the
    new one, never a part. Not fsynced: the files are derived from the store.

    An existing file is swapped with the new one (renameat2 RENAME_EXCHANGE) and the
    old one then removed, rather than renamed over: ext4 (``auto_da_alloc``, its
    default) writes the new file's data out inside a rename that replaces a file,
    which made this the slowest step of a key write (docs/performance.md). A file a
    crash leaves empty does not parse and is rewritten by the repair at start."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, 0o644)  # readable by an agent container of another user
        if _exchanged(tmp, path):
            os.unlink(tmp)  # the old file, now
        else:
            os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _renameat2() -> Callable[..., int] | None:
    """The C library's renameat2 (Linux, glibc 2.28+); None where there is none."""
    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError, TypeError):
        return None


_RENAMEAT2 = _renameat2()
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
#: renameat2 errors that mean "rename instead": no file to swap with (ENOENT), a
#: file system or kernel that cannot swap.
_NO_EXCHANGE = frozenset({errno.ENOENT, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP})


def _exchanged(new: str, path: Path) -> bool:
    """Swap the files at ``new`` and ``path`` in one step; False (nothing changed)
    when there is no file at ``path`` or the system cannot swap."""
    if _RENAMEAT2 is None:
        return False
    done = _RENAMEAT2(_AT_FDCWD, os.fsencode(new), _AT_FDCWD, os.fsencode(path), _RENAME_EXCHANGE)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(path))


def remove_file(path: Path) -> bool:
    """Delete ``path``, leaving its directory (directories are stable: one stays when
    its last key is deleted); False when it did not exist."""
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def key_directories(index_root: Path, keys: Iterable[str]) -> set[Path]:
    """The directories of ``keys``' files below ``index_root`` (itself excluded), and
    every directory above them: the directories index/ keeps, empty or not."""
    found: set[Path] = set()
    top = index_root
    for key in keys:
        parent = index_file(index_root, key).parent
        while parent not in found and parent != top:
            found.add(parent)
            parent = parent.parent
    return found


def state_text(entries: Iterable[KeyEntry]) -> str:
    """state.jsonl: the given (valid) entries' envelopes in key order."""
    ordered = sorted(entries, key=lambda e: e.key.encode("utf-8"))
    return "".join(envelope_line(e) for e in ordered)


def write_tree(root: Path, writes: Iterable[KeyEntry], current: Iterable[KeyEntry]) -> list[str]:
    """A whole tree at ``root`` (which must hold none of it yet): ``writes`` into the
    log in version order, ``current`` (valid entries) into state and index, the
    directory of every key written (deleted ones too) in index. Returns
    why keys were not written to index/ (never expected: keys are normalised)."""
    index_root = root / INDEX_DIR
    index_root.mkdir(parents=True, exist_ok=True)
    ordered = sorted(writes, key=lambda e: e.version)
    with open(root / LOG_FILE, "w", encoding="utf-8") as log:
        log.writelines(envelope_line(e) for e in ordered)
    live = list(current)
    try:
        for folder in key_directories(index_root, {e.key for e in ordered}):
            folder.mkdir(parents=True, exist_ok=True)
    except ValueError:
        pass  # a key that has no file: reported below if it is live
    refused: list[str] = []
    for entry in live:
        try:
            target = index_file(index_root, entry.key)
        except ValueError as exc:
            refused.append(str(exc))
            continue
        atomic_write(target, envelope_line(entry))
    atomic_write(root / STATE_FILE, state_text(live))
    return refused
