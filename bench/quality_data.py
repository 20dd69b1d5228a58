"""The datasets of bench/quality.py and their embeddings, computed once per model.

REALTALK and MemDaily are read as bench/data/README.md describes. Embedding them is
most of a quality run's CPU (9k turns and 26k messages through a CPU model), so the
vectors of every turn and question are computed once per (model, texts) with the
daemon's own embedder classes, in process, and kept under bench/.cache/ (ignored by
git); every A/B variant then sends them to the daemon with its requests (Remember's
``embedding``, Recall's ``query_embedding`` beside the query text), and only the
end-to-end run embeds queries in the daemon.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memoryd.config import EmbeddingSettings
from memoryd.embedding.factory import build_embedder
from memoryd.model_catalog import MAVEN_MODELS, canonical_kind

DATA = Path(__file__).resolve().parent / "data"
CACHE = Path(__file__).resolve().parent / ".cache"
REALTALK_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "commonsense"}
#: REALTALK chats kept aside from the start: never looked at while choosing settings,
#: reported separately (chosen by name before any measurement).
HELD_OUT = frozenset({"Chat_3_Kevin_Paola", "Chat_8_Akib_Muhhamed"})

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Turn:
    namespace: str
    turn_id: str
    text: str
    created_at: datetime
    #: The conversation the turn belongs to and its number there (RememberRequest's
    #: session_id / sequence): REALTALK's session ("D3:12": session 3, turn 12) within
    #: its chat; MemDaily's trajectory, messages in order.
    session: str = ""
    sequence: int = 0


@dataclass(frozen=True)
class Question:
    namespace: str
    text: str
    gold: frozenset[str]
    category: str
    #: When the question is asked (RecallRequest.now): MemDaily's question time,
    #: REALTALK's last turn of the chat.
    asked_at: datetime


@dataclass(frozen=True)
class Corpus:
    name: str
    turns: list[Turn]
    questions: list[Question]


def _realtalk_time(value: str) -> datetime:
    return datetime.strptime(value, "%d.%m.%Y, %H:%M:%S").replace(tzinfo=UTC)


def load_realtalk(max_chats: int | None = None) -> Corpus:
    turns: list[Turn] = []
    questions: list[Question] = []
    files = sorted((DATA / "realtalk").glob("Chat_*.json.gz"))[:max_chats]
    for path in files:
        chat = json.loads(gzip.decompress(path.read_bytes()))
        namespace = path.name.removesuffix(".json.gz")
        known: set[str] = set()
        last = datetime.min.replace(tzinfo=UTC)
        for key, session in chat.items():
            if not re.fullmatch(r"session_\d+", key):
                continue
            session_date = chat.get(f"{key}_date_time")
            for t in session:
                when = t.get("date_time") or session_date
                text = f"{t['speaker']}: {t['clean_text']}"
                session_no, _, turn_no = t["dia_id"].removeprefix("D").partition(":")
                turns.append(
                    Turn(
                        namespace,
                        t["dia_id"],
                        text,
                        _realtalk_time(when),
                        session=f"{namespace}/{session_no}",
                        sequence=int(turn_no),
                    )
                )
                known.add(t["dia_id"])
                last = max(last, _realtalk_time(when))
        for qa in chat["qa"]:
            # Some evidence strings are malformed ("D8:6; D9:17", unknown ids).
            gold = {
                part
                for evidence in qa["evidence"]
                for part in re.split(r"[;,\s]+", evidence)
                if part in known
            }
            if gold:
                category = REALTALK_CATEGORIES.get(qa["category"], str(qa["category"]))
                questions.append(
                    Question(namespace, qa["question"], frozenset(gold), category, last)
                )
    return Corpus("REALTALK", turns, questions)


def _memdaily_time(value: str) -> datetime:
    # "2024年04月01日 周一 08:30": the weekday is redundant.
    day, _, clock = value.split(" ")
    return datetime.strptime(f"{day} {clock}", "%Y年%m月%d日 %H:%M").replace(tzinfo=UTC)


def load_memdaily(max_files: int | None = None) -> Corpus:
    turns: list[Turn] = []
    questions: list[Question] = []
    files = sorted((DATA / "memdaily").glob("*.json.gz"))
    if max_files is not None:
        files = files[:: max(1, len(files) // max_files)][:max_files]
    for path in files:
        stem = path.name.removesuffix(".json.gz")
        # "01_simple_events" -> "simple"; "05_post_processing_roles" -> "post_processing"
        category = stem.split("_", 1)[1].rsplit("_", 1)[0]
        for trajectory in json.loads(gzip.decompress(path.read_bytes())):
            namespace = f"{stem}/{trajectory['tid']}"
            for seq, m in enumerate(trajectory["message_list"], start=1):
                created = _memdaily_time(m["time"])
                turns.append(Turn(namespace, str(m["mid"]), m["message"], created, namespace, seq))
            for q in trajectory["question_list"]:
                gold = frozenset(str(mid) for mid in q["target_step_id"])
                if gold:
                    asked = _memdaily_time(q["time"])
                    questions.append(Question(namespace, q["question"], gold, category, asked))
    return Corpus("MemDaily", turns, questions)


def split(corpus: Corpus, held_out: frozenset[str]) -> dict[str, list[Question]]:
    """The questions by split: ``dev`` (tuned on), ``held-out`` (never), ``all``."""
    out = {
        "dev": [q for q in corpus.questions if q.namespace not in held_out],
        "held-out": [q for q in corpus.questions if q.namespace in held_out],
    }
    out = {name: qs for name, qs in out.items() if qs}
    if len(out) > 1:
        out["all"] = list(corpus.questions)
    return out


# ---------------------------------------------------------------- embeddings


#: Part of the cache's key: raised when the embedders' vectors change for the same
#: texts (2: e5 embeds each text in a model call of its own, embedding/local.py).
VECTORS_REVISION = "2"


def embeddings(corpus: Corpus, embedder: str, log: bool = True) -> tuple[Vectors, Vectors]:
    """Vectors of every turn (as documents) and question (as queries) of ``corpus``
    by the memoryd embedder ``embedder``, from bench/.cache when computed before."""
    embedder = canonical_kind(embedder)  # "local" is MiniLM's former name: one cache
    docs = [t.text for t in corpus.turns]
    queries = [q.text for q in corpus.questions]
    # A model that puts queries in a form of its own (model_catalog: query_strip) embeds
    # other query texts than it did before it had one: not the cached vectors.
    strip = MAVEN_MODELS[embedder].query_strip if embedder in MAVEN_MODELS else ""
    form = [f"query_strip={strip}"] if strip else []
    digest = hashlib.sha256(
        "\x00".join([embedder, VECTORS_REVISION, *form, *docs, "\x01", *queries]).encode()
    )
    path = CACHE / f"{corpus.name}-{embedder}-{digest.hexdigest()[:16]}.npz"
    if path.exists():
        cached = np.load(path)
        return cached["docs"], cached["queries"]
    if log:
        print(f"  embedding {len(docs)} {corpus.name} texts with {embedder} (cached after)")
    # A thread of its own runs the embedding's event loop: the benches call this from
    # their own loops (asyncio.run cannot nest), and only when the cache has no vectors.
    with ThreadPoolExecutor(1) as apart:
        doc_vectors, query_vectors = apart.submit(
            asyncio.run, _embed(embedder, docs, queries)
        ).result()
    CACHE.mkdir(exist_ok=True)
    np.savez(path, docs=doc_vectors, queries=query_vectors)
    return doc_vectors, query_vectors


async def _embed(kind: str, docs: list[str], queries: list[str]) -> tuple[Vectors, Vectors]:
    # One OpenMP thread for the multilingual model: a team of two stalls on a busy
    # machine (README, Multilingual memory), and this box is shared.
    settings = EmbeddingSettings(cache_size=0, local_threads=1, multilingual_threads=1)
    embedder = build_embedder(kind, settings)  # type: ignore[arg-type]
    try:
        out = []
        for texts, role in ((docs, "document"), (queries, "query")):
            parts = [
                await embedder.embed(texts[i : i + 512], kind=role)  # type: ignore[arg-type]
                for i in range(0, len(texts), 512)
            ]
            out.append(np.concatenate(parts).astype(np.float32))
        return out[0], out[1]
    finally:
        await embedder.close()
