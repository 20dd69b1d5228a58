"""Documents that are not vector-searched: keyed-memory slots and their history,
working memory, agent profiles, sessions and saved component state.

They share one shape so every backend stores them the same way (a LanceDB table, a
Qdrant collection per kind) and one conformance suite covers them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memoryd.domain.errors import DataLoss
from memoryd.domain.json_text import Json, JsonTextError, parse


class RecordKind(enum.StrEnum):
    """The kinds of record a RecordStore holds, one per kind of state beside memories."""

    #: Latest state of a keyed-memory slot; record key = the normalised key path.
    KEY = "key"
    #: One write of a key (history); record key = "<key path>\x00<version:020d>".
    KEY_EVENT = "key_event"
    #: Working memory of a scope; record key = "<thread_id>\x00<resource_id>".
    WORKING = "working"
    #: The agent.md document; record key = "agent.md".
    PROFILE = "profile"
    #: A session (fixed zone, summary, the turns not yet summarised); record key =
    #: session id.
    SESSION = "session"
    #: A summarised turn of a session, kept until the session expires; record key =
    #: "<session id>\x00<generation>\x00<seq:012d>" (see service/sessions/record.py).
    SESSION_MESSAGE = "session_message"
    #: The full content of an offloaded session message, kept with its messages; record
    #: key = "<session id>\x00<generation>\x00<seq:012d>\x00<sha256>".
    SESSION_ATTACHMENT = "session_attachment"
    #: Saved component state; record key = "<session id>\x00<component name>".
    STATE = "state"
    #: A per-partition sequence; record key = its name (e.g. "keys"), value = ``version``.
    #: Written in the same batch as the records it numbers, so it never lags them.
    COUNTER = "counter"


@dataclass(slots=True)
class Record:
    """A JSON document in a partition, addressed by (kind, key)."""

    kind: RecordKind
    key: str
    doc: dict[str, Any]
    version: int
    updated_at: datetime
    expires_at: datetime | None = None
    #: Identifies the write that stored this state (unique per write; "" where the
    #: backend does not keep it). Conditional writes compare it (RecordStore.put_record_if).
    write_id: str = ""
    #: The ids of the record's latest writes, oldest first, ``write_id`` last: a backend
    #: whose conditional writes are confirmed by reading the record back keeps them
    #: (a write followed at once by another is still found); () elsewhere.
    lineage: tuple[str, ...] = ()

    def expired(self, now: datetime) -> bool:
        """Whether the record's ``expires_at`` is at or before ``now`` (it is gone to
        every read from then on, whether or not a purge has removed it yet)."""
        return self.expires_at is not None and self.expires_at <= now


class UndecodableRecord(DataLoss):
    """A stored record that no longer decodes: it holds what the daemon refuses today
    (a JSON number beyond a double, say), written before the rule. A read that names
    it answers DATA_LOSS; a listing or an export skips it, reporting a degradation
    (service/common/undecodable.py)."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(
            f"the stored {what} no longer decodes ({reason}); write it again or delete it"
        )
        self.what = what
        self.reason = reason


def stored_json(text: str, what: str) -> Json:
    """A stored JSON text, checked as it is read (domain/json_text.py): UndecodableRecord
    naming ``what`` when the checks it passed when written have since grown."""
    try:
        return Json(text, parse(text))
    except JsonTextError as exc:
        raise UndecodableRecord(what, str(exc)) from None
