"""The agent profile: one ``agent.md`` document per partition, with an etag.

The etag is the first 32 hex digits of SHA-256 over the version and the content,
returned unquoted. ``if_match`` accepts it bare or in double quotes (as in HTTP);
"none" means "only if no profile exists yet" and "*" "only if one exists". Any
mismatch is FAILED_PRECONDITION. The check and the write are one read-modify-write
(service/common/record_writes.py): exact across replicas of a shared store too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from memoryd.config import ProfileSettings
from memoryd.domain.agent_state import IF_MATCH_ANY, IF_MATCH_NONE, PROFILE_KEY, AgentProfile
from memoryd.domain.errors import FailedPrecondition, InvalidArgument, NotFound
from memoryd.domain.limits import next_version
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind
from memoryd.service.common.record_writes import RecordService


def profile_etag(version: int, content: str) -> str:
    digest = hashlib.sha256(f"{version}\n".encode() + content.encode("utf-8"))
    return digest.hexdigest()[:32]


def profile_from_record(record: Record) -> AgentProfile:
    """The profile a stored record holds, with its etag."""
    content = str(record.doc.get("content", ""))
    return AgentProfile(
        content=content,
        etag=profile_etag(record.version, content),
        version=record.version,
        updated_at=record.updated_at,
    )


@dataclass(eq=False, kw_only=True)
class ProfileService(RecordService):
    """Each agent's profile document: read, and written under its etag."""

    settings: ProfileSettings

    async def get(self, scope: CallScope) -> AgentProfile:
        found = await self._load(scope)
        if found is None:
            raise NotFound(f"agent {scope.partition.agent_id!r} has no profile")
        return profile_from_record(found)

    async def set(self, scope: CallScope, content: str, if_match: str = "") -> AgentProfile:
        """Write the document; ``if_match`` "" writes unconditionally."""
        size = len(content.encode("utf-8"))
        if size > self.settings.max_content_bytes:
            raise InvalidArgument.field(
                "content",
                f"is {size} bytes; the limit is {self.settings.max_content_bytes} "
                "(profile.max_content_bytes)",
            )
        if "\x00" in content:
            raise InvalidArgument.field("content", "must not contain NUL characters")
        expected = if_match.strip()
        if len(expected) >= 2 and expected[0] == expected[-1] == '"':
            expected = expected[1:-1]

        async def attempt() -> Record:
            current = await self._load(scope)
            _check_precondition(expected, None if current is None else profile_from_record(current))
            record = Record(
                kind=RecordKind.PROFILE,
                key=PROFILE_KEY,
                doc={"content": content},
                version=1 if current is None else next_version(current.version),
                updated_at=self.clock(),
            )
            return await self._writes.replace(scope.partition, record, current)

        return profile_from_record(await self._writes.run(scope.partition, attempt))

    async def _load(self, scope: CallScope) -> Record | None:
        found = await self.records.get_records(scope.partition, RecordKind.PROFILE, [PROFILE_KEY])
        return found[0] if found else None


def _check_precondition(expected: str, current: AgentProfile | None) -> None:
    if not expected:
        return
    if expected.lower() == IF_MATCH_NONE:
        if current is not None:
            raise FailedPrecondition(
                f'if_match "none": a profile already exists (etag {current.etag})'
            )
        return
    if current is None:
        raise FailedPrecondition(f'if_match {expected!r}: no profile exists yet (use "none")')
    if expected != IF_MATCH_ANY and expected.lower() != current.etag:
        raise FailedPrecondition(
            f"if_match {expected!r} does not match the current etag {current.etag}"
        )
