"""The storage part of the settings (config.py's ``storage``): the backend, the hot
cache in front of it and the Qdrant server's options."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

StoreBackend = Literal["lancedb", "memory", "qdrant"]
#: How many copies of a shard a Qdrant read asks (QdrantSettings.read_consistency).
ReadConsistency = Literal["one", "majority", "quorum", "all"]
#: Qdrant's default ports: REST, and gRPC beside it.
QDRANT_REST_PORT = 6333
QDRANT_GRPC_PORT = 6334


def url_port(url: str) -> int | None:
    """The port a Qdrant URL names (None: none; qdrant-client then uses 6333)."""
    return urlsplit(url if "://" in url else f"http://{url}").port


class HotCacheSettings(BaseModel):
    """Hot partitions' vectors in memory in front of the store (storage/hot/cache.py)."""

    #: None: on for the embedded lancedb backend, off otherwise.
    enabled: bool | None = None
    #: Estimated bytes of all cached partitions; least recently searched ones go first.
    #: None: a third of the container's memory limit, 1024 without one
    #: (storage/budget.py).
    memory_budget_mb: int | None = Field(None, ge=1)
    #: Partitions with at least this many memories get an HNSW graph (exact re-rank).
    hnsw_threshold: int = Field(20_000, ge=1)
    #: BLAS threads for exact searches (process-wide). One: a threaded matrix-vector
    #: product waits for a worker thread the OS may not schedule for milliseconds while
    #: gRPC, the model and other processes hold the cores (measured: 10k-row search p50
    #: 0.3 ms on one thread, 5 ms on two, on a busy 2-core machine).
    blas_threads: int = Field(1, ge=1, le=64)
    #: BLAS threads for batched searches (a RememberBatch's duplicate lookup: one
    #: matrix product of the whole batch against the partition); None: every core.
    #: A large product keeps its threads busy, and 2 threads measured 1.6x faster.
    bulk_blas_threads: int | None = Field(None, ge=1, le=64)


class QdrantSettings(BaseModel):
    """The qdrant backend (storage.backend = "qdrant"); see docs/qdrant-and-replicas.md."""

    #: Server URL, e.g. http://qdrant:6333. None: qdrant-client's local mode on disk
    #: under data_dir/qdrant (development and tests; not for production volumes).
    url: str | None = None
    api_key: SecretStr | None = None
    #: Talk gRPC to the server (on its gRPC port, below) rather than REST.
    prefer_grpc: bool = True
    #: The server's gRPC port. None: derived from ``url`` where it can be: a URL on
    #: Qdrant's default REST port 6333 (or naming no port, which qdrant-client reads
    #: as 6333) pairs with 6334. Any other port says nothing about the gRPC one, so
    #: memoryd talks REST to ``url`` and logs why, never guessing a port that on a
    #: shared machine may be another Qdrant's.
    grpc_port: int | None = Field(None, ge=1, le=65535)
    timeout_s: float = Field(10.0, gt=0)
    #: Prefix of every collection name, so several deployments can share one server.
    collection_prefix: str = Field("memoryd_", pattern=r"^[A-Za-z0-9_-]*$", max_length=64)
    #: Other memoryd processes (replicas) write the same collections. Then every write
    #: is acknowledged once Qdrant has applied it (no local write-ahead log: nothing
    #: acknowledged lives only on a replica's disk), versions, if_version, etags,
    #: merges and appends are compare-and-set in Qdrant, and nothing is cached per
    #: process. None: true with a url (a server), false in local mode.
    #: docs/qdrant-and-replicas.md, "Running several replicas".
    shared: bool | None = None
    #: Write ordering of every write (Qdrant's `ordering`): "strong" serialises a
    #: shard's writes through its permanent leader (conditional writes exact on
    #: replicated shards; a shard whose leader is down refuses writes until it is
    #: back); "medium" through a dynamically elected leader (writes go on when a node
    #: fails; a conditional write in flight at the instant a leader changes may be
    #: applied out of order); "weak" no ordering (not for replicated collections).
    write_ordering: Literal["weak", "medium", "strong"] = "strong"
    #: Qdrant's read ``consistency`` for every read: "one" (Qdrant's default: one copy
    #: answers, which may be a copy that missed a write while its node was down or
    #: being recovered), "majority" (every copy asked, a point kept where a majority
    #: hold it identically: with 2 copies, both), "quorum" (half the copies plus one,
    #: all of them agreeing) or "all". Copies that differ make a point missing from a
    #: read, never old; but with 2 copies anything above "one" makes reads fail while
    #: a node is down (measured: docs/qdrant-and-replicas.md, "Distributed Qdrant").
    read_consistency: ReadConsistency = "one"
    #: Collection settings used when memoryd creates its collections (distributed
    #: mode; an existing collection keeps its own). None: the server's default
    #: (shards: one per node at creation; replication factor 1; write consistency 1).
    shard_number: int | None = Field(None, ge=1, le=1024)
    #: Shared mode: the writes that must see every other write of an agent (key
    #: writes, Remember's duplicate and quota checks) hold the agent's write lease,
    #: for a burst of writes. A replica keeps an idle lease this long for the next
    #: write (a replica that asks for it gets an idle one within a fifth of this) ...
    lease_linger_s: float = Field(0.25, ge=0, le=5)
    #: ... and a busy one this long before letting another replica that asked have it.
    lease_turn_s: float = Field(0.5, gt=0, le=60)
    #: A lease not renewed within this expires (a replica that died holding it blocks
    #: the agent's leased writes this long); keep it well above timeout_s.
    lease_ttl_s: float = Field(30.0, ge=1, le=3600)
    replication_factor: int | None = Field(None, ge=1, le=64)
    write_consistency_factor: int | None = Field(None, ge=1, le=64)

    @field_validator("url")
    @classmethod
    def _url_has_a_valid_port(cls, url: str | None) -> str | None:
        if url is not None:
            url_port(url)  # ValueError for a port out of range or not a number
        return url

    def grpc_endpoint(self) -> tuple[int | None, str]:
        """(the gRPC port memoryd talks to, None for REST to ``url``; why that one)."""
        if self.url is None:
            return None, "local mode"
        if not self.prefer_grpc:
            return None, "storage.qdrant.prefer_grpc is false"
        if self.grpc_port is not None:
            return self.grpc_port, "storage.qdrant.grpc_port"
        if url_port(self.url) in (None, QDRANT_REST_PORT):
            return QDRANT_GRPC_PORT, f"Qdrant's default pairing of REST {QDRANT_REST_PORT}"
        return None, (
            f"the url's port is not Qdrant's default REST port {QDRANT_REST_PORT}, so the "
            "gRPC port cannot be derived from it: set storage.qdrant.grpc_port to use gRPC"
        )

    @property
    def is_shared(self) -> bool:
        """Whether other processes may write these collections (see ``shared``)."""
        return self.shared if self.shared is not None else self.url is not None

    @model_validator(mode="after")
    def _consistency_fits_replication(self) -> QdrantSettings:
        if self.shared and self.url is None:
            raise ValueError(
                "storage.qdrant.shared needs storage.qdrant.url: local mode is one process's"
            )
        wcf, rf = self.write_consistency_factor, self.replication_factor
        if wcf is not None and wcf > (rf or 1):
            raise ValueError(
                f"storage.qdrant.write_consistency_factor ({wcf}) cannot exceed "
                f"replication_factor ({rf or 1}): no write could ever succeed"
            )
        return self


class StorageSettings(BaseModel):
    backend: StoreBackend = "lancedb"
    hot_cache: HotCacheSettings = Field(default_factory=HotCacheSettings)
    qdrant: QdrantSettings = Field(default_factory=QdrantSettings)
    #: Concurrent writes are coalesced into one store write of at most this many records.
    write_batch_max: int = Field(1024, ge=1)
    #: How often buffered access statistics are flushed to the store, and after how
    #: many distinct recalled memories sooner. A flush rewrites each touched row, so
    #: its cost follows the distinct ids, not the recalls: at 1,000 / 5 s a 32-client
    #: recall load spent most of the daemon's time rewriting rows (330 vs 500+ RPS).
    access_flush_interval_s: float = Field(30.0, gt=0)
    access_flush_max_pending: int = Field(20_000, ge=1)
