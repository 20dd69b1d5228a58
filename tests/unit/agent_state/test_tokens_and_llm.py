"""Token counters, truncation, and the chat client against a real loopback server."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.config import LLMSettings
from memoryd.service.common.llm import ChatClient, ChatMessage, LLMError
from memoryd.service.common.tokens import (
    EstimateCounter,
    TokenCounter,
    TokenizerCounter,
    build_token_counter,
    truncate_to_tokens,
)
from tests.unit.agent_state.chat_server import ChatServer

ESTIMATE = EstimateCounter()
TOKENIZER = TokenizerCounter()
COUNTERS: list[TokenCounter] = [ESTIMATE, TOKENIZER]
TEXT = st.text(
    alphabet=st.characters(exclude_categories=["Cs"]) | st.sampled_from("我想预约牙医 ab.1"),
    max_size=200,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("   \n\t", 0),
        ("我想预约下周二的牙医", 10),  # one per CJK character
        ("hello", 2),  # ceil(5 / 4)
        ("a b c", 3),  # every word counts at least 1
        ("well, ok!", 4),  # punctuation counts 1
        ("2026", 2),  # digit runs: ceil(length / 2)
        ("牙医appointment", 2 + 3),
        ("한국어", 6),  # Hangul syllables count 2
        ("🌍", 2),  # outside the BMP
    ],
)
def test_estimate_counts(text: str, expected: int) -> None:
    assert ESTIMATE.count(text) == expected


def test_estimate_is_an_upper_bound_on_plain_prose() -> None:
    prose = [
        "The user prefers a dark blue colour scheme for slides.",
        "Remind me to call the dentist on Monday morning at ten.",
        "我想预约下周二上午十点的牙医",
        "Meetings on Mondays start at 9am and end by noon.",
    ]
    for line in prose:
        assert ESTIMATE.count(line) >= TOKENIZER.count(line), line


@pytest.mark.parametrize(
    "text",
    [
        "a" * 30_000,  # WordPiece: one [UNK] for the whole word
        "x" * 150 + " hello",
        "sk_live_" + "Q9vX2mZ7" * 3_750,  # an API key / base64 blob, 30 KB
    ],
)
def test_tokenizer_counts_long_unbroken_strings_honestly(text: str) -> None:
    """Words WordPiece cannot split are one [UNK] each; they must cost what they
    weigh (a 30 KB string counted as 1 token let a window exceed any budget)."""
    assert TOKENIZER.count(text) >= len(text) // 8
    assert TOKENIZER.count(text) >= ESTIMATE.count(text) // 2


def test_tokenizer_counter_is_the_local_model_tokenizer() -> None:
    assert TOKENIZER.name == "tokenizer:all-MiniLM-L6-v2"
    # No [CLS]/[SEP], no padding to 128, no truncation at 128.
    assert TOKENIZER.count("hello world") == 2
    assert TOKENIZER.count("word " * 600) == 600
    assert build_token_counter("estimate").name == "estimate"
    assert build_token_counter("auto").name == TOKENIZER.name


@settings(max_examples=150, deadline=None)
@given(text=TEXT, limit=st.integers(min_value=-2, max_value=60))
def test_truncation_never_exceeds_the_limit(text: str, limit: int) -> None:
    for counter in COUNTERS:
        cut = truncate_to_tokens(counter, text, limit)
        assert text.startswith(cut)
        assert counter.count(cut) <= max(limit, 0)
        if counter.count(text) <= limit:
            assert cut == text


def test_truncation_with_a_rendering() -> None:
    def label(content: str) -> str:
        return f"instruction: {content}"

    cut = truncate_to_tokens(ESTIMATE, "do this and then that " * 10, 8, label)
    assert ESTIMATE.count(label(cut)) <= 8 and cut
    assert truncate_to_tokens(ESTIMATE, "anything", 2, label) == ""  # the label alone is 4


# ---------------------------------------------------------------- the chat client


def client_for(server: ChatServer, timeout_s: float = 5.0) -> ChatClient:
    return ChatClient(url=server.url, model="m-1", api_key="sk-secret", timeout_s=timeout_s)


async def test_completion_request_and_reply(chat: ChatServer) -> None:
    chat.reply = lambda request: "  the answer  "
    client = client_for(chat)
    try:
        text = await client.complete([ChatMessage("user", "hi")], max_tokens=7)
    finally:
        await client.close()
    assert text == "the answer"
    (body,) = chat.requests
    assert body["model"] == "m-1" and body["max_tokens"] == 7 and body["temperature"] == 0.0
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert chat.headers[0]["Authorization"] == "Bearer sk-secret"


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("error", "HTTP 500"),
        ("malformed", "not JSON"),
        ("no_choices", r"no choices\[0\]\.message\.content"),
    ],
)
async def test_failures_raise_llm_error(chat: ChatServer, mode: str, message: str) -> None:
    chat.mode = mode  # type: ignore[assignment]
    client = client_for(chat)
    try:
        with pytest.raises(LLMError, match=message):
            await client.complete([ChatMessage("user", "hi")])
    finally:
        await client.close()


async def test_empty_reply_is_an_error(chat: ChatServer) -> None:
    chat.reply = lambda request: "   "
    client = client_for(chat)
    try:
        with pytest.raises(LLMError, match="empty"):
            await client.complete([ChatMessage("user", "hi")])
    finally:
        await client.close()


async def test_slow_endpoint_times_out(chat: ChatServer) -> None:
    chat.mode = "slow"
    client = client_for(chat, timeout_s=0.2)
    try:
        with pytest.raises(LLMError, match=r"timed out after 0\.2s"):
            await client.complete([ChatMessage("user", "hi")])
    finally:
        chat.release.set()
        await client.close()


async def test_unreachable_endpoint(chat: ChatServer) -> None:
    url = chat.url
    chat.stop()  # nothing listens on the port any more
    client = ChatClient(url=url, model="m", timeout_s=2)
    try:
        with pytest.raises(LLMError, match="unreachable"):
            await client.complete([ChatMessage("user", "hi")])
    finally:
        await client.close()


async def test_from_settings() -> None:
    assert ChatClient.from_settings(LLMSettings()) is None
    client = ChatClient.from_settings(LLMSettings(url="http://127.0.0.1:9/v1/", model="x"))
    assert client is not None and client.model == "x"
    await client.close()
