"""Mutation tracking of typed objects: knowing, without serializing it, that a model read
from the cache is still exactly what was read.

A controller validates the cached object into its model once per cached state and hands
that same model to every reconcile of the state for as long as no reconcile changed it
(``reuse.ModelCache``): validating a 5.5 KB object costs about 100 us, checking a flag
costs nothing. :func:`track` walks a freshly validated model once, turning its lists and
dicts (fields, ``model_extra`` and anything nested in them) into tracked ``list`` and
``dict`` subclasses, whose mutating methods mark the model's :class:`Tracker` dirty, and
registers each model of the tree, so that ``KubeModel.__setattr__``/``__delattr__`` mark
it when a field is assigned or deleted (an equal scalar assigned to a field already set
changes nothing and passes unmarked). A model that
holds a mutable value no tracker can watch (a set, a bytearray, a plain pydantic
``BaseModel``) is not tracked at all (:func:`track` returns None): such models are
validated anew for every reconcile, as without tracking.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import operator
import types
import uuid
import weakref
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

__all__ = [
    "TrackedModel",
    "Tracker",
    "assigning",
    "mark",
    "track",
    "track_extra",
    "tracker_of",
    "untrack",
]

_IMMUTABLE = (
    str,
    int,
    float,
    bool,
    type(None),
    bytes,
    datetime.datetime,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    decimal.Decimal,
    enum.Enum,
    uuid.UUID,
)

_SCALARS = frozenset(_IMMUTABLE)


_TRACKERS: dict[int, Tracker] = {}
"""Tracked models by ``id``: pydantic models have no spare slot, replacing their
``__dict__`` costs more, and a private attribute would take part in their ``==``."""


class Tracker:
    """Whether a tracked model changed since :func:`track`, and what its JSON was then."""

    __slots__ = ("dirty", "members", "pristine", "root")

    def __init__(self, root: BaseModel) -> None:
        self.dirty = False
        self.members: list[int] = []
        self.pristine: bytes | None = None
        self.root = weakref.ref(root)


class _Untrackable(Exception):
    """A value no tracker can watch."""


def _marking(base: type, name: str) -> Callable[..., Any]:
    """``base.name`` that first marks the container's tracker dirty."""
    inner = getattr(base, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        self._tracker.dirty = True
        return inner(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


class _TrackedList(list[Any]):
    """A list that marks its tracker dirty when changed in place."""

    __slots__ = ("_tracker",)
    _tracker: Tracker


class _TrackedDict(dict[Any, Any]):
    """A dict that marks its tracker dirty when changed in place."""

    __slots__ = ("_tracker",)
    _tracker: Tracker

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self._tracker.dirty = True
        return super().setdefault(key, default)


# Every method that changes a list or dict in place (setdefault only when it adds a key).
_MUTATORS: dict[type, tuple[str, ...]] = {
    _TrackedList: (
        "__setitem__",
        "__delitem__",
        "__iadd__",
        "__imul__",
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "sort",
        "reverse",
    ),
    _TrackedDict: ("__setitem__", "__delitem__", "__ior__", "pop", "popitem", "clear", "update"),
}
for _cls, _names in _MUTATORS.items():
    for _name in _names:
        setattr(_cls, _name, _marking(_cls.__mro__[1], _name))


def track(model: BaseModel) -> Tracker | None:
    """Start tracking ``model`` (a KubeModel tree just validated, not yet shared): its
    containers become tracked ones, in place. Returns its Tracker, or None when the tree
    holds a value no tracker can watch (what was converted then marks a tracker that
    counts as changed: the model is never taken for unchanged)."""
    tracker = Tracker(model)
    try:
        _Walker(tracker, TrackedModel).model(model)
    except _Untrackable:
        tracker.dirty = True
        return None
    _TRACKERS.update(dict.fromkeys(tracker.members, tracker))
    return tracker


def tracker_of(model: BaseModel) -> Tracker | None:
    """The Tracker of a tracked model (the root of a tree :func:`track` was given), or
    None. (The registry is by ``id``: the root's identity is checked, as an ``id`` may
    be reused by a new object once a dropped tree's model is gone.)"""
    tracker = _TRACKERS.get(id(model))
    if tracker is None or tracker.root() is not model:
        return None
    return tracker


def mark(model: BaseModel) -> None:
    """Mark ``model``'s tracker (if any) dirty: it no longer holds what was read."""
    tracker = _TRACKERS.get(id(model))
    if tracker is not None:
        tracker.dirty = True


def assigning(model: BaseModel, name: str, value: object) -> bool:
    """``model.name = value`` is about to happen: whether it changes nothing (a field
    already set to an equal scalar, as ``status.replicas = spec.replicas`` at steady
    state), so that a tracked model may skip it and stay clean."""
    tracker = _TRACKERS.get(id(model))
    if tracker is None or name not in model.__pydantic_fields_set__:
        return False
    if model.model_config.get("frozen") or model.model_config.get("validate_assignment"):
        return False  # the assignment must raise, or run its validators
    old = model.__dict__.get(name, _Untrackable)
    return type(old) is type(value) and type(value) in _SCALARS and bool(old == value)


def untrack(tracker: Tracker) -> None:
    """Stop tracking the models of ``tracker`` and retire it (it counts as changed)."""
    get = _TRACKERS.get
    for member in tracker.members:
        if get(member) is tracker:
            del _TRACKERS[member]
    tracker.members = []
    tracker.dirty = True


class _Walker:
    """One pass over a model tree, replacing plain lists and dicts by tracked ones. Fields
    declared with scalar types (``str``, ``int | None``, ``Literal[...]``, enums, ...) hold
    validated scalars and are not looked at (:func:`_containers`). Lists of models of one
    class take a short path: most of a custom resource's models are list items."""

    def __init__(self, tracker: Tracker, kube_model: type[BaseModel]) -> None:
        self.tracker = tracker
        self.kube_model = kube_model

    def plan(self, cls: type) -> tuple[str, ...]:
        names = _PLANS.get(cls)
        if names is None:
            if not issubclass(cls, self.kube_model):
                raise _Untrackable  # its assignments are not hooked
            names = _PLANS[cls] = _containers(cls)
        return names

    def model(self, model: BaseModel) -> None:
        names = self.plan(type(model))
        fields = model.__dict__
        for name in names:
            value = fields.get(name)
            if type(value) not in _SCALARS:
                fields[name] = self.value(value)
        self.own(model)

    def own(self, model: BaseModel) -> None:
        self.tracker.members.append(id(model))
        extra = model.__pydantic_extra__
        if extra:  # an empty one is tracked when first reached (KubeModel.model_extra)
            object.__setattr__(model, "__pydantic_extra__", self.dict(extra))

    def value(self, value: Any) -> Any:
        kind = type(value)
        if kind is list:
            return self.list(value)
        if kind is dict:
            return self.dict(value)
        if isinstance(value, BaseModel):
            self.model(value)
            return value
        if kind is tuple or kind is frozenset:
            for item in value:
                if isinstance(item, BaseModel):
                    self.model(item)
                elif not isinstance(item, _IMMUTABLE):
                    raise _Untrackable  # a container inside an immutable one
            return value
        if isinstance(value, _IMMUTABLE):
            return value
        raise _Untrackable

    def list(self, items: list[Any]) -> _TrackedList:
        tracked = _TrackedList(items)
        tracked._tracker = self.tracker
        kinds = set(map(type, items))
        if len(kinds) == 1:
            (cls,) = kinds
            if cls in _SCALARS:
                return tracked
            if _PLANS.get(cls) == () and not any(map(_EXTRA, items)):
                self.tracker.members.extend(map(id, items))  # leaf models: nothing inside
                return tracked
        for index, item in enumerate(items):
            if type(item) not in _SCALARS:
                list.__setitem__(tracked, index, self.value(item))
        return tracked

    def dict(self, items: dict[Any, Any]) -> _TrackedDict:
        tracked = _TrackedDict(items)
        tracked._tracker = self.tracker
        for key, item in items.items():
            if type(item) not in _SCALARS:
                dict.__setitem__(tracked, key, self.value(item))
        return tracked


def track_extra(model: BaseModel) -> None:
    """Track the (empty, untracked) ``model_extra`` of a tracked model, as it is handed
    out."""
    tracker = _TRACKERS.get(id(model))
    extra = model.__pydantic_extra__
    if tracker is not None and type(extra) is dict:
        tracked = _TrackedDict(extra)
        tracked._tracker = tracker
        object.__setattr__(model, "__pydantic_extra__", tracked)


class TrackedModel(BaseModel):
    """The pydantic base whose models :func:`track` can watch: assigning or deleting a
    field marks the model's tracker (:func:`mark`; an equal scalar assigned to a field
    already set changes nothing), and ``model_extra`` is tracked as it is handed out.
    ``KubeModel`` (:mod:`.resource`) derives from it; a model of any other class in a tree
    makes the tree untrackable."""

    def __setattr__(self, name: str, value: Any) -> None:
        if assigning(self, name, value):
            return  # an equal scalar: nothing changes, a tracked model stays clean
        if name[0] != "_":  # private attributes are not the object's data
            mark(self)  # (validate_assignment replaces __dict__ rather than writing to it)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name[0] != "_":
            mark(self)
        super().__delattr__(name)

    @property
    def model_extra(self) -> dict[str, Any] | None:
        """The fields the model does not declare (pydantic's ``model_extra``)."""
        track_extra(self)
        return self.__pydantic_extra__


_EXTRA = operator.attrgetter("__pydantic_extra__")

_PLANS: dict[type, tuple[str, ...]] = {}
"""The fields of each model class that may hold a container or a model."""


def _containers(cls: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, field in cls.model_fields.items() if not _scalar(field.annotation))


def _scalar(annotation: Any) -> bool:
    """Whether a field of this annotation only ever holds an immutable value."""
    if annotation in _SCALARS:
        return True
    if isinstance(annotation, type):
        return issubclass(annotation, _IMMUTABLE)
    origin = get_origin(annotation)
    if origin is Literal:
        return True
    if origin is Annotated:
        return _scalar(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return all(_scalar(arg) for arg in get_args(annotation))
    return False
