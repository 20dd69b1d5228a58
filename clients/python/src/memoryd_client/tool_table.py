"""The one table of memoryd's agent tools: names, descriptions, JSON Schemas of their
arguments and results, and MCP annotations.

Both tool surfaces are built from it, so they cannot drift: the OpenAI-style tool
definitions and dispatcher of :mod:`memoryd_client.tools` (the arguments that name
*whose* memory, such as the agent or the session, come from a ``ToolContext`` there and
are left out of what the model sees) and the MCP server's tools (``memoryd mcp`` and
the daemon's Streamable HTTP endpoint, where those arguments are optional and default
to the server's agent). Nothing here imports protobuf or gRPC; the daemon imports this
module too.

:mod:`memoryd_client.tool_args` checks a call's arguments against the table.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

MEMORY_TYPES = ["preference", "fact", "pattern", "skill", "episode"]
ROLES = ["user", "assistant", "system", "tool"]
PROVENANCE_KINDS = ["user", "tool", "web", "file", "system", "agent"]

#: Arguments that say whose memory a call uses. The OpenAI-style dispatcher takes them
#: from its ToolContext (never from the model); MCP tools take them as optional
#: arguments. The tenant is never an argument: it comes from the caller's credentials.
CONTEXT_FIELDS = frozenset({"agent_id", "session_id", "thread_id", "resource_id", "namespace"})


class ToolArgumentError(ValueError):
    """The arguments do not fit the tool's schema; ``field`` names the culprit."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: what a model or an MCP client sees of it."""

    name: str
    title: str
    description: str
    #: JSON Schema properties of the arguments (context fields included).
    properties: JSON
    required: tuple[str, ...] = ()
    #: JSON Schema of the structured result.
    output: JSON = field(default_factory=dict)
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    #: Served by the MCP server (``memoryd mcp`` and the daemon's endpoint).
    mcp: bool = True
    #: Another name accepted for an argument (a design document's): alias -> name.
    #: Either may be given, not both; a required argument is then required as
    #: "one of the two" (tool_args checks it), so the schema lists neither.
    aliases: dict[str, str] = field(default_factory=dict)

    def input_schema(self, *, with_context: bool = True) -> JSON:
        properties = {
            k: copy.deepcopy(v)
            for k, v in self.properties.items()
            if with_context or k not in CONTEXT_FIELDS
        }
        aliased = set(self.aliases.values())
        return {
            "type": "object",
            "properties": properties,
            "required": [r for r in self.required if r in properties and r not in aliased],
            "additionalProperties": False,
        }

    def output_schema(self) -> JSON:
        return copy.deepcopy(self.output)

    def annotations(self) -> JSON:
        """MCP tool annotations (hints for the client, not guarantees)."""
        return {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": False,
        }

    def openai(self) -> JSON:
        """The definition in the OpenAI function-calling shape (context fields left out)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema(with_context=False),
            },
        }


# ---------------------------------------------------------------------- schemas

_STR = {"type": "string"}
_INT = {"type": "integer"}
#: Every integer argument is bounded (tool_args refuses the rest, naming it) by what
#: the daemon's field for it holds: int32 for lines and token budgets, 2^53 - 1 for
#: versions (exact in a double), 100 years for a TTL (the daemon's longest). An
#: unbounded one reached ``timedelta`` or C and failed ("Python int too large to
#: convert to C int"); the daemon's tests check each has bounds.
INT32_MAX = 2**31 - 1
MAX_VERSION = 2**53 - 1
MAX_TTL_SECONDS = 36_500 * 86_400
_TOKENS = {"type": "integer", "minimum": 16, "maximum": INT32_MAX}
_LINE = {"type": "integer", "minimum": -1, "maximum": INT32_MAX}
_BOOL = {"type": "boolean"}
_TIME = {"type": ["string", "null"], "description": "RFC 3339 UTC, or null."}
_TAGS = {"type": "array", "items": _STR, "description": "Short labels."}
_AGENT = {
    "type": "string",
    "description": "The agent whose memory to use (default: the server's agent).",
}
_SESSION = {"type": "string", "description": "The session (conversation run) id."}
_THREAD = {"type": "string", "description": "Working-memory scope: the thread id."}
_RESOURCE = {"type": "string", "description": "Working-memory scope: the resource id."}
_NAMESPACE = {"type": "string", "description": "A sub-scope, e.g. an end-user id."}
SOURCE_SCHEMA: JSON = {
    "description": (
        'Where the content came from: "user", "agent", "system", "tool:<name>", '
        '"web:<url>", "file:<path>", or an object {kind, name, locator, retrieved_at}. '
        "Required on every key write; for keys under /kb/ and kinds web, tool and file "
        "with a name and locator (the short forms fill them)."
    ),
    "oneOf": [
        {"type": "string", "minLength": 1},
        {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": PROVENANCE_KINDS},
                "name": _STR,
                "locator": _STR,
                "retrieved_at": {"type": "string", "description": "RFC 3339."},
            },
            "required": ["kind"],
            "additionalProperties": False,
        },
    ],
}
_LEVEL = {
    "type": "string",
    "enum": ["public", "internal", "confidential", "restricted"],
    "description": "Who may read it (default internal); at most the caller's clearance.",
}
_DEGRADED = {
    "type": "array",
    "description": "What the call fell back on (a dependency down), if anything.",
    "items": {
        "type": "object",
        "properties": {"component": _STR, "reason": _STR},
        "required": ["component", "reason"],
    },
}
_MEMORY_HIT = {
    "type": "object",
    "properties": {
        "id": _STR,
        "content": _STR,
        "memory_type": _STR,
        "tags": {"type": "array", "items": _STR},
        "score": {"type": "number"},
        "key": _STR,
    },
    "required": ["id", "content", "memory_type", "tags", "score"],
}
_KEY_VERSION: JSON = {
    "type": "object",
    "properties": {
        "key": _STR,
        "value": {"description": "The JSON value; null once deleted."},
        "version": _INT,
        "deleted": _BOOL,
        "updated_at": _TIME,
        "source": {"type": ["object", "null"]},
    },
    "required": ["key", "value", "version", "deleted"],
}
_MESSAGES = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "properties": {
            "role": {"type": "string", "enum": ROLES},
            "content": _STR,
            "name": {"type": "string", "description": "The speaker's or the tool's name."},
            "tool_call_id": {"type": "string", "description": "A tool result: the call's id."},
        },
        "required": ["role", "content"],
        "additionalProperties": False,
    },
}
LONG_TERM_MEMORY_MODES = ["agent_control", "static_control", "both"]
_WINDOW = {
    "type": "object",
    "properties": {
        "pinned": {"type": "array", "items": {"type": "object"}},
        "summary": _STR,
        "messages": {"type": "array", "items": {"type": "object"}},
        "tokens_used": _INT,
        "long_term_memory": {
            "type": "string",
            "description": "static_control / both: memories relevant to the newest user "
            "message, one per line.",
        },
        "degraded": _DEGRADED,
    },
    "required": ["pinned", "summary", "messages", "tokens_used"],
}


def _out(properties: JSON, *required: str) -> JSON:
    return {"type": "object", "properties": properties, "required": list(required)}


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
            "tags": _TAGS,
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
            "security_level": _LEVEL,
            "source": SOURCE_SCHEMA,
            "agent_id": _AGENT,
            "namespace": _NAMESPACE,
        },
        ("content",),
        _out({"id": _STR, "deduplicated": _BOOL, "degraded": _DEGRADED}, "id", "deduplicated"),
    ),
    ToolSpec(
        "recall",
        "Recall",
        "Search long-term memory for what is relevant to a query; best matches first.",
        {
            "query": {"type": "string", "minLength": 1},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "description": "Most results (5).",
            },
            "tags": _TAGS,
            "agent_id": _AGENT,
            "namespace": _NAMESPACE,
        },
        ("query",),
        _out(
            {"memories": {"type": "array", "items": _MEMORY_HIT}, "degraded": _DEGRADED}, "memories"
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "forget",
        "Forget",
        "Delete long-term memories by id (ids from recall). Unknown ids are ignored.",
        {
            "ids": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
            "agent_id": _AGENT,
        },
        ("ids",),
        _out({"forgotten": {"type": "array", "items": _STR}}, "forgotten"),
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
            "security_level": _LEVEL,
            "if_version": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_VERSION,
                "description": "Write only if the key is at this version (0: never written).",
            },
            "agent_id": _AGENT,
        },
        ("key", "value", "source"),
        _out(
            {
                "key": _STR,
                "version": _INT,
                "deleted": _BOOL,
                "memory_id": _STR,
                "degraded": _DEGRADED,
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
        {"key": {"type": "string", "pattern": "^/"}, "agent_id": _AGENT},
        ("key",),
        _out({"found": _BOOL, **_KEY_VERSION["properties"]}, "found", "key"),
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
            "recursive": _BOOL,
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            "agent_id": _AGENT,
        },
        (),
        _out(
            {
                "keys": {"type": "array", "items": _KEY_VERSION},
                "directories": {"type": "array", "items": _STR},
                "more": _BOOL,
                "degraded": _DEGRADED,
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
            "agent_id": _AGENT,
        },
        ("key",),
        _out(
            {
                "versions": {"type": "array", "items": _KEY_VERSION},
                "more": _BOOL,
                "degraded": _DEGRADED,
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
            "prefix": {"type": "string", "description": 'Only keys below this (e.g. "/user/").'},
            "agent_id": _AGENT,
        },
        (),
        _out(
            {"text": _STR, "keys": {"type": "array", "items": _STR}, "tokens_used": _INT},
            "text",
            "keys",
        ),
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "get_working_memory",
        "Get working memory",
        "The current task's working memory (its state between steps).",
        {"thread_id": _THREAD, "resource_id": _RESOURCE, "agent_id": _AGENT},
        (),
        _out(
            {"found": _BOOL, "content": {"type": "object"}, "version": _INT, "expires_at": _TIME},
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
            "ttl_seconds": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_TTL_SECONDS,
                "description": "Expire this long after this write; 0: never expires (an "
                "expiry set before is removed); not given: the expiry set before is kept.",
            },
            "schema": {"type": "object", "description": "A JSON Schema the content must follow."},
            "thread_id": _THREAD,
            "resource_id": _RESOURCE,
            "agent_id": _AGENT,
        },
        ("updates",),
        _out(
            {"content": {"type": "object"}, "version": _INT, "expires_at": _TIME},
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
        {"agent_id": _AGENT},
        (),
        _out({"found": _BOOL, "content": _STR, "etag": _STR}, "found", "content", "etag"),
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
            "etag": {
                "type": "string",
                "description": 'From read_agent_memory; "" skips the check.',
            },
            "agent_id": _AGENT,
        },
        ("content",),
        _out({"etag": _STR}, "etag"),
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
            "token_budget": _TOKENS,
            "format": {"type": "string", "enum": ["markdown", "xml"]},
            "session_id": _SESSION,
            "thread_id": _THREAD,
            "resource_id": _RESOURCE,
            "agent_id": _AGENT,
        },
        (),
        _out(
            {
                "text": _STR,
                "tokens_used": _INT,
                "token_budget": _INT,
                "items": {"type": "array", "items": {"type": "object"}},
                "degraded": _DEGRADED,
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
            "messages": _MESSAGES,
            "long_term_memory_mode": {
                "type": "string",
                "enum": LONG_TERM_MEMORY_MODES,
                "description": "The session's mode from now on (default: unchanged; a new "
                "session: agent_control).",
            },
            "session_id": _SESSION,
            "agent_id": _AGENT,
        },
        ("messages", "session_id"),
        _out(
            {
                "message_count": _INT,
                "compressed": _BOOL,
                "recorded_memory_ids": {"type": "array", "items": _STR},
                "offloaded_seqs": {"type": "array", "items": _INT},
                "degraded": _DEGRADED,
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
            "offset": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_VERSION,
                "description": "Skip this many characters (0).",
            },
            "max_chars": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_VERSION,
                "description": "At most this many characters (default: to the end).",
            },
            "session_id": _SESSION,
            "agent_id": _AGENT,
        },
        ("seq", "session_id"),
        _out(
            {
                "seq": _INT,
                "content": _STR,
                "size_bytes": _INT,
                "chars": _INT,
                "next_offset": {
                    "type": "integer",
                    "description": "Where the next slice starts; 0: content reaches the end.",
                },
                "name": _STR,
                "tool_call_id": _STR,
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
            "token_budget": _TOKENS,
            "session_id": _SESSION,
            "agent_id": _AGENT,
        },
        ("session_id",),
        _WINDOW,
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
            "session_id": _SESSION,
            "agent_id": _AGENT,
        },
        ("components", "session_id"),
        _out({"saved": {"type": "object", "additionalProperties": _INT}}, "saved"),
        idempotent=True,
    ),
    ToolSpec(
        "load_state",
        "Load state",
        "Load a session's saved components (every one when names is empty).",
        {"names": {"type": "array", "items": _STR}, "session_id": _SESSION, "agent_id": _AGENT},
        ("session_id",),
        _out(
            {
                "components": {"type": "object", "additionalProperties": {"type": "object"}},
                "degraded": _DEGRADED,
            },
            "components",
        ),
        read_only=True,
        idempotent=True,
    ),
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
            "insert_line": {
                "type": "integer",
                "minimum": 0,
                "maximum": INT32_MAX,
                "description": "insert: after this line (0: at the top).",
            },
            "insert_text": {"type": "string", "description": "insert: the text."},
            "old_path": {"type": "string", "description": "rename: the current path."},
            "new_path": {"type": "string", "description": "rename: the new path."},
            "view_range": {"type": "array", "items": _LINE, "minItems": 2, "maxItems": 2},
            "agent_id": _AGENT,
        },
        ("command",),
        _out({"result": _STR, "path": _STR, "version": _INT}, "result"),
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
            "agent_id": _AGENT,
            "namespace": _NAMESPACE,
        },
        ("thinking", "content"),
        _out(
            {
                "ids": {"type": "array", "items": _STR},
                "text": _STR,
                "degraded": _DEGRADED,
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
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "description": "Most results per keyword (5).",
            },
            "agent_id": _AGENT,
            "namespace": _NAMESPACE,
        },
        ("keywords",),
        _out(
            {
                "memories": {"type": "array", "items": _MEMORY_HIT},
                "text": _STR,
                "degraded": _DEGRADED,
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
        {"messages": _MESSAGES, "agent_id": _AGENT, "namespace": _NAMESPACE},
        ("messages",),
        _out({"ids": {"type": "array", "items": _STR}}, "ids"),
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
            "token_budget": _TOKENS,
            "agent_id": _AGENT,
            "session_id": _SESSION,
            "namespace": _NAMESPACE,
        },
        (),
        {"type": "object"},
        read_only=True,
        mcp=False,
    ),
]

TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in _SPECS}
#: The tools AgentScope registers for a session in agent_control (or both) mode.
AGENT_CONTROL_TOOLS: tuple[str, ...] = ("record_to_memory", "retrieve_from_memory")
#: Tools served over MCP.
MCP_TOOLS: tuple[str, ...] = tuple(s.name for s in _SPECS if s.mcp)
