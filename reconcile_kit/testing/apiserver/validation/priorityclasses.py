"""Validation of scheduling.k8s.io PriorityClasses (kubernetes
pkg/apis/scheduling/validation ValidatePriorityClass/Update)."""

from __future__ import annotations

from ..gofmt import go_quote
from ..store import Obj
from .common import Causes, Validator, Write, forbidden, immutable, not_supported, required

_SYSTEM_PREFIX = "system-"
_HIGHEST_USER_PRIORITY = 1000000000
_SYSTEM_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


def _system_class_error(name: str, value: object, global_default: bool) -> str:
    """scheduling/v1 IsKnownSystemPriorityClass's error ("" for a known class)."""
    if name not in _SYSTEM_CLASSES:
        return f"{name} is not a known system priority class"
    if value != _SYSTEM_CLASSES[name]:
        return f"value of {name} PriorityClass must be {_SYSTEM_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def _priority_class(obj: Obj) -> Causes:
    name = str((obj.get("metadata") or {}).get("name") or "")
    value = obj.get("value") or 0
    causes: Causes = []
    if name.startswith(_SYSTEM_PREFIX):
        error = _system_class_error(name, value, bool(obj.get("globalDefault")))
        if error:
            why = "priority class names with 'system-' prefix are reserved for system use only."
            causes.append(forbidden("metadata.name", f"{why} error: {error}"))
    elif isinstance(value, int) and value > _HIGHEST_USER_PRIORITY:
        why = f"maximum allowed value of a user defined priority is {_HIGHEST_USER_PRIORITY}"
        causes.append(forbidden("value", why))
    policy = obj.get("preemptionPolicy")
    if policy == "":
        causes.append(required("preemptionPolicy"))
    elif policy is not None and policy not in _PREEMPTION_POLICIES:
        causes.append(not_supported("preemptionPolicy", policy, _PREEMPTION_POLICIES))
    return causes


def _priority_class_update(new: Obj, old: Obj) -> Causes:
    """ValidatePriorityClassUpdate: value and preemptionPolicy are immutable."""
    causes: Causes = []
    if (new.get("value") or 0) != (old.get("value") or 0):
        causes.append(forbidden("value", "may not be changed in an update."))
    policy = new.get("preemptionPolicy")
    shown = go_quote(str(policy)) if policy is not None else "null"
    return causes + immutable("preemptionPolicy", policy, old.get("preemptionPolicy"), shown)


def _priority_class_write(write: Write) -> Causes:
    """A create is validated; an update only for its immutable fields (the strategy)."""
    if write.old is None:
        return _priority_class(write.obj)
    return _priority_class_update(write.obj, write.old)


VALIDATORS: dict[tuple[str, str], Validator] = {
    ("scheduling.k8s.io", "priorityclasses"): _priority_class_write,
}
