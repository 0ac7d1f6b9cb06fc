"""OpenAPI v3 documents (``/openapi/v3`` and ``/openapi/v3/<group-version>``).

What clients read from them, and therefore what is served:

* ``kubectl create/apply/replace`` (default ``--validate=strict``) asks whether the server
  validates fields itself: it looks in the group/version document for a PATCH operation
  whose ``x-kubernetes-group-version-kind`` is the object's kind and whose parameters
  include ``fieldValidation`` (cli-runtime ``query_param_verifier_v3.go``). When found it
  sends ``fieldValidation=Strict`` and leaves validation to the server; when not, it
  falls back to ``/openapi/v2`` and errors if that is missing.
* ``kubectl apply`` (client-side) computes a strategic merge patch from the component
  schema carrying the kind in ``x-kubernetes-group-version-kind`` when the PATCH
  operation's ``requestBody`` accepts ``application/strategic-merge-patch+json``
  (kubectl ``apply/patcher.go``); it walks ``properties``, ``allOf[0]``, ``$ref``,
  ``items`` and reads ``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key``.
  Custom resources do not accept strategic merge, so kubectl uses a JSON merge patch.
* ``kubectl explain`` reads the component schemas.

Built-in schemas are derived from :mod:`.kubetypes` (the Go API types' JSON names, types
and patch markers), with kube-apiserver's descriptions and enums from :mod:`.openapidocs`;
custom resource schemas from each served CRD version's ``openAPIV3Schema`` with
``apiVersion``, ``kind`` and ``metadata`` (and their descriptions) added, named
``<reversed group>.<version>.<Kind>`` as the apiextensions-apiserver does.

Document URLs carry ``?hash=`` (the uppercase hex SHA-512 of the document, as
kube-openapi's handler3 computes it); a request with a stale hash is redirected (301) to
the current one, and a current one is served with ``Cache-Control: public, immutable``,
so kubectl's disk cache never serves a schema that changed. ``/openapi/v2`` (protobuf)
is not served; kubectl only falls back to it when v3 does not answer its question.
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from ...client.contenttypes import (
    APPLY_PATCH,
    JSON,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    YAML,
)
from . import protobuf
from .discovery import KUBERNETES_VERSION
from .kubetypes import KINDS, MESSAGES, F
from .openapidocs import describe, field_description
from .openapiextensions import CRD_DELETE_OPTIONS_GVKS, extensions
from .registry import Registry
from .resources import ResourceType

Doc = dict[str, Any]

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
REF_PREFIX = "#/components/schemas/"
PATCH_TYPES = (APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH)
_CR_RESPONSE_TYPES = (JSON, YAML)
_RESPONSE_TYPES = (*_CR_RESPONSE_TYPES, protobuf.MEDIA_TYPE)
_CR_WATCH_TYPES = (JSON, JSON + ";stream=watch", YAML)
_WATCH_TYPES = (*_CR_WATCH_TYPES, protobuf.MEDIA_TYPE, protobuf.MEDIA_TYPE + ";stream=watch")

# Components whose JSON form is not an object of fields (their Go types marshal themselves).
_SPECIAL_SCHEMAS: dict[str, tuple[str, Doc]] = {
    "Time": (META + "Time", {"type": "string", "format": "date-time"}),
    "MicroTime": (META + "MicroTime", {"type": "string", "format": "date-time"}),
    "Duration": (META + "Duration", {"type": "string"}),
    "FieldsV1": (META + "FieldsV1", {"type": "object"}),
    "Quantity": (
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        {"oneOf": [{"type": "string"}, {"type": "number"}]},
    ),
    "IntOrString": (
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    ),
    "RawExtension": ("io.k8s.apimachinery.pkg.runtime.RawExtension", {"type": "object"}),
    "JSON": ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON", {}),
    "JSONSchemaPropsOrArray": (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        {},
    ),
    "JSONSchemaPropsOrBool": (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        {},
    ),
    "JSONSchemaPropsOrStringArray": (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
        {},
    ),
}
SPECIAL_SCHEMA_NAMES = {name for name, _ in _SPECIAL_SCHEMAS.values()}
_SCALARS: dict[str, Doc] = {
    "string": {"type": "string"},
    "bytes": {"type": "string", "format": "byte"},
    "bool": {"type": "boolean"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "double": {"type": "number", "format": "double"},
    "float": {"type": "number", "format": "float"},
}
_SCALAR_DEFAULTS: dict[str, Any] = {  # []byte is a slice: kube-openapi gives it none
    "string": "",
    "bool": False,
    "int32": 0,
    "int64": 0,
    "double": 0,
    "float": 0,
}
_GVK_BY_MESSAGE: dict[str, list[Doc]] = {}
for (_api_version, _kind), _message in KINDS.items():
    _group, _, _version = _api_version.rpartition("/")
    _GVK_BY_MESSAGE.setdefault(_message, []).append(
        {"group": _group, "kind": _kind, "version": _version}
    )


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _ref(name: str) -> Doc:
    return {"$ref": REF_PREFIX + name}


# --- component schemas of built-in types ----------------------------------------------------


def _type_schema(type_expr: str, pointer: bool, refs: set[str]) -> Doc:
    """The schema of a field (or list item / map value) of type ``type_expr``."""
    if type_expr.startswith("[]"):
        return {"type": "array", "items": _type_schema(type_expr[2:], False, refs)}
    if type_expr.startswith("map[]"):
        return {
            "type": "object",
            "additionalProperties": _type_schema(type_expr[len("map[]") :], False, refs),
        }
    if type_expr in _SCALARS:
        schema = dict(_SCALARS[type_expr])
        if not pointer and type_expr in _SCALAR_DEFAULTS:
            schema["default"] = _SCALAR_DEFAULTS[type_expr]
        return schema
    name = _SPECIAL_SCHEMAS[type_expr][0] if type_expr in _SPECIAL_SCHEMAS else type_expr
    refs.add(name)
    if pointer or type_expr in _SPECIAL_SCHEMAS:
        return _ref(name)
    return {"allOf": [_ref(name)], "default": {}}


def _field_schema(f: F, refs: set[str]) -> Doc:
    schema = _type_schema(f.type, "p" in f.flags, refs)
    for key, value in f.ext:
        schema[key] = value.split(",") if key == "x-kubernetes-list-map-keys" else value
    return schema


def _flatten(message: str) -> list[F]:
    """The fields of ``message`` with inlined structs (TypeMeta, VolumeSource) expanded."""
    out: list[F] = []
    for f in MESSAGES[message]:
        if "i" in f.flags:
            out.extend(_flatten(f.type))
        else:
            out.append(f)
    return out


def builtin_schema(message: str, refs: set[str]) -> Doc:
    """The OpenAPI v3 schema of one built-in message; names it refers to go into ``refs``."""
    if message in {name for name, _ in _SPECIAL_SCHEMAS.values()}:
        return next(dict(schema) for name, schema in _SPECIAL_SCHEMAS.values() if name == message)
    fields = _flatten(message)
    schema: Doc = {"type": "object"}
    if fields:
        schema["properties"] = {f.name: _field_schema(f, refs) for f in fields}
    required = [f.name for f in fields if "q" in f.flags]
    if required:
        schema["required"] = required
    if message in _GVK_BY_MESSAGE:
        schema["x-kubernetes-group-version-kind"] = _GVK_BY_MESSAGE[message]
    if message == META + "Patch":
        schema = {"type": "object"}
    return {**schema, **extensions(message)}


def _add_closure(schemas: Doc, roots: list[str]) -> None:
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in schemas:
            continue
        refs: set[str] = set()
        schemas[name] = describe(name, builtin_schema(name, refs))
        pending.extend(sorted(refs - set(schemas)))


# --- custom resource schemas --------------------------------------------------------------


def cr_schema_name(rt: ResourceType, list_kind: bool = False) -> str:
    """``com.example.v1.Widget``: the component name of a custom resource kind."""
    reversed_group = ".".join(reversed(rt.group.split(".")))
    return f"{reversed_group}.{rt.version}.{rt.list_kind if list_kind else rt.kind}"


_OBJECT_META_DOC = (
    "Standard object's metadata. More info:"
    " https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_LIST_META_DOC = (
    "Standard list metadata. More info:"
    " https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)


def _type_meta_properties() -> Doc:
    """apiVersion and kind as the apiextensions-apiserver adds them (TypeMeta's schemas)."""
    return {
        name: {"description": field_description(META + "TypeMeta", name), "type": "string"}
        for name in ("apiVersion", "kind")
    }


def _cr_schemas(rt: ResourceType) -> Doc:
    """The kind and list schemas of a custom resource version, as the apiextensions-apiserver's
    OpenAPI builder (``buildKubeNative``, ``buildListSchema``) writes them."""
    schema: Doc = copy.deepcopy(rt.schema) if rt.schema else {"type": "object"}
    schema.setdefault("type", "object")
    properties = schema.setdefault("properties", {})
    properties.update(_type_meta_properties())
    properties["metadata"] = {"allOf": [_ref(META + "ObjectMeta")], "description": _OBJECT_META_DOC}
    gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
    schema["x-kubernetes-group-version-kind"] = [gvk]
    selectable = [{"fieldPath": path} for path in rt.field_labels]
    schema["x-kubernetes-selectable-fields"] = selectable
    items_doc = (
        f"List of {rt.plural}. More info:"
        " https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
    )
    list_schema: Doc = {
        "description": f"{rt.list_kind} is a list of {rt.kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            **_type_meta_properties(),
            "items": {
                "description": items_doc,
                "type": "array",
                "items": _ref(cr_schema_name(rt)),
            },
            "metadata": {"allOf": [_ref(META + "ListMeta")], "description": _LIST_META_DOC},
        },
        "x-kubernetes-group-version-kind": [{**gvk, "kind": rt.list_kind}],
        "x-kubernetes-selectable-fields": selectable,
    }
    return {cr_schema_name(rt): schema, cr_schema_name(rt, True): list_schema}


# --- paths --------------------------------------------------------------------------------


def _param(name: str, kind: str, where: str = "query", required: bool = False) -> Doc:
    param: Doc = {"name": name, "in": where, "schema": {"type": kind, "uniqueItems": True}}
    if required:
        param["required"] = True
    return param


_PRETTY = _param("pretty", "string")
SCALE_GVK = {"group": "autoscaling", "kind": "Scale", "version": "v1"}
_LIST_PARAMS = [
    _param("allowWatchBookmarks", "boolean"),
    _param("continue", "string"),
    _param("fieldSelector", "string"),
    _param("labelSelector", "string"),
    _param("limit", "integer"),
    _param("resourceVersion", "string"),
    _param("resourceVersionMatch", "string"),
    _param("sendInitialEvents", "boolean"),
    _param("timeoutSeconds", "integer"),
    _param("watch", "boolean"),
]
_WRITE_PARAMS = [
    _param("dryRun", "string"),
    _param("fieldManager", "string"),
    _param("fieldValidation", "string"),
]
_DELETE_PARAMS = [
    _param("dryRun", "string"),
    _param("gracePeriodSeconds", "integer"),
    _param("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean"),
    _param("orphanDependents", "boolean"),
    _param("propagationPolicy", "string"),
]


def _camel_group_version(rt: ResourceType) -> str:
    group = rt.group.removesuffix(".k8s.io") if rt.builtin else rt.group
    parts = [p for chunk in group.split(".") for p in chunk.split("-") if p] or ["core"]
    return "".join(p[:1].upper() + p[1:] for p in parts) + rt.version[:1].upper() + rt.version[1:]


def _tag_group(rt: ResourceType) -> str:
    """The group as an operation's tag names it: ``rbacAuthorization``, ``core``."""
    group = rt.group.removesuffix(".k8s.io") if rt.builtin else rt.group
    parts = [p for chunk in group.split(".") for p in chunk.split("-") if p] or ["core"]
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def _content(schema_name: str, types: tuple[str, ...]) -> Doc:
    return {t: {"schema": _ref(schema_name)} for t in types}


def _by_name(params: list[Doc]) -> list[Doc]:
    return sorted(params, key=lambda p: str(p["name"]))


def _hoist(item: Doc) -> Doc:
    """A path item as kube-openapi's builder3 writes it: the parameters every operation
    has move to the path's (sorted by name); an operation left with none has no
    ``parameters``."""
    ops = [op for key, op in item.items() if key != "parameters"]
    names = [{p["name"] for p in op.get("parameters", [])} for op in ops]
    shared = set.intersection(*names) if names else set()
    hoisted = {p["name"]: p for op in ops for p in op.get("parameters", []) if p["name"] in shared}
    for op in ops:
        kept = [p for p in op.pop("parameters", []) if p["name"] not in shared]
        if kept:
            op["parameters"] = _by_name(kept)
    item["parameters"] = _by_name([*item.get("parameters", []), *hoisted.values()])
    return item


def _documents_deleted_object(rt: ResourceType) -> bool:
    """Whether a DELETE's answer is documented as the object: the kinds whose store returns
    it, but a Namespace's (its REST wraps the store without its rest.MayReturnFullObjectDeleter,
    so kube-apiserver's installer documents a Status, though the Namespace is answered)."""
    return rt.delete_returns_object and not (
        rt.builtin and (rt.group, rt.plural) == ("", "namespaces")
    )


class _PathBuilder:
    def __init__(self, rt: ResourceType, kind_schema: str, list_schema: str) -> None:
        self.rt = rt
        self.kind_schema = kind_schema
        self.list_schema = list_schema
        self.types = _RESPONSE_TYPES if rt.builtin else _CR_RESPONSE_TYPES
        self.watch_types = _WATCH_TYPES if rt.builtin else _CR_WATCH_TYPES
        self.list_types = self.watch_types if rt.builtin else self.types
        self.body_types = ("*/*",) if rt.builtin else self.types[:2]
        self.tag = _tag_group(rt) + "_" + rt.version
        self.gv = _camel_group_version(rt)

    def _op(
        self,
        action: str,
        op_id: str,
        params: list[Doc],
        response: str,
        kind: Doc,
        codes: tuple[str, ...] = ("200",),
        body: Doc | None = None,
        types: tuple[str, ...] = (),
    ) -> Doc:
        op: Doc = {
            "tags": [self.tag],
            "description": f"{action} {kind['kind']}",
            "operationId": op_id,
            "parameters": params,
            "responses": {
                **{
                    code: {
                        "description": "OK" if code == "200" else "Created",
                        "content": _content(response, types or self.types),
                    }
                    for code in codes
                },
                "401": {"description": "Unauthorized"},
            },
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": kind,
        }
        if body is not None:
            op["requestBody"] = body
        return op

    def collection(self, all_namespaces: bool) -> Doc:
        rt = self.rt
        gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
        scope = "Namespaced" if rt.namespaced and not all_namespaces else ""
        suffix = "ForAllNamespaces" if all_namespaces else ""
        item: Doc = {}
        if "list" in rt.verbs:
            item["get"] = self._op(
                "list",
                f"list{self.gv}{scope}{rt.kind}{suffix}",
                _LIST_PARAMS,
                self.list_schema,
                gvk,
                types=self.list_types,
            )
        if all_namespaces:
            item["parameters"] = [_PRETTY]
            return _hoist(item)
        if "create" in rt.verbs:
            item["post"] = self._op(
                "post",
                f"create{self.gv}{scope}{rt.kind}",
                _WRITE_PARAMS,
                self.kind_schema,
                gvk,
                ("200", "201", "202"),
                {"content": _content(self.kind_schema, self.body_types), "required": True},
            )
        if "deletecollection" in rt.verbs:
            item["delete"] = self._delete_collection(scope, gvk)
        item["parameters"] = [*self._scope_params(), _PRETTY]
        return _hoist(item)

    def _delete_collection(self, scope: str, gvk: Doc) -> Doc:
        """kube-apiserver's deletecollection takes DeleteOptions and the list options but
        ``watch`` and ``allowWatchBookmarks``; a CRD document's (apiextensions-apiserver's
        builder) lists only the list options and no body."""
        op_id = f"delete{self.gv}Collection{scope}{self.rt.kind}"
        if not self.rt.builtin:
            return self._op("deletecollection", op_id, _LIST_PARAMS, META + "Status", gvk)
        unwatched = [p for p in _LIST_PARAMS if p["name"] not in ("watch", "allowWatchBookmarks")]
        return self._op(
            "deletecollection",
            op_id,
            _by_name([*_DELETE_PARAMS, *unwatched]),
            META + "Status",
            gvk,
            body={"content": _content(META + "DeleteOptions", self.body_types)},
        )

    def watch(self, all_namespaces: bool, named: bool) -> Doc:
        """A deprecated ``/watch/...`` path (kube-apiserver still lists them)."""
        rt = self.rt
        gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
        scope = "Namespaced" if rt.namespaced and not all_namespaces else ""
        suffix = "" if named else "List" + ("ForAllNamespaces" if all_namespaces else "")
        op = self._op("watch" if named else "watchlist", "", [], META + "WatchEvent", gvk)
        del op["parameters"]
        op["operationId"] = f"watch{self.gv}{scope}{rt.kind}{suffix}"
        op["description"] = (
            f"watch changes to an object of kind {rt.kind}. deprecated: use the 'watch'"
            " parameter with a list operation instead, filtered to a single item with the"
            " 'fieldSelector' parameter."
            if named
            else f"watch individual changes to a list of {rt.kind}. deprecated: use the"
            " 'watch' parameter with a list operation instead."
        )
        op["responses"]["200"]["content"] = _content(META + "WatchEvent", self.watch_types)
        params = [*_LIST_PARAMS, _PRETTY]
        if not all_namespaces:
            params += self._scope_params(named)
        return {"get": op, "parameters": _by_name(params)}

    def _scope_params(self, named: bool = False) -> list[Doc]:
        params = [_param("name", "string", "path", True)] if named else []
        if self.rt.namespaced:
            params.append(_param("namespace", "string", "path", True))
        return params

    def item(self, subresource: str = "") -> Doc:
        rt = self.rt
        scope = "Namespaced" if rt.namespaced else ""
        gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
        schema = self.kind_schema
        if subresource == "scale":  # a CRD document names the custom kind (its builder's)
            gvk = SCALE_GVK if rt.builtin else gvk
            schema = "io.k8s.api.autoscaling.v1.Scale"
        name = f"{self.gv}{scope}{rt.kind}{subresource.capitalize()}"
        patch_types = (
            PATCH_TYPES if rt.builtin else tuple(t for t in PATCH_TYPES if "strategic" not in t)
        )
        item: Doc = {}
        if "get" in rt.verbs:
            read_params = [] if rt.builtin else [_param("resourceVersion", "string")]
            item["get"] = self._op("get", f"read{name}", read_params, schema, gvk)
        if "update" in rt.verbs:
            item["put"] = self._op(
                "put",
                f"replace{name}",
                _WRITE_PARAMS,
                schema,
                gvk,
                ("200", "201"),
                {"content": _content(schema, self.body_types), "required": True},
            )
        if "patch" in rt.verbs:
            item["patch"] = self._op(
                "patch",
                f"patch{name}",
                [*_WRITE_PARAMS, _param("force", "boolean")],
                schema,
                gvk,
                ("200", "201") if rt.builtin else ("200",),
                {
                    "content": {t: {"schema": _ref(META + "Patch")} for t in patch_types},
                    "required": True,
                },
            )
        if "delete" in rt.verbs and not subresource:
            item["delete"] = self._op(
                "delete",
                f"delete{name}",
                _DELETE_PARAMS,
                self.kind_schema if _documents_deleted_object(rt) else META + "Status",
                gvk,
                ("200", "202"),
                {"content": _content(META + "DeleteOptions", self.body_types)},
            )
        item["parameters"] = [*self._scope_params(named=True), _PRETTY]
        return _hoist(item)


def _resources_path(rt: ResourceType) -> Doc:
    """The group/version's discovery path (``/apis/apps/v1/``), which kube-apiserver's
    built-in groups list (a CRD group's document has none)."""
    builder = _PathBuilder(rt, "", "")
    return {
        f"/{_gv_path(rt.group, rt.version)}/": {
            "get": {
                "tags": [builder.tag],
                "description": "get available resources",
                "operationId": f"get{builder.gv}APIResources",
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": _content(META + "APIResourceList", _RESPONSE_TYPES),
                    },
                    "401": {"description": "Unauthorized"},
                },
            }
        }
    }


def _referenced(doc: Any, into: set[str]) -> set[str]:
    """The component schemas ``doc`` (paths, a schema) refers to by ``$ref``."""
    if isinstance(doc, dict):
        ref = doc.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            into.add(ref[len(REF_PREFIX) :])
        for value in doc.values():
            _referenced(value, into)
    elif isinstance(doc, list):
        for value in doc:
            _referenced(value, into)
    return into


def _watch_paths(rt: ResourceType, builder: _PathBuilder) -> Doc:
    prefix = f"/{_gv_path(rt.group, rt.version)}/watch"
    base = (
        f"{prefix}/namespaces/{{namespace}}/{rt.plural}"
        if rt.namespaced
        else f"{prefix}/{rt.plural}"
    )
    paths = {base: builder.watch(False, False), f"{base}/{{name}}": builder.watch(False, True)}
    if rt.namespaced:
        paths[f"{prefix}/{rt.plural}"] = builder.watch(True, False)
    return paths


def _paths(rt: ResourceType, kind_schema: str, list_schema: str) -> Doc:
    prefix = "/" + _gv_path(rt.group, rt.version)
    builder = _PathBuilder(rt, kind_schema, list_schema)
    base = (
        f"{prefix}/namespaces/{{namespace}}/{rt.plural}"
        if rt.namespaced
        else f"{prefix}/{rt.plural}"
    )
    paths: Doc = {base: builder.collection(False)}
    if any(verb in rt.verbs for verb in ("get", "update", "patch", "delete")):
        paths[f"{base}/{{name}}"] = builder.item()
    if rt.namespaced and "list" in rt.verbs:
        paths[f"{prefix}/{rt.plural}"] = builder.collection(True)
    if "watch" in rt.verbs and rt.builtin:  # a CRD document has no /watch/ paths
        paths.update(_watch_paths(rt, builder))
    if rt.status:
        paths[f"{base}/{{name}}/status"] = builder.item("status")
    if rt.scale is not None:
        paths[f"{base}/{{name}}/scale"] = builder.item("scale")
    return paths


# --- documents ----------------------------------------------------------------------------


def _parse_gv_path(gv_path: str) -> tuple[str, str] | None:
    parts = gv_path.strip("/").split("/")
    if parts[0] == "api" and len(parts) == 2:
        return "", parts[1]
    if parts[0] == "apis" and len(parts) == 3:
        return parts[1], parts[2]
    return None


_BUILTIN_INFO = {  # the effective version's major.minor (apiserver config.go)
    "title": "Kubernetes",
    "version": ".".join(KUBERNETES_VERSION.lstrip("v").split(".")[:2]),
}
_CRD_INFO = {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}


def _build(types: list[ResourceType]) -> Doc:
    paths: Doc = {}
    schemas: Doc = {}
    for rt in sorted(types, key=lambda r: r.plural):
        message = KINDS.get((rt.api_version, rt.kind))
        list_message = KINDS.get((rt.api_version, rt.list_kind))
        if message is not None:  # a built-in kind; the create-only ones have no list
            kind_schema, list_schema = message, list_message or ""
        else:
            kind_schema, list_schema = cr_schema_name(rt), cr_schema_name(rt, True)
            schemas.update(_cr_schemas(rt))
        paths.update(_paths(rt, kind_schema, list_schema))
    builtin = all(rt.builtin for rt in types)
    if types and builtin:
        paths.update(_resources_path(types[0]))
    _add_closure(schemas, sorted(_referenced([paths, schemas], set()) - set(schemas)))
    if not builtin and META + "DeleteOptions" in schemas:
        schemas[META + "DeleteOptions"]["x-kubernetes-group-version-kind"] = CRD_DELETE_OPTIONS_GVKS
    return {
        "openapi": "3.0.0",
        "info": _BUILTIN_INFO if builtin else _CRD_INFO,
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "securitySchemes": {
                "BearerToken": {
                    "type": "apiKey",
                    "description": "Bearer Token authentication",
                    "name": "authorization",
                    "in": "header",
                }
            },
        },
    }


def _fingerprint(types: list[ResourceType]) -> bytes:
    return orjson.dumps(
        [
            [
                rt.group,
                rt.version,
                rt.plural,
                rt.singular,
                rt.kind,
                rt.list_kind,
                rt.namespaced,
                list(rt.verbs),
                rt.status,
                rt.scale is not None,
                rt.builtin,
                rt.schema,
            ]
            for rt in sorted(types, key=lambda r: r.plural)
        ],
        option=orjson.OPT_SORT_KEYS,
    )


class _Cache:
    """Serialized documents by content of the resource types they describe (bounded)."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self.entries: OrderedDict[bytes, tuple[bytes, str]] = OrderedDict()

    def get(self, types: list[ResourceType]) -> tuple[bytes, str]:
        key = _fingerprint(types)
        hit = self.entries.get(key)
        if hit is None:
            body = orjson.dumps(_build(types))
            hit = (body, hashlib.sha512(body).hexdigest().upper())
            self.entries[key] = hit
            if len(self.entries) > self.size:
                self.entries.popitem(last=False)
        self.entries.move_to_end(key)
        return hit


_CACHE = _Cache()


def _served(registry: Registry, group: str, version: str) -> list[ResourceType]:
    return registry.resources(group, version)


def openapi_v3_index(registry: Registry) -> Doc:
    """The /openapi/v3 index: every served group/version and its document's hashed URL."""
    paths: Doc = {}
    gvs = {(rt.group, rt.version) for rt in registry.all()}
    for group, version in sorted(gvs):
        path = _gv_path(group, version)
        _, digest = _CACHE.get(_served(registry, group, version))
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


def _document(registry: Registry, gv_path: str) -> tuple[bytes, str] | None:
    parsed = _parse_gv_path(gv_path)
    if parsed is None:
        return None
    types = _served(registry, *parsed)
    return _CACHE.get(types) if types else None


def openapi_v3_response(
    registry: Registry, gv_path: str, requested_hash: str
) -> tuple[int, bytes, dict[str, str]] | None:
    """HTTP status, body and headers for ``GET /openapi/v3/<gv_path>?hash=...``.

    As kube-openapi handler3: a stale ``hash`` redirects (301) to the current URL; a
    matching one is served immutable for a year; no hash is served uncached. None: 404.
    """
    served = _document(registry, gv_path)
    if served is None:
        return None
    body, digest = served
    headers = {"Etag": f'"{digest}"'}
    if requested_hash and requested_hash != digest:
        location = f"/openapi/v3/{gv_path.strip('/')}?hash={digest}"
        return 301, b"", {"Location": location, "Cache-Control": "no-cache, private"}
    if requested_hash:
        expires = datetime.now(UTC) + timedelta(days=365)
        headers.update(
            {
                "Cache-Control": "public, immutable",
                "Vary": "Accept",
                "Expires": expires.strftime("%a, %d %b %Y %H:%M:%S GMT"),
            }
        )
    else:
        headers["Cache-Control"] = "no-cache, private"
    return 200, body, headers


def openapi_v2(registry: Registry) -> Doc | None:
    """No OpenAPI v2 document is served: clients that need one get 404 (see module doc)."""
    return None
