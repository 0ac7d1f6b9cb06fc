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

from ..meta.objects import metadata_of
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


def _changed(event: ReflectorEvent, field: str) -> bool:
    """Whether ``event`` passes a predicate on ``metadata.<field>``: anything but an update
    (with its old state) passes; an update passes when the field changed."""
    if event.type != MODIFIED or event.old is None:
        return True
    old, new = event.old.get("metadata") or {}, event.obj.get("metadata") or {}
    return bool(old.get(field) != new.get(field))


def generation_changed(event: ReflectorEvent) -> bool:
    """Updates pass only when ``metadata.generation`` changed (spec changes, not status);
    creates and deletes pass. As controller-runtime's ``GenerationChangedPredicate``."""
    return _changed(event, "generation")


def labels_changed(event: ReflectorEvent) -> bool:
    """Updates pass only when ``metadata.labels`` changed; creates and deletes pass. As
    controller-runtime's ``LabelChangedPredicate``."""
    return _changed(event, "labels")


def annotations_changed(event: ReflectorEvent) -> bool:
    """Updates pass only when ``metadata.annotations`` changed; creates and deletes pass.
    As controller-runtime's ``AnnotationChangedPredicate``."""
    return _changed(event, "annotations")


def resource_version_changed(event: ReflectorEvent) -> bool:
    """Updates pass only when ``metadata.resourceVersion`` changed (drops a relist's echoes
    of unchanged objects); creates and deletes pass. As controller-runtime's
    ``ResourceVersionChangedPredicate``."""
    return _changed(event, "resourceVersion")


def label_selector(selector: str) -> Predicate:
    """Events of objects whose labels match ``selector`` (Kubernetes syntax).

    Raises:
        SelectorError: ``selector`` does not parse (a ValueError).
    """
    parsed = LabelSelector.parse(selector)
    return lambda event: parsed.matches(metadata_of(event.obj).get("labels") or {})


def field_selector(selector: str) -> Predicate:
    """Events of objects whose fields match ``selector`` (``metadata.name=x,status.phase!=y``)."""
    parsed = FieldSelector.parse(selector)
    return lambda event: parsed.matches(event.obj)


def any_of(*predicates: Predicate) -> Predicate:
    """Passes when at least one of ``predicates`` passes."""
    return lambda event: any(p(event) for p in predicates)
