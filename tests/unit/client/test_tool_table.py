"""The one tool table: argument checks that name the field, short source strings."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoryd_client.tool_args import check_arguments, parse_source
from memoryd_client.tool_table import CONTEXT_FIELDS, MCP_TOOLS, TOOLS, ToolArgumentError

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("user", {"kind": "user", "name": "user"}),
        ("agent", {"kind": "agent", "name": "agent"}),
        (
            "tool:web_search",
            {"kind": "tool", "name": "web_search", "locator": "web_search",
             "retrieved_at": "2026-05-01T12:00:00Z"},
        ),
        (
            "web:https://example.org/a?b=1",
            {"kind": "web", "name": "example.org", "locator": "https://example.org/a?b=1",
             "retrieved_at": "2026-05-01T12:00:00Z"},
        ),
        (
            "file:/docs/plan.md",
            {"kind": "file", "name": "plan.md", "locator": "/docs/plan.md",
             "retrieved_at": "2026-05-01T12:00:00Z"},
        ),
        ({"kind": "tool", "name": "x", "locator": "y"}, {"kind": "tool", "name": "x", "locator": "y"}),
        (None, None),
    ],
)  # fmt: skip
def test_sources_short_and_long(value: object, expected: object) -> None:
    assert parse_source(value, now=NOW) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("pigeon", "kind 'pigeon'"),
        ("tool:", "followed by a name"),
        ("web:not a url", "not a URL"),
        ({"kind": "alien"}, "must be one of"),
        ({"name": "x"}, "kind: is required"),
        (5, "non-empty string"),
    ],
)
def test_bad_sources_name_the_field(value: object, message: str) -> None:
    with pytest.raises(ToolArgumentError, match=message) as error:
        parse_source(value)
    assert error.value.field.startswith("source")


def test_arguments_are_checked_against_the_schema() -> None:
    assert check_arguments("set_memory", {"key": "/k", "value": None, "source": "user"}) == {
        "key": "/k",
        "value": None,
        "source": "user",
    }
    with pytest.raises(ToolArgumentError) as error:
        check_arguments("set_memory", {"key": "/k", "value": 1})
    assert error.value.field == "source"
    with pytest.raises(ToolArgumentError) as error:
        check_arguments("save_state", {"session_id": "s", "components": {"a": 1}})
    assert error.value.field == "components.a"
    with pytest.raises(ToolArgumentError) as error:
        check_arguments("forget", {"ids": ["a", ""]})
    assert error.value.field == "ids[1]"
    with pytest.raises(ToolArgumentError, match="is not an argument"):
        check_arguments("recall", {"query": "x", "agent_id": "a"}, with_context=False)


def test_every_tool_is_described_and_mcp_serves_the_table() -> None:
    assert set(MCP_TOOLS) == set(TOOLS) - {"record", "retrieve"}
    for spec in TOOLS.values():
        schema = spec.input_schema()
        assert spec.description and set(spec.required) <= set(schema["properties"])
        assert spec.output_schema()["type"] == "object"
        openai = spec.openai()["function"]["parameters"]["properties"]
        assert not CONTEXT_FIELDS & set(openai)
