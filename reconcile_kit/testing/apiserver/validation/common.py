"""Shared pieces of kind-specific validation: the cause builders and the write a
validator sees."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..gofmt import go_quote
from ..store import Obj

Causes = list[dict[str, str]]


@dataclass(frozen=True, slots=True)
class Write:
    """One write under validation: the object as it would be stored, the stored one on an
    update (``None`` on a create), the subresource written (``""``, ``"status"``...) and,
    on an update, the object as sent (``sent``: before the empty fields Go's encoding omits
    were dropped; a decoded object still holds them, and reflect.DeepEqual tells an empty
    map from none)."""

    obj: Obj
    old: Obj | None = None
    subresource: str = ""
    sent: Obj | None = None

    @property
    def creating(self) -> bool:
        return self.old is None


Validator = Callable[[Write], Causes]


def on_object(check: Callable[[Obj], Causes]) -> Validator:
    """A validator that checks the written object only, on create and on every update."""
    return lambda write: check(write.obj)


def required(field: str, detail: str = "") -> dict[str, str]:
    """A ``FieldValueRequired`` cause, as field.Required(path, detail)."""
    return errors.cause(
        "FieldValueRequired", field, f"Required value: {detail}" if detail else "Required value"
    )


def not_supported(
    field: str, value: object, supported: tuple[str, ...], rendered: bool = False
) -> dict[str, str]:
    """A ``FieldValueNotSupported`` cause, as field.NotSupported(path, value, supported);
    ``rendered``: ``value`` is Go's ``%#v`` text already."""
    allowed = ", ".join(f'"{s}"' for s in supported)
    shown = str(value) if rendered or not isinstance(value, str | int) else go_value(value)
    return errors.cause(
        "FieldValueNotSupported", field, f"Unsupported value: {shown}: supported values: {allowed}"
    )


def go_value(value: object) -> str:
    """A bad value as field.Error's ErrorBody prints it: strings ``%q``, numbers and
    booleans ``%v``, nil ``null``, a []string ``%#v`` (``[]string{"a", "b"}``); other values
    are given already rendered (``GoText``, or ``rendered=True``; see gorender)."""
    if isinstance(value, GoText):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[]string{" + ", ".join(go_quote(str(v)) for v in value) + "}"
    return go_quote(str(value))


class GoText(str):
    """A bad value already in Go's ``%#v`` form (a struct, a typed nil slice)."""


def invalid(field: str, value: object, detail: str, rendered: bool = False) -> dict[str, str]:
    """A ``FieldValueInvalid`` cause, as field.Invalid(path, value, detail); ``rendered``:
    ``value`` is Go's ``%#v`` text already."""
    shown = str(value) if rendered else go_value(value)
    suffix = f": {detail}" if detail else ""
    return errors.cause("FieldValueInvalid", field, f"Invalid value: {shown}{suffix}")


def invalids(field: str, value: object, details: list[str]) -> Causes:
    """One field.Invalid per message of a Go ``Is*`` check."""
    return [invalid(field, value, detail) for detail in details]


def forbidden(field: str, detail: str) -> dict[str, str]:
    """A ``FieldValueForbidden`` cause, as field.Forbidden(path, detail)."""
    return errors.cause("FieldValueForbidden", field, f"Forbidden: {detail}")


def duplicate(field: str, value: object) -> dict[str, str]:
    """A ``FieldValueDuplicate`` cause, as field.Duplicate(path, value)."""
    return errors.cause("FieldValueDuplicate", field, f"Duplicate value: {go_value(value)}")


def too_long(field: str, limit: int) -> dict[str, str]:
    """A ``FieldValueTooLong`` cause, as field.TooLong(path, _, limit)."""
    return errors.cause("FieldValueTooLong", field, f"Too long: may not be more than {limit} bytes")


def not_found(field: str, value: str) -> dict[str, str]:
    """A ``FieldValueNotFound`` cause, as field.NotFound(path, value)."""
    return errors.cause("FieldValueNotFound", field, f"Not found: {go_quote(value)}")


def nonnegative(field: str, value: object) -> Causes:
    """ValidateNonnegativeField: an integer below 0 is invalid."""
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid(field, value, "must be greater than or equal to 0")]
    return []


def immutable(field: str, new: object, old: object, rendered_new: str) -> Causes:
    """ValidateImmutableField: ``new`` differs from ``old``; the cause shows ``rendered_new``
    (Go's rendering of the new value)."""
    if new == old:
        return []
    return [invalid(field, rendered_new, "field is immutable", rendered=True)]


def as_dict(value: object) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one (a field decoded as Go's zero)."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def semantic(value: Any) -> Any:
    """``value`` as apiequality.Semantic.DeepEqual compares decoded Go values: a field at
    its zero value (absent, null, "", 0, false, empty list or map) is no field."""
    if isinstance(value, dict):
        kept = {k: semantic(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, "", 0, False, [], {})}
    if isinstance(value, list):
        return [semantic(item) for item in value]
    return value
