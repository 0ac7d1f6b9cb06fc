"""Event filters for controllers (controller-runtime's predicates).

A predicate gets a :class:`~reconcile_kit.runtime.reflector.ReflectorEvent` and returns whether it
should trigger a reconcile. The ``*_changed`` predicates filter updates only (creations
and deletions always pass), as controller-runtime's. A controller that writes its own
status can use ``generation_changed`` so those writes do not retrigger it: status writes
never bump ``metadata.generation``. Kinds without a generation (ConfigMap, Secret) keep
it unset, so ``generation_changed`` filters out every update of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..meta.selectors import FieldSelector, LabelSelector
from .reflector import MODIFIED, ReflectorEvent

__all__ = [
    "annotations_changed",
    "any_of",
    "field_selector",
    "generation_changed",
    "label_selector",
    "labels_changed",
    "resource_version_changed",
]

Predicate = Callable[[ReflectorEvent], bool]


def _meta(obj: dict[str, Any] | None) -> dict[str, Any]:
    meta: dict[str, Any] = (obj or {}).get("metadata") or {}
    return meta


def _on_update(changed: Callable[[dict[str, Any], dict[str, Any]], bool]) -> Predicate:
    def predicate(event: ReflectorEvent) -> bool:
        if event.type != MODIFIED or event.old is None:
            return True
        return changed(_meta(event.old), _meta(event.obj))

    return predicate


generation_changed: Predicate = _on_update(lambda a, b: a.get("generation") != b.get("generation"))
"""Updates pass only when ``metadata.generation`` changed (spec changes, not status)."""

labels_changed: Predicate = _on_update(lambda a, b: a.get("labels") != b.get("labels"))
"""Updates pass only when ``metadata.labels`` changed."""

annotations_changed: Predicate = _on_update(
    lambda a, b: a.get("annotations") != b.get("annotations")
)
"""Updates pass only when ``metadata.annotations`` changed."""

resource_version_changed: Predicate = _on_update(
    lambda a, b: a.get("resourceVersion") != b.get("resourceVersion")
)
"""Updates pass only when ``metadata.resourceVersion`` changed (drops relist echoes)."""


def label_selector(selector: str) -> Predicate:
    """Events of objects whose labels match ``selector`` (Kubernetes syntax).

    Raises ValueError (SelectorError) for a selector that does not parse.
    """
    parsed = LabelSelector.parse(selector)
    return lambda event: parsed.matches(_meta(event.obj).get("labels") or {})


def field_selector(selector: str) -> Predicate:
    """Events of objects whose fields match ``selector`` (``metadata.name=x,status.phase!=y``)."""
    parsed = FieldSelector.parse(selector)
    return lambda event: parsed.matches(event.obj)


def any_of(*predicates: Predicate) -> Predicate:
    """Passes when at least one of ``predicates`` passes."""
    return lambda event: any(p(event) for p in predicates)
