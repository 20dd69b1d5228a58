"""Validation of session requests: ids, TTLs, messages, tool calls, compression."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from memoryd.config import SessionSettings
from memoryd.domain.agent_state import (
    AttachmentQuery,
    MessageDraft,
    MessageRole,
    SessionCompression,
    SessionMessagesQuery,
)
from memoryd.domain.limits import MAX_TTL
from memoryd.service.agent_state.working import check_identifier, compact_json_size
from memoryd.service.common.validation import Violations, check_limit

#: Largest per-session compress_threshold_messages: the turns not yet summarised live
#: in the session's header record (at most this many x sessions.max_message_bytes).
MAX_SESSION_THRESHOLD = 200
#: Largest token budget a request may name (window or per-session context budget).
MAX_TOKEN_BUDGET = 10_000_000
#: Tool calls on one message.
MAX_TOOL_CALLS = 128


class SessionChecks:
    def __init__(self, settings: SessionSettings) -> None:
        self._settings = settings

    def session_id(self, v: Violations, session_id: str, field: str = "session_id") -> None:
        if not session_id:
            v.add(field, "must not be empty")
        check_identifier(v, session_id, field, self._settings.max_session_id_bytes)

    @staticmethod
    def ttl(v: Violations, ttl: timedelta | None) -> None:
        if ttl is not None and not timedelta(0) < ttl <= MAX_TTL:
            v.add("ttl", f"must be positive and at most {MAX_TTL.days} days")

    def text(
        self, v: Violations, text: str, field: str, *, required: bool, attachment: bool = False
    ) -> None:
        """``attachment``: a tool result, which may be as large as an attachment (it
        is offloaded when over max_message_bytes, or refused then)."""
        if required and not text.strip():
            v.add(field, "must not be empty")
        size = len(text.encode("utf-8"))
        limit, name = self._settings.max_message_bytes, "sessions.max_message_bytes"
        if attachment and self._settings.max_attachment_bytes > limit:
            limit, name = self._settings.max_attachment_bytes, "sessions.max_attachment_bytes"
        if size > limit:
            v.add(field, f"is {size} bytes; the limit is {limit} ({name})")
        if "\x00" in text:
            v.add(field, "must not contain NUL characters")

    def messages(
        self, v: Violations, drafts: Sequence[MessageDraft], max_batch_size: int, now: datetime
    ) -> None:
        """The messages of one append: at least one, at most ``max_batch_size``
        (limits.max_batch_size), each valid."""
        if not drafts:
            v.add("messages", "must not be empty")
        elif len(drafts) > max_batch_size:
            v.add(
                "messages",
                f"has {len(drafts)} messages; the limit is {max_batch_size} "
                "(limits.max_batch_size)",
            )
        for i, draft in enumerate(drafts):
            self.message(v, draft, f"messages[{i}].", now)

    def message(self, v: Violations, draft: MessageDraft, prefix: str, now: datetime) -> None:
        if draft.role is None:
            v.add(f"{prefix}role", "must be set (user, assistant, system or tool)")
        # A tool result may be empty, and so may an assistant turn that only calls tools.
        required = draft.role is not MessageRole.TOOL and not draft.tool_calls
        self.text(
            v,
            draft.content,
            f"{prefix}content",
            required=required,
            attachment=draft.role is MessageRole.TOOL,
        )
        id_bytes = self._settings.max_session_id_bytes
        for name, value in (("name", draft.name), ("tool_call_id", draft.tool_call_id)):
            check_identifier(v, value, f"{prefix}{name}", id_bytes)
        if draft.created_at is not None and draft.created_at > now:
            v.add(f"{prefix}created_at", "must not be in the future")
        self.tool_calls(v, draft, prefix)

    def tool_calls(self, v: Violations, draft: MessageDraft, prefix: str) -> None:
        if not draft.tool_calls:
            return
        if draft.role not in (MessageRole.ASSISTANT, None):
            v.add(f"{prefix}tool_calls", "only assistant messages call tools")
        if len(draft.tool_calls) > MAX_TOOL_CALLS:
            v.add(f"{prefix}tool_calls", f"has more than {MAX_TOOL_CALLS} calls")
        id_bytes = self._settings.max_session_id_bytes
        total = len(draft.content.encode())
        for j, call in enumerate(draft.tool_calls[:MAX_TOOL_CALLS]):
            where = f"{prefix}tool_calls[{j}]."
            if not call.name.strip():
                v.add(f"{where}name", "must not be empty")
            check_identifier(v, call.name, f"{where}name", id_bytes)
            check_identifier(v, call.id, f"{where}id", id_bytes)
            size = compact_json_size(call.arguments)
            if size is None:
                v.add(f"{where}arguments", "is not valid JSON")
            else:
                total += size
        if total > self._settings.max_message_bytes:
            v.add(
                f"{prefix}tool_calls",
                f"the message with its tool calls is {total} bytes; the limit is "
                f"{self._settings.max_message_bytes} (sessions.max_message_bytes)",
            )

    def attachment_query(self, query: AttachmentQuery) -> None:
        """Refuse a GetSessionAttachment request naming each bad field."""
        v = Violations()
        self.session_id(v, query.session_id)
        if query.seq < 1:
            v.add("seq", "must be positive")
        if query.offset < 0:
            v.add("offset", "must not be negative")
        if query.max_chars < 0:
            v.add("max_chars", "must not be negative")
        v.raise_if_any()

    def messages_query(self, query: SessionMessagesQuery, max_page_size: int) -> None:
        """Refuse a GetSessionMessages request naming each bad field."""
        v = Violations()
        self.session_id(v, query.session_id)
        check_limit(v, query.page_size, max_page_size, "page_size")
        if query.from_seq < 0:
            v.add("from_seq", "must not be negative")
        if query.to_seq < 0:
            v.add("to_seq", "must not be negative")
        elif query.to_seq and query.to_seq < query.from_seq:
            v.add("to_seq", "must not be below from_seq")
        v.raise_if_any()

    def compression(self, v: Violations, c: SessionCompression, merged: SessionCompression) -> None:
        """Per-session overrides ``c``; ``merged`` (the session's overrides with ``c``
        applied) must keep keep_recent_messages below compress_threshold_messages."""
        threshold = c.compress_threshold_messages
        if threshold is not None and not 2 <= threshold <= MAX_SESSION_THRESHOLD:
            v.add(
                "compression.compress_threshold_messages",
                f"must be between 2 and {MAX_SESSION_THRESHOLD}",
            )
        ratio = c.compress_token_ratio
        if ratio is not None and not 0 < ratio <= 1:
            v.add("compression.compress_token_ratio", "must be in (0, 1]")
        budget = c.context_budget_tokens
        if budget is not None and not 16 <= budget <= MAX_TOKEN_BUDGET:
            v.add("compression.context_budget_tokens", f"must be between 16 and {MAX_TOKEN_BUDGET}")
        keep = c.keep_recent_messages
        if keep is not None and keep < 0:
            v.add("compression.keep_recent_messages", "must not be negative")
        offload = c.offload_bytes
        if offload is not None and not 0 <= offload <= self._settings.max_attachment_bytes:
            v.add(
                "compression.offload_bytes",
                f"must be between 0 (never) and {self._settings.max_attachment_bytes} "
                "(sessions.max_attachment_bytes)",
            )
        s = self._settings
        effective_threshold = merged.compress_threshold_messages or s.compress_threshold_messages
        effective_keep = (
            s.keep_recent_messages
            if merged.keep_recent_messages is None
            else merged.keep_recent_messages
        )
        if effective_keep >= effective_threshold and not v.items:
            v.add(
                "compression.keep_recent_messages",
                f"must be below compress_threshold_messages ({effective_threshold})",
            )
