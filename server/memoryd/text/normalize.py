"""Normalised content: what "the same content" means for exact-duplicate detection."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

_SPACE = re.compile(r"\s+")


def normalise_content(text: str) -> str:
    """NFKC, casefolded, whitespace runs collapsed to one space, trimmed.

    NFKC folds compatibility forms (full-width Latin, ligatures, the ideographic
    space) so that text typed on different keyboards compares equal.
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


#: Contents up to this many characters are remembered by content_hash (bounds the
#: cache's memory to a few MB whatever the contents' size limit).
_CACHED_CHARS = 1024


def content_hash(text: str) -> str:
    """A short stable digest of the normalised content (stores index it)."""
    if len(text) <= _CACHED_CHARS:
        return _cached_hash(text)
    return _hash(text)


def _hash(text: str) -> str:
    return hashlib.blake2b(normalise_content(text).encode(), digest_size=16).hexdigest()


# A write hashes each content three times on its way down (duplicate check, hot
# cache, store row); NFKC + casefold is most of a write's per-memory text cost.
_cached_hash = lru_cache(maxsize=4096)(_hash)
