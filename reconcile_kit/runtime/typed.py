"""Typed controllers: recognising a CustomResource class and reporting objects that do not
fit it (the runtime side of :mod:`reconcile_kit.typed`)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from ..client.errors import InvalidObjectError

__all__ = ["invalid_object_error", "is_model_class", "model_cache"]

_MODULE = "reconcile_kit.typed.resource"


def is_model_class(kind: Any) -> bool:
    """Whether ``kind`` is a CustomResource subclass (without importing pydantic when no
    typed resource was ever defined)."""
    module = sys.modules.get(_MODULE)
    return (
        module is not None
        and isinstance(kind, type)
        and issubclass(kind, module.CustomResource)
        and "resource" in kind.__dict__
    )


def model_cache(model: Any, size: int) -> Any:
    """The ``typed.reuse.ModelCache`` of a controller of ``model`` keeping ``size`` models."""
    from ..typed.reuse import ModelCache

    return ModelCache(model, size)


def invalid_object_error(raw: Mapping[str, Any], error: Exception) -> InvalidObjectError:
    """An InvalidObjectError naming the object and the fields of pydantic's ``error``."""
    meta = raw.get("metadata") or {}
    problems = []
    for item in getattr(error, "errors", lambda: [])():
        where = ".".join(str(part) for part in item.get("loc", ()))
        problems.append(f"{where}: {item.get('msg', '')}" if where else str(item.get("msg")))
    return InvalidObjectError(
        problems or [str(error)],
        kind=str(raw.get("kind", "?")),
        namespace=meta.get("namespace"),
        name=meta.get("name"),
    )
