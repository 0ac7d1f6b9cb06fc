"""OpenTelemetry tracing (the ``tracing`` extra): a span per reconcile, child spans per API
request carrying the W3C trace context to the server, a span per webhook call continuing
the caller's trace; checked with the SDK's in-memory exporter on the embedded server."""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import aiohttp
import kr8s.asyncio
import orjson
import pytest
from kr8s.asyncio.objects import ConfigMap, Secret
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from reconcile_kit import Action, Context, Controller, PatchHelper, set_controller_reference
from reconcile_kit.client import tracing
from reconcile_kit.runtime.config import ControllerConfig
from reconcile_kit.runtime.sources import ReflectorPool
from reconcile_kit.testing import APIServer
from reconcile_kit.webhooks import AdmissionRequest, SelfSignedCertificates, WebhookServer

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_tracer_provider(provider)
    try:
        yield exporter
    finally:
        tracing.use_tracer_provider(None)
        provider.shutdown()


async def test_a_reconcile_span_with_request_spans_and_trace_context(
    kube: kr8s.asyncio.Api, apiserver: APIServer, spans: InMemorySpanExporter
) -> None:
    assert (await call(kube, "POST", CM, {"metadata": {"name": "a"}}))[0] == 201
    done: list[str] = []

    async def reconcile(obj: Any, ctx: Context) -> Action | None:
        if done:
            return None
        async with PatchHelper(obj):
            obj.raw.setdefault("data", {})["seen"] = "yes"
        secret = Secret({"metadata": {"name": "a", "namespace": "default"}}, api=ctx.api)
        set_controller_reference(obj, secret)
        await ctx.apply(secret)
        done.append(obj.name)
        return Action.requeue(300)

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    ctrl.owns(Secret)
    task = asyncio.create_task(ctrl.run(reconcile))
    try:
        assert await ctrl.wait_reconciled(lambda: bool(done), 10)
    finally:
        await ctrl.shutdown(5)
        await task
    finished = spans.get_finished_spans()
    (first, *_) = [s for s in finished if s.name == "reconcile ConfigMap"]
    attributes = dict(first.attributes or {})
    assert attributes["k8s.kind"] == "ConfigMap" and attributes["k8s.name"] == "a"
    assert attributes["k8s.namespace"] == "default"
    assert attributes["reconcile_kit.result"] == "requeue_after"
    assert attributes["reconcile_kit.requeue_after"] == 300.0
    assert attributes["reconcile_kit.controller"] == ctrl.name
    assert "reconcile_kit.reasons" in attributes and attributes["reconcile_kit.attempt"] == 1
    assert first.context is not None
    children = [
        s for s in finished if s.parent is not None and s.parent.span_id == first.context.span_id
    ]
    assert [(s.name, s.kind) for s in children] == [
        ("PATCH configmaps", SpanKind.CLIENT),
        ("GET secrets", SpanKind.CLIENT),  # not cached yet: who controls it? (404)
        ("PATCH secrets", SpanKind.CLIENT),
    ]
    assert [s.attributes["http.response.status_code"] for s in children if s.attributes] == [
        200,
        404,
        201,
    ]
    # the server got each child's W3C trace context: same trace, the child's span id
    trace_id = f"{first.context.trace_id:032x}"
    patches = [children[0], children[2]]
    for child, resource in zip(patches, ("configmaps", "secrets"), strict=True):
        assert child.context is not None
        (record,) = [r for r in apiserver.requests if r.verb == "patch" and r.resource == resource]
        assert record.traceparent.startswith(f"00-{trace_id}-{child.context.span_id:016x}-")


async def test_a_failing_reconcile_and_a_refused_request_are_errors(
    kube: kr8s.asyncio.Api, apiserver: APIServer, spans: InMemorySpanExporter
) -> None:
    assert (await call(kube, "POST", CM, {"metadata": {"name": "a"}}))[0] == 201
    apiserver.faults.fail(403, verb="patch", resource="configmaps", times=None)
    failed: list[BaseException] = []

    async def reconcile(obj: Any, ctx: Context) -> None:
        async with PatchHelper(obj):
            obj.raw.setdefault("data", {})["seen"] = "yes"

    def policy(obj: Any, error: BaseException, ctx: Context) -> None:
        failed.append(error)

    ctrl = Controller(
        ConfigMap, api=kube, namespace="default", config=ControllerConfig(pool=ReflectorPool())
    )
    task = asyncio.create_task(ctrl.run(reconcile, error_policy=policy))
    try:
        assert await ctrl.wait_reconciled(lambda: bool(failed), 10)
    finally:
        await ctrl.shutdown(5)
        await task
    finished = spans.get_finished_spans()
    (span,) = [s for s in finished if s.name == "reconcile ConfigMap"]
    assert span.status.status_code == StatusCode.ERROR
    assert (span.attributes or {})["reconcile_kit.result"] == "error"
    assert any(event.name == "exception" for event in span.events)
    (request,) = [s for s in finished if s.name == "PATCH configmaps"]
    assert request.status.status_code == StatusCode.ERROR
    assert (request.attributes or {})["http.response.status_code"] == 403


async def test_a_webhook_call_continues_the_callers_trace(spans: InMemorySpanExporter) -> None:
    webhooks = WebhookServer(
        host="127.0.0.1", port=0, certificates=SelfSignedCertificates(["127.0.0.1"])
    )

    @webhooks.validating(ConfigMap)
    def check(obj: Any, request: AdmissionRequest) -> None:
        return None

    caller_trace, caller_span = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "operation": "CREATE",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "name": "c",
            "namespace": "default",
            "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
            "oldObject": None,
        },
    }
    context = ssl.create_default_context(cadata=webhooks.certificates.ca_bundle.decode())
    async with (
        webhooks,
        aiohttp.ClientSession() as session,
        session.post(
            f"{webhooks.url}{webhooks.webhooks[0].path}",
            data=orjson.dumps(review),
            ssl=context,
            headers={"traceparent": f"00-{caller_trace}-{caller_span}-01"},
        ) as reply,
    ):
        assert reply.status == 200
    (span,) = spans.get_finished_spans()
    assert span.name == f"webhook {webhooks.webhooks[0].name}" and span.kind == SpanKind.SERVER
    assert span.context is not None and span.parent is not None
    assert f"{span.context.trace_id:032x}" == caller_trace
    assert f"{span.parent.span_id:016x}" == caller_span
    attributes = dict(span.attributes or {})
    assert attributes["k8s.operation"] == "CREATE" and attributes["reconcile_kit.allowed"] is True


def test_exporters_come_from_the_standard_environment_variables() -> None:
    """``OTEL_TRACES_EXPORTER=console`` gives a provider exporting to stdout, as the SDK's
    own configuration would; an exporter that is not installed is named."""
    script = (
        "from opentelemetry import trace\n"
        "from reconcile_kit.client.tracing import configure_from_environment, tracer\n"
        "assert configure_from_environment()\n"
        "with tracer().start_as_current_span('hello'): pass\n"
        "trace.get_tracer_provider().shutdown()\n"
    )
    env = {**os.environ, "OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "shop-op"}
    ran = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert '"name": "hello"' in ran.stdout and '"service.name": "shop-op"' in ran.stdout
    env["OTEL_TRACES_EXPORTER"] = "nosuch"
    ran = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode != 0 and "no exporter 'nosuch' installed" in ran.stderr
