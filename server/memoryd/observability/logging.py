"""structlog set-up: JSON lines when stderr is not a terminal, readable otherwise.

Request id, principal, tenant, agent and method are bound per call by the API layer
through structlog's contextvars; memory content is never logged.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

import structlog

from memoryd.config import LoggingSettings


def _as_json(settings: LoggingSettings) -> bool:
    return settings.format == "json" or (settings.format == "auto" and not sys.stderr.isatty())


def configure_logging(settings: LoggingSettings) -> None:
    level = getattr(logging, settings.level.upper())
    as_json = _as_json(settings)
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info if as_json else structlog.dev.set_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    # Libraries that use stdlib logging (grpc, lancedb) go to stderr at warning level.
    logging.basicConfig(
        level=max(level, logging.WARNING),
        stream=sys.stderr,
        format="%(levelname)s %(name)s %(message)s",
    )


class AccessLog:
    """The access log: one ``rpc`` line per finished call, with the fields the
    operation layer's door passes (request id, method, principal, tenant, agent, code, latency).

    As JSON it is written here, in the shape and timestamp format of structlog's JSON
    lines, instead of through structlog's processor chain: that chain costs ~40 us a
    call in the daemon (cold caches between requests), the largest single item of a
    cached Recall's overhead. Console output goes through structlog (readable, and
    nobody serves at full rate to a terminal)."""

    def __init__(self, settings: LoggingSettings) -> None:
        level = getattr(logging, settings.level.upper())
        self._json = _as_json(settings)
        self._info = level <= logging.INFO
        self._warning = level <= logging.WARNING
        self._console = structlog.get_logger("memoryd.access")

    def rpc(self, *, ok: bool, fields: dict[str, object]) -> None:
        """One finished call: level info when ``ok``, warning otherwise."""
        if not (self._info if ok else self._warning):
            return
        level = "info" if ok else "warning"
        if not self._json:
            getattr(self._console, level)("rpc", **fields)
            return
        fields["event"] = "rpc"
        fields["level"] = level
        fields["timestamp"] = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        sys.stderr.write(json.dumps(fields) + "\n")
