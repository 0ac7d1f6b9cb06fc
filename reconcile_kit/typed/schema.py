"""A pydantic model's JSON Schema rewritten as a CRD's structural OpenAPI v3 schema.

kube-apiserver accepts only structural schemas (Kubernetes docs, "Specifying a structural
schema"): every node typed (unless ``x-kubernetes-int-or-string`` or
``x-kubernetes-preserve-unknown-fields``), no ``$ref``, no ``properties`` beside
``additionalProperties``, OpenAPI 3.0 keywords only. pydantic writes JSON Schema 2020-12,
so this rewrites it: references inlined, ``anyOf`` with ``null`` made ``nullable``, ``int |
str`` made int-or-string, ``Literal`` unions made enums, ``const`` an enum, numeric
``exclusiveMinimum``/``exclusiveMaximum`` the OpenAPI 3.0 booleans, ``dict[str, Any]`` and
``Any`` made to preserve unknown fields, titles and examples dropped. The same job as
kube-rs's ``StructuralSchemaRewriter``; this code is our own.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from pydantic import BaseModel

from ..client.errors import ReconcileKitError

__all__ = ["SchemaError", "openapi_schema", "plain_text", "structural_schema"]

Schema = dict[str, Any]

# JSONSchemaProps keys kube-apiserver takes (apiextensions.k8s.io/v1); the rest is dropped.
_KEPT = {
    "description",
    "type",
    "format",
    "default",
    "enum",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "properties",
    "additionalProperties",
    "nullable",
}
# Formats kube-apiserver validates (k8s.io/kube-openapi pkg/validation/strfmt); pydantic's
# "duration" is ISO 8601, not Go's, so it is left out on purpose.
_FORMATS = {
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "binary",
    "date",
    "date-time",
    "password",
    "uuid",
    "email",
    "uri",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
}


class SchemaError(ReconcileKitError, ValueError):
    """A model field that no structural schema can express (recursive models, tuples,
    unions of different object types); the message names the model and the field."""


def structural_schema(schema: Schema, where: str = "") -> Schema:
    """The structural form of pydantic JSON Schema ``schema`` (with its ``$defs``)."""
    defs = schema.get("$defs") or {}
    return _Rewriter(defs).node(schema, where or str(schema.get("title", "")), ())


class _Rewriter:
    def __init__(self, defs: dict[str, Schema]) -> None:
        self.defs = defs

    def node(self, schema: Schema, where: str, seen: tuple[str, ...]) -> Schema:
        schema = self._resolved(schema, where, seen)
        seen = (*seen, *schema.pop("__seen__", ()))
        for union in ("anyOf", "oneOf"):
            if union in schema:
                return self._union(schema, union, where, seen)
        out: Schema = {k: v for k, v in schema.items() if k in _KEPT or k.startswith("x-")}
        if "const" in schema:
            out["enum"] = [schema["const"]]
        self._bounds(out)
        if out.get("format") not in _FORMATS:
            out.pop("format", None)
        if out.get("default", 0) in (None, [], {}):
            del out["default"]  # Python conveniences (None, [], {}): the server adds nothing
        if out.get("type") == "array" or "items" in out or "prefixItems" in schema:
            self._array(schema, out, where, seen)
        if out.get("type") == "object" or "properties" in out:
            self._object(out, where, seen)
        if not out.get("type") and not _untyped_ok(out):
            out["x-kubernetes-preserve-unknown-fields"] = True  # Any
        return out

    def _resolved(self, schema: Schema, where: str, seen: tuple[str, ...]) -> Schema:
        """``schema`` with ``$ref`` and single-item ``allOf`` replaced by their target."""
        schema = dict(schema)
        names: list[str] = []
        while "$ref" in schema or len(schema.get("allOf") or ()) == 1:
            target = schema.pop("$ref", None)
            if target is None:
                (target_schema,) = schema.pop("allOf")
                schema = {**target_schema, **schema}
                continue
            name = str(target).rsplit("/", 1)[-1]
            if name in seen or name in names:
                raise SchemaError(f"{where}: {name} refers to itself; CRD schemas cannot recurse")
            names.append(name)
            schema = {**self.defs[name], **schema}
        schema["__seen__"] = tuple(names)
        return schema

    def _union(self, schema: Schema, key: str, where: str, seen: tuple[str, ...]) -> Schema:
        options = [o for o in schema[key] if o.get("type") != "null"]
        nullable = len(options) < len(schema[key])
        rest = {k: v for k, v in schema.items() if k != key}
        resolved = [self._resolved(o, where, seen) for o in options]
        types = sorted(str(o.get("type")) for o in resolved)
        if len(options) == 1:
            out = self.node({**resolved[0], **rest}, where, seen)
        elif types == ["integer", "string"]:
            out = self.node({**rest, "x-kubernetes-int-or-string": True}, where, seen)
        elif all("enum" in o or "const" in o for o in resolved) and len(set(types)) == 1:
            values = [v for o in resolved for v in o.get("enum", [o.get("const")])]
            out = self.node({**rest, "type": types[0], "enum": values}, where, seen)
        else:
            raise SchemaError(
                f"{where}: a union of {', '.join(types)} has no structural schema;"
                " use one model with optional fields (or IntOrString)"
            )
        if nullable:
            out["nullable"] = True
        return out

    @staticmethod
    def _bounds(out: Schema) -> None:
        for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            value = out.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                out[bound] = value
                out[key] = True

    def _array(self, schema: Schema, out: Schema, where: str, seen: tuple[str, ...]) -> None:
        if "prefixItems" in schema:
            raise SchemaError(f"{where}: tuples have no structural schema; use a list or a model")
        out["type"] = "array"
        out["items"] = self.node(schema.get("items") or {}, f"{where}[]", seen)

    def _object(self, out: Schema, where: str, seen: tuple[str, ...]) -> None:
        out["type"] = "object"
        properties = out.get("properties")
        extra = out.pop("additionalProperties", None)
        if properties is not None:
            # a model's extra="allow" keeps unknown fields in Python, not in the cluster:
            # only PreserveUnknownFields asks the API server to keep them
            out["properties"] = {
                name: self.node(sub, f"{where}.{name}", seen) for name, sub in properties.items()
            }
        elif isinstance(extra, dict) and extra:
            out["additionalProperties"] = self.node(extra, f"{where}.*", seen)
        elif extra is True or extra == {} or "x-kubernetes-preserve-unknown-fields" not in out:
            out["x-kubernetes-preserve-unknown-fields"] = True
        if not out.get("required"):
            out.pop("required", None)


def _untyped_ok(out: Schema) -> bool:
    return bool(
        out.get("x-kubernetes-int-or-string") or out.get("x-kubernetes-preserve-unknown-fields")
    )


def openapi_schema(cls: type[BaseModel]) -> dict[str, Any]:
    """The openAPIV3Schema of one version of a custom resource class (a
    :class:`~reconcile_kit.typed.CustomResource`): apiVersion, kind, metadata (typed by the
    API server: only ``type: object`` here), and the model's other fields, descriptions as
    plain text (:func:`plain_text`).

    Raises:
        SchemaError: a model no structural schema can express.
    """
    schema = cls.model_json_schema(by_alias=True, mode="validation")
    out = structural_schema(schema, cls.__name__)
    properties = out.setdefault("properties", {})
    properties["apiVersion"] = {"type": "string"}
    properties["kind"] = {"type": "string"}
    properties["metadata"] = {"type": "object"}
    out.pop("x-kubernetes-preserve-unknown-fields", None)  # unknown top-level fields go
    required = [r for r in out.get("required") or () if r not in ("apiVersion", "kind")]
    if required:
        out["required"] = required
    else:
        out.pop("required", None)
    description = inspect.getdoc(cls)
    if description and cls.__doc__:
        out["description"] = description
    else:
        out.pop("description", None)
    _plain_descriptions(out)
    return out


_ROLE = re.compile(r":[\w:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")  # :class:`~a.B` -> B (short)
_LINK = re.compile(r"`([^`<]+?)\s*<([^>]+)>`__?")  # `text <url>`_ -> text (url)
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)  # ``code`` -> code
_EMPHASIS = re.compile(r"(?<![\w*])\*{1,2}([^*\s](?:[^*]*[^*\s])?)\*{1,2}(?![\w*])")
_INTERPRETED = re.compile(r"(?<![\w`])`([^`]+)`(?![\w`])")  # `text` -> text


def plain_text(docstring: str) -> str:
    """A docstring's reST inline markup as the plain text ``kubectl explain`` shows:
    ````code```` and ```text``` lose their backticks, ``:role:`~pkg.Name``` becomes
    ``Name``, ```text <url>`_`` becomes ``text (url)``, ``*emphasis*`` and
    ``**strong**`` lose their stars. Other text is kept as it is."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], docstring)
    text = _LINK.sub(r"\1 (\2)", text)
    text = _LITERAL.sub(r"\1", text)
    text = _INTERPRETED.sub(r"\1", text)
    return _EMPHASIS.sub(r"\1", text)


_DATA_KEYS = frozenset({"default", "enum", "example", "x-kubernetes-validations"})


def _plain_descriptions(node: Any) -> None:
    """Every ``description`` in schema ``node`` as plain text (values such as ``default``
    and ``enum`` are data, left alone)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                node[key] = plain_text(value)
            elif key not in _DATA_KEYS:
                _plain_descriptions(value)
    elif isinstance(node, list):
        for item in node:
            _plain_descriptions(item)
