"""Kubernetes Events for controllers: ``ctx.recorder.event(obj, type, reason, message)``.

:class:`EventRecorder` writes ``events.k8s.io/v1`` Events (the default) or legacy ``core/v1``
Events about an object, in the object's namespace (``default`` for cluster-scoped objects).
The semantics follow client-go: ``k8s.io/client-go/tools/events`` (``event_recorder.go``,
``event_broadcaster.go``) for events.k8s.io/v1 and ``k8s.io/client-go/tools/record``
(``event.go``, ``events_cache.go``) for core/v1. It is ``ctx.recorder``: a controller
creates one for its api when given none, a Manager shares its own among its controllers.

- :meth:`EventRecorder.event` never blocks and never performs I/O: it validates its
  arguments, then records an *occurrence* in a local cache. A background writer sends it.
- Occurrences of the same event (same object, reason, action, type, note and related
  object) within :data:`SERIES_WINDOW` of the previous occurrence form one series, stored
  in ONE Event object: the first write creates the Event (events.k8s.io/v1: no ``series``;
  core/v1: ``count: 1``, ``firstTimestamp == lastTimestamp``); later writes PATCH
  ``series: {count, lastObservedTime}`` (RFC 7386 merge patch; client-go sends the same
  document as a strategic merge patch, identical here since ``series`` holds no lists) or,
  for core/v1, ``count``/``lastTimestamp``/``message`` (strategic merge patch, as the
  legacy recorder sends it).
  ``series.count`` counts every occurrence, so it is 2 at the first repeat.
- Writes are coalesced: at most one request per series is in flight, a write always sends
  the latest count, and after a write the next one for the same series waits for
  :data:`SERIES_INTERVAL` (a heartbeat; :meth:`EventRecorder.flush` skips the wait). A burst
  of repeats therefore costs one or two requests. client-go's events.k8s.io broadcaster
  writes the second occurrence at once and then refreshes series only every 30 minutes or
  when a series ends (6 minutes without a repeat); the legacy recorder PATCHes every repeat
  behind a per-object token bucket (burst 25, one per 5 minutes). The heartbeat here keeps
  the stored count at most :data:`SERIES_INTERVAL` behind while bounding the request rate
  per series.
- A write that fails with a transport error, a timeout, 409 Conflict, 429 or 5xx is retried up to
  :data:`MAX_ATTEMPTS` times with doubling delays (honouring ``Retry-After``); other
  refusals (400, 403, 404, 422) are not retried. Failures are logged on the
  ``reconcile_kit.runtime.events`` logger and never raised to the caller. A PATCH answered 404 (the
  Event expired, kube-apiserver's event TTL is one hour) re-creates the Event, as client-go.

Differences from client-go, on purpose: the isomorphism key leaves out the object's
``resourceVersion`` (client-go's new recorder keeps it, so every change of the object
starts a new series) and includes the note; notes are cut to 1024 bytes in both modes; and
an AlreadyExists answer to a create (a retried POST whose first answer was lost) counts as
created.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import re
import socket
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

import orjson
from kr8s.asyncio import Api
from kr8s.asyncio.objects import APIObject

from ..client.contenttypes import JSON, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from ..client.request import retry_after_seconds, send
from ..meta.objects import is_model
from ..meta.time import format_micro_time, format_time
from ..meta.validation import qualified_name_errors

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

__all__ = [
    "CORE_GROUP",
    "EVENTS_GROUP",
    "EVENT_TYPES",
    "MAX_ATTEMPTS",
    "NOTE_LIMIT",
    "SERIES_INTERVAL",
    "SERIES_WINDOW",
    "EventObject",
    "EventRecorder",
    "EventType",
]

log = logging.getLogger(__name__)

EVENTS_GROUP: Final = "events.k8s.io"
"""``api_group`` for events.k8s.io/v1 Events (the default)."""
CORE_GROUP: Final = ""
"""``api_group`` for legacy core/v1 Events."""


class EventType(StrEnum):
    """An Event's type (kube-apiserver accepts these two). Members are strings, so
    ``"Normal"`` and ``EventType.NORMAL`` are the same type."""

    NORMAL = "Normal"
    """Nothing wrong: something happened (``ScalingReplicaSet``, ``Created``)."""
    WARNING = "Warning"
    """Something went wrong or needs attention."""


EVENT_TYPES: Final = tuple(EventType)
"""The values an Event's type may take (``"Normal"``, ``"Warning"``)."""

EventObject: TypeAlias = "APIObject | CustomResource | Mapping[str, Any]"
"""What an event is about (``regarding``) or relates to: a kr8s object, a typed model, a
raw object dict, or an ObjectReference-shaped dict."""
# What kube-apiserver's events validation allows.
NOTE_LIMIT: Final = 1024
"""Longest note/message in bytes (kube-apiserver's ``NoteLengthLimit``); longer ones are cut."""
FIELD_LIMIT: Final = 128
"""Longest reason, action and reportingInstance (kube-apiserver's events validation)."""
_REASON = re.compile(r"[A-Z][A-Za-z0-9]*")
_MAX_NAME: Final = 253
_TRUNCATED: Final = " ..."

# Series: repeats of one event (same isomorphism key) aggregated, as client-go's.
SERIES_WINDOW: Final = 360.0
"""Seconds after an occurrence during which a repeat joins its series (client-go finishTime)."""
SERIES_INTERVAL: Final = 30.0
"""Seconds between two writes of one series (the heartbeat)."""
_KEY_FIELDS: Final = ("apiVersion", "kind", "namespace", "name", "uid", "fieldPath")
CACHE_SIZE: Final = 4096
"""Series remembered for aggregation (client-go's LRU size)."""
MAX_PENDING: Final = 1000
"""Series with unwritten occurrences; new events beyond it are dropped (client-go's queue)."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)

# Writes and their retries.
MAX_ATTEMPTS: Final = 5
"""Tries per write before it is dropped (client-go: 12 tries, 10 s apart)."""
RETRY_DELAY: Final = 0.5
"""Seconds before the first retry; doubles per attempt, jittered by +-25 %."""
MAX_RETRY_DELAY: Final = 30.0
_OK, _RETRY, _REJECTED = "ok", "retry", "rejected"
REQUEST_TIMEOUT: Final = 30.0
"""Seconds one request may take before it counts as a (retryable) failure."""
MAX_CONCURRENT_WRITES: Final = 4
_SLACK: Final = 1e-3
"""Seconds early a write may start: timers may fire a hair before the time they were set
for (loop clock resolution, rounding in fast-forwarded test loops); waiting again for the
remainder would spin."""

_REF_FIELDS: Final = (
    "apiVersion",
    "kind",
    "namespace",
    "name",
    "uid",
    "resourceVersion",
    "fieldPath",
)
JSONDict = dict[str, Any]
_Key = tuple[Any, ...]


@dataclass(eq=False)
class _Series:
    """One Event object and the occurrences it stands for."""

    name: str
    namespace: str
    template: JSONDict  # the Event without its count/time fields
    first: datetime
    last: datetime
    count: int = 1
    written: int = 0  # occurrences the stored Event accounts for
    created: bool = False
    inflight: bool = False
    last_write: float = -math.inf  # loop time of the last successful write
    attempts: int = 0
    retry_at: float = 0.0

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class _Occurrence:
    """One call of :meth:`EventRecorder.event`, checked: what a series is made of."""

    regarding: dict[str, str]
    related: dict[str, str] | None
    type: str
    reason: str
    action: str
    note: str

    def key(self) -> _Key:
        """The series this occurrence joins (client-go's event aggregation key)."""
        related = self.related
        return (
            tuple(self.regarding.get(f, "") for f in _KEY_FIELDS),
            None if related is None else tuple(related.get(f, "") for f in _KEY_FIELDS),
            self.type,
            self.reason,
            self.action,
            self.note,
        )

    def about(self) -> str:
        """``Kind namespace/name`` of the object it is about, for log lines."""
        regarding = self.regarding
        return f"{regarding['kind']} {regarding.get('namespace', '')}/{regarding['name']}"


def _checked(type: str, reason: str, action: str, message: str) -> str:
    """``action`` once the arguments of :meth:`EventRecorder.event` are valid.

    Raises:
        ValueError: ``type``, ``reason`` or ``action`` is not valid (naming it).
        TypeError: ``message`` is not a string.
    """
    if type not in EVENT_TYPES:
        raise ValueError(f"type {type!r}: must be one of {', '.join(EVENT_TYPES)}")
    if not isinstance(reason, str) or not _REASON.fullmatch(reason) or len(reason) > FIELD_LIMIT:
        raise ValueError(
            f"reason {reason!r}: must be UpperCamelCase ([A-Z][A-Za-z0-9]*), "
            f"at most {FIELD_LIMIT} characters"
        )
    if not isinstance(action, str) or not action or len(action) > FIELD_LIMIT:
        raise ValueError(f"action {action!r}: must be 1-{FIELD_LIMIT} characters")
    if not isinstance(message, str):
        raise TypeError(f"message must be a str, got {message.__class__.__name__}")
    return action


class EventRecorder:
    """Records Kubernetes Events about objects, aggregating repeats into one Event.

    Args:
        api: a ``kr8s.asyncio`` Api.
        reporting_controller: the controller's name, a Kubernetes qualified name such as
            ``example.com/widget-controller`` (``reportingController``; ``source.component``
            and ``reportingComponent`` of core/v1 Events).
        reporting_instance: this replica's id, at most 128 characters; default
            ``<reporting_controller>-<hostname>`` cut to 128 characters (client-go's
            default).
        api_group: ``"events.k8s.io"`` for events.k8s.io/v1 Events, ``""`` for core/v1.
        clock: returns the current time as an aware ``datetime`` (naive values are taken as
            UTC); it stamps events and decides whether a repeat joins a series. Default: the
            system clock.
        series_window: seconds after an occurrence during which a repeat joins its series.
        series_interval: least seconds between two writes of one series (``flush`` skips it).

    Use ``await start()`` / ``await stop()`` (or ``async with``) around the recorder's life;
    :meth:`flush` also works without ``start``. Call :meth:`event` from the event loop's
    thread. Semantics follow client-go ``tools/events`` and ``tools/record``; see the
    module docstring.

    Raises:
        ValueError: an invalid ``reporting_controller``, ``reporting_instance`` or
            ``api_group`` (named).
    """

    def __init__(
        self,
        api: Api,
        *,
        reporting_controller: str,
        reporting_instance: str | None = None,
        api_group: str = EVENTS_GROUP,
        clock: Callable[[], datetime] | None = None,
        series_window: float = SERIES_WINDOW,
        series_interval: float = SERIES_INTERVAL,
    ) -> None:
        _check_qualified_name(reporting_controller)
        if reporting_instance is None:
            reporting_instance = f"{reporting_controller}-{socket.gethostname()}"[:FIELD_LIMIT]
        elif not reporting_instance or len(reporting_instance) > FIELD_LIMIT:
            raise ValueError(
                f"reporting_instance {reporting_instance!r}: must be 1-{FIELD_LIMIT} characters"
            )
        if api_group not in (EVENTS_GROUP, CORE_GROUP):
            raise ValueError(
                f"api_group {api_group!r}: must be {EVENTS_GROUP!r} (events.k8s.io/v1) "
                f"or {CORE_GROUP!r} (core/v1)"
            )
        if series_window < 0 or series_interval < 0:
            raise ValueError("series_window and series_interval must be >= 0 seconds")
        self.api = api
        self.reporting_controller = reporting_controller
        self.reporting_instance = reporting_instance
        self._clock = clock or _system_clock
        self.api_group = api_group
        self.series_window = series_window
        self.series_interval = series_interval
        self._cache: OrderedDict[_Key, _Series] = OrderedDict()
        self._pending: dict[_Series, None] = {}  # insertion-ordered set
        self._last_nanos = 0
        self._wake = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self._flushing = 0
        self._explicit = False
        self._task: asyncio.Task[None] | None = None
        self._writers: set[asyncio.Task[None]] = set()

    # --- recording -------------------------------------------------------------------------

    def event(
        self,
        obj: EventObject,
        type: EventType | Literal["Normal", "Warning"],
        reason: str,
        message: str,
        *,
        action: str | None = None,
        related: EventObject | None = None,
    ) -> None:
        """Record that ``reason`` happened to ``obj``; returns at once (no I/O).

        Args:
            obj: the object the event is about (``regarding`` / ``involvedObject``): a kr8s
                object, a raw object dict (``apiVersion``, ``kind``, ``metadata.name``,
                ``metadata.namespace``, ``metadata.uid``, ``metadata.resourceVersion``), or an
                ObjectReference-shaped dict (``kind``, ``name``, ``namespace``, ...).
            type: an :class:`EventType` (``"Normal"`` or ``"Warning"``).
            reason: why, in UpperCamelCase (``ScalingReplicaSet``), at most 128 characters.
            message: human-readable text (the ``note``); cut to 1024 bytes.
            action: what was done or failed (``Scaling``), at most 128 characters; defaults
                to ``reason``.
            related: an optional second object, same shapes as ``obj``.

        Write failures are logged, never raised.

        Raises:
            ValueError: an invalid ``type``, ``reason``, ``action``, ``obj`` or ``related``
                (named).
            TypeError: a non-string ``message``, or an unusable object.
        """
        action = _checked(type, reason, reason if action is None else action, message)
        occurrence = _Occurrence(
            _reference(obj, "obj"),
            None if related is None else _reference(related, "related"),
            type,
            reason,
            action,
            _truncate(message),
        )
        now = self._now()
        log.debug(
            "Event(%s): type %s reason %s: %s", occurrence.about(), type, reason, occurrence.note
        )
        key = occurrence.key()
        if not self._repeat(key, now):
            self._record(key, occurrence, now)

    def _repeat(self, key: _Key, now: datetime) -> bool:
        """Count another occurrence of the series ``key`` when it is within the series
        window (client-go's EventSeries); False: a new series."""
        series = self._cache.get(key)
        if series is None or (now - series.last).total_seconds() > self.series_window:
            return False
        series.count += 1
        series.last = max(series.last, now)
        self._cache.move_to_end(key)
        self._mark(series)
        return True

    def _record(self, key: _Key, occurrence: _Occurrence, now: datetime) -> None:
        """Start the series ``key`` (dropped with an ERROR line when too many wait)."""
        if len(self._pending) >= MAX_PENDING:
            log.error(
                "dropped event %s on %s: %d events are waiting to be written",
                occurrence.reason,
                occurrence.about(),
                len(self._pending),
            )
            return
        series = self._new_series(occurrence, now)
        self._cache[key] = series
        self._cache.move_to_end(key)
        self._mark(series)
        self._prune(now)

    def _new_series(self, occurrence: _Occurrence, now: datetime) -> _Series:
        regarding, related = occurrence.regarding, occurrence.related
        type, reason, action, note = (
            occurrence.type,
            occurrence.reason,
            occurrence.action,
            occurrence.note,
        )
        namespace = regarding.get("namespace") or "default"
        name = self._event_name(regarding["name"], now)
        meta = {"name": name, "namespace": namespace}
        template: JSONDict
        if self.api_group == EVENTS_GROUP:
            template = {
                "apiVersion": f"{EVENTS_GROUP}/v1",
                "kind": "Event",
                "metadata": meta,
                "reportingController": self.reporting_controller,
                "reportingInstance": self.reporting_instance,
                "action": action,
                "reason": reason,
                "note": note,
                "type": type,
                "regarding": regarding,
            }
        else:
            template = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": meta,
                "involvedObject": regarding,
                "reason": reason,
                "message": note,
                "type": type,
                "source": {"component": self.reporting_controller},
                "reportingComponent": self.reporting_controller,
                "reportingInstance": self.reporting_instance,
                "action": action,
            }
        if related is not None:
            template["related"] = related
        return _Series(name, namespace, template, first=now, last=now)

    def _event_name(self, object_name: str, now: datetime) -> str:
        """``<object name>.<hex unix nanoseconds>``, the nanoseconds unique per recorder."""
        nanos = (now - _EPOCH) // timedelta(microseconds=1) * 1000
        nanos = max(nanos, self._last_nanos + 1)
        self._last_nanos = nanos
        suffix = f".{nanos:x}"
        if len(object_name) + len(suffix) > _MAX_NAME:
            object_name = object_name[: _MAX_NAME - len(suffix)].rstrip(".-")
        return object_name + suffix

    def _now(self) -> datetime:
        now = self._clock()
        return now.replace(tzinfo=UTC) if now.tzinfo is None else now

    def _prune(self, now: datetime) -> None:
        """Forget series that ended (no repeat within the window) or overflow the cache.

        The cache is ordered by last occurrence, so this stops at the first live series.
        """
        doomed: list[_Key] = []
        for key, series in self._cache.items():
            over = len(self._cache) - len(doomed) > CACHE_SIZE
            if not over and (now - series.last).total_seconds() <= self.series_window:
                break
            if series not in self._pending:
                doomed.append(key)
        for key in doomed:
            del self._cache[key]

    def _mark(self, series: _Series) -> None:
        self._pending[series] = None
        self._drained.clear()
        self._wake.set()

    def _settle(self, series: _Series) -> None:
        """Take ``series`` off the pending set (written, or given up)."""
        series.attempts, series.retry_at = 0, 0.0
        self._pending.pop(series, None)
        if not self._pending:
            self._drained.set()

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the background writer (idempotent)."""
        self._explicit = True
        self._ensure_writer()

    async def stop(self) -> None:
        """Write what is queued (as :meth:`flush`), then stop the background writer.

        Events recorded afterwards stay queued until ``start`` or ``flush``.
        """
        self._explicit = False
        try:
            await self.flush()
        finally:
            await self._halt()

    async def flush(self) -> None:
        """Wait until every recorded occurrence is written or given up.

        Skips the per-series heartbeat delay, not retry delays (a failing write is tried at
        most :data:`MAX_ATTEMPTS` times, so this ends). Starts a writer for the duration if
        none runs. Occurrences recorded while waiting are waited for too.
        """
        self._ensure_writer()
        self._flushing += 1
        self._wake.set()
        try:
            await self._drained.wait()
        finally:
            self._flushing -= 1
            if not self._explicit and not self._flushing:
                await self._halt()

    async def __aenter__(self) -> EventRecorder:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def _ensure_writer(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"event-recorder:{self.reporting_controller}"
            )

    async def _halt(self) -> None:
        tasks = [t for t in (self._task, *self._writers) if t is not None and not t.done()]
        self._task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for series in self._pending:
            series.inflight = False

    # --- writing ---------------------------------------------------------------------------

    async def _run(self) -> None:
        """Start a write for every pending series that is due; sleep until the next is."""
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            now = loop.time()
            wait: float | None = None
            for series in list(self._pending):
                if series.inflight:
                    continue
                due = self._due(series)
                if due > now + _SLACK:
                    wait = due - now if wait is None else min(wait, due - now)
                    continue
                if len(self._writers) >= MAX_CONCURRENT_WRITES:
                    break  # a finishing writer wakes this loop
                series.inflight = True
                task = loop.create_task(self._write(series))
                self._writers.add(task)
                task.add_done_callback(self._writer_done)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()

    def _due(self, series: _Series) -> float:
        """Loop time at which ``series`` may be written next."""
        due = series.retry_at
        if series.created and not self._flushing:
            due = max(due, series.last_write + self.series_interval)
        return due

    def _writer_done(self, task: asyncio.Task[None]) -> None:
        self._writers.discard(task)
        self._wake.set()

    async def _write(self, series: _Series) -> None:
        try:
            await self._write_once(series)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug here must not leave the series spinning in the writer
            log.exception("event %s: unexpected error; dropping it", series.describe())
            self._settle(series)
        finally:
            series.inflight = False

    async def _write_once(self, series: _Series) -> None:
        loop = asyncio.get_running_loop()
        count, last = series.count, series.last
        retry_after: float | None = None
        try:
            outcome, detail, retry_after = await self._send(series, count, last)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # transport errors, timeouts: retry
            outcome, detail = _RETRY, f"{err.__class__.__name__}: {err}"
        if outcome == _OK:
            series.created = True
            series.written = max(series.written, count)
            series.last_write = loop.time()
            series.attempts, series.retry_at = 0, 0.0
            if series.count <= series.written:
                self._settle(series)
            return
        what = f"event {series.describe()} ({series.template['reason']}, count {count})"
        if outcome == _REJECTED:
            log.error("could not write %s: %s (will not retry)", what, detail)
            self._settle(series)
            return
        series.attempts += 1
        if series.attempts >= MAX_ATTEMPTS:
            log.error(
                "could not write %s: %s (gave up after %d tries)", what, detail, series.attempts
            )
            self._settle(series)
            return
        delay = min(RETRY_DELAY * 2 ** (series.attempts - 1), MAX_RETRY_DELAY)
        delay *= random.uniform(0.75, 1.25)
        if retry_after is not None:
            delay = max(delay, retry_after)
        series.retry_at = loop.time() + delay
        log.warning(
            "could not write %s: %s (try %d of %d, retrying in %.2f s)",
            what,
            detail,
            series.attempts,
            MAX_ATTEMPTS,
            delay,
        )

    async def _send(
        self, series: _Series, count: int, last: datetime
    ) -> tuple[str, str, float | None]:
        """Create or patch the Event; returns (outcome, detail, retry-after seconds)."""
        if series.created:
            content_type, patch = self._patch(series, count, last)
            status, text, retry_after = await self._request("PATCH", series, patch, content_type)
            if status != 404:
                return _classify(status, text, retry_after, creating=False)
            log.debug("event %s is gone (expired?); creating it again", series.describe())
        status, text, retry_after = await self._request(
            "POST", series, self._render(series, count, last), JSON
        )
        return _classify(status, text, retry_after, creating=True)

    def _render(self, series: _Series, count: int, last: datetime) -> JSONDict:
        """The whole Event as created, accounting for ``count`` occurrences."""
        body = dict(series.template)
        if self.api_group == EVENTS_GROUP:
            body["eventTime"] = format_micro_time(series.first)
            if count > 1:
                body["series"] = {"count": count, "lastObservedTime": format_micro_time(last)}
        else:
            body["firstTimestamp"] = format_time(series.first)
            body["lastTimestamp"] = format_time(last)
            body["count"] = count
        return body

    def _patch(self, series: _Series, count: int, last: datetime) -> tuple[str, JSONDict]:
        """The PATCH that brings a stored Event up to ``count`` occurrences."""
        if self.api_group == EVENTS_GROUP:
            return MERGE_PATCH, {
                "series": {"count": count, "lastObservedTime": format_micro_time(last)}
            }
        return STRATEGIC_MERGE_PATCH, {
            "count": count,
            "lastTimestamp": format_time(last),
            "message": series.template["message"],
        }

    async def _request(
        self, method: str, series: _Series, body: JSONDict, content_type: str
    ) -> tuple[int, str, float | None]:
        """Send one Event write; every status is returned (the recorder classifies them
        itself), transport failures raise APIError."""
        if self.api_group == EVENTS_GROUP:
            version, base = f"{EVENTS_GROUP}/v1", "/apis"
        else:
            version, base = "v1", "/api"
        async with asyncio.timeout(REQUEST_TIMEOUT):
            reply = await send(
                self.api,
                method,
                version=version,
                base=base,
                namespace=series.namespace,
                url="events" if method == "POST" else f"events/{series.name}",
                body=body,
                content_type=content_type,
                accept=_EVERY_STATUS,
                retry=False,
            )
        return reply.status, reply.text, retry_after_seconds(reply.headers)


_EVERY_STATUS = range(100, 600)


# --- helpers -------------------------------------------------------------------------------


def _classify(
    status: int, text: str, retry_after: float | None, *, creating: bool
) -> tuple[str, str, float | None]:
    if status in (200, 201):
        return _OK, "", None
    message = _status_message(status, text)
    if creating and status == 409:
        # AlreadyExists: names carry nanoseconds, so this is our own earlier POST whose
        # answer was lost. client-go drops the event here; the Event is there, so go on.
        log.debug("event already exists: %s", message)
        return _OK, "", None
    if status == 429 or status >= 500 or status == 409:
        return _RETRY, message, retry_after
    return _REJECTED, message, None


def _status_message(status: int, text: str) -> str:
    try:
        decoded = orjson.loads(text)
    except orjson.JSONDecodeError:
        return f"{status} {text.strip()[:200]}"
    if isinstance(decoded, dict) and decoded.get("message"):
        return f"{status} {decoded['message']}"
    return f"{status} {text.strip()[:200]}"


def _reference(obj: Any, what: str) -> dict[str, str]:
    """An ObjectReference (apiVersion, kind, namespace, name, uid, resourceVersion)."""
    if isinstance(obj, Mapping):
        raw: Mapping[str, Any] = obj
    elif is_model(obj):
        raw = obj.to_raw()
    else:
        candidate = getattr(obj, "raw", None)
        if not isinstance(candidate, Mapping):
            raise TypeError(
                f"{what}: expected a kr8s object, a dict or a typed model, "
                f"got {obj.__class__.__name__}"
            )
        raw = candidate
    meta = raw.get("metadata")
    if isinstance(meta, Mapping):
        namespace = meta.get("namespace")
        if not namespace and not isinstance(obj, Mapping) and getattr(obj, "namespaced", False):
            with contextlib.suppress(Exception):
                namespace = obj.namespace  # kr8s falls back to the Api's namespace
        values: dict[str, Any] = {
            "apiVersion": raw.get("apiVersion") or getattr(obj, "version", None),
            "kind": raw.get("kind") or getattr(obj, "kind", None),
            "namespace": namespace,
            "name": meta.get("name"),
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        }
    else:
        values = {field: raw.get(field) for field in _REF_FIELDS}
    ref = {k: str(v) for k, v in values.items() if v}
    if "kind" not in ref or "name" not in ref:
        raise ValueError(f"{what}: an event needs the object's kind and name, got {ref}")
    return ref


def _truncate(message: str) -> str:
    """``message`` cut to :data:`NOTE_LIMIT` UTF-8 bytes, marked with " ..." when cut."""
    data = message.encode()
    if len(data) <= NOTE_LIMIT:
        return message
    head = data[: NOTE_LIMIT - len(_TRUNCATED)].decode(errors="ignore")
    return head + _TRUNCATED


def _check_qualified_name(value: str) -> None:
    """Kubernetes qualified name (``[prefix/]name``), as events validation requires."""
    if not isinstance(value, str) or qualified_name_errors(value):
        raise ValueError(
            f"reporting_controller {value!r}: must be a qualified name such as "
            "'example.com/my-controller' (name part: alphanumerics, '-', '_', '.', at most 63)"
        )


def _system_clock() -> datetime:
    return datetime.now(UTC)
