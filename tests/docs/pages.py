"""Reading the documentation as data: its pages, fenced code blocks, links, headings,
and the commands and settings its code names."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from memoryd.cli.memoryctl import app as memoryctl_app
from memoryd.main import app as memoryd_app
from tests.conftest import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
#: Variables the clients read (not settings of the daemon).
CLIENT_ENV = {"MEMORYD_ADDRESS", "MEMORYD_API_KEY", "MEMORYD_AGENT", "MEMORYD_TIMEOUT"}


@dataclass(frozen=True)
class Block:
    """One fenced code block: its page, line, language, marks and text."""

    page: Path
    line: int
    language: str
    marks: tuple[str, ...]
    code: str

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page`` (``` bash runnable: language bash, mark runnable)."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)```(\S*)\s*(.*)$", lines[i])
        if opening is None:
            i += 1
            continue
        indent, language, marks = opening.groups()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].startswith(f"{indent}```"):
            body.append(lines[j][len(indent) :])
            j += 1
        found.append(Block(page, i + 1, language, tuple(marks.split()), "\n".join(body) + "\n"))
        i = j + 1
    return found


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


def prose(page: Path) -> str:
    """The page without its fenced blocks."""
    return re.sub(r"^\s*```.*?^\s*```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)


# ---------------------------------------------------------------- links and anchors


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = re.sub(r"`|\*\*|\[|\]\([^)]*\)", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", prose(page), re.M)}


def links(page: Path) -> Iterator[tuple[str, str]]:
    """(target path, anchor) of every relative link of the page's prose."""
    for m in re.finditer(r"\]\(([^)\s]+)\)", prose(page)):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        yield path, anchor


# ---------------------------------------------------------------- shell lines


def shell_lines(code: str) -> Iterator[str]:
    """Each logical command line of a shell block: continuations joined, heredoc bodies
    and comment lines left out."""
    pending = ""
    heredoc: str | None = None
    for raw in code.splitlines():
        if heredoc is not None:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        line = pending + raw
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        marker = re.search(r"<<-?'?(\w+)'?", line)
        if marker is not None:
            heredoc = marker.group(1)
        if line.strip() and not line.strip().startswith("#"):
            yield line.strip()


def commands(line: str) -> Iterator[list[str]]:
    """The argument lists of a shell line's commands (split at &&, ||, ;, |), with
    leading VAR=value assignments dropped."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
    except ValueError:
        return
    current: list[str] = []
    for token in [*tokens, ";"]:
        if token in {"&&", "||", ";", "|", "&"}:
            while current and re.match(r"^[A-Z_][A-Z0-9_]*=", current[0]):
                current.pop(0)
            if current:
                yield current
            current = []
        else:
            current.append(token)


def _options(command: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for param in command.params:
        for opt in (*param.opts, *getattr(param, "secondary_opts", [])):
            if opt.startswith("-"):
                found[opt] = param
    return found


def check_cli(argv: list[str]) -> list[str]:
    """What in ``argv`` (memoryctl ... or memoryd ...) the CLI does not have, or
    misses: unknown commands and options, required options left out."""
    program = Path(argv[0]).name
    app = memoryctl_app if program == "memoryctl" else memoryd_app
    command: Any = typer.main.get_command(app)
    problems: list[str] = []
    given: set[Any] = set()
    args = argv[1:]
    while args:
        token = args.pop(0)
        if token in ("--help", "-h"):
            return problems
        if token.startswith("-") and token != "-":
            name = token.split("=", 1)[0]
            param = _options(command).get(name)
            if param is None:
                problems.append(f"{' '.join(argv)}: no option {name}")
            elif param.param_type_name == "option" and not getattr(param, "is_flag", False):
                args = args[1:] if "=" not in token else args
            given.add(param)
            continue
        subcommands = getattr(command, "commands", None)  # a group (typer vendors click)
        if subcommands is not None:
            sub = subcommands.get(token)
            if sub is None:
                problems.append(f"{' '.join(argv)}: no command {token!r}")
                return problems
            command = sub
    if getattr(command, "commands", None) is not None:
        problems.append(f"{' '.join(argv)}: names a group, not a command")
        return problems
    for param in command.params:
        required = param.param_type_name == "option" and param.required and not param.envvar
        if required and param not in given:
            problems.append(f"{' '.join(argv)}: required option {param.opts[0]} left out")
    return problems


def make_targets() -> set[str]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-zA-Z][\w-]*):", text, re.M))
