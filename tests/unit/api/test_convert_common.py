"""The hand-rolled timestamp conversion equals protobuf's FromDatetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from google.protobuf import timestamp_pb2
from hypothesis import given
from hypothesis import strategies as st

from memoryd.api.convert.common import set_timestamp

# Timestamp's valid range: years 1 to 9999.
_moments = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30))
_zones = st.one_of(
    st.none(),
    st.just(UTC),
    st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m))),
)


@given(_moments, _zones)
def test_set_timestamp_matches_from_datetime(moment: datetime, zone: timezone | None) -> None:
    when = moment if zone is None else moment.replace(tzinfo=zone)
    expected, got = timestamp_pb2.Timestamp(), timestamp_pb2.Timestamp()
    expected.FromDatetime(when)
    set_timestamp(got, when)
    assert got == expected


def test_none_leaves_the_field_unset() -> None:
    got = timestamp_pb2.Timestamp(seconds=5)
    set_timestamp(got, None)
    assert got.seconds == 5
