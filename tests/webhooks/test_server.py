"""The webhook server over HTTPS on its own: malformed reviews, handler results, the
ConversionReview answer, certificate reload (issue 17). The API server's side is in
tests/conformance/test_webhook_server.py."""

from __future__ import annotations

import base64
import shutil
import ssl
from pathlib import Path
from typing import Annotated, Any

import aiohttp
import orjson
import pytest
from kr8s.asyncio.objects import ConfigMap
from pydantic import Field

from reconcile_kit.typed import CustomResource, KubeModel
from reconcile_kit.webhooks import (
    AdmissionRequest,
    CertificateFiles,
    Denied,
    SelfSignedCertificates,
    WebhookServer,
    configurations,
)


class ToolSpec(KubeModel):
    size: Annotated[int, Field(ge=0)] = 1


class Tool(CustomResource, group="webhooks.test.example.com", version="v1", kind="Tool"):
    spec: ToolSpec


class ToolSpecV2(KubeModel):
    replicas: int = 1


class ToolV2(CustomResource, group="webhooks.test.example.com", version="v2", kind="Tool"):
    spec: ToolSpecV2


def review(uid: str, obj: Any, operation: str = "CREATE") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": uid, "operation": operation, "object": obj, "oldObject": None},
    }


def tool(size: Any) -> dict[str, Any]:
    return {
        "apiVersion": "webhooks.test.example.com/v1",
        "kind": "Tool",
        "metadata": {"name": "t", "namespace": "ns"},
        "spec": {"size": size},
    }


def server(certificates: Any = None) -> WebhookServer:
    certificates = certificates or SelfSignedCertificates(["127.0.0.1"])
    return WebhookServer(host="127.0.0.1", port=0, certificates=certificates)


async def post(webhooks: WebhookServer, path: str, body: Any) -> tuple[int, Any]:
    context = ssl.create_default_context(cadata=webhooks.certificates.ca_bundle.decode())
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{webhooks.url}{path}", data=data, ssl=context) as reply,
    ):
        text = await reply.read()
        return reply.status, (orjson.loads(text) if reply.status == 200 else text.decode())


async def test_malformed_reviews_get_400_and_invalid_objects_a_422() -> None:
    webhooks = server()

    @webhooks.validating(Tool)
    def check(obj: Tool, request: AdmissionRequest) -> None:
        return None

    path = webhooks.webhooks[0].path
    assert path == "/validate-webhooks-test-example-com-v1-tool"
    async with webhooks:
        for body in (b"not json", {"kind": "AdmissionReview"}, {"apiVersion": "x", "request": {}}):
            status, text = await post(webhooks, path, body)
            assert status == 400, text
        status, answer = await post(webhooks, path, review("u1", tool(-1)))
    assert status == 200
    response = answer["response"]
    assert response["uid"] == "u1" and response["allowed"] is False
    assert response["status"]["code"] == 422 and response["status"]["reason"] == "Invalid"
    assert response["status"]["message"].startswith("Tool ns/t does not fit Tool: spec.size")


async def test_mutating_answer_is_a_base64_json_patch_of_the_change() -> None:
    webhooks = server()

    @webhooks.mutating(ConfigMap)
    def label(obj: Any, request: AdmissionRequest) -> None:
        obj.raw["metadata"].setdefault("labels", {})["seen"] = "yes"
        obj.raw["data"]["b"] = "2"

    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    configmap["data"] = {"a": "1"}
    async with webhooks:
        status, answer = await post(webhooks, "/mutate--v1-configmap", review("u2", configmap))
    assert status == 200
    response = answer["response"]
    assert response["allowed"] is True and response["patchType"] == "JSONPatch"
    patch = orjson.loads(base64.b64decode(response["patch"]))
    assert sorted(op["path"] for op in patch) == ["/data/b", "/metadata/labels"]


async def test_denied_and_warnings_and_unknown_handler_errors() -> None:
    webhooks = server()

    @webhooks.validating(Tool, operations=("CREATE", "DELETE"))
    async def check(obj: Tool, request: AdmissionRequest) -> list[str]:
        if request.operation == "DELETE":
            raise KeyError("missing")
        if obj.spec.size > 3:
            raise Denied("too big")
        return ["small is fine"]

    path = webhooks.webhooks[0].path
    async with webhooks:
        _, too_big = await post(webhooks, path, review("a", tool(5)))
        _, fine = await post(webhooks, path, review("b", tool(1)))
        delete = review("c", None, "DELETE")
        delete["request"]["oldObject"] = tool(1)
        _, crashed = await post(webhooks, path, delete)
        _, after = await post(webhooks, path, review("d", tool(1)))
    assert too_big["response"]["status"] == {"code": 403, "message": "too big"}
    assert fine["response"] == {"uid": "b", "allowed": True, "warnings": ["small is fine"]}
    assert crashed["response"]["status"]["code"] == 500
    assert "KeyError: 'missing'" in crashed["response"]["status"]["message"]
    assert after["response"]["allowed"] is True
    assert webhooks.webhooks[0].calls == {"CREATE": 3, "DELETE": 1}


async def test_conversion_review_converts_all_objects_or_fails_clearly() -> None:
    webhooks = server()

    @webhooks.converter(Tool, ToolV2)
    def up(old: Tool) -> ToolV2:
        return ToolV2(metadata=old.metadata, spec=ToolSpecV2(replicas=old.spec.size))

    objects = [tool(2), {**tool(3), "metadata": {"name": "u", "labels": {"a": "b"}}}]
    request = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "c1",
            "desiredAPIVersion": "webhooks.test.example.com/v2",
            "objects": objects,
        },
    }
    async with webhooks:
        _, converted = await post(webhooks, "/convert", request)
        request["request"]["desiredAPIVersion"] = "webhooks.test.example.com/v1"
        request["request"]["objects"] = [{**tool(1), "apiVersion": "webhooks.test.example.com/v2"}]
        _, failed = await post(webhooks, "/convert", request)
    response = converted["response"]
    assert response["uid"] == "c1" and response["result"] == {"status": "Success"}
    assert [o["spec"] for o in response["convertedObjects"]] == [{"replicas": 2}, {"replicas": 3}]
    assert response["convertedObjects"][1]["metadata"] == objects[1]["metadata"]
    assert all(o["apiVersion"].endswith("/v2") for o in response["convertedObjects"])
    assert failed["response"]["result"] == {
        "status": "Failure",
        "message": "Tool ns/t: no converter from webhooks.test.example.com/v2 to v1",
    }


async def test_mounted_certificates_are_reloaded_when_renewed(tmp_path: Path) -> None:
    first = SelfSignedCertificates(["127.0.0.1"], directory=tmp_path / "first")
    second = SelfSignedCertificates(["127.0.0.1"], directory=tmp_path / "second")
    mounted = tmp_path / "mounted"
    shutil.copytree(tmp_path / "first", mounted)
    files = CertificateFiles(mounted)
    webhooks = server(files)

    @webhooks.validating(Tool)
    def check(obj: Tool, request: AdmissionRequest) -> None:
        return None

    path = webhooks.webhooks[0].path
    async with webhooks:
        assert files.ca_bundle == first.ca_bundle
        assert (await post(webhooks, path, review("1", tool(1))))[0] == 200
        assert not files.reload()  # unchanged
        for name in ("tls.crt", "tls.key", "ca.crt"):
            shutil.copy(tmp_path / "second" / name, mounted / name)
        assert files.reload()
        assert files.ca_bundle == second.ca_bundle
        assert (await post(webhooks, path, review("2", tool(1))))[0] == 200  # new CA trusted
        old = ssl.create_default_context(cadata=first.ca_bundle.decode())
        async with aiohttp.ClientSession() as session:
            with pytest.raises(aiohttp.ClientConnectorCertificateError):
                await session.post(f"{webhooks.url}{path}", data=b"{}", ssl=old)


def test_missing_certificate_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no file .*tls\.crt"):
        CertificateFiles(tmp_path).ssl_context()


def test_configurations_name_the_rules_and_client_config() -> None:
    webhooks = server()
    webhooks.name = "ops"

    @webhooks.mutating(Tool, subresources=("status",), reinvocation_policy="IfNeeded")
    def default(obj: Tool, request: AdmissionRequest) -> None:
        return None

    (mutating,) = configurations(webhooks, "https://10.0.0.1:9443", ca_bundle=b"PEM")
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    assert mutating["metadata"] == {"name": "ops-mutating"}
    (entry,) = mutating["webhooks"]
    assert entry["name"] == "mtool.webhooks.test.example.com"
    assert entry["clientConfig"] == {
        "url": "https://10.0.0.1:9443/mutate-webhooks-test-example-com-v1-tool",
        "caBundle": base64.b64encode(b"PEM").decode(),
    }
    assert entry["rules"] == [
        {
            "apiGroups": ["webhooks.test.example.com"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["tools", "tools/status"],
            "scope": "Namespaced",
        }
    ]
    assert entry["reinvocationPolicy"] == "IfNeeded"


def test_bad_registrations_are_refused_with_the_reason() -> None:
    webhooks = server()
    with pytest.raises(ValueError, match="fully qualified"):
        webhooks.validating(Tool, name="short.name")(lambda obj, request: None)
    with pytest.raises(ValueError, match="timeout_seconds must be 1-30"):
        webhooks.validating(Tool, timeout_seconds=60)(lambda obj, request: None)
    with pytest.raises(TypeError, match="CustomResource class or a kr8s APIObject class"):
        webhooks.validating("tools")
    webhooks.validating(Tool)(lambda obj, request: None)
    with pytest.raises(ValueError, match="already served"):
        webhooks.validating(Tool)


async def test_unusable_handler_results_are_refused_and_the_server_keeps_serving() -> None:
    webhooks = server()

    @webhooks.mutating(Tool)
    def mutate(obj: Tool, request: AdmissionRequest) -> Any:
        return object() if obj.spec.size == 1 else {**tool(2), "spec": {"size": {1, 2}}}

    @webhooks.validating(Tool)
    def validate(obj: Tool, request: AdmissionRequest) -> Any:
        return 5

    mutating, validating = (w.path for w in webhooks.webhooks)
    async with webhooks:
        _, not_an_object = await post(webhooks, mutating, review("1", tool(1)))
        _, not_json = await post(webhooks, mutating, review("2", tool(2)))
        _, not_warnings = await post(webhooks, validating, review("3", tool(1)))
    for answer in (not_an_object, not_json, not_warnings):
        assert answer["response"]["allowed"] is False
        assert answer["response"]["status"]["code"] == 500
        assert (
            "returned an unusable result for Tool ns/t: TypeError"
            in (answer["response"]["status"]["message"])
        )
    assert "returns the object or None" in not_an_object["response"]["status"]["message"]
    assert (
        "returns warnings (a list of str), not 5" in not_warnings["response"]["status"]["message"]
    )


async def test_a_converter_returning_the_wrong_version_fails_the_review() -> None:
    webhooks = server()

    @webhooks.converter(Tool, ToolV2)
    def up(old: Tool) -> Any:
        return old  # still v1

    request = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "c2",
            "desiredAPIVersion": "webhooks.test.example.com/v2",
            "objects": [tool(1)],
        },
    }
    async with webhooks:
        status, answer = await post(webhooks, "/convert", request)
        healthy, _ = await post(webhooks, "/convert", {"apiVersion": "x"})
    assert status == 200 and healthy == 400
    assert answer["response"] == {
        "uid": "c2",
        "result": {
            "status": "Failure",
            "message": "Tool ns/t: converter up returned Tool, not ToolV2 (v2)",
        },
        "convertedObjects": [],
    }
