"""Shared pieces of kind-specific validation: the cause builders and the write a
validator sees."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import errors
from ..gofmt import go_quote
from ..store import Obj

Causes = list[dict[str, str]]


@dataclass(frozen=True, slots=True)
class Write:
    """One write under validation: the object as it would be stored, the stored one on an
    update (``None`` on a create) and the subresource written (``""``, ``"status"``...)."""

    obj: Obj
    old: Obj | None = None
    subresource: str = ""

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


def not_supported(field: str, value: object, supported: tuple[str, ...]) -> dict[str, str]:
    """A ``FieldValueNotSupported`` cause, as field.NotSupported(path, value, supported)."""
    allowed = ", ".join(f'"{s}"' for s in supported)
    return errors.cause(
        "FieldValueNotSupported",
        field,
        f'Unsupported value: "{value}": supported values: {allowed}',
    )


def go_value(value: object) -> str:
    """A bad value as field.Error prints it: strings ``%q``, numbers and booleans plain,
    nil ``null``, a []string ``%#v`` (``[]string{"a", "b"}``); other values are given
    already rendered as ``GoText``."""
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


def invalid(field: str, value: object, detail: str) -> dict[str, str]:
    """A ``FieldValueInvalid`` cause, as field.Invalid(path, value, detail)."""
    return errors.cause("FieldValueInvalid", field, f"Invalid value: {go_value(value)}: {detail}")


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
