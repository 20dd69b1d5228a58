"""Where a memory sits in a conversation: its session and its sequence number there.

Kept in the memory's metadata under the keys a session's recorded memories have always
carried (service/sessions: ``{"session_id": id, "seq": n}``), whether the daemon
recorded the memory from a session or a client said so on Remember
(MemoryDraft.session_id / sequence). Context expansion (service/memories/context.py)
finds a recalled memory's neighbours in its session by them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The metadata keys of a memory's session and its sequence number in it.
SESSION_ID_KEY = "session_id"
SEQUENCE_KEY = "seq"
#: Context expansion reaches at most this many turns either side of a hit.
MAX_CONTEXT_WINDOW = 5


@dataclass(frozen=True, slots=True)
class SessionPosition:
    """A memory's session and its sequence number (turn) there."""

    session_id: str
    sequence: int


def position_of(metadata: Mapping[str, Any]) -> SessionPosition | None:
    """The session position ``metadata`` records; None without a session id or a whole
    sequence number (a Struct carries numbers as doubles: 3.0 counts as 3)."""
    session = metadata.get(SESSION_ID_KEY)
    sequence = metadata.get(SEQUENCE_KEY)
    if not isinstance(session, str) or not session or isinstance(sequence, bool):
        return None
    if isinstance(sequence, float) and sequence.is_integer():
        sequence = int(sequence)
    if not isinstance(sequence, int):
        return None
    return SessionPosition(session, sequence)


def with_position(metadata: Mapping[str, Any], session_id: str, sequence: int) -> dict[str, Any]:
    """``metadata`` with the session and sequence a writer named (unset: "" and 0) added."""
    out = dict(metadata)
    if session_id:
        out[SESSION_ID_KEY] = session_id
    if sequence:
        out[SEQUENCE_KEY] = sequence
    return out
