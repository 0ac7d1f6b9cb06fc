"""Strategic merge patch (``application/strategic-merge-patch+json``) for built-in kinds.

The semantics follow ``k8s.io/apimachinery/pkg/util/strategicpatch`` (``StrategicMergePatch``
as called by the kube-apiserver), with the patch metadata that the Go struct tags
``patchStrategy`` / ``patchMergeKey`` carry replaced by a per-kind table of field paths:

* maps merge recursively and ``null`` deletes a key;
* lists whose field has the ``merge`` strategy merge by their merge key (lists of maps) or
  form a union (lists of primitives); every other list is replaced atomically;
* the directives ``$patch`` (``replace`` / ``delete`` / ``merge``), ``$retainKeys``,
  ``$setElementOrder/<field>`` and ``$deleteFromPrimitiveList/<field>`` are honoured.

Where apimachinery leaves directives or ``null`` values inside values it copies verbatim
(later dropped by decoding into a Go struct), this module drops them straight away, so the
stored object never contains ``$``-directives.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["StrategicMergeError", "apply_strategic_merge_patch"]

Rule = tuple[str, str]
"""``(patchStrategy, patchMergeKey)`` of one field, as in the Go struct tags."""

_PATCH: Final = "$patch"
_RETAIN_KEYS: Final = "$retainKeys"
_SET_ORDER: Final = "$setElementOrder/"
_DELETE_FROM: Final = "$deleteFromPrimitiveList/"
# JSON-schema keywords that are real fields (CustomResourceDefinition schemas), not directives.
_DATA_DOLLAR_KEYS: Final = frozenset({"$ref", "$schema"})
_BAD_REQUEST: Final = 400
_UNPROCESSABLE: Final = 422


class StrategicMergeError(ValueError):
    """A patch that cannot be applied; the server answers 422 (or 400 for a malformed directive).

    Attributes:
        code: the HTTP status the API server should answer with (422 or 400).
    """

    def __init__(self, message: str, code: int = _UNPROCESSABLE) -> None:
        super().__init__(message)
        self.code = code


class _Missing:
    """Marker for an absent key (distinct from a JSON ``null``)."""


class _Delete:
    """Marker returned when a ``$patch: delete`` removes the value it is merged into."""


_MISSING: Final = _Missing()
_DELETE: Final = _Delete()


# --------------------------------------------------------------------------------------------
# Patch metadata: field path -> (patchStrategy, patchMergeKey), from kubernetes/api struct tags.
# Paths are relative to the object root; list items are written "[]".
# --------------------------------------------------------------------------------------------

_MERGE: Final = "merge"
_MERGE_RETAIN: Final = "merge,retainKeys"
_REPLACE: Final = "replace"

_CONTAINER_FIELDS: Final[dict[str, Rule]] = {
    "ports": (_MERGE, "containerPort"),
    "env": (_MERGE, "name"),
    "volumeMounts": (_MERGE, "mountPath"),
    "volumeDevices": (_MERGE, "devicePath"),
}

_POD_SPEC_FIELDS: Final[dict[str, Rule]] = {
    "volumes": (_MERGE_RETAIN, "name"),
    "imagePullSecrets": (_MERGE, "name"),
    "hostAliases": (_MERGE, "ip"),
    "topologySpreadConstraints": (_MERGE, "topologyKey"),
    "schedulingGates": (_MERGE, "name"),
    "resourceClaims": (_MERGE_RETAIN, "name"),
}

_CONTAINER_LISTS: Final = ("containers", "initContainers", "ephemeralContainers")


def _object_meta(prefix: str) -> dict[str, Rule]:
    """Rules of ``metav1.ObjectMeta`` found at ``prefix`` (e.g. ``"metadata."``)."""
    return {
        f"{prefix}ownerReferences": (_MERGE, "uid"),
        f"{prefix}finalizers": (_MERGE, ""),
    }


def _pod_spec(prefix: str) -> dict[str, Rule]:
    """Rules of a ``PodSpec`` found at ``prefix`` (e.g. ``"spec."``)."""
    rules = {f"{prefix}{field}": rule for field, rule in _POD_SPEC_FIELDS.items()}
    for containers in _CONTAINER_LISTS:
        rules[f"{prefix}{containers}"] = (_MERGE, "name")
        for field, rule in _CONTAINER_FIELDS.items():
            rules[f"{prefix}{containers}[].{field}"] = rule
    return rules


def _pod_template(prefix: str) -> dict[str, Rule]:
    """Rules of a ``PodTemplateSpec`` found at ``prefix`` (e.g. ``"spec.template."``)."""
    return {**_object_meta(f"{prefix}metadata."), **_pod_spec(f"{prefix}spec.")}


_CONDITIONS: Final[dict[str, Rule]] = {"status.conditions": (_MERGE, "type")}
_WORKLOAD: Final[dict[str, Rule]] = {**_pod_template("spec.template."), **_CONDITIONS}

_SCHEMA: Final[dict[tuple[str, str], dict[str, Rule]]] = {
    ("", "Pod"): {
        **_pod_spec("spec."),
        **_CONDITIONS,
        "status.podIPs": (_MERGE, "ip"),
        "status.hostIPs": (_MERGE, "ip"),
        "status.resourceClaimStatuses": (_MERGE_RETAIN, "name"),
    },
    ("", "PodTemplate"): _pod_template("template."),
    ("", "ReplicationController"): _WORKLOAD,
    ("", "Service"): {"spec.ports": (_MERGE, "port"), **_CONDITIONS},
    ("", "Node"): {
        "spec.podCIDRs": (_MERGE, ""),
        "status.addresses": (_MERGE, "type"),
        **_CONDITIONS,
    },
    ("", "Namespace"): _CONDITIONS,
    ("", "PersistentVolumeClaim"): _CONDITIONS,
    ("", "ServiceAccount"): {"secrets": (_MERGE, "name")},
    ("apps", "Deployment"): {**_WORKLOAD, "spec.strategy": ("retainKeys", "")},
    ("apps", "StatefulSet"): _WORKLOAD,
    ("apps", "ReplicaSet"): _WORKLOAD,
    ("apps", "DaemonSet"): _WORKLOAD,
    ("batch", "Job"): _WORKLOAD,
    ("batch", "CronJob"): _pod_template("spec.jobTemplate.spec.template."),
    ("policy", "PodDisruptionBudget"): {"spec.selector": (_REPLACE, ""), **_CONDITIONS},
}


def _rules_for(kind: str, api_version: str) -> dict[str, Rule]:
    """The patch rules of ``kind`` in ``api_version``; ObjectMeta rules apply to every kind."""
    group = api_version.rpartition("/")[0]
    return {**_object_meta("metadata."), **_SCHEMA.get((group, kind), {})}


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _as_decoded(value: Any, in_string_map: bool = False) -> Any:
    """A value apimachinery copied verbatim, as decoding into the Go struct leaves it:
    ``$``-keys and ``null`` fields dropped, but a ``null`` in a ``map[string]string``
    (a label selector's ``matchLabels``) decodes as ``""``."""
    if isinstance(value, dict):
        return {
            k: "" if v is None and in_string_map else _as_decoded(v, k == "matchLabels")
            for k, v in value.items()
            if not (k.startswith("$") and k not in _DATA_DOLLAR_KEYS)
            and (v is not None or in_string_map)
        }
    if isinstance(value, list):
        return [_as_decoded(item) for item in value if item is not None]
    return value


def _same(a: Any, b: Any) -> bool:
    """JSON equality: unlike Python's ``==``, ``true`` is not equal to ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _has_key(item: Any, key: str) -> bool:
    return isinstance(item, dict) and key in item


def _identity(item: Any, key: str) -> Any:
    """What identifies a list item: its merge-key value, or the item itself without a key."""
    return item[key] if key else item


def _index(items: list[Any], item: Any, key: str) -> int:
    """Position of ``item`` in ``items`` (matched by merge key if any), or -1."""
    wanted = _identity(item, key)
    for i, candidate in enumerate(items):
        if (not key or _has_key(candidate, key)) and _same(_identity(candidate, key), wanted):
            return i
    return -1


def _require_keys(items: list[Any], key: str, code: int = _UNPROCESSABLE) -> None:
    """Every item of a merging list of maps must carry the merge key."""
    for item in items:
        if not _has_key(item, key):
            raise StrategicMergeError(
                f"map: {item!r} does not contain declared merge key: {key}", code
            )


def _partition(items: list[Any], by: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    """Split ``items`` into those present in ``by`` and the others, keeping relative order."""
    present = [item for item in items if _index(by, item, key) >= 0]
    absent = [item for item in items if _index(by, item, key) < 0]
    return present, absent


def _sort_by(items: list[Any], order: list[Any], key: str) -> list[Any]:
    """Stable sort by position in ``order``; items not found keep their order at the end."""
    found = [item for item in items if _index(order, item, key) >= 0]
    rest = [item for item in items if _index(order, item, key) < 0]
    return sorted(found, key=lambda item: _index(order, item, key)) + rest


def _interleave(server: list[Any], patched: list[Any], live: list[Any], key: str) -> list[Any]:
    """Insert server-only items into the patched items, as apimachinery's mergeSortedSlice.

    A server-only item goes first only when both it and the next patched item are in the live
    list and it came earlier there; otherwise the patched item goes first.
    """
    out: list[Any] = []
    i = j = 0
    while i < len(server) and j < len(patched):
        left, right = _index(live, server[i], key), _index(live, patched[j], key)
        if 0 <= left < right:
            out.append(server[i])
            i += 1
        else:
            out.append(patched[j])
            j += 1
    return out + patched[j:] + server[i:]


def _normalize(
    merged: list[Any], anchor: list[Any], live: list[Any], key: str, code: int = _UNPROCESSABLE
) -> list[Any]:
    """Order a merged list: items in ``anchor`` by ``anchor``, the rest by the ``live`` list."""
    if key:
        _require_keys(merged, key)
        _require_keys(anchor, key, code)
    patched, server = _partition(merged, anchor, key)
    return _interleave(_sort_by(server, live, key), _sort_by(patched, anchor, key), live, key)


def _union(original: list[Any], patch: list[Any]) -> list[Any]:
    """The items of both lists of primitives, without duplicates, in first-seen order."""
    merged: list[Any] = []
    for item in [*original, *patch]:
        if _index(merged, item, "") < 0:
            merged.append(item)
    return merged


def _holds_maps(*lists: list[Any]) -> bool:
    """Whether the items of ``lists`` are maps; mixed element kinds are an error."""
    items = [item for items in lists for item in items]
    if any(isinstance(item, list) for item in items):
        raise StrategicMergeError("lists of lists are not supported")
    maps = sum(isinstance(item, dict) for item in items)
    if 0 < maps < len(items):
        raise StrategicMergeError(f"list element types are not identical: {lists!r}")
    return maps > 0


def _directive_field(key: str, prefix: str) -> str:
    field = key[len(prefix) :]
    if not field:
        raise StrategicMergeError(f"invalid patch format: {key!r} names no field", _BAD_REQUEST)
    return field


def _expect_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise StrategicMergeError(f"invalid patch format of {what}: {value!r}", _BAD_REQUEST)
    return value


# --------------------------------------------------------------------------------------------
# The merge
# --------------------------------------------------------------------------------------------


class _Merger:
    """Applies a patch using the rules of one kind. Mutates only the ``original`` it is given."""

    def __init__(self, rules: Mapping[str, Rule]) -> None:
        self._rules = rules

    def _rule(self, path: str) -> tuple[bool, str]:
        """``(merges, mergeKey)`` of the list at ``path``; unknown lists are atomic."""
        strategy, key = self._rules.get(path, ("", ""))
        return _MERGE in strategy.split(","), key

    def merge_map(self, original: dict[str, Any], patch: dict[str, Any], path: str) -> Any:
        """Merge ``patch`` into ``original`` (mutated); returns the result or ``_DELETE``."""
        if _PATCH in patch:
            return self._map_directive(patch, path)
        rest = dict(patch)
        if _RETAIN_KEYS in rest:
            self._retain_keys(original, rest, rest.pop(_RETAIN_KEYS))
        for key in [k for k in rest if k.startswith(_SET_ORDER)]:
            field = _directive_field(key, _SET_ORDER)
            order = _expect_list(rest.pop(key), "$setElementOrder list")
            self._ordered_list(original, field, order, rest.pop(field, _MISSING), path)
        deletions = {k: rest.pop(k) for k in [k for k in rest if k.startswith(_DELETE_FROM)]}
        for key, value in rest.items():
            self._merge_key(original, key, value, path)
        for key, value in deletions.items():
            self._delete_from_list(original, _directive_field(key, _DELETE_FROM), value)
        return original

    def _map_directive(self, patch: dict[str, Any], path: str) -> Any:
        directive = patch[_PATCH]
        if directive == "replace":
            rest = {k: v for k, v in patch.items() if k != _PATCH}
            return self.merge_map({}, rest, path)
        if directive == "delete":
            return _DELETE
        raise StrategicMergeError(f"unknown patch type: {directive!r} in map", _BAD_REQUEST)

    def _merge_key(self, original: dict[str, Any], key: str, value: Any, path: str) -> None:
        if key.startswith("$") and key not in _DATA_DOLLAR_KEYS:
            raise StrategicMergeError(f"unknown directive {key!r} in patch", _BAD_REQUEST)
        child = _child(path, key)
        if value is None:
            merged: Any = _DELETE
        elif _REPLACE in self._rules.get(child, ("", ""))[0].split(","):
            merged = _as_decoded(value)  # the patch's value as it is, not merged
        else:
            merged = self.merge_value(original.get(key, _MISSING), value, child)
        if merged is _DELETE:
            original.pop(key, None)
        else:
            original[key] = merged

    def merge_value(self, current: Any, patch: Any, path: str) -> Any:
        """Merge one patch value into the current value (``_MISSING`` if absent)."""
        if isinstance(patch, dict):
            return self.merge_map(current if isinstance(current, dict) else {}, patch, path)
        if isinstance(patch, list):
            merges, key = self._rule(path)
            if merges and isinstance(current, list):
                return self._merge_list(current, patch, path, key)
            return self._fresh_list(patch, path, merges, key)
        return patch

    def _fresh_list(self, patch: list[Any], path: str, merges: bool, key: str) -> list[Any]:
        """A patch list taken as the new value, cleaned of directives and nulls in maps."""
        if merges:
            return self._merge_list([], patch, path, key)
        kept = [item for item in patch if not _has_key(item, _PATCH)]
        return [self.merge_value(_MISSING, item, f"{path}[]") for item in kept]

    def _merge_list(self, original: list[Any], patch: list[Any], path: str, key: str) -> list[Any]:
        """Merge two lists of a field with the ``merge`` strategy."""
        if not original and not patch:
            return []
        if not _holds_maps(original, patch):
            return _normalize(_union(original, patch), patch, original, "")
        if not key:
            raise StrategicMergeError(f"cannot merge lists without merge key for {path}")
        live, items = self._special_elements(original, patch, path, key)
        merged = self._merge_items(list(live), items, f"{path}[]", key)
        return _normalize(merged, items, live, key)

    def _special_elements(
        self, original: list[Any], patch: list[Any], path: str, key: str
    ) -> tuple[list[Any], list[Any]]:
        """Apply ``$patch`` list elements; returns the live list and the remaining patch items."""
        items: list[Any] = []
        replace = False
        for item in patch:
            directive = item.get(_PATCH, _MISSING)
            if directive is _MISSING:
                items.append(item)
            elif directive == "delete":
                _require_keys([item], key)
                original = [
                    o for o in original if not (_has_key(o, key) and _same(o[key], item[key]))
                ]
            elif directive == "replace":
                replace = True
            elif directive == "merge":
                raise StrategicMergeError("merging lists cannot yet be specified in the patch")
            else:
                raise StrategicMergeError(
                    f"unknown patch type: {directive!r} in list", _BAD_REQUEST
                )
        if replace:
            return self._merge_items([], items, f"{path}[]", key), []
        return original, items

    def _merge_items(self, live: list[Any], items: list[Any], path: str, key: str) -> list[Any]:
        """Merge each patch item into the live item with the same key, or append it."""
        _require_keys(items, key)
        for item in items:
            at = _index(live, item, key)
            if at >= 0:
                live[at] = self.merge_map(live[at], item, path)
            else:
                live.append(self.merge_map({}, item, path))
        return live

    def _retain_keys(self, original: dict[str, Any], rest: dict[str, Any], retain: Any) -> None:
        """``$retainKeys``: clear keys of ``original`` not listed; the patch must not add others."""
        keep = _expect_list(retain, "retainKeys")
        for key, value in rest.items():
            directive = key.startswith((_SET_ORDER, _DELETE_FROM))
            if value is not None and not directive and key not in keep:
                raise StrategicMergeError(
                    f"invalid patch format of retainKeys: {key!r} is not in {keep!r}", _BAD_REQUEST
                )
        for key in [k for k in original if k not in keep]:
            del original[key]

    def _ordered_list(
        self, original: dict[str, Any], field: str, order: list[Any], patch: Any, path: str
    ) -> None:
        """``$setElementOrder/<field>``: merge the field's patch list, then impose the order."""
        current = original.get(field, _MISSING)
        if patch is _MISSING and current is _MISSING:
            return
        if not isinstance(current, list | _Missing) or not isinstance(patch, list | _Missing):
            raise StrategicMergeError(f"{field}: $setElementOrder applies to lists only")
        child = _child(path, field)
        key = self._rule(child)[1]
        live = current if isinstance(current, list) else []
        if isinstance(patch, list):
            self._check_order(patch, order, key)
            merged = self.merge_value(current, patch, child)
        else:
            merged = list(live)
        key = key if _holds_maps(merged, order) else ""
        original[field] = _normalize(merged, order, live, key, _BAD_REQUEST)

    def _check_order(self, patch: list[Any], order: list[Any], key: str) -> None:
        """The patch items must appear in the ``$setElementOrder`` list, in the same order."""
        items = [item for item in patch if not _has_key(item, _PATCH)]
        if not items or not order:
            return
        if key and _holds_maps(items):
            _require_keys(items, key)
            _require_keys(order, key, _BAD_REQUEST)
        else:
            key = ""
        position = 0
        for item in items:
            found = _index(order[position:], item, key)
            if found < 0:
                raise StrategicMergeError(
                    f"the order in patch list {patch!r} doesn't match "
                    f"$setElementOrder list {order!r}",
                    _BAD_REQUEST,
                )
            position += found + 1

    @staticmethod
    def _delete_from_list(original: dict[str, Any], field: str, values: Any) -> None:
        """``$deleteFromPrimitiveList/<field>``: remove every listed value from the field."""
        doomed = _expect_list(values, "primitive list deletion")
        current = original.get(field)
        if isinstance(current, list):
            original[field] = [item for item in current if _index(doomed, item, "") < 0]


def apply_strategic_merge_patch(
    original: dict[str, Any], patch: dict[str, Any], kind: str, api_version: str
) -> dict[str, Any]:
    """Return a new object; `original` is not mutated.

    Applies a strategic merge patch to a built-in object with the semantics of
    ``k8s.io/apimachinery/pkg/util/strategicpatch.StrategicMergePatch``: maps merge and
    ``null`` deletes; lists of fields tagged ``patchStrategy:"merge"`` (looked up per kind in
    this module's table, ObjectMeta rules applying to every kind) merge by ``patchMergeKey``
    or as a union of primitives, others are replaced; ``$patch``, ``$retainKeys``,
    ``$setElementOrder/<field>`` and ``$deleteFromPrimitiveList/<field>`` are honoured.
    A kind without table entries is patched like a JSON merge patch, directives included.
    Without ``$setElementOrder``, list items named by the patch are ordered as in the patch
    and new ones come before unrelated live items, as apimachinery does.

    Args:
        original: the stored object, a JSON-like dict (not mutated).
        patch: the decoded patch body, a JSON object.
        kind: the object's kind, e.g. ``"Deployment"``.
        api_version: the object's ``apiVersion``, e.g. ``"apps/v1"``; its group selects the table.

    Returns:
        The patched object, sharing no mutable data with ``original`` or ``patch``.

    Raises:
        StrategicMergeError: the patch cannot be applied (``code`` 422), or a directive is
            unknown or malformed (``code`` 400).
    """
    if not isinstance(patch, dict):
        raise StrategicMergeError("a strategic merge patch must be a JSON object", _BAD_REQUEST)
    merger = _Merger(_rules_for(kind, api_version))
    result = merger.merge_map(copy.deepcopy(original), patch, "")
    return result if isinstance(result, dict) else {}
