"""JSON merge patches (RFC 7386): computing the minimal patch between two documents.

The diff is pruned: equal subtrees are skipped with one C-level comparison, so an
unchanged object costs a few microseconds. RFC 7386 cannot express a ``null`` value in
the target (``null`` means "delete"), so :func:`create_merge_patch` reports whether the
patch is exact; callers fall back to an RFC 6902 JSON patch when it is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, overload

__all__ = ["apply_merge_patch", "create_merge_patch"]

JSONDict = dict[str, Any]


def create_merge_patch(
    original: Mapping[str, Any], modified: Mapping[str, Any]
) -> tuple[JSONDict, bool]:
    """The RFC 7386 patch turning ``original`` into ``modified``, and whether it is exact.

    Only changed keys appear, nested; removed keys are ``None`` (JSON null); lists and
    scalars that changed appear whole. ``exact`` is False when ``modified`` holds a
    ``null`` the patch would turn into a deletion (a null value, or a null inside a new
    object), i.e. when ``apply_merge_patch(original, patch) != modified``.
    """
    state = [True]
    return _diff(original, modified, state), state[0]


def _diff(original: Mapping[str, Any], modified: Mapping[str, Any], state: list[bool]) -> JSONDict:
    patch: JSONDict = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, new in _items(modified):
        old = original.get(key, _MISSING)
        if old is not _MISSING and (old is new or old == new):
            continue
        if isinstance(new, _MAPPINGS) and isinstance(old, _MAPPINGS):
            sub = _diff(old, new, state)
            if sub:
                patch[key] = sub
            continue
        if new is None or (isinstance(new, _MAPPINGS) and _has_null(new)):
            state[0] = False
        patch[key] = new
    return patch


class _Missing:
    pass


_MISSING: Any = _Missing()
_MAPPINGS = (dict, Mapping)  # dict first: the ABC's isinstance test is a Python call


def _items(value: Mapping[str, Any]) -> Any:
    """The stored items: ``dict.items`` does not wrap a LazyBox's shared values on the way."""
    return dict.items(value) if isinstance(value, dict) else value.items()


def _has_null(value: Mapping[str, Any]) -> bool:
    for _key, item in _items(value):
        if item is None or (isinstance(item, Mapping) and _has_null(item)):
            return True
    return False


@overload
def apply_merge_patch(target: object, patch: Mapping[str, Any]) -> dict[str, Any]: ...


@overload
def apply_merge_patch(target: object, patch: object) -> object: ...


def apply_merge_patch(target: object, patch: object) -> object:
    """RFC 7386 MergePatch: ``null`` deletes, objects merge recursively, others replace.

    Args:
        target: a JSON document (a dict for an object).
        patch: the merge patch; a non-object patch replaces ``target`` whole.

    Returns a new document (a dict when ``patch`` is an object); ``target`` is not modified
    (unchanged subtrees are shared).
    """
    if not isinstance(patch, Mapping):
        return patch
    result: dict[str, Any] = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result
