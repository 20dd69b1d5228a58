"""Domain objects of the SnapshotService: budgeted snapshots, default read, saved state."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from memoryd.domain.agent_state import WorkingScope
from memoryd.domain.as_of import AsOf
from memoryd.domain.json_text import Json, dumps
from memoryd.domain.models import Provenance, SecurityLevel, TrustFilter, Vector
from memoryd.domain.requests import Degradation


class SnapshotSection(enum.StrEnum):
    """The sections a snapshot is built from, in their default priority."""

    PINNED = "pinned"
    PROFILE = "profile"
    WORKING = "working"
    SEMANTIC = "semantic"
    RECENT = "recent"
    SESSION = "session"


#: The fill order when a request names none (also the order sections are rendered in).
DEFAULT_PRIORITY: tuple[SnapshotSection, ...] = tuple(SnapshotSection)
#: Memories tagged with this fill the pinned section.
PINNED_TAG = "pinned"


class SnapshotFormat(enum.StrEnum):
    """How a snapshot's text is rendered."""

    MARKDOWN = "markdown"
    #: One ``<long_term_memory>`` block, a child element per section and per item.
    XML = "xml"
    #: The layered-memory design's context block (seed 001, §4.2): ``# USER MEMORY``,
    #: the memories grouped by type (``## User Preferences``, ``## Known Facts``,
    #: ``## User Patterns``, ``## Proven Skills``, ``## Past Episodes``), then the other
    #: sections as in markdown.
    USER_MEMORY = "user_memory"


@dataclass(frozen=True, slots=True)
class SnapshotRequest:
    """A BuildSnapshot request; None fields take the server's defaults."""

    namespace: str | None = None
    trigger: str = ""
    trigger_embedding: Vector | None = None
    focus: str = ""
    token_budget: int | None = None
    #: Empty: every section.
    sections: tuple[SnapshotSection, ...] = ()
    #: Fill order; sections it leaves out follow in the default order.
    priority: tuple[SnapshotSection, ...] = ()
    format: SnapshotFormat = SnapshotFormat.MARKDOWN
    scope: WorkingScope | None = None
    session_id: str = ""
    semantic_limit: int | None = None
    recent_limit: int | None = None
    recent_window: timedelta | None = None
    max_security_level: SecurityLevel = SecurityLevel.RESTRICTED
    #: The semantic section leaves out hits whose absolute relevance is below this
    #: (RecallQuery.min_relevance); None: no threshold.
    min_relevance: float | None = None
    #: The semantic section's context expansion (RecallQuery.context_window); None:
    #: the server's default.
    context_window: int | None = None
    #: Only memories whose provenance it admits fill the memory sections (pinned,
    #: semantic, recent); None: any provenance.
    trust: TrustFilter | None = None
    #: The snapshot as of a past moment (docs/as-of.md); None: now.
    as_of: AsOf | None = None


@dataclass(frozen=True, slots=True)
class SnapshotItem:
    """One item a snapshot holds."""

    section: SnapshotSection
    #: Memory id, working scope ("thread/resource"), "agent.md", or a session part
    #: ("trigger", "focus", "instruction:<n>", "summary", "message:<seq>").
    id: str
    #: The item's text as rendered (truncated ones end in an ellipsis).
    text: str
    #: Tokens of the item's rendered line.
    tokens: int
    truncated: bool = False
    #: A memory item's provenance (None for other items and unattributed memories);
    #: tool, web and file content is rendered as quoted data with it.
    source: Provenance | None = None


@dataclass(frozen=True, slots=True)
class SectionUsage:
    """Tokens and items one section of a snapshot took."""

    section: SnapshotSection
    #: Tokens of the section's rendered block (its header included).
    tokens: int
    items: int


@dataclass(frozen=True, slots=True)
class OmittedItem:
    """An item a snapshot left out, and why."""

    section: SnapshotSection
    id: str
    #: "budget" (did not fit) or "duplicate" (already in an earlier section).
    reason: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A built snapshot: its text, items, usage per section, omissions and degradations."""

    text: str
    items: list[SnapshotItem]
    usage: list[SectionUsage]
    #: Tokens of ``text`` as counted by ``token_counter``; never above token_budget.
    tokens_used: int
    token_budget: int
    omitted: list[OmittedItem]
    token_counter: str
    degraded: tuple[Degradation, ...] = ()


# ---------------------------------------------------------------- default read


@dataclass(frozen=True, slots=True)
class DefaultReadRequest:
    """What DefaultRead reads: a token limit, tags to rank higher, a prefix and a time."""

    token_limit: int | None = None
    tags: tuple[str, ...] = ()
    #: Entries whose content ``expired_at`` is before this are skipped; None: now.
    current_time: datetime | None = None
    prefix: str = ""
    #: The default read as of a past moment (docs/as-of.md); None: now.
    as_of: AsOf | None = None


@dataclass(frozen=True, slots=True)
class DefaultReadLine:
    """One key's line of a default read."""

    key: str
    #: The content's own "type" field; "" when it has none.
    type: str
    summary: str
    updated_at: datetime
    #: The key's content as stored (its JSON text).
    content_json: str = ""
    #: The ranking score (service/snapshot/default_read.py).
    score: float = 0.0
    #: The source of the key's last write (None when it had none); tool, web and
    #: file content is rendered as quoted data with it.
    source: Provenance | None = None


@dataclass(frozen=True, slots=True)
class DefaultReadResult:
    """A default read: the text, its lines and the tokens used."""

    text: str
    lines: list[DefaultReadLine]
    tokens_used: int
    token_counter: str


# ---------------------------------------------------------------- saved state


@dataclass(frozen=True, slots=True)
class StateWrite:
    """One component of a SaveState request."""

    name: str
    #: A JSON object, stored as its text.
    state: Json


@dataclass(frozen=True, slots=True)
class StateComponent:
    """One saved component of a session: its state (and the text as written) and version."""

    name: str
    state: dict[str, Any]
    version: int
    updated_at: datetime
    #: The state as stored: the writer's JSON text. Left empty, it is made from
    #: ``state``.
    state_json: str = ""

    def __post_init__(self) -> None:
        if not self.state_json:
            object.__setattr__(self, "state_json", dumps(self.state))
