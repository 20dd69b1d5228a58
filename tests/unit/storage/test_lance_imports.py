"""lancedb imported the way the daemon imports it: without its REST client's API
classes and without the ``overrides`` package's bytecode checks, and still working."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys, tempfile
import memoryd  # registers the stand-ins before lancedb is imported
import lancedb
import pyarrow as pa

with tempfile.TemporaryDirectory() as where:
    db = lancedb.connect(where)
    table = db.create_table("t", pa.table({"id": ["a", "b"], "n": [1, 2]}))
    rows = sorted(table.to_arrow().column("id").to_pylist())
print(json.dumps({
    "rows": rows,
    "overrides": sys.modules["overrides"].__doc__,
    "override_marks": getattr(lancedb.db.LanceDBConnection.table_names, "__override__", None),
    "checks_loaded": "overrides.enforce" in sys.modules,
    "rest_api_loaded": "lance_namespace_urllib3_client.api" in sys.modules,
}))
"""


def test_lancedb_works_without_its_rest_client_or_override_checks(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["rows"] == ["a", "b"]
    assert seen["overrides"] == "typing.override in place of the overrides package"
    assert seen["override_marks"] is True
    assert seen["checks_loaded"] is False
    assert seen["rest_api_loaded"] is False
