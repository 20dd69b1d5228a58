"""The peer of the `qdrant` section: qdrant-client querying memoryd's own collection
on the same server, doing the same work as memoryd's Recall."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from common import LocalMiniLMEmbedder, pct, timed
from qdrant_client import QdrantClient, models

from memoryd.storage.qdrant import sparse
from memoryd.storage.qdrant.schema import DENSE, SPARSE


def agent_filter(agent: str, tenant: str = "default") -> models.Filter:
    """One agent's points, as memoryd filters them."""
    return models.Filter(
        must=[
            models.FieldCondition(key="tenant_id", match=models.MatchValue(value=tenant)),
            models.FieldCondition(key="agent_id", match=models.MatchValue(value=agent)),
        ]
    )


def hybrid_latencies(
    client: QdrantClient, name: str, texts: list[str], next_filter: Callable[[], models.Filter]
) -> dict[str, Any]:
    """memoryd's default (hybrid) Recall done by hand for each of ``texts``: the text
    embedded by the same local model in this process, then one Query API request
    fusing the dense and the BM25 (sparse, IDF over the agent's points) prefetches,
    filtered by ``next_filter()``."""
    model = LocalMiniLMEmbedder(threads=2)
    loop = asyncio.new_event_loop()
    words = iter(texts)

    def hybrid() -> None:
        text, flt = next(words), next_filter()
        dense = loop.run_until_complete(model.embed([text]))[0].tolist()
        prefetch = [models.Prefetch(query=dense, using=DENSE, filter=flt, limit=40)]
        terms = sparse.query_vector(text)
        if terms is not None:
            idf = models.SearchParams(idf=models.IdfCorpusParams(corpus=flt))
            prefetch.append(
                models.Prefetch(query=terms, using=SPARSE, filter=flt, limit=40, params=idf)
            )
        client.query_points(
            name,
            query=models.FusionQuery(fusion=models.Fusion.RRF),
            prefetch=prefetch,
            query_filter=flt,
            limit=10,
            with_payload=True,
        )

    try:
        return pct(timed(hybrid, len(texts) - 5))
    finally:
        loop.run_until_complete(model.close())
        loop.close()
