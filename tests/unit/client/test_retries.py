"""Retries with backoff on UNAVAILABLE, against a real grpc.aio server on loopback that
fails N times: idempotent calls are retried, writes only when the caller opts in."""

from __future__ import annotations

import grpc
import pytest

from memoryd_client import (
    AsyncMemorydClient,
    InternalError,
    MemorydClient,
    RetryPolicy,
    UnavailableError,
)
from tests.unit.client.fake_server import Script, fake_daemon

#: Tiny backoffs: the tests check behaviour, not timing.
FAST = RetryPolicy(max_attempts=4, initial_backoff=0.001, max_backoff=0.01)


def test_idempotent_calls_are_retried_until_they_succeed() -> None:
    script = Script(failures={"Recall": 3})
    with fake_daemon(script) as address, MemorydClient(address, retry=FAST) as client:
        hits = client.recall("a", "tea")
    assert hits[0].memory.content == "about tea"
    assert script.calls["Recall"] == 4
    # One logical call: every attempt carried the same request id.
    ids = {m["x-request-id"] for m in script.metadata["Recall"]}
    assert len(ids) == 1


def test_retries_stop_after_max_attempts() -> None:
    script = Script(failures={"Recall": 10})
    with (
        fake_daemon(script) as address,
        MemorydClient(address, retry=FAST) as client,
        pytest.raises(UnavailableError, match="scripted failure 4"),
    ):
        client.recall("a", "tea")
    assert script.calls["Recall"] == 4


def test_remember_is_not_retried_unless_the_caller_opts_in() -> None:
    script = Script(failures={"Remember": 2})
    with fake_daemon(script) as address, MemorydClient(address, retry=FAST) as client:
        with pytest.raises(UnavailableError):
            client.remember("a", "x")
        assert script.calls["Remember"] == 1
        stored = client.with_options(retry_writes=True).remember("a", "x")
    assert stored.memory.content == "x"
    assert script.calls["Remember"] == 3  # one more failure, then success


def test_other_codes_are_never_retried() -> None:
    script = Script(failures={"Recall": 1}, code=grpc.StatusCode.INTERNAL)
    with (
        fake_daemon(script) as address,
        MemorydClient(address, retry=FAST) as client,
        pytest.raises(InternalError),
    ):
        client.recall("a", "tea")
    assert script.calls["Recall"] == 1


def test_the_deadline_covers_every_attempt() -> None:
    """A backoff longer than the time left ends the retries early."""
    slow = RetryPolicy(max_attempts=5, initial_backoff=60, max_backoff=60, jitter=0)
    script = Script(failures={"Recall": 10})
    with (
        fake_daemon(script) as address,
        MemorydClient(address, retry=slow, timeout=5) as client,
        pytest.raises(UnavailableError),
    ):
        client.recall("a", "tea")
    assert script.calls["Recall"] == 1


def test_no_retry_policy() -> None:
    script = Script(failures={"Recall": 1})
    with (
        fake_daemon(script) as address,
        MemorydClient(address, retry=RetryPolicy(max_attempts=1)) as client,
        pytest.raises(UnavailableError),
    ):
        client.recall("a", "tea")
    assert script.calls["Recall"] == 1


async def test_async_client_retries_the_same_way() -> None:
    script = Script(failures={"Recall": 2, "Remember": 1})
    with fake_daemon(script) as address:
        async with AsyncMemorydClient(address, retry=FAST) as client:
            hits = await client.recall("a", "tea")
            assert hits[0].memory.content == "about tea"
            with pytest.raises(UnavailableError):
                await client.remember("a", "x")
            assert (await client.with_options(retry_writes=True).remember("a", "y")).memory
    assert script.calls == {"Recall": 3, "Remember": 2}


async def test_a_server_that_is_not_there_is_unavailable_after_retries() -> None:
    with fake_daemon(Script()) as address:
        pass  # started and stopped: nobody listens on the port any more
    policy = RetryPolicy(max_attempts=2, initial_backoff=0.001)
    async with AsyncMemorydClient(address, retry=policy) as client:
        with pytest.raises(UnavailableError) as raised:
            await client.recall("a", "tea")
    assert raised.value.request_id == ""  # no daemon answered
