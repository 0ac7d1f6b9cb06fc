"""Validation of Pods and pod templates (kubernetes pkg/apis/core/validation)."""

from __future__ import annotations

from ..store import Obj
from .common import Causes, Validator, on_object, required


def _pod(obj: Obj) -> Causes:
    """Every container names itself (pkg/apis/core/validation validateContainers; the rest
    of a pod's validation is not checked)."""
    spec = obj.get("spec") or {}
    return [
        required(f"spec.{kind}[{index}].name")
        for kind in ("initContainers", "containers")
        for index, container in enumerate(spec.get(kind) or [])
        if isinstance(container, dict) and not container.get("name")
    ]


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("", "pods"): on_object(_pod),
}
