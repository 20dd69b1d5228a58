"""The one interface every embedder implements, plus helpers they share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Final, Literal, Protocol, get_args, runtime_checkable

import numpy as np
import numpy.typing as npt

from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import unit_rows

#: Why a text is embedded: models with query/passage prefixes (e5) need to know;
#: symmetric models (MiniLM, hashing) ignore it.
EmbedKind = Literal["document", "query"]

_KINDS: frozenset[str] = frozenset(get_args(EmbedKind))


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """Stable name of the model; stored next to vectors so a model change is visible."""
        ...

    @property
    def dimension(self) -> int: ...

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        """Shape ``(len(texts), dimension)``, float32, one unit (or all-zero) row per text,
        in input order. Raises EmbeddingError when the provider fails."""
        ...

    async def close(self) -> None:
        """Release threads, sessions and connections; the embedder is unusable afterwards."""
        ...


def check_request(texts: Sequence[str], kind: str) -> None:
    """Reject the mistakes a type checker cannot always catch (a bare str iterates by char)."""
    if isinstance(texts, str | bytes):
        raise InvalidArgument.field("texts", "expected a sequence of strings, got a single string")
    if kind not in _KINDS:
        raise InvalidArgument.field("kind", f"must be one of {sorted(_KINDS)}, got {kind!r}")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidArgument.field(f"texts[{i}]", f"expected str, got {type(text).__name__}")


def l2_normalize(matrix: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Row-wise L2 normalisation (``unit_rows``) of a 2-d matrix; all-zero rows stay
    zero (never NaN)."""
    if np.ndim(matrix) != 2:
        raise ValueError(f"expected a 2-d matrix, got shape {np.shape(matrix)}")
    return unit_rows(matrix)


def empty_result(dimension: int) -> npt.NDArray[np.float32]:
    return np.zeros((0, dimension), dtype=np.float32)


class CheckedEmbedder(ABC):
    """The shared front of memoryd's embedders: :meth:`embed` refuses a malformed
    request (:func:`check_request`) and answers an empty one itself, so that an
    implementation's :meth:`_embed` only ever sees a valid, non-empty list."""

    def __init__(self, model_id: str, dimension: int) -> None:
        #: See :attr:`Embedder.model_id` and :attr:`Embedder.dimension`.
        self.model_id: Final = model_id
        self.dimension: Final = dimension

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        """See :meth:`Embedder.embed`."""
        check_request(texts, kind)
        if not texts:
            return empty_result(self.dimension)
        return await self._embed(texts, kind)

    @abstractmethod
    async def _embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        """The vectors of ``texts`` (checked, at least one)."""

    @abstractmethod
    async def close(self) -> None:
        """See :meth:`Embedder.close`."""
