"""Normalised content: what "the same content" means for exact-duplicate detection."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_SPACE = re.compile(r"\s+")


def normalise_content(text: str) -> str:
    """NFKC, casefolded, whitespace runs collapsed to one space, trimmed.

    NFKC folds compatibility forms (full-width Latin, ligatures, the ideographic
    space) so that text typed on different keyboards compares equal.
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def content_hash(text: str) -> str:
    """A short stable digest of the normalised content (stores index it)."""
    digest = hashlib.blake2b(normalise_content(text).encode(), digest_size=16)
    return digest.hexdigest()
