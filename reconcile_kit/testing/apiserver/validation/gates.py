"""A pod's readiness and scheduling gates (kubernetes pkg/apis/core/validation
validateReadinessGates, validateSchedulingGates): qualified names, scheduling gates
unique."""

from __future__ import annotations

from typing import Any

from ....meta.validation import qualified_name_errors
from .common import Causes, as_dict, as_list, duplicate, invalid


def _qualified(value: str, field: str) -> Causes:
    return [invalid(field, value, message) for message in qualified_name_errors(value)]


def readiness_gates_causes(gates: Any, field: str) -> Causes:
    causes: Causes = []
    for i, gate in enumerate(as_list(gates)):
        condition = str(as_dict(gate).get("conditionType") or "")
        causes += _qualified(condition, f"{field}[{i}].conditionType")
    return causes


def scheduling_gates_causes(gates: Any, field: str) -> Causes:
    causes: Causes = []
    seen: set[str] = set()
    for i, gate in enumerate(as_list(gates)):
        name = str(as_dict(gate).get("name") or "")
        causes += _qualified(name, f"{field}[{i}]")
        if name in seen:
            causes.append(duplicate(f"{field}[{i}]", name))
        seen.add(name)
    return causes
