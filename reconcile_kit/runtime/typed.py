"""Typed controllers: recognising a CustomResource class and reporting objects that do not
fit it (the runtime side of :mod:`reconcile_kit.typed`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

from ..client.errors import InvalidObjectError
from ..meta.objects import is_model_class as is_model_class_of
from ..meta.objects import metadata_of

if TYPE_CHECKING:
    from ..typed.resource import CustomResource
    from ..typed.reuse import ModelCache

__all__ = ["invalid_object_error", "is_model_class", "model_cache"]


def is_model_class(kind: object) -> TypeGuard[type[CustomResource]]:
    """Whether ``kind`` is a CustomResource subclass declaring its kind (by
    :data:`~reconcile_kit.meta.objects.MODEL_MARKER`: pydantic is not imported when no
    typed resource was ever defined)."""
    return is_model_class_of(kind)


def model_cache(model: type[CustomResource], size: int) -> ModelCache[CustomResource]:
    """The ``typed.reuse.ModelCache`` of a controller of ``model`` keeping ``size`` models."""
    from ..typed.reuse import ModelCache

    return ModelCache(model, size)


def invalid_object_error(raw: Mapping[str, Any], error: Exception) -> InvalidObjectError:
    """An InvalidObjectError naming the object and the fields of pydantic's ``error``."""
    meta = metadata_of(raw)
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
