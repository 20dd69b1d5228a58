"""Settings: defaults < YAML file < MEMORYD_* environment < explicit overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from memoryd.config import Settings, unknown_env_vars
from memoryd.main import app as memoryd_app
from memoryd.model_catalog import profile_of


def show(config: Path) -> str:
    """What `memoryd config show --config CONFIG` prints (run in-process)."""
    done = CliRunner().invoke(memoryd_app, ["config", "show", "--config", str(config)])
    assert done.exit_code == 0, done.output
    return done.stdout


def test_defaults() -> None:
    s = Settings()
    assert s.listen == "127.0.0.1:50051" and s.embedder == "e5" and s.storage.backend == "lancedb"
    assert s.limits.max_content_bytes == 8192


def test_yaml_then_env_then_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "memoryd.yaml"
    cfg.write_text(
        "listen: unix:/tmp/x.sock\nembedder: hashing\nlimits:\n  max_content_bytes: 100\n  max_top_k: 7\n"
    )
    s = Settings.load(cfg)
    assert s.listen == "unix:/tmp/x.sock" and s.embedder == "hashing" and s.limits.max_top_k == 7
    monkeypatch.setenv("MEMORYD_EMBEDDER", "local")
    monkeypatch.setenv("MEMORYD_LIMITS__MAX_CONTENT_BYTES", "200")
    s = Settings.load(cfg)
    # "local" is MiniLM's former name: configurations saying it keep MiniLM.
    assert s.embedder == "minilm" and s.limits.max_content_bytes == 200 and s.limits.max_top_k == 7
    assert Settings.load(cfg, listen="127.0.0.1:1").listen == "127.0.0.1:1"


def test_each_model_brings_its_own_cosine_settings_where_none_are_configured() -> None:
    e5, minilm = profile_of("e5"), profile_of("minilm")
    s = Settings()
    assert s.recall.convex_min_spread == e5.convex_min_spread
    assert (s.recall.hybrid_vector_weight, s.recall.hybrid_text_weight) == (
        e5.vector_weight,
        e5.text_weight,
    )
    assert s.dedup.threshold == e5.dedup_threshold
    assert s.contradictions.value_similarity == e5.value_similarity
    assert s.maintenance.consolidation.cluster_similarity == e5.cluster_similarity
    m = Settings(embedder="minilm")
    assert (m.recall.convex_min_spread, m.dedup.threshold) == (0.5, minilm.dedup_threshold)
    # What the configuration sets stays, whichever model; the rest follows the model.
    mine = Settings(recall={"convex_min_spread": 0.3}, dedup={"threshold": 0.9})
    moved = mine.with_embedder("minilm")
    assert (moved.recall.convex_min_spread, moved.dedup.threshold) == (0.3, 0.9)
    assert moved.recall.hybrid_vector_weight == minilm.vector_weight
    assert moved.contradictions.min_similarity == minilm.contradiction_similarity
    assert (mine.embedder, moved.embedder) == ("e5", "minilm")
    # Reciprocal rank fusion keeps its own measured weights unless set.
    rrf = Settings(recall={"fusion": "rrf"})
    assert (rrf.recall.hybrid_vector_weight, rrf.recall.hybrid_text_weight) == (0.3, 1.0)
    with pytest.raises(ValidationError, match="both 0"):
        Settings(recall={"hybrid_vector_weight": 0, "hybrid_text_weight": 0})


def test_invalid_values_are_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORYD_EMBEDDER", "word2vec")
    with pytest.raises(ValidationError):
        Settings()
    monkeypatch.delenv("MEMORYD_EMBEDDER")
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("no_such_option: 1\n")
    with pytest.raises(ValidationError):
        Settings.load(cfg)
    with pytest.raises(FileNotFoundError):
        Settings.load(tmp_path / "missing.yaml")


def test_config_show_masks_secrets(tmp_path: Path) -> None:
    cfg = tmp_path / "memoryd.yaml"
    cfg.write_text(
        "page_token_secret: hunter2hunter2hunter2\nembedding:\n  openai_api_key: sk-very-secret\n"
    )
    out = show(cfg)
    assert "hunter2" not in out and "sk-very-secret" not in out
    shown = json.loads(out)
    assert shown["page_token_secret"] == "**********"
    assert shown["embedding"]["openai_api_key"] == "**********"


def test_config_show_names_clearances_and_reads_its_own_output(tmp_path: Path) -> None:
    cfg = tmp_path / "memoryd.yaml"
    cfg.write_text(
        "sidecar:\n  clearance: 2\nauth:\n  keys:\n"
        "    - {sha256: " + "ab" * 32 + ", name: k, tenant_id: t, clearance: confidential}\n"
    )
    out = show(cfg)
    shown = json.loads(out)
    assert shown["sidecar"]["clearance"] == "internal"  # the level's name, not 2
    assert shown["auth"]["keys"][0]["clearance"] == "confidential"
    # What it prints is a valid config (JSON is YAML) that means the same.
    again = tmp_path / "shown.yaml"
    again.write_text(out.replace('"**********"', "null"))
    assert json.loads(show(again)) == json.loads(out.replace('"**********"', "null"))


def test_config_show_reports_bad_config(tmp_path: Path) -> None:
    cfg = tmp_path / "memoryd.yaml"
    cfg.write_text("limits:\n  max_top_k: -3\n")
    done = CliRunner().invoke(memoryd_app, ["config", "show", "--config", str(cfg)])
    assert done.exit_code == 2 and "max_top_k" in done.stderr


def test_openai_embedder_needs_a_dimension(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORYD_EMBEDDER", "openai")
    with pytest.raises(ValidationError, match="openai_dimension"):
        Settings()
    monkeypatch.setenv("MEMORYD_EMBEDDING__OPENAI_DIMENSION", "1536")
    assert Settings().embedding.openai_dimension == 1536


def test_unknown_memoryd_variables_are_named() -> None:
    environ = {
        "MEMORYD_STORAGE__BACKEN": "qdrant",  # typo
        "MEMORYD_STORAGE__BACKEND": "lancedb",
        "MEMORYD_STORAGE__HOT_CACHE__BLAS_THREADS": "1",
        "MEMORYD_AUTH__TLS__CERT_FILE": "/x",
        "MEMORYD_AUTH__TLS__ENABLED": "true",  # no such field
        "MEMORYD_LISTEN": "unix:/tmp/m.sock",
        "MEMORYD_EMBEDDING": "{}",  # a whole section as JSON is allowed
        "PATH": "/usr/bin",
    }
    assert unknown_env_vars(environ) == ["MEMORYD_AUTH__TLS__ENABLED", "MEMORYD_STORAGE__BACKEN"]


def test_the_memory_root_is_on_by_default_in_the_data_dir(tmp_path: Path) -> None:
    """Issue 33: the keyed-memory tree exists without configuration, under the data
    dir; keys.mirror turns it off; keys.mirror_dir moves it."""
    assert Settings(data_dir=tmp_path).memory_root() == tmp_path / "memory_root"
    assert Settings(data_dir=tmp_path, keys={"mirror": False}).memory_root() is None
    moved = Settings(data_dir=tmp_path, keys={"mirror_dir": tmp_path / "m"})
    assert moved.memory_root() == tmp_path / "m"


def test_a_shared_qdrant_store_has_no_memory_root_unless_asked_then_refused() -> None:
    shared = {"backend": "qdrant", "qdrant": {"url": "http://q:6333", "shared": True}}
    assert Settings(storage=shared).memory_root() is None
    for keys in ({"mirror": True}, {"mirror_dir": "/m"}):
        with pytest.raises(ValidationError, match="memory_root"):
            Settings(storage=shared, keys=keys)
    assert Settings(storage=shared, keys={"mirror": False}).memory_root() is None
