"""CustomResourceDefinitions generated from CustomResource classes (controller-gen's
``crd`` generator, kube-rs's ``CustomResourceExt::crd``, from pydantic models)."""

from __future__ import annotations

import inspect
import re
from types import ModuleType
from typing import Any

from .resource import CustomResource, CustomResourceInfo
from .schema import SchemaError, structural_schema

__all__ = ["crd_document", "custom_resources", "openapi_schema", "plain_text"]


def crd_document(*classes: type[CustomResource]) -> dict[str, Any]:
    """The apiextensions.k8s.io/v1 CRD of ``classes``: one version each, all of one group
    and kind (with one class, every defined version of its kind).

    Raises:
        SchemaError: a model no structural schema can express, or versions that disagree
            (group, kind, names, scope) or do not name exactly one storage version.
    """
    if len(classes) == 1:
        classes = tuple(_versions_of(classes[0]))
    infos = [c.resource for c in classes]
    first = infos[0]
    for info in infos[1:]:
        if (info.group, info.kind, info.plural, info.scope) != (
            first.group,
            first.kind,
            first.plural,
            first.scope,
        ):
            raise SchemaError(f"{first.kind}: versions disagree on group, kind, plural or scope")
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": first.crd_name},
        "spec": {
            "group": first.group,
            "names": _names(first),
            "scope": first.scope,
            "versions": [_version(c, _is_storage(c, infos)) for c in classes],
        },
    }


def _versions_of(cls: type[CustomResource]) -> list[type[CustomResource]]:
    info = cls.resource
    found = [
        c
        for c in _subclasses(CustomResource)
        if "resource" in c.__dict__
        and (c.resource.group, c.resource.kind) == (info.group, info.kind)
    ]
    by_version = {c.resource.version: c for c in found}  # a module loaded twice: the latest
    by_version[info.version] = cls
    return list(by_version.values())


def _subclasses(cls: type[CustomResource]) -> list[type[CustomResource]]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def _is_storage(cls: type[CustomResource], infos: list[CustomResourceInfo]) -> bool:
    if len(infos) == 1:
        return True
    stored = [i for i in infos if i.storage]
    if len(stored) != 1:
        raise SchemaError(f"{infos[0].kind}: exactly one version needs storage=True")
    return cls.resource.storage is True


def _names(info: CustomResourceInfo) -> dict[str, Any]:
    names: dict[str, Any] = {
        "kind": info.kind,
        "listKind": f"{info.kind}List",
        "plural": info.plural,
        "singular": info.singular,
    }
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    if info.categories:
        names["categories"] = list(info.categories)
    return names


def _version(cls: type[CustomResource], storage: bool) -> dict[str, Any]:
    info = cls.resource
    version: dict[str, Any] = {
        "name": info.version,
        "served": info.served,
        "storage": storage,
        "schema": {"openAPIV3Schema": openapi_schema(cls)},
    }
    if info.deprecated:
        version["deprecated"] = True
    subresources: dict[str, Any] = {}
    if "status" in cls.model_fields:
        subresources["status"] = {}
    if info.scale is not None:
        scale = {
            "specReplicasPath": info.scale.spec_replicas_path,
            "statusReplicasPath": info.scale.status_replicas_path,
        }
        if info.scale.label_selector_path:
            scale["labelSelectorPath"] = info.scale.label_selector_path
        subresources["scale"] = scale
    if subresources:
        version["subresources"] = subresources
    if info.printer_columns:
        version["additionalPrinterColumns"] = [c.document() for c in info.printer_columns]
    return version


def openapi_schema(cls: type[CustomResource]) -> dict[str, Any]:
    """The openAPIV3Schema of one version: apiVersion, kind, metadata (typed by the API
    server: only ``type: object`` here), and the model's other fields."""
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


def custom_resources(module: ModuleType, attr: str = "") -> list[type[CustomResource]]:
    """The CustomResource classes of ``module``: the one named ``attr``, or (no attr)
    every kind defined there.

    Raises:
        ValueError: there is none.
    """
    if attr:
        found = getattr(module, attr, None)
        if not (inspect.isclass(found) and issubclass(found, CustomResource)):
            raise ValueError(f"{module.__name__}:{attr} is not a CustomResource class")
        return [found]
    classes = [
        c
        for c in vars(module).values()
        if inspect.isclass(c)
        and issubclass(c, CustomResource)
        and "resource" in c.__dict__
        and c.__module__ == module.__name__
    ]
    if not classes:
        raise ValueError(f"{module.__name__} defines no CustomResource class")
    return classes
