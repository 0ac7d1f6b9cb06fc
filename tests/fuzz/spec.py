"""What a kind offers the fuzzer: valid objects, mutations that invalidate them, updates."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

Obj = dict[str, Any]
Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Change:
    """One named change of an object (in place); its name is what a failure report shows."""

    name: str
    apply: Callable[[Obj], None]

    def __repr__(self) -> str:
        return self.name

    def applied(self, obj: Obj) -> Obj:
        """A changed deep copy of ``obj``."""
        changed = copy.deepcopy(obj)
        self.apply(changed)
        return changed


@dataclass(frozen=True)
class KindSpec:
    """One kind under fuzzing.

    Attributes:
        kind, api_version, plural, namespaced: what the requests address.
        valid: strategy of valid objects (``metadata.name`` set; the runner makes it unique
            and sets the namespace).
        invalid: strategy of changes that make any object of ``valid`` invalid.
        updates: strategy of changes of a stored object sent back with PUT (allowed ones
            and changes of immutable fields alike).
    """

    kind: str
    api_version: str
    plural: str
    namespaced: bool
    valid: st.SearchStrategy[Obj]
    invalid: st.SearchStrategy[Change]
    updates: st.SearchStrategy[Change]

    def path(self, namespace: str) -> str:
        """The collection's URL path."""
        prefix = "/api/" if "/" not in self.api_version else "/apis/"
        where = f"namespaces/{namespace}/" if self.namespaced else ""
        return f"{prefix}{self.api_version}/{where}{self.plural}"


def _split(path: str | Path) -> Path:
    if isinstance(path, tuple):
        return path
    return tuple(int(part) if part.isdigit() else part for part in path.split("."))


def _parent(obj: Obj, path: Path) -> Any:
    node: Any = obj
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
    return node


def put(path: str | Path, value: Any) -> Change:
    """Set ``path`` (dotted, list indexes as numbers, or a tuple) to ``value``."""
    keys = _split(path)

    def apply(obj: Obj) -> None:
        _parent(obj, keys)[keys[-1]] = copy.deepcopy(value)

    return Change(f"{'.'.join(map(str, keys))} = {value!r}", apply)


def drop(path: str | Path) -> Change:
    """Remove ``path`` (no error when it is absent)."""
    keys = _split(path)

    def apply(obj: Obj) -> None:
        parent = _parent(obj, keys)
        if isinstance(parent, dict):
            parent.pop(keys[-1], None)
        elif isinstance(keys[-1], int) and keys[-1] < len(parent):
            del parent[keys[-1]]

    return Change(f"del {'.'.join(map(str, keys))}", apply)


def changes(*options: Change) -> st.SearchStrategy[Change]:
    """One of fixed changes."""
    return st.sampled_from(options)


def put_drawn(path: str | Path, values: st.SearchStrategy[Any]) -> st.SearchStrategy[Change]:
    """:func:`put` of a drawn value."""
    return values.map(lambda value: put(path, value))
