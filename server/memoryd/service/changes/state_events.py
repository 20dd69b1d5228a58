"""The changes of an agent's state in the log: working memory, the profile, sessions
(their record, messages and attachments) and saved state (docs/watch.md: the table).

Agent state has no security level of its own: every caller who may read the agent
reads it, so its changes are at the lowest level (``STATE_LEVEL``). A record that no
longer decodes is reported without its content (the kind and what it names), never
by failing the watch: a read of it answers DATA_LOSS on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from memoryd.domain.agent_state import WorkingScope
from memoryd.domain.changes import Change, ChangeKind
from memoryd.domain.models import SecurityLevel
from memoryd.domain.records import Record, RecordKind, UndecodableRecord
from memoryd.service.agent_state.profile import profile_from_record
from memoryd.service.agent_state.state import SEPARATOR as STATE_SEPARATOR
from memoryd.service.agent_state.state import component_from
from memoryd.service.agent_state.working import working_memory_from
from memoryd.service.sessions.record import KEY_SEPARATOR as SESSION_SEPARATOR

#: The level of every agent-state change: whoever reads the agent reads its state.
STATE_LEVEL = SecurityLevel.PUBLIC
#: Records that are part of a session: a change of any of them changes the session.
_SESSION_PARTS = (RecordKind.SESSION_MESSAGE, RecordKind.SESSION_ATTACHMENT)

T = TypeVar("T")


def state_written(agent: str, record: Record) -> Change | None:
    """The change a put of ``record`` makes (None: not agent state)."""
    kind, key = record.kind, record.key
    if kind is RecordKind.WORKING:
        return Change(
            ChangeKind.WORKING_MEMORY_SET,
            agent,
            working_scope=WorkingScope.from_key(key),
            working_memory=_decoded(working_memory_from, record),
        )
    if kind is RecordKind.PROFILE:
        return Change(ChangeKind.PROFILE_SET, agent, profile=profile_from_record(record))
    if kind is RecordKind.SESSION or kind in _SESSION_PARTS:
        return Change(ChangeKind.SESSION_UPDATED, agent, session_id=_session_of(key))
    if kind is RecordKind.STATE:
        session_id, _, name = key.partition(STATE_SEPARATOR)
        state = _decoded(component_from, record)
        return Change(
            ChangeKind.STATE_SAVED, agent, session_id=session_id, component=name, state=state
        )
    return None


def state_deleted(agent: str, kind: RecordKind, key: str) -> Change | None:
    """The change a delete of the record ``key`` of ``kind`` makes (None: not agent
    state: key history and counters change with their keys)."""
    if kind is RecordKind.WORKING:
        scope = WorkingScope.from_key(key)
        return Change(ChangeKind.WORKING_MEMORY_DELETED, agent, working_scope=scope)
    if kind is RecordKind.PROFILE:
        return Change(ChangeKind.PROFILE_DELETED, agent)
    if kind is RecordKind.SESSION:
        return Change(ChangeKind.SESSION_DELETED, agent, session_id=key)
    if kind in _SESSION_PARTS:  # summarised turns expired or deleted: the session changed
        return Change(ChangeKind.SESSION_UPDATED, agent, session_id=_session_of(key))
    if kind is RecordKind.STATE:
        session_id, _, name = key.partition(STATE_SEPARATOR)
        return Change(ChangeKind.STATE_DELETED, agent, session_id=session_id, component=name)
    return None


def _session_of(key: str) -> str:
    """The session a SESSION, SESSION_MESSAGE or SESSION_ATTACHMENT record key names."""
    return key.split(SESSION_SEPARATOR, 1)[0]


def _decoded(decode: Callable[[Record], T], record: Record) -> T | None:
    try:
        return decode(record)
    except UndecodableRecord:
        return None
