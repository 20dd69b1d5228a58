"""The default embedder, e5-small-v2 int8 from the models cache (make test fetches it):
unit vectors, query and passage prefixes, a sentence ranked by meaning, and the
pinned files checked at load."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
import pytest_asyncio

from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.batcher import BatchingEmbedder
from memoryd.embedding.factory import build_embedder
from memoryd.embedding.local import (
    DIMENSION,
    INTRA_OP_SPINNING,
    E5SmallEmbedder,
    OnnxEmbedder,
    query_form,
)
from memoryd.embedding.packaged import installed_files
from memoryd.embedding.settings import EmbeddingSettings
from memoryd.model_catalog import E5_SMALL_V2
from tests.conftest import needs_e5

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def e5() -> AsyncIterator[E5SmallEmbedder]:
    needs_e5()
    embedder = E5SmallEmbedder(threads=1, max_batch_size=8)
    yield embedder
    await embedder.close()


async def test_unit_vectors_in_input_order(e5: E5SmallEmbedder) -> None:
    assert (e5.model_id, e5.dimension) == ("e5-small-v2-int8", DIMENSION)
    texts = ["My name is Alice.", "", "I am allergic to peanuts.", "x" * 5000]
    vectors = await e5.embed(texts)
    assert vectors.shape == (4, DIMENSION) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    one_by_one = np.stack([(await e5.embed([t]))[0] for t in texts])
    # Dynamic int8 quantises a call's activations with one scale for the whole call:
    # each text runs alone, so batch mates cannot move its vector at all.
    assert vectors.tobytes() == one_by_one.tobytes()


async def test_a_query_waits_for_one_text_of_a_batch_not_the_batch(e5: E5SmallEmbedder) -> None:
    """Each text runs in a model call of its own, and in a job of the inference thread
    of its own: a query asked while a batch of documents is embedded runs before the
    batch's next text (before its last, at the latest), not after the whole batch."""
    order: list[str] = []
    documents = [f"document number {i} about the user's plans" for i in range(8)]
    real = e5._infer_each  # the one place each row is run
    started, loop = asyncio.Event(), asyncio.get_running_loop()

    def each(batch: list[list[int]]) -> np.ndarray:  # on the inference thread
        order.append(f"documents x{len(batch)}")
        loop.call_soon_threadsafe(started.set)
        return real(batch)

    e5._infer_each = each  # type: ignore[method-assign]
    try:
        writing = asyncio.ensure_future(e5.embed(documents))
        await started.wait()  # the batch's first text is in the model
        await e5.embed(["what are the user's plans?"], kind="query")
        order.append("query done")
        await writing
    finally:
        del e5._infer_each  # type: ignore[method-assign]
    assert order.count("documents x1") == len(documents)
    assert order.index("query done") < len(documents)


async def test_a_vector_does_not_depend_on_concurrent_callers() -> None:
    """Through the daemon's stack (cache, batching across callers): documents
    written at once by several callers get the vectors each gets alone."""
    needs_e5()
    texts = [
        "I went hiking with my sister near the lake last weekend",
        "buy milk",
        "The quarterly report is due on Friday with the revenue table from finance",
        "I am allergic to peanuts and shellfish",
        "My daughter starts school in September",
        "The flight to Oslo leaves at 7:40 from gate B12",
    ]
    settings = EmbeddingSettings(cache_size=0)
    alone = build_embedder("e5", settings)
    together = build_embedder("e5", settings)
    try:
        one_by_one = [(await alone.embed([t]))[0] for t in texts]
        concurrent = await asyncio.gather(*(together.embed([t]) for t in texts))
        assert isinstance(together, BatchingEmbedder) and together.batches < len(texts)
        for text, mine, theirs in zip(texts, one_by_one, concurrent, strict=True):
            assert mine.tobytes() == theirs[0].tobytes(), text
    finally:
        await alone.close()
        await together.close()


async def test_queries_and_passages_get_their_prefixes(e5: E5SmallEmbedder) -> None:
    text = "where does the user live?"
    as_query = (await e5.embed([text], kind="query"))[0]
    as_passage = (await e5.embed([text], kind="document"))[0]
    assert float(as_query @ as_passage) < 0.999  # "query: " vs "passage: "
    # The prefix is the catalog's: the same vector as the passage "query: <text>".
    prefixed = (await e5.embed([E5_SMALL_V2.query_prefix + text], kind="document"))[0]
    assert float(prefixed @ as_query) < 0.999  # "passage: query: ..." is another text
    assert E5_SMALL_V2.query_prefix == "query: " and E5_SMALL_V2.document_prefix == "passage: "


async def test_the_answer_ranks_first(e5: E5SmallEmbedder) -> None:
    memories = [
        "I live in Lisbon with my wife.",
        "My favourite colour is dark blue.",
        "The meeting moved to 3 pm on Thursday.",
        "I am allergic to peanuts.",
    ]
    docs = await e5.embed(memories)
    for question, answer in (
        ("which city does the user live in?", 0),
        ("what colour does the user like?", 1),
        ("when is the meeting?", 2),
        ("what food must the user avoid?", 3),
    ):
        query = (await e5.embed([question], kind="query"))[0]
        assert int(np.argmax(docs @ query)) == answer, question


async def test_a_query_is_embedded_without_its_question_mark(e5: E5SmallEmbedder) -> None:
    texts = ("where does the user live?", "where does the user live")
    asked, typed = [(await e5.embed([t], kind="query"))[0] for t in texts]
    assert np.array_equal(asked, typed)
    # Documents are embedded as written: a stored question keeps its mark.
    stored, plain = [(await e5.embed([t]))[0] for t in texts]
    assert float(stored @ plain) < 0.999


#: REALTALK questions (chats 1 and 6), each with its evidence turn and a stored question
#: that e5 put first while the query kept its "?" (bench/results/candidate-misses-2026-11-29.md).
CASES = (
    (
        "Where does Kate work as a teacher assistant?",
        "elise: What about Kate?",
        "elise: Currently I have a small on campus job as a teacher assistance.",
    ),
    (
        "What does Nicolas do before bed?",
        "Nicolas: Like what?",
        "Nicolas: I also forgot the skin care thing but ill put some eye cream on before i go to bed",
    ),
)


async def test_a_question_finds_its_answer_not_a_stored_question(e5: E5SmallEmbedder) -> None:
    model, tokenizer = installed_files(E5_SMALL_V2, None)
    as_asked = OnnxEmbedder(
        model_id=E5_SMALL_V2.model_id,
        model_path=model,
        tokenizer_path=tokenizer,
        prefixes=(E5_SMALL_V2.query_prefix, E5_SMALL_V2.document_prefix),
    )
    try:
        for question, stored_question, answer in CASES:
            docs = await e5.embed([stored_question, answer])
            query = (await e5.embed([question], kind="query"))[0]
            assert int(np.argmax(docs @ query)) == 1, question
            # The mechanism: the question with its mark is closer to the stored one.
            with_mark = (await as_asked.embed([question], kind="query"))[0]
            assert float(docs[0] @ with_mark) > float(docs[0] @ query) + 0.01, question
    finally:
        await as_asked.close()


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")
def test_query_form_drops_trailing_question_marks_only() -> None:
    strip = E5_SMALL_V2.query_strip
    assert query_form("Where does Kate work? ", strip) == "Where does Kate work"
    assert query_form("她在哪里工作\uff1f", strip) == "她在哪里工作"
    assert query_form("Why?? ", strip) == "Why"
    assert query_form("is a?b valid", strip) == "is a?b valid"
    assert query_form("?", strip) == "?"  # nothing else to embed
    assert query_form("Where? ", "") == "Where? "  # a model without a query form


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")
def test_missing_or_damaged_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="memoryd models fetch e5-small-v2-int8"):
        build_embedder("e5", EmbeddingSettings(models_dir=tmp_path, cache_size=0))
    folder = tmp_path / E5_SMALL_V2.model_id
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"\0" * 1024)
    (folder / "tokenizer.json").write_text("{}")
    with pytest.raises(EmbeddingError, match="not the pinned"):
        E5SmallEmbedder(models_dir=tmp_path)


async def test_the_default_session_runs_one_thread_that_never_spins() -> None:
    # A second intra-op thread spinning between the model's small operators cost
    # about twice the CPU for the same wall time on one text (embedding/local.py).
    needs_e5()
    built = build_embedder("e5", EmbeddingSettings(cache_size=0))
    assert isinstance(built, BatchingEmbedder) and isinstance(built.inner, E5SmallEmbedder)
    try:
        options = built.inner.session_options
        assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
        assert options.get_session_config_entry(INTRA_OP_SPINNING) == "0"
    finally:
        await built.close()


async def test_more_threads_block_when_idle_instead_of_spinning(e5: E5SmallEmbedder) -> None:
    two = E5SmallEmbedder(threads=2, max_batch_size=8)
    try:
        options = two.session_options
        assert options.intra_op_num_threads == 2
        assert options.get_session_config_entry(INTRA_OP_SPINNING) == "0"
        # The same model, the same vectors: threads change the speed only.
        text = ["I am allergic to peanuts."]
        assert float((await two.embed(text))[0] @ (await e5.embed(text))[0]) > 0.9999
    finally:
        await two.close()
