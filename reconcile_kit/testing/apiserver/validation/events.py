"""Validation of core/v1 and events.k8s.io/v1 Events (kubernetes pkg/apis/core/validation
ValidateEvent, pkg/apis/events/validation)."""

from __future__ import annotations

from .. import errors
from ..store import Obj
from .common import Causes, Validator, on_object


def _core_event(obj: Obj) -> Causes:
    involved = obj.get("involvedObject") or {}
    ns = obj["metadata"].get("namespace", "")
    involved_ns = involved.get("namespace") or ""
    if involved_ns and involved_ns != ns:
        return [
            errors.cause(
                "FieldValueInvalid",
                "involvedObject.namespace",
                f'Invalid value: "{involved_ns}": does not match event.namespace',
            )
        ]
    return []


def _events_v1(obj: Obj) -> Causes:
    causes = [
        errors.cause("FieldValueRequired", field, "Required value")
        for field in ("eventTime", "reportingController", "reportingInstance", "action", "reason")
        if not obj.get(field)
    ]
    if obj.get("type") not in ("Normal", "Warning"):
        causes.append(
            errors.cause(
                "FieldValueNotSupported",
                "type",
                f'Unsupported value: "{obj.get("type", "")}": supported values:'
                ' "Normal", "Warning"',
            )
        )
    regarding_ns = (obj.get("regarding") or {}).get("namespace") or ""
    if regarding_ns and regarding_ns != obj["metadata"].get("namespace", ""):
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "regarding.namespace",
                f'Invalid value: "{regarding_ns}": does not match event.namespace',
            )
        )
    return causes


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("", "events"): on_object(_core_event),
    ("events.k8s.io", "events"): on_object(_events_v1),
}
