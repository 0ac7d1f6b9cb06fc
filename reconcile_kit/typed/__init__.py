"""Typed resources: pydantic models for custom resources, their CRDs and apply bodies.

``CustomResource`` (a kind's model), ``KubeModel`` (spec/status models), ``ObjectMeta``,
``Condition``, the schema markers (``ListType``, ``MapType``, ``Rule``,
``PreserveUnknownFields``, ``IntOrString``) and ``crd_document``.
"""

from __future__ import annotations

from .crd import crd_document, custom_resources
from .markers import IntOrString, ListType, MapType, PreserveUnknownFields, Rule
from .resource import (
    Condition,
    CustomResource,
    KubeModel,
    ObjectMeta,
    OwnerReference,
    PrinterColumn,
    Scale,
)
from .schema import SchemaError

__all__ = [
    "Condition",
    "CustomResource",
    "IntOrString",
    "KubeModel",
    "ListType",
    "MapType",
    "ObjectMeta",
    "OwnerReference",
    "PreserveUnknownFields",
    "PrinterColumn",
    "Rule",
    "Scale",
    "SchemaError",
    "crd_document",
    "custom_resources",
]
