"""Generate the memoryd_proto Python package from proto/memoryd/v1/*.proto.

protoc writes imports as ``from memoryd.v1 import ...``; the generated code lives in
its own package (``memoryd_proto``) so it never collides with the server's ``memoryd``
package, so those imports are rewritten. Usage:

    python proto/generate_python.py [OUTPUT_DIR]

OUTPUT_DIR defaults to clients/python/src; `make proto-check` generates into a
temporary directory and diffs it against the committed code.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

PROTO_ROOT = Path(__file__).resolve().parent
PACKAGE = "memoryd_proto"
IMPORT_RE = re.compile(r"^(from|import) memoryd\.v1", re.MULTILINE)


def generate(out_root: Path) -> None:
    sources = sorted(str(p.relative_to(PROTO_ROOT)) for p in (PROTO_ROOT / "memoryd/v1").glob("*.proto"))
    well_known = str(resources.files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "protoc",
            f"-I{PROTO_ROOT}",
            f"-I{well_known}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            *sources,
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
        target = out_root / PACKAGE
        if target.exists():
            shutil.rmtree(target)
        (target / "v1").mkdir(parents=True)
        (target / "__init__.py").write_text('"""Generated protobuf and gRPC code for memoryd.v1 (do not edit)."""\n')
        (target / "v1" / "__init__.py").write_text("")
        (target / "py.typed").write_text("")
        for generated in sorted((Path(tmp) / "memoryd" / "v1").iterdir()):
            text = IMPORT_RE.sub(rf"\1 {PACKAGE}.v1", generated.read_text())
            (target / "v1" / generated.name).write_text(text)


if __name__ == "__main__":
    generate(Path(sys.argv[1]) if len(sys.argv) > 1 else PROTO_ROOT.parent / "clients/python/src")
