"""A source's locator: where the original is, as a string (a URL, a file path, a tool
query, an event id, a content hash) or as a JSON object (``{"conversation_id": "c1",
"message_id": "m9"}``, as the set_memory design's examples write it).

Every store, the write-ahead log and the wire (``Provenance.locator``, a string)
carry a locator as text: an object as its compact JSON text. A text starting with
"{" is an object's; so a string locator cannot start with "{" unless it is one (it
would be read back as that object). Readers give the object back as JSON
(:func:`locator_value`): the MCP tools, the file tree's envelopes, the clients.
"""

from __future__ import annotations

from typing import Any

from memoryd.domain import json_text
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import Json, JsonTextError

#: What an object locator's text starts with (and a string locator's must not).
OBJECT_START = "{"


def locator_text(value: Any, field: str) -> str:
    """A locator as stored: a string as it is, unless it starts with "{" (then it must
    be a JSON object, stored compact), an object (a mapping) as its compact JSON text.
    INVALID_ARGUMENT naming ``field`` for anything else (a list, a number)."""
    if isinstance(value, dict):
        return Json.from_value(value, field, object_only=True).text
    if not isinstance(value, str):
        raise InvalidArgument.field(
            field, f"must be a string or a JSON object (got {type(value).__name__})"
        )
    if not value.lstrip().startswith(OBJECT_START):
        return value
    try:
        parsed = Json.parse(value)
    except JsonTextError as exc:
        raise InvalidArgument.field(
            field, f'starts with "{{" but is {exc}: an object locator must be a JSON object'
        ) from None
    return parsed.required_object(field).text


def locator_value(text: str) -> str | dict[str, Any]:
    """The locator as JSON: the object of an object locator's text, else the string."""
    if not text.startswith(OBJECT_START):
        return text
    try:
        value = json_text.parse(text)
    except JsonTextError:
        return text  # stored before objects were told apart: a string
    return value if isinstance(value, dict) else text


def locates(text: str) -> bool:
    """Whether a locator says where anything is (not blank, not ``{}``)."""
    stripped = text.strip()
    return bool(stripped) and locator_value(stripped) != {}
