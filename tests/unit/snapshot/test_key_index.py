"""The default-read ranking and its index (service/keyed/index.py)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.config import LimitsSettings
from memoryd.domain.keyed import KeyEntry
from memoryd.domain.models import SecurityLevel
from memoryd.service.keyed.index import PartitionIndex, Ranking, indexed, micros

DENTIST = "/user/calendar/2026-02-23_10-00_dentist"


def add(index: PartitionIndex, entry: KeyEntry) -> None:
    index.apply(entry, indexed(entry, LimitsSettings()))


def design_index(now: datetime) -> PartitionIndex:
    """The design's example keys at ages an agent would see."""
    examples: list[tuple[str, object, timedelta]] = [
        (
            DENTIST,
            {
                "summary": "Dentist appointment on 23 Feb at 10:00",
                "type": "reminder",
                "importance": 6,
                "tags": ["calendar", "health"],
            },
            timedelta(hours=2),
        ),
        (
            "/user/preference/style",
            {
                "summary": "Prefers short answers with code first",
                "type": "preference",
                "importance": 8,
                "tags": ["style"],
            },
            timedelta(days=3),
        ),
        (
            "/user/preference/language",
            {
                "summary": "Answers in Portuguese",
                "type": "preference",
                "importance": 0.9,
                "tags": ["language"],
            },
            timedelta(days=2),
        ),
        ("/user/name", {"summary": "Alice", "type": "fact"}, timedelta(days=2, hours=1)),
        (
            "/kb/teeth",
            {"summary": "Adults have 32 teeth", "type": "fact", "importance": 0.3},
            timedelta(hours=1),
        ),
        ("/scratch/note", {"text": "call back", "importance": 0.1}, timedelta(minutes=30)),
    ]
    index = PartitionIndex()
    for version, (key, content, age) in enumerate(examples, start=1):
        add(
            index,
            KeyEntry(key=key, content=content, valid=True, version=version, updated_at=now - age),
        )
    return index


def test_ranking_on_the_design_examples() -> None:
    """Issue 22: the sort was by updated_at alone, so importance and tags only broke
    exact ties (with tags=[language] a 0.9-importance language key came last)."""
    now = datetime(2026, 2, 20, 12, tzinfo=UTC)
    index = design_index(now)

    def order(*tags: str) -> list[str]:
        ranked = index.ranked(now, frozenset(tags), SecurityLevel.RESTRICTED, "/", Ranking())
        return [item.key for _, item in ranked]

    by_recency = sorted(index.keys, key=lambda k: -index.keys[k].ts)
    assert by_recency[:3] == ["/scratch/note", "/kb/teeth", DENTIST]
    # Scores (0.6 recency, half-life 24 h, + 0.25 importance + 0.15 tag share): dentist
    # 0.717, teeth 0.658, note 0.616, language 0.375, style 0.275, name 0.271.
    # Recency leads: the keys of the last hours come before the days-old ones. But
    # importance visibly matters: the dentist (2 h old, importance 6 -> 0.6) beats the
    # newer teeth fact (1 h, 0.3) and note (30 min, 0.1); among keys days old, whose
    # recency has faded, the style preference (3 days, 8 -> 0.8) beats the name (2
    # days, 0.5).
    assert order() == [
        DENTIST,
        "/kb/teeth",
        "/scratch/note",
        "/user/preference/language",
        "/user/preference/style",
        "/user/name",
    ]
    assert order() != by_recency
    # Tags visibly matter: asked about style, the style preference (0.425) overtakes
    # the language one (0.375); the tag share is worth about 10 hours of recency for
    # fresh keys (language with its tag, 0.525, stays behind the 30-minute note).
    style = order("style")
    assert style.index("/user/preference/style") < style.index("/user/preference/language")
    assert order("language")[3] == "/user/preference/language"
    assert order("calendar", "health")[0] == DENTIST
    # A week on, recency has faded everywhere: importance decides.
    later = now + timedelta(days=7)
    ranked = index.ranked(later, frozenset(), SecurityLevel.RESTRICTED, "/", Ranking())
    assert next(item.key for _, item in ranked) == "/user/preference/language"


@settings(max_examples=40)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 14 * 24 * 60),  # age in minutes
            st.floats(0, 1),
            st.sets(st.sampled_from("abcde"), max_size=3),
            st.sampled_from(list(SecurityLevel)),
        ),
        min_size=1,
        max_size=60,
    ),
    st.sets(st.sampled_from("abcdef"), max_size=3),
    st.sampled_from(list(SecurityLevel)),
)
def test_the_index_ranks_exactly_as_scoring_every_key(
    keys: list[tuple[int, float, set[str], SecurityLevel]],
    tags: set[str],
    clearance: SecurityLevel,
) -> None:
    now = datetime(2026, 3, 1, tzinfo=UTC)
    index = PartitionIndex()
    for i, (age, importance, key_tags, level) in enumerate(keys):
        add(
            index,
            KeyEntry(
                key=f"/k/{i:03d}",
                content={"importance": importance, "tags": sorted(key_tags)},
                valid=True,
                version=i + 1,
                updated_at=now - timedelta(minutes=age),
                security_level=level,
            ),
        )
    got = list(index.ranked(now, frozenset(tags), clearance, "/", Ranking()))
    # Under a prefix every key of the subtree is scored: the brute-force reference.
    every = list(index.ranked(now, frozenset(tags), clearance, "/k/", Ranking()))
    visible = [i for i in index.keys.values() if i.level <= clearance]
    assert len(got) == len(visible) == len(every)
    assert [s for s, _ in got] == pytest.approx([s for s, _ in every])


def test_a_read_scores_about_as_many_keys_as_it_returns() -> None:
    """O(result), not O(keys): 20,000 keys written within the same minute (recency
    cannot tell them apart), importance in hundredths; the best 30 cost about as
    many exact scores (scoring every key is what a read did before)."""
    now = datetime(2026, 3, 1, tzinfo=UTC)
    index = PartitionIndex()
    rng = random.Random(5)
    for i in range(20_000):
        add(
            index,
            KeyEntry(
                key=f"/notes/{i:05d}",
                content={
                    "importance": round(rng.random(), 2),
                    "tags": [rng.choice("abcdefgh")],
                },
                valid=True,
                version=i + 1,
                updated_at=now - timedelta(seconds=rng.randint(0, 60)),
            ),
        )
    for tags in (frozenset(), frozenset({"c"}), frozenset({"a", "b"})):
        ranked = index.ranked(now, tags, SecurityLevel.RESTRICTED, "/", Ranking())
        best = [next(ranked) for _ in range(30)]
        assert index.scored < 150, (sorted(tags), index.scored)
        every = list(index.ranked(now, tags, SecurityLevel.RESTRICTED, "/notes/", Ranking()))
        assert [s for s, _ in best] == pytest.approx([s for s, _ in every[:30]])


def test_writes_replace_and_tombstones_and_expiry_remove() -> None:
    now = datetime(2026, 3, 1, tzinfo=UTC)
    index = PartitionIndex()
    soon = (now + timedelta(hours=1)).isoformat()
    add(index, KeyEntry("/a", {"importance": 0.1}, True, 1, now))
    add(index, KeyEntry("/b", {"expired_at": soon}, True, 2, now))
    add(index, KeyEntry("/a", {"importance": 0.9}, True, 3, now))
    add(index, KeyEntry("/a", {"importance": 0.2}, True, 1, now))  # older: ignored
    assert index.keys["/a"].importance == 0.9 and index.version == 3
    add(index, KeyEntry("/c", "x", True, 4, now))
    add(index, KeyEntry("/c", None, False, 5, now))
    assert sorted(index.keys) == ["/a", "/b"]
    later = now + timedelta(hours=2)
    ranked = index.ranked(later, frozenset(), SecurityLevel.RESTRICTED, "/", Ranking())
    assert [item.key for _, item in ranked] == ["/a"]  # /b expired at "later"
    assert index.expire(micros(later)) == 1 and sorted(index.keys) == ["/a"]


def test_a_bulk_load_ranks_like_one_write_at_a_time() -> None:
    now = datetime(2026, 3, 1, tzinfo=UTC)
    rng = random.Random(9)
    entries = [
        KeyEntry(
            key=f"/d{i % 5}/k{i:04d}",
            content={"importance": round(rng.random(), 2), "tags": [rng.choice("abc")]},
            valid=True,
            version=i + 1,
            updated_at=now - timedelta(minutes=rng.randint(0, 5000)),
        )
        for i in range(500)
    ]
    one_by_one, bulk = PartitionIndex(), PartitionIndex()
    for entry in entries:
        add(one_by_one, entry)
    items = [indexed(e, LimitsSettings()) for e in entries]
    bulk.load([i for i in items if i is not None], 500)
    for tags in (frozenset(), frozenset({"a"})):
        for prefix in ("/", "/d3/"):
            a = one_by_one.ranked(now, tags, SecurityLevel.RESTRICTED, prefix, Ranking())
            b = bulk.ranked(now, tags, SecurityLevel.RESTRICTED, prefix, Ranking())
            assert [i.key for _, i in a] == [i.key for _, i in b]
    assert bulk.version == 500
