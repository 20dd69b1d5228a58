"""``as_of`` in the Python client and the tool table (docs/as-of.md): a datetime or a
Watch cursor on the client's reads, ``{"time"}`` or ``{"cursor"}`` on the tools."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoryd_client import requests as rq
from memoryd_client.errors import InvalidArgumentError
from memoryd_client.ops import keys, memories, snapshot
from memoryd_client.tool_args import as_of_point, check_arguments
from memoryd_client.tool_spec import ToolArgumentError

WHEN = datetime(2026, 11, 28, 9, 30, tzinfo=UTC)


def test_every_read_that_takes_as_of_sets_it_as_a_time_or_a_position() -> None:
    calls = [
        memories.recall("a", "tea", as_of=WHEN),
        keys.get_key("a", "/k", as_of=WHEN),
        keys.list_keys("a", as_of=WHEN),
        snapshot.build_snapshot("a", "tea", as_of=WHEN),
        snapshot.default_read("a", as_of=WHEN),
    ]
    for call in calls:
        assert call.request.as_of.time.ToDatetime(tzinfo=UTC) == WHEN  # type: ignore[attr-defined]
    by_position = keys.get_key("a", "/k", as_of="cursor-1").request
    assert by_position.as_of.WhichOneof("point") == "cursor"
    assert by_position.as_of.cursor == "cursor-1"
    assert not memories.recall("a", "tea").request.HasField("as_of")  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [datetime(2026, 1, 1), "", 42, True])
def test_a_bad_as_of_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        rq.set_as_of(memories.recall("a", "tea").request, bad)  # type: ignore[arg-type]
    assert "as_of" in str(raised.value)


def test_the_tools_take_a_time_or_a_cursor_never_both() -> None:
    assert as_of_point({"as_of": {"time": "2026-11-28T09:30:00Z"}}) == WHEN
    assert as_of_point({"as_of": {"cursor": "c7"}}) == "c7"
    assert as_of_point({}) is None
    for bad in ({}, {"time": "2026-11-28T09:30:00Z", "cursor": "c7"}, {"time": "noon"}):
        with pytest.raises(ToolArgumentError) as raised:
            as_of_point({"as_of": bad})
        assert raised.value.field == "as_of"
    with pytest.raises(ToolArgumentError):
        check_arguments("recall", {"query": "tea", "as_of": {"cursor": ""}})
