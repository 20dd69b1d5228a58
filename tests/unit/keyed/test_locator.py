"""Object locators (issue 33, set_memory v2.1 §3.2.2): a source's ``locator`` is a
string or a JSON object. An object is carried as its compact JSON text and given back
as that object; anything else (a list, a number, text that starts like an object but
is not one, an oversized locator) is INVALID_ARGUMENT naming ``source.locator``, on
every way in (the domain conversion the gRPC and MCP adapters share, the MCP tool
schema, the Python client, memoryctl), and stores nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from memoryd.cli.keys import _source_option
from memoryd.cli.memoryctl import app
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.limits import MAX_LOCATOR_BYTES
from memoryd.domain.locator import locates, locator_text, locator_value
from memoryd.domain.models import Provenance, ProvenanceKind
from memoryd.mcp.render import source as rendered_source
from memoryd.mcp.tools import provenance as mcp_provenance
from memoryd.service.keyed.tree import envelope_line
from memoryd_client.errors import MemorydError
from memoryd_client.requests import provenance as client_provenance
from memoryd_client.results import locator_json
from memoryd_client.tool_args import check_arguments
from memoryd_client.tool_table import ToolArgumentError
from memoryd_proto.v1 import common_pb2

from .conftest import Keyed, scope_for
from .test_service import fields, stored_nothing

S = scope_for()
CHAT = {"conversation_id": "c1", "message_id": "m9"}
#: The design's A.1 source, verbatim.
A1_SOURCE = {
    "kind": "user",
    "name": "chat",
    "retrieved_at": "2026-02-22T10:00:00Z",
    "locator": CHAT,
}

#: A fixed retrieval time: the checks under test never compare it with "now".
RETRIEVED_AT = datetime(2026, 11, 28, 23, 59, 30, tzinfo=UTC)


def test_an_object_is_stored_as_compact_json_and_read_back_as_the_object() -> None:
    text = locator_text(CHAT, "source.locator")
    assert text == '{"conversation_id":"c1","message_id":"m9"}'
    assert locator_value(text) == CHAT
    # Object text (how gRPC carries one) is brought to the same form.
    assert locator_text('{ "conversation_id": "c1", "message_id": "m9" }', "f") == text
    assert locator_text({"文件": "牙科.md", "n": 12345678901234567}, "f") == (
        '{"文件":"牙科.md","n":12345678901234567}'
    )


@pytest.mark.parametrize(
    "string", ["https://example.com/a?b=c", "/var/notes.md", "sha256:ab12", "q=teeth", ""]
)
def test_a_string_stays_a_string(string: str) -> None:
    assert locator_text(string, "source.locator") == string
    assert locator_value(string) == string


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (["c1", "m9"], "must be a string or a JSON object (got list)"),
        (42, "must be a string or a JSON object (got int)"),
        (True, "must be a string or a JSON object (got bool)"),
        ("{not json", 'starts with "{" but is not valid JSON'),
        ('{"a": 1, "a": 2}', "the name 'a' twice"),
        ({"deep": float("nan")}, "NaN"),
    ],
)
def test_what_is_neither_is_refused_naming_the_field(bad: Any, why: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        locator_text(bad, "source.locator")
    assert err.value.violations[0].field == "source.locator"
    assert why in err.value.violations[0].description


def test_an_empty_object_locates_nothing() -> None:
    assert not locates("{}") and not locates("  ") and locates('{"url":"x"}') and locates("x")


async def test_the_design_a1_and_a3_calls_are_accepted_and_return_the_object(
    keyed: Keyed,
) -> None:
    """A.1 (an upsert) and A.3 (a tombstone) with object locators, through the MCP
    conversion; the key's source and its log.jsonl envelope give the object back."""
    source = mcp_provenance(A1_SOURCE)
    assert source is not None and source.locator == json.dumps(CHAT, separators=(",", ":"))
    content = Json.of({"type": "preference", "summary": "用户喜欢中文、偏好简洁", "importance": 6})
    entry = await keyed.service.set(S, KeyWrite("/user/preference/style", content, source=source))
    assert rendered_source(entry.source) == {**A1_SOURCE, "locator": CHAT}
    assert json.loads(envelope_line(entry))["source"]["locator"] == CHAT
    done = mcp_provenance(
        {
            "kind": "agent",
            "name": "reminder_done",
            "retrieved_at": "2026-02-23T10:02:00-08:00",
            "locator": {"reason": "sent"},
        }
    )
    gone = await keyed.service.set(
        S, KeyWrite("/user/preference/style", Json.of(None), source=done)
    )
    assert not gone.valid and rendered_source(gone.source)["locator"] == {"reason": "sent"}  # type: ignore[index]


async def test_an_oversized_locator_stores_nothing(keyed: Keyed) -> None:
    huge = Provenance(ProvenanceKind.USER, locator="x" * (MAX_LOCATOR_BYTES + 1))
    with pytest.raises(InvalidArgument) as err:
        await keyed.service.set(S, KeyWrite("/user/a", Json.of(1), source=huge))
    assert "source.locator" in fields(err.value)
    await stored_nothing(keyed)


async def test_an_empty_object_is_no_provenance_under_kb(keyed: Keyed) -> None:
    web = Provenance(ProvenanceKind.WEB, name="apple.com", retrieved_at=RETRIEVED_AT, locator="{}")
    with pytest.raises(InvalidArgument) as err:
        await keyed.service.set(S, KeyWrite("/kb/product/spec", Json.of({"a": 1}), source=web))
    assert set(fields(err.value)) == {"source.locator"}
    await stored_nothing(keyed)


@pytest.mark.parametrize("locator", [["c1"], 7, 7.5])
def test_the_mcp_schema_names_the_locator(locator: Any) -> None:
    args = {"key": "/k", "value": 1, "source": {"kind": "user", "locator": locator}}
    with pytest.raises(ToolArgumentError) as err:
        check_arguments("set_memory", args)
    assert err.value.field == "source.locator"
    ok = check_arguments("set_memory", {"key": "/k", "value": 1, "source": A1_SOURCE})
    assert ok["source"]["locator"] == CHAT


def test_the_python_client_sends_the_design_source_verbatim() -> None:
    pb = client_provenance(A1_SOURCE)
    assert pb.kind == common_pb2.PROVENANCE_KIND_USER
    assert pb.retrieved_at.ToJsonString() == "2026-02-22T10:00:00Z"
    assert json.loads(pb.locator) == CHAT and locator_json(pb.locator) == CHAT
    assert locator_json("https://x") == "https://x"
    with pytest.raises(MemorydError, match=r"source\.locator"):
        client_provenance({"kind": "user", "locator": ["c1"]})
    with pytest.raises(MemorydError, match=r"source\.retrieved_at"):
        client_provenance({"kind": "user", "retrieved_at": "yesterday"})


# ---------------------------------------------------------------- memoryctl key set


def test_key_set_requires_source() -> None:
    result = CliRunner().invoke(
        app, ["--address", "127.0.0.1:1", "key", "set", "/k", "1", "--agent", "a"]
    )
    assert result.exit_code == 2  # a usage error: nothing was sent
    assert "Missing option '--source'" in result.output


def test_key_set_source_forms() -> None:
    assert _source_option("user", "", "").kind == common_pb2.PROVENANCE_KIND_USER
    tool = _source_option("tool:web_search", "", "")
    assert (tool.name, tool.locator) == ("web_search", "web_search")
    assert tool.HasField("retrieved_at")
    verbatim = _source_option(json.dumps(A1_SOURCE), "", "")
    assert json.loads(verbatim.locator) == CHAT and verbatim.name == "chat"
    overridden = _source_option("user", "chat", '{"message_id": "m10"}')
    assert (overridden.name, overridden.locator) == ("chat", '{"message_id":"m10"}')
    for bad in ("nobody", '{"kind": "user"', '{"kind": "user", "locator": [1]}'):
        with pytest.raises(typer.BadParameter):
            _source_option(bad, "", "")
