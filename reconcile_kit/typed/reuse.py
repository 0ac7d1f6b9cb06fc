"""The typed objects a controller hands to its reconciles, reused while nothing changed.

A reconcile of an unchanged object (a requeue, a resync, an event of one of its children)
gets the very model the previous reconcile got, when that reconcile left it as read: no
validation, and ``PatchHelper`` sees at once that nothing changed (``tracking``). Tracking
a model costs a walk over it (about half its validation), so a cached state is tracked
from its second reconcile on: a state reconciled once (most events) costs what it did
without reuse. A model the reconcile changed, or whose cached state has moved on
(another ``metadata.resourceVersion``), is validated anew.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from kr8s.asyncio.objects import APIObject

from ..meta.objects import metadata_of
from .resource import CustomResource
from .tracking import Tracker, track, untrack

__all__ = ["DEFAULT_SIZE", "ModelCache"]

DEFAULT_SIZE = 256
"""Models kept per controller by default (the objects most recently reconciled)."""

M = TypeVar("M", bound=CustomResource)


class _Entry:
    """A key's cached state (its resourceVersion) and, from its second reconcile on, the
    tracked model of it."""

    __slots__ = ("model", "tracker", "version")

    def __init__(self, version: str) -> None:
        self.version = version
        self.model: Any = None
        self.tracker: Tracker | None = None

    def drop_model(self) -> None:
        if self.tracker is not None:
            untrack(self.tracker)
        self.model = self.tracker = None


class ModelCache(Generic[M]):
    """Models of ``model_class`` by object key, each valid for one cached state.

    Args:
        model_class: the CustomResource class.
        size: how many keys to remember (least recently reconciled dropped first); 0
            keeps none (every reconcile validates).

    Raises:
        ValueError: ``size`` is negative.
    """

    def __init__(self, model_class: type[M], size: int = DEFAULT_SIZE) -> None:
        if size < 0:
            raise ValueError(f"ModelCache size must be >= 0, got {size}")
        self.model_class = model_class
        self.size = size
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self.validations = 0
        self.reuses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, raw: dict[str, Any], obj: APIObject) -> M:
        """The model of ``raw`` (a cached object: a JSON dict) for ``key``, bound to the
        kr8s object ``obj``. Raises pydantic's ValidationError when ``raw`` does not fit
        the model."""
        version = metadata_of(raw).get("resourceVersion")
        entry = self._entries.get(key)
        if entry is None or version is None or entry.version != version:
            if entry is not None:
                self.forget(key)
            model = self._validate(raw, obj)
            if self.size and version is not None:
                self._remember(key, _Entry(version))
            return model
        self._entries.move_to_end(key)
        if entry.model is not None and entry.tracker is not None and not entry.tracker.dirty:
            entry.model._object = obj
            self.reuses += 1
            return entry.model  # type: ignore[no-any-return]
        entry.drop_model()
        model = self._validate(raw, obj)
        tracker = track(model)
        if tracker is not None:
            entry.model, entry.tracker = model, tracker
        return model

    def release(self, key: Hashable, model: M) -> None:
        """After a reconcile of ``key`` with ``model``: keep it only when the reconcile left
        it as read."""
        entry = self._entries.get(key)
        if entry is None or entry.model is not model:
            return
        if entry.tracker is None or entry.tracker.dirty:
            entry.drop_model()

    def forget(self, key: Hashable) -> None:
        """Drop what is kept for ``key`` (its object was deleted, or changed)."""
        entry = self._entries.pop(key, None)
        if entry is not None:
            entry.drop_model()

    def clear(self) -> None:
        """Drop every model."""
        for entry in self._entries.values():
            entry.drop_model()
        self._entries.clear()

    def _validate(self, raw: dict[str, Any], obj: APIObject) -> M:
        self.validations += 1
        return self.model_class.from_raw(raw, obj)

    def _remember(self, key: Hashable, entry: _Entry) -> None:
        self._entries[key] = entry
        if len(self._entries) > self.size:
            _, oldest = self._entries.popitem(last=False)
            oldest.drop_model()
