"""The writer's JSON text kept through the daemon's own changes (domain/json_text.py):
a working memory MERGE, masking, metadata the daemon adds to."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from memoryd.domain import json_text

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
