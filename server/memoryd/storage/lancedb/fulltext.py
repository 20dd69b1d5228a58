"""Full-text search on LanceDB's native (inverted, BM25) index.

LanceDB's own tokenizers cannot split Chinese without a model download, and its
BM25 statistics (document frequencies) are computed over the whole table. So the
store writes a pre-tokenised column, ``content_tokens``, indexed with the plain
whitespace tokenizer and no case folding, stemming or stop words of its own (the
tokens already went through :func:`memoryd.text.tokenize`), and every token carries
a prefix naming its partition and security level::

    <12 hex digits of hash(tenant, agent)><level digit>:<term>

A query asks for each term under the prefixes of the levels the filter allows. The
frequency of a term is then counted among the records of one partition at one level:
a caller cannot learn from scores that another tenant, or a memory above its
clearance, contains a word. What stays table-wide is the total record count and the
average record length, which say how much is stored, not what.

New rows are searchable as soon as they are written (LanceDB scans rows the index
does not cover yet); the store folds them into the index in the background.
"""

from __future__ import annotations

import hashlib

from lancedb.index import FTS

from memoryd.domain.models import Memory, MemoryFilter, Partition, SecurityLevel
from memoryd.storage.bm25 import query_terms
from memoryd.text import tokenize

TOKENS_COLUMN = "content_tokens"


def fts_config() -> FTS:
    return FTS(
        base_tokenizer="whitespace",
        lower_case=False,
        stem=False,
        remove_stop_words=False,
        ascii_folding=False,
        max_token_length=None,
        with_position=False,
    )


def _prefix(tenant_id: str, agent_id: str, level: SecurityLevel) -> str:
    digest = hashlib.blake2b(f"{tenant_id}\0{agent_id}".encode(), digest_size=6).hexdigest()
    return f"{digest}{int(level)}:"


def document_tokens(memory: Memory) -> str:
    """The ``content_tokens`` value of ``memory``."""
    prefix = _prefix(memory.tenant_id, memory.agent_id, memory.security_level)
    return " ".join(prefix + t for t in tokenize(memory.content))


def query_tokens(partition: Partition, query: str, flt: MemoryFilter) -> str:
    """The full-text query for ``query`` within ``partition`` at the levels ``flt``
    allows; empty when the query has no terms."""
    terms = query_terms(query)
    if not terms:
        return ""
    prefixes = [
        _prefix(partition.tenant_id, partition.agent_id, level)
        for level in SecurityLevel
        if level <= flt.max_security_level
    ]
    return " ".join(p + t for p in prefixes for t in terms)
