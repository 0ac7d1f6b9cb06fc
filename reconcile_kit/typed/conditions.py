"""kstatus condition helpers for typed resources: the same functions as
:mod:`reconcile_kit.meta.conditions`, taking a CustomResource (its ``status.conditions``,
a list of :class:`~reconcile_kit.typed.Condition`).

Each runs the dict helper on the model's JSON and writes the result back into the model,
so the semantics (lastTransitionTime only on a status change, observedGeneration, kstatus
Ready/Reconciling/Stalled) are those of the dict helpers, written once. The JSON they see
first is only the model's identity and ``status.conditions`` (cheap to build); the whole
model is serialized and written back only when a helper changes something, so a
reconcile that finds its conditions as they should be leaves the model untouched (and a
reused model clean: ``typed.reuse``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ..meta import conditions as _dict_conditions
from ..meta.conditions import require_conditions
from .resource import CustomResource

__all__ = [
    "get_condition",
    "is_false",
    "is_true",
    "mark_not_ready",
    "mark_ready",
    "mark_reconciling",
    "mark_stalled",
    "remove_condition",
    "set_condition",
]

R = TypeVar("R")


def _on_model(function: Callable[..., R], writes: bool) -> Callable[..., R]:
    @functools.wraps(function)
    def typed(model: CustomResource, *args: Any, **kwargs: Any) -> R:
        require_conditions(model)
        result = function(_conditions_view(model), *args, **kwargs)
        if not (writes and result):  # the dict functions say whether they changed anything
            return result
        raw = model.to_raw()
        result = function(raw, *args, **kwargs)
        model.replace_with(raw)
        return result

    return typed


def _conditions_view(model: CustomResource) -> dict[str, Any]:
    """What the dict helpers read of ``model``: its identity (for error messages),
    ``metadata.generation`` and ``status.conditions``, as JSON."""
    meta = model.metadata
    view: dict[str, Any] = {
        "apiVersion": model.api_version,
        "kind": model.kind,
        "metadata": {"name": meta.name, "namespace": meta.namespace, "generation": meta.generation},
    }
    status = getattr(model, "status", None)
    if status is not None:
        view["status"] = status.model_dump(
            mode="json", by_alias=True, exclude_unset=True, include={"conditions"}
        )
    return view


get_condition = _on_model(_dict_conditions.get_condition, writes=False)
is_true = _on_model(_dict_conditions.is_true, writes=False)
is_false = _on_model(_dict_conditions.is_false, writes=False)
set_condition = _on_model(_dict_conditions.set_condition, writes=True)
remove_condition = _on_model(_dict_conditions.remove_condition, writes=True)
mark_ready = _on_model(_dict_conditions.mark_ready, writes=True)
mark_not_ready = _on_model(_dict_conditions.mark_not_ready, writes=True)
mark_reconciling = _on_model(_dict_conditions.mark_reconciling, writes=True)
mark_stalled = _on_model(_dict_conditions.mark_stalled, writes=True)
