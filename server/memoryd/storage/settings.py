"""The storage part of the settings (config.py's ``storage``): the backend, the hot
cache in front of it and the Qdrant server's options."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator

StoreBackend = Literal["lancedb", "memory", "qdrant"]


class HotCacheSettings(BaseModel):
    """Hot partitions' vectors in memory in front of the store (storage/hot_cache.py)."""

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
    #: Talk gRPC to the server (on grpc_port) rather than REST.
    prefer_grpc: bool = True
    grpc_port: int = Field(6334, ge=1, le=65535)
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
    #: Collection settings used when memoryd creates its collections (distributed
    #: mode; an existing collection keeps its own). None: the server's default
    #: (shards: one per node at creation; replication factor 1; write consistency 1).
    shard_number: int | None = Field(None, ge=1, le=1024)
    replication_factor: int | None = Field(None, ge=1, le=64)
    write_consistency_factor: int | None = Field(None, ge=1, le=64)

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
