"""The README's MCP example: remember and recall through the daemon's endpoint with
nothing but what `make run` installs."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import REPO
from tests.mcp.conftest import ALICE, McpDaemon


def test_the_readme_remembers_and_recalls_over_mcp(mcp_daemon: McpDaemon) -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## MCP\n", 1)[1].split("\n## ", 1)[0]
    example = re.search(r"<<'EOF'\n(.*?)\nEOF\n", section, re.S)
    assert example is not None
    code = example.group(1).replace("http://127.0.0.1:8765/mcp", mcp_daemon.url)
    assert code != example.group(1)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "MEMORYD_API_KEY": ALICE.raw},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.splitlines()[0] == "The user prefers window seats"
