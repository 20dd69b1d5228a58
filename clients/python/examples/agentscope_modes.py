"""AgentScope-style long-term memory on memoryd, in its three modes, with no LLM: a
scripted "model" plays the same three turns in each mode.

AgentScope gives an agent a long-term memory with two operations, ``record`` (keep
these messages) and ``retrieve`` (what is relevant to this message), and three ways to
use it (``long_term_memory_mode``):

``agent_control``   the model gets ``record`` and ``retrieve`` as tools and decides when
                    to call them;
``static_control``  the framework retrieves for every user message and puts what it
                    found into the prompt before the reply, then records the turn after
                    it; the model sees no memory tools;
``both``            the framework does both, and the model has the tools too.

Here ``record`` keeps each message in memoryd's long-term memory (an episode, tagged
with its role) and ``retrieve`` recalls from it: the tools come from memoryd's one tool
table (``memoryd_client.tools``), the same the MCP server serves. Run a daemon
(``make run``), then::

    python clients/python/examples/agentscope_modes.py --address 127.0.0.1:50051
"""

from __future__ import annotations

import argparse
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memoryd_client import MemorydClient, MemoryTools, ToolContext

MODES = ("agent_control", "static_control", "both")
SYSTEM = "You are a helpful assistant."


@dataclass
class Turn:
    user: str
    #: Tool calls the "model" makes when it has the memory tools (agent_control, both).
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: The reply, from the prompt it saw and its tools' results.
    reply: Callable[[str, list[dict[str, Any]]], str] = lambda prompt, results: "OK."


#: What a remembered message says the user likes ("Ada likes green tea", "... I like
#: green tea."): the model reads it from whichever such memory it is given, the one it
#: recorded itself or the user's own words the framework recorded.
_LIKES = re.compile(r"\blikes? ([^.!?]*tea)\b", re.IGNORECASE)


def _recalled(prompt: str, results: list[dict[str, Any]]) -> str:
    """What the model knows about the user's drink: from a tool result or the prompt."""
    for result in results:
        for hit in result.get("memories", []):
            liked = _LIKES.search(hit["content"])
            if liked:
                return f"You like {liked.group(1)}."
    if "green tea" in prompt:
        return "You like green tea (from memory)."
    return "I don't know yet."


SCRIPT = [
    Turn(
        "Hi! I'm Ada and I like green tea.",
        [("record", {"messages": [{"role": "user", "content": "Ada likes green tea"}]})],
        lambda prompt, results: "Nice to meet you, Ada.",
    ),
    Turn("I'm off to Lisbon next week.", [], lambda prompt, results: "Have a good trip!"),
    Turn(
        "What do I like to drink?",
        [("retrieve", {"query": "what does Ada like to drink?", "limit": 3})],
        _recalled,
    ),
]


def run(client: MemorydClient, mode: str, agent_id: str) -> list[dict[str, Any]]:
    """Play the script in ``mode``; returns what the model saw and did per turn."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    tools = MemoryTools(client, ToolContext(agent_id=agent_id), names=["record", "retrieve"])
    model_has_tools = mode in ("agent_control", "both")
    framework_controls = mode in ("static_control", "both")
    transcript = []
    for turn in SCRIPT:
        prompt = SYSTEM
        if framework_controls:  # retrieve before the reply, into the prompt
            found = json.loads(tools.handle_tool_call("retrieve", {"query": turn.user, "limit": 3}))
            lines = [f"- {m['content']}" for m in found["memories"]]
            if lines:
                prompt += "\n\nWhat you remember:\n" + "\n".join(lines)
        # A real agent now calls its model with `prompt` (and `tools.definitions` if the
        # model has the tools); the script plays the model's tool calls.
        results = []
        if model_has_tools:
            for name, arguments in turn.tool_calls:
                results.append(json.loads(tools.handle_tool_call(name, arguments)))
        answer = turn.reply(prompt, results)
        if framework_controls:  # record the turn after the reply
            tools.handle_tool_call(
                "record",
                {
                    "messages": [
                        {"role": "user", "content": turn.user},
                        {"role": "assistant", "content": answer},
                    ]
                },
            )
        transcript.append(
            {
                "user": turn.user,
                "prompt": prompt,
                "tools": [d["function"]["name"] for d in tools.definitions]
                if model_has_tools
                else [],
                "tool_results": results,
                "answer": answer,
            }
        )
    return transcript


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--address", default=None, help="daemon address ($MEMORYD_ADDRESS)")
    parser.add_argument("--mode", choices=[*MODES, "all"], default="all")
    parser.add_argument("--json", action="store_true", help="print the transcripts as JSON")
    args = parser.parse_args()
    modes = MODES if args.mode == "all" else (args.mode,)
    out = {}
    with MemorydClient(args.address) as client:
        for mode in modes:
            out[mode] = run(client, mode, f"agentscope-{mode}-{uuid.uuid4().hex[:6]}")
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for mode, transcript in out.items():
        print(f"== {mode}")
        for turn in transcript:
            print(f"user      > {turn['user']}")
            print(f"assistant > {turn['answer']}")
        print()


if __name__ == "__main__":
    main()
