"""The one table of memoryd's agent tools: names, descriptions, JSON Schemas of their
arguments and results, and MCP annotations.

Both tool surfaces are built from it, so they cannot drift: the OpenAI-style tool
definitions and dispatcher of :mod:`memoryd_client.tools` (the arguments that name
*whose* memory, such as the agent or the session, come from a ``ToolContext`` there and
are left out of what the model sees) and the MCP server's tools (``memoryd mcp`` and
the daemon's Streamable HTTP endpoint, where those arguments are optional and default
to the server's agent). Nothing here imports protobuf or gRPC; the daemon imports this
module too.

:mod:`memoryd_client.tool_args` checks a call's arguments against the table. The tools
of an agent's working state (working memory, agent.md, snapshots, sessions, saved
state) are listed in :mod:`memoryd_client.tool_specs_agent_state`.
"""

from __future__ import annotations

from memoryd_client.tool_spec import (
    AGENT,
    AS_OF,
    BOOL,
    CONTEXT_FIELDS,
    DEGRADED,
    INT,
    INT32_MAX,
    JSON,
    KEY_VERSION,
    LEVEL,
    LINE,
    LONG_TERM_MEMORY_MODES,
    MAX_TTL_SECONDS,
    MAX_VERSION,
    MEMORY_HIT,
    MEMORY_TYPES,
    MESSAGES,
    NAMESPACE,
    PROVENANCE_KINDS,
    ROLES,
    SCORING_PRESET_NAMES,
    SESSION,
    SOURCE_SCHEMA,
    STR,
    TAGS,
    TOKENS,
    TRUST,
    ToolArgumentError,
    ToolSpec,
    context_window,
    integer,
    out,
)
from memoryd_client.tool_specs_agent_state import AGENT_STATE_SPECS
from memoryd_client.tool_specs_erasure import ERASURE_SPECS

# ---------------------------------------------------------------------- the tools

_SPECS = [
    ToolSpec(
        "remember",
        "Remember",
        "Store a fact, preference, pattern, skill or episode in long-term memory so it can "
        "be recalled in later conversations. Near-duplicates update the existing memory.",
        {
            "content": {
                "type": "string",
                "minLength": 1,
                "description": "One self-contained statement.",
            },
            "memory_type": {"type": "string", "enum": MEMORY_TYPES},
            "tags": TAGS,
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
            "security_level": LEVEL,
            "source": SOURCE_SCHEMA,
            "session_id": SESSION,
            "sequence": integer(
                1,
                MAX_VERSION,
                "The turn's number in the session (needs session_id): recall's "
                "context_window adds a hit's neighbouring turns by it.",
            ),
            "agent_id": AGENT,
            "namespace": NAMESPACE,
        },
        ("content",),
        out({"id": STR, "deduplicated": BOOL, "degraded": DEGRADED}, "id", "deduplicated"),
    ),
    ToolSpec(
        "recall",
        "Recall",
        "Search long-term memory for what is relevant to a query; best matches first.",
        {
            "query": {"type": "string", "minLength": 1},
            "limit": integer(1, 50, "Most results (5)."),
            "min_relevance": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "Leave out memories less relevant than this (0..1; each hit "
                "reports its relevance): with it, nothing relevant returns no memories.",
            },
            "scoring": {
                "type": "string",
                "enum": SCORING_PRESET_NAMES,
                "description": "How hits are ranked: blended (the default: relevance with "
                "recency and importance), layered (0.6 cosine + 0.2 exp(-days/30) + 0.2 "
                "importance), relevance, similarity, decayed or weighted.",
            },
            "context_window": context_window("limit"),
            "tags": TAGS,
            "trust": TRUST,
            "as_of": AS_OF,
            "agent_id": AGENT,
            "namespace": NAMESPACE,
        },
        ("query",),
        out({"memories": {"type": "array", "items": MEMORY_HIT}, "degraded": DEGRADED}, "memories"),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "forget",
        "Forget",
        "Delete long-term memories by id (ids from recall). Unknown ids are ignored.",
        {
            "ids": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
            "agent_id": AGENT,
        },
        ("ids",),
        out({"forgotten": {"type": "array", "items": STR}}, "forgotten"),
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        "set_memory",
        "Set a memory key",
        "Write a value under a key path like /user/preference/style (last write wins, every "
        "write is kept in the key's history, the value is searchable by recall). A null value "
        "deletes the key.",
        {
            "key": {"type": "string", "pattern": "^/", "description": "Starts with /."},
            "value": {"description": "Any JSON value; null deletes the key."},
            "source": SOURCE_SCHEMA,
            "security_level": LEVEL,
            "if_version": integer(
                0, MAX_VERSION, "Write only if the key is at this version (0: never written)."
            ),
            "agent_id": AGENT,
        },
        ("key", "value", "source"),
        out(
            {
                "key": STR,
                "version": INT,
                "deleted": BOOL,
                "memory_id": STR,
                "degraded": DEGRADED,
            },
            "key",
            "version",
            "deleted",
        ),
        destructive=True,
    ),
    ToolSpec(
        "get_memory_key",
        "Read a memory key",
        "Read the current value of a key (found=false when it was never written).",
        {"key": {"type": "string", "pattern": "^/"}, "as_of": AS_OF, "agent_id": AGENT},
        ("key",),
        out({"found": BOOL, **KEY_VERSION["properties"]}, "found", "key"),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "list_memory_keys",
        "List memory keys",
        "List keys like ls: the keys directly under a prefix and its sub-directories "
        "(recursive: every key below it).",
        {
            "prefix": {"type": "string", "description": 'A directory like "/user/" (default "/").'},
            "recursive": BOOL,
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            "as_of": AS_OF,
            "agent_id": AGENT,
        },
        (),
        out(
            {
                "keys": {"type": "array", "items": KEY_VERSION},
                "directories": {"type": "array", "items": STR},
                "more": BOOL,
                "degraded": DEGRADED,
            },
            "keys",
            "directories",
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "memory_key_history",
        "Key history",
        "Every version of a key, oldest first (deletions included), with its source.",
        {
            "key": {"type": "string", "pattern": "^/"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            "agent_id": AGENT,
        },
        ("key",),
        out(
            {
                "versions": {"type": "array", "items": KEY_VERSION},
                "more": BOOL,
                "degraded": DEGRADED,
            },
            "versions",
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "default_read",
        "Default read",
        "The agent's keyed memory as compact lines within a token limit, most recent first: "
        "what to read at the start of a task.",
        {
            "token_limit": {"type": "integer", "minimum": 1, "maximum": INT32_MAX},
            "tags": {
                "type": "array",
                "items": STR,
                "description": "Context tags: keys whose content.tags match rank higher.",
            },
            "current_time": {
                "type": "string",
                "description": "RFC 3339; keys whose content.expired_at is before it are "
                "left out (default: now).",
            },
            "prefix": {"type": "string", "description": 'Only keys below this (e.g. "/user/").'},
            "as_of": AS_OF,
            "agent_id": AGENT,
        },
        (),
        out(
            {"text": STR, "keys": {"type": "array", "items": STR}, "tokens_used": INT},
            "text",
            "keys",
        ),
        read_only=True,
        idempotent=True,
    ),
    *AGENT_STATE_SPECS,
    ToolSpec(
        "memory",
        "Memory files",
        "A memory directory of text files under /memories: view (a file, or a directory "
        "listing), create (write a file), str_replace (replace text found once), insert (at a "
        "line), delete, rename. Each change is a versioned key write, kept in history and "
        "searchable by recall.",
        {
            "command": {
                "type": "string",
                "enum": ["view", "create", "str_replace", "insert", "delete", "rename"],
            },
            "path": {"type": "string", "description": "Under /memories, e.g. /memories/notes.md."},
            "file_text": {"type": "string", "description": "create: the file's content."},
            "old_str": {
                "type": "string",
                "description": "str_replace: text to find (exactly once).",
            },
            "new_str": {"type": "string", "description": "str_replace: its replacement."},
            "insert_line": integer(0, INT32_MAX, "insert: after this line (0: at the top)."),
            "insert_text": {"type": "string", "description": "insert: the text."},
            "old_path": {"type": "string", "description": "rename: the current path."},
            "new_path": {"type": "string", "description": "rename: the new path."},
            "view_range": {"type": "array", "items": LINE, "minItems": 2, "maxItems": 2},
            "agent_id": AGENT,
        },
        ("command",),
        out({"result": STR, "path": STR, "version": INT}, "result"),
        destructive=True,
    ),
    # AgentScope's long-term memory tools (agent_control), by their names and parameters.
    ToolSpec(
        "record_to_memory",
        "Record to long-term memory",
        "Record important information that you may need later, in long-term memory. Each "
        "item of content should be specific and concise (who, when, where, what, why, how).",
        {
            "thinking": {
                "type": "string",
                "description": "Your reasoning about what to record and why.",
            },
            "content": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "string", "minLength": 1},
                "description": "The items to record, each one self-contained.",
            },
            "agent_id": AGENT,
            "namespace": NAMESPACE,
        },
        ("thinking", "content"),
        out(
            {
                "ids": {"type": "array", "items": STR},
                "text": STR,
                "degraded": DEGRADED,
            },
            "ids",
            "text",
        ),
    ),
    ToolSpec(
        "retrieve_from_memory",
        "Retrieve from long-term memory",
        "Retrieve what long-term memory holds about the given keywords (each searched on "
        "its own), best matches first.",
        {
            "keywords": {
                "type": "array",
                "minItems": 1,
                "maxItems": 16,
                "items": {"type": "string", "minLength": 1},
                "description": "Short search phrases: names, topics, events.",
            },
            "limit": integer(1, 50, "Most results per keyword (5)."),
            "agent_id": AGENT,
            "namespace": NAMESPACE,
        },
        ("keywords",),
        out(
            {
                "memories": {"type": "array", "items": MEMORY_HIT},
                "text": STR,
                "degraded": DEGRADED,
            },
            "memories",
            "text",
        ),
        read_only=True,
        idempotent=True,
    ),
    # The AgentScope-style pair (OpenAI-style tools only; MCP has the finer tools above).
    ToolSpec(
        "record",
        "Record to long-term memory",
        "Keep what was said in long-term memory (each message becomes an episode that "
        "recall and snapshots find later).",
        {"messages": MESSAGES, "agent_id": AGENT, "namespace": NAMESPACE},
        ("messages",),
        out({"ids": {"type": "array", "items": STR}}, "ids"),
        mcp=False,
    ),
    ToolSpec(
        "retrieve",
        "Retrieve from memory",
        'Read memory back. source="memory" (the default): long-term memories matching '
        'query. source="session": the current session (pinned instructions, a summary of '
        "older turns and the recent turns).",
        {
            "query": {"type": "string", "description": 'Required with source="memory".'},
            "source": {"type": "string", "enum": ["memory", "session"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "token_budget": TOKENS,
            "agent_id": AGENT,
            "session_id": SESSION,
            "namespace": NAMESPACE,
        },
        (),
        {"type": "object"},
        read_only=True,
        mcp=False,
    ),
]

_SPECS.extend(ERASURE_SPECS)
TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in _SPECS}
#: The tools AgentScope registers for a session in agent_control (or both) mode.
AGENT_CONTROL_TOOLS: tuple[str, ...] = ("record_to_memory", "retrieve_from_memory")
#: Tools served over MCP.
MCP_TOOLS: tuple[str, ...] = tuple(s.name for s in _SPECS if s.mcp)

__all__ = [
    "AGENT_CONTROL_TOOLS",
    "CONTEXT_FIELDS",
    "INT32_MAX",
    "JSON",
    "LONG_TERM_MEMORY_MODES",
    "MAX_TTL_SECONDS",
    "MAX_VERSION",
    "MCP_TOOLS",
    "MEMORY_TYPES",
    "PROVENANCE_KINDS",
    "ROLES",
    "SOURCE_SCHEMA",
    "TOOLS",
    "ToolArgumentError",
    "ToolSpec",
]
