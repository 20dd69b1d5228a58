"""The data directory's embedding space: recorded once, a change refused unless allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoryd.storage.space import (
    MANIFEST,
    EmbeddingSpaceChanged,
    Space,
    check_space,
    recorded_space,
)

MINILM = Space("all-MiniLM-L6-v2-int8", 384)
E5 = Space("multilingual-e5-small-q4", 384)


def test_first_start_records_and_the_same_model_passes(tmp_path: Path) -> None:
    assert recorded_space(tmp_path) is None
    check_space(tmp_path, MINILM, allow_change=False)
    assert recorded_space(tmp_path) == MINILM
    check_space(tmp_path, MINILM, allow_change=False)  # a restart
    assert json.loads((tmp_path / MANIFEST).read_text()) == {
        "model": MINILM.model,
        "dimension": 384,
    }


def test_another_model_of_the_same_dimension_is_refused(tmp_path: Path) -> None:
    check_space(tmp_path, MINILM, allow_change=False)
    with pytest.raises(EmbeddingSpaceChanged) as raised:
        check_space(tmp_path, E5, allow_change=False)
    message = str(raised.value)
    assert MINILM.model in message and E5.model in message
    assert "allow_model_change" in message and "memoryctl reembed" in message
    assert recorded_space(tmp_path) == MINILM  # nothing changed


def test_an_allowed_change_records_the_new_model(tmp_path: Path) -> None:
    check_space(tmp_path, MINILM, allow_change=False)
    check_space(tmp_path, E5, allow_change=True)
    assert recorded_space(tmp_path) == E5
    with pytest.raises(EmbeddingSpaceChanged):
        check_space(tmp_path, MINILM, allow_change=False)  # and now guards the new one


@pytest.mark.parametrize("content", ["{torn", "[]", '{"model": "x"}', ""])
def test_an_unreadable_record_is_rewritten(tmp_path: Path, content: str) -> None:
    (tmp_path / MANIFEST).write_text(content)
    check_space(tmp_path, MINILM, allow_change=False)
    assert recorded_space(tmp_path) == MINILM


def test_leaving_the_hashing_fallback_space_is_not_a_conflict(tmp_path: Path) -> None:
    """Memories of the hashing embedder are the fallback's: a daemon behind a real
    model keeps them apart and re-embeds them itself."""
    hashing = Space("hashing-v1-384", 384)
    check_space(tmp_path, hashing, allow_change=False)
    check_space(tmp_path, MINILM, allow_change=False, absorbed="hashing-v1-384")
    assert recorded_space(tmp_path) == MINILM
    # Not the other way round, nor at another dimension.
    with pytest.raises(EmbeddingSpaceChanged):
        check_space(tmp_path, hashing, allow_change=False)
    other = tmp_path / "other"
    check_space(other, Space("hashing-v1-256", 256), allow_change=False)
    with pytest.raises(EmbeddingSpaceChanged):
        check_space(other, MINILM, allow_change=False, absorbed="hashing-v1-384")
