"""Generate ``reconcile_kit/testing/apiserver/validation/gostructs.py`` from the Go types.

kube-apiserver's validation messages print some bad values with Go's ``%#v``: a Job's
immutable pod template prints the whole internal ``core.PodTemplateSpec``. Rendering it
needs, for every struct reachable from the template by value (pointers print as addresses,
not followed), its fields in declaration order, their Go types and the JSON names of the
served (v1) types; and the underlying type of the named types. Nothing else is taken over.

Usage (the Go module cache holds the sources)::

    python tools/gen_gostructs.py ~/go/pkg/mod/k8s.io v1.32.5 v0.32.5 \\
        > reconcile_kit/testing/apiserver/validation/gostructs.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOTS = ("core.PodTemplateSpec", "core.ObjectReference", "core.EventSource")
_FIELD = re.compile(r"^\s*([A-Z]\w*)\s+([^\s`]+)\s*(`.*`)?\s*$")
_EMBEDDED = re.compile(r"^\s*([\w.]+)\s*(`.*`)?\s*$")
_JSON = re.compile(r'json:"([^",]*)')
_NAMED = re.compile(r"^type (\w+) (\S.*?)\s*(//.*)?$")
# Go import aliases in the sources -> the package name %#v prints
_ALIASES = {"metav1": "v1", "resource": "resource", "intstr": "intstr", "types": "types"}
# Types whose rendering is written by hand (gorender.py): not expanded
_OPAQUE = {"resource.Quantity", "intstr.IntOrString", "v1.Time", "v1.FieldsV1"}


def _qualify(expr: str, package: str) -> str:
    """A Go type expression with every named type qualified by its printed package."""

    def name(match: re.Match[str]) -> str:
        token = match.group(0)
        if "." in token:
            alias, rest = token.split(".", 1)
            return f"{_ALIASES.get(alias, alias)}.{rest}"
        if token in ("string", "bool", "byte", "int", "int32", "int64", "uint16", "float64"):
            return token
        return f"{package}.{token}"

    masked = expr.replace("map[", "\0")
    return re.sub(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)?", name, masked).replace("\0", "map[")


def _parse(
    path: Path, package: str
) -> tuple[dict[str, list[tuple[str, str, str]]], dict[str, str]]:
    """The structs (name -> [(Go field, Go type, JSON name)]) and named non-struct types of
    a types.go; an embedded field's name is its type's and its JSON name ``""``."""
    structs: dict[str, list[tuple[str, str, str]]] = {}
    named: dict[str, str] = {}
    current: list[tuple[str, str, str]] | None = None
    for line in path.read_text().splitlines():
        if current is None:
            start = re.match(r"^type (\w+) struct \{\s*$", line)
            if start:
                current = structs.setdefault(f"{package}.{start.group(1)}", [])
                continue
            other = _NAMED.match(line)
            if other and not other.group(2).startswith(("struct", "interface", "=")):
                named[f"{package}.{other.group(1)}"] = _qualify(other.group(2), package)
            continue
        stripped = line.strip()
        if stripped == "}":
            current = None
            continue
        if not stripped or stripped.startswith("//"):
            continue
        tag = re.search(r"`.*`", line)
        json_name = "?"  # internal types have no tags: the served type's name is taken
        if tag:
            found = _JSON.search(tag.group(0))
            json_name = found.group(1) if found else "?"
        field = _FIELD.match(line)
        if field:
            current.append((field.group(1), _qualify(field.group(2), package), json_name))
            continue
        embedded = _EMBEDDED.match(line)
        if embedded:
            go_type = _qualify(embedded.group(1), package)
            current.append((go_type.split(".")[-1], go_type, "" if json_name == "?" else json_name))
    return structs, named


def _element(go_type: str) -> str | None:
    """The struct a field holds by value (itself, a slice's element, a map's value)."""
    if go_type.startswith("*"):
        return None
    if go_type.startswith("[]"):
        return _element(go_type[2:])
    if go_type.startswith("map["):
        return _element(go_type[go_type.index("]") + 1 :])
    return go_type


def main(cache: str, kube_version: str, api_version: str) -> None:
    base = Path(cache).expanduser()
    internal, named = _parse(base / f"kubernetes@{kube_version}/pkg/apis/core/types.go", "core")
    served, _ = _parse(base / f"api@{api_version}/core/v1/types.go", "core")
    meta, meta_named = _parse(base / f"apimachinery@{api_version}/pkg/apis/meta/v1/types.go", "v1")
    named |= meta_named
    structs = internal | meta
    wanted: dict[str, list[tuple[str, str, str]]] = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in wanted or name in _OPAQUE or name not in structs:
            continue
        fields = []
        for go_name, go_type, json_name in structs[name]:
            if name.startswith("core."):  # internal types: the served type's tag
                json_name = {g: j for g, _, j in served.get(name, [])}.get(go_name, json_name)
            if json_name == "?":
                json_name = go_name[:1].lower() + go_name[1:]
            fields.append((go_name, go_type, json_name))
            element = _element(named.get(go_type, go_type))
            if element is not None:
                element = _element(named.get(element, element))
            if element is not None and element in structs:
                todo.append(element)
        wanted[name] = fields
    out = [
        '"""Go struct layouts for ``%#v`` renderings (generated by tools/gen_gostructs.py from',
        f"k8s.io/kubernetes {kube_version} pkg/apis/core and k8s.io/apimachinery {api_version}",
        'pkg/apis/meta/v1: do not edit)."""',
        "",
        "STRUCTS: dict[str, tuple[tuple[str, str, str], ...]] = {",
    ]
    for name in sorted(wanted):
        out.append(f"    {name!r}: (")
        out += [f"        ({g!r}, {t!r}, {j!r})," for g, t, j in wanted[name]]
        out.append("    ),")
    out += [
        "}",
        '"""Struct -> its fields in order: (Go name, Go type, JSON name; "" when embedded)."""',
        "",
        "NAMED: dict[str, str] = {",
    ]
    out += [f"    {k!r}: {v!r}," for k, v in sorted(named.items())]
    out += ["}", '"""Named non-struct types -> their underlying type."""', ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main(*sys.argv[1:4])
