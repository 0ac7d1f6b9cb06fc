"""Validation of core/v1 and events.k8s.io/v1 Events (kubernetes pkg/apis/core/validation
events.go: ValidateEventCreate and ValidateEventUpdate, whose rules depend on the API
version of the request). Both versions are checked in core's terms: an events.k8s.io
Event is converted to core/v1 first (:mod:`..eventversions`), whose fields are named as the
internal type's (``involvedObject``, ``message``...)."""

from __future__ import annotations

from typing import Any

from ....meta.validation import dns1123_subdomain_errors, qualified_name_errors
from ..eventversions import to_core
from ..store import Obj
from .common import Causes, Validator, Write, invalid, invalids, required

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


_IMMUTABLE = ("reason", "message", "count", "reason", "type", "action")
_IMMUTABLE_NAMES = ("reportingComponent", "reportingInstance")


def _immutable(new: Obj, old: Obj) -> Causes:
    """ValidateEventUpdate's immutable fields of simple values (the object references,
    source and timestamps are compared but reported as Go structs: left out)."""
    causes: Causes = []
    if new.get("series") != old.get("series"):
        causes += _series(new)
    for field in (*_IMMUTABLE, *_IMMUTABLE_NAMES):
        value: Any = new.get(field)
        if value != old.get(field):
            default: Any = 0 if field == "count" else ""
            name = "reportingController" if field == "reportingComponent" else field
            causes.append(invalid(name, default if value is None else value, "field is immutable"))
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
