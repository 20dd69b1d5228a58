"""structlog set-up: JSON lines when stderr is not a terminal, readable otherwise.

Request id, principal, tenant, agent and method are bound per call by the API layer
through structlog's contextvars; memory content is never logged.
"""

from __future__ import annotations

import logging
import sys

import structlog

from memoryd.config import LoggingSettings


def configure_logging(settings: LoggingSettings) -> None:
    level = getattr(logging, settings.level.upper())
    as_json = settings.format == "json" or (settings.format == "auto" and not sys.stderr.isatty())
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
