"""Timestamps as Kubernetes objects carry them: metav1.Time and metav1.MicroTime.

Sources: k8s.io/apimachinery ``pkg/apis/meta/v1`` ``time.go`` (``Time.MarshalJSON``
writes ``t.UTC().Format(time.RFC3339)``: UTC, whole seconds, ``Z``, e.g.
``2006-01-02T15:04:05Z``; used by ``creationTimestamp``, ``lastTransitionTime``, ...) and
``micro_time.go`` (``MicroTime`` writes ``RFC3339Micro``: six fractional digits, e.g.
``2006-01-02T15:04:05.000000Z``; used by Events' ``eventTime`` and Leases'
``renewTime``). Both truncate, neither rounds. A naive ``datetime`` is taken as UTC.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

__all__ = ["format_micro_time", "format_time", "now_micro_time", "now_time", "parse_time"]


def format_time(when: datetime) -> str:
    """``when`` in metav1.Time's wire form: RFC 3339 in UTC, whole seconds (truncated)."""
    return _utc(when).isoformat(timespec="seconds") + "Z"


def format_micro_time(when: datetime) -> str:
    """``when`` in metav1.MicroTime's wire form: RFC 3339 in UTC with microseconds."""
    return _utc(when).isoformat(timespec="microseconds") + "Z"


_last_second: tuple[int, str] = (-1, "")


def now_time() -> str:
    """The current time as metav1.Time (``format_time`` of now), formatted once per second."""
    global _last_second
    second = int(time.time())
    if second != _last_second[0]:
        _last_second = (second, format_time(datetime.fromtimestamp(second, UTC)))
    return _last_second[1]


def now_micro_time() -> str:
    """The current time as metav1.MicroTime (``format_micro_time`` of now)."""
    return format_micro_time(datetime.now(UTC))


def parse_time(text: str) -> datetime:
    """An aware UTC datetime from an RFC 3339 timestamp (metav1.Time or MicroTime).

    Reads whatever ``datetime.fromisoformat`` reads (a ``Z`` or numeric offset, any number
    of fractional digits, of which microseconds are kept); no offset means UTC.

    Raises:
        ValueError: ``text`` is not such a timestamp.
    """
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _utc(when: datetime) -> datetime:
    """``when`` in UTC without tzinfo (naive means UTC already), ready for ``isoformat``."""
    if when.tzinfo is None:
        return when
    return when.astimezone(UTC).replace(tzinfo=None)
