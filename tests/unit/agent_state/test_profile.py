"""The agent profile: etag flows, size limit, isolation."""

from __future__ import annotations

import pytest

from memoryd.domain.errors import FailedPrecondition, InvalidArgument, NotFound
from memoryd.service.agent_state.profile import ProfileService, profile_etag
from tests.unit.agent_state.conftest import FakeClock
from tests.unit.service.helpers import scope_for

A = scope_for("agent-a")
B = scope_for("agent-b")


async def test_get_without_profile_is_not_found(profiles: ProfileService) -> None:
    with pytest.raises(NotFound):
        await profiles.get(A)


async def test_unconditional_set_and_get(profiles: ProfileService, clock: FakeClock) -> None:
    first = await profiles.set(A, "# Agent\nBe brief.")
    assert first.version == 1 and first.updated_at == clock.now
    assert first.etag == profile_etag(1, "# Agent\nBe brief.") and len(first.etag) == 32
    got = await profiles.get(A)
    assert got == first
    clock.advance(seconds=5)
    second = await profiles.set(A, "# Agent\nBe brief.")  # same content, new version
    assert second.version == 2 and second.etag != first.etag and second.updated_at == clock.now


async def test_if_match_flows(profiles: ProfileService) -> None:
    created = await profiles.set(A, "v1", if_match="none")
    with pytest.raises(FailedPrecondition, match="already exists"):
        await profiles.set(A, "again", if_match="none")
    updated = await profiles.set(A, "v2", if_match=created.etag)
    with pytest.raises(FailedPrecondition, match="does not match"):
        await profiles.set(A, "lost update", if_match=created.etag)  # stale etag
    quoted = await profiles.set(A, "v3", if_match=f'"{updated.etag}"')  # HTTP style
    upper = await profiles.set(A, "v4", if_match=quoted.etag.upper())
    anything = await profiles.set(A, "v5", if_match="*")
    assert anything.version == 5 and upper.version == 4
    assert (await profiles.get(A)).content == "v5"


async def test_if_match_without_profile(profiles: ProfileService) -> None:
    for etag in ("*", profile_etag(1, "x")):
        with pytest.raises(FailedPrecondition, match="no profile exists"):
            await profiles.set(A, "x", if_match=etag)
    with pytest.raises(NotFound):
        await profiles.get(A)


async def test_size_limit_and_nul(profiles: ProfileService) -> None:
    await profiles.set(A, "é" * 512)  # exactly 1024 bytes
    with pytest.raises(InvalidArgument) as err:
        await profiles.set(A, "é" * 512 + "x")
    assert err.value.violations[0].field == "content"
    assert "profile.max_content_bytes" in err.value.violations[0].description
    with pytest.raises(InvalidArgument):
        await profiles.set(A, "a\x00b")


async def test_profiles_are_per_agent(profiles: ProfileService) -> None:
    a = await profiles.set(A, "agent a")
    with pytest.raises(NotFound):
        await profiles.get(B)
    # B's "none" precondition holds: A's profile is invisible to it.
    b = await profiles.set(B, "agent b", if_match="none")
    with pytest.raises(FailedPrecondition):
        await profiles.set(B, "x", if_match=a.etag)
    assert (await profiles.get(A)).content == "agent a" and b.version == 1


async def test_empty_document_is_a_valid_profile(profiles: ProfileService) -> None:
    empty = await profiles.set(A, "")
    assert (await profiles.get(A)).etag == empty.etag
