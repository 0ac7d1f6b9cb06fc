"""Admission webhooks: configurations, matching, the AdmissionReview sent and the answers.

Each test starts an HTTPS webhook server (tests/conformance/webhook_server.py) on
127.0.0.1, which kube-apiserver and the embedded server both call. Every webhook is
limited to the test's namespace (``namespaceSelector`` on ``kubernetes.io/metadata.name``)
so that on the real control plane, shared by the session, no other test meets it.

kube-apiserver picks up a new configuration asynchronously (its informer): ``install``
waits until a marker webhook of the configuration has been called for a dry-run create of
a labelled ConfigMap. The embedded server uses a configuration from its create on.
"""

from __future__ import annotations

import asyncio
import copy
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from reconcile_kit.testing.backends import Backend

from .kube import JSON_PATCH, MERGE, Widgets, collect, ok, req, watch_events
from .webhook_server import Review, WebhookServer, answer, json_patch

GROUP_PATH = "/apis/admissionregistration.k8s.io/v1"
VALIDATING = f"{GROUP_PATH}/validatingwebhookconfigurations"
MUTATING = f"{GROUP_PATH}/mutatingwebhookconfigurations"
CONFIGMAPS_RULE = {
    "operations": ["CREATE", "UPDATE", "DELETE"],
    "apiGroups": [""],
    "apiVersions": ["v1"],
    "resources": ["configmaps"],
}


class Webhooks:
    """A webhook server plus the configurations a test installed (deleted afterwards)."""

    def __init__(self, backend: Backend, server: WebhookServer) -> None:
        self.backend = backend
        self.server = server
        self.installed: list[str] = []

    @property
    def in_namespace(self) -> dict[str, Any]:
        return {"matchLabels": {"kubernetes.io/metadata.name": self.backend.namespace}}

    def hook(self, name: str, path: str | None = None, **fields: Any) -> dict[str, Any]:
        """A webhook (``name``.example.com) on ConfigMaps of the test's namespace."""
        hook: dict[str, Any] = {
            "name": f"{name}.example.com",
            "clientConfig": self.server.client_config(path or name),
            "rules": [CONFIGMAPS_RULE],
            "namespaceSelector": self.in_namespace,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }
        hook.update(fields)
        return hook

    async def install(self, kind: str, *hooks: dict[str, Any], name: str = "") -> dict[str, Any]:
        """Create a configuration of ``hooks`` (plus a marker webhook) and wait until the
        server calls it."""
        name = name or self.backend.unique(kind.lower())
        marker = self.hook(
            "marker",
            rules=[{**CONFIGMAPS_RULE, "operations": ["CREATE"]}],
            objectSelector={"matchLabels": {"marker": name}},
        )
        path = MUTATING if kind == "Mutating" else VALIDATING
        config = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": f"{kind}WebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [marker, *hooks],
        }
        created = await ok(self.backend, "POST", path, config)
        self.installed.append(f"{path}/{name}")
        await self._until_called(name)
        return dict(created)

    async def _until_called(self, name: str) -> None:
        cms = f"/api/v1/namespaces/{self.backend.namespace}/configmaps"

        def marked(review: Review) -> bool:
            labels = review["request"]["object"]["metadata"].get("labels") or {}
            return bool(labels.get("marker") == name)

        async def poke() -> None:
            for _ in range(300):
                body = {"metadata": {"generateName": "marker-", "labels": {"marker": name}}}
                await req(self.backend, "POST", cms, body, params={"dryRun": "All"})
                if any(marked(r) for r in self.server.received["marker"]):
                    return
                await asyncio.sleep(0.05)  # the informer has no event a client can await

        await asyncio.wait_for(poke(), 20)

    async def remove(self) -> None:
        for path in self.installed:
            await req(self.backend, "DELETE", path)
        self.installed.clear()


@pytest_asyncio.fixture
async def webhooks(backend: Backend) -> AsyncIterator[Webhooks]:
    server = await WebhookServer().start()
    hooks = Webhooks(backend, server)
    try:
        yield hooks
    finally:
        await hooks.remove()
        await server.stop()


def configmaps(backend: Backend) -> str:
    return f"/api/v1/namespaces/{backend.namespace}/configmaps"


def web_error() -> web.Response:
    """A webhook failing with HTTP 500 and a plain-text body."""
    return web.Response(status=500, text="the webhook broke")


def closed_port() -> int:
    """A loopback port nobody listens on (bound and released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def without(obj: dict[str, Any] | None, *fields: str) -> dict[str, Any] | None:
    """``obj`` without the metadata fields that differ from run to run."""
    if obj is None:
        return None
    obj = copy.deepcopy(obj)
    for f in fields:
        obj["metadata"].pop(f, None)
    return obj


VOLATILE = ("uid", "creationTimestamp", "resourceVersion", "managedFields")


# --- configurations -----------------------------------------------------------------------


async def test_configuration_defaults(backend: Backend) -> None:
    hook = {
        "name": "a.example.com",
        "clientConfig": {"url": "https://127.0.0.1:1/x"},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "rules": [CONFIGMAPS_RULE],
    }
    service_hook = {
        "name": "b.example.com",
        "clientConfig": {"service": {"namespace": "ns", "name": "svc"}},
        "sideEffects": "NoneOnDryRun",
        "admissionReviewVersions": ["v1beta1", "v1"],
    }
    defaults = {
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "namespaceSelector": {},
        "objectSelector": {},
        "timeoutSeconds": 10,
    }
    for path, kind, extra in (
        (VALIDATING, "ValidatingWebhookConfiguration", {}),
        (MUTATING, "MutatingWebhookConfiguration", {"reinvocationPolicy": "Never"}),
    ):
        name = backend.unique("defaults")
        body = {"kind": kind, "metadata": {"name": name}, "webhooks": [hook, service_hook]}
        created = await ok(backend, "POST", path, body)
        assert created["metadata"]["generation"] == 1
        assert created["webhooks"] == [
            {
                **hook,
                **defaults,
                **extra,
                "rules": [{**CONFIGMAPS_RULE, "scope": "*"}],
            },
            {
                **service_hook,
                **defaults,
                **extra,
                "clientConfig": {"service": {"namespace": "ns", "name": "svc", "port": 443}},
            },
        ]
        table = await req(
            backend,
            "GET",
            f"{path}/{name}",
            params={},
        )
        assert table.status == 200
        await ok(backend, "DELETE", f"{path}/{name}")


async def test_configuration_validation(backend: Backend) -> None:
    name = backend.unique("invalid")
    body = {
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "a",
                "clientConfig": {
                    "url": "https://127.0.0.1:1/x",
                    "service": {"namespace": "n", "name": "s"},
                },
            },
            {
                "name": "a.example.com",
                "clientConfig": {},
                "sideEffects": "Some",
                "admissionReviewVersions": ["v1"],
            },
            {
                "name": "a.example.com",
                "clientConfig": {"url": "http://x/y?z=1"},
                "sideEffects": "None",
                "failurePolicy": "Maybe",
                "timeoutSeconds": 31,
                "admissionReviewVersions": ["v2"],
                "rules": [
                    {
                        "operations": ["CREATE", "*"],
                        "apiGroups": [],
                        "apiVersions": ["v1"],
                        "resources": ["*", "pods"],
                        "scope": "Nope",
                    }
                ],
            },
        ],
    }
    reply = await req(backend, "POST", VALIDATING, body)
    assert reply.status == 422, reply.body
    causes = [(c["field"], c["reason"], c["message"]) for c in reply.body["details"]["causes"]]
    assert causes == [
        (
            "webhooks[0].name",
            "FieldValueInvalid",
            'Invalid value: "a": should be a domain with at least three segments separated by dots',
        ),
        (
            "webhooks[0].sideEffects",
            "FieldValueRequired",
            "Required value: must specify one of None, NoneOnDryRun",
        ),
        (
            "webhooks[0].clientConfig",
            "FieldValueRequired",
            "Required value: exactly one of url or service is required",
        ),
        (
            "webhooks[0].admissionReviewVersions",
            "FieldValueRequired",
            "Required value: must specify one of v1, v1beta1",
        ),
        (
            "webhooks[1].sideEffects",
            "FieldValueNotSupported",
            'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
        ),
        (
            "webhooks[1].clientConfig",
            "FieldValueRequired",
            "Required value: exactly one of url or service is required",
        ),
        (
            "webhooks[2].rules[0].operations",
            "FieldValueInvalid",
            'Invalid value: []admissionregistration.OperationType{"CREATE", "*"}: if \'*\' is'
            " present, must not specify other operations",
        ),
        ("webhooks[2].rules[0].apiGroups", "FieldValueRequired", "Required value"),
        (
            "webhooks[2].rules[0].resources",
            "FieldValueInvalid",
            'Invalid value: []string{"*", "pods"}: if \'*\' is present, must not specify other'
            " resources without subresources",
        ),
        (
            "webhooks[2].rules[0].scope",
            "FieldValueNotSupported",
            'Unsupported value: "Nope": supported values: "*", "Cluster", "Namespaced"',
        ),
        (
            "webhooks[2].failurePolicy",
            "FieldValueNotSupported",
            'Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
        ),
        (
            "webhooks[2].timeoutSeconds",
            "FieldValueInvalid",
            "Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        ),
        (
            "webhooks[2].clientConfig.url",
            "FieldValueInvalid",
            "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format:"
            " https://host[/path]",
        ),
        (
            "webhooks[2].clientConfig.url",
            "FieldValueInvalid",
            'Invalid value: "z=1": query parameters are not permitted in the URL',
        ),
        (
            "webhooks[2].admissionReviewVersions",
            "FieldValueInvalid",
            'Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
        ),
        ("webhooks[2].name", "FieldValueDuplicate", 'Duplicate value: "a.example.com"'),
    ]
    assert reply.body["message"].startswith(
        f'ValidatingWebhookConfiguration.admissionregistration.k8s.io "{name}" is invalid: ['
        "webhooks[0].name: Invalid value"
    )
    assert reply.body["details"]["kind"] == "ValidatingWebhookConfiguration"
    assert reply.body["details"]["group"] == "admissionregistration.k8s.io"


async def test_configurations_are_discovered_listed_and_shown(backend: Backend) -> None:
    listing = await ok(backend, "GET", GROUP_PATH)
    by_name = {r["name"]: r for r in listing["resources"]}
    for plural, kind in (
        ("validatingwebhookconfigurations", "ValidatingWebhookConfiguration"),
        ("mutatingwebhookconfigurations", "MutatingWebhookConfiguration"),
    ):
        entry = by_name[plural]
        assert entry["kind"] == kind
        assert entry["namespaced"] is False
        assert entry["singularName"] == kind.lower()
        assert entry["categories"] == ["api-extensions"]
        assert entry["verbs"] == [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ]
    from ..kubehttp import send

    name = backend.unique("table")
    hook = {
        "name": "a.example.com",
        "clientConfig": {"url": "https://127.0.0.1:1/x"},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    body = {"metadata": {"name": name}, "webhooks": [hook, {**hook, "name": "b.example.com"}]}
    listed = await ok(backend, "GET", VALIDATING)
    events = watch_events(
        backend, VALIDATING, {"resourceVersion": listed["metadata"]["resourceVersion"]}
    )
    await ok(backend, "POST", VALIDATING, body)
    added = [e for e in await collect(events, 1) if e["object"]["metadata"]["name"] == name]
    assert [(e["type"], e["object"]["kind"]) for e in added] == [
        ("ADDED", "ValidatingWebhookConfiguration")
    ]
    await events.aclose()
    listed = await ok(backend, "GET", VALIDATING, params={"fieldSelector": f"metadata.name={name}"})
    assert [c["metadata"]["name"] for c in listed["items"]] == [name]
    status, table, _ = await send(
        backend.api,
        "GET",
        f"{VALIDATING}/{name}",
        accept="application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    )
    assert status == 200
    columns = [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [("Name", "string", 0), ("Webhooks", "integer", 0), ("Age", "string", 0)]
    assert table["rows"][0]["cells"][:2] == [name, 2]
    patched = await ok(
        backend,
        "PATCH",
        f"{VALIDATING}/{name}",
        [{"op": "replace", "path": "/webhooks/0/timeoutSeconds", "value": 5}],
        content_type=JSON_PATCH,
    )
    assert patched["webhooks"][0]["timeoutSeconds"] == 5
    assert patched["metadata"]["generation"] == 2
    await ok(backend, "DELETE", f"{VALIDATING}/{name}")


# --- calls ----------------------------------------------------------------------------------


async def test_deny_with_message_and_code(backend: Backend, webhooks: Webhooks) -> None:
    server = webhooks.server
    server.handlers["deny"] = lambda r: answer(
        r, False, status={"code": 403, "message": "no configmaps here"}
    )
    server.handlers["plain"] = lambda r: answer(r, False)
    await webhooks.install(
        "Validating",
        webhooks.hook("deny", objectSelector={"matchLabels": {"deny": "coded"}}),
        webhooks.hook("plain", objectSelector={"matchLabels": {"deny": "plain"}}),
    )
    reply = await req(
        backend,
        "POST",
        configmaps(backend),
        {"metadata": {"name": "c1", "labels": {"deny": "coded"}}},
    )
    assert (reply.status, reply.body) == (
        403,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'admission webhook "deny.example.com" denied the request:'
            " no configmaps here",
            "code": 403,
        },
    )
    reply = await req(
        backend,
        "POST",
        configmaps(backend),
        {"metadata": {"name": "c2", "labels": {"deny": "plain"}}},
    )
    assert (reply.status, reply.body) == (
        400,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'admission webhook "plain.example.com" denied the request without'
            " explanation",
            "code": 400,
        },
    )
    assert (await req(backend, "GET", f"{configmaps(backend)}/c1")).status == 404


async def test_allow_with_warnings(backend: Backend, webhooks: Webhooks) -> None:
    webhooks.server.handlers["warn"] = lambda r: answer(
        r, warnings=["first warning", 'a "quoted" one']
    )
    await webhooks.install("Validating", webhooks.hook("warn"))
    reply = await req(backend, "POST", configmaps(backend), {"metadata": {"name": "c"}})
    assert reply.status == 201
    assert reply.headers.get_list("warning") == [
        '299 - "first warning"',
        '299 - "a \\"quoted\\" one"',
    ]
    # warnings reach the client with a denial too
    webhooks.server.handlers["warn"] = lambda r: answer(
        r, False, warnings=["denied, with a warning"]
    )
    reply = await req(backend, "POST", configmaps(backend), {"metadata": {"name": "d"}})
    assert reply.status == 400
    assert reply.headers.get_list("warning") == ['299 - "denied, with a warning"']


async def test_mutation_by_json_patch(backend: Backend, webhooks: Webhooks) -> None:
    webhooks.server.handlers["mutate"] = lambda r: answer(
        r,
        **json_patch(
            [
                {"op": "add", "path": "/data", "value": {"added": "by-webhook"}},
                {"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}},
            ]
        ),
    )
    await webhooks.install("Mutating", webhooks.hook("mutate"))
    created = await ok(backend, "POST", configmaps(backend), {"metadata": {"name": "c"}})
    assert created["data"] == {"added": "by-webhook"}
    assert created["metadata"]["labels"] == {"mutated": "yes"}
    stored = await ok(backend, "GET", f"{configmaps(backend)}/c")
    assert stored["data"] == {"added": "by-webhook"}
    assert stored["metadata"]["labels"] == {"mutated": "yes"}
    # the field manager runs before admission: what the webhook set is nobody's (here the
    # client set no field, so there is no entry at all)
    assert "managedFields" not in stored["metadata"]
    updated = await ok(
        backend,
        "PATCH",
        f"{configmaps(backend)}/c",
        {"metadata": {"annotations": {"by": "client"}}},
        content_type=MERGE,
        params={"fieldManager": "patcher"},
    )
    assert "managedFields" not in updated["metadata"]  # an untracked object stays untracked


def request_fields(review: Review) -> dict[str, Any]:
    request = dict(review["request"])
    assert review["apiVersion"] == "admission.k8s.io/v1"
    assert review["kind"] == "AdmissionReview"
    request.pop("uid")
    request["object"] = without(request.get("object"), *VOLATILE)
    request["oldObject"] = without(request.get("oldObject"), *VOLATILE)
    return request


USER = {
    "username": "admin",
    "uid": "admin",
    "groups": ["system:masters", "system:authenticated"],
}


async def test_request_body(backend: Backend, webhooks: Webhooks) -> None:
    server = webhooks.server
    await webhooks.install("Mutating", webhooks.hook("mutating"))
    await webhooks.install("Validating", webhooks.hook("validating"))
    ns = backend.namespace
    path = configmaps(backend)
    await ok(
        backend,
        "POST",
        path,
        {"metadata": {"name": "c", "labels": {"a": "b"}}, "data": {"k": "v"}},
        params={"fieldManager": "tester"},
    )
    configmap_kind = {"group": "", "version": "v1", "kind": "ConfigMap"}
    configmap_resource = {"group": "", "version": "v1", "resource": "configmaps"}

    def created(r: Review) -> bool:
        return bool(r["request"]["operation"] == "CREATE" and r["request"].get("name") == "c")

    mutating = await server.wait_for("mutating", created)
    validating = await server.wait_for("validating", created)
    assert mutating["request"]["uid"] != validating["request"]["uid"]
    object_sent = {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "c", "namespace": ns, "labels": {"a": "b"}},
        "data": {"k": "v"},
    }
    expected = {
        "kind": configmap_kind,
        "resource": configmap_resource,
        "requestKind": configmap_kind,
        "requestResource": configmap_resource,
        "name": "c",
        "namespace": ns,
        "operation": "CREATE",
        "userInfo": USER,
        "object": object_sent,
        "oldObject": None,
        "dryRun": False,
        "options": {
            "kind": "CreateOptions",
            "apiVersion": "meta.k8s.io/v1",
            "fieldManager": "tester",
        },
    }
    assert request_fields(mutating) == expected
    assert request_fields(validating) == expected
    assert server.queries["validating"][-1] == {"timeout": "10s"}
    # the validating webhook sees the object as it will be stored (uid, creationTimestamp)
    assert validating["request"]["object"]["metadata"]["uid"]
    assert "uid" not in mutating["request"]["object"]["metadata"]

    await ok(
        backend,
        "PATCH",
        f"{path}/c",
        {"data": {"k": "w"}},
        content_type=MERGE,
        params={"dryRun": "All"},
    )
    update = await server.wait_for("validating", lambda r: r["request"]["operation"] == "UPDATE")
    await ok(
        backend,
        "POST",
        path,
        {"metadata": {"name": "strict"}},
        params={"fieldValidation": "Strict", "dryRun": "All"},
    )
    strict = await server.wait_for("validating", lambda r: r["request"].get("name") == "strict")
    assert strict["request"]["options"] == {
        "kind": "CreateOptions",
        "apiVersion": "meta.k8s.io/v1",
        "dryRun": ["All"],
        "fieldValidation": "Strict",
    }
    assert request_fields(update) == {
        **expected,
        "operation": "UPDATE",
        "object": {**object_sent, "data": {"k": "w"}},
        "oldObject": object_sent,
        "dryRun": True,
        "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]},
    }


async def test_delete_sends_the_old_object(backend: Backend, webhooks: Webhooks) -> None:
    server = webhooks.server
    await webhooks.install("Mutating", webhooks.hook("mutating"))
    await webhooks.install("Validating", webhooks.hook("validating"))
    path = configmaps(backend)
    created = await ok(backend, "POST", path, {"metadata": {"name": "c"}, "data": {"k": "v"}})
    await ok(backend, "DELETE", f"{path}/c", {"propagationPolicy": "Background"})

    def deleting(r: Review) -> bool:
        return bool(r["request"]["operation"] == "DELETE")

    mutating = await server.wait_for("mutating", deleting)
    validating = await server.wait_for("validating", deleting)
    assert len([r for r in server.received["mutating"] if deleting(r)]) == 1
    options = {
        "kind": "DeleteOptions",
        "apiVersion": "meta.k8s.io/v1",
        "propagationPolicy": "Background",
    }
    for review in (mutating, validating):
        request = review["request"]
        assert request["object"] is None
        assert request["oldObject"]["metadata"]["uid"] == created["metadata"]["uid"]
        assert (
            request["oldObject"]["metadata"]["resourceVersion"]
            == (created["metadata"]["resourceVersion"])
        )
        assert request["oldObject"]["data"] == {"k": "v"}
        assert request["options"] == options
        assert request["name"] == "c"
        assert request["operation"] == "DELETE"


async def test_status_subresource_rule(
    backend: Backend, webhooks: Webhooks, widgets: Widgets
) -> None:
    server = webhooks.server
    rule = {
        "operations": ["UPDATE"],
        "apiGroups": [widgets.group],
        "apiVersions": ["v1"],
        "resources": ["widgets/status"],
    }
    server.handlers["status"] = lambda r: answer(
        r,
        (r["request"]["object"].get("status") or {}).get("replicas") != 13,
        status={"message": "not 13"},
    )
    await webhooks.install("Validating", webhooks.hook("status", rules=[rule]))
    await ok(backend, "POST", widgets.path, widgets.widget("w"))
    await ok(backend, "PATCH", f"{widgets.path}/w", {"spec": {"size": 2}}, content_type=MERGE)
    await ok(
        backend,
        "PATCH",
        f"{widgets.path}/w/status",
        {"status": {"replicas": 1}},
        content_type=MERGE,
    )
    reply = await req(
        backend,
        "PATCH",
        f"{widgets.path}/w/status",
        {"status": {"replicas": 13}},
        content_type=MERGE,
    )
    assert reply.status == 400
    assert reply.body["message"] == (
        'admission webhook "status.example.com" denied the request: not 13'
    )
    reviews = server.received["status"]
    # the status writes only (a loaded kube-apiserver may review one patch twice: its
    # GuaranteedUpdate retries on a stale watch-cache read, calling admission again)
    replicas = {(r["request"]["object"].get("status") or {}).get("replicas") for r in reviews}
    assert replicas == {1, 13}
    assert all(r["request"]["subResource"] == "status" for r in reviews)
    request = reviews[0]["request"]
    assert request["subResource"] == "status"
    assert request["requestSubResource"] == "status"
    assert request["kind"] == {"group": widgets.group, "version": "v1", "kind": "Widget"}
    assert request["resource"] == {"group": widgets.group, "version": "v1", "resource": "widgets"}


async def test_namespace_and_object_selectors(backend: Backend, webhooks: Webhooks) -> None:
    server = webhooks.server
    server.handlers["deny"] = lambda r: answer(r, False, status={"message": "selected"})
    other = backend.unique("other")
    await ok(backend, "POST", "/api/v1/namespaces", {"metadata": {"name": other}})
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "deny",
            objectSelector={
                "matchExpressions": [{"key": "team", "operator": "In", "values": ["red"]}]
            },
        ),
    )
    path = configmaps(backend)
    assert (await req(backend, "POST", path, {"metadata": {"name": "blue"}})).status == 201
    red = {"metadata": {"name": "red", "labels": {"team": "red"}}}
    assert (await req(backend, "POST", path, red)).status == 400
    # the namespace selector: the same object in another namespace is not selected
    reply = await req(backend, "POST", f"/api/v1/namespaces/{other}/configmaps", red)
    assert reply.status == 201
    # the old object's labels count too: an update that removes the label is selected
    await ok(backend, "POST", path, {"metadata": {"name": "was-red"}})
    server.handlers["deny"] = lambda r: answer(r)
    await ok(
        backend,
        "PATCH",
        f"{path}/was-red",
        {"metadata": {"labels": {"team": "red"}}},
        content_type=MERGE,
    )
    server.handlers["deny"] = lambda r: answer(r, False, status={"message": "selected"})
    reply = await req(
        backend,
        "PATCH",
        f"{path}/was-red",
        {"metadata": {"labels": {"team": None}}},
        content_type=MERGE,
    )
    assert reply.status == 400
    assert (
        reply.body["message"] == 'admission webhook "deny.example.com" denied the request: selected'
    )
    await req(backend, "DELETE", f"/api/v1/namespaces/{other}")


async def test_failure_policy_with_an_unreachable_webhook(
    backend: Backend, webhooks: Webhooks
) -> None:
    port = closed_port()
    url = f"https://127.0.0.1:{port}/nobody"
    unreachable = {"url": url, "caBundle": webhooks.server.ca_bundle}
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "fail", clientConfig=unreachable, objectSelector={"matchLabels": {"policy": "fail"}}
        ),
        webhooks.hook(
            "ignore",
            clientConfig=unreachable,
            failurePolicy="Ignore",
            objectSelector={"matchLabels": {"policy": "ignore"}},
        ),
    )
    path = configmaps(backend)
    reply = await req(
        backend, "POST", path, {"metadata": {"name": "c1", "labels": {"policy": "ignore"}}}
    )
    assert reply.status == 201
    reply = await req(
        backend, "POST", path, {"metadata": {"name": "c2", "labels": {"policy": "fail"}}}
    )
    error = (
        f'failed calling webhook "fail.example.com": failed to call webhook: Post'
        f' "{url}?timeout=10s": dial tcp 127.0.0.1:{port}: connect: connection refused'
    )
    assert (reply.status, reply.body) == (
        500,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": f"Internal error occurred: {error}",
            "reason": "InternalError",
            "details": {"causes": [{"message": error}]},
            "code": 500,
        },
    )


async def test_timeout(backend: Backend, webhooks: Webhooks) -> None:
    release = asyncio.Event()

    async def slow(review: Review) -> dict[str, Any]:
        await asyncio.wait_for(release.wait(), 10)
        return answer(review)

    webhooks.server.handlers["slow"] = slow
    await webhooks.install(
        "Validating",
        webhooks.hook("slow", timeoutSeconds=1, objectSelector={"matchLabels": {"slow": "yes"}}),
    )
    try:
        reply = await req(
            backend,
            "POST",
            configmaps(backend),
            {"metadata": {"name": "c", "labels": {"slow": "yes"}}},
        )
    finally:
        release.set()
    url = webhooks.server.url("slow")
    assert reply.status == 500
    assert reply.body["message"] == (
        'Internal error occurred: failed calling webhook "slow.example.com": failed to call'
        f' webhook: Post "{url}?timeout=1s": context deadline exceeded'
    )
    assert webhooks.server.queries["slow"][-1] == {"timeout": "1s"}


async def test_dry_run_and_side_effects(backend: Backend, webhooks: Webhooks) -> None:
    server = webhooks.server
    await webhooks.install(
        "Validating",
        webhooks.hook("none"),
        webhooks.hook("on-dry-run", sideEffects="NoneOnDryRun"),
    )
    reply = await req(
        backend, "POST", configmaps(backend), {"metadata": {"name": "c"}}, params={"dryRun": "All"}
    )
    assert reply.status == 201
    for path in ("none", "on-dry-run"):
        review = await server.wait_for(path, lambda r: r["request"].get("name") == "c")
        assert review["request"]["dryRun"] is True
        assert review["request"]["options"]["dryRun"] == ["All"]
    assert (await req(backend, "GET", f"{configmaps(backend)}/c")).status == 404
    # v1 accepts only None and NoneOnDryRun: a webhook with side effects cannot be registered
    reply = await req(
        backend,
        "POST",
        VALIDATING,
        {
            "metadata": {"name": backend.unique("side-effects")},
            "webhooks": [webhooks.hook("some", sideEffects="Some")],
        },
    )
    assert reply.status == 422
    assert reply.body["details"]["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
            "field": "webhooks[0].sideEffects",
        }
    ]


async def test_reinvocation(backend: Backend, webhooks: Webhooks) -> None:
    server = webhooks.server

    def first(review: Review) -> dict[str, Any]:
        labels = review["request"]["object"]["metadata"].get("labels") or {}
        return answer(
            review,
            **json_patch(
                [
                    {
                        "op": "add",
                        "path": "/metadata/annotations",
                        "value": {"first-saw-second": str("second" in labels).lower()},
                    }
                ]
            ),
        )

    def second(review: Review) -> dict[str, Any]:
        return answer(
            review,
            **json_patch([{"op": "add", "path": "/metadata/labels", "value": {"second": "x"}}]),
        )

    server.handlers["first"] = first
    server.handlers["second"] = second
    server.handlers["never"] = lambda r: answer(r)
    # configurations run in name order, webhooks in list order
    await webhooks.install(
        "Mutating",
        webhooks.hook("first", reinvocationPolicy="IfNeeded"),
        webhooks.hook("never"),
        name=backend.unique("a-first"),
    )
    await webhooks.install("Mutating", webhooks.hook("second"), name=backend.unique("b-second"))
    created = await ok(backend, "POST", configmaps(backend), {"metadata": {"name": "c"}})
    assert created["metadata"]["labels"] == {"second": "x"}
    assert created["metadata"]["annotations"] == {"first-saw-second": "true"}

    def named(r: Review) -> bool:
        return bool(r["request"].get("name") == "c")

    assert len([r for r in server.received["first"] if named(r)]) == 2
    assert len([r for r in server.received["never"] if named(r)]) == 1
    assert len([r for r in server.received["second"] if named(r)]) == 1


async def test_malformed_responses(backend: Backend, webhooks: Webhooks) -> None:
    server = webhooks.server
    server.handlers["uid"] = lambda r: {**answer(r), "response": {"uid": "other", "allowed": True}}
    server.handlers["kind"] = lambda r: {**answer(r), "apiVersion": "admission.k8s.io/v1beta1"}
    server.handlers["absent"] = lambda r: {k: v for k, v in answer(r).items() if k != "response"}
    server.handlers["patch"] = lambda r: answer(
        r, **json_patch([{"op": "add", "path": "/data", "value": {"a": "b"}}])
    )
    server.handlers["type"] = lambda r: answer(r, patch=json_patch([])["patch"])
    server.handlers["nonsense"] = lambda r: {"kind": "Nonsense"}
    cases = ("uid", "kind", "absent", "patch", "type", "nonsense")
    for case in cases:
        await webhooks.install(
            "Validating", webhooks.hook(case, objectSelector={"matchLabels": {"case": case}})
        )
    messages = {}
    for case in cases:
        reply = await req(
            backend,
            "POST",
            configmaps(backend),
            {"metadata": {"name": case, "labels": {"case": case}}},
        )
        assert reply.status == 500, (case, reply.body)
        assert reply.body["reason"] == "InternalError"
        assert reply.body["details"] == {"causes": [{"message": reply.body["message"][25:]}]}
        messages[case] = reply.body["message"]
    uid = server.received["uid"][-1]["request"]["uid"]
    prefix = "Internal error occurred: failed calling webhook"
    assert messages == {
        "uid": f'{prefix} "uid.example.com": received invalid webhook response: expected'
        f' response.uid="{uid}", got "other"',
        "kind": f'{prefix} "kind.example.com": failed to call webhook: converting'
        " (v1beta1.AdmissionReview) to (v1.AdmissionReview): unknown conversion",
        "absent": f'{prefix} "absent.example.com": received invalid webhook response: webhook'
        " response was absent",
        "patch": f'{prefix} "patch.example.com": received invalid webhook response: validating'
        " webhook may not return response.patch",
        "type": f'{prefix} "type.example.com": received invalid webhook response: validating'
        " webhook may not return response.patch",
        "nonsense": f'{prefix} "nonsense.example.com": failed to call webhook: no kind'
        ' "Nonsense" is registered for version "admission.k8s.io/v1" in scheme'
        ' "pkg/runtime/scheme.go:100"',
    }


async def test_untrusted_certificate_and_error_status(backend: Backend, webhooks: Webhooks) -> None:
    untrusted = {"url": webhooks.server.url("never")}  # no caBundle: the system's roots
    webhooks.server.handlers["broken"] = lambda r: web_error()
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "untrusted", clientConfig=untrusted, objectSelector={"matchLabels": {"case": "tls"}}
        ),
        webhooks.hook("broken", objectSelector={"matchLabels": {"case": "broken"}}),
    )
    reply = await req(
        backend, "POST", configmaps(backend), {"metadata": {"name": "c", "labels": {"case": "tls"}}}
    )
    assert reply.status == 500
    assert reply.body["message"] == (
        'Internal error occurred: failed calling webhook "untrusted.example.com": failed to call'
        f' webhook: Post "{webhooks.server.url("never")}?timeout=10s": tls: failed to verify'
        " certificate: x509: certificate signed by unknown authority"
    )
    assert not webhooks.server.received["never"]
    # the caBundle of another CA with the same name; a name the certificate is not for
    other = WebhookServer()
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "other-ca",
            clientConfig={"url": webhooks.server.url("never"), "caBundle": other.ca_bundle},
            objectSelector={"matchLabels": {"case": "other-ca"}},
        ),
        webhooks.hook(
            "name",
            clientConfig={
                "url": f"https://localhost:{webhooks.server.port}/never",
                "caBundle": webhooks.server.ca_bundle,
            },
            objectSelector={"matchLabels": {"case": "name"}},
        ),
    )
    messages = {}
    for case in ("other-ca", "name"):
        reply = await req(
            backend,
            "POST",
            configmaps(backend),
            {"metadata": {"name": case, "labels": {"case": case}}},
        )
        assert reply.status == 500
        messages[case] = reply.body["message"]
    assert messages == {
        "other-ca": 'Internal error occurred: failed calling webhook "other-ca.example.com":'
        f' failed to call webhook: Post "{webhooks.server.url("never")}?timeout=10s": tls:'
        " failed to verify certificate: x509: certificate signed by unknown authority"
        ' (possibly because of "x509: ECDSA verification failure" while trying to verify'
        ' candidate authority certificate "reconcile-kit-webhook-ca")',
        "name": 'Internal error occurred: failed calling webhook "name.example.com": failed to'
        f' call webhook: Post "https://localhost:{webhooks.server.port}/never?timeout=10s": tls:'
        " failed to verify certificate: x509: certificate is not valid for any names, but"
        " wanted to match localhost",
    }
    reply = await req(
        backend,
        "POST",
        configmaps(backend),
        {"metadata": {"name": "d", "labels": {"case": "broken"}}},
    )
    assert reply.status == 500
    assert reply.body["message"] == (
        'Internal error occurred: failed calling webhook "broken.example.com": failed to call'
        ' webhook: an error on the server ("the webhook broke") has prevented the request from'
        " succeeding"
    )


async def test_namespaces_select_by_their_own_labels(backend: Backend, webhooks: Webhooks) -> None:
    server = webhooks.server
    server.handlers["namespaces"] = lambda r: answer(r, False, status={"message": "no"})
    rule = {
        "operations": ["CREATE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["namespaces"],
        "scope": "Cluster",
    }
    label = backend.namespace  # only namespaces labelled for this test
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "namespaces",
            rules=[rule],
            namespaceSelector={"matchLabels": {"deny-for": label}},
        ),
    )
    name = backend.unique("ns")
    reply = await req(
        backend,
        "POST",
        "/api/v1/namespaces",
        {"metadata": {"name": name, "labels": {"deny-for": label}}},
    )
    assert reply.status == 400
    assert (
        reply.body["message"] == 'admission webhook "namespaces.example.com" denied the request: no'
    )
    request = server.received["namespaces"][-1]["request"]
    assert request["name"] == name
    assert request["namespace"] == name  # a namespace is its own namespace
    assert request["object"]["metadata"]["labels"]["kubernetes.io/metadata.name"] == name


async def test_server_side_apply(backend: Backend, webhooks: Webhooks) -> None:
    server = webhooks.server
    server.handlers["mutating"] = lambda r: answer(
        r,
        **json_patch([{"op": "add", "path": "/metadata/annotations", "value": {"seen": "yes"}}]),
    )
    await webhooks.install("Mutating", webhooks.hook("mutating"))
    await webhooks.install("Validating", webhooks.hook("validating"))
    path = f"{configmaps(backend)}/applied"
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "applied"},
        "data": {"a": "1"},
    }
    from .kube import APPLY

    applied = await ok(
        backend, "PATCH", path, body, content_type=APPLY, params={"fieldManager": "me"}
    )
    assert applied["metadata"]["annotations"] == {"seen": "yes"}
    body["data"] = {"a": "2"}
    await ok(
        backend,
        "PATCH",
        path,
        body,
        content_type=APPLY,
        params={"fieldManager": "me", "force": "true"},
    )

    def named(r: Review) -> bool:
        return bool(r["request"].get("name") == "applied")

    operations = [
        (r["request"]["operation"], r["request"]["options"])
        for r in server.received["validating"]
        if named(r)
    ]
    assert operations == [
        ("CREATE", {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "me"}),
        ("UPDATE", {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "me"}),
    ]
    # the field manager runs before admission: the webhook's annotation is nobody's
    [entry] = applied["metadata"]["managedFields"]
    assert (entry["manager"], entry["fieldsV1"]) == ("me", {"f:data": {"f:a": {}}})


async def test_equivalent_versions(backend: Backend, webhooks: Webhooks) -> None:
    from .kube import install_crd, schema_crd

    group = f"{backend.namespace}.example.com"
    crd = schema_crd(
        group,
        "Gadget",
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    )
    v1 = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [v1, {**v1, "name": "v2", "storage": False}]
    await install_crd(backend, crd)
    rule = {
        "operations": ["CREATE"],
        "apiGroups": [group],
        "apiVersions": ["v1"],
        "resources": ["gadgets"],
    }
    await webhooks.install(
        "Validating",
        webhooks.hook("equivalent", rules=[rule]),
        webhooks.hook("exact", rules=[rule], matchPolicy="Exact"),
    )
    gadgets = f"/apis/{group}/v2/namespaces/{backend.namespace}/gadgets"
    body = {
        "apiVersion": f"{group}/v2",
        "kind": "Gadget",
        "metadata": {"name": "g"},
        "spec": {"x": 1},
    }
    await ok(backend, "POST", gadgets, body)
    review = await webhooks.server.wait_for("equivalent", lambda r: r["request"].get("name") == "g")
    request = review["request"]
    assert request["kind"] == {"group": group, "version": "v1", "kind": "Gadget"}
    assert request["resource"] == {"group": group, "version": "v1", "resource": "gadgets"}
    assert request["requestKind"] == {"group": group, "version": "v2", "kind": "Gadget"}
    assert request["requestResource"] == {"group": group, "version": "v2", "resource": "gadgets"}
    assert request["object"]["apiVersion"] == f"{group}/v1"
    assert not [r for r in webhooks.server.received["exact"] if r["request"].get("name") == "g"]
    await req(
        backend,
        "DELETE",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}",
    )


async def test_rerun_when_the_object_changed_during_the_call(
    backend: Backend, webhooks: Webhooks
) -> None:
    """A write whose object changes while its webhooks run starts again on the new state
    (kube-apiserver's GuaranteedUpdate retries; the webhooks are called again)."""
    path = f"{configmaps(backend)}/c"
    calls: list[dict[str, Any]] = []

    async def racing(review: Review) -> dict[str, Any]:
        calls.append(review["request"]["object"].get("data") or {})
        if len(calls) == 1:  # another writer changes the object meanwhile
            await ok(backend, "PATCH", path, {"data": {"other": "writer"}}, content_type=MERGE)
        return answer(review)

    webhooks.server.handlers["racing"] = racing
    await ok(backend, "POST", configmaps(backend), {"metadata": {"name": "c"}, "data": {"a": "1"}})
    await webhooks.install(
        "Validating",
        webhooks.hook("racing", rules=[{**CONFIGMAPS_RULE, "operations": ["UPDATE"]}]),
    )
    patched = await ok(backend, "PATCH", path, {"data": {"mine": "yes"}}, content_type=MERGE)
    assert patched["data"] == {"a": "1", "other": "writer", "mine": "yes"}
    assert calls[0] == {"a": "1", "mine": "yes"}
    assert calls[1] == {"a": "1", "other": "writer"}
    assert calls[-1] == {"a": "1", "other": "writer", "mine": "yes"}


@pytest.mark.backends(
    "embedded", reason="no kube-proxy on the control plane: a Service routes nowhere"
)
async def test_service_reference(backend: Backend) -> None:
    """``clientConfig.service`` goes to the address ``APIServer(webhook_services=...)`` maps
    it to, with TLS verified for ``NAME.NAMESPACE.svc``."""
    from reconcile_kit.testing import APIServer

    server = await WebhookServer(hosts=["hooks.system.svc"]).start()
    server.handlers["deny"] = lambda r: answer(r, False, status={"message": "by service"})
    services = {
        ("system", "hooks"): f"127.0.0.1:{server.port}",
        ("system", "other"): f"127.0.0.1:{server.port}",  # a name the certificate is not for
    }
    try:
        async with APIServer(webhook_services=services) as api_server:
            api = await api_server.api()
            from ..kubehttp import call

            hook = {
                "name": "svc.example.com",
                "clientConfig": {
                    "service": {"namespace": "system", "name": "hooks", "path": "/deny"},
                    "caBundle": server.ca_bundle,
                },
                "rules": [CONFIGMAPS_RULE],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
            unknown = {
                **hook,
                "name": "unknown.example.com",
                "clientConfig": {"service": {"namespace": "system", "name": "nowhere"}},
                "objectSelector": {"matchLabels": {"case": "unknown"}},
            }
            misnamed = {
                **hook,
                "name": "misnamed.example.com",
                "clientConfig": {
                    "service": {"namespace": "system", "name": "other", "path": "/deny"},
                    "caBundle": server.ca_bundle,
                },
                "objectSelector": {"matchLabels": {"case": "misnamed"}},
            }
            hook["objectSelector"] = {"matchLabels": {"case": "known"}}
            webhooks = [hook, unknown, misnamed]
            status, _ = await call(
                api, "POST", VALIDATING, {"metadata": {"name": "svc"}, "webhooks": webhooks}
            )
            assert status == 201
            cms = "/api/v1/namespaces/default/configmaps"
            status, body = await call(
                api, "POST", cms, {"metadata": {"name": "c", "labels": {"case": "known"}}}
            )
            assert (status, body["message"]) == (
                400,
                'admission webhook "svc.example.com" denied the request: by service',
            )
            assert server.queries["deny"] == [{"timeout": "10s"}]
            status, body = await call(
                api, "POST", cms, {"metadata": {"name": "d", "labels": {"case": "unknown"}}}
            )
            assert (status, body["message"]) == (
                500,
                'Internal error occurred: failed calling webhook "unknown.example.com": failed to'
                ' call webhook: Post "https://nowhere.system.svc:443?timeout=10s": service'
                ' "nowhere" not found',
            )
            status, body = await call(
                api, "POST", cms, {"metadata": {"name": "e", "labels": {"case": "misnamed"}}}
            )
            assert (status, body["message"]) == (
                500,
                'Internal error occurred: failed calling webhook "misnamed.example.com": failed'
                ' to call webhook: Post "https://other.system.svc:443/deny?timeout=10s": tls:'
                " failed to verify certificate: x509: certificate is valid for hooks.system.svc,"
                " not other.system.svc",
            )
    finally:
        await server.stop()


async def test_review_version_v1beta1(backend: Backend, webhooks: Webhooks) -> None:
    """The first of ``admissionReviewVersions`` the server speaks is the one sent."""

    def beta(review: Review) -> dict[str, Any]:
        return {
            **answer(review, False, status={"message": "beta"}),
            "apiVersion": "admission.k8s.io/v1beta1",
        }

    webhooks.server.handlers["beta"] = beta
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "beta",
            admissionReviewVersions=["v1beta1", "v1"],
            objectSelector={"matchLabels": {"beta": "yes"}},
        ),
    )
    reply = await req(
        backend, "POST", configmaps(backend), {"metadata": {"name": "c", "labels": {"beta": "yes"}}}
    )
    assert (reply.status, reply.body["message"]) == (
        400,
        'admission webhook "beta.example.com" denied the request: beta',
    )
    review = webhooks.server.received["beta"][-1]
    assert review["apiVersion"] == "admission.k8s.io/v1beta1"
    assert review["request"]["operation"] == "CREATE"


async def test_mutating_patch_without_type_and_invalid_result(
    backend: Backend, webhooks: Webhooks
) -> None:
    server = webhooks.server
    server.handlers["untyped"] = lambda r: answer(
        r, patch=json_patch([{"op": "add", "path": "/data", "value": {"a": "b"}}])["patch"]
    )
    server.handlers["invalid"] = lambda r: answer(
        r, **json_patch([{"op": "add", "path": "/metadata/labels", "value": {"bad label": "x"}}])
    )
    await webhooks.install(
        "Mutating",
        webhooks.hook("untyped", objectSelector={"matchLabels": {"case": "untyped"}}),
        webhooks.hook("invalid", objectSelector={"matchLabels": {"case": "invalid"}}),
    )
    reply = await req(
        backend,
        "POST",
        configmaps(backend),
        {"metadata": {"name": "u", "labels": {"case": "untyped"}}},
    )
    assert (reply.status, reply.body["message"]) == (
        500,
        'Internal error occurred: failed calling webhook "untyped.example.com": received invalid'
        " webhook response: webhook returned response.patch but not response.patchType",
    )
    # what a webhook sets is validated as what the client sent
    reply = await req(
        backend,
        "POST",
        configmaps(backend),
        {"metadata": {"name": "i", "labels": {"case": "invalid"}}},
    )
    assert reply.status == 422
    assert [c["field"] for c in reply.body["details"]["causes"]] == ["metadata.labels"]


async def test_rule_scope(backend: Backend, webhooks: Webhooks) -> None:
    deny = lambda r: answer(r, False, status={"message": r["request"]["name"]})  # noqa: E731
    webhooks.server.handlers["cluster"] = deny
    webhooks.server.handlers["namespaced"] = deny
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "cluster",
            rules=[{**CONFIGMAPS_RULE, "scope": "Cluster"}],
            objectSelector={"matchLabels": {"case": "scope"}},
        ),
        webhooks.hook(
            "namespaced",
            rules=[{**CONFIGMAPS_RULE, "scope": "Namespaced"}],
            objectSelector={"matchLabels": {"case": "scope"}},
        ),
    )
    reply = await req(
        backend,
        "POST",
        configmaps(backend),
        {"metadata": {"name": "c", "labels": {"case": "scope"}}},
    )
    assert (reply.status, reply.body["message"]) == (
        400,
        'admission webhook "namespaced.example.com" denied the request: c',
    )
    assert not [r for r in webhooks.server.received["cluster"] if r["request"].get("name") == "c"]


async def test_delete_collection(backend: Backend, webhooks: Webhooks) -> None:
    webhooks.server.handlers["keep"] = lambda r: answer(
        r, r["request"]["oldObject"]["metadata"]["name"] != "b", status={"message": "keep b"}
    )
    path = configmaps(backend)
    for name in ("a", "b", "c"):
        await ok(backend, "POST", path, {"metadata": {"name": name, "labels": {"set": "x"}}})
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "keep",
            rules=[{**CONFIGMAPS_RULE, "operations": ["DELETE"]}],
        ),
    )
    reply = await req(backend, "DELETE", path, params={"labelSelector": "set=x"})
    # items are deleted one by one; the first refusal ends the request
    assert (reply.status, reply.body["message"]) == (
        400,
        'admission webhook "keep.example.com" denied the request: keep b',
    )
    left = await ok(backend, "GET", path, params={"labelSelector": "set=x"})
    assert [i["metadata"]["name"] for i in left["items"]] == ["b", "c"]
    requests = [r["request"] for r in webhooks.server.received["keep"]]
    # each item's review names no object (the collection's attributes), its oldObject does
    assert [(r.get("name"), r["oldObject"]["metadata"]["name"]) for r in requests] == [
        (None, "a"),
        (None, "b"),
    ]
    assert requests[0]["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
        },
    },
}


async def test_mutating_webhooks_see_the_defaulted_object(
    backend: Backend, webhooks: Webhooks
) -> None:
    rule = {
        "operations": ["CREATE"],
        "apiGroups": ["apps"],
        "apiVersions": ["v1"],
        "resources": ["deployments"],
    }
    await webhooks.install("Mutating", webhooks.hook("seen", rules=[rule]))
    await webhooks.install("Validating", webhooks.hook("stored", rules=[rule]))
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    created = await ok(backend, "POST", path, DEPLOYMENT)
    seen = await webhooks.server.wait_for("seen", lambda r: r["request"].get("name") == "web")
    stored = await webhooks.server.wait_for("stored", lambda r: r["request"].get("name") == "web")
    # mutating webhooks get the decoded object with the kind's defaults (before the
    # strategy: no uid, creationTimestamp or generation), validating webhooks what is stored
    assert "uid" not in seen["request"]["object"]["metadata"]
    assert without(stored["request"]["object"], *VOLATILE) == without(created, *VOLATILE)
    assert without(seen["request"]["object"], *VOLATILE) == without(
        created, *VOLATILE, "generation"
    )
    spec = seen["request"]["object"]["spec"]
    assert (spec["replicas"], spec["strategy"]["type"]) == (1, "RollingUpdate")
    assert seen["request"]["object"]["status"] == {}


async def test_custom_resources_are_pruned_and_defaulted_first(
    backend: Backend, webhooks: Webhooks, widgets: Widgets
) -> None:
    rule = {
        "operations": ["CREATE"],
        "apiGroups": [widgets.group],
        "apiVersions": ["v1"],
        "resources": ["widgets"],
    }
    webhooks.server.handlers["seen"] = lambda r: answer(
        r, **json_patch([{"op": "add", "path": "/spec/color", "value": "red"}])
    )
    await webhooks.install("Mutating", webhooks.hook("seen", rules=[rule]))
    reply = await req(backend, "POST", widgets.path, widgets.widget("w", unknown="x"))
    assert reply.status == 201
    assert reply.headers.get_list("warning") == ['299 - "unknown field \\"spec.unknown\\""']
    assert reply.body["spec"] == {"size": 1, "replicas": 1, "color": "red"}
    seen = await webhooks.server.wait_for("seen", lambda r: r["request"].get("name") == "w")
    assert seen["request"]["object"]["spec"] == {"size": 1, "replicas": 1}
    # strict decoding refuses unknown fields before any webhook is called
    reply = await req(
        backend,
        "POST",
        widgets.path,
        widgets.widget("strict", unknown="x"),
        params={"fieldValidation": "Strict"},
    )
    assert reply.status == 400
    assert "strict decoding error: unknown field" in reply.body["message"]
    assert not [r for r in webhooks.server.received["seen"] if r["request"].get("name") == "strict"]


async def test_conflict_comes_after_mutating_admission(
    backend: Backend, webhooks: Webhooks
) -> None:
    """A PUT with a stale resourceVersion: kube-apiserver's update runs the mutating
    webhooks, then compares resourceVersions (409); the validating ones are not called."""
    path = configmaps(backend)
    first = await ok(backend, "POST", path, {"metadata": {"name": "c"}, "data": {"v": "1"}})
    await ok(backend, "PATCH", f"{path}/c", {"data": {"v": "2"}}, content_type=MERGE)
    update = {**CONFIGMAPS_RULE, "operations": ["UPDATE"]}
    await webhooks.install("Mutating", webhooks.hook("mutating", rules=[update]))
    await webhooks.install("Validating", webhooks.hook("validating", rules=[update]))
    stale = {**first, "data": {"v": "3"}}
    reply = await req(backend, "PUT", f"{path}/c", stale)
    assert reply.status == 409
    assert reply.body["reason"] == "Conflict"

    def named(r: Review) -> bool:
        return bool(r["request"].get("name") == "c")

    assert len([r for r in webhooks.server.received["mutating"] if named(r)]) == 1
    assert not [r for r in webhooks.server.received["validating"] if named(r)]


async def test_resource_patterns(backend: Backend, webhooks: Webhooks, widgets: Widgets) -> None:
    patterns = {
        "star": "*",
        "star-star": "*/*",
        "widgets-star": "widgets/*",
        "star-status": "*/status",
    }
    hooks = [
        webhooks.hook(
            name,
            rules=[
                {
                    "operations": ["UPDATE"],
                    "apiGroups": [widgets.group],
                    "apiVersions": ["*"],
                    "resources": [pattern],
                }
            ],
        )
        for name, pattern in patterns.items()
    ]
    await ok(backend, "POST", widgets.path, widgets.widget("w"))
    await webhooks.install("Validating", *hooks)
    await ok(backend, "PATCH", f"{widgets.path}/w", {"spec": {"size": 2}}, content_type=MERGE)
    await ok(
        backend,
        "PATCH",
        f"{widgets.path}/w/status",
        {"status": {"replicas": 1}},
        content_type=MERGE,
    )
    # which subresources each pattern matched: a set, as kube-apiserver may call a webhook
    # again for one request (a write retried on a conflict runs admission again)
    called = {
        name: sorted(
            {
                r["request"].get("subResource", "")
                for r in webhooks.server.received[name]
                if r["request"].get("name") == "w"
            }
        )
        for name in patterns
    }
    assert called == {
        "star": [""],
        "star-star": ["", "status"],
        "widgets-star": ["", "status"],  # "x/*" matches x itself too
        "star-status": ["status"],
    }


async def test_match_conditions(backend: Backend, webhooks: Webhooks) -> None:
    bad = {
        "metadata": {"name": backend.unique("conditions")},
        "webhooks": [
            webhooks.hook(
                "conditions",
                matchConditions=[
                    {"name": "", "expression": "true"},
                    {"name": "no-expression", "expression": ""},
                    {"name": "bad name!", "expression": "true"},
                    {"name": "syntax", "expression": "object.("},
                    {"name": "syntax", "expression": "true"},
                    {"name": "undeclared", "expression": "params.x == 1"},
                ],
            )
        ],
    }
    reply = await req(backend, "POST", VALIDATING, bad)
    assert reply.status == 422
    path = "webhooks[0].matchConditions"
    assert [(c["field"], c["reason"], c["message"]) for c in reply.body["details"]["causes"]] == [
        (f"{path}[0].name", "FieldValueRequired", "Required value"),
        (f"{path}[1].expression", "FieldValueRequired", "Required value"),
        (
            f"{path}[2].name",
            "FieldValueInvalid",
            'Invalid value: "bad name!": name part must consist of alphanumeric characters,'
            " '-', '_' or '.', and must start and end with an alphanumeric character (e.g."
            " 'MyName',  or 'my.name',  or '123-abc', regex used for validation is"
            " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            f"{path}[3].expression",
            "FieldValueInvalid",
            'Invalid value: "object.(": compilation failed: ERROR: <input>:1:8: Syntax error:'
            " no viable alternative at input '.('\n | object.(\n | .......^",
        ),
        (f"{path}[4].name", "FieldValueDuplicate", 'Duplicate value: "syntax"'),
        (
            f"{path}[5].expression",
            "FieldValueInvalid",
            'Invalid value: "params.x == 1": compilation failed: ERROR: <input>:1:1: undeclared'
            " reference to 'params' (in container '')\n | params.x == 1\n | ^",
        ),
    ]
    webhooks.server.handlers["deny"] = lambda r: answer(r, False, status={"message": "matched"})
    error = "object.metadata.labels['deny'] == 'error' ? 1/0 == 1 : true"
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "deny",
            matchConditions=[
                {
                    "name": "labelled",
                    "expression": "has(object.metadata.labels) && 'deny' in object.metadata.labels",
                },
                {"name": "admin", "expression": "request.userInfo.username == 'admin'"},
                {"name": "created", "expression": "oldObject == null"},
                {"name": "error", "expression": error},
            ],
        ),
    )
    replies = {}
    for name, labels in (("plain", {}), ("denied", {"deny": "yes"}), ("err", {"deny": "error"})):
        reply = await req(
            backend, "POST", configmaps(backend), {"metadata": {"name": name, "labels": labels}}
        )
        replies[name] = (reply.status, reply.body.get("message"))
    assert replies == {
        "plain": (201, None),
        "denied": (400, 'admission webhook "deny.example.com" denied the request: matched'),
        "err": (
            403,
            f"configmaps \"err\" is forbidden: expression '{error}' resulted in error: division"
            " by zero",
        ),
    }
    assert [r["request"]["name"] for r in webhooks.server.received["deny"]] == ["denied"]
    # with failurePolicy Ignore an expression that fails skips the webhook
    await webhooks.install(
        "Validating",
        webhooks.hook(
            "ignored",
            failurePolicy="Ignore",
            objectSelector={"matchLabels": {"case": "ignore"}},
            matchConditions=[{"name": "error", "expression": "1/0 == 1"}],
        ),
    )
    reply = await req(
        backend,
        "POST",
        configmaps(backend),
        {"metadata": {"name": "i", "labels": {"case": "ignore"}}},
    )
    assert reply.status == 201
    assert not webhooks.server.received["ignored"]


async def test_scale_subresource(backend: Backend, webhooks: Webhooks) -> None:
    rule = {
        "operations": ["UPDATE"],
        "apiGroups": ["apps"],
        "apiVersions": ["v1"],
        "resources": ["deployments/scale"],
    }
    webhooks.server.handlers["scale"] = lambda r: answer(
        r, **json_patch([{"op": "replace", "path": "/spec/replicas", "value": 4}])
    )
    path = f"/apis/apps/v1/namespaces/{backend.namespace}/deployments"
    await ok(backend, "POST", path, DEPLOYMENT)
    await webhooks.install("Mutating", webhooks.hook("scale", rules=[rule]))
    await webhooks.install("Validating", webhooks.hook("checked", rules=[rule]))
    scaled = await ok(
        backend, "PATCH", f"{path}/web/scale", {"spec": {"replicas": 3}}, content_type=MERGE
    )
    seen = await webhooks.server.wait_for("scale", lambda r: r["request"].get("name") == "web")
    checked = await webhooks.server.wait_for("checked", lambda r: r["request"].get("name") == "web")
    assert scaled["spec"]["replicas"] == 4  # the webhook's patch of the Scale
    deployment = await ok(backend, "GET", f"{path}/web")
    assert deployment["spec"]["replicas"] == 4
    scale_kind = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    status = {"replicas": 0, "selector": "app=web"}
    for review, replicas in ((seen, 3), (checked, 4)):
        request = review["request"]
        assert request["kind"] == request["requestKind"] == scale_kind
        assert request["resource"] == {"group": "apps", "version": "v1", "resource": "deployments"}
        assert request["subResource"] == request["requestSubResource"] == "scale"
        for key, expected in (("object", replicas), ("oldObject", 1)):
            scale = request[key]
            assert (scale["kind"], scale["apiVersion"]) == ("Scale", "autoscaling/v1")
            assert (scale["spec"], scale["status"]) == ({"replicas": expected}, status)
            assert scale["metadata"]["name"] == "web"


async def test_a_webhook_gets_the_hpa_in_its_own_version(
    backend: Backend, webhooks: Webhooks
) -> None:
    """A webhook registered for autoscaling/v2 HorizontalPodAutoscalers (matchPolicy
    Equivalent) is sent a v1 request's object converted to v2, and its patch (to the v2
    object) lands in the v1 object."""
    rule = {
        "operations": ["CREATE"],
        "apiGroups": ["autoscaling"],
        "apiVersions": ["v2"],
        "resources": ["horizontalpodautoscalers"],
    }
    target = "/spec/metrics/0/resource/target/averageUtilization"
    webhooks.server.handlers["hpa"] = lambda r: answer(
        r, **json_patch([{"op": "replace", "path": target, "value": 50}])
    )
    await webhooks.install("Mutating", webhooks.hook("hpa", rules=[rule]))
    path = f"/apis/autoscaling/v1/namespaces/{backend.namespace}/horizontalpodautoscalers"
    body = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 70,
        },
    }
    created = await ok(backend, "POST", path, body)
    assert created["apiVersion"] == "autoscaling/v1"
    assert created["spec"]["targetCPUUtilizationPercentage"] == 50
    review = await webhooks.server.wait_for("hpa", lambda r: r["request"].get("name") == "h")
    request = review["request"]
    assert request["kind"] == {
        "group": "autoscaling",
        "version": "v2",
        "kind": "HorizontalPodAutoscaler",
    }
    assert request["requestKind"]["version"] == "v1"
    sent = request["object"]
    assert sent["apiVersion"] == "autoscaling/v2"
    assert "targetCPUUtilizationPercentage" not in sent["spec"]
    assert sent["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 70},
            },
        }
    ]


async def test_a_webhook_gets_an_events_k8s_io_event_as_core_v1(
    backend: Backend, webhooks: Webhooks
) -> None:
    """A webhook registered for core/v1 Events (matchPolicy Equivalent: both groups store
    Events at one prefix) is sent an events.k8s.io/v1 request's Event converted to
    core/v1, and its patch (to ``message``) lands in the Event's ``note``."""
    rule = {
        "operations": ["CREATE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["events"],
    }
    webhooks.server.handlers["events"] = lambda r: answer(
        r, **json_patch([{"op": "replace", "path": "/message", "value": "patched"}])
    )
    await webhooks.install("Mutating", webhooks.hook("events", rules=[rule]))
    ns = backend.namespace
    regarding = {"kind": "Pod", "namespace": ns, "name": "p", "apiVersion": "v1"}
    body = {
        "metadata": {"name": "e"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "example.com/c",
        "reportingInstance": "i",
        "action": "A",
        "reason": "R",
        "note": "sent",
        "regarding": regarding,
        "type": "Normal",
    }
    created = await ok(backend, "POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", body)
    assert (created["apiVersion"], created["note"]) == ("events.k8s.io/v1", "patched")
    review = await webhooks.server.wait_for("events", lambda r: r["request"].get("name") == "e")
    request = review["request"]
    assert request["kind"] == {"group": "", "version": "v1", "kind": "Event"}
    assert request["requestKind"] == {"group": "events.k8s.io", "version": "v1", "kind": "Event"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "events"}
    sent = request["object"]
    assert (sent["apiVersion"], sent["message"], sent["involvedObject"]) == (
        "v1",
        "sent",
        regarding,
    )
    assert sent["reportingComponent"] == "example.com/c"
