"""The one OpenAI-compatible chat client (``POST {url}/chat/completions``).

An LLM is optional everywhere: callers catch :class:`LLMError` and fall back to a
deterministic path, reporting a degradation with component ``"llm"``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from memoryd.config import LLMSettings
from memoryd.domain.errors import Unavailable

#: The component name in Degradation entries.
LLM_COMPONENT = "llm"
#: Characters of an error response body quoted in LLMError.
_BODY_EXCERPT = 200


class LLMError(Unavailable):
    """The chat endpoint failed: transport error, timeout, HTTP error or a malformed answer."""


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str


class ChatClient:
    """An async client for one OpenAI-compatible chat completions endpoint."""

    def __init__(
        self,
        *,
        url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self._endpoint = url.rstrip("/") + "/chat/completions"
        self._timeout_s = timeout_s
        self._http = httpx.AsyncClient(
            headers=headers, timeout=httpx.Timeout(timeout_s), transport=transport
        )

    @classmethod
    def from_settings(cls, settings: LLMSettings) -> ChatClient | None:
        """None when no url is configured (the daemon then runs without an LLM)."""
        if not settings.url:
            return None
        return cls(
            url=settings.url,
            model=settings.model,
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            timeout_s=settings.timeout_s,
        )

    async def close(self) -> None:
        await self._http.aclose()

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> str:
        """The assistant's reply text; raises LLMError on any failure or an empty reply."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": temperature,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        try:
            response = await self._http.post(self._endpoint, json=body)
        except httpx.TimeoutException:
            raise LLMError(f"chat endpoint timed out after {self._timeout_s:g}s") from None
        except httpx.HTTPError as exc:
            raise LLMError(f"chat endpoint unreachable: {type(exc).__name__}: {exc}") from None
        if response.status_code != 200:
            excerpt = response.text[:_BODY_EXCERPT].strip()
            raise LLMError(f"chat endpoint answered HTTP {response.status_code}: {excerpt}")
        return _reply_text(response)


def _reply_text(response: httpx.Response) -> str:
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise LLMError("chat endpoint answered with a body that is not JSON") from None
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMError("chat endpoint answer has no choices[0].message.content") from None
    if not isinstance(content, str) or not content.strip():
        raise LLMError("chat endpoint answered with empty content")
    return content.strip()
