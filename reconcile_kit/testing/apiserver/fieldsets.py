"""Field sets: the paths a manager owns, and their ``FieldsV1`` form.

A path is a tuple of path elements written as in ``FieldsV1`` (structured-merge-diff
``fieldpath``): ``f:<field>`` for a struct field or map key, ``k:{"name":"x"}`` for an
item of a map list, ``v:"x"`` for an item of a set list. A set holds its member paths;
``FieldsV1`` nests them and marks a member that also has children with ``"."``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

Path = tuple[str, ...]


def go_json(value: Any) -> str:
    """``value`` as Go's encoding/json writes it (sorted keys, no spaces, HTML escaped)."""
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


class PathSet:
    """A set of member paths that answers "is any member below this path" in O(1)."""

    def __init__(self, members: Iterable[Path] = ()) -> None:
        self.members = set(members)
        self._prefixes: set[Path] | None = None

    def below(self, path: Path) -> bool:
        """Whether some member lies strictly below ``path``."""
        if self._prefixes is None:
            self._prefixes = {m[:i] for m in self.members for i in range(len(m))}
        return path in self._prefixes

    def __contains__(self, path: object) -> bool:
        return path in self.members


def decode(fields_v1: dict[str, Any] | None) -> set[Path]:
    """The member paths of a ``FieldsV1`` tree."""
    out: set[Path] = set()

    def walk(node: dict[str, Any], prefix: Path) -> None:
        for key, sub in node.items():
            if key == ".":
                out.add(prefix)
            elif sub:
                walk(sub, (*prefix, key))
            else:
                out.add((*prefix, key))

    walk(fields_v1 or {}, ())
    return out


def encode(paths: Iterable[Path]) -> dict[str, Any]:
    """The ``FieldsV1`` tree of member ``paths`` (``"."`` for members with children)."""
    tree: dict[str, Any] = {}
    members = set(paths)
    for path in sorted(members):
        node = tree
        for part in path:
            node = node.setdefault(part, {})
    _mark(tree, (), members)
    return tree


def _mark(node: dict[str, Any], prefix: Path, members: set[Path]) -> None:
    for key, sub in node.items():
        path = (*prefix, key)
        if sub:
            _mark(sub, path, members)
            if path in members:
                sub["."] = {}
    if node and prefix:
        items = sorted(node.items(), key=lambda kv: (kv[0] != ".", kv[0]))
        node.clear()
        node.update(items)


def dotted(path: Path) -> str:
    """A path as structured-merge-diff prints it: ``.spec.ports[port=80,protocol="TCP"]``."""
    text = ""
    for part in path:
        kind, _, rest = part.partition(":")
        if kind == "f":
            text += "." + rest
        elif kind == "k":
            keys = json.loads(rest)
            text += "[" + ",".join(f"{k}={go_json(v)}" for k, v in keys.items()) + "]"
        elif kind == "v":
            text += f"[={rest}]"
        elif kind == "i":
            text += f"[{rest}]"
    return text
