"""SaveState / LoadState: named components of a session's state, each a JSON object.

Like AgentScope's StateModule: a run saves the state of its components (a planner,
a tool cache...) under the session's id and a later run loads them back. One STATE
record per component, key ``<session id>\\x00<component name>``, holding the state as
the writer's JSON text (``state_json``: ``1.50`` reads back as written); every save of a
component bumps its version (last write wins; saves of one session are serialised
in this process). A component is limited to ``snapshot.max_state_bytes`` as compact
JSON and a session to ``snapshot.max_state_components`` components.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memoryd.config import SessionSettings, SnapshotSettings
from memoryd.domain import json_text
from memoryd.domain.errors import ResourceExhausted
from memoryd.domain.limits import next_version
from memoryd.domain.models import Partition
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind, UndecodableRecord, stored_json
from memoryd.domain.snapshot import StateComponent, StateWrite
from memoryd.service.agent_state.working import check_identifier
from memoryd.service.common.record_writes import RecordService
from memoryd.service.common.scanning import scan_records
from memoryd.service.common.undecodable import decodable
from memoryd.service.common.validation import Violations

SEPARATOR = "\x00"
#: STATE records read per store call when listing a session's components.
_SCAN_BATCH = 200


def state_key(session_id: str, name: str) -> str:
    return f"{session_id}{SEPARATOR}{name}"


def component_from(record: Record) -> StateComponent:
    """A STATE record's component; UndecodableRecord (DATA_LOSS) when its state no
    longer decodes."""
    session_id, _, name = record.key.partition(SEPARATOR)
    what = f"state component {name!r} of session {session_id!r}"
    text = record.doc.get("state_json")
    if not isinstance(text, str):  # saved before the text was kept
        try:
            text = json_text.dumps(dict(record.doc.get("state", {})))
        except (TypeError, ValueError) as exc:
            raise UndecodableRecord(what, f"not JSON: {exc}") from None
    state = stored_json(text, what)
    if not isinstance(state.value, dict):
        raise UndecodableRecord(what, "not a JSON object")
    return StateComponent(
        name=name,
        state=state.value,
        state_json=state.text,
        version=record.version,
        updated_at=record.updated_at,
    )


def state_record(session_id: str, component: StateComponent) -> Record:
    """The text is the one stored form of the state."""
    return Record(
        kind=RecordKind.STATE,
        key=state_key(session_id, component.name),
        doc={"state_json": component.state_json},
        version=component.version,
        updated_at=component.updated_at,
    )


@dataclass(eq=False, kw_only=True)
class StateService(RecordService):
    """Sessions' saved state components: saved, loaded and listed by name."""

    settings: SnapshotSettings
    sessions: SessionSettings

    async def save(
        self, scope: CallScope, session_id: str, writes: Sequence[StateWrite]
    ) -> list[StateComponent]:
        s = self.settings
        v = Violations()
        self._check_session(v, session_id)
        if not writes:
            v.add("components", "must not be empty")
        elif len(writes) > s.max_state_components:
            v.add(
                "components",
                f"has {len(writes)} components; the limit is {s.max_state_components} "
                "(snapshot.max_state_components)",
            )
        for i, write in enumerate(writes):
            self._check_name(v, write.name, f"components[{i}].name")
            if write.name and write.name in (w.name for w in writes[:i]):
                v.add(f"components[{i}].name", f"repeats {write.name!r}")
            size = len(write.state.text.encode())
            if not isinstance(write.state.value, dict):
                v.add(f"components[{i}].state", "must be a JSON object")
            elif size > s.max_state_bytes:
                v.add(
                    f"components[{i}].state",
                    f"is {size} bytes as JSON; the limit is {s.max_state_bytes} "
                    "(snapshot.max_state_bytes)",
                )
        v.raise_if_any()

        partition = scope.partition
        keys = [state_key(session_id, w.name) for w in writes]

        async def attempt() -> list[StateComponent]:
            current = {
                r.key: r for r in await self.records.get_records(partition, RecordKind.STATE, keys)
            }
            adding = sum(1 for k in keys if k not in current)
            if adding:
                held = len(await self._all(partition, session_id))
                if held + adding > s.max_state_components:
                    raise ResourceExhausted(
                        f"session {session_id!r} holds {held} state components; saving "
                        f"{adding} more would exceed snapshot.max_state_components "
                        f"({s.max_state_components})"
                    )
            now = self.clock()
            saved = [
                StateComponent(
                    name=w.name,
                    state=dict(w.state.members),
                    state_json=w.state.text,
                    version=next_version(current[k].version) if k in current else 1,
                    updated_at=now,
                )
                for w, k in zip(writes, keys, strict=True)
            ]
            records = [state_record(session_id, c) for c in saved]
            if not self._writes.shared:
                await self.records.put_records(partition, records)  # one write, as before
                return saved
            # Replicas: each component over the version read (a lost race starts over;
            # components already written then count as read).
            for record in records:
                await self._writes.replace(partition, record, current.get(record.key))
            return saved

        return await self._writes.run((partition, session_id), attempt)

    async def load(
        self, scope: CallScope, session_id: str, names: Sequence[str] = ()
    ) -> list[StateComponent]:
        """The named components that exist (every one when ``names`` is empty), by name."""
        v = Violations()
        self._check_session(v, session_id)
        for i, name in enumerate(names):
            self._check_name(v, name, f"names[{i}]")
        v.raise_if_any()
        if names:
            keys = [state_key(session_id, n) for n in dict.fromkeys(names)]
            found = await self.records.get_records(scope.partition, RecordKind.STATE, keys)
        else:
            found = await self._all(scope.partition, session_id)
        return sorted(decodable(found, component_from), key=lambda c: c.name)

    async def _all(self, partition: Partition, session_id: str) -> list[Record]:
        prefix = session_id + SEPARATOR
        pages = scan_records(self.records, partition, RecordKind.STATE, _SCAN_BATCH, prefix)
        return [r async for page in pages for r in page]

    def _check_session(self, v: Violations, session_id: str) -> None:
        if not session_id:
            v.add("session_id", "must not be empty")
        check_identifier(v, session_id, "session_id", self.sessions.max_session_id_bytes)

    def _check_name(self, v: Violations, name: str, field: str) -> None:
        if not name.strip():
            v.add(field, "must not be empty")
        check_identifier(v, name, field, self.settings.max_state_name_bytes)
