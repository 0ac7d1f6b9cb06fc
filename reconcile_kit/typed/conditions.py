"""kstatus condition helpers for typed resources: the same functions as
:mod:`reconcile_kit.meta.conditions`, taking a CustomResource (its ``status.conditions``,
a list of :class:`~reconcile_kit.typed.Condition`).

Each runs the dict helper on the model's JSON and writes the result back into the model,
so the semantics (lastTransitionTime only on a status change, observedGeneration, kstatus
Ready/Reconciling/Stalled) are those of the dict helpers, written once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ..meta import conditions as _dict_conditions
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
        raw = model.to_raw()
        result = function(raw, *args, **kwargs)
        if writes and result:  # the dict functions say whether they changed anything
            model.replace_with(raw)
        return result

    return typed


get_condition = _on_model(_dict_conditions.get_condition, writes=False)
is_true = _on_model(_dict_conditions.is_true, writes=False)
is_false = _on_model(_dict_conditions.is_false, writes=False)
set_condition = _on_model(_dict_conditions.set_condition, writes=True)
remove_condition = _on_model(_dict_conditions.remove_condition, writes=True)
mark_ready = _on_model(_dict_conditions.mark_ready, writes=True)
mark_not_ready = _on_model(_dict_conditions.mark_not_ready, writes=True)
mark_reconciling = _on_model(_dict_conditions.mark_reconciling, writes=True)
mark_stalled = _on_model(_dict_conditions.mark_stalled, writes=True)
