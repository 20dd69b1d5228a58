"""Document embeddings a read waits for.

A local model runs one job at a time on its inference thread (embedding/worker.py),
a Recall's query before the queued documents. A key's mirror memory is a document
embedded behind its SetMemory's answer (service/keyed/pending.py), but once a read of
the agent waits for it, it is on that read's path: queued behind every waiting
Remember, the pass fell behind under write load and reads (and Remember's own
deduplication) waited seconds to a minute for it (bench/mixed.py, 32 writers). Work
done inside :func:`awaited_by_a_read` goes to the model as a query does: past the
batcher, before the queued documents.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from memoryd.context_vars import bound

_awaited: ContextVar[bool] = ContextVar("embedding_awaited_by_a_read", default=False)


def awaited() -> bool:
    """Whether the embedding being asked for is one a read waits for."""
    return _awaited.get()


@contextmanager
def awaited_by_a_read() -> Iterator[None]:
    """Within the block (and the tasks it starts), embeddings go before queued ones."""
    with bound(_awaited, True):
        yield
