"""Wiring: components start in dependency order and stop in reverse.

``App.start`` reads as the list: process (data dir lock, BLAS threads) -> security
(auth, key file watch, audit) -> observability (metrics, tracing, component states)
-> embedder -> repository (durability/repository.py: log -> cache -> backend,
opened and replayed) -> background (partition counts, re-embedding) -> services
(builders.py: writer, access buffer, the services, maintenance scheduler) ->
transports (gRPC, MCP) -> health SERVING. Each builder registers its own stop on
one AsyncExitStack. Stop: health NOT_SERVING, stop accepting and drain in-flight
calls within the grace period, then flush and close everything else in reverse.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, AsyncExitStack
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import structlog
from threadpoolctl import ThreadpoolController

from memoryd import __version__
from memoryd.api.server import GrpcServer, ListenError, start_server
from memoryd.builders import (
    Base,
    Built,
    build_services,
    resilient_embedder,
    start_reembedder,
    with_history,
)
from memoryd.config import Settings
from memoryd.datadir import lock_data_dir, replica_id
from memoryd.durability.repository import HotCacheOptions, Repository, compose_repository
from memoryd.durability.wiring import check_store, log_options
from memoryd.embedding import CachingEmbedder, Embedder
from memoryd.embedding.factory import build_embedder
from memoryd.heap import release_free_heap
from memoryd.model_catalog import KIND_OF_MODEL
from memoryd.observability.http import MetricsListenError, MetricsServer
from memoryd.observability.instrumented import InstrumentedEmbedder
from memoryd.observability.logging import AccessLog
from memoryd.observability.metrics import Metrics
from memoryd.observability.partitions import PartitionCounter
from memoryd.observability.tracing import NO_TRACING, Tracing, build_tracing
from memoryd.operations import Door
from memoryd.operations.auth import Authenticator, build_authenticator, reload_keys
from memoryd.resilience.degradation import ComponentState, ComponentStates
from memoryd.resilience.embedder import FallbackEmbedder
from memoryd.security.audit import AuditEvent, AuditLog, audit_dir
from memoryd.security.file_watch import FileWatcher
from memoryd.security.keys import KeyFileError
from memoryd.security.read_trail import ReadTrail
from memoryd.security.tls import TlsConfigError, server_credentials
from memoryd.service.lifecycle.maintenance import MaintenanceScheduler
from memoryd.storage import build_record_store, build_store
from memoryd.storage.base import Store
from memoryd.storage.budget import cgroup_memory_limit, default_budget_mb
from memoryd.storage.hot.ann import AnnParams
from memoryd.storage.space import Space, check_space, recorded_space

if TYPE_CHECKING:
    from memoryd.mcp.http import McpHttpServer

log = structlog.get_logger("memoryd")


def _observe_component(metrics: Metrics, state: ComponentState) -> None:
    """Degraded gauge per component; entering a degraded state counts as a fallback."""
    metrics.degraded(state.name, not state.ok)
    if not state.ok:
        metrics.fallback(state.name)


class App:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._stack = AsyncExitStack()
        self.server: GrpcServer | None = None
        self.audit: AuditLog | None = None
        self.authenticator: Authenticator | None = None
        #: Reloads auth.keys_file when it changes (also reloaded on SIGHUP).
        self.key_watch: FileWatcher | None = None
        self.scheduler: MaintenanceScheduler | None = None
        #: Prometheus metrics (None when metrics.enabled is false) and their endpoint.
        self.metrics: Metrics | None = None
        self.metrics_server: MetricsServer | None = None
        #: OpenTelemetry spans (NO_TRACING unless tracing.enabled); flushed last.
        self.tracing: Tracing = NO_TRACING
        #: The MCP endpoint (memoryd.mcp.http.McpHttpServer) when mcp.listen is set.
        self.mcp: McpHttpServer | None = None

    @property
    def address(self) -> str:
        assert self.server is not None, "not started"
        return self.server.address

    async def start(self) -> None:
        """Start every component in dependency order; ``stop`` stops them in reverse
        (each builder registers its own stop on the exit stack)."""
        bulk_compute = self._start_process()
        credentials = self._start_security()
        metrics, tracing = self._start_metrics(), self._start_tracing()
        states = self._component_states(metrics)
        embedder = await self._start_embedder(states, metrics, tracing)
        repository = await self._start_repository(
            embedder.dimension, states, metrics, tracing, bulk_compute
        )
        self._start_background(repository, embedder, metrics)
        store, records = with_history(self.settings, repository, self._data_dir, self._stack)
        built = await build_services(
            Base(
                settings=self.settings,
                data_dir=self._data_dir,
                stack=self._stack,
                store=store,
                records=records,
                embedder=embedder,
                states=states,
                metrics=metrics,
                tracing=tracing,
                # Read once, under the data dir's lock (taken in _start_process).
                replica=(
                    replica_id(self._data_dir) if repository.records.capabilities.shared else None
                ),
                changes=None if repository.durability is None else repository.durability.changes,
            )
        )
        self.scheduler = built.scheduler
        door = self._door(
            built,
            states,
            metrics,
            tracing,
            logged=repository.durability is not None,
            shared=repository.backend.capabilities.shared,
        )
        await self._start_transports(door, states, credentials)
        # Closed first, before the transports wait out their in-flight calls: schema
        # checks still waiting or running answer UNAVAILABLE instead of holding the
        # shutdown up past its grace period.
        self._stack.callback(built.services.working.stop_schema_work)
        self._log_serving(repository.store.name, embedder, credentials is not None, states)

    @property
    def _data_dir(self) -> Path:
        return self.settings.data_dir.absolute()

    def _start_process(self) -> Callable[[], AbstractContextManager[object]]:
        """The data directory's lock and the BLAS thread limits; returns what batched
        searches enter to use more threads."""
        hot = self.settings.storage.hot_cache
        lock = lock_data_dir(self._data_dir)
        self._stack.callback(lock.close)
        threadpools = ThreadpoolController()
        blas = threadpools.limit(limits=hot.blas_threads, user_api="blas")
        self._stack.callback(blas.restore_original_limits)
        bulk_threads = hot.bulk_blas_threads or os.cpu_count() or 1
        return partial(threadpools.limit, limits=bulk_threads, user_api="blas")

    def _start_security(self) -> grpc.ServerCredentials | None:
        """Security first: a bad keys file or certificate stops the start before any
        work. The authenticator, its key file watch and the audit log; returns the
        server's TLS credentials (None without TLS)."""
        s = self.settings
        try:
            self.authenticator = build_authenticator(s.auth, s.sidecar)
            credentials = (
                server_credentials(s.auth.tls, require_client_cert=s.auth.mode == "mtls")
                if s.auth.tls.enabled
                else None
            )
        except (KeyFileError, TlsConfigError, ValueError) as exc:
            raise ListenError(f"cannot serve with this auth configuration: {exc}") from None
        if s.auth.mode == "api_key" and s.auth.keys_file is not None and s.auth.keys_file_poll_s:
            self.key_watch = FileWatcher(
                s.auth.keys_file, s.auth.keys_file_poll_s, self.reload_keys
            )
            self.key_watch.start()
            self._stack.push_async_callback(self.key_watch.close)
        if s.audit.enabled:
            # Closed after the server has drained, so every call's audit event is written.
            self.audit = AuditLog(
                audit_dir(s.audit.dir, self._data_dir),
                rotate_bytes=s.audit.rotate_bytes,
                keep_files=s.audit.keep_files,
            )
            self.audit.start()
            self._stack.push_async_callback(self.audit.close)
        return credentials

    def _component_states(self, metrics: Metrics | None) -> ComponentStates:
        """Dependencies' states: per-component health, degraded responses (resilience/)."""
        states = ComponentStates()
        if metrics is not None:
            states.listen(partial(_observe_component, metrics))
        return states

    async def _start_embedder(
        self, states: ComponentStates, metrics: Metrics | None, tracing: Tracing
    ) -> Embedder:
        """The model (timed under its cache), behind the fallback; the data directory's
        embedding space checked before any store opens."""
        self.settings = s = self._recorded_embedder(self.settings)
        observed = metrics is not None or tracing.enabled

        def instrument(model: Embedder) -> Embedder:
            return InstrumentedEmbedder(model, metrics, tracing) if observed else model

        embedder = await asyncio.to_thread(build_embedder, s.embedder, s.embedding, wrap=instrument)
        self._stack.push_async_callback(embedder.close)
        if metrics is not None and isinstance(embedder, CachingEmbedder):
            metrics.watch_cache("embedding", embedder)
        embedder = resilient_embedder(s, embedder, states)
        # Vectors of another model must not be searched. The fallback's own space is
        # kept apart and re-embedded by the resilience layer.
        check_space(
            self._data_dir,
            Space(embedder.model_id, embedder.dimension),
            allow_change=s.embedding.allow_model_change,
            absorbed=embedder.fallback_model_id if isinstance(embedder, FallbackEmbedder) else None,
        )
        return embedder

    def _recorded_embedder(self, s: Settings) -> Settings:
        """With no embedder configured, a data directory whose vectors another known
        model made keeps that model (the default changed under it: its memories stay
        searchable) and says how to move to the default."""
        recorded = recorded_space(self._data_dir)
        kept = KIND_OF_MODEL.get(recorded.model) if recorded is not None else None
        if "embedder" in s.model_fields_set or kept is None or kept == s.embedder:
            return s
        assert recorded is not None
        log.warning(
            f"the memories in {self._data_dir} were embedded by {recorded.model}: serving "
            f"with that model (--embedder {kept}), not the default ({s.embedder}). To move "
            f"to {s.embedder}: start with --embedder {s.embedder} and "
            "MEMORYD_EMBEDDING__ALLOW_MODEL_CHANGE=true, then run `memoryctl reembed "
            "--all-agents` for each tenant; to keep it, set embedder: "
            f"{kept} (MEMORYD_EMBEDDER={kept}) and this message goes",
            recorded=recorded.model,
            default=s.embedder,
        )
        return s.with_embedder(kept)

    def _start_background(
        self, repository: Repository, embedder: Embedder, metrics: Metrics | None
    ) -> None:
        """Per-partition counts for metrics, and the re-embedding of fallback vectors."""
        s = self.settings
        if metrics is not None and s.metrics.per_partition:
            partitions = PartitionCounter(
                repository.uncounted,  # not timed: its counts are not request traffic
                metrics.partitions,
                interval_s=s.metrics.partition_refresh_s,
                max_series=s.metrics.max_partition_series,
            )
            partitions.start()
            self._stack.push_async_callback(partitions.close)
        start_reembedder(self._stack, s, repository.store, embedder)

    def _door(
        self,
        built: Built,
        states: ComponentStates,
        metrics: Metrics | None,
        tracing: Tracing,
        *,
        logged: bool,
        shared: bool,
    ) -> Door:
        """The one door every transport runs operations through (memoryd.operations).
        ``logged``: writes go through the write-ahead log, whose entries can carry
        their audit events (one fsync per write). ``shared``: writes go to a store
        other replicas share, through a facade that waits for their audit events
        (durability/write_through.py), so the events are fsynced beside the reads."""
        s = self.settings
        assert self.authenticator is not None, "security starts first"
        return Door(
            built.services,
            self.authenticator,
            audit=self.audit,
            read_trail=ReadTrail(self.audit, enabled=s.audit.read_trail),
            states=states,
            metrics=metrics,
            access_log=AccessLog(s.logging),
            tracing=tracing,
            masker=built.masker,
            audit_rides_log=logged,
            audit_beside_reads=shared,
            on_write=built.views.changed if built.views is not None else None,
        )

    async def _start_transports(
        self, door: Door, states: ComponentStates, credentials: grpc.ServerCredentials | None
    ) -> None:
        """gRPC, then MCP when configured; health SERVING last."""
        s = self.settings
        self.server = await start_server(
            listen=s.listen,
            door=door,
            max_message_bytes=s.limits.max_request_bytes,
            credentials=credentials,
            states=states,
        )
        self._stack.push_async_callback(self.server.stop, s.shutdown_grace_s)
        await self._start_mcp(door)
        await self.server.set_serving(True)

    def _log_serving(
        self, store: str, embedder: Embedder, tls: bool, states: ComponentStates
    ) -> None:
        """The start's last line; a warning naming every impaired component (as health
        does) when the daemon serves degraded."""
        s = self.settings
        assert self.server is not None
        impaired = {state.name: state.reason for state in states.all() if not state.ok}
        (log.warning if impaired else log.info)(
            "serving",
            degraded=impaired or None,
            address=self.server.address,
            store=store,
            embedder=embedder.model_id,
            dimension=embedder.dimension,
            data_dir=str(self._data_dir),
            pid=os.getpid(),
            auth=s.auth.mode,
            tls=tls,
            mcp=self.mcp.address if self.mcp is not None else None,
        )
        _warn_if_exposed(s, self.server.address, tls=tls)

    async def _start_repository(
        self,
        dimension: int,
        states: ComponentStates,
        metrics: Metrics | None,
        tracing: Tracing,
        bulk_compute: Callable[[], AbstractContextManager[object]],
    ) -> Repository:
        """The configured backend composed with the log, the hot cache, metrics and
        spans (durability/repository.py), opened and replayed; closed in reverse."""
        s = self.settings
        data_dir = s.data_dir.absolute()
        store = build_store(
            s.storage.backend, data_dir=data_dir, dimension=dimension, qdrant=s.storage.qdrant
        )
        await check_store(s, data_dir)
        # Keys, working memory, profiles and sessions: same backend, same directory.
        records = build_record_store(s.storage.backend, data_dir=data_dir, qdrant=s.storage.qdrant)
        return await compose_repository(
            store,
            records,
            dimension=dimension,
            stack=self._stack,
            states=states,
            wal=log_options(s, data_dir, store),
            retry_max_s=s.durability.store_retry_max_s,
            hot_cache=self._hot_cache(store, dimension, bulk_compute),
            metrics=metrics,
            tracing=tracing,
            audit=self.audit,
        )

    def _hot_cache(
        self,
        store: Store,
        dimension: int,
        bulk_compute: Callable[[], AbstractContextManager[object]],
    ) -> HotCacheOptions | None:
        """The hot cache's options: on where the backend wants one unless configured."""
        hot = self.settings.storage.hot_cache
        if not (hot.enabled or (hot.enabled is None and store.capabilities.wants_hot_cache)):
            return None
        limit = cgroup_memory_limit()
        budget_mb = hot.memory_budget_mb or default_budget_mb(limit)
        log.info(
            "hot cache budget",
            mb=budget_mb,
            memory_limit_mb=limit // 2**20 if limit else None,
            configured=hot.memory_budget_mb is not None,
        )
        return HotCacheOptions(
            budget_bytes=budget_mb * 2**20,
            ann=AnnParams(threshold=hot.hnsw_threshold),
            bulk_compute=bulk_compute,
        )

    async def _start_mcp(self, door: Door) -> None:
        """MCP over Streamable HTTP when mcp.listen is set (stopped before the gRPC
        server drains); nothing of MCP is imported otherwise."""
        s = self.settings
        if not s.mcp.listen:
            return
        from memoryd.mcp.http import McpHttpServer, McpListenError  # heavy: only when enabled

        try:
            self.mcp = McpHttpServer(s.mcp, door, s.auth.tls, mode=s.auth.mode)
            await self.mcp.start()
        except McpListenError as exc:
            raise ListenError(str(exc)) from None
        self._stack.push_async_callback(self.mcp.stop)
        _warn_if_exposed(s, s.mcp.listen, tls=s.auth.tls.enabled)

    def _start_metrics(self) -> Metrics | None:
        """The daemon's one metrics registry and its /metrics endpoint (stopped last)."""
        settings = self.settings.metrics
        if not settings.enabled:
            return None
        self.metrics = Metrics()
        self.metrics.set_info(
            version=__version__,
            store=self.settings.storage.backend,
            embedder=self.settings.embedder,
            auth=self.settings.auth.mode,
        )
        self.metrics_server = MetricsServer(self.metrics.registry, settings.listen)
        # The default port taken (a second daemon on this machine) is no reason not to
        # start; a port asked for explicitly is, since scrapers are pointed at it.
        default = "listen" not in settings.model_fields_set
        try:
            moved = self.metrics_server.start(or_free_port=default)
        except MetricsListenError as exc:
            raise ListenError(str(exc)) from None
        self._stack.push_async_callback(self.metrics_server.close)
        if moved:
            log.warning(
                "default metrics port in use (another daemon?); serving metrics on a free "
                "port instead: set metrics.listen to choose one",
                wanted=settings.listen,
                address=self.metrics_server.address,
            )
        log.info("metrics serving", address=self.metrics_server.address, path="/metrics")
        return self.metrics

    def _start_tracing(self) -> Tracing:
        """OpenTelemetry spans when tracing.enabled (exported until stop, after the
        server has drained); NO_TRACING otherwise, with nothing of OpenTelemetry loaded."""
        self.tracing = build_tracing(self.settings.tracing)
        if self.tracing.enabled:
            self._stack.push_async_callback(self.tracing.close)
            log.info(
                "tracing on",
                exporter="otlp/grpc",
                endpoint=os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4317"),
                capture_query_text=self.settings.tracing.capture_query_text,
            )
        return self.tracing

    def reload_keys(self) -> None:
        """SIGHUP or a changed file: re-read the API keys file; a bad file keeps the
        previous keys."""
        if self.authenticator is None:
            return
        if self.key_watch is not None:
            self.key_watch.mark()  # a SIGHUP reload is not repeated by the next poll
        outcome, reason = "OK", ""
        try:
            count = reload_keys(self.authenticator, self.settings.auth)
        except KeyFileError as exc:
            outcome, reason = "FAILED", str(exc)
            log.error("api keys not reloaded; the previous keys stay in force", error=reason)
        else:
            if count is None:
                return
            log.info("api keys reloaded", keys=count)
        if self.audit is not None:
            self.audit.record(
                AuditEvent(operation="auth.reload_keys", outcome=outcome, reason=reason)
            )

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.set_serving(False)
        await self._stack.aclose()
        log.info("stopped")


#: Allocations between young garbage collections (Python's default is 700). A
#: 1,000-item RememberBatch allocates ~100k objects: the default ran ~400 collections
#: per 20k-memory ingest, 9% of its time; at 50,000, one.
GC_YOUNG_THRESHOLD = 50_000


async def serve(settings: Settings, *, ready_file: Path | None = None) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    app = App(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, app.reload_keys)
    try:
        await app.start()
        # What start loaded (modules, settings, the model) lives as long as the
        # process: later collections need not walk it again.
        gc.freeze()
        release_free_heap()  # what start freed, glibc would otherwise keep in our RSS
        if ready_file is not None:
            tmp = ready_file.with_suffix(".tmp")
            tmp.write_text(app.address)
            tmp.replace(ready_file)  # atomic: readers never see a partial address
        await stop.wait()
        log.info("shutting down", grace_s=settings.shutdown_grace_s)
        _exit_when_overdue(settings.shutdown_grace_s + SHUTDOWN_SLACK_S)
    finally:
        with contextlib.suppress(Exception):
            await app.stop()


#: Seconds past the grace period after which a shutdown stops waiting for anything:
#: the in-flight calls had the grace period; the closes after it are bounded
#: (durability.close, the access statistics, LanceDB's index refresh) and this is the
#: backstop for the rest (a worker thread asyncio would wait for at exit).
SHUTDOWN_SLACK_S = 1.5


def _exit_when_overdue(after_s: float) -> None:
    """Exit the process ``after_s`` from now if it is still running. Safe like a kill
    -9: every acknowledged write is in the fsynced write-ahead log, and the next start
    replays what was not applied."""

    def overdue() -> None:
        log.warning(
            "shutdown overran the grace period; exiting now (logged writes not yet "
            "applied are replayed at the next start)",
            after_s=after_s,
        )
        sys.stderr.flush()
        os._exit(0)

    timer = threading.Timer(after_s, overdue)
    timer.daemon = True  # never keeps a finished process alive
    timer.start()


def _warn_if_exposed(s: Settings, address: str, *, tls: bool) -> None:
    """Say so when a listener reachable from the network trusts every caller or
    carries API keys in clear text."""
    if address.startswith("unix:"):
        return
    host = address.rsplit(":", 1)[0].strip("[]")
    if host in ("127.0.0.1", "::1", "localhost") or host.startswith("127."):
        return
    if s.auth.mode == "sidecar":
        log.warning(
            "sidecar mode on a non-loopback address: every caller that reaches it acts as "
            "the configured tenant; use auth.mode api_key or mtls",
            address=address,
            tenant=s.sidecar.tenant_id,
        )
    elif s.auth.mode == "api_key" and not tls:
        log.warning(
            "api_key mode without TLS: keys cross the network in clear text", address=address
        )
