"""VerifyErasure's scan (service/lifecycle/erasure.py) on real files: exact counts, a
string across the boundary of two reads, and tenancy - where tenants share the data
directory only the caller's tenant's own folders are scanned and the shared files are
listed as skipped, so no tenant learns what another stores."""

from __future__ import annotations

from pathlib import Path

from memoryd.domain.models import Partition
from memoryd.service.keyed.tree import partition_dir
from memoryd.service.lifecycle import erasure
from memoryd.service.lifecycle.compaction import archive_folder
from memoryd.service.lifecycle.erasure import scan_roots, scan_tree


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def data_dir(root: Path) -> Path:
    """A data directory holding tenant ta's "secret-a" and tenant tb's "secret-b" in
    the shared files and in each tenant's own folders."""
    data = root / "data"
    write(data / "wal" / "00000000000000000001.wal", b"..secret-a..secret-b..")
    write(data / "lancedb" / "memories.lance" / "data" / "x.lance", b"secret-a secret-b")
    write(data / "audit" / "audit.jsonl", b'{"ids": ["secret-b"]}')
    for tenant, secret in (("ta", b"secret-a"), ("tb", b"secret-b")):
        partition = Partition(tenant, "agent")
        write(partition_dir(data / "memory_root", partition) / "memory.md", secret)
        write(archive_folder(data / "history", partition) / "key-history.jsonl", secret)
    return data


def test_counts_are_exact_across_read_boundaries(tmp_path: Path) -> None:
    needle = b"boundary-needle"
    body = bytearray(b"x" * (3 * erasure._CHUNK))
    for at in (erasure._CHUNK - 5, 2 * erasure._CHUNK - len(needle), 100):
        body[at : at + len(needle)] = needle
    write(tmp_path / "big.bin", bytes(body))
    write(tmp_path / "small.txt", needle + b" " + needle)
    check = scan_tree(tmp_path, tmp_path, [needle, b"absent"])
    assert check.files_scanned == 2 and check.bytes_scanned == len(body) + 2 * len(needle) + 1
    assert {(r.path, r.needle, r.count) for r in check.residue} == {
        ("big.bin", 0, 3),
        ("small.txt", 0, 2),
    }


def test_a_sidecar_daemon_scans_every_file(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    roots, skipped = scan_roots(data, data / "memory_root", data / "history", "ta", "ta")
    assert roots == [data] and skipped == ()
    found = {
        r.path.split("/")[0] for root in roots for r in scan_tree(data, root, [b"secret-b"]).residue
    }
    assert found == {"wal", "lancedb", "audit", "memory_root", "history"}


def test_a_shared_daemon_scans_only_the_callers_folders(tmp_path: Path) -> None:
    data = data_dir(tmp_path)
    roots, skipped = scan_roots(data, data / "memory_root", data / "history", "ta", None)
    assert set(skipped) == {"wal", "lancedb", "audit"}
    residue = [
        r for root in roots for r in scan_tree(data, root, [b"secret-a", b"secret-b"]).residue
    ]
    # Tenant ta's own copies are found; tenant tb's string is found nowhere for ta.
    assert {r.needle for r in residue} == {0}
    assert {r.path.split("/")[0] for r in residue} == {"memory_root", "history"}
    assert all("/ta/" in f"/{r.path}" for r in residue)
