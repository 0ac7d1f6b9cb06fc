"""PatchHelper on typed objects: the model's JSON is what gets snapshotted and diffed.

A :class:`~reconcile_kit.typed.CustomResource` given to the PatchHelper is wrapped in a
:class:`TypedTarget`: ``raw`` is the model's ``to_raw()`` (the fields read or set, as JSON)
each time it is read, so the snapshot and the diff see the model's state; the server's
answer is written back into the model (and into the kr8s object it was read as). Identity
and the API client come from that kr8s object, or from the model's kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson
from kr8s.asyncio import Api
from typing_extensions import TypeIs

from ..meta.objects import is_model
from .snapshot import set_raw

if TYPE_CHECKING:
    from ..typed.resource import CustomResource

__all__ = ["TypedTarget", "is_typed"]


def is_typed(obj: object) -> TypeIs[CustomResource]:
    """Whether ``obj`` is a typed resource (a CustomResource instance), by its class's
    :data:`~reconcile_kit.meta.objects.MODEL_MARKER` (pydantic is never imported for it)."""
    return is_model(obj)


class TypedTarget:
    """What the PatchHelper edits for a typed object ``model``."""

    def __init__(self, model: CustomResource, api: Api | None = None) -> None:
        from ..typed.tracking import tracker_of

        self.model = model
        self._tracker = tracker_of(model)
        bound = model.object
        self._object = bound if bound is not None else model.kr8s_class()(model.to_raw(), api=api)

    @property
    def raw(self) -> dict[str, Any]:
        """The model's JSON now (``to_raw()``: a new dict at each read)."""
        raw: dict[str, Any] = self.model.to_raw()
        return raw

    def pristine(self) -> bytes | None:
        """The model's JSON (bytes) as it was read, when it is tracked (``typed.tracking``)
        and nothing changed it since; None otherwise."""
        tracker = self._tracker
        if tracker is None or tracker.dirty:
            return None
        if tracker.pristine is None:
            tracker.pristine = orjson.dumps(self.model.to_raw())
        return tracker.pristine

    def commit(self, state: dict[str, Any]) -> None:
        """Make the model (and its kr8s object) hold the server's ``state``."""
        self.model.replace_with(state)
        set_raw(self._object, state)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._object, name)
