"""The observability sections of the settings (config.Settings): logging, Prometheus
metrics and OpenTelemetry traces."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class LoggingSettings(BaseModel):
    level: Literal["debug", "info", "warning", "error"] = "info"
    #: "auto": JSON unless stderr is a terminal.
    format: Literal["auto", "json", "console"] = "auto"


class MetricsSettings(BaseModel):
    """Prometheus /metrics over HTTP (observability/metrics.py); nothing is ever pushed."""

    enabled: bool = True
    #: host:port of the HTTP endpoint; port 0 picks a free one (logged at start). Left at
    #: the default, a port in use falls back to a free one with a warning (a second
    #: daemon on one machine starts); set explicitly, a port in use stops the start.
    listen: str = Field("127.0.0.1:9464", pattern=r"^(\[[0-9A-Fa-f:.]+\]|[^\s:\[\]]*):\d{1,5}$")
    #: Opt-in gauge of live memories per (tenant, agent): one store count per partition
    #: every partition_refresh_s, the largest max_partition_series partitions as series
    #: and the rest summed into one tenant="_other" series (bounded cardinality).
    per_partition: bool = False
    max_partition_series: int = Field(20, ge=1, le=1000)
    partition_refresh_s: float = Field(60.0, gt=0)


class TracingSettings(BaseModel):
    """OpenTelemetry traces (observability/tracing.py), off by default. Where they go and
    how they are sampled come from the standard variables (``OTEL_EXPORTER_OTLP_ENDPOINT``,
    ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_TRACES_SAMPLER``, ``OTEL_SERVICE_NAME``, ...);
    spans are exported over OTLP/gRPC. Needs ``pip install 'memoryd[tracing]'``."""

    enabled: bool = False
    #: Record a search's query text as ``gen_ai.memory.query.text``. It is the caller's
    #: text (often personal), so it is opt-in; memory content is never recorded.
    capture_query_text: bool = False
