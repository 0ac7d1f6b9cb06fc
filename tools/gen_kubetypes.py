"""Generate ``reconcile_kit/testing/apiserver/kubetypes.py`` from the Kubernetes API Go types.

The table it writes holds facts about the built-in kinds the embedded API server serves:
every struct field's JSON name, protobuf field number, Go type (pointer, slice, map) and
the markers that shape OpenAPI and strategic merge patch (``patchStrategy``,
``patchMergeKey``, ``+listType``, ``+listMapKey``, ``+mapType``, ``+structType``,
``+optional``). Nothing else (no comments, no code) is taken over.

Usage (the Go module proxy provides the sources)::

    GOMODCACHE=/tmp/gomod GOFLAGS=-mod=mod go mod download \\
        k8s.io/api@v0.32.0 k8s.io/apimachinery@v0.32.0 k8s.io/apiextensions-apiserver@v0.32.0
    python tools/gen_kubetypes.py /tmp/gomod/k8s.io v0.32.0 \\
        > reconcile_kit/testing/apiserver/kubetypes.py
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Go package -> (module directory relative to the k8s.io cache dir, OpenAPI name prefix)
PACKAGES = {
    "k8s.io/api/core/v1": ("api@{v}/core/v1", "io.k8s.api.core.v1"),
    "k8s.io/api/apps/v1": ("api@{v}/apps/v1", "io.k8s.api.apps.v1"),
    "k8s.io/api/batch/v1": ("api@{v}/batch/v1", "io.k8s.api.batch.v1"),
    "k8s.io/api/coordination/v1": ("api@{v}/coordination/v1", "io.k8s.api.coordination.v1"),
    "k8s.io/api/events/v1": ("api@{v}/events/v1", "io.k8s.api.events.v1"),
    "k8s.io/api/rbac/v1": ("api@{v}/rbac/v1", "io.k8s.api.rbac.v1"),
    "k8s.io/api/autoscaling/v1": ("api@{v}/autoscaling/v1", "io.k8s.api.autoscaling.v1"),
    "k8s.io/api/autoscaling/v2": ("api@{v}/autoscaling/v2", "io.k8s.api.autoscaling.v2"),
    "k8s.io/api/networking/v1": ("api@{v}/networking/v1", "io.k8s.api.networking.v1"),
    "k8s.io/api/discovery/v1": ("api@{v}/discovery/v1", "io.k8s.api.discovery.v1"),
    "k8s.io/api/policy/v1": ("api@{v}/policy/v1", "io.k8s.api.policy.v1"),
    "k8s.io/api/storage/v1": ("api@{v}/storage/v1", "io.k8s.api.storage.v1"),
    "k8s.io/api/certificates/v1": ("api@{v}/certificates/v1", "io.k8s.api.certificates.v1"),
    "k8s.io/api/scheduling/v1": ("api@{v}/scheduling/v1", "io.k8s.api.scheduling.v1"),
    "k8s.io/api/admissionregistration/v1": (
        "api@{v}/admissionregistration/v1",
        "io.k8s.api.admissionregistration.v1",
    ),
    "k8s.io/api/authentication/v1": (
        "api@{v}/authentication/v1",
        "io.k8s.api.authentication.v1",
    ),
    "k8s.io/api/authorization/v1": (
        "api@{v}/authorization/v1",
        "io.k8s.api.authorization.v1",
    ),
    "k8s.io/api/node/v1": ("api@{v}/node/v1", "io.k8s.api.node.v1"),
    "k8s.io/api/flowcontrol/v1": ("api@{v}/flowcontrol/v1", "io.k8s.api.flowcontrol.v1"),
    "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1": (
        "kube-aggregator@{v}/pkg/apis/apiregistration/v1",
        "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
    ),
    "k8s.io/apimachinery/pkg/apis/meta/v1": (
        "apimachinery@{v}/pkg/apis/meta/v1",
        "io.k8s.apimachinery.pkg.apis.meta.v1",
    ),
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1": (
        "apiextensions-apiserver@{v}/pkg/apis/apiextensions/v1",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
    ),
}

APIEXTENSIONS = "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1."

# Types with their own JSON/protobuf/OpenAPI form: name in the table.
SPECIAL = {
    "k8s.io/apimachinery/pkg/apis/meta/v1.Time": "Time",
    "k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime": "MicroTime",
    "k8s.io/apimachinery/pkg/apis/meta/v1.Duration": "Duration",
    "k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1": "FieldsV1",
    "k8s.io/apimachinery/pkg/api/resource.Quantity": "Quantity",
    "k8s.io/apimachinery/pkg/util/intstr.IntOrString": "IntOrString",
    "k8s.io/apimachinery/pkg/runtime.RawExtension": "RawExtension",
    "k8s.io/apimachinery/pkg/types.UID": "string",
    "k8s.io/apimachinery/pkg/types.NodeName": "string",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON": "JSON",
    APIEXTENSIONS + "JSONSchemaPropsOrArray": "JSONSchemaPropsOrArray",
    APIEXTENSIONS + "JSONSchemaPropsOrBool": "JSONSchemaPropsOrBool",
    APIEXTENSIONS + "JSONSchemaPropsOrStringArray": "JSONSchemaPropsOrStringArray",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaURL": "string",
}

SCALARS = {
    "string": "string",
    "bool": "bool",
    "int32": "int32",
    "int64": "int64",
    "int": "int64",
    "float64": "double",
    "float32": "float",
    "uint64": "int64",
    "byte": "int32",
}

# (group/version, kind) roots: the kinds the embedded server serves plus API meta kinds.
ROOTS = [
    (
        "k8s.io/api/core/v1",
        [
            "Namespace",
            "ConfigMap",
            "Secret",
            "Pod",
            "Service",
            "ServiceAccount",
            "Event",
            "Node",
            "Endpoints",
            "PersistentVolumeClaim",
            "PersistentVolume",
            "LimitRange",
            "PodTemplate",
            "ReplicationController",
            "ResourceQuota",
            "Binding",
            "ComponentStatus",
        ],
    ),
    (
        "k8s.io/api/apps/v1",
        ["Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "ControllerRevision"],
    ),
    ("k8s.io/api/batch/v1", ["Job", "CronJob"]),
    ("k8s.io/api/autoscaling/v2", ["HorizontalPodAutoscaler"]),
    ("k8s.io/api/networking/v1", ["Ingress", "IngressClass", "NetworkPolicy"]),
    ("k8s.io/api/discovery/v1", ["EndpointSlice"]),
    ("k8s.io/api/policy/v1", ["PodDisruptionBudget"]),
    (
        "k8s.io/api/storage/v1",
        ["StorageClass", "CSIStorageCapacity", "CSIDriver", "CSINode", "VolumeAttachment"],
    ),
    ("k8s.io/api/certificates/v1", ["CertificateSigningRequest"]),
    ("k8s.io/api/scheduling/v1", ["PriorityClass"]),
    ("k8s.io/api/coordination/v1", ["Lease"]),
    (
        "k8s.io/api/admissionregistration/v1",
        [
            "ValidatingWebhookConfiguration",
            "MutatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
        ],
    ),
    ("k8s.io/api/node/v1", ["RuntimeClass"]),
    ("k8s.io/api/flowcontrol/v1", ["FlowSchema", "PriorityLevelConfiguration"]),
    ("k8s.io/kube-aggregator/pkg/apis/apiregistration/v1", ["APIService"]),
    ("k8s.io/api/events/v1", ["Event"]),
    ("k8s.io/api/authentication/v1", ["TokenRequest", "TokenReview", "SelfSubjectReview"]),
    (
        "k8s.io/api/authorization/v1",
        [
            "SelfSubjectAccessReview",
            "SubjectAccessReview",
            "LocalSubjectAccessReview",
            "SelfSubjectRulesReview",
        ],
    ),
    ("k8s.io/api/rbac/v1", ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"]),
    ("k8s.io/api/autoscaling/v1", ["Scale", "HorizontalPodAutoscaler"]),
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", ["CustomResourceDefinition"]),
]
META_ROOTS = ["Status", "DeleteOptions", "WatchEvent", "Patch", "APIResourceList"]
API_VERSIONS = {
    "k8s.io/api/core/v1": "v1",
    "k8s.io/api/apps/v1": "apps/v1",
    "k8s.io/api/batch/v1": "batch/v1",
    "k8s.io/api/coordination/v1": "coordination.k8s.io/v1",
    "k8s.io/api/events/v1": "events.k8s.io/v1",
    "k8s.io/api/rbac/v1": "rbac.authorization.k8s.io/v1",
    "k8s.io/api/autoscaling/v1": "autoscaling/v1",
    "k8s.io/api/autoscaling/v2": "autoscaling/v2",
    "k8s.io/api/networking/v1": "networking.k8s.io/v1",
    "k8s.io/api/discovery/v1": "discovery.k8s.io/v1",
    "k8s.io/api/policy/v1": "policy/v1",
    "k8s.io/api/storage/v1": "storage.k8s.io/v1",
    "k8s.io/api/certificates/v1": "certificates.k8s.io/v1",
    "k8s.io/api/scheduling/v1": "scheduling.k8s.io/v1",
    "k8s.io/api/admissionregistration/v1": "admissionregistration.k8s.io/v1",
    "k8s.io/api/authentication/v1": "authentication.k8s.io/v1",
    "k8s.io/api/authorization/v1": "authorization.k8s.io/v1",
    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1": "apiextensions.k8s.io/v1",
    "k8s.io/api/node/v1": "node.k8s.io/v1",
    "k8s.io/api/flowcontrol/v1": "flowcontrol.apiserver.k8s.io/v1",
    "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1": "apiregistration.k8s.io/v1",
}


@dataclass
class GoField:
    name: str
    gotype: str
    tags: dict[str, str]
    markers: dict[str, list[str]]
    embedded: bool


@dataclass
class GoStruct:
    pkg: str
    name: str
    fields: list[GoField]
    markers: dict[str, list[str]] = field(default_factory=dict)


STRUCT_RE = re.compile(r"^type (\w+) struct \{\s*$")
NAMED_RE = re.compile(r"^type (\w+) (\S+)\s*$")
FIELD_RE = re.compile(r"^\t(\w+)\s+(\S+)\s+`([^`]*)`")
EMBED_RE = re.compile(r"^\t([\w.]+)\s+`([^`]*)`")
TAG_RE = re.compile(r'(\w+):"([^"]*)"')
MARKER_RE = re.compile(r"^\s*//\s*\+([\w:.-]+)(?:=(.*))?$")
IMPORT_RE = re.compile(r'^\s*(?:(\w+)\s+)?"([^"]+)"')


class Universe:
    def __init__(self, root: Path, version: str) -> None:
        self.structs: dict[str, GoStruct] = {}
        self.named: dict[str, str] = {}  # qualified name -> underlying go type (qualified)
        for pkg, (rel, _) in PACKAGES.items():
            for path in sorted((root / rel.format(v=version)).glob("*.go")):
                if path.name.endswith("_test.go") or path.name.startswith("zz_"):
                    continue
                self._parse(pkg, path.read_text())

    def _parse(self, pkg: str, text: str) -> None:
        imports: dict[str, str] = {}
        lines = text.splitlines()
        in_import = False
        for line in lines:
            if line.startswith("import ("):
                in_import = True
                continue
            if in_import:
                if line.startswith(")"):
                    in_import = False
                    continue
                m = IMPORT_RE.match(line)
                if m:
                    alias = m.group(1) or m.group(2).rsplit("/", 1)[-1]
                    imports[alias] = m.group(2)
            elif line.startswith("import "):
                m = IMPORT_RE.match(line[len("import ") :])
                if m:
                    imports[m.group(1) or m.group(2).rsplit("/", 1)[-1]] = m.group(2)
        markers: dict[str, list[str]] = {}
        i = 0
        while i < len(lines):
            line = lines[i]
            mm = MARKER_RE.match(line)
            if mm:
                markers.setdefault(mm.group(1), []).append(mm.group(2) or "")
            elif not line.startswith("//"):
                sm = STRUCT_RE.match(line)
                nm = NAMED_RE.match(line)
                if re.match(r"^type \w+ struct\s*\{\s*\}", line):
                    empty = line.split()[1]
                    self.structs[f"{pkg}.{empty}"] = GoStruct(pkg, empty, [], markers)
                elif sm:
                    i = self._parse_struct(pkg, sm.group(1), lines, i + 1, imports, markers)
                elif nm and nm.group(2) not in ("interface", "struct"):
                    self.named[f"{pkg}.{nm.group(1)}"] = self.qualify(nm.group(2), pkg, imports)
                markers = {}
            i += 1

    def _parse_struct(
        self,
        pkg: str,
        name: str,
        lines: list[str],
        i: int,
        imports: dict[str, str],
        markers: dict[str, list[str]],
    ) -> int:
        struct = GoStruct(pkg, name, [], markers)
        field_markers: dict[str, list[str]] = {}
        while not lines[i].startswith("}"):
            line = lines[i]
            mm = MARKER_RE.match(line)
            fm = FIELD_RE.match(line)
            em = EMBED_RE.match(line)
            if mm:
                field_markers.setdefault(mm.group(1), []).append(mm.group(2) or "")
            elif fm:
                tags = dict(TAG_RE.findall(fm.group(3)))
                struct.fields.append(
                    GoField(
                        fm.group(1),
                        self.qualify(fm.group(2), pkg, imports),
                        tags,
                        field_markers,
                        False,
                    )
                )
                field_markers = {}
            elif em:
                tags = dict(TAG_RE.findall(em.group(2)))
                struct.fields.append(
                    GoField("", self.qualify(em.group(1), pkg, imports), tags, field_markers, True)
                )
                field_markers = {}
            elif line.strip() and not line.strip().startswith("//"):
                field_markers = {}
            i += 1
        self.structs[f"{pkg}.{name}"] = struct
        return i

    @staticmethod
    def qualify(gotype: str, pkg: str, imports: dict[str, str]) -> str:
        """Qualify a Go type: ``metav1.Time`` to ``k8s.io/.../meta/v1.Time``."""

        def one(token: str) -> str:
            if token in SCALARS or token == "":
                return token
            if "." in token:
                alias, name = token.split(".", 1)
                return f"{imports.get(alias, alias)}.{name}"
            return f"{pkg}.{token}"

        out = ""
        rest = gotype
        while rest:
            if rest.startswith("*"):
                out, rest = out + "*", rest[1:]
            elif rest.startswith("[]"):
                out, rest = out + "[]", rest[2:]
            elif rest.startswith("map["):
                key, rest = rest[4:].split("]", 1)
                out += f"map[{one(key)}]"
            else:
                out, rest = out + one(rest), ""
        return out


class Generator:
    def __init__(self, universe: Universe) -> None:
        self.u = universe
        self.messages: dict[str, list[str]] = {}
        self.atomic: set[str] = set()  # +structType=atomic / +mapType=atomic on the type
        self.pending: list[str] = []

    def openapi_name(self, qualified: str) -> str:
        pkg, name = qualified.rsplit(".", 1)
        return f"{PACKAGES[pkg][1]}.{name}"

    def resolve(self, gotype: str) -> str:
        """The table's type expression for a qualified Go type (pointer markers dropped)."""
        if gotype.startswith("*"):
            return self.resolve(gotype[1:])
        if gotype == "[]byte" or gotype == "[]k8s.io/api/core/v1.byte":
            return "bytes"
        if gotype.startswith("[]"):
            return "[]" + self.resolve(gotype[2:])
        if gotype.startswith("map["):
            return "map[]" + self.resolve(gotype.split("]", 1)[1])
        if gotype in SCALARS:
            return SCALARS[gotype]
        if gotype in SPECIAL:
            special = SPECIAL[gotype]
            if special.startswith("JSONSchemaProps"):
                self.want(
                    "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaProps"
                )
            return special
        if gotype in self.u.named:
            return self.resolve(self.u.named[gotype])
        if gotype in self.u.structs:
            self.want(gotype)
            return self.openapi_name(gotype)
        raise KeyError(f"unknown Go type {gotype}")

    def want(self, qualified: str) -> None:
        name = self.openapi_name(qualified)
        if name not in self.messages and qualified not in self.pending:
            self.pending.append(qualified)

    def run(self) -> None:
        while self.pending:
            qualified = self.pending.pop(0)
            name = self.openapi_name(qualified)
            if name in self.messages:
                continue
            self.messages[name] = []
            struct = self.u.structs[qualified]
            self.messages[name] = self.fields(struct)
            if "atomic" in (
                *struct.markers.get("structType", []),
                *struct.markers.get("mapType", []),
            ):
                self.atomic.add(name)

    def fields(self, struct: GoStruct) -> list[str]:
        rows = []
        for f in struct.fields:
            json_tag = f.tags.get("json", "")
            json_name, _, opts = json_tag.partition(",")
            if json_name == "-":
                continue
            proto = f.tags.get("protobuf", "")
            number = int(proto.split(",")[1]) if proto else 0
            inline = "inline" in opts.split(",") or (f.embedded and not json_tag)
            gotype = f.gotype
            flags = ""
            if gotype.startswith("*"):
                flags += "p"
            if "omitempty" in opts.split(","):
                flags += "o"
            if inline:
                flags += "i"
                json_name = ""
            if "optional" not in f.markers and "omitempty" not in opts.split(",") and not inline:
                flags += "q"
            ext: list[tuple[str, str]] = []
            strategy = f.tags.get("patchStrategy") or (f.markers.get("patchStrategy") or [""])[0]
            merge_key = f.tags.get("patchMergeKey") or (f.markers.get("patchMergeKey") or [""])[0]
            if strategy:
                ext.append(("x-kubernetes-patch-strategy", strategy))
            if merge_key:
                ext.append(("x-kubernetes-patch-merge-key", merge_key))
            for marker, key in (
                ("listType", "x-kubernetes-list-type"),
                ("mapType", "x-kubernetes-map-type"),
                ("structType", "x-kubernetes-map-type"),
            ):
                if marker in f.markers:
                    ext.append((key, f.markers[marker][0]))
            if "listMapKey" in f.markers:
                ext.append(("x-kubernetes-list-map-keys", ",".join(f.markers["listMapKey"])))
            type_expr = self.resolve(gotype)
            if f.embedded and gotype.endswith(".TypeMeta"):
                type_expr = "io.k8s.apimachinery.pkg.apis.meta.v1.TypeMeta"
                self.want("k8s.io/apimachinery/pkg/apis/meta/v1.TypeMeta")
            row = f"        F({number}, {json_name!r}, {type_expr!r}"
            if flags or ext:
                row += f", {flags!r}"
            if ext:
                row += f", {tuple(ext)!r}"
            rows.append(row + "),")
        return rows


def main() -> None:
    root, version = Path(sys.argv[1]), sys.argv[2]
    universe = Universe(root, version)
    gen = Generator(universe)
    kinds: list[tuple[str, str, str]] = []
    for pkg, names in ROOTS:
        for name in names:
            for kind in (name, name + "List"):
                qualified = f"{pkg}.{kind}"
                if qualified in universe.structs:
                    gen.want(qualified)
                    kinds.append((API_VERSIONS[pkg], kind, gen.openapi_name(qualified)))
    for name in META_ROOTS:
        gen.want(f"k8s.io/apimachinery/pkg/apis/meta/v1.{name}")
    gen.run()
    out = [
        "# ruff: noqa: E501",
        '"""Built-in Kubernetes API types as data (generated by tools/gen_kubetypes.py from',
        f"k8s.io/api, k8s.io/apimachinery and k8s.io/apiextensions-apiserver {version}).",
        "",
        "Each message lists its fields: protobuf field number (0 = not in the wire format),",
        "JSON name ('' = inlined), type expression, flags (p = pointer, o = omitempty,",
        "i = inline, q = required) and OpenAPI extensions. Type expressions are scalars",
        "(string, bytes, bool, int32, int64, double, float), special types (Time, MicroTime,",
        "Duration, Quantity, IntOrString, RawExtension, FieldsV1, JSON, JSONSchemaProps*),",
        "OpenAPI names of other messages, ``[]T`` slices and ``map[]T`` maps with string keys.",
        "DO NOT EDIT: regenerate instead.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import NamedTuple",
        "",
        "",
        "class F(NamedTuple):",
        '    """One struct field of a Kubernetes API type."""',
        "",
        "    number: int",
        "    name: str",
        "    type: str",
        '    flags: str = ""',
        "    ext: tuple[tuple[str, str], ...] = ()",
        "",
        "",
        f'SOURCE_VERSION = "{version}"',
        "",
        "MESSAGES: dict[str, tuple[F, ...]] = {",
    ]
    for name in sorted(gen.messages):
        rows = gen.messages[name]
        if not rows:
            out.append(f"    {name!r}: (),")
            continue
        out.append(f"    {name!r}: (")
        out.extend(rows)
        out.append("    ),")
    out.append("}")
    out.append("")
    out.append("# messages whose type is atomic (+structType=atomic / +mapType=atomic)")
    out.append("ATOMIC: frozenset[str] = frozenset(")
    out.append("    {")
    out.extend(f"        {name!r}," for name in sorted(gen.atomic))
    out.append("    }")
    out.append(")")
    out.append("")
    out.append("# (apiVersion, kind) -> message")
    out.append("KINDS: dict[tuple[str, str], str] = {")
    for api_version, kind, name in kinds:
        out.append(f"    ({api_version!r}, {kind!r}): {name!r},")
    out.append("}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
