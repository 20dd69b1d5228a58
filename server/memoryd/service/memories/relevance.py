"""The absolute relevance of a recall hit: 0..1, the same meaning for every query.

The fused score ranks the candidates of one query against each other: its best hit
always scores 1.0, whether it answers the question or only happens to be the least
unrelated memory ("is the user vegetarian?" -> the peanut allergy at 1.000). An agent
deciding whether to inject anything needs a number that says how well a memory
matches, not how it ranks. Two signals carry that across queries:

- the cosine of query and memory, on the model's own scale (each model's cosines
  spread differently: e5's crowd into 0.7-0.95, MiniLM's spread over 0.0-0.8);
- coverage: the share of the query's content terms (memoryd.text.tokenize: stop words
  dropped, stemmed) that the memory holds. A question about Kate's cooking asked of a
  store that never mentions Kate finds close-sounding memories, but none holds "kate".

relevance = sigmoid(cosine_weight * (cosine - cosine_centre) + coverage_weight *
(coverage - 0.5)), with the weights fitted per model (model_catalog.Relevance,
bench/fusion_tuning.py) on REALTALK's dev chats, a question's evidence in its own
chat against its best hit in another chat. ``min_relevance`` on Recall and
BuildSnapshot drops the hits below a threshold, so "nothing relevant" can be empty.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from memoryd.model_catalog import Relevance
from memoryd.text import tokenize


def query_terms(query: str) -> frozenset[str]:
    return frozenset(tokenize(query))


def coverage(terms: frozenset[str], content: str) -> float:
    """The share of ``terms`` that ``content`` holds (0 when there are none)."""
    if not terms:
        return 0.0
    return len(terms.intersection(tokenize(content))) / len(terms)


def absolute_relevance(calibration: Relevance, cosine: float, covered: float) -> float:
    z = calibration.cosine_weight * (cosine - calibration.cosine_centre)
    z += calibration.coverage_weight * (covered - 0.5)
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def relevances(
    calibration: Relevance, query: str, hits: Iterable[tuple[float, str]]
) -> list[float]:
    """The absolute relevance of each (cosine, content) hit of ``query``."""
    terms = query_terms(query)
    return [
        absolute_relevance(calibration, cosine, coverage(terms, content))
        for cosine, content in hits
    ]
