"""DefaultRead: passive retrieval over keyed memory within a token limit.

Reads the valid keys the caller may see through the keyed-memory service (last
write wins, tombstones and above-clearance keys never appear), drops those whose
content says ``expired_at`` before ``current_time``, orders the rest by recency
(``updated_at``), then importance, then how many of the request's tags they carry,
then key, and renders one line per key::

    /user/preference/style [preference]: Prefers short answers with code first.

``type`` is the content's own "type" field when it has one, else the memory type of
the key's mirror; the summary is the content's "summary", else its "text", else the
content itself (a string, or compact JSON), on one line and shortened. Whole lines
are cut to fit ``token_limit``; the returned text's count never exceeds it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime

from memoryd.config import LimitsSettings, SnapshotSettings
from memoryd.domain.keyed import KeyEntry, KeyListQuery
from memoryd.domain.models import utcnow
from memoryd.domain.principal import CallScope
from memoryd.domain.snapshot import DefaultReadLine, DefaultReadRequest, DefaultReadResult
from memoryd.security.masking import Masker
from memoryd.service import validation as check
from memoryd.service.keyed import KeyedMemoryService
from memoryd.service.keyed_docs import mirror_fields
from memoryd.service.tokens import TokenCounter
from memoryd.service.validation import Violations

_SPACE = re.compile(r"\s+")
ELLIPSIS = "…"


def _one_line(text: str, max_chars: int) -> str:
    flat = _SPACE.sub(" ", text).strip()
    if len(flat) <= max_chars:
        return flat
    return flat[: max_chars - 1].rstrip() + ELLIPSIS


def render_line(line: DefaultReadLine) -> str:
    return f"{line.key} [{line.type}]: {line.summary}"


class DefaultReadService:
    def __init__(
        self,
        *,
        keyed: KeyedMemoryService,
        counter: TokenCounter,
        settings: SnapshotSettings,
        limits: LimitsSettings,
        masker: Masker | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._masker = masker
        self._keyed = keyed
        self._counter = counter
        self._settings = settings
        self._limits = limits
        self._clock = clock

    async def read(self, scope: CallScope, req: DefaultReadRequest) -> DefaultReadResult:
        s = self._settings
        limit = s.default_read_token_limit if req.token_limit is None else req.token_limit
        v = Violations()
        if not 1 <= limit <= s.max_token_budget:
            v.add("token_limit", f"must be between 1 and {s.max_token_budget}, got {limit}")
        check.check_tags(v, req.tags, self._limits)
        v.raise_if_any()
        now = req.current_time or self._clock()

        entries: list[KeyEntry] = []
        token = ""
        while True:
            listing = await self._keyed.list(
                scope,
                KeyListQuery(
                    prefix=req.prefix,
                    recursive=True,
                    page_size=self._limits.max_page_size,
                    page_token=token,
                ),
            )
            entries.extend(listing.entries)
            token = listing.next_page_token
            if not token:
                break
        ranked = rank_lines(
            entries, now, req.tags, self._limits, self._settings.default_read_summary_chars
        )
        mask = self._masker.for_scope(scope) if self._masker is not None else None
        if mask is not None:  # before the budget: it counts what is returned
            ranked = [replace(line, summary=mask(line.summary)) for line in ranked]

        lines: list[DefaultReadLine] = []
        used = 0
        for line in ranked:
            cost = self._counter.count(render_line(line))
            if used + cost <= limit:
                lines.append(line)
                used += cost
        text = "\n".join(render_line(line) for line in lines)
        tokens = self._counter.count(text)
        while tokens > limit and lines:  # a counter not additive over lines
            lines.pop()
            text = "\n".join(render_line(line) for line in lines)
            tokens = self._counter.count(text)
        return DefaultReadResult(
            text=text, lines=lines, tokens_used=tokens, token_counter=self._counter.name
        )


def rank_lines(
    entries: Iterable[KeyEntry],
    now: datetime,
    tags: Iterable[str],
    limits: LimitsSettings,
    summary_chars: int,
) -> list[DefaultReadLine]:
    """The unexpired entries' lines, best first: newest, then most important, then
    sharing most of ``tags``, then by key."""
    wanted = {t.strip() for t in tags}
    ranked: list[tuple[tuple[float, float, int, str], DefaultReadLine]] = []
    for entry in entries:
        # Stored content passed validation when written; a problem here only means a
        # reserved field is unusable, so it is ignored.
        fields = mirror_fields(entry.content, limits, Violations())
        if fields.expires_at is not None and fields.expires_at < now:
            continue
        content = entry.content
        kind = content.get("type") if isinstance(content, dict) else None
        type_name = kind.strip() if isinstance(kind, str) and kind.strip() else ""
        line = DefaultReadLine(
            key=entry.key,
            type=_one_line(type_name or fields.memory_type.value, 40),
            summary=_one_line(fields.text, summary_chars),
            updated_at=entry.updated_at,
        )
        overlap = len(wanted.intersection(fields.tags))
        ranked.append(
            ((-entry.updated_at.timestamp(), -fields.importance, -overlap, entry.key), line)
        )
    ranked.sort(key=lambda pair: pair[0])
    return [line for _, line in ranked]
