"""Schema markers for typed resources: what controller-gen's ``+kubebuilder`` markers and
kube-rs's ``#[schemars]`` attributes say, as ``typing.Annotated`` metadata.

``Annotated[list[Port], ListType.map("name")]`` gives ``x-kubernetes-list-type: map`` and
``x-kubernetes-list-map-keys: [name]`` (server-side apply then merges the list by
``name``); ``Annotated[Spec, Rule("self.min <= self.max", message="...")]`` a CEL rule
(``x-kubernetes-validations``); ``MapType.atomic`` an atomic map; ``PreserveUnknownFields``
keeps fields the schema does not name; ``IntOrString`` is an int or a string
(``x-kubernetes-int-or-string``). Semantics: the Kubernetes docs on CRD structural schemas,
validation rules and server-side apply merge strategies.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

__all__ = [
    "IntOrString",
    "ListType",
    "MapType",
    "PreserveUnknownFields",
    "Rule",
    "SchemaExtension",
]


@dataclass(frozen=True)
class SchemaExtension:
    """Extra keys for the field's OpenAPI schema (a base for the markers below)."""

    keys: tuple[tuple[str, Any], ...] = field(default=(), kw_only=True)

    def extra(self) -> dict[str, Any]:
        """The keys this marker adds to the field's OpenAPI schema."""
        return dict(self.keys)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        value = dict(handler(schema))
        for key, item in self.extra().items():
            if isinstance(item, list) and isinstance(value.get(key), list):
                value[key] = [*value[key], *item]
            else:
                value[key] = item
        return value


@dataclass(frozen=True)
class ListType(SchemaExtension):
    """``x-kubernetes-list-type`` (``atomic``, ``set``, ``map`` with its key fields).
    A set or map list refuses duplicate items (or keys) in the model as kube-apiserver
    does in the cluster (ValueError naming the duplicate); objects read from the API
    server (``from_raw``) are not checked again."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        extra = self.extra()
        kind, keys = extra.get("x-kubernetes-list-type"), extra.get("x-kubernetes-list-map-keys")
        if kind not in ("set", "map"):
            return handler(source)

        key_names = tuple(keys or ())

        def unique(items: list[Any], info: core_schema.ValidationInfo) -> list[Any]:
            if info.context and info.context.get("from_server"):
                return items  # the API server enforced it already
            seen: set[Any] = set()
            for item in items:
                identity = _identity(item, key_names) if kind == "map" else _hashable(item)
                if identity in seen:
                    raise ValueError(f"duplicate {kind} list item {identity!r}")
                seen.add(identity)
            return items

        return core_schema.with_info_after_validator_function(unique, handler(source))

    @staticmethod
    def atomic() -> ListType:
        """``x-kubernetes-list-type: atomic``: server-side apply replaces the list whole."""
        return ListType(keys=(("x-kubernetes-list-type", "atomic"),))

    @staticmethod
    def set() -> ListType:
        """``x-kubernetes-list-type: set``: scalar items, each owned on its own."""
        return ListType(keys=(("x-kubernetes-list-type", "set"),))

    @staticmethod
    def map(*keys: str) -> ListType:
        """A list merged item by item, items identified by the (JSON) fields ``keys``."""
        if not keys:
            raise ValueError("ListType.map needs at least one key field")
        return ListType(
            keys=(("x-kubernetes-list-type", "map"), ("x-kubernetes-list-map-keys", list(keys)))
        )


@functools.cache
def _attributes(cls: type[BaseModel]) -> dict[str, str]:
    """JSON name (alias) -> attribute name of a model's fields."""
    return {(f.alias or name): name for name, f in cls.model_fields.items()}


def _identity(item: Any, keys: tuple[str, ...]) -> tuple[Any, ...]:
    if isinstance(item, BaseModel):
        names = _attributes(type(item))
        return tuple(_hashable(getattr(item, names.get(k, k), None)) for k in keys)
    if isinstance(item, dict):
        return tuple(_hashable(item.get(k)) for k in keys)
    return (_hashable(item),)


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | None) else repr(value)


class MapType:
    """``x-kubernetes-map-type``: ``granular`` (the default) or ``atomic`` (replaced whole
    by server-side apply)."""

    atomic = SchemaExtension(keys=(("x-kubernetes-map-type", "atomic"),))
    granular = SchemaExtension(keys=(("x-kubernetes-map-type", "granular"),))


@dataclass(frozen=True)
class Rule(SchemaExtension):
    """A CEL validation rule (``x-kubernetes-validations``) on the annotated field:
    ``rule`` sees the value as ``self`` (and ``oldSelf`` on updates); ``message`` or
    ``message_expression`` is the error; ``reason`` (FieldValueInvalid, FieldValueForbidden,
    FieldValueRequired, FieldValueDuplicate) and ``field_path`` as Kubernetes defines them."""

    rule: str = ""
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None
    field_path: str | None = None
    optional_old_self: bool | None = None

    def extra(self) -> dict[str, Any]:
        """The ``x-kubernetes-validations`` entry of this rule (the keys given)."""
        entry: dict[str, Any] = {"rule": self.rule}
        for key, value in (
            ("message", self.message),
            ("messageExpression", self.message_expression),
            ("reason", self.reason),
            ("fieldPath", self.field_path),
            ("optionalOldSelf", self.optional_old_self),
        ):
            if value is not None:
                entry[key] = value
        return {"x-kubernetes-validations": [entry]}


PreserveUnknownFields = SchemaExtension(keys=(("x-kubernetes-preserve-unknown-fields", True),))
"""Keep fields the schema does not declare (``x-kubernetes-preserve-unknown-fields``)."""

IntOrString = Annotated[int | str, SchemaExtension(keys=(("x-kubernetes-int-or-string", True),))]
"""An int or a string (ports by number or name, ``maxSurge: 25%``)."""
