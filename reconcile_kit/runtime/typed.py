"""Typed controllers: recognising a CustomResource class and reporting objects that do not
fit it (the runtime side of :mod:`reconcile_kit.typed`)."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any, TypeGuard

from kr8s.asyncio.objects import APIObject

from ..client.errors import InvalidObjectError
from ..meta.objects import is_model_class as is_model_class_of
from ..meta.objects import metadata_of

if TYPE_CHECKING:
    from ..typed.resource import CustomResource
    from ..typed.reuse import ModelCache

__all__ = ["ModelSide", "Reporter", "invalid_object_error", "is_model_class", "model_cache"]

Obj = dict[str, Any]
Reporter = Callable[[APIObject, InvalidObjectError], None]
"""Reports an object that does not fit its model (a controller records a Warning Event)."""


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


class ModelSide:
    """The typed side of a controller whose kind is a CustomResource class: the model
    each reconcile gets instead of the kr8s object, reused while its object is unchanged
    (:mod:`reconcile_kit.typed.reuse`), and the report of objects that do not fit it.

    Args:
        model: the CustomResource class.
        on_invalid: ``(obj, error, ctx)`` (plain or async) called for an object that does
            not fit the model (see :class:`~reconcile_kit.runtime.controller.Controller`).
        reuse: how many models to keep for reuse (0: validate for every reconcile).

    Raises:
        ValueError: ``reuse`` is negative.
    """

    def __init__(
        self,
        model: type[CustomResource],
        on_invalid: Callable[[Any, InvalidObjectError, Any], object] | None,
        reuse: int,
    ) -> None:
        self.model = model
        self.models = model_cache(model, reuse)
        self.on_invalid = on_invalid

    async def build(
        self,
        key: Hashable,
        obj: APIObject,
        raw: Obj,
        ctx: object,
        log: logging.LoggerAdapter[logging.Logger],
        report: Reporter,
    ) -> CustomResource | None:
        """The model of ``raw`` for ``key`` (the previous reconcile's when it left it as
        read), bound to ``obj``; None when ``raw`` does not fit the model, reported: an
        ERROR line on ``log``, ``report(obj, error)`` (a Warning Event ``InvalidObject``),
        and ``on_invalid(obj, error, ctx)``."""
        try:
            return self.models.get(key, raw, obj)
        except ValueError as err:  # pydantic's ValidationError
            error = invalid_object_error(raw, err)
        log.error("%s; not reconciled until it changes", error)
        report(obj, error)
        if self.on_invalid is not None:
            try:
                result = self.on_invalid(obj, error, ctx)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("on_invalid failed")
        return None
