"""Shared pieces of kind-specific validation: the cause builders and the write a
validator sees."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import errors
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
