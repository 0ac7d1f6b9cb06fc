"""Validation of coordination.k8s.io Leases (kubernetes pkg/apis/coordination/validation)."""

from __future__ import annotations

from .. import errors
from ..store import Obj
from .common import Causes, Validator, on_object


def _lease(obj: Obj) -> Causes:
    spec = obj.get("spec") or {}
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and (not isinstance(duration, int) or duration <= 0):
        return [
            errors.cause(
                "FieldValueInvalid",
                "spec.leaseDurationSeconds",
                f"Invalid value: {duration}: must be greater than 0",
            )
        ]
    return []


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("coordination.k8s.io", "leases"): on_object(_lease),
}
