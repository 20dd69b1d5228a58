"""The change feed (Watch): what a watch asks for and what it streams (docs/watch.md)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from memoryd.domain.agent_state import AgentProfile, WorkingMemory, WorkingScope
from memoryd.domain.keyed import KeyEntry
from memoryd.domain.models import Memory
from memoryd.domain.snapshot import StateComponent


class ChangeKind(enum.StrEnum):
    """What one change did."""

    MEMORY_CREATED = "memory_created"
    MEMORY_UPDATED = "memory_updated"
    MEMORY_ARCHIVED = "memory_archived"
    MEMORY_DELETED = "memory_deleted"
    KEY_SET = "key_set"
    #: A tombstone written, or the key's slot purged (then ``key_entry`` is None).
    KEY_DELETED = "key_deleted"
    WORKING_MEMORY_SET = "working_memory_set"
    #: Deleted or expired (``working_scope`` only).
    WORKING_MEMORY_DELETED = "working_memory_deleted"
    PROFILE_SET = "profile_set"
    PROFILE_DELETED = "profile_deleted"
    #: Messages appended, summarised or deleted, the fixed zone, the summary.
    SESSION_UPDATED = "session_updated"
    SESSION_DELETED = "session_deleted"
    STATE_SAVED = "state_saved"
    STATE_DELETED = "state_deleted"


class WatchStart(enum.StrEnum):
    """Where a watch without a cursor starts."""

    NOW = "now"
    OLDEST = "oldest"


@dataclass(frozen=True, slots=True)
class WatchQuery:
    """A Watch request: resume after ``cursor``, or start at ``start`` without one."""

    cursor: str = ""
    start: WatchStart = WatchStart.NOW
    #: Every agent of the caller's tenant (admin), not only the call's agent.
    tenant_wide: bool = False
    #: Keep streaming once caught up (False: end after the caught-up mark).
    follow: bool = False


@dataclass(frozen=True, slots=True)
class Change:
    """One change: its kind, where it happened and what it left."""

    kind: ChangeKind
    agent_id: str
    memory_id: str = ""
    key: str = ""
    #: The memory as written (created, updated, archived).
    memory: Memory | None = None
    #: The key's entry as written (set, or a tombstone).
    key_entry: KeyEntry | None = None
    #: The working memory's scope (set, deleted) and what was written (set).
    working_scope: WorkingScope | None = None
    working_memory: WorkingMemory | None = None
    #: The profile as written.
    profile: AgentProfile | None = None
    #: The session of a session or a saved state change.
    session_id: str = ""
    #: A state component's name (saved, deleted) and what was saved.
    component: str = ""
    state: StateComponent | None = None


@dataclass(frozen=True, slots=True)
class WatchItem:
    """One streamed message: changes in order, or the mark that the watch has read
    everything there is (no changes); ``cursor`` resumes after it either way."""

    cursor: str
    changes: tuple[Change, ...] = ()
    caught_up: bool = False
