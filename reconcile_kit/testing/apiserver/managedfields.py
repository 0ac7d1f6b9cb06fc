"""``metadata.managedFields`` bookkeeping, as kube-apiserver's field manager records it.

Each writer (the ``fieldManager`` query parameter, else the User-Agent's product name)
gets a ``FieldsV1`` entry per operation and subresource listing the fields it set; a
field changed by one manager leaves every other manager's set. Lists are atomic except
those keyed by ``name`` or ``uid`` (``k:{...}`` entries) and ``metadata.finalizers``
(``v:`` entries). Source: sigs.k8s.io/structured-merge-diff and k8s.io/apiserver
pkg/endpoints/handlers/fieldmanager; this is a simplification without OpenAPI schemas.
"""

from __future__ import annotations

import json
from typing import Any

from ...meta.time import now_time
from .store import Obj

Path = tuple[str, ...]
_SKIP_META = {
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
}


def manager_name(field_manager: str | None, user_agent: str) -> str:
    """The manager a write is recorded under (client-go: the binary name from User-Agent)."""
    if field_manager:
        return field_manager
    return user_agent.split("/", 1)[0].strip() or "unknown"


def _flatten(value: Any, prefix: Path, out: dict[Path, Any]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _flatten(item, (*prefix, f"f:{key}"), out)
    elif isinstance(value, list) and value and prefix == ("f:metadata", "f:finalizers"):
        for item in value:
            out[(*prefix, "v:" + json.dumps(item))] = item
    elif isinstance(value, list) and value and all(_list_key(i) for i in value):
        for item in value:
            element = (*prefix, _list_key(item))
            out[(*element, ".")] = None
            _flatten({k: v for k, v in item.items()}, element, out)
    else:
        out[prefix] = value


def _list_key(item: Any) -> str:
    if isinstance(item, dict):
        for key in ("uid", "name"):
            if isinstance(item.get(key), str):
                return "k:" + json.dumps({key: item[key]}, separators=(",", ":"))
    return ""


def field_paths(obj: Obj, status: bool) -> dict[Path, Any]:
    """Leaf field paths of ``obj`` with their values (``status``: only status; else not)."""
    out: dict[Path, Any] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind") or (key == "status") != status:
            continue
        if key == "metadata":
            meta = {k: v for k, v in value.items() if k not in _SKIP_META}
            _flatten(meta, ("f:metadata",), out)
        else:
            _flatten(value, (f"f:{key}",), out)
    return out


def _render(paths: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for part in path:
            node = node.setdefault(part, {})
    return tree


def _parse(tree: dict[str, Any], prefix: Path = ()) -> set[Path]:
    paths: set[Path] = set()
    for key, sub in tree.items():
        path = (*prefix, key)
        paths |= _parse(sub, path) if sub else {path}
    return paths


def update_managed_fields(
    new: Obj, old: Obj | None, manager: str, operation: str, api_version: str, subresource: str
) -> None:
    """Record in ``new.metadata.managedFields`` what ``manager`` set going from ``old``."""
    status = subresource == "status"
    new_paths = field_paths(new, status)
    old_paths = field_paths(old, status) if old is not None else {}
    changed = {p for p, v in new_paths.items() if p not in old_paths or old_paths[p] != v}
    entries = [dict(e) for e in (old or {}).get("metadata", {}).get("managedFields") or []]
    mine = None
    result = []
    for entry in entries:
        owned = _parse(entry.get("fieldsV1") or {})
        if (entry.get("manager"), entry.get("operation"), entry.get("subresource", "")) == (
            manager,
            operation,
            subresource,
        ):
            mine = entry
            continue
        if (entry.get("subresource", "") == "status") == status:
            owned = {p for p in owned - changed if p in new_paths}
        if owned:
            result.append({**entry, "fieldsV1": _render(owned)})
    owned_before = _parse(mine.get("fieldsV1") or {}) if mine else set()
    owned_now = {p for p in owned_before if p in new_paths} | changed
    if owned_now:
        entry = {
            "manager": manager,
            "operation": operation,
            "apiVersion": api_version,
            "time": now_time() if changed or mine is None else mine["time"],
            "fieldsType": "FieldsV1",
            "fieldsV1": _render(owned_now),
        }
        if subresource:
            entry["subresource"] = subresource
        result.append(entry)
    new["metadata"]["managedFields"] = result
    if not result:
        del new["metadata"]["managedFields"]


def _dotted(path: Path) -> str:
    """A field path as structured-merge-diff prints it (``.data.x``, ``[name="a"]``)."""
    text = ""
    for part in path:
        kind, _, rest = part.partition(":")
        if kind == "f":
            text += "." + rest
        elif kind == "k":
            keys = json.loads(rest)
            text += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in keys.items()) + "]"
        elif kind == "v":
            text += f"[={rest}]"
    return text


def apply_conflicts(
    applied: Obj, current: Obj, manager: str | None, subresource: str
) -> list[tuple[str, str]]:
    """Server-side apply conflicts: fields ``applied`` sets to a value other than the
    current one while another manager owns them, as ``(displayed manager, path)`` sorted by
    manager then path. An Update manager displays as ``"name" using apiVersion``."""
    status = subresource == "status"
    wanted = field_paths(applied, status)
    have = field_paths(current, status)
    found: list[tuple[str, str]] = []
    for entry in current.get("metadata", {}).get("managedFields") or []:
        if entry.get("manager") == manager and entry.get("operation") == "Apply":
            continue
        if (entry.get("subresource", "") == "status") != status:
            continue
        shown = json.dumps(entry.get("manager", ""))
        if entry.get("operation") == "Update":
            shown += f" using {entry.get('apiVersion', '')}"
        for path in sorted(_parse(entry.get("fieldsV1") or {})):
            if path in wanted and path in have and wanted[path] != have[path]:
                found.append((shown, _dotted(path)))
    return sorted(found)
