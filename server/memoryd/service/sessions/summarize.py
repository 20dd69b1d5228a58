"""Session summaries and memory extraction: an LLM when configured, else extractive.

The extractive summary is deterministic (same input, same output). Every sentence a
user said that states a fact (memoryd.text.facts: first-person statements,
preferences, numbers, names, dates) is kept first; the remaining room goes to the
other sentences of the previous summary and of the folded turns, scored by how many
of the conversation's frequent terms they carry. Lines are printed in their original
order, within the token limit. Only facts beyond the limit itself are left out of the
summary, and those stay in the session's stored messages and are extracted at
EndSession.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jsonschema import Draft202012Validator

from memoryd.domain.agent_state import MessageRole, SessionMessage
from memoryd.domain.models import MemoryType
from memoryd.domain.requests import Degradation
from memoryd.service.common.llm import LLM_COMPONENT, ChatClient, ChatMessage, LLMError
from memoryd.service.common.tokens import TokenCounter, truncate_to_tokens
from memoryd.text.facts import is_fact_sentence, sentences

SummaryMethod = Literal["llm", "extractive"]

#: Characters of one message quoted to the LLM (the prompt must stay bounded).
MAX_PROMPT_MESSAGE_CHARS = 2000
#: Characters of one extracted sentence.
MAX_SENTENCE_CHARS = 300
NO_LLM_REASON = "no LLM configured (llm.url is unset); used the extractive summary"

_TERM = re.compile(r"[^\W\d_]{3,}|\d+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_STOPWORDS_TEXT = (
    "the and for are but not you your with this that have from they will would there their "
    "what about which when make like time just know take into year some could them see other "
    "than then now look only come its over think also back after use two how our work first "
    "well way even new want because any these give day most was were been has had did does "
    "can may should shall yes okay please thanks thank hello sure"
)
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


@dataclass(frozen=True, slots=True)
class SummaryResult:
    text: str
    method: SummaryMethod
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class ExtractedMemory:
    content: str
    memory_type: MemoryType = MemoryType.FACT
    importance: float | None = None
    tags: tuple[str, ...] = ()


def _who(message: SessionMessage) -> str:
    return f"{message.role.value}({message.name})" if message.name else message.role.value


def tool_calls_text(message: SessionMessage) -> str:
    """The message's tool calls as text: ``[tool call get_weather {"city": "Oslo"} #c1]``."""
    return " ".join(
        f"[tool call {c.name} {json.dumps(c.arguments, ensure_ascii=False)} #{c.id}]"
        for c in message.tool_calls
    )


def message_line(message: SessionMessage) -> str:
    """One message as a transcript line: ``role(name): content`` plus its tool calls."""
    calls = tool_calls_text(message)
    text = f"{message.content} {calls}".strip() if calls else message.content
    return f"{_who(message)}: {text}"


# ---------------------------------------------------------------- extractive

#: Prefix of the summary lines that quote a user.
_USER_PREFIX = f"{MessageRole.USER.value}"


def _terms(text: str) -> set[str]:
    lowered = text.lower()
    words = {w for w in _TERM.findall(lowered) if w not in _STOPWORDS}
    return words | set(_CJK.findall(lowered))


def _lines(message: SessionMessage) -> list[str]:
    """The message's sentences as summary lines (``who: sentence``)."""
    who = _who(message)
    out = []
    text = message.content
    if message.tool_calls:
        text = f"{text}\n{tool_calls_text(message)}".strip()
    for sentence in sentences(text):
        if len(sentence) > MAX_SENTENCE_CHARS:
            sentence = sentence[: MAX_SENTENCE_CHARS - 1].rstrip() + "…"
        out.append(f"{who}: {sentence}")
    return out


def is_user_fact_line(line: str) -> bool:
    """A summary line quoting a user sentence that states a fact."""
    who, sep, sentence = line.partition(": ")
    return bool(sep) and who.split("(", 1)[0] == _USER_PREFIX and is_fact_sentence(sentence)


def extractive_summary(
    previous: str, messages: Sequence[SessionMessage], *, counter: TokenCounter, max_tokens: int
) -> str:
    """The previous summary's lines and the messages' sentences within ``max_tokens``:
    the users' fact sentences first, then the most central others; printed in their
    original order. Deterministic."""
    lines = [line.strip() for line in previous.splitlines() if line.strip()]
    # Tool output is often bulky and repetitive: its sentences count half.
    weights = [1.0] * len(lines)
    for message in messages:
        message_lines = _lines(message)
        lines.extend(message_lines)
        weights.extend([0.5 if message.role is MessageRole.TOOL else 1.0] * len(message_lines))
    lines = list(dict.fromkeys(lines))  # repeated lines are kept once (first position)
    if not lines:
        return ""
    line_terms = [_terms(line) for line in lines]
    frequency = Counter(term for terms in line_terms for term in terms)
    facts = [is_user_fact_line(line) for line in lines]

    def score(i: int) -> float:
        terms = line_terms[i]
        if not terms:
            return 0.0
        # Frequent terms make a line central; the square root keeps long lines from winning.
        return weights[i] * sum(frequency[t] for t in terms) / math.sqrt(len(terms))

    ranked = sorted(range(len(lines)), key=lambda i: (not facts[i], -score(i), i))
    chosen: list[int] = []
    used = 0
    for i in ranked:
        cost = counter.count(lines[i])
        if used + cost <= max_tokens:
            chosen.append(i)
            used += cost
    text = "\n".join(lines[i] for i in sorted(chosen))
    # Per-line counts need not add up exactly for every counter: check the whole.
    return truncate_to_tokens(counter, text, max_tokens)


# ---------------------------------------------------------------- LLM


def _transcript(messages: Sequence[SessionMessage]) -> str:
    out = []
    for message in messages:
        line = message_line(message)
        if len(line) > MAX_PROMPT_MESSAGE_CHARS:
            line = line[:MAX_PROMPT_MESSAGE_CHARS] + " […]"
        out.append(line)
    return "\n".join(out)


SUMMARY_SYSTEM_PROMPT = (
    "You maintain the running summary of a conversation between a user and an AI agent. "
    "Merge the previous summary and the new turns into one updated summary. Keep facts, "
    "decisions, open tasks, names, dates and numbers; drop small talk. Answer with the "
    "summary text only."
)
EXTRACT_SYSTEM_PROMPT = (
    "You extract long-term memories from a finished conversation between a user and an AI "
    "agent: durable facts about the user or the world, preferences, recurring patterns, "
    "skills and notable episodes. Answer with a JSON array only, no prose. Each element: "
    '{"content": "<one self-contained sentence>", "memory_type": "fact" | "preference" | '
    '"pattern" | "skill" | "episode", "importance": <0..1>, "tags": ["<short tag>", ...]}. '
    "Answer [] when nothing is worth remembering."
)


def extraction_schema(max_items: int) -> dict[str, Any]:
    return {
        "type": "array",
        "maxItems": max_items,
        "items": {
            "type": "object",
            "required": ["content"],
            "properties": {
                "content": {"type": "string", "pattern": r"^[^\x00]*\S[^\x00]*$"},
                "memory_type": {"enum": [t.value for t in MemoryType]},
                "importance": {"type": "number", "minimum": 0, "maximum": 1},
                "tags": {
                    "type": "array",
                    "maxItems": 8,
                    "items": {"type": "string", "pattern": r"^[^\x00-\x1f\x7f]{1,64}$"},
                },
            },
        },
    }


def _parse_json_answer(text: str) -> Any:
    """JSON from a reply, tolerating a Markdown code fence around it."""
    body = text.strip()
    fence = re.fullmatch(r"```[a-zA-Z]*\s*(.*?)\s*```", body, re.DOTALL)
    if fence:
        body = fence.group(1)
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise LLMError(f"extraction answer is not JSON: {exc.msg}") from None


class Summarizer:
    """Summaries with the LLM when one is configured, falling back to extractive."""

    def __init__(self, *, counter: TokenCounter, max_tokens: int, llm: ChatClient | None) -> None:
        self.counter = counter
        self.max_tokens = max_tokens
        self.llm = llm

    @property
    def preferred_method(self) -> SummaryMethod:
        return "llm" if self.llm is not None else "extractive"

    def extractive(self, previous: str, messages: Sequence[SessionMessage]) -> str:
        return extractive_summary(
            previous, messages, counter=self.counter, max_tokens=self.max_tokens
        )

    async def summarize(self, previous: str, messages: Sequence[SessionMessage]) -> SummaryResult:
        if self.llm is None:
            return SummaryResult(
                self.extractive(previous, messages),
                "extractive",
                (Degradation(LLM_COMPONENT, NO_LLM_REASON),),
            )
        try:
            text = await self._llm_summary(self.llm, previous, messages)
        except LLMError as exc:
            reason = f"{exc.message}; used the extractive summary"
            return SummaryResult(
                self.extractive(previous, messages),
                "extractive",
                (Degradation(LLM_COMPONENT, reason),),
            )
        return SummaryResult(text, "llm")

    async def _llm_summary(
        self, llm: ChatClient, previous: str, messages: Sequence[SessionMessage]
    ) -> str:
        words = max(16, self.max_tokens * 3 // 4)
        prompt = (
            f"Previous summary:\n{previous or '(none)'}\n\n"
            f"New turns:\n{_transcript(messages) or '(none)'}\n\n"
            f"Updated summary, at most {words} words:"
        )
        reply = await llm.complete(
            [ChatMessage("system", SUMMARY_SYSTEM_PROMPT), ChatMessage("user", prompt)],
            max_tokens=self.max_tokens * 2,
        )
        # The endpoint's tokenizer is not ours: enforce the limit with our counter.
        return truncate_to_tokens(self.counter, reply, self.max_tokens)

    async def extract(
        self, summary: str, messages: Sequence[SessionMessage], *, max_items: int
    ) -> list[ExtractedMemory]:
        """Memories worth keeping, from the LLM; raises LLMError (also when none is
        configured or the answer does not match :func:`extraction_schema`)."""
        if self.llm is None:
            raise LLMError("no LLM configured (llm.url is unset)")
        prompt = (
            f"Summary of earlier turns:\n{summary or '(none)'}\n\n"
            f"Latest turns:\n{_transcript(messages) or '(none)'}\n\n"
            f"Extract at most {max_items} memories as a JSON array:"
        )
        reply = await self.llm.complete(
            [ChatMessage("system", EXTRACT_SYSTEM_PROMPT), ChatMessage("user", prompt)]
        )
        data = _parse_json_answer(reply)
        if isinstance(data, dict) and isinstance(data.get("memories"), list):
            data = data["memories"]  # a common wrapper: {"memories": [...]}
        validator = Draft202012Validator(extraction_schema(max_items))
        error = next(iter(sorted(validator.iter_errors(data), key=lambda e: e.json_path)), None)
        if error is not None:
            raise LLMError(
                f"extraction answer does not match the expected shape at {error.json_path}: "
                f"{error.message[:200]}"
            )
        return [
            ExtractedMemory(
                content=item["content"].strip(),
                memory_type=MemoryType(item.get("memory_type", MemoryType.FACT.value)),
                importance=float(item["importance"]) if "importance" in item else None,
                tags=tuple(dict.fromkeys(t.strip() for t in item.get("tags", []) if t.strip())),
            )
            for item in data
        ]
