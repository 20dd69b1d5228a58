"""An agent loop with memoryd and no LLM: a scripted "model" plays four turns.

Each turn shows the flow a real agent follows:

1. put the agent's memory into the prompt (``client.with_memory``: BuildSnapshot for
   the user's message, merged into the system message; Recall if the daemon has no
   BuildSnapshot);
2. hand the memory tools to the model (``MemoryTools.definitions``) and run the tool
   calls it makes (``handle_tool_call``), adding their results as tool messages;
3. answer, then ``record_messages`` the turn in the session (short-term memory).

A real model would choose the tool calls; here the script does, so the example runs
anywhere. Run a daemon (``make run``), then::

    python clients/python/examples/agent_loop.py --address 127.0.0.1:50051
"""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memoryd_client import TOOL_NAMES, MemorydClient, MemoryTools, ToolContext

SYSTEM = "You are a travel assistant. Be concise."


@dataclass
class Turn:
    user: str
    #: The tool calls the "model" makes: (tool name, arguments).
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: The answer, from the tool results of this turn.
    reply: Callable[[list[dict[str, Any]]], str] = lambda results: "OK."


SCRIPT = [
    Turn(
        "Hi, I'm Ada. Please keep your answers short, I read them on my phone.",
        [
            ("remember", {"content": "Ada prefers short answers", "memory_type": "preference"}),
            ("set_memory", {"key": "/user/name", "value": "Ada", "source": "user"}),
        ],
        lambda results: "Got it, Ada: short answers from now on.",
    ),
    Turn(
        "I'm planning a trip to Lisbon in May, on a tight budget.",
        [
            ("update_working_memory", {"updates": {"task": "trip", "city": "Lisbon"}}),
            (
                "remember",
                {
                    "content": "Ada is planning a budget trip to Lisbon in May",
                    "memory_type": "episode",
                },
            ),
        ],
        lambda results: "Lisbon in May: noted. I'll look for cheap stays.",
    ),
    Turn(
        "How do I like my answers again?",
        [("recall", {"query": "how does Ada like answers", "limit": 1})],
        lambda results: f"You asked for: {results[0]['memories'][0]['content']}.",
    ),
    Turn(
        "What have we talked about so far?",
        [("retrieve", {"source": "session"})],
        lambda results: (
            "So far: "
            + "; ".join(m["content"] for m in results[0]["messages"] if m["role"] == "user")
        ),
    ),
]


def run(client: MemorydClient, agent_id: str, session_id: str) -> list[dict[str, Any]]:
    """Play the script; returns the transcript (what the model saw and did per turn)."""
    tools = MemoryTools(
        client,
        ToolContext(agent_id=agent_id, session_id=session_id, thread_id=session_id),
        [*TOOL_NAMES, "record_messages"],
    )
    transcript = []
    for turn in SCRIPT:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": turn.user}]
        prompt = client.with_memory(messages, agent_id, session_id=session_id, thread_id=session_id)
        # A real agent now calls its model with `prompt` and `tools=tools.definitions`.
        results = []
        for name, arguments in turn.tool_calls:
            output = tools.handle_tool_call(name, json.dumps(arguments))
            results.append(json.loads(output))
            prompt.append({"role": "tool", "name": name, "content": output})
        answer = turn.reply(results)
        tools.handle_tool_call(
            "record_messages",
            {
                "messages": [
                    {"role": "user", "content": turn.user},
                    {"role": "assistant", "content": answer},
                ]
            },
        )
        transcript.append(
            {"user": turn.user, "system": prompt[0]["content"], "tools": results, "answer": answer}
        )
    client.end_session(agent_id, session_id)
    return transcript


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--address", default=None, help="daemon address ($MEMORYD_ADDRESS)")
    parser.add_argument("--agent", default=f"travel-{uuid.uuid4().hex[:8]}")
    parser.add_argument("--session", default=f"session-{uuid.uuid4().hex[:8]}")
    parser.add_argument("--json", action="store_true", help="print the transcript as JSON")
    args = parser.parse_args()
    with MemorydClient(args.address) as client:
        transcript = run(client, args.agent, args.session)
    if args.json:
        print(json.dumps(transcript, indent=2))
        return
    for turn in transcript:
        print(f"user      > {turn['user']}")
        for result in turn["tools"]:
            print(f"  tool    < {json.dumps(result)[:100]}")
        print(f"assistant > {turn['answer']}\n")


if __name__ == "__main__":
    main()
