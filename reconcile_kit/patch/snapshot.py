"""Copy-on-access python-box trees: kr8s objects that cost microseconds to build.

kr8s keeps an object's state in a python-box ``Box``, which converts every nested mapping
and list when it is built: about 1.4 ms for a 5.5 KB Deployment, 45 ms for a 200 KB custom
resource. A reconcile needs a fresh object per run, so that conversion dominated the
controller's CPU time.

:class:`LazyBox` is a ``Box`` built over a cached document without copying it: a nested
mapping or list is wrapped (one level, its own children still shared) the first time it
is read, and the wrapper replaces it in its parent. Writes go to the wrappers, never to the
shared document, so the cache stays intact. Values assigned by the user are copied deeply,
as ``Box`` converts them (so later changes to the assigned dict do not leak in), but into
plain dicts and lists wrapped when first read, like the rest of the tree: a condition
appended or a map assigned costs a copy, not a Box conversion.

The invariant the rest of the toolkit relies on: a plain ``dict`` or ``list`` held inside a
LazyBox tree is shared, never mutated. :func:`freeze` uses it to snapshot a tree in time
proportional to the part that was read, and equality of a snapshot with the tree stops at
shared subtrees (CPython compares identical objects as equal without looking inside).
"""

from __future__ import annotations

from collections.abc import ItemsView, Mapping, ValuesView
from operator import is_
from typing import Any, TypeVar, cast, overload

from box import Box, BoxList
from kr8s.asyncio import Api
from kr8s.asyncio.objects import APIObject

from ..client.kr8s_internals import APIOBJECT_INIT, assemble_object
from ..client.kr8s_internals import set_raw as _set_raw

__all__ = [
    "LazyBox",
    "LazyBoxList",
    "build_object",
    "freeze",
    "held_document",
    "set_raw",
    "wrap",
]

Built = TypeVar("Built", bound=APIObject)


def wrap(value: object) -> object:
    """``value`` as a lazily converted Box/BoxList when it is a plain dict/list, else as is."""
    kind = type(value)
    if kind is dict:
        return LazyBox.over(value)  # type: ignore[arg-type]  # a dict (no cast call per value)
    if kind is list:
        return LazyBoxList.over(value)  # type: ignore[arg-type]  # a list
    return value


_CONFIGS: dict[type, dict[str, Any]] = {}
_SCALARS = (str, int, float, bool, type(None))
_PLAIN = (*_SCALARS, dict, list)
"""Types a LazyBox stores without Box's conversion: JSON's scalars, and plain containers
(stored as a private deep copy)."""
_MISSING = object()
_SOURCE = "__reconcile_kit_source"  # Box's copies and children leave out "__" keys


def _private(value: Any) -> Any:
    """A deep copy of ``value``'s dicts and lists (any ``dict``/``list`` subclass, a Box
    included, becomes a plain one); other values as they are, as Box keeps them."""
    if isinstance(value, dict):
        return {
            key: item if type(item) in _SCALARS else _private(item)
            for key, item in dict.items(value)
        }
    if isinstance(value, list):
        return [item if type(item) in _SCALARS else _private(item) for item in list.__iter__(value)]
    return value


class LazyBox(Box):
    """A ``Box`` whose nested plain dicts and lists are wrapped when first read.

    Build one with :meth:`over`; ``LazyBox(mapping)`` converts eagerly, as ``Box`` does.
    """

    __reconcile_kit_shares_plain_values__ = True  # see meta.objects.SHARES_PLAIN_VALUES

    @classmethod
    def over(cls, document: Mapping[str, Any]) -> LazyBox:
        """A LazyBox sharing ``document``'s values (which must not be mutated afterwards)."""
        box = dict.__new__(cls)
        # what Box.__init__ builds for an empty Box of this class, copied (~15x faster)
        template = _CONFIGS.get(cls)
        if template is None:
            template = _CONFIGS[cls] = dict(cls()._box_config)
        config = dict(template)
        config["__safe_keys"] = {}
        object.__setattr__(box, "_box_config", config)
        dict.update(box, document)
        return box

    def __getitem__(self, key: Any, _ignore_default: bool = False) -> Any:
        try:
            value = dict.__getitem__(self, key)
        except (KeyError, TypeError):
            return Box.__getitem__(self, key, _ignore_default)
        kind = type(value)
        if kind is dict or kind is list:
            value = wrap(value)
            dict.__setitem__(self, key, value)
        return value

    def __getattr__(self, item: str) -> Any:
        if not item.startswith("_"):
            try:
                return self.__getitem__(item, True)
            except KeyError:
                self._index_safe_keys()
        return Box.__getattr__(self, item)  # type: ignore[no-untyped-call]

    def __setitem__(self, key: Any, value: Any) -> None:
        """Store ``value``: JSON scalars as they are, a plain dict or list as a private deep
        copy (wrapped when first read); anything else converted as ``Box`` does."""
        if type(value) in _PLAIN:
            dict.__setitem__(self, key, _private(value))
        else:
            Box.__setitem__(self, key, value)  # type: ignore[no-untyped-call]

    def update(self, other: object = (), /, **kwargs: object) -> None:
        """As ``dict.update``, storing as :meth:`__setitem__` does; an equal scalar is
        left in place (kr8s's ``APIObject.raw`` re-sets ``kind`` and ``apiVersion`` on
        every read)."""
        # other: a mapping or (key, value) pairs, as dict() takes them
        pairs = cast("Mapping[str, object]", other)
        if type(other) is not dict or kwargs:
            pairs = dict(pairs, **kwargs)
        for key, value in pairs.items():
            if type(value) in _SCALARS and dict.get(self, key, _MISSING) == value:
                continue
            self[key] = value

    def hold(self, document: dict[str, Any]) -> None:
        """Hold exactly ``document``'s top-level values, shared (so never mutated
        afterwards), and remember it as this box's source (:func:`held_document`)."""
        dict.clear(self)
        dict.update(self, document)
        self._box_config[_SOURCE] = document

    def _index_safe_keys(self) -> None:
        """Record the attribute names of keys like ``my-key`` (Box does this on every store;
        here only when an attribute lookup misses)."""
        safe_keys = self._box_config["__safe_keys"]
        for key in dict.keys(self):
            if isinstance(key, str):
                safe_keys.setdefault(self._safe_attr(key), key)

    def _wrap_all(self) -> None:
        for key in list(dict.keys(self)):
            self.__getitem__(key)

    def items(self, dotted: bool = False) -> ItemsView[Any, Any]:  # type: ignore[override]
        """As ``dict.items``, with nested values wrapped (a shared dict is never handed out);
        ``dotted``: Box's dotted keys."""
        if dotted:
            return cast("ItemsView[Any, Any]", Box.items(self, dotted))
        self._wrap_all()
        view: ItemsView[Any, Any] = dict.items(self)
        return view

    def values(self) -> ValuesView[Any]:  # type: ignore[override]
        """As ``dict.values``, with nested values wrapped."""
        self._wrap_all()
        return dict.values(self)


class LazyBoxList(BoxList):
    """A ``BoxList`` over a shared list: its items are wrapped (one level) when it is built."""

    @classmethod
    def over(cls, items: list[Any]) -> LazyBoxList:
        """A LazyBoxList whose items are ``items``' values, each wrapped with :func:`wrap`."""
        boxes: LazyBoxList = cls.__new__(cls, box_class=LazyBox)
        boxes.box_org_ref = None
        list.extend(boxes, [wrap(item) for item in items])
        return boxes

    def _convert(self, p_object: Any) -> Any:
        """An item to store: a plain dict or list as a private deep copy wrapped lazily,
        anything else as ``BoxList`` converts it (used by append, insert and item
        assignment)."""
        if type(p_object) in (dict, list):
            return wrap(_private(p_object))
        return BoxList._convert(self, p_object)  # type: ignore[attr-defined]


@overload
def freeze(value: Mapping[str, Any]) -> dict[str, Any]: ...


@overload
def freeze(value: object) -> object: ...


def freeze(value: object) -> object:
    """A snapshot of ``value`` as plain dicts and lists, sharing the subtrees a LazyBox
    tree shares with its source (those are never mutated), copying the rest."""
    kind = type(value)
    if kind is dict or kind is list:
        return value
    if isinstance(value, dict):
        return {
            key: item if type(item) in _PLAIN else freeze(item) for key, item in dict.items(value)
        }
    if isinstance(value, list):
        return [freeze(item) for item in list.__iter__(value)]
    return value


def held_document(value: object) -> dict[str, Any] | None:
    """The document a LazyBox was last made to hold (:meth:`LazyBox.hold`: a write's
    answer) when the box still holds its values: each the document's own, or a wrapper a
    read put in its place (compared: equal unless changed through it, and the comparison
    stops at the subtrees it still shares); else None. Tells that an object's state is
    still the server's answer without serializing it."""
    if not isinstance(value, LazyBox):
        return None
    document: dict[str, Any] | None = value._box_config.get(_SOURCE)
    if document is None or len(document) != dict.__len__(value):
        return None
    # the usual case, checked in C: the very keys and values, in order (nothing touched)
    keys, values = dict.keys(value), dict.values(value)
    if all(map(is_, keys, document)) and all(map(is_, values, document.values())):
        return document
    for key, item in document.items():
        mine = dict.get(value, key, _MISSING)
        if mine is not item and (type(mine) not in _WRAPPERS or mine != item):
            return None
    return document


_WRAPPERS = (LazyBox, LazyBoxList)


def build_object(cls: type[Built], document: Mapping[str, Any], api: Api | None) -> Built:
    """A kr8s object of class ``cls`` holding ``document`` in a LazyBox (no copy).

    Equivalent to ``cls(document, api=api)`` (kr8s's ``APIObject.__init__`` only stores
    the raw state and the api) at a few microseconds instead of a full Box conversion. A
    class with its own ``__init__`` is built by calling it, as kr8s would.
    """
    if cls.__init__ is not APIOBJECT_INIT:
        return cls(document, api=api)
    return assemble_object(cls, LazyBox.over(document), api)


def set_raw(obj: APIObject, document: Mapping[str, Any]) -> None:
    """Replace a kr8s object's state with ``document`` (shared, not copied), as
    ``obj.raw = document`` does without converting it."""
    _set_raw(obj, LazyBox.over(document))
