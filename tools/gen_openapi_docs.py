"""Generate ``reconcile_kit/testing/apiserver/openapi_docs.json.gz``: the descriptions (and
enums) of the built-in schemas kube-apiserver serves in ``/openapi/v3``.

kube-apiserver (and the apiextensions-apiserver it embeds) builds its OpenAPI definitions
from generated Go code, ``pkg/generated/openapi/zz_generated.openapi.go`` of the
k8s.io/kubernetes module: every type's ``Description`` and, per property, its
``Description`` and ``Enum`` (what ``+enum`` types add, with the "Possible enum values" the
description then ends with). This tool reads that file (the Go module proxy provides it;
``scripts/build-control-plane`` downloads it anyway) and keeps only what ``kubectl explain``
prints and the embedded server lacks (and the properties' defaults), for the messages of
:mod:`reconcile_kit.testing.apiserver.kubetypes` and the special types (Time, Quantity, ...)
of :mod:`reconcile_kit.testing.apiserver.openapi`:

    {"<OpenAPI name>": ["<type description>",
                        {"<property>": ["<description>", [enum...](, default)]}
                        (, "<x-kubernetes-map-type>")]}

(an empty enum list: none; a default only where kube-apiserver's schema has one), JSON,
gzip-compressed (about 120 KB; the descriptions of the checked-in ``api/openapi-spec`` lack
the enums kube-apiserver serves).

Usage::

    GOFLAGS=-mod=mod go mod download k8s.io/kubernetes@v1.32.5 k8s.io/api@v0.32.5
    python tools/gen_openapi_docs.py "$(go env GOMODCACHE)/k8s.io" v1.32.5
"""

from __future__ import annotations

import ast
import gzip
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reconcile_kit.testing.apiserver.kubetypes import MESSAGES  # noqa: E402
from reconcile_kit.testing.apiserver.openapi import SPECIAL_SCHEMA_NAMES  # noqa: E402

OUT = ROOT / "reconcile_kit/testing/apiserver/openapi_docs.json.gz"
_ENTRY = re.compile(r'^\t\t"([^"]+)":\s+(schema_\w+)\(ref\),$', re.M)
_FUNC = re.compile(r"^func (schema_\w+)\(ref common\.ReferenceCallback\)", re.M)
_PROPERTY = re.compile(r'^\t{5}"([^"]+)": \{$')
_DESCRIPTION = re.compile(r'^(\t+)Description:\s+(".*"),$')
_ENUM = re.compile(r"^\t{7}Enum:\s+\[\]interface\{\}\{(.*)\},$")
_MAP_TYPE = re.compile(r'^\t{5}"x-kubernetes-map-type": "(\w+)",$')
_DEFAULT = re.compile(r"^\t{7}Default:\s+(.*),$")
_GO_CONST = re.compile(r'^\t(\w+)\s+\w+\s+=\s+(".*")$', re.M)


def openapi_name(go_name: str) -> str:
    """``k8s.io/api/apps/v1.Deployment`` -> ``io.k8s.api.apps.v1.Deployment`` (kube-openapi
    ``util.ToRESTFriendlyName``)."""
    path, _, kind = go_name.rpartition(".")
    domain, _, rest = path.partition("/")
    reversed_domain = ".".join(reversed(domain.split(".")))
    return f"{reversed_domain}.{rest.replace('/', '.')}.{kind}"


def _bodies(source: str) -> dict[str, list[str]]:
    starts = [(m.group(1), m.start()) for m in _FUNC.finditer(source)]
    bodies = {}
    for index, (name, start) in enumerate(starts):
        end = starts[index + 1][1] if index + 1 < len(starts) else len(source)
        bodies[name] = source[start:end].splitlines()
    return bodies


def _schema_docs(lines: list[str], constants: dict[str, str]) -> list[object]:
    """[type description, {property: [description, enum(, default)]}(, map type)] of one
    generated function (a default only where the generated code sets one; the type's
    ``x-kubernetes-map-type`` when it has one)."""
    description, map_type = "", ""
    properties: dict[str, list[object]] = {}
    current: str | None = None
    for line in lines:
        if m := _PROPERTY.match(line):
            current = m.group(1)
            properties[current] = ["", []]
        elif (m := _DESCRIPTION.match(line)) and len(m.group(1)) in (4, 7):
            text = ast.literal_eval(m.group(2))
            if len(m.group(1)) == 4:
                description = text
            elif current is not None:
                properties[current][0] = text
        elif (m := _ENUM.match(line)) and current is not None:
            properties[current][1] = list(ast.literal_eval(f"[{m.group(1)}]"))
        elif (m := _DEFAULT.match(line)) and current is not None:
            properties[current].append(_go_value(m.group(1), constants))
        elif m := _MAP_TYPE.match(line):
            map_type = m.group(1)
    return [description, properties, map_type] if map_type else [description, properties]


def _go_value(text: str, constants: dict[str, str]) -> object:
    """A ``Default:`` expression of the generated code as JSON."""
    if text == "map[string]interface{}{}":
        return {}
    if text in ("true", "false"):
        return text == "true"
    if text.startswith("v1."):
        return constants[text[3:]]
    return ast.literal_eval(text)


def core_constants(path: Path) -> dict[str, str]:
    """The string constants of k8s.io/api core/v1 (defaults name some)."""
    return {name: ast.literal_eval(value) for name, value in _GO_CONST.findall(path.read_text())}


def definitions(path: Path, constants: dict[str, str]) -> dict[str, list[object]]:
    source = path.read_text()
    bodies = _bodies(source)
    return {
        openapi_name(go_name): _schema_docs(bodies[func], constants)
        for go_name, func in _ENTRY.findall(source)
    }


def main(modcache: str, kubernetes: str) -> None:
    generated = Path(modcache) / f"kubernetes@{kubernetes}/pkg/generated/openapi"
    api = Path(modcache) / f"api@v0{kubernetes.removeprefix('v1')}/core/v1/types.go"
    found = definitions(generated / "zz_generated.openapi.go", core_constants(api))
    names = set(MESSAGES) | SPECIAL_SCHEMA_NAMES
    wanted = {name: found[name] for name in sorted(names) if name in found}
    missing = sorted(names - set(found))
    print(f"{len(wanted)} schemas; not in the generated code: {missing}", file=sys.stderr)
    raw = json.dumps(wanted, separators=(",", ":"), sort_keys=True).encode()
    OUT.write_bytes(gzip.compress(raw, 9, mtime=0))
    print(f"{OUT}: {OUT.stat().st_size} bytes ({len(raw)} uncompressed)", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:3])
