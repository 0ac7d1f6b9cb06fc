"""Logging set-up: stdlib logging, text or JSON lines, with reconcile context fields.

Reconcile records carry ``controller``, ``key`` and ``attempt`` (the controller logs
through a LoggerAdapter), and ``cluster`` in a multi-cluster manager; both formats show
them when present.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Any

import orjson

from ..client.redaction import RedactingFilter
from ..meta.time import format_micro_time

__all__ = ["JsonFormatter", "TextFormatter", "configure_logging"]

CONTEXT_FIELDS = ("controller", "key", "attempt", "cluster")


class TextFormatter(logging.Formatter):
    """``time level logger [controller key attempt=n cluster=c] message``."""

    def format(self, record: logging.LogRecord) -> str:
        """``record`` as one line (see the class)."""
        context = [
            str(getattr(record, f))
            for f in ("controller", "key")
            if getattr(record, f, None) is not None
        ]
        attempt = getattr(record, "attempt", None)
        if attempt is not None:
            context.append(f"attempt={attempt}")
        cluster = getattr(record, "cluster", None)
        if cluster is not None:
            context.append(f"cluster={cluster}")
        prefix = f"[{' '.join(context)}] " if context else ""
        stamp = format_micro_time(datetime.fromtimestamp(record.created, UTC))
        line = f"{stamp} {record.levelname:<7} {record.name}: {prefix}{record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        elif record.exc_text:  # a traceback RedactingFilter cleaned
            line += "\n" + record.exc_text
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, context fields, error."""

    def format(self, record: logging.LogRecord) -> str:
        """``record`` as one line (see the class)."""
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for field in CONTEXT_FIELDS:
            value = getattr(record, field, None)
            if value is not None:
                entry[field] = value
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        elif record.exc_text:  # a traceback RedactingFilter cleaned
            entry["error"] = record.exc_text
        return orjson.dumps(entry, default=str).decode()


def configure_logging(fmt: str = "text", level: int | str = logging.INFO) -> None:
    """Send the root logger to stderr in ``fmt`` (``text`` or ``json``), every record
    passed through :class:`~reconcile_kit.client.redaction.RedactingFilter` (no bearer
    token is written, whichever library logs it).

    Raises:
        ValueError: ``fmt`` is neither ``text`` nor ``json``.
    """
    formatters: dict[str, type[logging.Formatter]] = {"text": TextFormatter, "json": JsonFormatter}
    if fmt not in formatters:
        raise ValueError(f"log format must be 'text' or 'json', not {fmt!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatters[fmt]())
    handler.addFilter(RedactingFilter())  # no bearer token reaches the output, whoever logs it
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("httpx").setLevel(logging.WARNING)
