"""Put an agent's memory into a chat prompt.

:func:`memory_context` builds a snapshot with BuildSnapshot. When the daemon answers
UNIMPLEMENTED (an older or reduced server), it falls back to Recall for the trigger
(without a trigger: the most recent memories) and renders them itself, and says so (``source="recall"`` and a
``note``). :func:`inject_context` puts the text into a list of chat messages, as its
own system message or merged into the existing one. On a client both are one call:
``client.memory_context(...)`` and ``client.with_memory(messages, ...)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memoryd_client.core import Unary
from memoryd_client.errors import MemorydError, UnimplementedError
from memoryd_client.ops import memories, snapshot
from memoryd_client.results import Degradation, Memory, Recalled, Snapshot
from memoryd_client.tool_results import memory_line

#: Opens the injected block, so it can be found (and replaced) in a later turn.
HEADER = "## What you remember"
Mode = Literal["system", "merge"]
ChatMessage = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class MemoryContext:
    """Memory text ready for a prompt and where it came from."""

    text: str
    #: "snapshot" (BuildSnapshot) or "recall" (the fallback).
    source: str
    #: Why the fallback was taken, empty otherwise.
    note: str = ""
    tokens_used: int = 0
    degraded: tuple[Degradation, ...] = ()


def _from_snapshot(s: Snapshot) -> MemoryContext:
    return MemoryContext(s.text, "snapshot", tokens_used=s.tokens_used, degraded=s.degraded)


def render_recall(hits: Recalled) -> str:
    """Recall hits as a markdown list, best first; tool, web and file content quoted
    (:func:`memoryd_client.tool_results.memory_line`)."""
    return "\n".join(memory_line(hit.memory.content, _kind(hit.memory)) for hit in hits)


def _kind(m: Memory) -> str | None:
    return m.source.kind if m.source is not None else None


def memory_context(
    agent_id: str,
    trigger: str = "",
    *,
    token_budget: int | None = None,
    session_id: str = "",
    thread_id: str = "",
    resource_id: str = "",
    namespace: str | None = None,
    format: Literal["markdown", "xml", "user_memory"] = "markdown",
    recall_limit: int = 5,
) -> Unary[MemoryContext]:
    """BuildSnapshot for ``trigger``; on UNIMPLEMENTED, Recall of ``trigger`` instead
    (without a trigger there is nothing to recall: the text is then empty)."""
    request = snapshot.build_snapshot(
        agent_id,
        trigger,
        token_budget=token_budget,
        format=format,
        namespace=namespace,
        thread_id=thread_id,
        resource_id=resource_id,
        session_id=session_id,
    )

    def fallback(error: MemorydError) -> Unary[MemoryContext] | None:
        if not isinstance(error, UnimplementedError):
            return None
        note = f"BuildSnapshot is not available ({error.message}); used Recall instead"
        if not trigger:  # nothing to search for: the most recent memories instead
            recent = memories.list_memories(agent_id, page_size=recall_limit, namespace=namespace)
            return Unary(
                recent.service,
                recent.method,
                recent.request,
                lambda r: MemoryContext(
                    "\n".join(memory_line(m.content, _kind(m)) for m in recent.parse(r)),
                    "recall",
                    note + " (no trigger: the most recent memories)",
                ),
                idempotent=True,
            )
        recall = memories.recall(agent_id, trigger, limit=recall_limit, namespace=namespace)
        return Unary(
            recall.service,
            recall.method,
            recall.request,
            lambda r: _from_recall(recall.parse(r), note),
            idempotent=True,
        )

    return Unary(
        request.service,
        request.method,
        request.request,
        lambda r: _from_snapshot(Snapshot.from_pb(r)),
        idempotent=True,
        fallback=fallback,
    )


def _from_recall(hits: Recalled, note: str) -> MemoryContext:
    return MemoryContext(render_recall(hits), "recall", note, degraded=hits.degraded)


def inject_context(
    messages: Sequence[ChatMessage],
    context: MemoryContext | str,
    *,
    mode: Mode = "merge",
    header: str = HEADER,
) -> list[dict[str, Any]]:
    """A new message list with the memory text added (``messages`` is not changed).

    ``mode="merge"``: appended to the first system message (one is inserted at the
    start when there is none); ``"system"``: a separate system message right after the
    leading system messages. A block injected earlier (found by ``header``) is
    replaced, so calling this every turn does not pile up old memory. Empty text
    injects nothing.
    """
    text = context.text if isinstance(context, MemoryContext) else context
    out = [m for m in (_without_block(dict(m), header) for m in messages) if m is not None]
    if not text.strip():
        return out
    block = f"{header}\n{text.strip()}"
    if mode == "merge":
        for message in out:
            if message.get("role") == "system":
                content = str(message.get("content") or "").rstrip()
                message["content"] = f"{content}\n\n{block}" if content else block
                return out
        return [{"role": "system", "content": block}, *out]
    if mode != "system":
        raise ValueError(f"mode must be 'merge' or 'system', not {mode!r}")
    at = 0
    while at < len(out) and out[at].get("role") == "system":
        at += 1
    return [*out[:at], {"role": "system", "content": block}, *out[at:]]


def _without_block(message: dict[str, Any], header: str) -> dict[str, Any] | None:
    content = message.get("content")
    if message.get("role") != "system" or not isinstance(content, str) or header not in content:
        return message
    kept = content.split(header, 1)[0].rstrip()
    if not kept:
        return None  # the message was only the block
    message["content"] = kept
    return message


def with_memory(
    messages: Sequence[ChatMessage],
    agent_id: str,
    trigger: str | None = None,
    *,
    mode: Mode = "merge",
    token_budget: int | None = None,
    session_id: str = "",
    thread_id: str = "",
    resource_id: str = "",
    namespace: str | None = None,
) -> Unary[list[dict[str, Any]]]:
    """:func:`memory_context` then :func:`inject_context`. ``trigger`` defaults to the
    content of the last user message."""
    if trigger is None:
        trigger = next(
            (str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"),
            "",
        )
    call = memory_context(
        agent_id,
        trigger,
        token_budget=token_budget,
        session_id=session_id,
        thread_id=thread_id,
        resource_id=resource_id,
        namespace=namespace,
    )
    return _then(call, lambda context: inject_context(messages, context, mode=mode))


def _then(call: Unary[MemoryContext], after: Any) -> Unary[list[dict[str, Any]]]:
    """``call`` with ``after`` applied to its result (also to its fallback's)."""
    fallback = call.fallback

    def chained_fallback(error: MemorydError) -> Unary[list[dict[str, Any]]] | None:
        alternative = fallback(error) if fallback is not None else None
        return None if alternative is None else _then(alternative, after)

    return Unary(
        call.service,
        call.method,
        call.request,
        lambda r: after(call.parse(r)),
        idempotent=call.idempotent,
        fallback=chained_fallback,
    )
