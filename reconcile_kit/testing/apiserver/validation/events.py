"""Validation of core/v1 and events.k8s.io/v1 Events (kubernetes pkg/apis/core/validation
events.go: ValidateEventCreate and ValidateEventUpdate, whose rules depend on the API
version of the request). Both versions are checked in core's terms: an events.k8s.io
Event is converted to core/v1 first (:mod:`..eventversions`), whose fields are named as the
internal type's (``involvedObject``, ``message``...)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ....meta.validation import dns1123_subdomain_errors, qualified_name_errors
from ..eventversions import to_core
from ..gofmt import go_quote
from ..store import Obj
from .common import Causes, Validator, Write, invalid, invalids, required
from .gorender import go_value as go_struct

_LIMITS = {"reportingInstance": 128, "action": 128, "reason": 128, "message": 1024}


def _legacy(event: Obj, controller_field: str) -> Causes:
    """legacyValidateEvent: an Event without eventTime is checked for its namespace only;
    one with it also needs the reporting controller and instance, action and reason."""
    ns = event["metadata"].get("namespace", "")
    involved_ns = (event.get("involvedObject") or {}).get("namespace") or ""
    causes: Causes = []
    mismatch = invalid("involvedObject.namespace", involved_ns, "does not match event.namespace")
    if not event.get("eventTime"):
        if (not involved_ns and ns not in ("", "default")) or (involved_ns and ns != involved_ns):
            causes.append(mismatch)
    else:
        if not involved_ns and ns not in ("default", "kube-system"):
            causes.append(mismatch)
        controller = str(event.get("reportingComponent") or "")
        if not controller:
            causes.append(required(controller_field))
        causes += invalids(controller_field, controller, qualified_name_errors(controller))
        causes += _present_and_short(event)
    causes += invalids("namespace", ns, dns1123_subdomain_errors(ns))
    return causes


def _present_and_short(event: Obj) -> Causes:
    causes: Causes = []
    for field in ("reportingInstance", "action", "reason", "message"):
        value = str(event.get(field) or "")
        if not value and field != "message":
            causes.append(required(field))
        if len(value.encode()) > _LIMITS[field]:
            causes.append(invalid(field, "", f"can have at most {_LIMITS[field]} characters"))
    return causes


def _series(event: Obj) -> Causes:
    """validateV1EventSeries."""
    series = event.get("series")
    if series is None:
        return []
    causes: Causes = []
    if (series.get("count") or 0) < 2:
        causes.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        causes.append(required("series.lastObservedTime"))
    return causes


def _strict(event: Obj) -> Causes:
    """The events.k8s.io/v1 rules of ValidateEventCreate."""
    causes = _series(event)
    if not event.get("eventTime"):
        causes.append(required("eventTime"))
    kind = event.get("type") or ""
    if kind not in ("Normal", "Warning"):
        causes.append(invalid("type", "", f"has invalid value: {kind}"))
    for field in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(field):
            causes.append(invalid(field, "", "needs to be unset"))
    source = event.get("source") or {}
    if source.get("component") or source.get("host"):
        causes.append(invalid("source", "", "needs to be unset"))
    return causes


def _time_text(value: Any) -> str:
    """A metav1.Time or MicroTime as field.Error prints it (a fmt.Stringer: time.Time's
    String(), in kube-apiserver's UTC; the zero time when unset)."""
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        when = None
    if when is None:
        return "0001-01-01 00:00:00 +0000 UTC"
    fraction = f".{when.microsecond:06d}".rstrip("0") if when.microsecond else ""
    return f"{when:%Y-%m-%d %H:%M:%S}{fraction} +0000 UTC"


def _reference(value: Any) -> str:
    return go_struct(value if isinstance(value, dict) else {}, "core.ObjectReference")


def _related(value: Any) -> str:
    """A *ObjectReference: field.Error prints the struct it points to, or "null"."""
    return '"null"' if value is None else _reference(value)


def _quoted(value: Any) -> str:
    return go_quote(value if isinstance(value, str) else "")


_IMMUTABLE: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("involvedObject", "involvedObject", _reference),
    ("reason", "reason", _quoted),
    ("message", "message", _quoted),
    ("source", "source", lambda v: go_struct(v or {}, "core.EventSource")),
    ("firstTimestamp", "firstTimestamp", _time_text),
    ("lastTimestamp", "lastTimestamp", _time_text),
    ("count", "count", lambda v: str(v or 0)),
    ("reason", "reason", _quoted),
    ("type", "type", _quoted),
    ("eventTime", "eventTime", _time_text),  # compared to the microsecond: its precision
    ("action", "action", _quoted),
    ("related", "related", _related),
    ("reportingComponent", "reportingController", _quoted),
    ("reportingInstance", "reportingInstance", _quoted),
)
"""ValidateEventUpdate's immutable fields in its order (reason twice): the internal
field, its path in the error, and its value as the error prints it (two values that print
alike are Semantic.DeepEqual)."""


def _immutable(new: Obj, old: Obj) -> Causes:
    """ValidateEventUpdate's rules after the legacy ones: the series when it changed, then
    the immutable fields."""
    causes: Causes = []
    if new.get("series") != old.get("series"):
        causes += _series(new)
    for field, path, shown in _IMMUTABLE:
        value = shown(new.get(field))
        if value != shown(old.get(field)):
            causes.append(invalid(path, value, "field is immutable", rendered=True))
    return causes


def _core_event(write: Write) -> Causes:
    return _legacy(write.obj, "reportingComponent")


def _events_v1(write: Write) -> Causes:
    event = to_core(write.obj)
    causes = _legacy(event, "reportingController")
    if write.old is None:
        return causes + _strict(event)
    return causes + _immutable(event, to_core(write.old))


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("", "events"): _core_event,
    ("events.k8s.io", "events"): _events_v1,
}
