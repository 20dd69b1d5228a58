"""Every public class, function and method of the gRPC adapter, the operation layer and
the domain says what it is: these are the packages a reader starts from."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGES = ("api", "operations", "domain")


def undocumented(root: Path) -> list[str]:
    """``path:line name`` of each public definition below ``root`` without a docstring
    (names starting with ``_`` are private, and so is everything inside them)."""
    missing: list[str] = []

    def visit(node: ast.AST, prefix: str, path: Path) -> None:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if child.name.startswith("_"):
                continue
            if ast.get_docstring(child) is None:
                missing.append(f"{path.relative_to(root)}:{child.lineno} {prefix}{child.name}")
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", path)

    for path in sorted(root.rglob("*.py")):
        visit(ast.parse(path.read_text(encoding="utf-8")), "", path)
    return missing


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_definition_has_a_docstring(package: str) -> None:
    assert undocumented(REPO / "server" / "memoryd" / package) == []


def test_the_check_names_each_public_definition_without_one(tmp_path: Path) -> None:
    (tmp_path / "door.py").write_text(
        "class Door:\n"
        "    def run(self) -> None:\n"
        '        """Documented."""\n'
        "    def stream(self) -> None: ...\n"
        "    def _private(self) -> None: ...\n"
        "def _helper() -> None:\n"
        "    def inner() -> None: ...\n"
    )
    assert undocumented(tmp_path) == ["door.py:1 Door", "door.py:4 Door.stream"]
