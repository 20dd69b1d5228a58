from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import PageCursor, Partition
from memoryd.service.common.pagination import PageTokenCodec, fingerprint

CODEC = PageTokenCodec(b"s" * 32)
P = Partition("t", "a")


@given(st.datetimes(timezones=st.just(UTC)), st.text(min_size=1, max_size=40))
def test_round_trip(when: datetime, memory_id: str) -> None:
    fp = fingerprint(P, ["q"])
    assert CODEC.decode(CODEC.encode(PageCursor(when, memory_id), fp), fp) == PageCursor(
        when, memory_id
    )


def test_bound_to_partition_query_and_secret() -> None:
    fp = fingerprint(P, ["q"])
    token = CODEC.encode(PageCursor(datetime.now(UTC), "x"), fp)
    for other in (
        fingerprint(Partition("t", "b"), ["q"]),
        fingerprint(Partition("u", "a"), ["q"]),
        fingerprint(P, ["r"]),
    ):
        with pytest.raises(InvalidArgument):
            CODEC.decode(token, other)
    with pytest.raises(InvalidArgument):
        PageTokenCodec(b"z" * 32).decode(token, fp)


@given(st.text(max_size=200))
def test_garbage_is_invalid_argument_never_a_crash(token: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        CODEC.decode(token, "fp")
    assert err.value.violations[0].field == "page_token"
