"""Defaults changed in place count as set: what ``to_raw()`` (pydantic's ``exclude_unset``)
must not drop.

pydantic records a field as set when it is validated from input or assigned; a default
list, dict or model changed in place (``site.spec.ports.append(port)`` on a spec read
without ``ports``, ``site.status.conditions.append(...)`` on a status built in code) is
not, and ``model_dump(exclude_unset=True)`` left the change out: the reconcile's patch
lost it without an error. :func:`claim_changed_defaults` marks such fields set before a
dump. Only containers can change in place; a scalar changes by assignment, which pydantic
records already, so a default computed at construction (a timestamp) is never claimed.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

__all__ = ["claim_changed_defaults"]

_CONTAINERS = (list, dict, BaseModel)


def claim_changed_defaults(model: BaseModel) -> None:
    """Mark every field of ``model`` and the models nested in it (in fields, lists and
    dicts) as set when it still holds a default container that no longer equals the
    field's default."""
    fields_set = model.model_fields_set
    for name, info in type(model).model_fields.items():
        value = model.__dict__.get(name)
        if not isinstance(value, _CONTAINERS):
            continue
        if name not in fields_set and _differs_from_default(info, value, model.__dict__):
            fields_set.add(name)
        if name in fields_set:
            _claim_within(value)


def _claim_within(value: Any) -> None:
    if isinstance(value, BaseModel):
        claim_changed_defaults(value)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, _CONTAINERS):
                _claim_within(item)
    elif isinstance(value, dict):
        for item in value.values():
            if isinstance(item, _CONTAINERS):
                _claim_within(item)


def _differs_from_default(info: FieldInfo, value: Any, data: dict[str, Any]) -> bool:
    if info.is_required():
        return False  # never a default: set when validated
    default = info.get_default(call_default_factory=True, validated_data=data)
    return bool(value != default)
