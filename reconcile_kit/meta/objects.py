"""Helpers around kr8s objects, raw dicts and typed models: identity, raw access, ObjectRef.

Every metadata helper takes an object in any of three forms: a kr8s APIObject (its ``raw``
is edited in place), a plain dict (edited in place), or a typed model (a
:class:`~reconcile_kit.typed.CustomResource`: the helper runs on the model's JSON,
``to_raw()``, and a change is written back into the model with ``replace_with``; see
:func:`accepts_models`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, MutableMapping, MutableSequence
from typing import Any, NamedTuple, Protocol, TypeGuard, TypeVar, cast

import orjson

from ..client.errors import describe
from ..client.kr8s_internals import current_raw

__all__ = [
    "MODEL_MARKER",
    "SHARES_PLAIN_VALUES",
    "KubeObject",
    "ObjectRef",
    "TypedObject",
    "accepts_models",
    "describe_object",
    "edit_list",
    "identity",
    "is_model",
    "is_model_class",
    "metadata_of",
    "nested_list",
    "raw_of",
    "resource_version_in",
    "set_or_drop",
    "view_of",
]

MODEL_MARKER = "__reconcile_kit_model__"
"""A class attribute, True on :class:`~reconcile_kit.typed.CustomResource` and its
subclasses: how the layers below ``typed`` recognise a typed model (or its class) without
importing it, and so pydantic, when no typed model was ever defined."""
SHARES_PLAIN_VALUES = "__reconcile_kit_shares_plain_values__"
"""A class attribute, True on :class:`~reconcile_kit.patch.snapshot.LazyBox`: a mapping
that may hold plain dicts and lists it shares and copies when read, so a helper that made a
value itself can store it without a copy (layers below ``patch`` test it without importing
it)."""
F = TypeVar("F", bound=Callable[..., Any])


class KubeObject(Protocol):
    """What reconcile_kit needs of a kr8s APIObject (``raw``, ``kind``, ``version``)."""

    @property
    def raw(self) -> Mapping[str, Any]:
        """The object's JSON (kr8s: a Box, edited in place)."""
        ...


class TypedObject(Protocol):
    """What reconcile_kit needs of a typed model (a ``CustomResource``): its JSON and a way
    to become new JSON."""

    def to_raw(self) -> dict[str, Any]:
        """The model's JSON, as the API server would serve it (a new dict)."""
        ...

    def replace_with(self, raw: dict[str, Any]) -> None:
        """Become ``raw`` (validated), in place."""
        ...


ObjectLike = KubeObject | TypedObject | MutableMapping[str, Any]


def metadata_of(obj: Mapping[str, Any] | None) -> dict[str, Any]:
    """``obj``'s ``metadata`` mapping, or an empty dict when it has none (or ``obj`` is
    None). The mapping itself, not a copy: what reads it shares it."""
    meta: dict[str, Any] = (obj or {}).get("metadata") or {}
    return meta


def is_model(obj: object) -> TypeGuard[TypedObject]:
    """Whether ``obj`` is a typed model (a ``reconcile_kit.typed.CustomResource``), by its
    class's :data:`MODEL_MARKER`."""
    return getattr(type(obj), MODEL_MARKER, False) is True


def is_model_class(kind: object) -> bool:
    """Whether ``kind`` is a concrete typed model class (a CustomResource subclass declaring
    its kind), by :data:`MODEL_MARKER`."""
    return (
        isinstance(kind, type)
        and getattr(kind, MODEL_MARKER, False) is True
        and "resource" in kind.__dict__
    )


def raw_of(obj: ObjectLike) -> MutableMapping[str, Any]:
    """The mutable raw mapping of a kr8s object, or the dict itself.

    Raises:
        TypeError: ``obj`` is a typed model (it has no raw mapping to edit: change its
            fields, or pass it to a helper, which takes typed models too), or a kr8s
            object whose ``raw`` is not a mapping.
    """
    if isinstance(obj, dict):
        return obj
    found: MutableMapping[str, Any] | None = current_raw(obj)
    if found is not None:
        return found
    if isinstance(obj, MutableMapping):
        return obj
    if is_model(obj):
        raise TypeError(
            f"{describe_object(obj)} is a typed model ({type(obj).__name__}): it has no raw "
            "mapping to edit; change its fields, or use view_of() to read its JSON"
        )
    raw = cast(KubeObject, obj).raw
    if not isinstance(raw, MutableMapping):
        raise TypeError(f"{type(obj).__name__}.raw is not a mapping")
    return raw


def view_of(obj: ObjectLike) -> Mapping[str, Any]:
    """The JSON of any object, for reading: a dict itself, a kr8s object's ``raw``, a typed
    model's ``to_raw()`` (a fresh copy: writing to it changes nothing)."""
    if is_model(obj):
        return obj.to_raw()
    return raw_of(obj)


class _ModelTypes(dict[type, bool]):
    """Whether a class is a typed model's, by :data:`MODEL_MARKER`, found once per class."""

    def __missing__(self, cls: type) -> bool:
        found = self[cls] = getattr(cls, MODEL_MARKER, False) is True
        return found


_MODEL_TYPES = _ModelTypes()


def _any_model(values: Iterable[Any]) -> bool:
    """Whether any of ``values`` is a typed model (a loop in C over their classes)."""
    return any(map(_MODEL_TYPES.__getitem__, map(type, values)))


def accepts_models(function: F) -> F:
    """Let ``function``, a helper written for dicts and kr8s objects, take typed models in
    any argument: each model becomes its JSON (``to_raw()``) for the call, and a model whose
    JSON the call changed is written back (``replace_with``). A call that raises changes no
    model. Objects of the other two forms are passed through as they are."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _any_model(args) and not (kwargs and _any_model(kwargs.values())):
            return function(*args, **kwargs)
        converted: list[tuple[TypedObject, dict[str, Any], bytes]] = []

        def convert(value: Any) -> Any:
            if not is_model(value):
                return value
            raw = value.to_raw()
            converted.append((value, raw, orjson.dumps(raw)))
            return raw

        result = function(*[convert(a) for a in args], **{k: convert(v) for k, v in kwargs.items()})
        for model, raw, before in converted:
            if orjson.dumps(raw) != before:
                model.replace_with(raw)
        return result

    return wrapper  # type: ignore[return-value]


_RV_FIELD = b'"resourceVersion":"'


def resource_version_in(data: bytes) -> str | None:
    """The ``metadata.resourceVersion`` in ``data`` (an object's JSON, or a watch event's
    line), read without decoding it when it is the one ``"resourceVersion":"`` string
    field (metadata always has one; a label, an annotation or another field of that name
    makes two); None: cannot tell so (decode instead)."""
    start = data.find(_RV_FIELD) + len(_RV_FIELD)
    end = data.find(b'"', start)
    if start < len(_RV_FIELD) or end < 0 or data.find(_RV_FIELD, end) >= 0:
        return None
    return data[start:end].decode("ascii", "replace")


def _peek(mapping: Any, key: str) -> Any:
    """``mapping[key]``, or None when absent, read without a Box's wrapping or conversion
    (``dict.get`` on any dict, a LazyBox's shared values included; ``mapping.get``
    otherwise): for reading and comparing only, never for changing what it returns."""
    return dict.get(mapping, key) if isinstance(mapping, dict) else mapping.get(key)


def set_or_drop(parent: MutableMapping[str, Any], field: str, items: list[Any]) -> None:
    """``parent[field] = items``, or no ``field`` at all when ``items`` is empty (an empty
    list of finalizers, owner references or conditions is written as none)."""
    if items:
        parent[field] = items
    else:
        parent.pop(field, None)


def nested_list(
    obj: ObjectLike, parent: str, field: str, *, create: bool
) -> MutableSequence[Any] | None:
    """``raw[parent][field]`` as the mutable list it is (``metadata.finalizers``,
    ``status.conditions``...); None when absent, unless ``create`` makes it (and the parent
    map).

    Raises:
        TypeError: the parent or the field has the wrong type (naming the object and field).
    """
    raw = raw_of(obj)
    if raw.get(parent) is None:
        if not create:
            return None
        raw[parent] = {}
    container = raw[parent]
    if not isinstance(container, MutableMapping):
        raise TypeError(f"{describe_object(obj)}: {parent} is not a mapping")
    if container.get(field) is None:
        if not create:
            return None
        container[field] = []
    value = container[field]
    if not isinstance(value, MutableSequence):
        raise TypeError(f"{describe_object(obj)}: {parent}.{field} is not a list")
    return value


class ObjectRef(NamedTuple):
    """A key for one object: kind (``Kind`` or ``Kind.group``), namespace ("" if none), name.

    A named tuple: hashed and compared in C (a key is hashed by every queue and cache
    operation, ~20 times per reconcile: issue 31); ordered by kind, namespace, name.
    """

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return describe(self.kind, self.namespace or None, self.name)


def identity(obj: ObjectLike) -> tuple[str, str | None, str | None]:
    """``(kind, namespace, name)`` of an object for messages (missing parts as None)."""
    raw = view_of(obj)
    meta = raw.get("metadata") or {}
    return str(raw.get("kind", "?")), meta.get("namespace") or None, meta.get("name")


def describe_object(obj: ObjectLike) -> str:
    """``Kind namespace/name`` of an object."""
    return describe(*identity(obj))


def edit_list(
    server: list[Any], before: list[Any], after: list[Any], key: Callable[[Any], Any]
) -> list[Any]:
    """``server`` with one writer's edits (``before`` -> ``after``) applied, items matched by
    ``key``: items it removed go, items it added or changed are put in (in place where the
    server has them, at the end otherwise); everything else the server holds stays.

    The three-way list merge behind guarded writes of finalizers, owner references (by uid)
    and conditions (by type) when another writer changed the list meanwhile."""
    wanted = {key(i): i for i in after}
    removed = {key(i) for i in before} - set(wanted)
    changed = {k: v for k, v in wanted.items() if v not in before}
    result = [changed.pop(key(i), i) for i in server if key(i) not in removed]
    present = {key(i) for i in result}
    result += [i for i in after if key(i) not in present and key(i) in changed]
    return result
