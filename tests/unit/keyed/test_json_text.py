"""The writer's JSON text kept through the daemon's own changes (domain/json_text.py):
a working memory MERGE, masking, metadata the daemon adds to."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryd.domain import json_text
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import Json

WRITTEN = (
    '{"price": 1.50, "e": 1e2, "big": 12345678901234567, "z": -0, "n": {"x": 2.0, "s": "\\u00e9"}}'
)


def test_members_are_the_texts_as_written() -> None:
    text = json_text.compact(WRITTEN)
    found = json_text.members(text)
    assert list(found) == ["price", "e", "big", "z", "n"]
    assert found["price"] == ('"price"', "1.50")
    assert found["n"] == ('"n"', '{"x":2.0,"s":"\\u00e9"}')
    assert json_text.members("{}") == {}
    # Whitespace between tokens is skipped, inside strings kept.
    assert json_text.members('{ "a b" : [ 1.0 ] , "c":{} }') == {
        "a b": ('"a b"', "[ 1.0 ]"),
        "c": ('"c"', "{}"),
    }


def test_merge_keeps_untouched_members_and_takes_the_new_ones_as_written() -> None:
    base = json_text.compact(WRITTEN)
    merged = json_text.merge_objects(base, '{"e":2.50,"new":1E-7}')
    assert merged == (
        '{"price":1.50,"e":2.50,"big":12345678901234567,"z":-0,'
        '"n":{"x":2.0,"s":"\\u00e9"},"new":1E-7}'
    )
    # The same member spelled with an escape is the same member.
    assert json_text.merge_objects('{"d":1.0}', '{"\\u0064":2.0}') == '{"\\u0064":2.0}'


def test_spelled_keeps_what_is_unchanged() -> None:
    text = json_text.compact(WRITTEN)
    value = json_text.parse(text)
    assert json_text.spelled(value, text) == text
    value["n"]["s"] = "masked"
    value["added"] = 1.5
    assert json_text.spelled(value, text) == (
        '{"price":1.50,"e":1e2,"big":12345678901234567,"z":-0,'
        '"n":{"x":2.0,"s":"masked"},"added":1.5}'
    )
    # A change of JSON type is a change (True == 1 in Python).
    assert json_text.spelled({"v": True}, '{"v":1}') == '{"v":true}'
    assert json_text.spelled([1.50, "x"], '[1.50,"y"]') == '[1.50,"x"]'
    assert json_text.spelled({"a": 1}, "") == '{"a":1}'
    assert json_text.spelled({"a": 1}, "not json") == '{"a":1}'


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
_OBJECTS = st.dictionaries(st.text(max_size=4), _JSON, max_size=5)


def _spaced(value: Any) -> str:
    return json.dumps(value, indent=1)


@given(_OBJECTS, _OBJECTS)
def test_merge_is_the_merge_of_the_values(base: dict[str, Any], update: dict[str, Any]) -> None:
    merged = json_text.merge_objects(_spaced(base), _spaced(update))
    assert json.loads(merged) == {**base, **update}
    assert list(json.loads(merged)) == list({**base, **update})


@given(_JSON, _JSON)
def test_spelled_is_always_the_value(earlier: Any, value: Any) -> None:
    text = _spaced(earlier)
    out = json_text.spelled(value, text)
    assert json.loads(out) == json.loads(json_text.dumps(value))
    assert json_text.spelled(json.loads(text), text) == text


# ---------------------------------------------------------------- the Json type (issue 30)


@given(_JSON, st.sampled_from([None, 1, 2]))
def test_compact_removes_exactly_the_whitespace_between_tokens(value: Any, indent: Any) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert json_text.compact(text) == json_text.dumps(value)
    assert Json.parse(text) == Json(json_text.dumps(value), json.loads(text))


@given(_JSON)
def test_of_and_parse_agree(value: Any) -> None:
    made = Json.of(value)
    assert made.value == value and Json.parse(made.text) == made


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("1" + "0" * 400, "out of the range of a double"),
        ("-1" + "0" * 309, "out of the range of a double"),
        ('{"a": [1e309]}', "out of the range of a double"),
        ("[-Infinity]", "not a JSON number"),
        ("NaN", "not a JSON number"),
        ("[" * 25 + "]" * 25, "nested deeper than 24"),
        ('{"a":' * 25 + "1" + "}" * 25, "nested deeper than 24"),
        ('["\\ud800"]', "lone surrogate"),
        ('{"a": 1, "a": 2}', "twice"),
    ],
)
def test_what_no_reader_could_hold_is_refused_naming_the_field(text: str, why: str) -> None:
    with pytest.raises(json_text.JsonTextError, match=why):
        Json.parse(text)
    with pytest.raises(InvalidArgument) as err:
        Json.from_text(text, "content_json")
    assert [v.field for v in err.value.violations] == ["content_json"]


@pytest.mark.parametrize(
    "value",
    [10**400, -(10**309), [math.nan], {"a": math.inf}, json.loads("[" * 30 + "]" * 30), "\ud800"],
)
def test_data_no_reader_could_hold_is_refused(value: Any) -> None:
    with pytest.raises(InvalidArgument) as err:
        Json.from_value(value, "value")
    assert [v.field for v in err.value.violations] == ["value"]


@pytest.mark.parametrize(
    "text",
    [
        str(2**64),
        "1" + "0" * 308,  # 1e308: a double holds it
        "[" * 24 + "]" * 24,
        '"' + "[" * 40 + '"',  # brackets in a string do not nest
        '["\\\\", "\\"[[[[[[[[[[[[[[[[[[[[[[[[[[["]',
        "1e-400",
    ],
)
def test_what_every_reader_holds_is_kept_as_written(text: str) -> None:
    assert Json.parse(text).text == text.replace(", ", ",")


def test_an_object_is_required_where_one_is_named() -> None:
    with pytest.raises(InvalidArgument) as err:
        Json.from_text("[1]", "state_json", object_only=True)
    assert [v.field for v in err.value.violations] == ["state_json"]
    assert Json.from_value({"a": 1}, "state", object_only=True).members == {"a": 1}
