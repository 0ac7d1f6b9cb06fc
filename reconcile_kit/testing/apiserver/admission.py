"""Admission webhooks, called as kube-apiserver 1.32 calls them.

The write path in :mod:`.cluster` is synchronous and yields an admission step where
kube-apiserver runs admission: :class:`Mutate` (mutating webhooks, before the kind's
strategy and validation) and :class:`Validate` (validating webhooks, on the object as it
will be stored). :func:`drive` runs such a write: it awaits the webhook calls (HTTPS with
aiohttp, never blocking the event loop), sends the answer back into the write, and starts
the write again when the stored object changed during a call (as GuaranteedUpdate
retries). Sources: k8s.io/apiserver pkg/admission/plugin/webhook (generic/webhook.go,
mutating/dispatcher.go, validating/dispatcher.go, request/admissionreview.go,
predicates/{namespace,object,rules}) and errors/statuserror.go.

``matchConditions`` are evaluated with ``object``, ``oldObject`` and ``request`` (no
``authorizer``). Not done: ``admissionReviewVersions`` other than v1 and v1beta1, audit
annotations.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import ipaddress
import ssl
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiohttp
import jsonpatch
import orjson
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ...meta.selectors import LabelSelector, SelectorError, label_selector_from_dict
from . import builtinversions, errors
from .cel import CELError, evaluate
from .crdconversion import Convert, convert
from .crdconversion import failed as conversion_failed
from .errors import APIError
from .registry import Registry
from .resources import ADMISSION_GROUP, ResourceType
from .store import Obj, Store
from .webhookconfig import MUTATING, VALIDATING
from .writes import Result


class ClusterState(Protocol):
    """What admission reads of the :class:`~.cluster.Cluster` it serves: the stored
    webhook configurations, namespaces and objects (``store``) and the served types
    (``registry``)."""

    store: Store
    registry: Registry


USER_INFO: Obj = {
    "username": "admin",
    "uid": "admin",
    "groups": ["system:masters", "system:authenticated"],
}
"""The user of an AdmissionReview for the admin (the token's user, or anyone when the
server has no token): the admin user of :class:`~reconcile_kit.testing.ControlPlane`; in
RBAC mode a ServiceAccount's requests name the ServiceAccount."""

VALIDATING_KEY = f"{ADMISSION_GROUP}/{VALIDATING}"
MUTATING_KEY = f"{ADMISSION_GROUP}/{MUTATING}"
_OPTIONS_KIND = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}
_RETRIES = 10


@dataclass
class Attributes:
    """One request as admission sees it (admission.Attributes)."""

    rt: ResourceType
    operation: str
    namespace: str
    name: str
    subresource: str
    obj: Obj | None
    old: Obj | None
    dry_run: bool
    options: Obj
    kind: tuple[str, str, str] | None = None
    """(group, version, kind) of the objects when they are not ``rt``'s (a ``/scale``
    request reviews autoscaling/v1 Scale objects)."""
    user_info: Obj | None = None
    """The requester (authentication.k8s.io/v1 UserInfo); None: the admin."""

    @property
    def api_version(self) -> str:
        if self.kind is None:
            return self.rt.api_version
        group, version, _ = self.kind
        return f"{group}/{version}" if group else version

    @property
    def kind_name(self) -> str:
        return self.kind[2] if self.kind is not None else self.rt.kind


@dataclass
class Mutate:
    """Run the mutating webhooks on ``attrs.obj``; the write is sent the result."""

    attrs: Attributes
    guard: tuple[str, str, str, str] | None = None
    """(storage key, namespace, name, resourceVersion) the write read: rerun if changed."""


@dataclass
class Validate:
    """Run the validating webhooks; the write is sent None (or the call raises)."""

    attrs: Attributes
    guard: tuple[str, str, str, str] | None = None


Step = Mutate | Validate | Convert
Steps = Generator[Step, Any, Result]


def options_for(operation: str, query: Mapping[str, str], body: Obj | None = None) -> Obj:
    """The ``options`` of an AdmissionReview: CreateOptions/UpdateOptions from the query
    (a PATCH's PatchOptions converted, as kube-apiserver does), DeleteOptions from the
    body and query."""
    options: Obj = {"kind": _OPTIONS_KIND[operation], "apiVersion": "meta.k8s.io/v1"}
    if operation == "DELETE":
        for key, value in (body or {}).items():
            if key not in ("kind", "apiVersion"):
                options[key] = value
        if query.get("dryRun") and "dryRun" not in options:
            options["dryRun"] = [query["dryRun"]]
        if "propagationPolicy" in query:
            options["propagationPolicy"] = query["propagationPolicy"]
        return options
    if query.get("dryRun"):
        options["dryRun"] = [query["dryRun"]]
    if query.get("fieldManager"):
        options["fieldManager"] = query["fieldManager"]
    if query.get("fieldValidation"):
        options["fieldValidation"] = query["fieldValidation"]
    return options


def run_sync(steps: Steps) -> Result:
    """Run a write with no webhook calls (the server's own controllers, bootstrap)."""
    try:
        step = next(steps)
        while True:
            if isinstance(step, Convert):  # no webhook calls here: relabelled, as strategy None
                step = steps.send([{**o, "apiVersion": step.desired} for o in step.objects])
                continue
            step = steps.send(step.attrs.obj if isinstance(step, Mutate) else None)
    except StopIteration as stop:
        result: Result = stop.value
        return result


async def drive(
    steps: Steps, start: Callable[[], Steps], admission: Admission, cluster: ClusterState
) -> Result:
    """Run the write ``steps``, calling webhooks at its admission steps; when the object it
    read changed while the webhooks ran, run ``start()`` (the same write, afresh)."""
    for attempt in range(_RETRIES):
        if attempt:
            steps = start()
        warnings: list[str] = []
        try:
            step = next(steps)
            while True:
                answer: Any
                if isinstance(step, Convert):
                    answer = await convert(admission, step.crd, step.objects, step.desired)
                elif isinstance(step, Mutate):
                    answer = await admission.mutate(step.attrs, warnings)
                else:
                    await admission.validate(step.attrs, warnings)
                    answer = None
                if _stale(cluster, step.guard):
                    steps.close()
                    break
                step = steps.send(answer)
        except StopIteration as stop:
            result: Result = stop.value
            result.warnings = [*result.warnings, *warnings]
            return result
        except APIError as refused:  # the webhooks' warnings go out with the error too
            refused.warnings = [*warnings, *refused.warnings]
            raise
    raise errors.internal("the object kept changing while admission webhooks ran")


def _stale(cluster: ClusterState, guard: tuple[str, str, str, str] | None) -> bool:
    if guard is None:
        return False
    key, namespace, name, rv = guard
    current = cluster.store.get(key, namespace, name)
    return current is None or current["metadata"].get("resourceVersion") != rv


def wanted(cluster: ClusterState, rt: ResourceType, subresource: str, mutating: bool) -> bool:
    """Whether a write of ``rt`` goes to admission at all: some configuration exists
    (webhook configurations themselves are exempt, as in kube-apiserver)."""
    if rt.group == ADMISSION_GROUP:
        return False
    key = MUTATING_KEY if mutating else VALIDATING_KEY
    return bool(cluster.store.sorted_keys(key))


# --- matching -------------------------------------------------------------------------------


def _exact_or_wildcard(items: list[Any], value: str) -> bool:
    return any(item == "*" or item == value for item in items)


def _rule_matches(rule: Obj, attrs: Attributes, rt: ResourceType) -> bool:
    """rules.Matcher: scope, operation, group, version and resource/subresource."""
    scope = rule.get("scope") or "*"
    is_namespace = rt.plural == "namespaces" and rt.group == ""
    if scope == "Namespaced" and (is_namespace or not attrs.namespace):
        return False
    if scope == "Cluster" and not (is_namespace or not attrs.namespace):
        return False
    if scope not in ("*", "Namespaced", "Cluster"):
        return False
    if not any(op in ("*", attrs.operation) for op in rule.get("operations") or []):
        return False
    if not _exact_or_wildcard(rule.get("apiGroups") or [], rt.group):
        return False
    if not _exact_or_wildcard(rule.get("apiVersions") or [], rt.version):
        return False
    for item in rule.get("resources") or []:
        res, _, sub = str(item).partition("/")
        if (res == "*" or res == rt.plural) and (sub == "*" or sub == attrs.subresource):
            return True
    return False


def _selector(value: Any) -> LabelSelector | None:
    """The parsed selector; None when it selects everything."""
    if not isinstance(value, dict) or not (
        value.get("matchLabels") or value.get("matchExpressions")
    ):
        return None
    try:
        return label_selector_from_dict(value)
    except SelectorError:
        return None


def _labels(obj: Obj | None) -> dict[str, str]:
    if obj is None:
        return {}
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return dict(labels)


@dataclass
class _Hook:
    configuration: str
    index: int
    spec: Obj

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def key(self) -> tuple[str, int]:
        return (self.configuration, self.index)


@dataclass
class _Invocation:
    hook: _Hook
    rt: ResourceType


class Admission:
    """Calls a server's webhooks. ``services`` maps a webhook's ``clientConfig.service``
    (``(namespace, name)``) to the ``host:port`` that serves it (there is no kube-proxy);
    TLS is still verified for ``NAME.NAMESPACE.svc``."""

    def __init__(
        self, cluster: ClusterState, services: Mapping[tuple[str, str], str] | None = None
    ):
        self.cluster = cluster
        self.services = dict(services or {})
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[bytes, ssl.SSLContext] = {}

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _hooks(self, key: str) -> list[_Hook]:
        configurations = sorted(
            self.cluster.store.items(key), key=lambda c: str(c["metadata"]["name"])
        )
        return [
            _Hook(c["metadata"]["name"], i, hook)
            for c in configurations
            for i, hook in enumerate(c.get("webhooks") or [])
            if isinstance(hook, dict)
        ]

    # --- matching ---------------------------------------------------------------------------

    def _namespace_labels(self, attrs: Attributes) -> dict[str, str]:
        rt = attrs.rt
        if (
            rt.group == ""
            and rt.plural == "namespaces"
            and not attrs.subresource
            and attrs.operation in ("CREATE", "UPDATE")
        ):
            return _labels(attrs.obj)
        name = attrs.namespace or (attrs.name if rt.plural == "namespaces" else "")
        namespace = self.cluster.store.get("/namespaces", "", name)
        if namespace is None:
            raise errors.not_found("", "namespaces", name)
        return _labels(namespace)

    def _invocation(self, hook: _Hook, attrs: Attributes) -> _Invocation | None:
        """generic.Webhook.ShouldCallHook."""
        spec = hook.spec
        namespace_error: APIError | None = None
        is_namespace = attrs.rt.group == "" and attrs.rt.plural == "namespaces"
        selector = _selector(spec.get("namespaceSelector"))
        if selector is not None and (attrs.namespace or is_namespace):
            try:
                if not selector.matches(self._namespace_labels(attrs)):
                    return None
            except APIError as error:
                namespace_error = error
        selector = _selector(spec.get("objectSelector"))
        if selector is not None and not (
            (attrs.obj is not None and selector.matches(_labels(attrs.obj)))
            or (attrs.old is not None and selector.matches(_labels(attrs.old)))
        ):
            return None
        rules = [r for r in spec.get("rules") or [] if isinstance(r, dict)]
        found: ResourceType | None = None
        if any(_rule_matches(r, attrs, attrs.rt) for r in rules):
            found = attrs.rt
        elif spec.get("matchPolicy", "Equivalent") == "Equivalent":
            equivalents = [
                rt
                for rt in self.cluster.registry.all()
                if rt.storage_key == attrs.rt.storage_key and rt is not attrs.rt
            ]
            found = next(
                (rt for r in rules for rt in equivalents if _rule_matches(r, attrs, rt)), None
            )
        if found is None:
            return None
        if namespace_error is not None:
            raise namespace_error
        conditions = [c for c in spec.get("matchConditions") or [] if isinstance(c, dict)]
        if conditions and not self._conditions_match(hook, conditions, attrs, found):
            return None
        return _Invocation(hook, found)

    def _conditions_match(
        self, hook: _Hook, conditions: list[Obj], attrs: Attributes, rt: ResourceType
    ) -> bool:
        """matchconditions.Matcher: false as soon as one is false; errors (all others
        true) refuse the request with 403, or skip the webhook with failurePolicy Ignore."""
        request = _request(rt, attrs)
        variables = {
            "object": request["object"],
            "oldObject": request["oldObject"],
            "request": request,
        }
        failures: list[str] = []
        for condition in conditions:
            expression = str(condition.get("expression", ""))
            try:
                value = evaluate(expression, variables)
            except CELError as exc:
                failures.append(f"expression '{expression}' resulted in error: {exc}")
                continue
            if value is not True:
                return False
        if not failures:
            return True
        if hook.spec.get("failurePolicy", "Fail") == "Ignore":
            return False
        why = failures[0] if len(failures) == 1 else "[" + ", ".join(failures) + "]"
        raise errors.forbidden(attrs.rt.group, attrs.rt.plural, attrs.name, why)

    # --- the calls --------------------------------------------------------------------------

    async def mutate(self, attrs: Attributes, warnings: list[str]) -> Obj | None:
        """The mutating webhooks in order, with one reinvocation round (IfNeeded)."""
        hooks = self._hooks(MUTATING_KEY)
        obj = attrs.obj
        previously: set[tuple[str, int]] = set()
        reinvoke: set[tuple[str, int]] = set()
        again = False
        for round_ in (0, 1):
            if round_ == 1 and not again:
                break
            for hook in hooks:
                current = Attributes(**{**attrs.__dict__, "obj": obj})
                invocation = self._invocation(hook, current)
                if invocation is None:
                    continue
                if round_ == 1 and hook.key not in reinvoke:
                    continue
                changed, obj = await self._call_mutating(invocation, current, warnings)
                if changed:
                    reinvoke |= previously
                    previously = set()
                    again = True
                if hook.spec.get("reinvocationPolicy") == "IfNeeded":
                    previously.add(hook.key)
        return obj

    async def validate(self, attrs: Attributes, warnings: list[str]) -> None:
        """The validating webhooks, in parallel; the first failure (in order) is raised."""
        invocations = [
            inv for hook in self._hooks(VALIDATING_KEY) if (inv := self._invocation(hook, attrs))
        ]
        if not invocations:
            return
        outcomes = await asyncio.gather(
            *(self._call_validating(inv, attrs, warnings) for inv in invocations),
            return_exceptions=True,
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _call_validating(
        self, invocation: _Invocation, attrs: Attributes, warnings: list[str]
    ) -> None:
        try:
            await self._call(invocation, attrs, warnings, mutating=False)
        except _CallFailed as failed:
            if invocation.hook.spec.get("failurePolicy", "Fail") == "Ignore":
                return
            raise failed.internal() from None

    async def _call_mutating(
        self, invocation: _Invocation, attrs: Attributes, warnings: list[str]
    ) -> tuple[bool, Obj | None]:
        try:
            response, sent = await self._call(invocation, attrs, warnings, mutating=True)
        except _CallFailed as failed:
            if invocation.hook.spec.get("failurePolicy", "Fail") == "Ignore":
                return False, attrs.obj
            raise failed.internal() from None
        patch = response.get("patch")
        if not patch:
            return False, attrs.obj
        name = invocation.hook.name
        try:
            operations = orjson.loads(base64.b64decode(patch))
            if not isinstance(operations, list):
                raise ValueError("not a JSON patch")
        except ValueError as exc:
            raise errors.internal(str(exc)) from exc
        if not operations:
            return False, attrs.obj
        if sent is None:
            raise errors.internal(
                f'admission webhook "{name}" attempted to modify the object, which is not'
                " supported for this operation"
            )
        try:
            patched = jsonpatch.apply_patch(sent, operations)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise errors.internal(str(exc)) from exc
        if not isinstance(patched, dict):
            raise errors.internal(f'admission webhook "{name}" returned a patch to a non-object')
        changed = patched != sent
        if _converts(invocation.rt, attrs):  # back to the request's version
            patched = builtinversions.served_form(attrs.rt, patched)
        patched["apiVersion"] = attrs.api_version
        patched["kind"] = attrs.kind_name
        return changed, patched

    async def _call(
        self, invocation: _Invocation, attrs: Attributes, warnings: list[str], mutating: bool
    ) -> tuple[Obj, Obj | None]:
        """One call: the review sent, the verified response returned (or raised)."""
        hook = invocation.hook
        spec = hook.spec
        if attrs.dry_run and spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        version = next(
            (v for v in spec.get("admissionReviewVersions") or [] if v in ("v1", "v1beta1")),
            "v1",
        )
        review, sent = self._review(invocation, attrs, version)
        timeout = int(spec.get("timeoutSeconds") or 10)
        body = await self._post(hook, review, timeout)
        response = self._verify(hook, body, review["request"]["uid"], version, mutating)
        warnings.extend(str(w) for w in response.get("warnings") or [])
        if not response.get("allowed"):
            raise _rejection(hook.name, response.get("status"))
        return response, sent

    def _review(
        self, invocation: _Invocation, attrs: Attributes, version: str
    ) -> tuple[Obj, Obj | None]:
        request = _request(invocation.rt, attrs)
        review = {
            "kind": "AdmissionReview",
            "apiVersion": f"admission.k8s.io/{version}",
            "request": request,
        }
        return review, request["object"]

    def _target(self, spec: Obj) -> tuple[str, str | None, str | None]:
        """(URL as Go prints it, URL to connect to, TLS server name); no URL to connect to
        (an unknown service): the error instead of the server name."""
        config = spec.get("clientConfig") or {}
        if config.get("url"):
            url = str(config["url"])
            return url, url, None
        service = config.get("service") or {}
        namespace, name = service.get("namespace", ""), service.get("name", "")
        port = service.get("port", 443)
        path = service.get("path") or ""
        host = f"{name}.{namespace}.svc"
        shown = f"https://{host}:{port}{path}"
        address = self.services.get((namespace, name))
        if address is None:
            return shown, None, f'service "{name}" not found'
        return shown, f"https://{address}{path}", host

    def _ssl(self, spec: Obj) -> ssl.SSLContext:
        bundle = (spec.get("clientConfig") or {}).get("caBundle") or ""
        pem = base64.b64decode(bundle) if bundle else b""
        context = self._contexts.get(pem)
        if context is None:
            if pem:  # the caBundle alone is trusted, as by kube-apiserver's client
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                context.load_verify_locations(cadata=pem.decode("ascii", "replace"))
            else:  # no caBundle: the system's roots
                context = ssl.create_default_context()
            self._contexts[pem] = context
        return context

    async def post_conversion(self, webhook: Obj, review: Obj, timeout: int, where: str) -> Any:
        """POST a ConversionReview to a CRD's conversion ``webhook`` (its clientConfig, as
        an admission webhook's); failures in apiextensions-apiserver's words."""
        hook = _Hook("", 0, {"clientConfig": webhook.get("clientConfig") or {}})
        try:
            return await self._post(hook, review, timeout)
        except _CallFailed as failure:
            raise conversion_failed(where, failure.reason) from None

    async def _post(self, hook: _Hook, review: Obj, timeout: int) -> Any:
        shown, url, server_name = self._target(hook.spec)
        query = f"?timeout={timeout}s"
        where = f'Post "{shown}{query}"'
        if url is None:
            raise _CallFailed(hook.name, f"{where}: {server_name}")
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            context = self._ssl(hook.spec)
        except (ssl.SSLError, ValueError) as exc:
            raise _CallFailed(hook.name, f"could not get REST client: {exc}", prefix=False) from exc
        try:
            async with asyncio.timeout(timeout):
                async with self._session.post(
                    url + query,
                    data=orjson.dumps(review),
                    headers={"Content-Type": "application/json", "Accept": "application/json, */*"},
                    ssl=context,
                    server_hostname=server_name,
                ) as response:
                    text = await response.read()
                    if response.status >= 300:
                        raise _CallFailed(
                            hook.name,
                            f'an error on the server ("{text.decode(errors="replace")}") has'
                            " prevented the request from succeeding",
                        )
        except TimeoutError:
            raise _CallFailed(hook.name, f"{where}: context deadline exceeded") from None
        except aiohttp.ClientConnectorCertificateError as exc:
            reason = await _certificate_error(exc, url, server_name, hook.spec)
            raise _CallFailed(
                hook.name, f"{where}: tls: failed to verify certificate: {reason}"
            ) from None
        except aiohttp.ClientSSLError as exc:
            raise _CallFailed(hook.name, f"{where}: {exc}") from None
        except aiohttp.ClientConnectorError as exc:
            host, port = exc.host, exc.port
            raise _CallFailed(
                hook.name, f"{where}: dial tcp {host}:{port}: connect: connection refused"
            ) from None
        except aiohttp.ClientError as exc:
            raise _CallFailed(hook.name, f"{where}: {exc}") from None
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise _CallFailed(
                hook.name, f"failed to decode the response: {exc}", prefix=False
            ) from None

    @staticmethod
    def _verify(hook: _Hook, body: Any, uid: str, version: str, mutating: bool) -> Obj:
        """request.VerifyAdmissionResponse."""

        def invalid(why: str) -> _CallFailed:
            return _CallFailed(hook.name, f"received invalid webhook response: {why}", prefix=False)

        if not isinstance(body, dict):
            raise _CallFailed(hook.name, "the response is not a JSON object")
        expected = f"admission.k8s.io/{version}"
        got_version = str(body.get("apiVersion") or expected)
        got_kind = str(body.get("kind") or "")
        if got_kind != "AdmissionReview" or not got_version.startswith("admission.k8s.io/"):
            raise _CallFailed(
                hook.name,
                f'no kind "{got_kind}" is registered for version "{got_version}" in scheme'
                ' "pkg/runtime/scheme.go:100"',
            )
        if got_version != expected:
            got, want = got_version.rpartition("/")[2], version
            raise _CallFailed(
                hook.name,
                f"converting ({got}.AdmissionReview) to ({want}.AdmissionReview): unknown"
                " conversion",
            )
        response = body.get("response")
        if not isinstance(response, dict):
            raise invalid("webhook response was absent")
        if response.get("uid") != uid:
            raise invalid(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
        patch_type = response.get("patchType") or ""
        if response.get("patch"):
            if not mutating:
                raise invalid("validating webhook may not return response.patch")
            if not patch_type and version == "v1":
                raise invalid("webhook returned response.patch but not response.patchType")
            if patch_type and patch_type != "JSONPatch":
                raise invalid(f'webhook returned invalid response.patchType of "{patch_type}"')
        return response


def _converts(rt: ResourceType, attrs: Attributes) -> bool:
    """Whether a webhook that matched ``rt`` gets the object in another version than the
    request's (a HorizontalPodAutoscaler or an Event, the built-in kinds served in two)."""
    return (
        attrs.kind is None
        and rt.api_version != attrs.rt.api_version
        and rt.storage_key == attrs.rt.storage_key
        and builtinversions.handles(rt)
        and builtinversions.handles(attrs.rt)
    )


def _request(rt: ResourceType, attrs: Attributes) -> Obj:
    """The AdmissionRequest for a webhook that matched ``rt`` (``attrs.rt``, or an
    equivalent version of it): fields in kube-apiserver's order, a fresh uid."""
    asked = attrs.rt
    kind = attrs.kind or (rt.group, rt.version, rt.kind)
    request_kind = attrs.kind or (asked.group, asked.version, asked.kind)
    api_version = f"{kind[0]}/{kind[1]}" if kind[0] else kind[1]

    def as_version(obj: Obj | None) -> Obj | None:
        if obj is None:
            return None
        if _converts(rt, attrs):
            # the webhook's version (matchPolicy Equivalent), as the dispatcher converts
            obj = builtinversions.served_form(rt, copy.deepcopy(obj))
        rest = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
        return {"kind": kind[2], "apiVersion": api_version, **rest}

    request: Obj = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": kind[0], "version": kind[1], "kind": kind[2]},
        "resource": {"group": rt.group, "version": rt.version, "resource": rt.plural},
    }
    if attrs.subresource:
        request["subResource"] = attrs.subresource
    group, version, kind_name = request_kind
    request["requestKind"] = {"group": group, "version": version, "kind": kind_name}
    request["requestResource"] = {
        "group": asked.group,
        "version": asked.version,
        "resource": asked.plural,
    }
    if attrs.subresource:
        request["requestSubResource"] = attrs.subresource
    if attrs.name:
        request["name"] = attrs.name
    if attrs.namespace:
        request["namespace"] = attrs.namespace
    request.update(
        {
            "operation": attrs.operation,
            "userInfo": attrs.user_info or USER_INFO,
            "object": as_version(attrs.obj),
            "oldObject": as_version(attrs.old),
            "dryRun": attrs.dry_run,
            "options": attrs.options,
        }
    )
    return request


async def _certificate_error(
    exc: aiohttp.ClientConnectorCertificateError, url: str, server_name: str | None, spec: Obj
) -> str:
    """Go's x509 error for a certificate that failed verification (UnknownAuthorityError,
    HostnameError), worked out from the served certificate (fetched again unverified)."""
    verify = exc.certificate_error
    code = getattr(verify, "verify_code", 0)
    parts = urlsplit(url)
    host = parts.hostname or ""
    wanted = server_name or host
    leaf = await _served_certificate(host, parts.port or 443, wanted)
    if code in (62, 64) and leaf is not None:  # X509_V_ERR_HOSTNAME_MISMATCH / IP_ADDRESS_MISMATCH
        return _hostname_error(leaf, wanted)
    if code in (62, 64):
        return f"x509: certificate is not valid for {wanted}"
    text = "x509: certificate signed by unknown authority"
    if leaf is None:
        return text
    bundle = (spec.get("clientConfig") or {}).get("caBundle") or ""
    try:
        candidates = x509.load_pem_x509_certificates(base64.b64decode(bundle)) if bundle else []
    except ValueError:
        candidates = []
    for candidate in candidates:
        if candidate.subject == leaf.issuer:
            key = candidate.public_key()
            failure = (
                "x509: ECDSA verification failure"
                if isinstance(key, ec.EllipticCurvePublicKey)
                else "crypto/rsa: verification error"
            )
            names = candidate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
            name = str(names[0].value) if names else candidate.subject.rfc4514_string()
            return (
                f'{text} (possibly because of "{failure}" while trying to verify candidate'
                f' authority certificate "{name}")'
            )
    return text


async def _served_certificate(host: str, port: int, server_name: str) -> x509.Certificate | None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        async with asyncio.timeout(2):
            _, writer = await asyncio.open_connection(
                host, port, ssl=context, server_hostname=server_name
            )
    except (OSError, TimeoutError):
        return None
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        return x509.load_der_x509_certificate(der) if der else None
    finally:
        writer.close()


def _hostname_error(leaf: x509.Certificate, host: str) -> str:
    """crypto/x509 HostnameError.Error()."""
    try:
        names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        names = x509.SubjectAlternativeName([])
    try:
        ipaddress.ip_address(host)
        addresses = [str(a) for a in names.get_values_for_type(x509.IPAddress)]
        if not addresses:
            return (
                f"x509: cannot validate certificate for {host} because it doesn't contain any"
                " IP SANs"
            )
        valid = ", ".join(addresses)
    except ValueError:
        valid = ", ".join(names.get_values_for_type(x509.DNSName))
    if not valid:
        return f"x509: certificate is not valid for any names, but wanted to match {host}"
    return f"x509: certificate is valid for {valid}, not {host}"


@dataclass
class _CallFailed(Exception):
    """webhookutil.ErrCallingWebhook: the call did not produce a usable answer."""

    webhook: str
    reason: str
    prefix: bool = field(default=True)

    def internal(self) -> APIError:
        reason = f"failed to call webhook: {self.reason}" if self.prefix else self.reason
        message = f'failed calling webhook "{self.webhook}": {reason}'
        return APIError(
            500,
            "InternalError",
            f"Internal error occurred: {message}",
            {"causes": [{"message": message}]},
        )


def _rejection(name: str, status: Any) -> APIError:
    """webhookerrors.ToStatusErr: the webhook's Status with the denial message."""
    result: Obj = dict(status) if isinstance(status, dict) else {}
    code = result.get("code")
    if not isinstance(code, int) or code < 400:
        code = 400
    denied = f'admission webhook "{name}" denied the request'
    if result.get("message"):
        message = f"{denied}: {result['message']}"
    elif result.get("reason"):
        message = f"{denied}: {result['reason']}"
    else:
        message = f"{denied} without explanation"
    details = result.get("details") if isinstance(result.get("details"), dict) else None
    error = APIError(code, str(result.get("reason") or ""), message, details)
    if isinstance(result.get("metadata"), dict):
        error.list_metadata = dict(result["metadata"])
    return error
