"""The tool table's tools for an agent's working state: working memory, the agent's
memory file (agent.md), snapshots, sessions and saved state (:mod:`memoryd_client.tool_table`
lists every tool, these among them, in this order)."""

from __future__ import annotations

from memoryd_client.tool_spec import (
    AGENT,
    AGENT_MEMORY_ETAG,
    AS_OF,
    BOOL,
    DEGRADED,
    INT,
    LONG_TERM_MEMORY_MODES,
    MAX_TTL_SECONDS,
    MAX_VERSION,
    MESSAGES,
    RESOURCE,
    SESSION,
    SNAPSHOT_FORMAT,
    STR,
    THREAD,
    TIME,
    TOKENS,
    TRUST,
    WINDOW,
    ToolSpec,
    context_window,
    integer,
    out,
)

AGENT_STATE_SPECS = [
    ToolSpec(
        "get_working_memory",
        "Get working memory",
        "The current task's working memory (its state between steps).",
        {"thread_id": THREAD, "resource_id": RESOURCE, "agent_id": AGENT},
        (),
        out(
            {"found": BOOL, "content": {"type": "object"}, "version": INT, "expires_at": TIME},
            "found",
            "content",
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "update_working_memory",
        "Update working memory",
        "Update the current task's working memory: the given fields (updates, or data) are "
        "merged in (or replace everything with replace=true); ttl_seconds makes it expire "
        "(0: never); schema (a JSON Schema) is enforced on this and later writes.",
        {
            "updates": {"type": "object", "description": "Fields to set."},
            "data": {"type": "object", "description": "Fields to set (another name of updates)."},
            "replace": {"type": "boolean", "description": "Replace instead of merge."},
            "ttl_seconds": integer(
                0,
                MAX_TTL_SECONDS,
                "Expire this long after this write; 0: never expires (an "
                "expiry set before is removed); not given: the expiry set before is kept.",
            ),
            "schema": {"type": "object", "description": "A JSON Schema the content must follow."},
            "thread_id": THREAD,
            "resource_id": RESOURCE,
            "agent_id": AGENT,
        },
        ("updates",),
        out(
            {"content": {"type": "object"}, "version": INT, "expires_at": TIME},
            "content",
            "version",
        ),
        idempotent=True,
        aliases={"data": "updates"},
    ),
    ToolSpec(
        "read_agent_memory",
        "Read agent.md",
        "Read the agent's profile document (agent.md: persona, rules, what it learned) and "
        "its etag (pass it to update_agent_memory).",
        {"agent_id": AGENT},
        (),
        out({"found": BOOL, "content": STR, "etag": STR}, "found", "content", "etag"),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "update_agent_memory",
        "Write agent.md",
        "Replace the agent's profile document. Pass the etag read_agent_memory returned: the "
        'write fails if the document changed since ("none": only if there is none yet).',
        {
            "content": {"type": "string"},
            "etag": AGENT_MEMORY_ETAG,
            "agent_id": AGENT,
        },
        ("content",),
        out({"etag": STR}, "etag"),
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        "build_snapshot",
        "Memory snapshot",
        "What to know before answering: memories relevant to the trigger, recent and pinned "
        "ones, the profile, working memory and the session, within a token budget.",
        {
            "trigger": {"type": "string", "description": "The user's message or the task."},
            "focus": {"type": "string", "description": "What the run focuses on (searched too)."},
            "token_budget": TOKENS,
            "format": SNAPSHOT_FORMAT,
            "context_window": context_window("the semantic section and the budget"),
            "trust": TRUST,
            "as_of": AS_OF,
            "session_id": SESSION,
            "thread_id": THREAD,
            "resource_id": RESOURCE,
            "agent_id": AGENT,
        },
        (),
        out(
            {
                "text": STR,
                "tokens_used": INT,
                "token_budget": INT,
                "items": {"type": "array", "items": {"type": "object"}},
                "degraded": DEGRADED,
            },
            "text",
            "tokens_used",
        ),
        read_only=True,
    ),
    ToolSpec(
        "record_messages",
        "Record messages",
        "Append messages to a session's log (short-term memory); older turns are summarised "
        "and large tool results offloaded (get_session_attachment reads them). "
        "long_term_memory_mode static_control (or both) records each assistant reply in "
        "long-term memory and retrieves for the window.",
        {
            "messages": MESSAGES,
            "long_term_memory_mode": {
                "type": "string",
                "enum": LONG_TERM_MEMORY_MODES,
                "description": "The session's mode from now on (default: unchanged; a new "
                "session: agent_control).",
            },
            "session_id": SESSION,
            "agent_id": AGENT,
        },
        ("messages", "session_id"),
        out(
            {
                "message_count": INT,
                "compressed": BOOL,
                "recorded_memory_ids": {"type": "array", "items": STR},
                "offloaded_seqs": {"type": "array", "items": INT},
                "degraded": DEGRADED,
            },
            "message_count",
            "compressed",
        ),
    ),
    ToolSpec(
        "get_session_attachment",
        "Read an offloaded result",
        "Read the full content of a large tool result that was offloaded from the session "
        "(its message says which: attachment <seq>), whole or a slice of characters.",
        {
            "seq": {"type": "integer", "minimum": 1, "maximum": MAX_VERSION},
            "offset": integer(0, MAX_VERSION, "Skip this many characters (0)."),
            "max_chars": integer(
                1, MAX_VERSION, "At most this many characters (default: to the end)."
            ),
            "session_id": SESSION,
            "agent_id": AGENT,
        },
        ("seq", "session_id"),
        out(
            {
                "seq": INT,
                "content": STR,
                "size_bytes": INT,
                "chars": INT,
                "next_offset": {
                    "type": "integer",
                    "description": "Where the next slice starts; 0: content reaches the end.",
                },
                "name": STR,
                "tool_call_id": STR,
            },
            "seq",
            "content",
            "chars",
            "next_offset",
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "get_session_window",
        "Session window",
        "A session read back within a token budget: pinned instructions, a summary of older "
        "turns and the recent turns.",
        {
            "token_budget": TOKENS,
            "session_id": SESSION,
            "agent_id": AGENT,
        },
        ("session_id",),
        WINDOW,
        read_only=True,
    ),
    ToolSpec(
        "save_state",
        "Save state",
        "Save named components' state (any JSON object each) for a session, to resume later.",
        {
            "components": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {"type": "object"},
                "description": "Component name -> its state object.",
            },
            "session_id": SESSION,
            "agent_id": AGENT,
        },
        ("components", "session_id"),
        out({"saved": {"type": "object", "additionalProperties": INT}}, "saved"),
        idempotent=True,
    ),
    ToolSpec(
        "load_state",
        "Load state",
        "Load a session's saved components (every one when names is empty).",
        {"names": {"type": "array", "items": STR}, "session_id": SESSION, "agent_id": AGENT},
        ("session_id",),
        out(
            {
                "components": {"type": "object", "additionalProperties": {"type": "object"}},
                "degraded": DEGRADED,
            },
            "components",
        ),
        read_only=True,
        idempotent=True,
    ),
]
