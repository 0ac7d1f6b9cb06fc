"""Typed operations of server-side apply: field sets, merge, compare, remove.

Each follows structured-merge-diff's ``typed`` package (ToFieldSet, Merge, Compare,
RemoveItems, and fieldpath's EnsureNamedFieldsAreMembers) on plain JSON values walked
with a :class:`~.fieldtypes.FieldType`. ``MISSING`` stands for an absent value (Go's
nil), ``None`` for JSON null.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .fieldsets import Path, PathSet, go_json
from .fieldtypes import (
    BOOLEAN,
    LIST,
    MAP,
    NUMERIC,
    SCALAR,
    STRING,
    STRUCT,
    FieldType,
    resolve,
)
from .gofmt import go_interface, go_syntax


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class StructuredError(ValueError):
    """A value that does not fit its type (duplicate or keyless list items)."""


def _atomic_list(t: FieldType, value: Any) -> bool:
    return t.kind != LIST or t.list_type == "atomic" or not isinstance(value, list)


def item_element(t: FieldType, item: Any) -> str:
    """The path element of ``item`` in list type ``t`` (``k:{...}`` or ``v:...``)."""
    if t.list_type == "set":
        return "v:" + go_json(item)
    if not isinstance(item, dict):
        raise StructuredError("associative list with keys may not have non-map elements")
    key = {}
    for name in t.keys:
        if name in item:
            key[name] = item[name]
        elif name in t.key_defaults:
            key[name] = t.key_defaults[name]
        else:
            raise StructuredError(
                f'associative list with keys has an element that omits key field "{name}"'
                " (and doesn't have default value)"
            )
    return "k:" + go_json(key)


def _items(t: FieldType, items: list[Any], path: Path) -> list[str]:
    try:
        return [item_element(t, item) for item in items]
    except StructuredError as err:
        raise StructuredError(f"{_where(path)}: {err}") from None


def _where(path: Path) -> str:
    from .fieldsets import dotted

    return dotted(path) or "."


def _is_map(value: Any) -> bool:
    return isinstance(value, dict)


def _empty(value: Any) -> bool:
    return value is MISSING or value is None or value == {} or value == []


# --- ToFieldSet --------------------------------------------------------------------------


def to_field_set(value: Any, t: FieldType) -> set[Path]:
    """The paths ``value`` sets: leaves, list items, undeclared map keys, empty maps."""
    out: set[Path] = set()
    _field_set(value, t, (), out)
    return out


def _field_set(value: Any, t: FieldType, path: Path, out: set[Path]) -> None:
    kind = resolve(t, value)
    if kind == SCALAR or (kind in (STRUCT, MAP) and not _is_map(value) and value is not None):
        out.add(path)
    elif kind == LIST:
        if _atomic_list(t, value):
            out.add(path)
        elif value:
            _list_field_set(value, t, path, out)
    elif t.atomic:
        out.add(path)
    elif value:
        for key, child in value.items():
            child_type, declared = t.child(key)
            sub = (*path, f"f:{key}")
            _field_set(child, child_type, sub, out)
            if child is None or child == {} or not declared:
                out.add(sub)


def _list_field_set(items: list[Any], t: FieldType, path: Path, out: set[Path]) -> None:
    elements = _items(t, items, path)
    seen: set[str] = set()
    duplicates = {e for e in elements if e in seen or seen.add(e)}  # type: ignore[func-returns-value]
    for element in duplicates:
        out.add((*path, element))
    assert t.elem is not None
    for element, item in zip(elements, items, strict=True):
        if element not in duplicates:
            sub = (*path, element)
            _field_set(item, t.elem, sub, out)
            out.add(sub)


def ensure_named_fields(paths: set[Path], t: FieldType) -> set[Path]:
    """``paths`` plus every struct field on the way to them (EnsureNamedFieldsAreMembers)."""
    out = set(paths)
    for path in paths:
        node = t
        for i, part in enumerate(path):
            if part.startswith("f:"):
                child, declared = node.child(part[2:])
                if declared and node.kind == STRUCT:
                    out.add(path[: i + 1])
                node = child
            else:
                node = node.elem or node
    return out


# --- Validation ----------------------------------------------------------------------------


def config_errors(value: Any, t: FieldType) -> list[str]:
    """What typed validation refuses in an applied configuration: a value of another type
    than its schema's (scalar, map or list), map-list items without their keys, duplicate
    set or map-list items, fields a struct does not declare (structured-merge-diff
    ``typed.Validate``, fields in sorted order where Go's map order is random)."""
    out: list[str] = []
    _config_errors(value, t, (), out)
    return out


def _type_error(value: Any, t: FieldType) -> str | None:
    """structured-merge-diff's refusal of ``value`` (not null) for type ``t``, worded as its
    validateScalar, mapValue and listValue word it (``%#v``, ``%v`` and ``%T`` of the
    value.Value over the decoded JSON)."""
    if t.kind in (STRUCT, MAP) and not isinstance(value, dict):
        return f"expected map, got &{{{go_interface(value)}}}"
    if t.kind == LIST and not isinstance(value, list):
        return f"expected list, got &{{{go_interface(value)}}}"
    if t.kind != SCALAR or not t.scalar:
        return None
    if t.scalar == STRING and not isinstance(value, str):
        return f"expected string, got &value.valueUnstructured{{Value:{go_syntax(value)}}}"
    if t.scalar == BOOLEAN and not isinstance(value, bool):
        return f"expected boolean, got &{{{go_interface(value)}}}"
    if t.scalar == NUMERIC and (isinstance(value, bool) or not isinstance(value, int | float)):
        return f"expected numeric (int or float), got {_go_type(value)}"
    return None


def _go_type(value: Any) -> str:
    """``%T`` of ``value`` decoded into interface{} by apimachinery."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    return {int: "int64", float: "float64"}.get(type(value), "string")


def _config_errors(value: Any, t: FieldType, path: Path, out: list[str]) -> None:
    if value is None:
        return
    refused = _type_error(value, t)
    if refused is not None:
        out.append(f"{_where(path)}: {refused}" if path else refused)
        return
    kind = resolve(t, value)
    if kind == LIST and isinstance(value, list) and t.kind == LIST and t.list_type == "atomic":
        assert t.elem is not None
        for index, item in enumerate(value):
            _config_errors(item, t.elem, (*path, f"i:{index}"), out)
    elif kind == LIST and isinstance(value, list) and not _atomic_list(t, value):
        assert t.elem is not None
        seen: set[str] = set()
        for index, item in enumerate(value):
            try:
                element = item_element(t, item)
            except StructuredError as err:
                out.append(f"{_where(path)}: element {index}: {err}")
                continue
            if element in seen:
                out.append(f"{_where(path)}: duplicate entries for key {_where((element,))}")
            seen.add(element)
            _config_errors(item, t.elem, (*path, element), out)
    elif kind in (STRUCT, MAP) and isinstance(value, dict) and not t.atomic:
        for key in sorted(value):
            child, declared = t.child(key)
            if kind == STRUCT and not declared and t.elem is None:
                # validatingObjectWalker.visitMapItems: the map's walk stops here
                out.append(f"{_where((*path, f'f:{key}'))}: field not declared in schema")
                return
            _config_errors(value[key], child, (*path, f"f:{key}"), out)


def duplicate_causes(value: Any, t: FieldType, path: str = "") -> list[tuple[str, str]]:
    """``(field, message)`` for duplicate items of set and map lists in a stored object, as
    kube-apiserver's custom resource validation words them (FieldValueDuplicate)."""
    out: list[tuple[str, str]] = []
    kind = resolve(t, value)
    if kind == LIST and isinstance(value, list) and not _atomic_list(t, value):
        assert t.elem is not None
        seen: set[str] = set()
        for index, item in enumerate(value):
            try:
                element = item_element(t, item)
            except StructuredError:
                continue  # a missing key is the schema's "Required value"
            if element in seen and element not in {e for e, _ in out}:
                out.append((element, f"{path}[{index}]"))
            seen.add(element)
        causes = [(f, f"Duplicate value: {_go_value(t, value, f)}") for _, f in out]
        for index, item in enumerate(value):
            causes += duplicate_causes(item, t.elem, f"{path}[{index}]")
        return causes
    if kind in (STRUCT, MAP) and isinstance(value, dict) and not t.atomic:
        causes = []
        for key, child in value.items():
            sub = f"{path}.{key}" if path else key
            causes += duplicate_causes(child, t.child(key)[0], sub)
        return causes
    return []


def _go_value(t: FieldType, items: list[Any], field: str) -> str:
    """The duplicate as Go's %#v prints it: a string quoted, a map of the key fields."""
    item = items[int(field.rsplit("[", 1)[1].rstrip("]"))]
    if t.list_type == "set":
        return go_json(item)
    keys = {k: item[k] for k in sorted(t.keys) if k in item}
    inner = ", ".join(f"{go_json(k)}:{go_json(v)}" for k, v in keys.items())
    return "map[string]interface {}{" + inner + "}"


# --- Merge -------------------------------------------------------------------------------


def merge(lhs: Any, rhs: Any, t: FieldType) -> Any:
    """``rhs`` (an applied configuration) merged onto ``lhs`` (the live object)."""
    if rhs is MISSING:
        return lhs
    if lhs is MISSING:
        return rhs
    kind = resolve(t, rhs if rhs is not None else lhs)
    if kind == SCALAR or (resolve(t, lhs) != resolve(t, rhs) and None not in (lhs, rhs)):
        return rhs
    if kind == LIST:
        if _atomic_list(t, rhs if rhs is not None else lhs) or (_empty(lhs) and _empty(rhs)):
            return rhs
        return _merge_list(lhs or [], rhs or [], t)
    if t.atomic or (_empty(lhs) and _empty(rhs)) or not _is_map(lhs or {}):
        return rhs
    lhs, rhs = lhs or {}, rhs or {}
    out = {}
    for key in [*lhs, *(k for k in rhs if k not in lhs)]:
        value = merge(lhs.get(key, MISSING), rhs.get(key, MISSING), t.child(key)[0])
        if value is not MISSING:
            out[key] = value
    return out


def _merge_list(lhs: list[Any], rhs: list[Any], t: FieldType) -> Any:
    """structured-merge-diff's list merge: live order kept, new items where they fit."""
    assert t.elem is not None
    r_pes = _items(t, rhs, ())
    if len(set(r_pes)) != len(r_pes):
        dup = next(pe for pe in r_pes if r_pes.count(pe) > 1)
        raise StructuredError(f"duplicate entries for key {dup}")
    r_obs = dict(zip(r_pes, rhs, strict=True))
    l_pes = _items(t, lhs, ())
    l_obs: dict[str, Any] = {}
    for pe, item in zip(l_pes, lhs, strict=True):
        l_obs[pe] = MISSING if pe in l_obs else item  # a duplicated live item: take rhs
    shared = [pe for pe in r_pes if pe in l_obs]
    next_shared = shared.pop(0) if shared else None
    merged_rhs: set[str] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(l_pes) or ri < len(r_pes):
        if li < len(l_pes) and ri < len(r_pes):
            pe = l_pes[li]
            if pe == r_pes[ri]:
                merged_rhs.add(pe)
                out.append(merge(l_obs[pe], r_obs[pe], t.elem))
                li, ri = li + 1, ri + 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in r_obs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(l_pes):
            pe = l_pes[li]
            if pe not in r_obs:
                out.append(lhs[li])
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
        if ri < len(r_pes):
            pe = r_pes[ri]
            merged_rhs.add(pe)
            out.append(merge(l_obs.get(pe, MISSING), r_obs[pe], t.elem))
            ri += 1
            if next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out if out else MISSING


# --- Compare -----------------------------------------------------------------------------


@dataclass
class Comparison:
    """Paths ``rhs`` added, modified and removed relative to ``lhs`` (typed.Comparison)."""

    added: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    removed: set[Path] = field(default_factory=set)

    def exclude(self, ignored: PathSet) -> None:
        """Drop ``ignored`` paths and everything below them (RecursiveDifference)."""
        for paths in (self.added, self.modified, self.removed):
            paths -= {p for p in paths if any(p[:i] in ignored for i in range(1, len(p) + 1))}


def compare(lhs: Any, rhs: Any, t: FieldType) -> Comparison:
    """What changed from ``lhs`` to ``rhs`` (both whole objects of type ``t``)."""
    result = Comparison()
    _compare(lhs, rhs, t, (), result)
    return result


def _compare(lhs: Any, rhs: Any, t: FieldType, path: Path, c: Comparison) -> None:
    if lhs is not MISSING and rhs is not MISSING and lhs == rhs:
        return  # equal values differ nowhere (and this is most of an object)
    kind_l = resolve(t, lhs) if lhs is not MISSING else None
    kind_r = resolve(t, rhs) if rhs is not MISSING else None
    kind = kind_r or kind_l
    leaf = (
        kind == SCALAR
        or (kind_l and kind_r and kind_l != kind_r and None not in (lhs, rhs))
        or (kind == LIST and (_atomic_list(t, _value(rhs, lhs)) or _both_empty(lhs, rhs)))
        or (kind in (STRUCT, MAP) and (t.atomic or _both_empty(lhs, rhs)))
    )
    if leaf:
        if lhs is MISSING:
            c.added.add(path)
        elif rhs is MISSING:
            c.removed.add(path)
        elif lhs != rhs:
            c.modified.add(path)
        return
    if kind == LIST:
        _compare_lists(_list(lhs), _list(rhs), t, path, c)
    else:
        _compare_maps(lhs, rhs, t, path, c)
    if path and lhs is MISSING:
        c.added.add(path)
    elif path and rhs is MISSING:
        c.removed.add(path)


def _value(rhs: Any, lhs: Any) -> Any:
    return rhs if rhs not in (MISSING, None) else lhs


def _both_empty(lhs: Any, rhs: Any) -> bool:
    return _empty(lhs) and _empty(rhs)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _compare_maps(lhs: Any, rhs: Any, t: FieldType, path: Path, c: Comparison) -> None:
    left = _with_implicit(lhs, t)
    right = _with_implicit(rhs, t)
    for key in [*left, *(k for k in right if k not in left)]:
        child = t.child(key)[0]
        _compare(left.get(key, MISSING), right.get(key, MISSING), child, (*path, f"f:{key}"), c)


def _with_implicit(value: Any, t: FieldType) -> dict[str, Any]:
    """A map as Go holds it: non-pointer structs and non-omitempty lists always there."""
    if not _is_map(value):
        return {}
    if not t.implicit:
        return dict(value)
    return {**{k: v for k, v in t.implicit.items()}, **value}


def _compare_lists(lhs: list[Any], rhs: list[Any], t: FieldType, path: Path, c: Comparison) -> None:
    assert t.elem is not None
    left: dict[str, list[Any]] = {}
    for pe, item in zip(_items(t, lhs, path), lhs, strict=True):
        left.setdefault(pe, []).append(item)
    right: dict[str, list[Any]] = {}
    for pe, item in zip(_items(t, rhs, path), rhs, strict=True):
        right.setdefault(pe, []).append(item)
    for pe in [*left, *(p for p in right if p not in left)]:
        ls, rs = left.get(pe, []), right.get(pe, [])
        sub = (*path, pe)
        if len(ls) <= 1 and len(rs) <= 1:
            _compare(ls[0] if ls else MISSING, rs[0] if rs else MISSING, t.elem, sub, c)
        elif len(ls) >= 2 and len(rs) >= 2:
            if ls != rs:
                c.modified.add(sub)
        elif len(ls) >= 2:
            if rs:
                _compare(MISSING, rs[0], t.elem, sub, c)
            c.removed.add(sub)
        else:
            if ls:
                _compare(ls[0], MISSING, t.elem, sub, c)
            c.added.add(sub)


# --- RemoveItems -------------------------------------------------------------------------


def remove_items(value: Any, paths: PathSet, t: FieldType, path: Path = ()) -> Any:
    """``value`` without the members of ``paths`` (and all below them). A map or list
    emptied by the removal becomes null, as in structured-merge-diff (a custom resource's
    schema then refuses a null where it wants an object)."""
    kind = resolve(t, value)
    if kind == SCALAR or _empty(value):
        return value
    if kind == LIST:
        if _atomic_list(t, value):
            return value
        assert t.elem is not None
        kept = []
        for pe, item in zip(_items(t, value, path), value, strict=True):
            sub = (*path, pe)
            if sub in paths:
                continue
            if paths.below(sub):
                item = remove_items(item, paths, t.elem, sub)
            kept.append(item)
        return kept if kept else None
    if t.atomic or not _is_map(value):
        return value
    out = {}
    for key, child in value.items():
        sub = (*path, f"f:{key}")
        if sub in paths:
            continue
        if paths.below(sub):
            child = remove_items(child, paths, t.child(key)[0], sub)
        out[key] = child
    return out if out else None
