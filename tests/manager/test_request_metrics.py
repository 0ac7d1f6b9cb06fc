"""Metrics count every request the manager's api sends (issue 29, point 3: the toolkit's
PATCHes over the direct aiohttp route were served but not counted in
rest_client_requests_total)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import kr8s.asyncio
from kr8s.asyncio.objects import ConfigMap, Secret

from reconcile_kit import Context, Controller, Manager, PatchHelper, set_controller_reference
from reconcile_kit.client.request import (
    RequestObservation,
    add_request_observer,
    remove_request_observer,
    send,
)
from reconcile_kit.manager.metrics import Metrics
from reconcile_kit.testing import APIServer, eventually

from ..kubehttp import call

CM = "/api/v1/namespaces/default/configmaps"


def counted(metrics: Metrics) -> Counter[tuple[str, str]]:
    """rest_client_requests_total as {(method, code): count}."""
    out: Counter[tuple[str, str]] = Counter()
    for family in metrics.registry.collect():
        if family.name != "rest_client_requests":
            continue
        for sample in family.samples:
            if sample.name == "rest_client_requests_total":
                out[(sample.labels["method"], sample.labels["code"])] += int(sample.value)
    return out


def served(apiserver: APIServer, since: int) -> Counter[tuple[str, str]]:
    return Counter((r.method, str(r.status)) for r in apiserver.requests[since:])


async def test_every_served_request_is_counted_per_verb_and_code(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """A manager whose reconcile sends PATCHes (PatchHelper, ctx.apply: the direct route)
    and kr8s's own calls (``refresh``: httpx): what the server served since the manager
    started equals what rest_client_requests_total counted, per method and code."""
    since = len(apiserver.requests)
    done: set[str] = set()

    async def reconcile(obj: Any, ctx: Context) -> None:
        async with PatchHelper(obj):
            obj.raw.setdefault("metadata", {}).setdefault("annotations", {})["seen"] = "yes"
        secret = Secret({"metadata": {"name": obj.name, "namespace": "default"}}, api=ctx.api)
        set_controller_reference(obj, secret)
        await ctx.apply(secret)
        await obj.refresh()  # kr8s's own GET
        done.add(obj.name)

    mgr = Manager(kube, namespace="default", metrics_port=None, health_port=None)
    ctrl = mgr.add(Controller(ConfigMap).owns(Secret), reconcile)
    task = asyncio.create_task(mgr.run())
    try:
        await eventually(lambda: all(c.running for c in mgr.controllers), 10)
        for name in ("a", "b", "c"):
            status, body = await call(kube, "POST", CM, {"metadata": {"name": name}})
            assert status == 201, body
        assert await ctrl.wait_reconciled(lambda: done >= {"a", "b", "c"}, 10)
    finally:
        mgr.stop()
        await asyncio.wait_for(task, 10)
    served_now, counted_now = served(apiserver, since), counted(mgr.metrics)
    patches = sum(n for (method, _), n in served_now.items() if method == "PATCH")
    assert patches >= 6  # 3 merge patches, 3 applies (201: created)
    assert counted_now == served_now


async def test_observers_see_retries_latency_and_transport_failures(
    kube: kr8s.asyncio.Api, apiserver: APIServer
) -> None:
    """An observer sees each attempt of a retried request (attempt 2 after a 429), with the
    resource addressed, and a Metrics counts the retry."""
    seen: list[RequestObservation] = []
    metrics = Metrics()
    add_request_observer(kube, seen.append)
    metrics.instrument(kube)
    metrics.instrument(kube)  # once per api
    try:
        await call(kube, "POST", CM, {"metadata": {"name": "c"}})
        apiserver.faults.fail(429, verb="get", name="c", times=1, retry_after=0)
        await send(kube, "GET", url="configmaps/c", namespace="default")
    finally:
        remove_request_observer(kube, seen.append)
    assert [(s.method, s.status, s.attempt, s.resource) for s in seen] == [
        ("POST", 201, 1, "configmaps"),
        ("GET", 429, 1, "configmaps"),
        ("GET", 200, 2, "configmaps"),
    ]
    assert all(s.seconds >= 0 for s in seen)
    assert counted(metrics) == Counter({("POST", "201"): 1, ("GET", "429"): 1, ("GET", "200"): 1})
    text = metrics.exposition().decode()
    assert 'rest_client_request_retries_total{code="200",verb="GET"} 1.0' in text
    assert 'rest_client_request_duration_seconds_count{verb="GET"} 2.0' in text
    assert 'rest_client_rate_limiter_duration_seconds_count{verb="POST"} 1.0' in text
