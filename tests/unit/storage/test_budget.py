"""The hot cache's default budget follows the container's memory limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.storage.budget import cgroup_memory_limit, default_budget_mb


def cgroup(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return root


@pytest.mark.parametrize(
    ("name", "text", "limit"),
    [
        ("memory.max", "1073741824\n", 2**30),  # cgroup v2, a 1 GiB pod
        ("memory.max", "max\n", None),  # v2 without a limit
        ("memory/memory.limit_in_bytes", "805306368\n", 768 * 2**20),  # v1, 768 MiB
        ("memory/memory.limit_in_bytes", "9223372036854771712\n", None),  # v1 "unlimited"
        ("memory.max", "garbage\n", None),
    ],
)
def test_the_limit_is_read_from_either_cgroup_version(
    tmp_path: Path, name: str, text: str, limit: int | None
) -> None:
    assert cgroup_memory_limit(cgroup(tmp_path, name, text)) == limit


def test_no_cgroup_files_means_no_limit(tmp_path: Path) -> None:
    assert cgroup_memory_limit(tmp_path) is None


def test_the_default_is_a_third_of_the_limit_or_1_gb() -> None:
    assert default_budget_mb(None) == 1024
    assert default_budget_mb(2**30) == 341  # the chart's cluster pod (1 GiB)
    assert default_budget_mb(768 * 2**20) == 256  # the chart's sidecar
    assert default_budget_mb(16 * 2**30) == 5461  # big pods get a big cache
    assert default_budget_mb(10 * 2**20) == 32  # never below the floor
