"""Finalizers: local edits of ``metadata.finalizers`` that the PatchHelper then sends.

Semantics follow controller-runtime's ``controllerutil.AddFinalizer``, ``RemoveFinalizer``
and ``ContainsFinalizer``: order is kept, a name appears at most once, and each call reports
whether it changed the list. When the last finalizer is removed the ``metadata.finalizers`` key
is deleted rather than left as ``[]`` (the API server treats both alike; a merge patch then
sends ``null``).

Names are checked as apimachinery's ``ValidateFinalizerName`` does
(k8s.io/apimachinery/pkg/api/validation: ``IsQualifiedName``): an optional DNS-1123 subdomain
prefix (at most 253 characters) and ``/``, then a name part of at most 63 alphanumerics, ``-``,
``_`` or ``.``, starting and ending with an alphanumeric. Invalid names raise ValueError here
instead of a 422 later. Names without a prefix are valid, but kube-apiserver answers them
with a warning ("prefer a domain-qualified finalizer name ..."); ``add_finalizer`` issues a
``FinalizerNameWarning`` for them, except for Kubernetes' own ``kubernetes``, ``orphan`` and
``foregroundDeletion``.

Adding a finalizer to an object that is being deleted (``deletionTimestamp`` set) is not
refused here; the API server refuses it (422 "no new finalizers can be added ...").
"""

from __future__ import annotations

import warnings
from collections.abc import MutableSequence
from typing import Any, Final

from . import objects
from .objects import ObjectLike, accepts_models, describe_object
from .validation import (
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    DNS1123_SUBDOMAIN_RE,
    QUALIFIED_NAME_MAX_LENGTH,
    QUALIFIED_NAME_RE,
)

__all__ = [
    "FinalizerNameWarning",
    "add_finalizer",
    "has_finalizer",
    "remove_finalizer",
    "validate_finalizer_name",
]

STANDARD_FINALIZERS: Final = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
"""Finalizers Kubernetes itself uses without a domain prefix."""

_NAME_RULE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"
)
_PREFIX_RULE = (
    "prefix part must be a lowercase RFC 1123 subdomain: lowercase alphanumerics, '-' or '.', "
    "starting and ending with an alphanumeric (e.g. 'example.com')"
)


class FinalizerNameWarning(UserWarning):
    """A finalizer name without a domain prefix (kube-apiserver warns about those too)."""


@accepts_models
def add_finalizer(obj: ObjectLike, name: str) -> bool:
    """Append ``name`` to ``metadata.finalizers`` unless present; True if it was added.

    Args:
        obj: a kr8s object, dict or typed model, changed in place.
        name: a qualified name such as ``example.com/cleanup``.

    Raises:
        ValueError: ``name`` is not a valid finalizer name (the message says why).
        TypeError: ``name`` is not a string, or ``metadata.finalizers`` is not a list.

    Warns:
        FinalizerNameWarning: when adding a name without a domain prefix that is not a
            standard finalizer.
    """
    validate_finalizer_name(name, obj)
    finalizers = _finalizers(obj, create=True)
    assert finalizers is not None
    if name in finalizers:
        return False
    if "/" not in name and name not in STANDARD_FINALIZERS:
        warnings.warn(
            f"{describe_object(obj)}: finalizer {name!r}: prefer a domain-qualified finalizer "
            "name including a path (/) to avoid accidental conflicts with other finalizer "
            "writers",
            FinalizerNameWarning,
            stacklevel=2,
        )
    finalizers.append(name)
    return True


@accepts_models
def remove_finalizer(obj: ObjectLike, name: str) -> bool:
    """Remove ``name`` from ``metadata.finalizers``; True if it was there.

    Any name can be removed, valid or not. Deletes the key when the list becomes empty.

    Raises:
        TypeError: ``metadata.finalizers`` is not a list.
    """
    finalizers = _finalizers(obj, create=False)
    if not finalizers or name not in finalizers:
        return False
    kept = [f for f in finalizers if f != name]
    objects.set_or_drop(objects.raw_of(obj)["metadata"], "finalizers", kept)
    return True


@accepts_models
def has_finalizer(obj: ObjectLike, name: str) -> bool:
    """Whether ``metadata.finalizers`` contains ``name``."""
    return name in (_finalizers(obj, create=False) or ())


def validate_finalizer_name(name: str, obj: ObjectLike | None = None) -> None:
    """Check that ``name`` is a qualified name (apimachinery's IsQualifiedName); ``obj``,
    when given, is named in the message.

    Raises:
        ValueError: ``name`` is not a qualified name.
        TypeError: ``name`` is not a str.
    """
    if not isinstance(name, str):
        raise TypeError(f"a finalizer name must be a string, not {type(name).__name__}")
    problems = _qualified_name_problems(name)
    if problems:
        where = f"{describe_object(obj)}: " if obj is not None and _known(obj) else ""
        raise ValueError(f"{where}finalizer {name!r}: {'; '.join(problems)}")


def _qualified_name_problems(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) > 2:
        return ["must be a name part with an optional DNS subdomain prefix and one '/'"]
    name = parts[-1]
    problems = _prefix_problems(parts[0]) if len(parts) == 2 else []
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX_LENGTH:
        problems.append(f"name part must be no more than {QUALIFIED_NAME_MAX_LENGTH} characters")
    if name and not QUALIFIED_NAME_RE.fullmatch(name):
        problems.append(_NAME_RULE)
    return problems


def _prefix_problems(prefix: str) -> list[str]:
    if not prefix:
        return ["prefix part must be non-empty"]
    problems = []
    if len(prefix) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(
            f"prefix part must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters"
        )
    if not DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
        problems.append(_PREFIX_RULE)
    return problems


def _finalizers(obj: ObjectLike, *, create: bool) -> MutableSequence[Any] | None:
    return objects.nested_list(obj, "metadata", "finalizers", create=create)


def _known(obj: ObjectLike) -> bool:
    kind, _, name = objects.identity(obj)
    return bool(name) or kind != "?"
