"""The README's MCP section: its example remembers and recalls through the daemon's
endpoint with nothing but what `make run` installs, and the argument guesses it warns
about fail as it says, naming the field and storing nothing."""

from __future__ import annotations

import asyncio
import re

import pytest

from tests.conftest import REPO
from tests.docs.pages import blocks
from tests.mcp.conftest import ALICE, McpDaemon
from tests.mcp.support import error_of, http_client

README = REPO / "README.md"
#: The guesses the README names: (tool, arguments, the wrong name, the field it wants).
GUESSES = [
    ("set_memory", {"key": "user/style", "value": "short", "source": "user"}, "user/style", "key"),
    ("update_working_memory", {"value": {"step": 1}}, "value", "updates"),
    ("save_state", {"session_id": "s1", "state": {"planner": {}}}, "state", "components"),
    ("forget", {"memory_id": "m1"}, "memory_id", "ids"),
    ("forget", {"id": "m1"}, "id", "ids"),
    ("remember", {"text": "The user prefers tea"}, "text", "content"),
]


def test_the_readme_remembers_and_recalls_over_mcp(
    mcp_daemon: McpDaemon, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (block,) = [b for b in blocks(README) if "runnable-mcp" in b.marks]
    example = re.search(r"<<'EOF'\n(.*?)\nEOF\n", block.code, re.S)
    assert example is not None
    code = example.group(1).replace("http://127.0.0.1:8765/mcp", mcp_daemon.url)
    assert code != example.group(1)
    monkeypatch.setenv("MEMORYD_API_KEY", ALICE.raw)
    exec(compile(code.replace('"demo"', '"readme-mcp"'), "README.md", "exec"), {})
    assert capsys.readouterr().out.splitlines()[0] == "The user prefers window seats"


def test_the_guesses_the_readme_names_fail_naming_the_field(mcp_daemon: McpDaemon) -> None:
    readme = README.read_text()
    paragraph = readme[readme.index("Guesses that fail") :].split("\n\n", 1)[0]
    for _, _, wrong, right in GUESSES:
        assert f"`{wrong.split('/')[0]}" in paragraph and f"`{right}`" in paragraph, wrong

    async def attempt() -> list[str]:
        problems = []
        async with http_client(mcp_daemon.url, ALICE.raw) as client:
            for tool, arguments, wrong, right in GUESSES:
                detail = error_of(
                    await client.call_tool(tool, {**arguments, "agent_id": "readme-guess"})
                )
                named = set(detail.get("fields", {}))
                if detail["error"] != "INVALID_ARGUMENT" or not named & {wrong, right}:
                    problems.append(f"{tool} {arguments}: {detail}")
            recalled = await client.call_tool(
                "recall", {"query": "tea", "agent_id": "readme-guess"}
            )
            assert recalled.structured_content == {"memories": []}
        return problems

    assert asyncio.run(attempt()) == []
