"""Feature-hashing embedder: no model, no network, deterministic across processes.

Lexical only (it knows shared words and spellings, not meaning), but always
available: the fallback when the real provider is down, and the fast embedder
for tests. CJK text has no spaces, so CJK runs become character unigrams and
bigrams instead of words.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from memoryd.embedding.base import CheckedEmbedder, EmbedKind, l2_normalize

#: Han (with extensions and compatibility ideographs), Hiragana, Katakana, Hangul.
_CJK = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af\U00020000-\U0003134f"
)
#: A CJK run, a word (letters/digits/underscore, CJK excluded), or any other visible char.
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W{_CJK}]+)|(?P<sym>\S)")

#: Relative weight of each feature family: whole words count most.
_WORD, _TRIGRAM, _CJK_UNI, _CJK_BI, _SYMBOL = 1.0, 0.5, 0.5, 1.0, 0.5
#: Above this many characters the work moves off the event loop.
_INLINE_CHARS = 16_384


@lru_cache(maxsize=1 << 16)
def _hash64(feature: str) -> int:
    """Stable 64-bit hash (Python's hash() is salted per process)."""
    digest = hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def features(text: str) -> Iterator[tuple[str, float]]:
    """(feature, weight) pairs of one text; repeated features repeat."""
    for match in _TOKEN.finditer(unicodedata.normalize("NFKC", text).lower()):
        if cjk := match.group("cjk"):
            for i, char in enumerate(cjk):
                yield "c:" + char, _CJK_UNI
                if i + 1 < len(cjk):
                    yield "b:" + cjk[i : i + 2], _CJK_BI
        elif word := match.group("word"):
            yield "w:" + word, _WORD
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                yield "g:" + padded[i : i + 3], _TRIGRAM
        else:
            yield "s:" + match.group("sym"), _SYMBOL


class HashingEmbedder(CheckedEmbedder):
    """Signed feature hashing with sublinear term frequency, L2-normalised.

    Texts with no visible characters (empty, whitespace) give an all-zero row.
    """

    def __init__(self, dimension: int = 384) -> None:
        if dimension < 2:
            raise ValueError(f"dimension must be >= 2, got {dimension}")
        super().__init__(f"hashing-v1-{dimension}", dimension)

    async def _embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        """Symmetric: ``kind`` does not change the vector."""
        if sum(len(t) for t in texts) > _INLINE_CHARS:
            return await asyncio.to_thread(self.embed_sync, texts)
        return self.embed_sync(texts)

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The same vectors, synchronously (for benchmarks and offline tools)."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            weights: dict[str, float] = {}
            counts: Counter[str] = Counter()
            for feature, weight in features(text):
                weights[feature] = weight
                counts[feature] += 1
            for feature, count in counts.items():
                h = _hash64(feature)
                sign = 1.0 if h >> 63 else -1.0
                out[row, h % self.dimension] += sign * weights[feature] * (1 + math.log(count))
        return l2_normalize(out)

    async def close(self) -> None:
        return None
