"""Generate ``reconcile_kit/testing/apiserver/gotypenames.py`` from the Kubernetes API Go types.

Go's encoding/json names the Go type a JSON value could not be stored in
(``json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type
int32``), as reflect prints it: ``v1.Protocol``, ``types.UID``, ``v1.ResourceList``. The
structural type of kubetypes.py gives most of these names (``int32``, ``[]v1.Container``);
this table holds the fields whose Go type is a named type (a string enum, a named map or
slice), and the underlying type of each named type. Nothing else is taken over.

Usage (the Go module cache holds the sources)::

    python tools/gen_gotypenames.py ~/go/pkg/mod/k8s.io v0.32.5 \\
        > reconcile_kit/testing/apiserver/gotypenames.py
    ruff format reconcile_kit/testing/apiserver/gotypenames.py
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_HERE = Path(__file__).with_name("gen_kubetypes.py")
_SPEC = importlib.util.spec_from_file_location("gen_kubetypes", _HERE)
assert _SPEC and _SPEC.loader
kubetypes_gen = importlib.util.module_from_spec(_SPEC)
sys.modules["gen_kubetypes"] = kubetypes_gen
_SPEC.loader.exec_module(kubetypes_gen)

_BUILTIN = {"string", "bool", "int32", "int64", "int", "float64", "float32", "uint64", "byte"}
# types with their own UnmarshalJSON: named by the decoder after what they unmarshal into
_OWN = {
    "k8s.io/apimachinery/pkg/apis/meta/v1.Time",
    "k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime",
    "k8s.io/apimachinery/pkg/apis/meta/v1.Duration",
    "k8s.io/apimachinery/pkg/api/resource.Quantity",
    "k8s.io/apimachinery/pkg/util/intstr.IntOrString",
    "k8s.io/apimachinery/pkg/runtime.RawExtension",
    "k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1",
}
# named types of packages the universe does not parse
_EXTERNAL = {"k8s.io/apimachinery/pkg/types.UID": "string"}


def reflect_name(gotype: str) -> str:
    """reflect.Type.String() of a qualified Go type (pointers dropped: the decoder
    dereferences them)."""
    gotype = gotype.lstrip("*")
    if gotype.startswith("[]"):
        return "[]" + ("uint8" if gotype[2:].endswith("byte") else reflect_name(gotype[2:]))
    if gotype.startswith("map["):
        key, elem = gotype[4:].split("]", 1)
        return f"map[{reflect_name(key)}]{reflect_name(elem)}"
    if gotype in _BUILTIN:
        return gotype
    pkg, _, name = gotype.rpartition(".")
    return f"{pkg.rsplit('/', 1)[-1]}.{name}"


def structural(gotype: str, universe: object) -> str:
    """The name the type expression of kubetypes.py gives (named types resolved)."""
    gotype = gotype.lstrip("*")
    named: dict[str, str] = universe.named  # type: ignore[attr-defined]
    if gotype.startswith("[]"):
        return "[]" + ("uint8" if gotype[2:].endswith("byte") else structural(gotype[2:], universe))
    if gotype.startswith("map["):
        return "map[string]" + structural(gotype[4:].split("]", 1)[1], universe)
    if gotype in named and gotype not in _OWN:
        return structural(named[gotype], universe)
    return reflect_name(gotype)


def main() -> None:
    root, version = Path(sys.argv[1]), sys.argv[2]
    universe = kubetypes_gen.Universe(root, version)
    universe.named.update(_EXTERNAL)
    gen = kubetypes_gen.Generator(universe)
    for pkg, names in kubetypes_gen.ROOTS:
        for name in names:
            if f"{pkg}.{name}" in universe.structs:
                gen.want(f"{pkg}.{name}")
    for name in kubetypes_gen.META_ROOTS:
        gen.want(f"k8s.io/apimachinery/pkg/apis/meta/v1.{name}")
    gen.run()
    fields: dict[tuple[str, str], str] = {}
    used: set[str] = set()
    for qualified, struct in universe.structs.items():
        pkg = qualified.rsplit(".", 1)[0]
        if pkg not in kubetypes_gen.PACKAGES or gen.openapi_name(qualified) not in gen.messages:
            continue
        for f in struct.fields:
            json_name = f.tags.get("json", "").split(",")[0]
            if not json_name or json_name == "-" or f.gotype.lstrip("*") in _OWN:
                continue
            name = reflect_name(f.gotype)
            if name != structural(f.gotype, universe):
                fields[(gen.openapi_name(qualified), json_name)] = name
                used.add(f.gotype.lstrip("*"))
    named = {}
    pending = list(used)
    while pending:
        gotype = pending.pop()
        for part in gotype.replace("map[", " ").replace("]", " ").replace("[", " ").split():
            part = part.lstrip("*")
            if part in universe.named and part not in _OWN and reflect_name(part) not in named:
                named[reflect_name(part)] = reflect_name(universe.named[part])
                pending.append(universe.named[part])
    out = [
        '"""Go type names of built-in API fields, as Go\'s encoding/json prints them (generated',
        f"by tools/gen_gotypenames.py from k8s.io/api and k8s.io/apimachinery {version}).",
        "",
        "FIELDS: (OpenAPI message, JSON field) -> the reflect name of a field whose Go type is",
        "a named type (where kubetypes.py's structural type would name it otherwise).",
        "UNDERLYING: named type -> the reflect name of its underlying type.",
        "DO NOT EDIT: regenerate instead.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f'SOURCE_VERSION = "{version}"',
        "",
        "FIELDS: dict[tuple[str, str], str] = {",
    ]
    out += [f"    ({m!r}, {j!r}): {t!r}," for (m, j), t in sorted(fields.items())]
    out += ["}", "", "UNDERLYING: dict[str, str] = {"]
    out += [f"    {k!r}: {v!r}," for k, v in sorted(named.items())]
    out += ["}"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
