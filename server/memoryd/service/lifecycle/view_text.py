"""The text of an agent's ``memory.md`` and ``learnings.md``: rendered from memories
and parsed back into lines, for memory_views.py.

Each memory is one bullet line under the heading of its type, ending with its
marker ``<!-- m:<short id> -->`` (a stable hash of its id) so a person's edit of the
line can be matched back to the memory. The headings are the layered-memory
design's (``# USER MEMORY``, ``## User Preferences``, ``## Known Facts``, ``## User
Patterns``; ``## Proven Skills`` in learnings.md). What a tool returned, a web page or
a file (domain.models.QUOTED_KINDS) is rendered as quoted data after its source, as in
the default read: an agent that reads memory.md as its context reads it as data, and
nothing in it can end the quoting or fake a heading or a marker. Such a line reads
back as its content; when a person rewrote the quoting itself, as the line's text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from memoryd.domain.models import Memory, MemoryType, is_quoted
from memoryd.service.common.quoting import text_quoted, text_unquoted

#: Hex digits of a marker: unique enough within one agent's rendered memories.
SHORT_ID_CHARS = 12
_MARKER = re.compile(r"\s*<!--\s*m:([0-9a-f]+)\s*-->\s*$")
_BULLET = re.compile(r"^\s*[-*]\s+(.*)$")


@dataclass(frozen=True, slots=True)
class View:
    """One rendered file: its name, title and the (heading, type) of its sections."""

    name: str
    title: str
    sections: tuple[tuple[str, MemoryType], ...]

    @property
    def types(self) -> tuple[MemoryType, ...]:
        """The memory types the file shows."""
        return tuple(t for _, t in self.sections)


MEMORY_MD = View(
    "memory.md",
    "# USER MEMORY",
    (
        ("## User Preferences", MemoryType.PREFERENCE),
        ("## Known Facts", MemoryType.FACT),
        ("## User Patterns", MemoryType.PATTERN),
    ),
)
LEARNINGS_MD = View("learnings.md", "# LEARNINGS", (("## Proven Skills", MemoryType.SKILL),))
VIEWS = (MEMORY_MD, LEARNINGS_MD)
#: Where the last rendered text of each view is kept, inside the partition directory.
RENDERED_DIR = ".views"


@dataclass(frozen=True, slots=True)
class Line:
    """A bullet of a view: the memory it stands for (None: a new one), its type (the
    section it is under) and its text."""

    short_id: str | None
    memory_type: MemoryType
    content: str


def short_id(memory_id: str) -> str:
    """The marker id of a memory: stable for its id, never the id itself."""
    return hashlib.sha256(memory_id.encode()).hexdigest()[:SHORT_ID_CHARS]


def line_text(content: str) -> str:
    """A memory's content as one line (line breaks become spaces)."""
    return " ".join(content.split())


def bullet_text(memory: Memory) -> str:
    """A memory's line in a view, before its marker: quoted data after its source when
    its provenance is untrusted (tool, web, file), else its content on one line."""
    if memory.source is not None and is_quoted(memory.source):
        return text_quoted(memory.source, memory.content)
    return line_text(memory.content)


def render(view: View, memories: Iterable[Memory]) -> str:
    """The file's text: every memory of the view's types under its heading, oldest
    first (a new memory lands at the end of its section, so lines do not move)."""
    by_type: dict[MemoryType, list[Memory]] = {t: [] for t in view.types}
    for m in sorted(memories, key=lambda m: (m.created_at, m.id)):
        if m.memory_type in by_type:
            by_type[m.memory_type].append(m)
    parts = [view.title, ""]
    for heading, memory_type in view.sections:
        parts.append(heading)
        parts.extend(
            f"- {bullet_text(m)} <!-- m:{short_id(m.id)} -->" for m in by_type[memory_type]
        )
        parts.append("")
    return "\n".join(parts)


def parse(view: View, text: str) -> list[Line]:
    """The bullets of ``text`` under the view's headings (bullets elsewhere, and
    empty ones, are not memories)."""
    headings = dict(view.sections)
    current: MemoryType | None = None
    lines: list[Line] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#"):
            current = headings.get(" ".join(stripped.split()))
            continue
        bullet = _BULLET.match(raw)
        if current is None or bullet is None:
            continue
        body = bullet.group(1)
        marker = _MARKER.search(body)
        found = marker.group(1) if marker else None
        shown = body[: marker.start()] if marker else body
        content = text_unquoted(shown.strip())
        if content is None:
            content = line_text(shown)
        if content.strip():
            lines.append(Line(found, current, content))
    return lines
