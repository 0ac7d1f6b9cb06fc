"""HTTP layer of the embedded API server (aiohttp): routing, bodies, watch streams.

Path parsing follows k8s.io/apiserver pkg/endpoints/request/requestinfo.go; non-resource
paths (/version, /api, /apis, /healthz, /openapi) are answered from the registry.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import orjson
import yaml
from aiohttp import web
from multidict import CIMultiDict

from ...client.contenttypes import APPLY_PATCH, JSON, YAML
from ...meta.selectors import FieldSelector, LabelSelector, SelectorError
from . import discovery, errors, protobuf
from .admission import Admission, drive
from .authn import ADMIN, Authenticator, User, bearer_token
from .binding import bind
from .cluster import Cluster, Result, Steps, WriteOptions
from .crdconversion import convert as convert_objects
from .crdconversion import webhook_converts
from .decoding import decode
from .errors import APIError
from .faults import Faults, RequestInfo, fault_error
from .fieldlabels import field_labels_of
from .gcadmission import check_owner_references
from .gofmt import go_quote
from .gojson import syntax_error
from .health import answer_health, health_root
from .impersonation import NoUserImpersonated, impersonate
from .openapi import openapi_v2, openapi_v3_index, openapi_v3_response
from .patching import UndecodedPatch, is_decoded_patch_type
from .prettyjson import prettified, pretty_requested, serialized
from .queryoptions import (
    PARSE_BOOL_TRUE,
    check_list_options,
    check_query,
    go_int64,
    int_option,
)
from .rbac import RBAC_GROUP, Attributes, Authorizer, forbidden
from .rbacescalation import check_write
from .registry import Registry
from .requestlog import RequestLog, RequestRecord
from .resources import AUTHENTICATION_GROUP, AUTHORIZATION_GROUP, ResourceType
from .reviews import answer_review
from .store import Obj
from .table import Conversion, convert, negotiate, watch_converter
from .undecodable import Undecodable, custom_type_meta_error, json_body_error
from .watch import INITIAL_EVENTS_END, Filter, Watcher, WatchHub, encode_bookmark
from .watchoptions import WatchOptions, watch_options
from .writes import clone, record_manager

MAX_BODY = 3 * 1024 * 1024
_FRESHNESS_TIMEOUT = 3.0  # the watch cache's wait for a resourceVersion it has not seen
_PUBLIC_PATHS = ("/version", "/version/", "/healthz", "/livez", "/readyz")


def _public(path: str) -> bool:
    """Version and health paths, answered to requests without credentials (the
    nonResourceURLs of the system:public-info-viewer ClusterRole)."""
    return path in _PUBLIC_PATHS


def _health_response(request: web.Request) -> web.Response:
    """A health endpoint's plain-text answer (see health.answer_health)."""
    answer = answer_health(
        request.path, request.query.getall("exclude", []), "verbose" in request.query
    )
    return web.Response(status=answer.status, body=answer.text.encode(), headers=answer.headers)


def _internal_error_text(request: web.Request, message: str) -> web.Response:
    """responsewriters.InternalError: Go's plain-text 500 naming the request URI."""
    text = f"Internal Server Error: {go_quote(request.raw_path)}: {message}"
    for plain, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")):
        text = text.replace(plain, escaped)
    headers = {"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}
    return web.Response(status=500, body=f"{text}\n".encode(), headers=headers)


def parse_request_info(method: str, path: str, query: dict[str, str]) -> RequestInfo:
    """Split a resource path into group/version/namespace/resource/name/subresource + verb."""
    parts = [p for p in path.split("/") if p]
    info = RequestInfo()
    if not parts or parts[0] not in ("api", "apis"):
        return info
    if parts[0] == "api":
        if len(parts) < 3:
            return info
        info.version, rest = parts[1], parts[2:]
    else:
        if len(parts) < 4:
            return info
        info.group, info.version, rest = parts[1], parts[2], parts[3:]
    # /watch/... : the deprecated watch paths (RequestInfoFactory's special verb)
    legacy_watch = rest[0] == "watch" and len(rest) > 1
    if legacy_watch:
        rest = rest[1:]
    # /namespaces/{name}/status and /finalize are the namespace's own subresources.
    if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
        info.namespace, rest = rest[1], rest[2:]
    info.is_resource = True
    info.resource = rest[0]
    if len(rest) > 1:
        info.name = rest[1]
    if len(rest) > 2:
        info.subresource = "/".join(rest[2:])
    if rest[0] == "namespaces" and info.name:
        info.namespace = info.name
    # ?watch= makes a watch of a collection only: a named GET stays a get
    watching = query.get("watch", "") not in ("", "0", "false", "False") and not info.name
    info.verb = "watch" if legacy_watch else _verb(method, bool(info.name), watching)
    return info


def _verb(method: str, named: bool, watching: bool) -> str:
    if method in ("GET", "HEAD"):
        return "watch" if watching else ("get" if named else "list")
    return {
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete" if named else "deletecollection",
    }.get(method, method.lower())


def _audiences(requested: Any, default: str) -> list[str]:
    """A TokenRequest's audiences: those asked for, else the API server's
    (pkg/registry/core/serviceaccount/storage token.go)."""
    if isinstance(requested, list) and requested:
        return [str(a) for a in requested]
    return [default]


def _media_type(header: str) -> str:
    return header.split(";", 1)[0].strip().lower()


def _decode_body(raw: bytes, content_type: str, method: str = "POST") -> Any:
    if not raw:
        return None
    if method in ("POST", "PUT") and content_type in (JSON, ""):
        try:
            decoded = orjson.loads(raw)
            if isinstance(decoded, dict):
                return decoded
        except orjson.JSONDecodeError:
            pass
        refused = json_body_error(raw)
        if refused is not None:
            raise refused
    if content_type == protobuf.MEDIA_TYPE:
        try:
            return protobuf.decode(raw)
        except protobuf.UnsupportedKind as exc:
            raise errors.unsupported_media_type(content_type, [JSON, YAML]) from exc
        except protobuf.ProtobufError as exc:
            raise errors.bad_request(f"couldn't get version/kind; protobuf error: {exc}") from exc
    try:
        if content_type in (YAML, APPLY_PATCH):
            return _yaml_or_json(raw)
        return orjson.loads(raw)
    except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
        raise errors.bad_request(f"couldn't get version/kind; json parse error: {exc}") from exc


def _decode_patch(raw: bytes) -> Any:
    """A JSON, merge or strategic merge patch: the JSON, or an :class:`UndecodedPatch`
    (kube-apiserver reads the body when it applies it, after finding the object)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return UndecodedPatch(syntax_error(raw) or "unexpected end of JSON input")


def _yaml_or_json(raw: bytes) -> Any:
    """A YAML body; one that is JSON decoded as JSON, which YAML 1.1 (PyYAML) reads
    otherwise than Go's YAML decoder for numbers like ``1e+21`` (a string for PyYAML, a
    float for sigs.k8s.io/yaml as for JSON)."""
    if raw.lstrip()[:1] in (b"{", b"["):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return yaml.safe_load(raw)


def _json_response(
    code: int, body: Any, headers: dict[str, str] | CIMultiDict[str] | None = None
) -> web.Response:
    return web.Response(status=code, body=serialized(body), content_type=JSON, headers=headers)


def _aggregated_response(
    request: web.Request, registry: Registry, core: bool, version: str
) -> web.Response:
    """An aggregated discovery document, with kube-apiserver's caching headers (an ETag,
    304 for a matching ``If-None-Match``) and ``Vary: Accept``."""
    body, digest = discovery.aggregated(registry, core, version)
    headers = {
        "Content-Type": discovery.aggregated_media_type(version),
        "Vary": "Accept",
        "X-Varied-Accept": request.headers.get("Accept", ""),
        "Etag": f'"{digest}"',
        "Cache-Control": "public",
    }
    if request.headers.get("If-None-Match") == f'"{digest}"':
        return web.Response(status=304, headers=headers)
    return web.Response(status=200, body=body + b"\n", headers=headers)


def _laid_out(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
    """``response`` indented when the request asks for it pretty (:mod:`.prettyjson`): a
    JSON answer of the serializer, which alone ends with a newline (``/openapi``
    documents and ``/version`` are written otherwise and keep their layout)."""
    if (
        pretty_requested(request.query_string, request.headers.get("User-Agent", ""))
        and isinstance(response, web.Response)
        and response.content_type == JSON
        and isinstance(response.body, bytes)
        and response.body.endswith(b"\n")
    ):
        response.body = prettified(response.body)
    return response


def _error_response(err: APIError) -> web.Response:
    headers: CIMultiDict[str] = CIMultiDict(err.headers)
    headers.extend(_warning_headers(err.warnings) or {})
    return _json_response(err.code, err.status(), headers)


class Handler:
    """Serves every request of one embedded API server."""

    def __init__(
        self,
        cluster: Cluster,
        hub: WatchHub,
        faults: Faults,
        log: RequestLog | None,
        token: str | None,
        bookmark_interval: float,
        admission: Admission | None = None,
        authorization: str = "AlwaysAllow",
    ) -> None:
        self.cluster = cluster
        self.admission = admission if admission is not None else Admission(cluster)
        self.hub = hub
        self.faults = faults
        self.log = log
        self.token = token
        self.bookmark_interval = bookmark_interval
        self.authenticator = Authenticator(token)
        self.audience = "https://kubernetes.default.svc.cluster.local"
        self.authorizer = Authorizer(self._rbac_objects) if authorization == "RBAC" else None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        query = {k: v for k, v in request.query.items()}
        info = parse_request_info(request.method, request.path, query)
        content_type = _media_type(request.headers.get("Content-Type", ""))
        record = RequestRecord(
            request.method,
            request.path,
            query,
            content_type,
            None,
            verb=info.verb,
            group=info.group,
            resource=info.resource,
            subresource=info.subresource,
            namespace=info.namespace,
            name=info.name,
            user_agent=request.headers.get("User-Agent", ""),
            traceparent=request.headers.get("traceparent", ""),
        )
        if self.log is not None:
            self.log.append(record)
        try:
            response = await self._serve(request, info, query, record)
        except APIError as err:
            response = _error_response(err)
        except web.HTTPRequestEntityTooLarge:
            response = _error_response(
                errors.too_large(
                    f"the server has received too large of a request: limit is {MAX_BODY}"
                )
            )
        if not record.status:
            record.status = response.status
        return _laid_out(request, response)

    async def _serve(
        self, request: web.Request, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> web.StreamResponse:
        authorization = request.headers.get("Authorization")
        user = self.authenticator.user(authorization)
        # As kube-apiserver's authentication filter: a token that authenticates no one is
        # 401 on every path; only a request without one reaches the public paths.
        if user is None and (bearer_token(authorization) or not _public(request.path)):
            raise errors.unauthorized()
        if user is not None:
            try:
                user = impersonate(user, request.headers, self._decider())
            except NoUserImpersonated as refused:
                return _internal_error_text(request, str(refused))
        record.user = user
        if user is not None and self.authorizer is not None:
            self._authorize(user, request, info)
        delay, failure = self.faults.check(info) if info.is_resource else (0.0, None)
        if delay:
            await asyncio.sleep(delay)
        if not info.is_resource:
            return self._non_resource(request)
        raw = await request.read()
        undecodable: APIError | None = None
        try:
            if request.method == "PATCH" and is_decoded_patch_type(record.content_type):
                record.body = _decode_patch(raw)
            elif raw:
                record.body = _decode_body(raw, record.content_type, request.method)
        except APIError as refused:  # answered after the URL: unknown resources 404 first
            undecodable = refused
        if failure is not None:
            err = fault_error(failure, info)
            if info.verb == "watch" and failure.status == 410:
                return await self._error_stream(request, err)
            raise err
        rt = self.cluster.registry.lookup(info.group, info.version, info.resource)
        if rt is None or (info.namespace and not rt.namespaced and info.resource != "namespaces"):
            # apiextensions-apiserver's handler: a namespaced path to a cluster-scoped
            # custom resource falls through to the plain-text 404
            custom = rt is not None and rt.crd_name is not None
            if not custom and self.cluster.registry.resources(info.group, info.version):
                # a served group/version answers for its unknown resources with a Status
                raise _no_such_resource()
            return web.Response(status=404, text="404 page not found\n")
        if (
            not raw
            and request.method in ("POST", "PUT")
            and record.content_type in (JSON, "")
            and info.subresource in ("", "status")
        ):
            undecodable = json_body_error(raw)
        if isinstance(undecodable, Undecodable):
            raise undecodable.for_kind(rt.kind)
        if undecodable is not None:
            raise undecodable
        if rt.crd_name is not None and request.method in ("POST", "PUT") and not info.subresource:
            missing = custom_type_meta_error(rt.kind, rt.api_version, record.body, raw)
            if missing is not None:
                raise missing
        if not rt.namespaced:
            info.namespace = ""
        return await self._resource(request, rt, info, query, record)

    def _decider(self) -> Callable[[Attributes], tuple[bool, str]] | None:
        """The authorizer's decisions (None: AlwaysAllow)."""
        return self.authorizer.decide if self.authorizer is not None else None

    def _authorize(self, user: User, request: web.Request, info: RequestInfo) -> None:
        """RBAC (``APIServer(authorization="RBAC")``): 403 in kube-apiserver's words."""
        assert self.authorizer is not None
        if info.is_resource:
            attributes = Attributes(
                user,
                info.verb,
                True,
                info.group,
                info.resource,
                info.subresource.split("/")[0],  # RequestInfo's: the path's next part only
                info.namespace,
                info.name,
                request.path,
            )
        else:
            attributes = Attributes(user, request.method.lower(), False, path=request.path)
        allowed, reason = self.authorizer.decide(attributes)
        if not allowed:
            raise forbidden(attributes, reason)

    def _rbac_objects(self, plural: str, namespace: str) -> list[Obj]:
        rt = self.cluster.registry.lookup(RBAC_GROUP, "v1", plural)
        if rt is None:
            return []
        return self.cluster.store.items(rt.storage_key, namespace if rt.namespaced else None)

    def _token_request(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Result:
        """TokenRequest (authentication.k8s.io/v1) for a ServiceAccount: a token the
        server then authenticates as ``system:serviceaccount:<ns>:<name>``."""
        account = self.cluster.get(rt, info.namespace, info.name)
        spec = record.body.get("spec") or {} if isinstance(record.body, dict) else {}
        seconds = spec.get("expirationSeconds")
        seconds = 3600 if seconds is None else seconds
        # ValidateTokenRequest; the REST handler's 422 names no object
        limits = {
            "may not specify a duration less than 10 minutes": not isinstance(seconds, int)
            or seconds < 600,
            "may not specify a duration larger than 2^32 seconds": isinstance(seconds, int)
            and seconds > 1 << 32,
        }
        causes = [
            errors.cause(
                "FieldValueInvalid", "spec.expirationSeconds", f"Invalid value: {seconds}: {detail}"
            )
            for detail, failed in limits.items()
            if failed
        ]
        if causes:
            raise errors.invalid("TokenRequest", "authentication.k8s.io", "", causes)
        uid = account["metadata"].get("uid", "")
        token, expires = self.authenticator.issue(info.namespace, info.name, uid, seconds)
        body = {
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {
                "name": info.name,
                "namespace": info.namespace,
                "creationTimestamp": None,
            },
            "spec": {
                "audiences": _audiences(spec.get("audiences"), self.audience),
                "expirationSeconds": seconds,
                "boundObjectRef": spec.get("boundObjectRef"),
            },
            "status": {"token": token, "expirationTimestamp": expires},
        }
        return Result(201, body)

    def _bind(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Result:
        """A Binding: the pod it names assigned to its node."""
        return bind(self.cluster, info.namespace, record.body)

    def _review(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Result:
        """A TokenReview, SelfSubjectReview or access review: decoded as any create (its
        kind, its namespace; managedFields of the writer), answered, not stored."""
        user = record.user or ADMIN
        _require_json(record.content_type)
        request = decode(rt, info.namespace or None, record.body)
        record_manager(rt, request, None, self._write_options(query, record), "", clone(request))
        body = answer_review(
            rt.kind,
            request,
            info.namespace,
            user,
            self.authenticator,
            self.authorizer,
            self.audience,
        )
        return Result(201, body)

    def _non_resource(self, request: web.Request) -> web.StreamResponse:
        if health_root(request.path) is not None:
            return _health_response(request)
        path = request.path.rstrip("/") or "/"
        registry = self.cluster.registry
        doc: Any = None
        if path == "/version":  # written with json.MarshalIndent, as it always is
            indented = orjson.dumps(discovery.version_doc(), option=orjson.OPT_INDENT_2)
            return web.Response(body=indented, content_type=JSON)
        elif path in ("/api", "/apis"):
            version = discovery.aggregated_version(request.headers.get("Accept", ""))
            if version is not None:
                return _aggregated_response(request, registry, path == "/api", version)
            doc = discovery.core_versions() if path == "/api" else discovery.group_list(registry)
        elif path == "/openapi/v3":
            doc = openapi_v3_index(registry)
        elif path.startswith("/openapi/v3/"):
            served = openapi_v3_response(
                registry, path[len("/openapi/v3/") :], request.query.get("hash", "")
            )
            if served is None:
                return web.Response(status=404, text="404 page not found\n")
            code, body, headers = served
            return web.Response(
                status=code, body=body, headers=headers, content_type=JSON if body else None
            )
        elif path == "/openapi/v2":
            doc = openapi_v2(registry)
        else:
            doc = self._discovery_path(path)
        if doc is None:
            return web.Response(status=404, text="404 page not found\n")
        if path.startswith("/openapi/"):  # kube-openapi's handler: compact, no newline
            return web.Response(body=orjson.dumps(doc), content_type=JSON)
        return _json_response(200, doc)

    def _discovery_path(self, path: str) -> Any:
        parts = [p for p in path.split("/") if p]
        registry = self.cluster.registry
        if len(parts) == 2 and parts[0] == "api":
            return discovery.resource_list(registry, "", parts[1])
        if len(parts) == 2 and parts[0] == "apis":
            return discovery.group_doc(registry, parts[1])
        if len(parts) == 3 and parts[0] == "apis":
            return discovery.resource_list(registry, parts[1], parts[2])
        return None

    async def _resource(
        self,
        request: web.Request,
        rt: ResourceType,
        info: RequestInfo,
        query: dict[str, str],
        record: RequestRecord,
    ) -> web.StreamResponse:
        if not rt.namespaced and info.namespace:
            # RequestInfo names /namespaces/{name} its own namespace; storage keys
            # cluster-scoped objects under "" (GET/PUT/PATCH/DELETE of a namespace 404ed).
            info = RequestInfo(
                info.verb,
                info.group,
                info.version,
                info.resource,
                info.subresource,
                "",
                info.name,
                info.is_resource,
            )
        # Table / PartialObjectMetadata requested in Accept (kubectl get): see table.py.
        # A watch's options are validated first (422), then the media type negotiated.
        tables = info.verb != "watch" or not watch_options(query).watch_list
        conversion = (
            negotiate(request.headers.get("Accept", ""), tables)
            if info.verb in ("list", "get", "watch") and not info.subresource
            else None
        )
        check_query(info, query, record.method, record.content_type)
        if not info.subresource and (info.verb, bool(info.name)) in (
            ("create", True),
            ("update", False),
        ):
            raise errors.method_not_allowed_here()  # POST to an object, PUT to a collection
        if info.verb == "watch":
            return await self._watch(request, rt, info, query, conversion)
        if info.verb in ("get", "list"):
            await self._wait_until_fresh(rt, info, query)
        if conversion is not None:
            return self._table(rt, info, query, conversion)
        handler = self._dispatch(rt, info)
        if handler is None:
            raise errors.method_not_allowed(info.verb, rt.plural)
        produced = handler(rt, info, query, record)
        if isinstance(produced, Result):
            result = produced
        else:  # a write: run it with its admission webhooks (started afresh on a rerun)

            def start() -> Steps:
                steps = handler(rt, info, query, record)
                assert not isinstance(steps, Result)
                return steps

            result = await drive(produced, start, self.admission, self.cluster)
        body = await self._in_version(rt, result.body) if rt.crd_name else result.body
        return _json_response(result.code, body, _warning_headers(result.warnings))

    async def _wait_until_fresh(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str]
    ) -> None:
        """A GET or LIST at a resourceVersion the server has not reached (not ``Exact``, no
        continue token, not a limited LIST without a match, which etcd reads at that
        revision): the watch cache's wait of up to 3 s, then 504 "Too large resource
        version" (k8s.io/apiserver pkg/storage/cacher waitUntilFreshAndBlock). A LIST's
        options are decoded and validated first."""
        if info.verb == "list":
            self._selection(rt, info, query)
            check_list_options(query)
        rv = query.get("resourceVersion", "")
        if not rv.isdigit() or query.get("resourceVersionMatch") == "Exact":
            return
        if query.get("continue"):
            return
        legacy_exact = not query.get("resourceVersionMatch") and int_option(query, "limit") > 0
        if info.verb == "list" and rv != "0" and legacy_exact:
            return
        requested, store = int(rv), self.cluster.store
        if requested > store.rv and not await self.hub.wait_for(requested, _FRESHNESS_TIMEOUT):
            raise errors.too_large_resource_version(requested, store.rv)

    async def _in_version(self, rt: ResourceType, body: Any) -> Any:
        """An answer's custom resources (an object or a list's items) in ``rt``'s version:
        converted by the CRD's webhook when stored in another (``Cluster.present`` leaves
        them so)."""
        crd = self.cluster.crd_of(rt)
        if not webhook_converts(crd) or not isinstance(body, dict):
            return body
        assert crd is not None
        if body.get("kind") == rt.kind:
            if body.get("apiVersion") == rt.api_version:
                return body
            (converted,) = await convert_objects(self.admission, crd, [body], rt.api_version)
            return converted
        items = body.get("items")
        if isinstance(items, list) and items:
            converted_items = await convert_objects(self.admission, crd, items, rt.api_version)
            return {**body, "items": converted_items}
        return body

    async def _event_in_version(self, rt: ResourceType, line: bytes) -> bytes:
        """A watch event line with its object in ``rt``'s version."""
        event = orjson.loads(line)
        obj = event.get("object")
        if isinstance(obj, dict) and obj.get("kind") == rt.kind:
            event["object"] = await self._in_version(rt, obj)
            return orjson.dumps(event) + b"\n"
        return line

    Dispatch = Callable[[ResourceType, RequestInfo, dict[str, str], RequestRecord], Result | Steps]

    def _dispatch(self, rt: ResourceType, info: RequestInfo) -> Dispatch | None:
        sub = info.subresource
        if rt.group in (AUTHENTICATION_GROUP, AUTHORIZATION_GROUP) and rt.verbs == ("create",):
            if info.name or sub or (rt.namespaced and not info.namespace):
                raise _no_such_resource()  # a review has no object or all-namespaces routes
            if info.verb != "create":
                raise errors.method_not_allowed_here()
            return self._review
        if sub == "" and rt.verbs in (("create",), ("get", "list")):
            if info.verb not in rt.verbs:  # no route for it (bindings, componentstatuses)
                raise errors.method_not_allowed_here()
            if rt.plural == "bindings" and not rt.group:
                return self._bind
        if sub == "":
            verbs: dict[str, Handler.Dispatch] = {
                "get": self._get,
                "list": self._list,
                "create": self._create,
                "update": self._update,
                "patch": self._patch,
                "delete": self._delete,
                "deletecollection": self._delete_collection,
            }
            return verbs.get(info.verb)
        if sub == "status" and rt.status:
            status: dict[str, Handler.Dispatch] = {
                "get": self._get,
                "update": self._update,
                "patch": self._patch,
            }
            return status.get(info.verb)
        if sub == "scale" and rt.scale is not None:
            scale: dict[str, Handler.Dispatch] = {
                "get": self._get_scale,
                "update": self._update_scale,
                "patch": self._patch_scale,
            }
            return scale.get(info.verb)
        if sub == "finalize" and rt.plural == "namespaces" and info.verb == "update":
            return self._update
        if sub == "token" and rt.plural == "serviceaccounts" and info.verb == "create":
            return self._token_request
        if rt.crd_name is not None:
            # apiextensions-apiserver's handler: the object "is not found"
            raise errors.not_found(rt.group, rt.plural, info.name)
        raise _no_such_resource()

    def _selection(self, rt: ResourceType, info: RequestInfo, query: dict[str, str]) -> Filter:
        try:
            labels = LabelSelector.parse(query.get("labelSelector", ""))
            fields = FieldSelector.parse(query.get("fieldSelector", ""))
        except SelectorError as exc:
            raise errors.bad_request(str(exc)) from exc
        namespace = info.namespace or None if rt.namespaced else None
        return Filter(namespace, labels, fields, field_labels_of(rt))

    def _write_options(self, query: dict[str, str], record: RequestRecord) -> WriteOptions:
        # check_query refused any other directive (422); "" is Warn
        validation = query.get("fieldValidation") or "Warn"
        return WriteOptions(
            query.get("dryRun") == "All",
            validation,
            query.get("fieldManager"),
            record.user_agent,
            force=query.get("force", "") in PARSE_BOOL_TRUE,
            query=query,
            user_info=_user_info(record.user),
            guard=self._escalation_check(record),
            admit=self._owner_references_check(record),
        )

    def _escalation_check(
        self, record: RequestRecord
    ) -> Callable[[ResourceType, Obj, Obj | None], None] | None:
        """RBAC's escalation prevention for the request's user (RBAC mode)."""
        authorizer, user = self.authorizer, record.user
        if authorizer is None or user is None:
            return None

        def guard(rt: ResourceType, new: Obj, old: Obj | None) -> None:
            check_write(authorizer, user, rt, new, old, record.name)

        return guard

    def _owner_references_check(
        self, record: RequestRecord
    ) -> Callable[[ResourceType, Obj, Obj | None, str], None] | None:
        """OwnerReferencesPermissionEnforcement for the request's user (RBAC mode)."""
        authorizer, user = self.authorizer, record.user
        if authorizer is None or user is None:
            return None
        registry = self.cluster.registry

        def admit(rt: ResourceType, new: Obj, old: Obj | None, subresource: str) -> None:
            check_owner_references(authorizer, registry, user, rt, new, old, subresource)

        return admit

    def _get(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Result:
        return Result(200, self.cluster.get(rt, info.namespace, info.name))

    def _list(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Result:
        return Result(200, self._listed(rt, info, query))

    def _listed(self, rt: ResourceType, info: RequestInfo, query: dict[str, str]) -> Any:
        """The List body a LIST request's query asks for (also under a Table)."""
        selection = self._selection(rt, info, query)  # decoded before it is validated
        check_list_options(query)
        return self.cluster.list_objects(
            rt,
            selection,
            max(int_option(query, "limit"), 0),  # a negative limit is none
            query.get("continue", ""),
            query.get("resourceVersion", ""),
            query.get("resourceVersionMatch", ""),
        )

    def _create(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Steps:
        _require_json(record.content_type)
        options = self._write_options(query, record)
        return self.cluster.create_steps(rt, info.namespace or None, record.body, options, True)

    def _update(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Steps:
        _require_json(record.content_type)
        return self.cluster.update_steps(
            rt,
            info.namespace or None,
            info.name,
            record.body,
            self._write_options(query, record),
            info.subresource,
        )

    def _patch(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Steps:
        return self.cluster.patch_steps(
            rt,
            info.namespace or None,
            info.name,
            record.content_type,
            record.body,
            self._write_options(query, record),
            info.subresource,
        )

    def _delete(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Steps:
        options = _delete_options(record.body, query)
        return self.cluster.delete_steps(
            rt,
            info.namespace or None,
            info.name,
            options,
            self._delete_write_options(query, record, options),
        )

    def _delete_collection(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Steps:
        options = _delete_options(record.body, query)
        return self.cluster.delete_collection_steps(
            rt,
            self._selection(rt, info, query),
            options,
            self._delete_write_options(query, record, options),
        )

    def _delete_write_options(
        self, query: dict[str, str], record: RequestRecord, options: dict[str, Any]
    ) -> WriteOptions:
        """A delete's write options; DeleteOptions sent as its body are its options, its
        ``dryRun`` the one that counts (k8s.io/apiserver handlers/delete.go reads the query
        only without a body): ``kubectl delete --dry-run=server`` sends it so."""
        opts = self._write_options(query, record)
        if isinstance(record.body, dict) and record.body:
            opts = replace(opts, dry_run=bool(options.get("dryRun")))
        return opts

    def _get_scale(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Result:
        return Result(200, self.cluster.get_scale(rt, info.namespace, info.name))

    def _update_scale(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Steps:
        _require_json(record.content_type)
        body = record.body if isinstance(record.body, dict) else {}
        return self.cluster.write_scale_steps(
            rt, info.namespace, info.name, body, self._write_options(query, record)
        )

    def _patch_scale(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], record: RequestRecord
    ) -> Steps:
        return self.cluster.patch_scale_steps(
            rt,
            info.namespace,
            info.name,
            record.content_type,
            record.body,
            self._write_options(query, record),
        )

    def _table(
        self, rt: ResourceType, info: RequestInfo, query: dict[str, str], conversion: Conversion
    ) -> web.StreamResponse:
        if info.verb == "get":
            obj = self.cluster.get(rt, info.namespace, info.name)
            body = convert(rt, conversion, [obj], None, query)
        else:
            listed = self._listed(rt, info, query)
            items = [
                self.cluster.present(rt, {**i, "apiVersion": rt.api_version, "kind": rt.kind})
                for i in listed["items"]
            ]
            body = convert(rt, conversion, items, listed["metadata"], query)
        return _json_response(200, body)

    # --- watch -----------------------------------------------------------------------------

    async def _error_stream(self, request: web.Request, err: APIError) -> web.StreamResponse:
        response = web.StreamResponse(status=200, headers={"Content-Type": JSON})
        await response.prepare(request)
        await response.write(orjson.dumps({"type": "ERROR", "object": err.status()}) + b"\n")
        await response.write_eof()
        return response

    async def _watch(
        self,
        request: web.Request,
        rt: ResourceType,
        info: RequestInfo,
        query: dict[str, str],
        conversion: Conversion | None = None,
    ) -> web.StreamResponse:
        options = watch_options(query)
        selection = self._selection(rt, info, query)
        if info.name:
            selection.fields = FieldSelector.parse(f"metadata.name={info.name}")
        self.cluster.check_field_selector(rt, selection.fields)
        since = await self._watch_start(options)
        if isinstance(since, APIError):
            return await self._error_stream(request, since)
        timeout = float(int_option(query, "timeoutSeconds") or 1800)  # < 0: ends at once
        rewrite = watch_converter(rt, conversion, query) if conversion is not None else None
        watcher = self.hub.open(rt, selection, since, options.watch_list)
        response = web.StreamResponse(status=200, headers={"Content-Type": JSON})
        try:
            await response.prepare(request)
            bookmark = partial(encode_bookmark, rt, metadata=_metadata_version(conversion))
            await self._pump(response, watcher, timeout, options.bookmarks, bookmark, rewrite)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.hub.release(watcher)
        return response

    async def _watch_start(self, options: WatchOptions) -> int | APIError | None:
        """Where a watch starts: None for the current state first, else the
        resourceVersion after which changes are streamed; an error for the stream."""
        store = self.cluster.store
        rv = options.resource_version
        requested = int(rv or "0")  # check_query refused one that is no number
        if options.initial_events:
            if not await self.hub.wait_for(requested, _FRESHNESS_TIMEOUT):
                return errors.too_large_resource_version(requested, store.rv)
            return None
        if requested == 0:
            return store.rv
        if store.too_old(requested):
            return errors.expired(f"too old resource version: {requested} ({store.compacted_rv})")
        return requested

    async def _pump(
        self,
        response: web.StreamResponse,
        watcher: Watcher,
        timeout: float,
        bookmarks: bool,
        bookmark: Callable[[int, bool], bytes],
        rewrite: Callable[[bytes], bytes] | None = None,
    ) -> None:
        """Write the watcher's lines until it closes or ``timeout`` passes; every
        ``bookmark_interval`` a ``bookmark(rv, False)`` line if ``bookmarks``."""
        queue, rt = watcher.queue, watcher.rt
        deadline = time.monotonic() + timeout
        next_bookmark = time.monotonic() + self.bookmark_interval
        while True:
            now = time.monotonic()
            if now >= deadline:
                break
            wait = deadline - now
            if bookmarks:
                wait = min(wait, max(next_bookmark - now, 0))
            try:
                line = await asyncio.wait_for(queue.get(), wait)
            except TimeoutError:
                if bookmarks and time.monotonic() >= next_bookmark:
                    await response.write(bookmark(self.cluster.store.rv, False))
                    next_bookmark = time.monotonic() + self.bookmark_interval
                continue
            if line is None:
                break
            if line == INITIAL_EVENTS_END:
                await response.write(bookmark(watcher.initial_rv, True))
                continue
            if rt.crd_name is not None and webhook_converts(self.cluster.crd_of(rt)):
                line = await self._event_in_version(rt, line)
            await response.write(rewrite(line) if rewrite is not None else line)
        await response.write_eof()


def _metadata_version(conversion: Conversion | None) -> str | None:
    """The meta.k8s.io version of a PartialObjectMetadata watch (its bookmarks too)."""
    if conversion is None or conversion.kind == "Table":
        return None
    return conversion.version


def _user_info(user: User | None) -> Obj | None:
    """authentication.k8s.io/v1 UserInfo of a ServiceAccount (None for the admin, whom
    AdmissionReviews name as kube-apiserver's admin)."""
    if user is None or user.is_master:
        return None
    return {"username": user.name, "uid": user.uid, "groups": list(user.groups)}


def _warning_headers(warnings: list[str]) -> CIMultiDict[str] | None:
    """One RFC 7234 ``Warning`` header (code 299) per warning, quotes escaped, as
    kube-apiserver's warning recorder adds them (k8s.io/apiserver pkg/endpoints/warning)."""
    if not warnings:
        return None
    return CIMultiDict(
        ("Warning", '299 - "' + w.replace("\\", "\\\\").replace('"', '\\"') + '"') for w in warnings
    )


def _no_such_resource() -> APIError:
    """The Status kube-apiserver sends for an unknown resource or built-in subresource."""
    return APIError(404, "NotFound", "the server could not find the requested resource", {})


def _require_json(content_type: str) -> None:
    if content_type not in (JSON, YAML, protobuf.MEDIA_TYPE, ""):
        raise errors.unsupported_media_type(content_type, [JSON, YAML, protobuf.MEDIA_TYPE])


def _delete_options(body: Any, query: dict[str, str]) -> dict[str, Any]:
    options: dict[str, Any] = dict(body) if isinstance(body, dict) else {}
    if "propagationPolicy" in query:
        options["propagationPolicy"] = query["propagationPolicy"]
    if "orphanDependents" in query:
        options["orphanDependents"] = query["orphanDependents"] in PARSE_BOOL_TRUE
    if "gracePeriodSeconds" in query:
        options["gracePeriodSeconds"] = go_int64(query["gracePeriodSeconds"])
    policy = options.get("propagationPolicy")
    causes = []  # ValidateDeleteOptions
    if options.get("orphanDependents") is not None and policy is not None:
        causes.append(
            errors.cause(
                "FieldValueInvalid",
                "propagationPolicy",
                f"Invalid value: {go_quote(str(policy))}: orphanDependents and"
                " deletionPropagation cannot be both set",
            )
        )
    if policy not in (None, "Orphan", "Background", "Foreground"):
        causes.append(
            errors.cause(
                "FieldValueNotSupported",
                "propagationPolicy",
                f'Unsupported value: "{policy}": supported values: "Foreground", "Background",'
                ' "Orphan", "nil"',
            )
        )
    dry_run = options.get("dryRun")
    if dry_run is not None and (
        not isinstance(dry_run, list) or any(value != "All" for value in dry_run)
    ):
        shown = ", ".join(go_quote(str(v)) for v in (dry_run if isinstance(dry_run, list) else []))
        causes.append(
            errors.cause(
                "FieldValueNotSupported",
                "dryRun",
                f'Unsupported value: []string{{{shown}}}: supported values: "All"',
            )
        )
    if causes:
        raise errors.invalid("DeleteOptions", "meta.k8s.io", "", causes)
    return options
