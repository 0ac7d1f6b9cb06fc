"""Optional dependencies: the error raised when a feature's extra is not installed.

The core (``pip install reconcile-kit``) runs a production operator. Two features need
packages it does not install:

- ``reconcile-kit[cel]`` (common-expression-language): CEL validation rules
  (``x-kubernetes-validations``) evaluated in-process, by typed models carrying rules (``Rule``)
  (:mod:`reconcile_kit.meta.cel`);
- ``reconcile-kit[testing]`` (jsonschema and common-expression-language): the embedded API
  server (:mod:`reconcile_kit.testing.apiserver`) behind ``reconcile-kit demo``,
  ``reconcile-kit apiserver``, ``reconcile-kit run --embedded`` and the pytest plugin's
  fixtures.

Modules that need them import them at the top inside ``try``, and turn the
``ModuleNotFoundError`` into :class:`MissingExtraError` with :func:`missing_extra`, so the
message names the command that installs what is missing.
"""

from __future__ import annotations

import importlib.util

from .errors import ReconcileKitError

__all__ = ["EXTRAS", "MissingExtraError", "missing_extra", "missing_packages", "require_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "cel": ("cel",),
    "testing": ("jsonschema", "cel"),
}
"""The modules each extra installs (import names: ``cel`` is common-expression-language),
as pyproject.toml's ``[project.optional-dependencies]`` lists their distributions."""


class MissingExtraError(ModuleNotFoundError, ReconcileKitError):
    """A feature needs a package that only one of reconcile-kit's extras installs.

    A ``ModuleNotFoundError`` (so ``except ImportError`` still catches it) whose message
    names the feature, the missing package and the ``pip install 'reconcile-kit[EXTRA]'``
    command.

    Attributes:
        extra: the extra that installs the package (``"testing"``, ``"cel"``).
    """

    def __init__(self, message: str, *, name: str | None, extra: str) -> None:
        super().__init__(message, name=name)
        self.extra = extra


def missing_extra(error: ModuleNotFoundError, *, extra: str, feature: str) -> MissingExtraError:
    """The error to raise (``raise missing_extra(...) from error``) when importing a package
    of an extra failed.

    Args:
        error: the ``ModuleNotFoundError`` of the failed import (its ``name`` is the missing
            module).
        extra: the reconcile-kit extra that installs it (``"testing"``, ``"cel"``).
        feature: what needs it, as the message's subject (e.g. ``"The embedded API
            server"``).

    Returns:
        A :class:`MissingExtraError` naming the feature, the missing module and
        ``pip install 'reconcile-kit[EXTRA]'``.
    """
    return _error([error.name or str(error)], extra=extra, feature=feature)


def _error(missing: list[str], *, extra: str, feature: str) -> MissingExtraError:
    packages = ", ".join(map(repr, missing))
    return MissingExtraError(
        f"{feature} needs the Python package{'s' if len(missing) > 1 else ''} {packages}, "
        f"which reconcile-kit installs with its [{extra}] extra: "
        f"pip install 'reconcile-kit[{extra}]'",
        name=missing[0],
        extra=extra,
    )


def missing_packages(extra: str) -> list[str]:
    """The modules of ``extra`` (a key of :data:`EXTRAS`) that cannot be imported here,
    found without importing them (``importlib.util.find_spec``); empty when the extra is
    installed. KeyError for an unknown extra."""
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


def require_extra(extra: str, *, feature: str) -> None:
    """Raise :class:`MissingExtraError` (naming ``feature``, the missing modules and
    ``pip install 'reconcile-kit[EXTRA]'``) unless every module of ``extra`` is importable;
    a check before starting something that needs it (``reconcile-kit demo``)."""
    missing = missing_packages(extra)
    if missing:
        raise _error(missing, extra=extra, feature=feature)
